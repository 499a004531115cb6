#!/usr/bin/env bash
# Build the local benchmark image (default corral-bench-busybox:latest) from
# the host's static busybox with `docker import` (tests/docker/make-image.sh):
# no registry involved.
# Idempotent: an image whose label matches this busybox binary is kept.
# Exit 0 built or present; 1 with one line "why" on stderr otherwise.
set -euo pipefail
image=${1:-corral-bench-busybox:latest}
fail() { echo "make-image: $*" >&2; exit 1; }
command -v docker >/dev/null || fail "no docker client on PATH"
docker version --format '{{.Server.Version}}' >/dev/null 2>&1 || fail "docker daemon not reachable"
bb=/bin/busybox
[ -x "$bb" ] || bb=$(command -v busybox || true)
[ -n "$bb" ] || fail "busybox-static is not installed"
# A dynamic busybox would find no libc inside the image.
if ldd "$bb" >/dev/null 2>&1; then fail "$bb is dynamically linked (install busybox-static)"; fi

# The build itself is the test image's; this script keeps the bench's checks and errors.
CORRAL_BUSYBOX=$bb CORRAL_MUST_WORK=1 exec bash "$(dirname "$0")/../tests/docker/make-image.sh" "$image"
