#!/usr/bin/env bash
# Static musl builds of the two libraries the corral command line links
# (libseccomp, jansson), for meson's musl-linked `corral` (meson.build,
# "The command-line front end"). A static glibc starts up in about 1 ms on
# the paravirtualized hosts corral is measured on (cpuid traps to the
# hypervisor, ~7 us each, and page faults), musl in about 0.2 ms: that is
# most of corral's cost over a posix_spawn (docs/benchmarks.md).
#
#   scripts/build-musl-deps.sh [PREFIX]     (default /usr/local/musl)
#
# Needs musl-tools, gperf, cmake, curl (scripts/install-deps.sh installs
# them and calls this). Sources: Debian 12's own source packages, fetched
# from Debian's archive and checked against the SHA-256 sums below, with
# Debian's patches applied — the same code as the libseccomp-dev and
# libjansson-dev the library links. The archive keeps only the current
# revision of a package: when a point release replaces one of these, the
# download fails (install-deps.sh then warns and corral links glibc) until
# the versions and sums below are updated from the new .dsc.
# Idempotent: does nothing when PREFIX
# already holds these versions. Also links the kernel's UAPI headers
# (linux/, asm/, asm-generic/) into PREFIX/include, which musl-gcc's
# -nostdinc would otherwise hide.
set -euo pipefail
prefix=${1:-/usr/local/musl}
# sudo only where the prefix (or the nearest existing parent) is not ours to write.
SUDO=
probe=$prefix
while [ ! -e "$probe" ]; do probe=$(dirname "$probe"); done
[ -w "$probe" ] || SUDO=sudo
archive=${DEBIAN_ARCHIVE:-http://deb.debian.org/debian}
stamp="$prefix/.corral-deps"
want="libseccomp 2.5.4-1+deb12u1, jansson 2.14-2"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
   [ -f "$prefix/lib/libseccomp.a" ] && [ -f "$prefix/lib/libjansson.a" ]; then
	exit 0
fi
command -v musl-gcc >/dev/null || { echo "build-musl-deps: musl-gcc not found (apt-get install musl-tools)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fetch() { # path-in-pool sha256
	local f=$work/${1##*/}
	curl -fsSL --retry 3 -o "$f" "$archive/pool/main/$1"
	echo "$2  $f" | sha256sum -c --quiet - || { echo "build-musl-deps: checksum mismatch for $1" >&2; exit 1; }
}
unpack() { # orig debian dir
	mkdir -p "$work/$3"
	tar -xf "$work/${1##*/}" -C "$work/$3" --strip-components=1
	tar -xf "$work/${2##*/}" -C "$work/$3"
	local p
	if [ -f "$work/$3/debian/patches/series" ]; then
		while read -r p; do
			case $p in ''|'#'*) continue ;; esac
			patch -s -d "$work/$3" -p1 < "$work/$3/debian/patches/$p"
		done < "$work/$3/debian/patches/series"
	fi
}

fetch libs/libseccomp/libseccomp_2.5.4.orig.tar.gz d82902400405cf0068574ef3dc1fe5f5926207543ba1ae6f8e7a1576351dcbdb
fetch libs/libseccomp/libseccomp_2.5.4-1+deb12u1.debian.tar.xz 665fc6ad1b9887207b0af1a293a2d7975e2df503a2618d1808b970081f9672f6
fetch j/jansson/jansson_2.14.orig.tar.gz c739578bf6b764aa0752db9a2fdadcfe921c78f1228c7ec0bb47fa804c55d17b
fetch j/jansson/jansson_2.14-2.debian.tar.xz e89fe4fd8221f6934ddb50f2e7f8404311928d0e23e49a5599f3d3d14ee8cb88
unpack libs/libseccomp/libseccomp_2.5.4.orig.tar.gz libs/libseccomp/libseccomp_2.5.4-1+deb12u1.debian.tar.xz seccomp
unpack j/jansson/jansson_2.14.orig.tar.gz j/jansson/jansson_2.14-2.debian.tar.xz jansson

# Kernel UAPI headers, for musl-gcc (which searches only musl's own).
kh=$work/kh
mkdir -p "$kh"
ln -s /usr/include/linux "$kh/linux"
ln -s /usr/include/asm-generic "$kh/asm-generic"
ln -s "/usr/include/$(gcc -print-multiarch)/asm" "$kh/asm"
export CC=musl-gcc CFLAGS="-O2 -g -isystem $kh"
stage=$work/stage
jobs=$(nproc)

(cd "$work/seccomp" &&
 ./configure -q --prefix="$prefix" --disable-shared --enable-static --disable-python &&
 make -s -j"$jobs" -C src &&
 make -s -C src install DESTDIR="$stage" && make -s -C include install DESTDIR="$stage") >"$work/seccomp.log" 2>&1 ||
	{ tail -30 "$work/seccomp.log" >&2; echo "build-musl-deps: libseccomp failed" >&2; exit 1; }
(mkdir -p "$work/jansson/b" && cd "$work/jansson/b" &&
 cmake .. -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DJANSSON_BUILD_DOCS=OFF -DJANSSON_EXAMPLES=OFF -DJANSSON_WITHOUT_TESTS=ON \
	-DJANSSON_BUILD_SHARED_LIBS=OFF &&
 make -s -j"$jobs" && make -s install DESTDIR="$stage") >"$work/jansson.log" 2>&1 ||
	{ tail -30 "$work/jansson.log" >&2; echo "build-musl-deps: jansson failed" >&2; exit 1; }

# The stamp goes first and last: meson takes the prefix only with it, so a
# build configured meanwhile links glibc; each file lands by rename, so a
# link running meanwhile never reads half an archive.
$SUDO rm -f "$stamp"
$SUDO mkdir -p "$prefix/lib" "$prefix/include"
for f in "$stage$prefix"/include/*.h "$stage$prefix"/lib/libseccomp.a "$stage$prefix"/lib/libjansson.a; do
	rel=${f#"$stage$prefix"/}
	$SUDO cp "$f" "$prefix/$rel.new"
	$SUDO mv -f "$prefix/$rel.new" "$prefix/$rel"
done
for d in linux asm-generic asm; do
	$SUDO ln -sfn "$(readlink "$kh/$d")" "$prefix/include/$d"
done
echo "$want" | $SUDO tee "$stamp" >/dev/null
echo "build-musl-deps: $want in $prefix"
