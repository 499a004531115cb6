#!/usr/bin/env bash
# Build the local benchmark image (default corral-bench-busybox:latest) from
# the host's static busybox with `docker import`: no registry involved.
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

stamp=$(sha256sum "$bb" | cut -c1-16)
have=$(docker image inspect --format '{{index .Config.Labels "corral.busybox"}}' "$image" 2>/dev/null || true)
[ "$have" = "$stamp" ] && exit 0

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{bin,tmp,etc,proc,sys,dev,workspace}
cp "$bb" "$tmp/bin/busybox"
for a in $("$tmp/bin/busybox" --list); do
	[ "$a" = busybox ] || ln -s busybox "$tmp/bin/$a"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$tmp/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$tmp/etc/group"
chmod 1777 "$tmp/tmp"
tar -C "$tmp" --numeric-owner --owner=0 --group=0 -cf - . |
	docker import --change "LABEL corral.busybox=$stamp" \
		--change 'ENV PATH=/bin' --change 'CMD ["/bin/sh"]' - "$image" >/dev/null
echo "make-image: built $image" >&2
