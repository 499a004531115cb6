#!/usr/bin/env bash
# corral inside a docker container, the way an agent platform deploys it:
# an image built here (docker import, no registry) from the static corral
# binary, busybox-static and two static test programs; run with
# --security-opt no-new-privileges, --network none, --memory and
# --pids-limit, as a non-root container user (--cap-drop ALL; once with a
# read-only root filesystem, as Kubernetes' readOnlyRootFilesystem) and as
# container root (docker's default capabilities, and with SYS_PTRACE), under
# docker's default seccomp profile and under docs/deploy/seccomp-corral.json.
# tests/container/inside.sh does the attacks, their controls, a workload and
# the probe cross-checks in each of the four containers.
# Exit 77 (skip) without docker, a static corral, busybox-static or cc;
# with CORRAL_MUST_WORK=1 those are failures.
set -uo pipefail
C=${CORRAL:?CORRAL must point at the built corral}
SRC=${CORRAL_SRCDIR:?}
skip() {
	if [ "${CORRAL_MUST_WORK:-}" = 1 ]; then echo "FAIL (CORRAL_MUST_WORK=1 forbids skipping): $*"; exit 1; fi
	echo "SKIP: $*"
	exit 77
}
command -v docker >/dev/null || skip "no docker client on PATH"
docker version --format '{{.Server.Version}}' >/dev/null 2>&1 || skip "docker daemon not reachable (bash scripts/start-dockerd.sh)"
bb=$(command -v busybox || true)
[ -n "$bb" ] && file -L "$bb" | grep -q 'statically linked' || skip "busybox-static is not installed (scripts/install-deps.sh)"
file -L "$C" | grep -q 'statically linked' || skip "$C is not linked statically: the image has no libc"
command -v cc >/dev/null || skip "no C compiler (cc)"

work=$(mktemp -d /tmp/corral-container.XXXXXX)
image=corral-test-container:$$
cleanup() {
	local c
	for c in $(docker ps -aq --filter "name=^corral-ct-$$-" 2>/dev/null); do docker rm -f "$c" >/dev/null 2>&1; done
	docker rmi -f "$image" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT
fs=$work/rootfs
mkdir -p "$fs"/{bin,tmp,etc,proc,sys,dev,usr/local/bin,opt/corral-test}
cp "$bb" "$fs/bin/busybox"
for a in $("$bb" --list); do [ "$a" = busybox ] || ln -s busybox "$fs/bin/$a"; done
# The session's bash tool needs bash: Debian's static one when installed
# (scripts/install-deps.sh), else inside.sh drives the exec tool only.
if [ -x /bin/bash-static ]; then cp /bin/bash-static "$fs/bin/bash"; fi
cp "$C" "$fs/usr/local/bin/corral"
cc -static -O1 -o "$fs/opt/corral-test/probe" "$SRC/tests/escape/probe.c" || { echo "FAIL: compile probe.c"; exit 1; }
cc -static -O1 -o "$fs/opt/corral-test/helper" "$SRC/tests/container/helper.c" || { echo "FAIL: compile helper.c"; exit 1; }
cp "$SRC/tests/container/inside.sh" "$fs/opt/corral-test/inside.sh"
printf 'root:x:0:0:root:/root:/bin/sh\nagent:x:1000:1000:agent:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$fs/etc/passwd"
printf 'root:x:0:\nagent:x:1000:\nnogroup:x:65534:\n' >"$fs/etc/group"
chmod 1777 "$fs/tmp"
chmod -R a+rX "$fs/opt" "$fs/usr"
tar -C "$fs" --numeric-owner --owner=0 --group=0 -cf - . |
	docker import --change 'ENV PATH=/usr/local/bin:/bin' - "$image" >/dev/null || { echo "FAIL: docker import"; exit 1; }

profile=$SRC/docs/deploy/seccomp-corral.json
fail=0
# mode, container user, extra docker options, what Unix sockets get (inside.sh's $UNIX).
cases=(
	"default|1000:1000|--cap-drop ALL|refused:seccomp-corral.json"
	"default|0:0||refused:SYS_PTRACE"
	"default|0:0|--cap-add SYS_PTRACE|mediated"
	"profile|1000:1000|--cap-drop ALL --read-only --tmpfs /tmp:exec,mode=1777|mediated"
	"profile|0:0||refused:SYS_PTRACE"
)
n=0
for c in "${cases[@]}"; do
	IFS='|' read -r mode user extra unix <<<"$c"
	sec=()
	[ "$mode" = profile ] && sec=(--security-opt "seccomp=$profile")
	check=0
	[ "$user" = 1000:1000 ] && check=1
	n=$((n + 1))
	echo "== seccomp $mode, container user $user $extra"
	# shellcheck disable=SC2086 # $extra is a word list
	docker run --rm --name "corral-ct-$$-$n" --network none --memory 512m --pids-limit 512 \
		--security-opt no-new-privileges "${sec[@]}" $extra --user "$user" -e MODE="$mode" -e UNIX="$unix" -e CHECK="$check" \
		"$image" /bin/sh /opt/corral-test/inside.sh || fail=1
done
# A profile without Landlock (an older runtime default that predates
# it): probe names the container's filter and the fix, and
# strict refuses to run without the filesystem promises.
n=$((n + 1))
echo "== seccomp-corral.json without landlock_*, container user 1000:1000"
grep -v '"landlock_' "$profile" >"$work/no-landlock.json"
out=$(docker run --rm --name "corral-ct-$$-$n" --network none --security-opt no-new-privileges \
	--security-opt "seccomp=$work/no-landlock.json" --user 1000:1000 "$image" /bin/sh -c \
	'mkdir /tmp/r && corral probe --root /tmp/r | grep fs.write; corral run --root /tmp/r -- true 2>&1; echo "rc=$?"' 2>&1)
case "$out" in
*dropped*fs.write*landlock_create_ruleset*seccomp-corral.json*"compat strict: promise fs.write"*rc=125*)
	echo "ok - no Landlock: fs.write dropped naming landlock_create_ruleset and the profile; strict refuses" ;;
*) echo "FAIL - no Landlock: $out"; fail=1 ;;
esac
exit $fail
