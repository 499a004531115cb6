#!/usr/bin/env bash
# corral probe, black-box: text for people, --json for programs, the
# pretended-ABI refusal, every refusal (a missing asked-for path, a root of
# "/") reported as "runnable": false with exit 0, and fs_confined false
# when a read-only path shows the host.
set -euo pipefail
: "${CORRAL:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
root=$(mktemp -d /tmp/corral-probe.XXXXXX)
trap 'rm -rf "$root"' EXIT
# As root the default identity is nobody: let it write the root, or probe (like run) refuses.
if [ "$(id -u)" = 0 ]; then chown 65534:65534 "$root"; fi
cd "$root"

text=$("$CORRAL" probe)
for want in 'landlock ABI: ' 'seccomp: ' 'user namespaces: ' 'docker: ' 'running as root: ' \
	'egress (can reach a network): ' 'filesystem confined: ' 'fs.write'; do
	grep -qF -- "$want" <<<"$text" || fail "text lacks '$want': $text"
done

json=$("$CORRAL" probe --json)
python3 - "$json" <<'PY' || fail "bad --json: $json"
import json, sys
d = json.loads(sys.argv[1])
for k, t in [("landlock_abi", int), ("seccomp", bool), ("user_namespaces", bool), ("docker", bool),
             ("running_as_root", bool), ("egress", bool), ("fs_confined", bool), ("promises", list)]:
    assert isinstance(d[k], t), k
for p in d["promises"]:
    assert p["state"] in ("enforced", "dropped", "not_applicable"), p
assert any(p["id"] == "fs.write" for p in d["promises"])
PY

abi=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["landlock_abi"])' "$json")
if [ "$abi" -ge 3 ]; then
	out=$(CORRAL_TEST_LANDLOCK_ABI=2 "$CORRAL" probe --json)
	python3 - "$out" <<'PY' || fail "pretended ABI 2: $out"
import json, sys
d = json.loads(sys.argv[1])
assert d["landlock_abi"] == 2
assert d["runnable"] is False
assert d["refusal"] == "truncate outside the root (fs.truncate): needs Landlock ABI 3, kernel has 2", d["refusal"]
dropped = {p["id"] for p in d["promises"] if p["state"] == "dropped"}
assert {"fs.truncate", "net.tcp_landlock", "fs.ioctl_dev", "scope.signal", "scope.abstract_unix"} <= dropped, dropped
PY
	out=$(CORRAL_TEST_LANDLOCK_ABI=2 "$CORRAL" probe --compat best-effort --json)
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["runnable"] is True and d["refusal"] is None' "$out" \
		|| fail "best-effort at ABI 2: $out"
	CORRAL_TEST_LANDLOCK_ABI=2 "$CORRAL" probe | grep -qF 'dropped        fs.truncate' || fail "text lacks the dropped line"
fi

# every refusal is "runnable": false with the reason, and probe exits 0
set +e
out=$("$CORRAL" probe --json --ro /corral-no-such-path); rc=$?
set -e
[ "$rc" = 0 ] || fail "missing --ro path: exit $rc"
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["runnable"] is False and "/corral-no-such-path" in d["refusal"], d' "$out" \
	|| fail "missing --ro path: $out"
set +e
out=$(cd / && "$CORRAL" probe --json); rc=$?
set -e
[ "$rc" = 0 ] || fail "probe from /: exit $rc"
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["runnable"] is False and d["root"] == "/" and "refusing a root that contains system directories" in d["refusal"] and d["landlock_abi"] == '"$abi"', d' "$out" \
	|| fail "probe from /: $out"
(cd / && "$CORRAL" probe) | grep -qF 'corral run would refuse: root /: refusing a root' || fail "probe from / (text)"
set +e
(cd / && "$CORRAL" run -- true 2>/dev/null); rc=$?
set -e
[ "$rc" = 125 ] || fail "run from / (control): exit $rc"
# fs_confined: false when an extra read-only path shows the host (conservative)
if [ "$abi" -ge 1 ]; then
	mkdir -p "$root/../corral-probe-data.$$" && data=$(cd "$root/../corral-probe-data.$$" && pwd -P)
	trap 'rm -rf "$root" "$data"' EXIT
	home=${HOME:-/root}
	for args in "" "--ro $data" "--ro /usr/share"; do
		v=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["fs_confined"])' "$("$CORRAL" probe --json $args)")
		[ "$v" = True ] || fail "fs_confined with '$args' (control): $v"
	done
	for args in "--ro /" "--ro /home" "--ro $home" "--ro /root" "--ro /proc/self" "--ro /var/log"; do
		v=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["fs_confined"])' "$("$CORRAL" probe --json $args)")
		[ "$v" = False ] || fail "fs_confined with '$args': $v"
	done
fi
echo "ok probe-cli"
