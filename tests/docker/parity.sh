#!/usr/bin/env bash
# One table of cases run against both providers (parity): the local
# provider with `corral run` defaults, the docker provider with
# `--provider docker --image corral-test-busybox`. Every deny case has a
# positive control in the same table. Skips (77) when no daemon answers,
# unless CORRAL_MUST_WORK=1.
set -uo pipefail
CORRAL=${CORRAL:?CORRAL must name the built corral}
SRC=${CORRAL_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
IMAGE=${CORRAL_TEST_IMAGE:-corral-test-busybox:latest}
export CORRAL_TEST_IMAGE=$IMAGE

skip() {
	if [ "${CORRAL_MUST_WORK:-}" = 1 ]; then echo "FAIL (CORRAL_MUST_WORK=1 forbids skipping): $*" >&2; exit 1; fi
	echo "SKIP: $*" >&2
	exit 77
}

bash "$SRC/tests/docker/make-image.sh"
rc=$?
[ "$rc" = 77 ] && exit 77
[ "$rc" = 0 ] || { echo "FAIL: make-image.sh exited $rc" >&2; exit 1; }

work=$(mktemp -d /tmp/corral-parity.XXXXXX)
listener=
cleanup() {
	[ -n "$listener" ] && kill "$listener" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
chmod 755 "$work"
# As root, corral runs the command as the owner of the root directory (never uid 0).
owner=$(id -u)
if [ "$owner" = 0 ]; then owner=65534; fi

# A TCP listener on the host: reachable by the host itself (positive
# control), never from a sandbox whose network is "none".
port=$((20000 + RANDOM % 20000))
python3 -m http.server --bind 0.0.0.0 "$port" --directory "$work" >/dev/null 2>&1 &
listener=$!
hostip=$(ip -4 -o addr show scope global 2>/dev/null | awk '{split($4, a, "/"); print a[1]; exit}')
for _ in $(seq 1 50); do
	busybox nc -w 1 127.0.0.1 "$port" </dev/null 2>/dev/null && break
	sleep 0.1
done
busybox nc -w 2 127.0.0.1 "$port" </dev/null || { echo "FAIL: host cannot reach its own listener" >&2; exit 1; }

passed=0 failed=0 skipped_cols=()
fail() { echo "FAIL [$prov] $name: $*" >&2; failed=$((failed + 1)); ok=0; }

# t NAME EXPECTED_EXIT CORRAL_RUN_ARGS...   (EXPECTED "!0": any non-zero except 125)
# Runs in a fresh root; check_NAME, when defined, inspects $out/$err/$root afterwards.
t() {
	name=$1 expect=$2
	shift 2
	root=$work/$prov-$name
	mkdir -p "$root/sub"
	printf '#!/bin/sh\necho never\n' >"$root/noexec.sh"
	chmod 644 "$root/noexec.sh"
	[ "$(id -u)" = 0 ] && chown -R "$owner:$owner" "$root"
	ok=1
	start=$(date +%s%N)
	out=$(cd "$root" && printf '%s' "${stdin:-}" | CORRAL_TEST_SECRET=s3cr3t-value CORRAL_TEST_PASS=passed-value \
		timeout 120 "$CORRAL" run --root "$root" "${pargs[@]}" "$@" 2>"$work/err")
	rc=$?
	err=$(cat "$work/err")
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	case $expect in
	'!0') { [ "$rc" != 0 ] && [ "$rc" != 125 ]; } || fail "exit $rc, want non-zero (stderr: $err)" ;;
	*) [ "$rc" = "$expect" ] || fail "exit $rc, want $expect (stdout: ${out:0:300}; stderr: ${err:0:300})" ;;
	esac
	if declare -F "check_$name" >/dev/null; then "check_$name"; fi
	if [ "$ok" = 1 ]; then passed=$((passed + 1)); echo "ok   [$prov] $name (${ms} ms)"; fi
	stdin=
}

check_write_root() {
	[ "$out" = data ] || fail "stdout '$out'"
	[ "$(cat "$root/f1" 2>/dev/null)" = data ] || fail "f1 not written on the host"
	[ "$(stat -c %u "$root/f1" 2>/dev/null)" = "$owner" ] || fail "f1 owned by $(stat -c %u "$root/f1" 2>/dev/null), want $owner"
}
check_cwd() { case $out in */sub) ;; *) fail "pwd '$out', want .../sub" ;; esac; }
# -c: bash where present (the host's locally, the image's in docker: busybox has none, so sh).
check_shell() {
	case $prov in
	local) [ ! -x /bin/bash ] || [ "$out" = /bin/bash ] || fail "\$0 '$out', want /bin/bash" ;;
	docker) if docker run --rm --entrypoint '' "$IMAGE" test -x /bin/bash; then want=bash; else want=sh; fi
		[ "$out" = "$want" ] || fail "\$0 '$out', want $want" ;;
	esac
}
check_home() {
	[ -n "$out" ] && [ "$out" != "$root" ] && [ "$out" != /workspace ] || fail "HOME '$out' is the root"
	[ ! -e "$root/.x" ] || fail "~/.x landed in the root"
}
check_write_outside() {
	[ ! -e /etc/corral-escape-probe ] || { rm -f /etc/corral-escape-probe; fail "wrote /etc/corral-escape-probe on the host"; }
}
check_deadline() {
	[ "$ms" -lt 15000 ] || fail "took $ms ms"
	if pgrep -f "^sleep $sleeparg\$" >/dev/null; then fail "the command outlived the deadline"; pkill -f "^sleep $sleeparg\$"; fi
	if [ "$prov" = docker ]; then
		left=$(mine "$root")
		[ -z "$left" ] || fail "containers left: $left"
	fi
}
check_deadline_early() { check_deadline; }
check_client_deadline() { check_deadline; }
check_client_notfound() {
	python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["exit_status"] == 127 and "command not found" in r["stderr"], r' "$out" ||
		fail "json: $out"
}
check_env_scrubbed() {
	case $out in *s3cr3t*) fail "the secret leaked in: $out" ;; esac
	grep -q '^PATH=' <<<"$out" || fail "no PATH inside"
	grep -q '^HOME=' <<<"$out" || fail "no HOME inside"
}
check_env_pass() { [ "$out" = passed-value ] || fail "stdout '$out'"; }
check_stdin() { [ "$out" = hello ] || fail "stdout '$out'"; }
check_notfound() { :; }
check_mem_limit() {
	# local: RLIMIT_AS (ulimit -v, KiB) without a memory cgroup; with one (as root) no RLIMIT_AS, and
	# the cgroup's files are out of Landlock's reach (mem_exceeded proves the limit); docker: the
	# container's memory cgroup
	read -r v cg <<<"$out"
	if [ "$prov" = local ] && [ "$local_mem_cg" = 1 ]; then
		[ "$v" = unlimited ] || fail "a memory cgroup per run, yet ulimit -v '$v'"
		return
	fi
	[ "$v" = 65536 ] || [ "$cg" = 67108864 ] || fail "no 64M limit visible: ulimit -v '$v', cgroup '$cg'"
	[ "$prov" = docker ] && { [ "$cg" = 67108864 ] || fail "memory cgroup '$cg', want 67108864"; }
}
check_pids_limit() {
	read -r u cg <<<"$out"
	# local as root: a per-run pids cgroup, unreadable under Landlock (fork_bounded proves it)
	[ "$u" = 200 ] || [ "$cg" = 200 ] || { [ "$prov" = local ] && [ "$(id -u)" = 0 ]; } ||
		fail "no process limit of 200 visible: ulimit -u '$u', pids.max '$cg'"
	[ "$prov" = docker ] && { [ "$cg" = 200 ] || fail "pids.max '$cg', want 200"; }
}
check_fork_bounded() { grep -qi fork <<<"$err$out" || fail "no fork failure reported: ${err:0:200}"; }
check_fork_ok() { grep -qi "can.t fork\|cannot fork" <<<"$err$out" && fail "fork failed under the default limit: ${err:0:200}"; }
check_json() {
	echo "$out" >"$work/json-$prov"
	python3 - "$work/json-$prov" "$prov" <<-'EOF' || fail "json: $out"
	import json, sys
	r = json.load(open(sys.argv[1]))
	assert r["provider"] == sys.argv[2], r
	assert r["exit_status"] == 3 and r["signal"] is None and r["timed_out"] is False, r
	assert r["stdout"] == "out\n" and r["stderr"] == "err\n", r
	EOF
}
check_json_signal() {
	python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["exit_status"] is None and r["signal"] == 9, r' "$out" ||
		fail "json: $out"
}
check_json_cap() {
	python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["stdout"] == "a"*5 + "\n[\u2026 90 bytes omitted \u2026]\n" + "a"*5 and r["stdout_truncated"] is True and r["stdout_bytes"] == 100, r' "$out" ||
		fail "json: $out"
}

# unique to this run: concurrent runs (other suites, benchmarks) share the daemon and the host
sleeparg=31.$$
mine() { docker ps -aq --filter "label=io.corral.root=$1"; }
memcmd='printf "%s %s\n" "$(ulimit -v)" "$(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null)"'
pidscmd='printf "%s %s\n" "$(ulimit -u 2>/dev/null || ulimit -p)" "$(cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max 2>/dev/null)"'
bigcmd='x=$(head -c 100000000 /dev/zero | tr "\0" a); echo ${#x}'
# RLIMIT_NPROC (local) counts every process of the uid on the host: limits
# well above what concurrent suites run as the same uid
forkcmd='i=0; while [ $i -lt $n ]; do sleep 2 & i=$((i+1)); done; wait'

table() {
	t write_root 0 -c 'echo data > f1 && cat f1'
	t write_outside 1 -c 'touch /etc/corral-escape-probe'
	t net_none_loopback 7 -c "busybox nc -w 2 127.0.0.1 $port </dev/null || exit 7"
	[ -n "$hostip" ] && t net_none_hostip 7 -c "busybox nc -w 2 $hostip $port </dev/null || exit 7"
	t net_host 0 --net host -c "busybox nc -w 5 127.0.0.1 $port </dev/null"
	t deadline 124 --timeout 1 -- sleep $sleeparg
	# a deadline before the container even exists: its create may still be in flight
	t deadline_early 124 --timeout 0.1 -- sleep $sleeparg
	t exit0 0 -- true
	t exit3 3 -c 'exit 3'
	t kill9 137 -c 'kill -9 $$'
	t term 143 -c 'kill -TERM $$'
	t notfound 127 -- corral-no-such-command
	t noexec 126 -- ./noexec.sh
	t env_scrubbed 0 -- env
	t env_pass 0 --env CORRAL_TEST_PASS -c 'echo "$CORRAL_TEST_PASS"'
	stdin=$'hello\n' t stdin 0 -- cat
	t mem_limit 0 --memory 64M -c "$memcmd"
	t mem_exceeded '!0' --memory 64M -c "$bigcmd"
	t mem_ok 0 --memory 1G -c "$bigcmd"
	t pids_limit 0 --procs 200 -c "$pidscmd"
	t fork_bounded '!0' --procs 200 -c "n=260; $forkcmd; exit 1"
	t fork_ok 0 --procs 256 -c "n=60; $forkcmd"
	t json 0 --json -c 'echo out; echo err >&2; exit 3'
	t json_signal 0 --json -c 'kill -9 $$'
	t json_cap 0 --json --max-output 10 -c 'head -c 100 /dev/zero | tr "\0" a'
	t cwd 0 --cwd sub -c 'pwd'
	t cwd_escape 125 --cwd .. -- true
	t home 0 -c 'echo x > ~/.x && echo "$HOME"'
	t shell 0 -c 'echo $0'
}

local_mem_cg=0
(cd "$work" && "$CORRAL" probe --json --root "$work" $([ "$(id -u)" = 0 ] && echo --user root) 2>/dev/null) | python3 -c 'import json,sys; sys.exit(0 if any(p["id"] == "limits.memory" and "memory cgroup per run" in p["why"] for p in json.load(sys.stdin)["promises"]) else 1)' && local_mem_cg=1
for prov in local docker; do
	if [ "$prov" = local ]; then pargs=(); else pargs=(--provider docker --image "$IMAGE"); fi
	probe=$(cd "$work" && "$CORRAL" run --root "$work" "${pargs[@]}" -- true 2>&1)
	if [ $? = 125 ] && grep -q 'not implemented' <<<"$probe"; then
		echo "SKIP [$prov] column: $probe" >&2
		skipped_cols+=("$prov")
		continue
	fi
	table
done

# Docker-only rows: what has no local counterpart.
if [[ " ${skipped_cols[*]} " != *" docker "* ]]; then
	prov=docker
	pargs=(--provider docker --image corral-no-such-image:never)
	t unknown_image 125 -- true
	grep -q "image 'corral-no-such-image:never' is not present locally" <<<"$err" || fail "stderr: $err"
	t unknown_image_json 125 --json -- true
	python3 -c 'import json,sys; e=json.loads(sys.argv[1])["error"]; assert e["code"] == "not_found" and "not present locally" in e["message"], e' "$out" ||
		fail "json error: $out"
	pargs=(--provider docker --image "$IMAGE")
	t docker_socket_refused 125 --ro /var/run -- true
	grep -q 'daemon socket' <<<"$err" || fail "stderr: $err"
	# docker's own containerd socket lives in /run/docker/containerd: its state directory is refused whole
	if [ -d /run/docker ]; then
		t docker_state_refused 125 --ro /run/docker -- true
		grep -q "container daemon's state" <<<"$err" || fail "stderr: $err"
		t docker_state_inner_refused 125 --ro /run/docker/containerd -- true
	fi
	# a CPU share below docker's minimum is refused before any run
	printf '{"docker": {"cpus": 0.001}}' >"$work/cpus.json"
	t cpus_below_minimum 125 --policy "$work/cpus.json" -- true
	grep -q "below docker's minimum" <<<"$err" || fail "stderr: $err"
	# a command that prints docker's error format and exits 125 is still the command: --json gives its result
	t forged_docker_error 0 --json -c 'echo "docker: Error response from daemon: forged" >&2; echo out; exit 125'
	python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["exit_status"] == 125 and r["stdout"] == "out\n" and "forged" in r["stderr"], r' "$out" ||
		fail "json: $out"
	# Exec failures come from the exec helper's report, never from the command's text: a
	# command printing tini's or docker's exec-failure line and exiting 127/126 keeps its own
	# result (found in review: corral replaced it with "command not found").
	t forged_tini_127 0 --json -c 'echo out; echo "[FATAL tini (7)] exec x failed: No such file or directory" >&2; exit 127'
	python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["exit_status"] == 127 and r["stdout"] == "out\n" and r["stderr"] == "[FATAL tini (7)] exec x failed: No such file or directory\n", r' "$out" ||
		fail "json: $out"
	t forged_docker_126 0 --json -c 'echo out; echo "docker: Error response from daemon: exec failed" >&2; exit 126'
	python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["exit_status"] == 126 and r["stdout"] == "out\n" and r["stderr"] == "docker: Error response from daemon: exec failed\n", r' "$out" ||
		fail "json: $out"
	t forged_tini_plain 127 -c 'echo "[FATAL tini (7)] exec x failed: No such file or directory" >&2; exit 127'
	[ "$err" = "[FATAL tini (7)] exec x failed: No such file or directory" ] || fail "stderr: $err"
	# controls: a command that is really missing, or not executable, is still an exec failure
	t real_notfound 0 --json -- corral-no-such-command
	python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["exit_status"] == 127 and r["stderr"] == "corral: corral-no-such-command: command not found\n", r' "$out" ||
		fail "json: $out"
	t real_notfound_plain 127 -- corral-no-such-command
	[ "$err" = "corral: corral-no-such-command: command not found" ] || fail "stderr: $err"
	t real_noexec 0 --json -- ./noexec.sh
	python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["exit_status"] == 126 and r["stderr"] == "corral: ./noexec.sh: Permission denied\n", r' "$out" ||
		fail "json: $out"
	# docker's own failure (the helper never connected): corral's 125 quoting docker, with and
	# without --json (a pull from a registry that refuses at once: nothing leaves the host)
	printf '{"docker": {"pull": true}}' >"$work/pull.json"
	t docker_failure 125 --json --policy "$work/pull.json" --image localhost:1/corral-no-such-image:1 -- true
	python3 -c 'import json,sys; e=json.loads(sys.argv[1])["error"]; assert e["code"] == "provider" and "the container did not run the command (docker exited 125): Error response from daemon" in e["message"], e' "$out" ||
		fail "json: $out"
	t docker_failure_plain 125 --policy "$work/pull.json" --image localhost:1/corral-no-such-image:1 -- true
	[[ "$err" == *"corral: docker provider: the container did not run the command (docker exited 125); docker's message is above" ]] || fail "stderr: $err"
	# the same through the docker client (a non-default context): kill/rm by `docker`, not the socket
	dcfg=$work/docker-config
	host=${DOCKER_HOST:-unix:///var/run/docker.sock}
	if DOCKER_CONFIG=$dcfg docker context create corral-alt --docker "host=$host" >/dev/null 2>&1; then
		export DOCKER_CONFIG=$dcfg DOCKER_CONTEXT=corral-alt
		t client_exit3 3 -c 'exit 3'
		t client_deadline 124 --timeout 1 -- sleep $sleeparg
		t client_notfound 0 --json -- corral-no-such-command
		pargs=(--provider docker --image corral-no-such-image:never)
		t client_unknown_image 125 -- true
		grep -q "is not present locally" <<<"$err" || fail "stderr: $err"
		pargs=(--provider docker --image "$IMAGE")
		unset DOCKER_CONFIG DOCKER_CONTEXT
	else
		prov=docker name=client_context
		fail "could not create a docker context"
	fi
	# corral itself SIGKILLed mid-run: its guardian removes the container
	name=corral_killed ok=1
	root=$work/docker-killed
	mkdir -p "$root"
	[ "$(id -u)" = 0 ] && chown "$owner:$owner" "$root"
	(cd "$root" && exec "$CORRAL" run --root "$root" "${pargs[@]}" -- sleep $sleeparg </dev/null >/dev/null 2>&1) &
	cpid=$!
	for _ in $(seq 1 100); do
		[ -n "$(mine "$root")" ] && break
		sleep 0.1
	done
	if [ -z "$(mine "$root")" ]; then
		fail "the container never started"
	else
		exec 3>&2 2>/dev/null # no "Killed" job notice
		kill -9 "$cpid"
		wait "$cpid"
		exec 2>&3 3>&-
		for _ in $(seq 1 50); do
			[ -z "$(mine "$root")" ] && break
			sleep 0.1
		done
		left=$(mine "$root")
		[ -z "$left" ] || { fail "container outlived corral: $left"; docker rm -f $left >/dev/null; }
	fi
	kill -9 "$cpid" 2>/dev/null
	[ "$ok" = 1 ] && { passed=$((passed + 1)); echo "ok   [docker] corral_killed"; }
	# json shape: identical keys, only "provider" (and the numbers) differ
	if [ -f "$work/json-local" ] && [ -f "$work/json-docker" ]; then
		python3 - "$work/json-local" "$work/json-docker" <<-'EOF' || { prov=both name=json_shape; fail "key sets differ"; }
		import json, sys
		a, b = (json.load(open(f)) for f in sys.argv[1:])
		assert list(a) == list(b), (list(a), list(b))
		assert {k: type(v).__name__ for k, v in a.items()} == {k: type(v).__name__ for k, v in b.items()}
		EOF
	fi
	# docker only: what the client or the image would add on their own.
	dk() { "$CORRAL" run --provider docker --image "$IMAGE" "$@"; }
	droot=$work/dk; mkdir -p "$droot"; [ "$(id -u)" = 0 ] && chown 65534:65534 "$droot"
	prov=docker
	# the client's config.json proxies (credentials) stay out; one passed on purpose arrives
	mkdir -p "$work/dcfg"
	echo '{"proxies":{"default":{"httpProxy":"http://user:tok@proxy.invalid:3128","noProxy":"x"}}}' > "$work/dcfg/config.json"
	ok=1 name=client_proxies
	out=$(DOCKER_CONFIG=$work/dcfg dk --root "$droot" -- sh -c 'env | grep -i proxy' 2>&1)
	[ -z "$out" ] || fail "config.json proxies reached the command: $out"
	out=$(DOCKER_CONFIG=$work/dcfg HTTP_PROXY=http://mine.invalid dk --root "$droot" --env HTTP_PROXY -- sh -c 'env | grep -i proxy' 2>&1)
	[ "$out" = "HTTP_PROXY=http://mine.invalid" ] || fail "--env HTTP_PROXY (control): $out"
	[ "$ok" = 1 ] && { passed=$((passed + 1)); echo "ok   [docker] $name"; }
	# an image's ENTRYPOINT does not run instead of the command
	ok=1 name=image_entrypoint
	mkdir -p "$work/ep"
	printf 'FROM %s\nENTRYPOINT ["/bin/echo", "ENTRYPOINT-RAN"]\n' "$IMAGE" > "$work/ep/Dockerfile"
	if docker build -q -t corral-test-entrypoint:latest "$work/ep" >/dev/null 2>&1; then
		out=$("$CORRAL" run --provider docker --image corral-test-entrypoint:latest --root "$droot" -- echo the-command 2>&1)
		[ "$out" = the-command ] || fail "stdout '$out'"
		docker rmi -f corral-test-entrypoint:latest >/dev/null 2>&1
	else
		fail "could not build the test image"
	fi
	[ "$ok" = 1 ] && { passed=$((passed + 1)); echo "ok   [docker] $name"; }
	# --user on a root that identity cannot write: refused as the local provider refuses it
	if [ "$(id -u)" = 0 ]; then
		ok=1 name=user_root_unwritable
		out=$(dk --user root --root "$droot" -- sh -c 'echo ran' 2>&1); rc=$?
		[ "$rc" = 125 ] && [[ "$out" == *"not writable by root"* ]] || fail "exit $rc: $out"
		out=$(dk --user nobody --root "$droot" -- sh -c 'echo ran' 2>&1); rc=$?
		[ "$rc" = 0 ] && [ "$out" = ran ] || fail "control (--user nobody, the owner): exit $rc: $out"
		[ "$ok" = 1 ] && { passed=$((passed + 1)); echo "ok   [docker] $name"; }
	fi
	# probe says what run would refuse: a missing image (never pulled), a missing extra path
	ok=1 name=probe_refusals
	pr() { (cd "$droot" && "$CORRAL" probe --json --provider docker "$@" | python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["runnable"], v["refusal"])'); }
	[ "$(pr --image "$IMAGE")" = "True None" ] || fail "control: $(pr --image "$IMAGE")"
	[[ "$(pr --image corral-no-such-image:1)" == "False image 'corral-no-such-image:1' is not present locally"* ]] || fail "$(pr --image corral-no-such-image:1)"
	[[ "$(pr --image "$IMAGE" --rw /no/such/dir)" == "False fs.read_write: /no/such/dir: No such file or directory" ]] || fail "$(pr --image "$IMAGE" --rw /no/such/dir)"
	[ "$ok" = 1 ] && { passed=$((passed + 1)); echo "ok   [docker] $name"; }
	# probe says runnable false, with the reason, where run would fail: no client on PATH, no daemon
	ok=1 name=probe_unusable
	pv() { (cd "$droot" && "$@" | python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["provider"], v["runnable"], v["refusal"])'); }
	got=$(pv env PATH=/nonexistent "$CORRAL" probe --json --provider docker --image "$IMAGE")
	[ "$got" = "docker False docker provider: no docker client on PATH (install it or add its directory to PATH; --provider local needs none)" ] || fail "no client: $got"
	got=$(pv env DOCKER_HOST=unix:///nonexistent/docker.sock "$CORRAL" probe --json --provider docker --image "$IMAGE")
	[[ "$got" == "docker False docker provider: daemon not reachable at unix:///nonexistent/docker.sock"* ]] || fail "no daemon: $got"
	got=$(pv "$CORRAL" probe --json --provider docker --image "$IMAGE")
	[ "$got" = "docker True None" ] || fail "control: $got"
	# and run fails the same way (125, the same words)
	out=$(cd "$droot" && env PATH=/nonexistent "$CORRAL" run --provider docker --image "$IMAGE" -- true 2>&1); rc=$?
	[ "$rc" = 125 ] && [[ "$out" == *"no docker client on PATH"* ]] || fail "run without a client: exit $rc: $out"
	[ "$ok" = 1 ] && { passed=$((passed + 1)); echo "ok   [docker] $name"; }
	# --provider auto: docker where client, daemon and image work, else local; the result says which
	ok=1 name=provider_auto
	got=$(pv "$CORRAL" probe --json --provider auto --image "$IMAGE")
	[ "$got" = "docker True None" ] || fail "probe auto: $got"
	got=$(pv env PATH=/nonexistent "$CORRAL" probe --json --provider auto --image "$IMAGE")
	[ "$got" = "local True None" ] || fail "probe auto without a client: $got"
	got=$(pv "$CORRAL" probe --json --provider auto --image corral-no-such-image:1)
	[ "$got" = "local True None" ] || fail "probe auto without the image: $got"
	runp() { (cd "$droot" && "$@" | python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["provider"], v["exit_status"], v["stdout"].strip(), json.dumps(v["warnings"]))'); }
	got=$(runp "$CORRAL" run --json --provider auto --image "$IMAGE" -- pwd)
	[ "$got" = "docker 0 /workspace []" ] || fail "run auto: $got"
	got=$(runp "$CORRAL" run --json --provider auto --image corral-no-such-image:1 -- echo hi)
	[[ "$got" == "local 0 hi [\"provider auto ran this with the local provider: image 'corral-no-such-image:1' is not present locally"* ]] ||
		fail "run auto without the image: $got"
	printf '{"provider": "auto"}' >"$work/auto.json"
	a=$("$CORRAL" policy show --root "$droot" --policy "$work/auto.json"); printf '%s' "$a" >"$work/auto-shown.json"
	b=$("$CORRAL" policy show --root "$droot" --policy "$work/auto-shown.json")
	grep -q '"provider": "auto"' <<<"$a" && [ "$a" = "$b" ] || fail "policy show does not round-trip auto: $a"
	[ "$ok" = 1 ] && { passed=$((passed + 1)); echo "ok   [docker] $name"; }

	left=$(docker ps -a --filter label=io.corral.run --format '{{.ID}} {{.Label "io.corral.root"}}' | grep " $work/" | cut -d' ' -f1)
	[ -z "$left" ] || { prov=docker name=no_leftovers; fail "containers left: $left"; docker rm -f $left >/dev/null; }
fi

echo "$passed passed, $failed failed${skipped_cols:+, skipped columns: ${skipped_cols[*]}}"
if [ ${#skipped_cols[@]} = 2 ]; then skip "neither provider can run yet"; fi
if [[ " ${skipped_cols[*]} " == *" docker "* ]]; then
	[ "$failed" = 0 ] && [ "${CORRAL_MUST_WORK:-}" != 1 ] && exit 77
	exit 1
fi
[ "$failed" = 0 ]
