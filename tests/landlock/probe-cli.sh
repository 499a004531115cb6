#!/usr/bin/env bash
# corral probe, black-box: text for people, --json for programs, the
# pretended-ABI refusal, and a missing asked-for path.
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

set +e
err=$("$CORRAL" probe --ro /corral-no-such-path 2>&1 >/dev/null); rc=$?
set -e
[ "$rc" = 125 ] || fail "missing --ro path: exit $rc"
grep -qF '/corral-no-such-path' <<<"$err" || fail "message does not name the path: $err"
echo "ok probe-cli"
