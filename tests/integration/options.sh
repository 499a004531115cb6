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

# ---- HOME: the run's own directory in its private tmp, never the root.
out=$("$C" run -- sh -c 'echo "$HOME"; [ "$HOME" = "$TMPDIR" ] && echo is-tmp; [ -d "$HOME" ] && [ -w "$HOME" ] && echo writable; echo x > ~/.x && mkdir -p ~/.npm/_cacache && echo wrote')
expect_eq "home: a private, writable HOME, the run's TMPDIR" "is-tmp writable wrote" "$(printf '%s\n' "$out" | tail -n +2 | tr '\n' ' ' | sed 's/ $//')"
home=$(printf '%s\n' "$out" | head -1)
expect_eq "home: the root stays clean (no .x, no .npm)" "" "$(ls -A "$R" | grep -E '^\.(x|npm)$')"
expect_eq "home: removed with the run's tmp" "gone" "$([ -e "$home" ] && echo "left: $home" || echo gone)"
h1=$("$C" run -- sh -c 'echo $HOME'); h2=$("$C" run -- sh -c 'echo $HOME')
[ "$h1" != "$h2" ] && ok "home: one per run ($h1, $h2)" || bad "home: two runs shared $h1"
expect_eq "home: ~/.x of an earlier run is not there" "absent" "$("$C" run -- sh -c '[ -e ~/.x ] && echo present || echo absent')"
# Without a private tmp, HOME is still the run's own (and TMPDIR is not set).
printf '{"fs": {"private_tmp": false}}\n' > "$R/notmp.json"
out=$("$C" run --policy "$R/notmp.json" -- sh -c 'echo "${TMPDIR-unset}"; case $HOME in */corral-tmp-*) echo private;; *) echo "HOME=$HOME";; esac; touch ~/.y && echo wrote')
expect_eq "home: private also with private_tmp false" "unset private wrote" "$(printf '%s' "$out" | tr '\n' ' ')"
expect_eq "home: ... and the root stays clean" "" "$(ls -A "$R" | grep -E '^\.y$')"
# Controls: HOME given by the policy wins (env.set, and env.pass of the host's).
expect_eq "home: --env HOME=DIR wins" "$R" "$("$C" run --env HOME="$R" -- sh -c 'echo $HOME')"
"$C" run --env HOME="$R" -- sh -c 'echo x > ~/.x'
expect_eq "home: ... and a write to ~ then lands there" "x" "$(cat "$R/.x" 2>&1)"
rm -f "$R/.x"
expect_eq "home: --env HOME passes the host's" "/host/home" "$(HOME=/host/home "$C" run --env HOME -- sh -c 'echo $HOME')"
printf '{"env": {"set": {"HOME": "/nonexistent"}}}\n' > "$R/sethome.json"
expect_eq "home: env.set.HOME in a policy wins" "/nonexistent" "$("$C" run --policy "$R/sethome.json" -- sh -c 'echo $HOME')"

# ---- --cwd: relative to the root, proven beneath it; escapes are 125 naming it.
mkdir -p "$R/src/a"; : > "$R/afile"
ln -s /etc "$R/out-link"; ln -s src/a "$R/in-link"
if is_root; then chown -h 65534:65534 "$R/src" "$R/src/a" "$R/afile" "$R/out-link" "$R/in-link"; fi
expect_eq "cwd: --cwd src/a (control)" "$R/src/a" "$("$C" run --cwd src/a -- pwd)"
expect_eq "cwd: --cwd ./src/../src (.. that stays under the root)" "$R/src" "$("$C" run --cwd ./src/../src -- pwd)"
expect_eq "cwd: an absolute path under the root" "$R/src" "$("$C" run --cwd "$R/src" -- pwd)"
expect_eq "cwd: default is the root" "$R" "$("$C" run -- pwd)"
expect_eq "cwd: -c runs there too" "$R/src/a" "$("$C" run --cwd src/a -c 'pwd')"
expect_eq "cwd: relative to --root, not to where corral is started" "$R/src" "$(cd / && "$C" run --root "$R" --cwd src -- pwd)"
printf '{"cwd": "src"}\n' > "$R/cwd.json"
expect_eq "cwd: policy key cwd" "$R/src" "$("$C" run --policy "$R/cwd.json" -- pwd)"
expect_eq "cwd: --cwd wins over the policy's" "$R/src/a" "$("$C" run --policy "$R/cwd.json" --cwd src/a -- pwd)"
expect_eq "cwd: --json result ran there" "'$R/src/a\n'" "$("$C" run --json --cwd src/a -- pwd | json '["stdout"]')"
# Escapes: each refused before anything runs (the marker command must not run).
M="$R/ran-marker"
for attempt in ".. escape" "src/../.. escape" "/etc escape" "/ escape" "${R}-evil escape" \
	"out-link refused" "in-link refused" "afile refused" "nosuch not_found"; do
	set -- $attempt
	rm -f "$M"
	err=$("$C" run --cwd "$1" -- touch "$M" 2>&1); rc=$?
	expect_match "cwd: --cwd $1 is 125 naming cwd" "^125 corral: cwd .*--cwd" "$rc $err"
	expect_eq "cwd: --cwd $1 ran nothing" "absent" "$([ -e "$M" ] && echo present || echo absent)"
	code=$("$C" run --json --cwd "$1" -- touch "$M" | json '["error"]["code"]')
	expect_eq "cwd: --cwd $1 with --json: error code" "'$2'" "$code"
done
# Control for the symlink refusal: the directory it points at is fine by its own name.
expect_eq "cwd: control: in-link's target by name" "$R/src/a" "$("$C" run --cwd src/a -- pwd)"
expect_match "cwd: policy check accepts a cwd" "^0" "$("$C" policy check "$R/cwd.json"; echo $?)"
printf '{"cwd": ""}\n' > "$R/cwd-empty.json"
out=$("$C" policy check "$R/cwd-empty.json" 2>&1); rc=$?
expect_eq "cwd: an empty cwd is a policy error" "125 corral: cwd: empty path (use \".\" for the root)" "$rc $out"

# ---- --preset: a named set of timeout and limits, under the explicit flags.
show() { "$C" policy show "$@" | $PY -c 'import json,sys; p=json.load(sys.stdin); l=p["limits"]; print(p["timeout"], l["memory"], l["cpu"], l["processes"], l["file_size"], l["open_files"], l["output"])'; }
expect_eq "preset: minimal's values" "10 512M 10 64 64M 256 256K" "$(show --preset minimal)"
expect_eq "preset: standard is the built-in defaults" "$(show)" "$(show --preset standard)"
printf '{"timeout": 3, "limits": {"cpu": 2, "open_files": 20}}\n' > "$R/tight.json"
expect_eq "preset: standard over a policy file's limits" "$(show)" "$(show --policy "$R/tight.json" --preset standard)"
expect_eq "preset: a later flag wins" "10 512M 10 64 64M 99 256K" "$(show --preset minimal --open-files 99)"
expect_eq "preset: an earlier flag wins too (the preset goes first)" "10 2G 10 64 64M 256 256K" "$(show --memory 2G --preset minimal)"
out=$("$C" run --preset minimal -- bash -c 'echo $(ulimit -t) $(ulimit -n) $(ulimit -f)')
expect_eq "preset: minimal reaches the command (cpu, open files, file size in KiB)" "10 256 65536" "$out"
expect_eq "preset: control: the defaults" "60 1024 1048576" "$("$C" run -- bash -c 'echo $(ulimit -t) $(ulimit -n) $(ulimit -f)')"
out=$("$C" run --preset large -- true 2>&1); rc=$?
expect_eq "preset: an unknown one is 125 naming the option" "125 corral: --preset: unknown preset 'large' (expected minimal|standard)" "$rc $out"
printf '{"preset": "minimal"}\n' > "$R/preset.json"
out=$("$C" policy check "$R/preset.json" 2>&1); rc=$?
expect_eq "preset: not a policy key (the file spells out its limits)" "125 corral: preset: unknown key" "$rc $out"

# ---- limits.processes 0: no process limit of corral's own.
FORK30='import os,time
n=0
for i in range(30):
    try:
        pid=os.fork()
    except OSError:
        break
    if pid==0:
        time.sleep(0.5); os._exit(0)
    n+=1
print(n)'
expect_eq "procs 0: 30 processes fork" "30" "$("$C" run --procs 0 -- $PY -c "$FORK30")"
if is_root; then
	# The pids cgroup counts exactly this run's tree.
	n=$("$C" run --procs 5 -- $PY -c "$FORK30")
	[ "$n" -lt 30 ] 2>/dev/null && ok "procs 0: control: --procs 5 stops the forks ($n)" || bad "procs 0: control: --procs 5 let $n fork"
else
	# RLIMIT_NPROC is relative to the uid's task count, which other processes of nobody move: compare the limits.
	expect_eq "procs 0: no RLIMIT_NPROC of corral's (the host's stays)" "$(bash -c 'ulimit -u')" "$("$C" run --procs 0 -- bash -c 'ulimit -u')"
	n=$("$C" run --procs 5 -- bash -c 'ulimit -u')
	[ "$n" != "$(bash -c 'ulimit -u')" ] && ok "procs 0: control: --procs 5 sets RLIMIT_NPROC ($n)" || bad "procs 0: control: --procs 5 left ulimit -u at $n"
fi
expect_eq "procs 0: policy show round-trips 0" "0" "$("$C" policy show --procs 0 | "$C" policy show --policy /dev/stdin | $PY -c 'import json,sys; print(json.load(sys.stdin)["limits"]["processes"])')"
expect_match "procs 0: probe says not applicable, and why" "not_applicable .*limits.processes is 0" \
	"$("$C" probe --json --procs 0 | $PY -c 'import json,sys; [print(p["state"], p["why"]) for p in json.load(sys.stdin)["promises"] if p["id"] == "limits.processes"]')"
# As root with a pids cgroup: the run's cgroup is at max (control: --procs 5 writes 5).
pids_max_of_run() {
	rm -f "$R/pid"
	"$C" run "$@" -- sh -c 'echo $$ > pid; exec sleep 2' & local bg=$!
	for _ in $(seq 50); do [ -s "$R/pid" ] && break; sleep 0.05; done
	local cg; cg=$(grep -E '^[0-9]+:pids:' "/proc/$(cat "$R/pid")/cgroup" | cut -d: -f3)
	cat "/sys/fs/cgroup/pids$cg/pids.max" 2>/dev/null || echo none
	wait $bg
}
if is_root && [ -d /sys/fs/cgroup/pids ]; then
	expect_eq "procs 0: the run's pids cgroup is at max" "max" "$(pids_max_of_run --procs 0)"
	expect_eq "procs 0: control: --procs 5 sets pids.max 5" "5" "$(pids_max_of_run --procs 5)"
fi

# ---- --audit FILE: one JSON line per run, appended whole.
AD=$(mktemp -d /tmp/corral-it-audit.XXXXXX); cleanup_dirs+=("$AD"); chmod 755 "$AD"
A="$AD/audit.log"
"$C" run --audit "$A" -- sh -c 'echo out; exit 3' >/dev/null
"$C" run --audit "$A" --cwd src -c 'kill -9 $$'
"$C" run --audit "$A" --timeout 0.3 -- sleep 5
"$C" run --audit "$A" --cwd .. -- true 2>/dev/null
expect_eq "audit: four runs, four lines" "4" "$(wc -l < "$A")"
check=$($PY - "$A" "$R" <<'PYEOF'
import json, re, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
keys = ["run_id", "session_id", "tag", "tool", "argv", "cwd", "policy_sha256", "provider", "network",
        "started_at", "ended_at", "exit_status", "signal", "ended_by", "cpu_ms", "max_rss_kb", "denials",
        "leftovers_killed"]
out = []
a = lines[0]
out.append("keys" if list(a.keys()) == keys else "keys %s" % list(a.keys()))
out.append("id" if re.fullmatch(r"[0-9a-f]{32}", a["run_id"]) else "id %r" % a["run_id"])
ts = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"
out.append("times" if re.fullmatch(ts, a["started_at"]) and re.fullmatch(ts, a["ended_at"]) and a["started_at"] <= a["ended_at"] else "times")
out.append("%s %s %s %s %s %s %s" % (a["tool"], a["argv"], a["cwd"], a["exit_status"], a["ended_by"], a["session_id"], a["tag"]))
b = lines[1]
out.append("%s %r %s %s %s" % ("argv" in b, b["command"], b["cwd"], b["signal"], b["ended_by"]))
out.append("%s %s" % (lines[2]["ended_by"], lines[2]["exit_status"]))
c = lines[3]
out.append("%s %s %s" % (c["run_id"], c["error"]["code"], c["ended_by"]))
out.append("distinct" if len({l["run_id"] for l in lines[:3]}) == 3 else "same ids")
print("|".join(out))
PYEOF
)
expect_eq "audit: the fields, in order, for exit, signal, timeout and a refused --cwd" \
	"keys|id|times|run ['sh', '-c', 'echo out; exit 3'] . 3 exit None None|False 'kill -9 \$\$' src 9 signal|timeout None|None escape None|distinct" "$check"
sha=$($PY -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["policy_sha256"])' "$A")
expect_eq "audit: policy_sha256 is the SHA-256 of policy show's text" "$("$C" policy show --audit "$A" | sha256sum | cut -d' ' -f1)" "$sha"
sha2=$(tail -1 "$A" | $PY -c 'import json,sys; print(json.load(sys.stdin)["policy_sha256"])')
[ "$sha" != "$sha2" ] && ok "audit: control: another policy (--cwd ..) hashes otherwise" || bad "audit: the hash ignores the policy"
expect_eq "audit: the file is the caller's, 0600" "600" "$(stat -c %a "$A")"
# Concurrent runs share one file: 20 at once, 20 whole lines.
B="$AD/concurrent.log"
for i in $(seq 20); do "$C" run --audit "$B" -- sh -c "printf '%0500d' $i >/dev/null; echo $i" >/dev/null & done
wait
n=$($PY -c 'import json,sys; ls=open(sys.argv[1]).read().split("\n"); assert ls[-1] == ""; print(len({json.loads(l)["run_id"] for l in ls[:-1]}), sorted(int(json.loads(l)["argv"][2].split()[-1]) for l in ls[:-1]) == list(range(1, 21)))' "$B" 2>&1)
expect_eq "audit: 20 concurrent runs, 20 valid lines, each run once" "20 True" "$n"
printf '{"audit": "%s"}\n' "$AD/from-policy.log" > "$R/audit.json"
"$C" run --policy "$R/audit.json" -- true
expect_eq "audit: policy key audit" "1" "$(wc -l < "$AD/from-policy.log" 2>&1)"
"$C" run -- true
expect_eq "audit: control: no --audit, no line anywhere new" "1" "$(wc -l < "$AD/from-policy.log")"
out=$("$C" run --audit "$AD/no/such/dir/log" -- touch "$R/ran-marker" 2>&1); rc=$?
expect_match "audit: a file corral cannot append to is 125 naming audit, before anything runs" \
	"^125 corral: audit $AD/no/such/dir/log: .*No such file or directory" "$rc $out"
expect_eq "audit: ... and nothing ran" "absent" "$([ -e "$R/ran-marker" ] && echo present || echo absent)"
out=$("$C" run --audit "$AD" -- true 2>&1); rc=$?
expect_match "audit: a directory is refused" "^125 corral: audit $AD: " "$rc $out"
# Inside the root (or a read_write path) the command could plant a symlink
# there and have corral append, with its rights, to a file of its choosing:
# refused, whatever the spelling; a symlink as the log itself is not followed.
for spelled in "$R/audit.log" "$R/src/../audit.log" "src/../audit.log"; do
	out=$("$C" run --audit "$spelled" -- touch "$R/ran-marker" 2>&1); rc=$?
	expect_match "audit: $spelled (in the root) is refused" "^125 corral: audit .*: lies in $R, which the command may write" "$rc $out"
done
expect_eq "audit: ... and nothing ran" "absent" "$([ -e "$R/ran-marker" ] && echo present || echo absent)"
RW=$(mkroot)
out=$("$C" run --rw "$RW" --audit "$RW/a.log" -- true 2>&1); rc=$?
expect_match "audit: in a read_write path: refused" "^125 corral: audit $RW/a.log: lies in $RW" "$rc $out"
: > "$AD/target"; ln -s "$AD/target" "$AD/link.log"
out=$("$C" run --audit "$AD/link.log" -- true 2>&1); rc=$?
expect_match "audit: a symlink as the log is not followed" "^125 corral: audit $AD/link.log: a symlink" "$rc $out"
expect_eq "audit: ... and its target got nothing" "0" "$(wc -c < "$AD/target")"
(cd "$AD" && "$C" run --root "$R" --audit rel.log -- true)
expect_eq "audit: a relative --audit is relative to where corral is started" "1" "$(wc -l < "$AD/rel.log" 2>&1)"

finish
