#!/usr/bin/env bash
# probe tells the truth about what run would do: the identity decision is
# sandbox_new's (a root the default identity cannot write is refused by
# both), and the docker provider reports the container's own posture, not
# the local provider's Landlock and seccomp promises.
. "$(dirname "$0")/lib.sh"
mkscratch

pj() { "$C" probe --json "$@"; }
field() { "$PY" -c 'import json,sys; o=json.loads(sys.argv[1]); print(json.dumps(eval(sys.argv[2])))' "$1" "$2"; }

# -- identity: the same decision as run
if is_root; then
	D=$S/rootowned
	mkdir "$D"
	chmod 700 "$D"
	out=$(pj --root "$D")
	run_err=$("$C" run --root "$D" -- true 2>&1)
	run_rc=$?
	[ "$run_rc" = 125 ] && ok "run refuses a root-owned 0700 root" || bad "run: rc=$run_rc"
	if [ "$(field "$out" 'o["runnable"]')" = false ] &&
	   grep -qF "$(field "$out" 'o["refusal"]' | "$PY" -c 'import json,sys; print(json.load(sys.stdin))')" <<<"$run_err"; then
		ok "probe: not runnable, with run's own refusal"
	else
		bad "probe on a root-owned 0700 root: $out / run: $run_err"
	fi
	out=$(pj --root "$D" --user root)
	[ "$(field "$out" 'o["runnable"]')" = true ] && ok "probe --user root: runnable (control)" || bad "probe --user root: $out"
fi
out=$(pj --root "$R")
if [ "$(field "$out" 'o["runnable"]')" = true ] && "$C" run --root "$R" -- true; then
	ok "probe and run agree on a writable root (control)"
else
	bad "probe on a writable root: $out"
fi

# -- docker: its own posture
local_ids=$(field "$(pj --root "$R")" '[p["id"] for p in o["promises"]]')
grep -q '"fs.truncate"' <<<"$local_ids" && grep -q '"seccomp.deny_table"' <<<"$local_ids" &&
	ok "local posture lists Landlock and seccomp promises (control)" || bad "local posture: $local_ids"
out=$(pj --root "$R" --provider docker)
if "$PY" - "$out" <<'PYEOF'
import json, sys
o = json.loads(sys.argv[1])
st = {p["id"]: p["state"] for p in o["promises"]}
local_only = [i for i in st if i.startswith(("fs.truncate", "fs.refer", "fs.ioctl_dev", "scope.signal",
    "scope.abstract_unix", "scope.ptrace", "net.tcp_landlock", "seccomp.deny_table", "seccomp.foreign_abi",
    "net.no_sockets", "net.unix_mediated", "tty.no_injection"))]
assert not local_only, ("local promises under docker", local_only)
assert o["provider"] == "docker"
assert st.get("net.none") == "enforced", st
assert st.get("priv.no_capabilities") == "enforced", st
assert st.get("priv.no_new_privs") == "enforced", st
assert st.get("net.no_io_uring") != "enforced", st  # docker's default profile allows io_uring_setup
PYEOF
then ok "probe --provider docker: the container's posture"; else bad "probe --provider docker: $out"; fi
# probe and run agree on the process limit: --user root with no pids cgroup
# (cgroupfs hidden in a private mount namespace) is refused by both under
# strict (control: with the cgroups, both run).
if is_root && command -v unshare >/dev/null; then
	nocg() { unshare -m sh -c 'mount -t tmpfs none /sys/fs/cgroup && exec "$@"' sh "$@"; }
	RU=$(mktemp -d /tmp/corral-probe-uroot.XXXXXX); cleanup_dirs+=("$RU")
	out=$(nocg "$C" probe --json --root "$RU" --user root)
	[ "$(field "$out" 'o["runnable"]')" = false ] && [[ $(field "$out" 'o["refusal"]') == *"pids cgroup"* ]] &&
		ok "probe --user root without a pids cgroup: not runnable, says why" || bad "probe --user root, no cgroup: $out"
	nocg "$C" run --root "$RU" --user root -- true 2>/dev/null
	rc=$?
	[ $rc = 125 ] && ok "run --user root without a pids cgroup: refused (125)" || bad "run --user root, no cgroup: rc $rc"
	out=$(pj --root "$RU" --user root)
	[ "$(field "$out" 'o["runnable"]')" = true ] && ok "control: probe --user root with cgroups: runnable" ||
		bad "probe --user root with cgroups: $out"
fi
out=$(pj --root "$R" --provider docker --net host)
[ "$(field "$out" '{p["id"]: p["state"] for p in o["promises"]}["net.none"]')" = '"not_applicable"' ] &&
	ok "probe --provider docker --net host: net.none not applicable" || bad "docker --net host: $out"
finish
