# Shared helpers of the escape conformance suite (black-box against $CORRAL).
# Every script runs as root and, through tests/as-nobody.sh, as nobody. As
# root, scratch directories are handed to nobody (65534): the default
# identity for a root-owned root, and an owner the attacks would otherwise
# be allowed to write as — so only the sandbox can stop them.
set -uo pipefail
C=${CORRAL:?CORRAL must point at the built corral}
# Debian's interpreter explicitly: the python3 on PATH may be a pyenv shim under /root.
PY=/usr/bin/python3
nfail=0
npass=0
cleanup_dirs=()
cleanup_pids=()
cleanup() {
	for p in "${cleanup_pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "${cleanup_dirs[@]}" 2>/dev/null
}
trap cleanup EXIT

is_root() { [ "$(id -u)" = 0 ]; }
ID=$(id -u)
if is_root; then ID=65534; fi

skip() {
	if [ "${CORRAL_MUST_WORK:-}" = 1 ]; then
		echo "FAIL (CORRAL_MUST_WORK=1 forbids skipping): $*"
		exit 1
	fi
	echo "SKIP: $*"
	exit 77
}

ok() { npass=$((npass + 1)); echo "ok - $*"; }
bad() { nfail=$((nfail + 1)); echo "FAIL - $*"; }

# A scratch directory: $S/root (the sandbox root) and $S/outside (the
# target), both owned by the command's identity, with outside/secret and
# outside/victim.
mkscratch() {
	S=$(mktemp -d /tmp/corral-esc.XXXXXX) || exit 1
	chmod 711 "$S"
	cleanup_dirs+=("$S")
	R=$S/root
	O=$S/outside
	mkdir "$R" "$O"
	echo "secret-$$" > "$O/secret"
	echo "victim-$$" > "$O/victim"
	if is_root; then chown -R 65534:65534 "$R" "$O"; fi
}

# "${AS_ID[@]}" CMD...: a host-side helper as the command's identity (an
# array, not a function, so `... &` gives the helper's own pid in $!).
AS_ID=()
if is_root; then AS_ID=(setpriv --reuid=65534 --regid=65534 --clear-groups --); fi
# as_id CMD...: the same, in the foreground.
as_id() {
	if is_root; then
		setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
	else
		"$@"
	fi
}

# crun [corral run options] -- CMD...: corral run with the scratch root.
crun() { "$C" run --root "$R" "$@"; }

# expect_denied NAME CMD...: the command must fail, and fail for the
# reason under test: its output must match the extended regex $DENY (by
# default an errno a confinement produces: EACCES, EPERM, ENOSYS, EROFS,
# EXDEV, ECONNREFUSED, ...). DENY=SIGSYS instead requires the kill signature of
# the seccomp filter (exit status 159, 128 + SIGSYS); DENY=MEMORY an OOM kill
# (137) or a failed allocation. A run that never
# started (125: corral refused its options; 126/127: cannot execute, not
# found) is a failure, not a denial: an attack that did not run proves
# nothing.
DENY_DEFAULT='Permission denied|Operation not permitted|PermissionError|EACCES|EPERM|ENOSYS|Function not implemented|Read-only file system|EROFS|Invalid cross-device link|EXDEV|Bad file descriptor|EBADF|Connection refused|ECONNREFUSED|Network is unreachable|ENETUNREACH|Address family not supported|EAFNOSUPPORT|EINVAL|Invalid argument'
expect_denied() {
	local name=$1 out rc re=${DENY:-$DENY_DEFAULT}
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		bad "$name: the attack succeeded"
		printf '%s\n' "$out" | tail -n 5 | sed 's/^/#   /'
	elif [ $rc -eq 125 ] || [ $rc -eq 126 ] || [ $rc -eq 127 ]; then
		bad "$name: the attack never ran (exit $rc)"
		printf '%s\n' "$out" | tail -n 5 | sed 's/^/#   /'
	elif [ "$re" = MEMORY ]; then
		# The memory cgroup's OOM killer (as root: SIGKILL, exit 137), or the
		# address-space rlimit's failed allocation (no cgroup).
		if [ $rc -eq 137 ] || grep -Eq 'MemoryError|ENOMEM|Cannot allocate memory' <<<"$out"; then ok "$name (memory)"; else bad "$name: expected an OOM kill (137) or ENOMEM, got exit $rc: $(printf '%s' "$out" | tail -n 2 | tr '\n' ' ')"; fi
	elif [ "$re" = SIGSYS ]; then
		if [ $rc -eq 159 ]; then ok "$name (SIGSYS)"; else bad "$name: expected the filter's SIGSYS (exit 159), got exit $rc: $(printf '%s' "$out" | tail -n 2 | tr '\n' ' ')"; fi
	elif grep -Eq -- "$re" <<<"$out"; then
		ok "$name"
	else
		bad "$name: failed (exit $rc) without the expected denial${DENY:+ /$DENY/}"
		printf '%s\n' "$out" | tail -n 5 | sed 's/^/#   /'
	fi
}
expect_allowed() {
	local name=$1
	shift
	local out
	if out=$("$@" 2>&1); then ok "$name (control)"; else bad "$name (control) failed: $out"; fi
}

# The C probe, compiled at test time into the root (the sandbox can run it there).
build_probe() {
	command -v cc >/dev/null || skip "no C compiler (cc)"
	cc -O1 -o "$R/probe" "${CORRAL_SRCDIR:?}/tests/escape/probe.c" || { bad "compile probe.c"; return 1; }
	if is_root; then chown 65534:65534 "$R/probe"; fi
	PROBE=./probe
}

# The outside directory must hold exactly what mkscratch put there.
outside_intact() {
	local names
	names=$(cd "$O" && ls -A | sort | tr '\n' ' ')
	if [ "$names" != "${1:-secret victim }" ]; then bad "outside changed: [$names]"; else ok "outside holds only its own files"; fi
	if [ "$(cat "$O/victim")" != "victim-$$" ]; then bad "outside/victim changed"; else ok "outside/victim unchanged"; fi
}

finish() {
	echo "# $npass passed, $nfail failed"
	[ "$nfail" -eq 0 ]
	exit $?
}
