#!/bin/sh
# Runs inside the test container (tests/container/container.sh), under
# busybox sh, as the container's user (root or not). $MODE says which
# seccomp profile docker gave the container: "default" (docker's own) or
# "profile" (docs/deploy/seccomp-corral.json). Every attack is paired with
# its control outside corral, and `corral probe --json` must promise
# exactly what the attacks observed. Prints ok/FAIL lines; exit 0 when all
# passed.
# shellcheck disable=SC2086 # $AS and $USEROPT are word lists
PATH=/usr/local/bin:/bin
T=/opt/corral-test
MODE=${MODE:?}
npass=0
nfail=0
ok() { npass=$((npass + 1)); echo "ok - [$MODE uid $(id -u)] $*"; }
bad() { nfail=$((nfail + 1)); echo "FAIL - [$MODE uid $(id -u)] $*"; }

S=$(mktemp -d /tmp/corral-ct.XXXXXX) || exit 1
chmod 711 "$S"
R=$S/root
O=$S/outside
mkdir "$R" "$O"
echo "victim" >"$O/victim"
cp "$T/probe" "$R/probe"
# As container root the command runs as uid 2000 (--user): nobody, corral's
# default there, is shared with every other container and host process of
# that uid, and RLIMIT_NPROC counts them all (docs/deploy.md). The outside
# helpers run as the command's identity too.
if [ "$(id -u)" = 0 ]; then
	chown -R 2000:2000 "$R" "$O"
	AS="$T/helper runas 2000"
	USEROPT="--user 2000:2000"
else
	AS=""
	USEROPT=""
fi
crun() { corral run --root "$R" $USEROPT "$@"; }
pids=""
cleanup() { for p in $pids; do kill -9 "$p" 2>/dev/null; done; rm -rf "$S"; }
trap cleanup EXIT

# expect NAME WANT(ok|denied) CMD...: the C probe prints "ok ..." or
# "denied ...: ERRNO"; a run corral refused (125) or that never started
# (126/127) proves nothing and fails.
expect() {
	name=$1 want=$2
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	case "$rc:$want:$out" in
	0:ok:*) ok "$name" ;;
	1:denied:*denied*) ok "$name (${out##*: })" ;;
	*) bad "$name: wanted $want, got exit $rc: $(printf '%s' "$out" | tail -n 3 | tr '\n' ' ')" ;;
	esac
}

# ---------------------------------------------------------------- probe
J=$(corral probe --root "$R" $USEROPT --json)
[ -n "$J" ] || bad "corral probe --json printed nothing"
state() { printf '%s' "$1" | grep -o "\"id\": \"$2\", \"state\": \"[a-z_]*\"" | sed 's/.*"state": "//; s/"$//'; }
why() { printf '%s' "$1" | grep -oE "\"id\": \"$2\", \"state\": \"[a-z_]*\", \"why\": \"([^\"\\\\]|\\\\.)*\"" | sed 's/.*"why": "//'; }
case "$J" in *'"runnable": true'*) ok "probe: the default policy is runnable" ;; *) bad "probe: not runnable: $J" ;; esac
case "$J" in *'"state": "dropped"'*) bad "probe: a promise is dropped under the default policy: $J" ;; *) ok "probe: nothing dropped" ;; esac
for id in fs.write fs.read scope.signal net.no_io_uring seccomp.deny_table priv.no_new_privs; do
	[ "$(state "$J" $id)" = enforced ] && ok "probe: $id enforced" || bad "probe: $id is '$(state "$J" $id)'"
done
# Every promise of the default policy: enforced, or not applicable for a
# reason that is not the container's (listed). Under seccomp-corral.json as
# a non-root user, nothing may be short of the host's posture.
case "$J" in *'"egress": false'*'"fs_confined": true'*) ok "probe: no egress, filesystem confined" ;;
*) bad "probe: egress or fs_confined wrong: $J" ;; esac
printf '%s' "$J" | grep -oE '"id": "[a-z_.]*", "state": "not_applicable", "why": "([^"\\]|\\.)*"' |
	sed 's/^"id": "\([^"]*\)".*"why": "\(.*\)"$/# not applicable: \1: \2/'
if [ "$MODE:$UNIX" = profile:mediated ]; then
	na=$(printf '%s' "$J" | grep -oE '"id": "[a-z_.]*", "state": "not_applicable"' | sed 's/"id": "//; s/".*//' | sort | tr '\n' ' ')
	# Asked for by other policies (--net loopback or allow, --proc private), and Landlock ABI 9 where the kernel has it.
	extra=$(printf '%s\n' $na | grep -vxE 'net.loopback_namespace|net.egress_allow|proc.private|fs.resolve_unix' | tr '\n' ' ')
	[ -z "$extra" ] && ok "probe: every promise enforced but those the policy or kernel leaves out ($na)" ||
		bad "probe: not applicable under seccomp-corral.json: $extra"
fi

# $UNIX (from container.sh): "mediated", or "refused:FIX" where FIX is what
# probe's reason must name (the profile, or CAP_SYS_PTRACE for root).
case "$UNIX" in
mediated)
	[ "$(state "$J" net.unix_mediated)" = enforced ] && ok "probe: Unix sockets mediated" ||
		bad "probe: net.unix_mediated is '$(state "$J" net.unix_mediated)': $(why "$J" net.unix_refused)"
	UNIX_IN=ok
	;;
refused:*)
	fix=${UNIX#refused:}
	[ "$(state "$J" net.unix_refused)" = enforced ] && ok "probe: Unix sockets refused (no mediation)" ||
		bad "probe: net.unix_refused is '$(state "$J" net.unix_refused)'"
	case "$(why "$J" net.unix_refused)" in
	*pidfd_getfd*"$fix"*) ok "probe: the refusal names pidfd_getfd and the fix ($fix)" ;;
	*) bad "probe: net.unix_refused does not name the fix ($fix): $(why "$J" net.unix_refused)" ;;
	esac
	corral probe --root "$R" $USEROPT | grep -q "net.unix_refused.*$fix" &&
		ok "probe (human): the fix is printed too" || bad "probe (human) does not name $fix"
	UNIX_IN=denied
	;;
*) bad "UNIX=$UNIX: container.sh passes mediated or refused:FIX" ;;
esac

# ------------------------------------------------------- writes outside
expect "write outside the root" denied crun -- ./probe write "$O/escape"
[ -e "$O/escape" ] && bad "write outside: $O/escape exists" || ok "write outside: nothing created"
expect "write outside the root (control, outside corral)" ok $AS "$T/probe" write "$O/control"
expect "write inside the root (control)" ok crun -- ./probe write "$R/inside"
[ "$(cat "$R/inside" 2>/dev/null)" = x ] && ok "write inside: the file is there" || bad "write inside: no file"

# -------------------------------------------------------------- sockets
expect "AF_INET socket" denied crun -- ./probe udp 127.0.0.1 9
expect "AF_INET socket (control, outside corral)" ok $AS "$T/probe" udp 127.0.0.1 9
p=$("$T/helper" listen "$O/sock") && pids="$pids $p"
p=$("$T/helper" listen "$R/sock") && pids="$pids $p"
expect "AF_UNIX connect outside the root" denied crun -- ./probe unix "$O/sock"
expect "AF_UNIX connect outside the root (control, outside corral)" ok $AS "$T/probe" unix "$O/sock"
# Allowed by the policy: mediated when probe says so, else refused at socket().
expect "AF_UNIX connect inside the root (probe: $UNIX_IN)" "$UNIX_IN" crun -- ./probe unix "$R/sock"

# -------------------------------------------------------------- signals
$AS sleep 120 &
v1=$!
$AS sleep 120 &
v2=$!
pids="$pids $v1 $v2"
sleep 0.2
out=$(crun -- kill -TERM "$v1" 2>&1)
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 125 ] && kill -0 "$v1" 2>/dev/null; then ok "kill outside the sandbox refused ($out)"; else bad "kill outside: exit $rc, victim alive: $(kill -0 "$v1" 2>/dev/null && echo yes || echo no): $out"; fi
expect "kill outside the sandbox (C)" denied crun -- ./probe kill "$v2" 15
$AS kill -TERM "$v2" && ok "kill (control, same uid outside corral)" || bad "kill (control) failed"

# ------------------------------------------------------------- io_uring
# The control first: a container profile may refuse io_uring itself
# (docs/deploy/seccomp-corral.json does, as recent runtime defaults do;
# older ones allow it). Then corral's own filter must be the one that
# answers inside: ENOSYS, not the profile's EPERM (of stacked filters,
# the newest decides among errnos).
out=$($AS "$T/probe" io_uring 2>&1)
case "$out" in
ok*) ok "io_uring_setup (control, outside corral)"
	expect "io_uring_setup" denied crun -- ./probe io_uring ;;
*EPERM*) ok "io_uring_setup (control): the container's profile refuses it already (EPERM)"
	out=$(crun -- ./probe io_uring 2>&1)
	case "$out" in *ENOSYS*) ok "io_uring_setup: corral's filter answers (ENOSYS)" ;;
	*) bad "io_uring_setup inside: $out" ;; esac ;;
*) bad "io_uring_setup (control): $out" ;;
esac

# ------------------------------------------------------------- workload
out=$(crun -- sh -c '
set -e
mkdir -p src unpack
i=0
while [ $i -lt 200 ]; do echo "line $i $(echo $i | sha256sum | cut -c1-16)" >src/f$i.txt; i=$((i + 1)); done
tar cf - src | gzip >src.tgz
gunzip -c src.tgz | tar xf - -C unpack
diff -r src unpack/src
cat src/*.txt | sort -u | wc -l
' 2>&1)
rc=$?
[ $rc -eq 0 ] && [ "$out" = 200 ] && [ -s "$R/src.tgz" ] && [ -f "$R/unpack/src/f199.txt" ] &&
	ok "workload: 200 files built, archived and unpacked in the root" || bad "workload: exit $rc: $out"

# ------------------------------------------------- a session (a worker's)
# The exec tool always; the bash tool (cd, then a relative path) when the
# image has bash.
if [ -x /bin/bash ]; then
	req1='{"id":1,"tool":"bash","command":"cd src && echo built > ../session.txt && pwd"}'
else
	echo "# no bash in the image (install bash-static): the session's exec tool only"
	req1='{"id":1,"tool":"exec","argv":["sh","-c","cd src && echo built > ../session.txt && pwd"]}'
fi
# Its stdin stays open until both results are in: at end of input a
# session cancels what still runs.
mkfifo "$S/sin"
# sout exists before the count below reads it: the background job's own
# redirection may come later, and a count of nothing would end the wait.
: >"$S/sout"
corral session --root "$R" $USEROPT <"$S/sin" >"$S/sout" 2>&1 &
sp=$!
exec 8>"$S/sin"
printf '%s\n' "$req1" '{"id":2,"tool":"exec","argv":["sh","-c","echo x > '"$O"'/from-session"]}' >&8
i=0
while [ "$(grep -c '"event":"result"' "$S/sout")" -lt 2 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
exec 8>&-
wait $sp
out=$(cat "$S/sout")
case "$out" in
*'"id":1,"event":"result"'*'"exit_status":0'*) ok "session: a call ran in the root" ;;
*) bad "session call 1: $out" ;;
esac
[ "$(cat "$R/session.txt" 2>/dev/null)" = built ] && ok "session: its file is in the root" || bad "session: no session.txt"
case "$out" in
*'"id":2,"event":"result"'*'ermission denied'*) [ ! -e "$O/from-session" ] && ok "session: a write outside refused" ||
	bad "session: wrote outside" ;;
*) bad "session call 2: $out" ;;
esac

# ------------------------------------------------------ corral check
# Its canaries attack every promise; under seccomp-corral.json all hold.
# Under docker's default one is inconclusive: without the supervisor's
# listener (no pidfd_getfd) a command cannot get its own pty's peer
# (TIOCGPTPEER), which the pty canary's control needs. ($CHECK: the
# non-root containers only, for time.)
if [ "${CHECK:-}" = 1 ]; then
	out=$(corral check --root "$R" $USEROPT 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -E '^  (inconclusive|broken)|^ {30,}canary' | sed 's/^ */# check: /'
	other=$(printf '%s\n' "$out" | grep 'canary .* inconclusive' | grep -v 'canary pty-host inconclusive: control failed: the peer of its own pty (TIOCGPTPEER)')
	case "$rc:$MODE:$out" in
	*"  broken"*) bad "corral check: a promise is broken (exit $rc)" ;;
	0:profile:*"every promise the policy makes holds"*) ok "corral check: every promise holds" ;;
	1:default:*)
		[ -z "$other" ] && ok "corral check: nothing broken; inconclusive only where the pty canary needs the listener" ||
			bad "corral check: inconclusive beyond the pty canary: $other" ;;
	*) bad "corral check: exit $rc: $(printf '%s' "$out" | tail -n 3 | tr '\n' ' ')" ;;
	esac
fi

# ---------------------------------------- namespaces: probe and run agree
# Whatever probe says of --net loopback and --proc private, run must do.
for opt in "--net loopback:net.loopback_namespace" "--proc private:proc.private" \
	"--net allow --allow example.com:net.egress_allow"; do
	args=${opt%%:*} id=${opt##*:}
	st=$(state "$(corral probe --root "$R" $USEROPT --json $args)" "$id")
	out=$(crun $args -- true 2>&1)
	rc=$?
	case "$st:$rc" in
	enforced:0) ok "$args: probe says enforced and run works" ;;
	dropped:125) case "$out" in *"$id"*) ok "$args: probe says dropped and strict refuses, naming $id" ;; *) bad "$args: refused without naming $id: $out" ;; esac ;;
	*) bad "$args: probe says '$st', run exit $rc: $out" ;;
	esac
done

# best-effort: a dropped loopback namespace falls back to network "none"
# (the stricter neighbour, never "host"), and the drop is reported.
if [ "$(state "$(corral probe --root "$R" $USEROPT --json --net loopback)" net.loopback_namespace)" = dropped ]; then
	out=$(crun --net loopback --compat best-effort -- ./probe udp 127.0.0.1 9 2>&1)
	case "$out" in
	*"dropped net.loopback_namespace"*denied*) ok "--net loopback best-effort: runs as network none, the drop reported" ;;
	*) bad "--net loopback best-effort: $out" ;;
	esac
fi

# --------------------------------------- container root: --user root
if [ "$(id -u)" = 0 ]; then
	# The default identity of a root-owned root: nobody.
	R0=$S/root0
	mkdir "$R0"
	chown 65534:65534 "$R0"
	out=$(corral run --root "$R0" -- id -u 2>&1)
	[ "$out" = 65534 ] && ok "container root: the command runs as nobody by default" || bad "default identity: $out"
	# --user root: uid 0 needs a pids cgroup, which a container does not give.
	chown 0:0 "$R0"
	J=$(corral probe --root "$R0" --user root --json)
	st=$(state "$J" limits.processes)
	out=$(corral run --root "$R0" --user root -- true 2>&1)
	rc=$?
	if [ "$st" = dropped ]; then
		case "$(why "$J" limits.processes)" in
		*--user*) ok "probe --user root: limits.processes dropped, naming the fix" ;;
		*) bad "probe --user root: limits.processes dropped without a fix: $(why "$J" limits.processes)" ;;
		esac
		[ $rc -eq 125 ] && case "$out" in *limits.processes*) true ;; *) false ;; esac &&
			ok "--user root: strict refuses (limits.processes)" || bad "--user root: strict exit $rc: $out"
		out=$(corral run --root "$R0" --user root --compat best-effort -- id -u 2>&1)
		case "$out" in *"dropped limits.processes"*0) ok "--user root: best-effort runs and reports the drop" ;;
		*) bad "--user root best-effort: $out" ;; esac
	else
		[ "$st" = enforced ] && [ $rc -eq 0 ] && ok "--user root: a pids cgroup bounds uid 0" ||
			bad "--user root: probe '$st', run exit $rc: $out"
	fi
fi

echo "# $npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
