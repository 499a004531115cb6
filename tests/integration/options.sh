#!/usr/bin/env bash
# The run options an agent leans on: -c runs the policy's shell (bash
# where present), a private HOME per run, --cwd under the root, --preset,
# limits.processes 0, --audit. Each attack or default paired with its
# control; runs as root and, through tests/as-nobody.sh, as nobody.
. "$(dirname "$0")/lib.sh"
R=$(mkroot)
cd "$R"

# ---- -c runs the policy's shell: bash-isms work by default.
if [ -x /bin/bash ]; then
	out=$("$C" run -c 'a=(x y z); [[ ${#a[@]} -eq 3 && $0 == /bin/bash ]] && echo "bash ${a[2]}"' 2>&1)
	expect_eq "shell: -c runs /bin/bash by default ([[ ]], arrays)" "bash z" "$out"
	out=$("$C" run --json -c 'declare -A m=([k]=v); echo "${m[k]}"' | json '["stdout"]')
	expect_eq "shell: --json -c runs bash too (associative array)" "'v\n'" "$out"
fi
# Control: the same string under "shell": "/bin/sh" (dash here) fails, so the default is what made it work.
printf '{"shell": "/bin/sh"}\n' > "$R/sh.json"
"$C" run --policy "$R/sh.json" -c 'a=(x y z); echo "${a[2]}"' >/dev/null 2>&1
rc=$?
if readlink -f /bin/sh | grep -q bash; then
	ok "shell: control skipped (/bin/sh is bash here)"
else
	[ "$rc" != 0 ] && ok "shell: control: /bin/sh rejects arrays (exit $rc)" || bad "shell: control: /bin/sh ran arrays"
fi
expect_eq "shell: the policy's shell is what runs" "/bin/sh" "$("$C" run --policy "$R/sh.json" -c 'echo $0')"
printf '{"shell": "/nonexistent/sh"}\n' > "$R/nosh.json"
out=$("$C" run --policy "$R/nosh.json" -c 'echo hi' 2>&1)
expect_eq "shell: a missing shell is 127 naming it" "127 corral: /nonexistent/sh: command not found" "$?$(echo " $out")"
printf '{"shell": "bash"}\n' > "$R/relsh.json"
out=$("$C" policy check "$R/relsh.json" 2>&1)
expect_eq "shell: a relative shell is a policy error naming the key" "125 corral: shell: 'bash' is not an absolute path" "$?$(echo " $out")"
expect_match "shell: policy show prints the default as null" '"shell": null' "$("$C" policy show)"

finish
