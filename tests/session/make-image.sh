#!/usr/bin/env bash
# The docker session suite's image (the tag in $1, else
# corral-test-session:latest): the busybox image of tests/docker/make-image.sh
# plus the host's /bin/bash and the libraries it loads, so the `bash` tool
# runs in the container as it does on the host. Built with `docker import`
# (no registry is needed or reachable). Idempotent: a present image whose
# label matches this busybox and bash is kept.
# Exit 0 built or present; 77 no daemon / busybox / bash (1 with CORRAL_MUST_WORK=1).
set -euo pipefail
image=${1:-corral-test-session:latest}
skip() {
	if [ "${CORRAL_MUST_WORK:-}" = 1 ]; then echo "make-image: FAIL (CORRAL_MUST_WORK=1): $*" >&2; exit 1; fi
	echo "make-image: SKIP: $*" >&2; exit 77
}
command -v docker >/dev/null || skip "no docker client on PATH"
bb=${CORRAL_BUSYBOX:-$(command -v busybox || true)}
[ -n "$bb" ] || skip "busybox-static is not installed"
file -L "$bb" 2>/dev/null | grep -q 'statically linked' || [ ! -x /usr/bin/file ] || skip "$bb is not static (install busybox-static)"
[ -x /bin/bash ] || skip "no /bin/bash on the host"
docker version --format '{{.Server.Version}}' >/dev/null 2>&1 || skip "docker daemon not reachable"

libs=$(ldd /bin/bash | awk '/=> \//{print $3} /^\t\//{print $1}')
stamp=$(cat "$bb" /bin/bash $libs | sha256sum | cut -c1-16)
have=$(docker image inspect --format '{{index .Config.Labels "corral.session"}}' "$image" 2>/dev/null || true)
[ "$have" = "$stamp" ] && exit 0

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{bin,tmp,workspace,etc,proc,sys,dev}
cp "$bb" "$tmp/bin/busybox"
for a in $("$tmp/bin/busybox" --list); do
	[ "$a" = busybox ] || [ "$a" = bash ] || ln -s busybox "$tmp/bin/$a"
done
cp /bin/bash "$tmp/bin/bash"
for l in $libs; do
	mkdir -p "$tmp$(dirname "$l")"
	cp -L "$l" "$tmp$l"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$tmp/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$tmp/etc/group"
chmod 1777 "$tmp/tmp"
tar -C "$tmp" --numeric-owner --owner=0 --group=0 -cf - . |
	docker import --change "LABEL corral.session=$stamp" \
		--change 'ENV PATH=/bin' --change 'CMD ["/bin/sh"]' - "$image" >/dev/null
echo "make-image: built $image" >&2
