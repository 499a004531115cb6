#!/usr/bin/env bash
# corral's own unit tests run inside corral: TMPDIR is the sandbox's
# private tmp and /tmp itself is not writable there, so a test that
# hardcodes /tmp fails. Usage: inside-corral.sh /PATH/TO/TEST-BINARY...
set -uo pipefail
C=${CORRAL:?}
B=${CORRAL_BUILDDIR:?}
S=$(mktemp -d "${TMPDIR:-/tmp}/corral-inside.XXXXXX") || exit 1
trap 'rm -rf "$S"' EXIT
if [ "$(id -u)" = 0 ]; then chown 65534:65534 "$S"; fi
rc=0
for t in "$@"; do
	case $t in /*) ;; *) t=$B/$t ;; esac
	if out=$("$C" run --root "$S" --ro "$B" --timeout 60 -- "$t" 2>&1); then
		echo "ok - $t inside corral"
	else
		echo "FAIL - $t inside corral: $out" | tail -20
		rc=1
	fi
done
exit $rc
