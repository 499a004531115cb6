#!/usr/bin/env bash
# meson's recipe for the musl-linked, static `corral` (meson.build, "The
# command-line front end"): meson drives one C compiler per build, so the
# second one, musl-gcc, is driven from here.
#
#   musl-cli.sh OUTPUT DEPFILE WORKDIR CC [CFLAG...] -- [LDFLAG...] -- INPUT...
#
# Compiles every .c INPUT (the other inputs are generated headers, listed
# so that meson makes them first) into WORKDIR, as many at once as there
# are CPUs, links OUTPUT, and writes one make-style DEPFILE naming OUTPUT
# and every file the compiles read, so ninja rebuilds when any changes.
set -euo pipefail
out=$1 depfile=$2 work=$3 cc=$4
shift 4
cflags=() ldflags=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do cflags+=("$1"); shift; done
[ $# -gt 0 ] && shift
while [ $# -gt 0 ] && [ "$1" != -- ]; do ldflags+=("$1"); shift; done
[ $# -gt 0 ] && shift

mkdir -p "$work"
rm -f "$work"/*.o "$work"/*.d
srcs=() objs=()
for f in "$@"; do
	case $f in
	*.c)
		objs+=("$work/${#srcs[@]}-$(basename "$f" .c).o")
		srcs+=("$f")
		;;
	esac
done
[ ${#srcs[@]} -gt 0 ] || { echo "musl-cli.sh: no C sources" >&2; exit 1; }

jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
pids=() failed=0
for i in "${!srcs[@]}"; do
	if [ ${#pids[@]} -ge "$jobs" ]; then
		wait "${pids[0]}" || failed=1
		pids=("${pids[@]:1}")
	fi
	"$cc" "${cflags[@]}" -MD -MF "${objs[$i]}.d" -c "${srcs[$i]}" -o "${objs[$i]}" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || failed=1; done
[ "$failed" = 0 ] || exit 1

"$cc" "${cflags[@]}" "${objs[@]}" "${ldflags[@]}" -o "$out.tmp"
mv -f "$out.tmp" "$out"

# One depfile for the one output: every prerequisite of every object.
# gcc writes a space in a path as "\ ": kept through the split as \001.
{
	printf '%s:' "$(printf '%s' "$out" | sed 's/ /\\ /g')"
	for o in "${objs[@]}"; do
		sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$o.d" | sed -e 's/^[^:]*[^\\]://' -e 's/\\ /\x01/g'
	done | tr -s ' \t\n' '\n' | grep -v '^$' | sort -u | sed -e 's/\x01/\\ /g' -e 's/^/ /' | tr -d '\n'
	printf '\n'
} > "$depfile"
