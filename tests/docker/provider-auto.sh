#!/usr/bin/env bash
# The docker provider's environment checks without a daemon (suite
# integration, root and nobody): probe says runnable false with the reason
# where run would fail (no client on PATH, a daemon socket that is not
# there), --provider auto then runs locally and says why in the result,
# and "provider": "auto" round-trips through policy show. The docker suite
# (parity.sh) covers auto choosing docker.
set -uo pipefail
CORRAL=${CORRAL:?CORRAL must name the built corral}
work=$(mktemp -d "${TMPDIR:-/tmp}/corral-auto.XXXXXX")
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
[ "$(id -u)" = 0 ] && chown 65534:65534 "$work"
failed=0
fail() { echo "FAIL $*" >&2; failed=1; }
ok() { echo "ok   $*"; }

got=$(cd "$work" && PATH=/nonexistent "$CORRAL" probe --json --provider docker --image busybox:never |
	python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["provider"], v["runnable"], v["refusal"])')
want="docker False docker provider: no docker client on PATH (install it or add its directory to PATH; --provider local needs none)"
[ "$got" = "$want" ] && ok "probe --provider docker without a client: runnable false" || fail "probe without a client: $got"
out=$(cd "$work" && PATH=/nonexistent "$CORRAL" run --provider docker --image busybox:never -- true 2>&1); rc=$?
[ "$rc" = 125 ] && [ "$out" = "corral: $(cut -d' ' -f3- <<<"$want")" ] && ok "run without a client: 125, the same words" ||
	fail "run without a client: exit $rc: $out"

# a daemon socket that is not there (where a client exists; otherwise the client check speaks first)
if command -v docker >/dev/null; then
	got=$(cd "$work" && DOCKER_HOST=unix:///nonexistent/docker.sock "$CORRAL" probe --json --provider docker --image busybox:never |
		python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["provider"], v["runnable"], v["refusal"])')
	[[ "$got" == "docker False docker provider: daemon not reachable at unix:///nonexistent/docker.sock (No such file or directory); is dockerd running?" ]] &&
		ok "probe --provider docker without a daemon: runnable false" || fail "probe without a daemon: $got"
fi

# auto: local here, and the result says which and why; control: local itself
got=$(cd "$work" && PATH=/nonexistent "$CORRAL" run --json --provider auto --image busybox:never -- echo hi |
	python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["provider"], v["exit_status"], v["stdout"].strip(), json.dumps(v["warnings"]))')
case $got in
"local 0 hi [\"provider auto ran this with the local provider: docker provider: "*) ok "run --provider auto: local, with the reason" ;;
*) fail "run --provider auto: $got" ;;
esac
got=$(cd "$work" && "$CORRAL" run --json --provider local -- echo hi |
	python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["provider"], v["exit_status"], v["stdout"].strip(), json.dumps(v["warnings"]))')
[ "$got" = "local 0 hi []" ] && ok "control: --provider local, no warning" || fail "control: $got"
got=$(cd "$work" && PATH=/nonexistent "$CORRAL" probe --json --provider auto --image busybox:never |
	python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["provider"], v["runnable"])')
[ "$got" = "local True" ] && ok "probe --provider auto without a client: local" || fail "probe auto: $got"

# the policy key
printf '{"provider": "auto"}' >"$work/auto.json"
a=$("$CORRAL" policy show --root "$work" --policy "$work/auto.json")
printf '%s' "$a" >"$work/shown.json"
b=$("$CORRAL" policy show --root "$work" --policy "$work/shown.json")
grep -q '"provider": "auto"' <<<"$a" && [ "$a" = "$b" ] && ok '"provider": "auto" round-trips through policy show' ||
	fail "policy show: $a"
exit $failed
