# Shared helpers for the integration suite (black-box against $CORRAL).
# Sourced by each test script; every test runs as root and as nobody
# (tests/as-nobody.sh): as root, roots are created owned by nobody so the
# default identity (nobody, since root would own a mktemp dir) can write.
set -uo pipefail
C=${CORRAL:?CORRAL must point at the built corral}
PY=/usr/bin/python3
nfail=0
npass=0
cleanup_dirs=()
trap 'rm -rf "${cleanup_dirs[@]}" 2>/dev/null' EXIT

is_root() { [ "$(id -u)" = 0 ]; }

# A fresh root directory the command's identity can write.
mkroot() {
	local d
	d=$(mktemp -d /tmp/corral-it.XXXXXX) || exit 1
	chmod 755 "$d"
	if is_root; then chown 65534:65534 "$d"; fi
	cleanup_dirs+=("$d")
	echo "$d"
}

ok() { npass=$((npass + 1)); echo "ok - $*"; }
bad() { nfail=$((nfail + 1)); echo "FAIL - $*"; }

# expect_eq NAME EXPECTED ACTUAL
expect_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: expected [$2], got [$3]"; fi
}

# expect_match NAME REGEX ACTUAL
expect_match() {
	if [[ "$3" =~ $2 ]]; then ok "$1"; else bad "$1: [$3] does not match /$2/"; fi
}

# json FIELD < json  -> python repr of the field (None/True/False/int/str)
json() { "$PY" -c 'import json,sys; v=json.load(sys.stdin); print(repr(eval("v"+sys.argv[1])))' "$1"; }

finish() {
	echo "# $npass passed, $nfail failed"
	[ "$nfail" -eq 0 ]
	exit $?
}
