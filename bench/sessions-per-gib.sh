#!/usr/bin/env bash
# Memory of idle `corral session`s: how many warm sessions fit in a GiB.
# Starts K sessions (each its own root), runs one `true` in each (the
# template and its keeper are then up: a conversation that has run a
# command), leaves them idle, and sums over every process of each session
# (the session and its descendants) the PSS and RSS of
# /proc/PID/smaps_rollup. As root it also starts them in a memory cgroup of
# their own and reads its usage: PSS leaves out kernel memory (page tables,
# task and file structures) and the cgroup counts it.
#
#   bash bench/sessions-per-gib.sh [--build DIR] [--sessions K] [-- RUN OPTIONS...]
# Prints one line per figure; docs/deploy.md ("Scaling") quotes them.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${CORRAL_BUILDDIR:-$src/build} k=50
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift ;;
	--sessions) k=$2; shift ;;
	--) shift; break ;;
	*) echo "sessions-per-gib.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
C=$build/corral
[ -x "$C" ] || { echo "sessions-per-gib.sh: no corral at $C (--build DIR)" >&2; exit 1; }
work=$(mktemp -d /tmp/corral-bench-sess.XXXXXX)
chmod 755 "$work"
cg=
pids=()
cleanup() {
	local fd
	for fd in $(seq 10 $((9 + k))); do eval "exec $fd>&-" 2>/dev/null || true; done
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ -n "$cg" ]; then rmdir "$cg" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
if [ "$(id -u)" = 0 ]; then
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null && cg=/sys/fs/cgroup/corral-bench-sess.$$
	elif [ -d /sys/fs/cgroup/memory ]; then
		cg=/sys/fs/cgroup/memory/corral-bench-sess.$$
	fi
	[ -n "$cg" ] && { mkdir "$cg" 2>/dev/null || cg=; }
fi

for i in $(seq 1 "$k"); do
	r=$work/r$i
	mkdir "$r"
	[ "$(id -u)" = 0 ] && chown 65534:65534 "$r"
	mkfifo "$work/in$i"
	(
		[ -n "$cg" ] && echo "$BASHPID" >"$cg/cgroup.procs"
		exec "$C" session --root "$r" "$@" <"$work/in$i" >"$work/out$i" 2>"$work/err$i"
	) &
	pids+=($!)
	eval "exec $((9 + i))>\"\$work/in\$i\""
	echo '{"id":1,"tool":"bash","command":"true"}' >&$((9 + i))
done
# Every session answered its call: warm.
for i in $(seq 1 "$k"); do
	for _ in $(seq 1 200); do grep -q '"event":"result"' "$work/out$i" 2>/dev/null && break; sleep 0.05; done
	grep -q '"event":"result"' "$work/out$i" || { echo "session $i did not answer: $(cat "$work/err$i")" >&2; exit 1; }
done
sleep 1

# Every process of the sessions: their pids and all descendants (one pass
# over /proc/*/stat, then the closure in awk).
members() {
	for st in /proc/[0-9]*/stat; do read -r pid _ _ ppid _ 2>/dev/null <"$st" && echo "$pid $ppid"; done |
		awk -v roots="$*" 'BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) in_[r[i]] = 1 }
			{ parent[$1] = $2 }
			END { do { grew = 0; for (p in parent) if (!(p in in_) && (parent[p] in in_)) { in_[p] = 1; grew = 1 } } while (grew)
			      for (p in in_) print p }'
}
# Each address space once: a session's keepers run in its template's memory
# (kcmp KCMP_VM), and /proc/PID/smaps_rollup of each would count it again.
read -r pss rss nproc < <(members "${pids[@]}" | python3 -c '
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
seen, pss, rss, n = [], 0, 0, 0
for line in sys.stdin:
    p = int(line)
    n += 1
    if any(libc.syscall(312, p, q, 1, 0, 0) == 0 for q in seen):  # SYS_kcmp, KCMP_VM
        continue
    seen.append(p)
    try:
        for l in open("/proc/%d/smaps_rollup" % p):
            if l.startswith("Pss:"): pss += int(l.split()[1])
            if l.startswith("Rss:"): rss += int(l.split()[1])
    except OSError:
        pass
print(pss, rss, n)')
echo "sessions: $k warm, idle ($nproc processes: $((nproc / k)) per session)"
echo "pss_kib_per_session: $((pss / k))"
echo "rss_kib_per_session: $((rss / k))"
echo "sessions_per_gib_pss: $((1048576 * k / pss))"
if [ -n "$cg" ]; then
	if [ -f "$cg/memory.current" ]; then use=$(cat "$cg/memory.current"); else use=$(cat "$cg/memory.usage_in_bytes"); fi
	echo "cgroup_kib_per_session: $((use / 1024 / k)) (kernel memory and page cache charged to the sessions included)"
	echo "sessions_per_gib_cgroup: $((1073741824 * k / use))"
fi
