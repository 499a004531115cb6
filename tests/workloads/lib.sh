# Shared helpers for the workloads suite: real programs' real work inside
# `corral run` with the DEFAULT policy (only the options a script names).
# Sourced by each script. As root, roots are chowned to nobody so the
# default identity (nobody) can write them; as nobody they are ours.
set -uo pipefail
C=${CORRAL:?CORRAL must point at the built corral}
SRCDIR=${CORRAL_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# Debian's interpreter: `python3` on a developer's PATH may be a pyenv shim
# under /root, which the sandbox cannot read.
PY=/usr/bin/python3
nfail=0
npass=0
cleanup_dirs=()
trap 'rm -rf "${cleanup_dirs[@]}" 2>/dev/null' EXIT

is_root() { [ "$(id -u)" = 0 ]; }

# need TOOL [APT-PACKAGE]: skip the whole script (77) when TOOL is absent,
# unless CORRAL_MUST_WORK=1 and the package is one scripts/install-deps.sh
# installs, in which case its absence is a failure.
need() {
	local tool=$1 pkg=${2:-$1}
	command -v "$tool" >/dev/null 2>&1 && return 0
	if [ "${CORRAL_MUST_WORK:-}" = 1 ] &&
		grep -qw -- "$pkg" "$SRCDIR/scripts/install-deps.sh" 2>/dev/null; then
		echo "FAIL - $tool missing (package $pkg is in scripts/install-deps.sh)"
		exit 1
	fi
	echo "SKIP: $tool not installed"
	exit 77
}

# A fresh root directory the command's identity can write.
mkroot() {
	local d
	d=$(mktemp -d /tmp/corral-wl.XXXXXX) || exit 1
	chmod 755 "$d"
	cleanup_dirs+=("$d")
	echo "$d"
}

# give DIR: hand everything under DIR to the sandbox identity.
give() { if is_root; then chown -R 65534:65534 "$1"; fi; }

ok() { npass=$((npass + 1)); echo "ok - $*"; }
bad() { nfail=$((nfail + 1)); echo "FAIL - $*"; }

# expect_eq NAME EXPECTED ACTUAL
expect_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: expected [$2], got [$3]"; fi
}

# step NAME CMD...: run CMD (usually `inside ...`), pass when it exits 0;
# on failure show its combined output.
step() {
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		ok "$name"
	else
		bad "$name (exit $rc)"
		printf '%s\n' "$out" | tail -n 20 | sed 's/^/#   /'
	fi
}

finish() {
	echo "# $npass passed, $nfail failed"
	[ "$nfail" -eq 0 ]
	exit $?
}
