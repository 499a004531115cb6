#!/usr/bin/env bash
# A real confined example: an agent-style shell command in a scratch
# project directory. Writing inside the root works; reading a home
# directory and writing outside the root are refused by the kernel.
set -euo pipefail
corral=${CORRAL:-$(cd "$(dirname "$0")/.." && pwd)/build/corral}
root=$(mktemp -d /tmp/corral-demo.XXXXXX)
trap 'rm -rf "$root"' EXIT
# As root, corral runs the command as the root directory's owner (never
# uid 0 unless asked): give the scratch project to nobody.
[ "$(id -u)" != 0 ] || chown nobody: "$root"

echo "\$ corral run --root $root -- sh -c '...'"
"$corral" run --root "$root" -- sh -c '
  echo "hello from $(id -un) in $PWD" > greeting && cat greeting
  ls /root 2>&1 | head -1
  (echo outside > /tmp/corral-demo-escape) 2>&1 || true
  cat /etc/hostname >/dev/null && echo "system files stay readable"
' || true
echo
echo "\$ corral run --json --root $root -- python3 -c 'print(6*7)'"
"$corral" run --json --root "$root" -- /usr/bin/python3 -c 'print(6*7)'
test ! -e /tmp/corral-demo-escape && echo "(/tmp/corral-demo-escape was not created)"
