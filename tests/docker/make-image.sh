#!/usr/bin/env bash
# Build a local busybox image (the tag in $1, else $CORRAL_TEST_IMAGE, else
# corral-test-busybox:latest) from the host's static busybox ($CORRAL_BUSYBOX,
# else the one on PATH) with `docker import` (no registry is needed or
# reachable). bench/make-image.sh builds the benchmark image through it.
# Idempotent: a present image whose label matches this busybox is kept.
# Exit 0 built or present; 77 no daemon / no busybox (1 with CORRAL_MUST_WORK=1).
set -euo pipefail
image=${1:-${CORRAL_TEST_IMAGE:-corral-test-busybox:latest}}
skip() {
	if [ "${CORRAL_MUST_WORK:-}" = 1 ]; then echo "make-image: FAIL (CORRAL_MUST_WORK=1): $*" >&2; exit 1; fi
	echo "make-image: SKIP: $*" >&2; exit 77
}
command -v docker >/dev/null || skip "no docker client on PATH"
bb=${CORRAL_BUSYBOX:-$(command -v busybox || true)}
[ -n "$bb" ] || skip "busybox-static is not installed"
file -L "$bb" 2>/dev/null | grep -q 'statically linked' || [ ! -x /usr/bin/file ] || skip "$bb is not static (install busybox-static)"
docker version --format '{{.Server.Version}}' >/dev/null 2>&1 || skip "docker daemon not reachable"

stamp=$(sha256sum "$bb" | cut -c1-16)
have=$(docker image inspect --format '{{index .Config.Labels "corral.busybox"}}' "$image" 2>/dev/null || true)
[ "$have" = "$stamp" ] && exit 0

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{bin,tmp,workspace,etc,proc,sys,dev}
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
