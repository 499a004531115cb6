#!/usr/bin/env bash
# Resource limits, each against a control that stays within it: memory
# (RLIMIT_AS), CPU (RLIMIT_CPU), processes (RLIMIT_NPROC / pids cgroup),
# file size, open files, the captured-output cap (read and discarded, the
# supervisor's memory stays small).
. "$(dirname "$0")/lib.sh"
R=$(mkroot)
cd "$R"
tag=$$

# Memory.
"$C" run --memory 256M -- $PY -c 'b = bytearray(64 << 20)'; expect_eq "memory: 64M within 256M" 0 $?
err=$("$C" run --memory 256M -- $PY -c 'b = bytearray(512 << 20)' 2>&1); rc=$?
# A memory cgroup (as root) ends it with the OOM killer (137); the
# address-space rlimit (no cgroup) makes the allocation fail.
{ [ $rc -eq 137 ] || { [ $rc -ne 0 ] && [[ "$err" == *MemoryError* ]]; }; } && ok "memory: 512M over 256M: OOM kill or MemoryError ($rc)" ||
	bad "memory: 512M under a 256M limit: exit $rc, [$(tail -n 1 <<<"$err")]"

# CPU: a busy loop is stopped by SIGXCPU (soft) or SIGKILL (hard).
"$C" run --cpu 1 -- $PY -c 'sum(range(1000))'; expect_eq "cpu: short work within 1s" 0 $?
t0=$(date +%s%N)
"$C" run --cpu 1 --timeout 20 -- sh -c 'while :; do :; done'; rc=$?
t1=$(date +%s%N)
case $rc in 152|137) ok "cpu: busy loop killed by SIGXCPU/SIGKILL ($rc)";; *) bad "cpu: busy loop exit $rc";; esac
ms=$(( (t1 - t0) / 1000000 ))
[ $ms -lt 8000 ] && ok "cpu: limit hit before the deadline (${ms} ms)" || bad "cpu: took ${ms} ms"

# Processes: a fork bomb is bounded; corral returns at the deadline; nothing is left.
out=$("$C" run --procs 40 -- sh -c 'for i in $(seq 10); do sleep 0.2 & done; wait; echo fine' 2>&1)
expect_eq "procs: 10 children within 40" "fine" "$out"
# Orphans that exit are reaped during the run: re-parented zombies must not
# pile up against the pids cgroup / RLIMIT_NPROC (300 orphans under 100).
out=$("$C" run --procs 100 --timeout 60 -- bash -c 'for i in $(seq 300); do (true &); done; echo fine' 2>&1)
expect_eq "procs: 300 short-lived orphans under 100, no EAGAIN" "fine" "$out"
forker='import os, sys, time
n = 0
for i in range(200):
    try:
        if os.fork() == 0:
            time.sleep(3)
            os._exit(0)
        n += 1
    except OSError:
        pass
print(n)'
out=$("$C" run --procs 40 --timeout 10 -- $PY -c "$forker" 2>/dev/null)
# As root a pids cgroup makes it exact. Unprivileged, RLIMIT_NPROC counts
# every task of the uid system-wide, set relative to the count when the run
# starts: tasks of the same uid ending elsewhere meanwhile (other suites run
# as nobody too) free slots, so allow that drift.
if is_root; then max=39; else max=55; fi
[ -n "$out" ] && [ "$out" -ge 5 ] && [ "$out" -le $max ] && ok "procs: $out of 200 forks succeeded under 40" || bad "procs: [$out] forks under a limit of 40"
t0=$(date +%s%N)
rm -f "$R/bomb-started"
"$C" run --procs 50 --timeout 2 -- sh -c "b() { b | b & }; b; : > bomb-started; exec sleep 71.$tag" >/dev/null 2>&1; rc=$?
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
expect_eq "fork bomb: stopped at the deadline" 124 $rc
[ $ms -lt 6000 ] && ok "fork bomb: returned in ${ms} ms" || bad "fork bomb: took ${ms} ms"
[ -e "$R/bomb-started" ] && ok "fork bomb: control: its main process reached its sleep" || bad "fork bomb: control: the main process never got to its sleep"
# corral has returned: what it killed can only be dying (polled up to 3 s).
for _ in $(seq 300); do pgrep -f "sleep 71.$tag" >/dev/null || break; sleep 0.01; done
pgrep -f "sleep 71.$tag" >/dev/null && { bad "procs: sleepers survived"; pkill -KILL -f "sleep 71.$tag"; } || ok "procs: nothing left"

# File size.
"$C" run --file-size 1M -- sh -c 'head -c 512K /dev/zero > small'; expect_eq "file-size: 512K within 1M" 0 $?
# Above the kernel's PID_MAX_LIMIT a pids cgroup takes "max" (the same
# bound): the run is not refused as a setup error.
"$C" run --procs 4194305 -- true; expect_eq "procs above PID_MAX_LIMIT: runs" 0 $?
# The largest sizes are numbers, not "unlimited" (2^64-1 is RLIM_INFINITY),
# and never read as negative by the kernel's file-offset check (from 2^63
# on, RLIMIT_FSIZE killed the first write to a file with SIGXFSZ).
# Memory: a number too where RLIMIT_AS is the mechanism; with a memory
# cgroup per run (as root) no address-space limit is set at all.
as_limit='[0-9]+'
"$C" probe --json | $PY -c 'import json,sys; sys.exit(0 if any(p["id"] == "limits.memory" and "memory cgroup per run" in p["why"] for p in json.load(sys.stdin)["promises"]) else 1)' && as_limit=unlimited
for v in 18446744073709551615 9223372036854775808; do
	out=$("$C" run --file-size $v --memory $v -- sh -c 'echo x > huge && ulimit -f && ulimit -v' 2>&1); rc=$?
	expect_match "file-size/memory $v: a write works, limits are numbers" "^0 [0-9]+ $as_limit$" "$rc $(echo $out)"
done
"$C" run --file-size 1M -- sh -c 'head -c 2M /dev/zero > big' 2>/dev/null; rc=$?
# 153: SIGXFSZ (128 + 25), the signal RLIMIT_FSIZE sends.
[ $rc -eq 153 ] && ok "file-size: 2M over 1M killed by SIGXFSZ ($rc)" || bad "file-size: 2M under 1M: exit $rc, not SIGXFSZ (153)"
sz=$(stat -c %s "$R/big" 2>/dev/null || echo 0)
[ "$sz" -le 1048576 ] && ok "file-size: file stopped at $sz" || bad "file-size: file is $sz"

# Open files.
"$C" run --open-files 64 -- $PY -c 'fs = [open("/dev/null") for _ in range(20)]'; expect_eq "open-files: 20 within 64" 0 $?
err=$("$C" run --open-files 64 -- $PY -c 'fs = [open("/dev/null") for _ in range(100)]' 2>&1); rc=$?
[ $rc -ne 0 ] && [[ "$err" == *"Too many open files"* ]] && ok "open-files: 100 over 64 fails with EMFILE" ||
	bad "open-files: 100 files under 64: exit $rc, [$(tail -n 1 <<<"$err")]"
# A small limit is the command's own: the mediation's hand-over fd sits at
# that number, and must not land on an fd corral's child still needs (its
# stdout pipe, the root, the ruleset, the error pipe), whatever the limit.
bad_n=""
for n in $(seq 4 64); do
	out=$("$C" run --open-files $n -- echo hi 2>&1) && [ "$out" = hi ] || bad_n="$bad_n $n"
	out=$("$C" run --json --open-files $n -- echo hi) && [ "$(printf '%s' "$out" | json '["stdout"]')" = "'hi\n'" ] ||
		bad_n="$bad_n json:$n"
done
expect_eq "open-files 4..64: the command runs and its output arrives" "" "$bad_n"
expect_eq "open-files 5: the command sees that limit" "5" "$("$C" run --open-files 5 -- sh -c 'ulimit -n')"
# Below 3 the hand-over number would be a stdio fd: the command's stdout
# and stderr must stay what corral gave it (a static busybox: ld.so itself
# needs an fd more).
if [ -x /bin/busybox ]; then
	for n in 1 2 3; do
		for fd in 1 2; do
			out=$("$C" run --open-files $n -- /bin/busybox readlink /proc/self/fd/$fd 2>&1)
			expect_match "open-files $n: fd $fd is still corral's pipe" "^pipe:\[[0-9]+\]$" "$out"
		done
	done
elif [ "${CORRAL_MUST_WORK:-}" = 1 ]; then
	bad "no static busybox (busybox-static, in scripts/install-deps.sh): open-files below 3 not checked"
else
	echo "# no static busybox: open-files below 3 not checked"
fi

# Output cap: a longer stream keeps its head and its tail (half the cap
# each) around one marker line; *_bytes count everything.
out=$("$C" run --json --max-output 1K -- sh -c 'echo small; echo e >&2')
expect_eq "cap: small output not truncated" "'small\n' False 'e\n' False" \
	"$(printf '%s' "$out" | $PY -c 'import json,sys; v=json.load(sys.stdin); print(repr(v["stdout"]), v["stdout_truncated"], repr(v["stderr"]), v["stderr_truncated"])')"
out=$("$C" run --json --max-output 1K -- sh -c 'head -c 1M /dev/zero | tr "\0" a; head -c 3000 /dev/zero | tr "\0" b >&2; echo end >&2')
expect_eq "cap: 1M stdout and 3004 bytes of stderr clipped to head 512 + tail 512" "True True True 1048576 True True 3004 0" \
	"$(printf '%s' "$out" | $PY -c '
import json,sys; v=json.load(sys.stdin); o, e = v["stdout"], v["stderr"]
print(o == "a" * 512 + "\n[\u2026 1047552 bytes omitted \u2026]\n" + "a" * 512, v["stdout_truncated"],
      o.count("a") == 1024, v["stdout_bytes"],
      e == "b" * 512 + "\n[\u2026 1980 bytes omitted \u2026]\n" + "b" * 508 + "end\n", v["stderr_truncated"], v["stderr_bytes"],
      v["exit_status"])')"
# UTF-8: invalid bytes become U+FFFD; a character cut by the cap is left out whole, not split.
out=$("$C" run --json --max-output 4 -- sh -c 'printf "a\351b"; printf "abc\342\202\254" >&2')
expect_eq "utf-8: invalid byte -> U+FFFD, cut char left out" "'a\\ufffdb' 'ab\\n[\\u2026 4 bytes omitted \\u2026]\\n' True" \
	"$(printf '%s' "$out" | $PY -c 'import json,sys; v=json.load(sys.stdin); print(ascii(v["stdout"]), ascii(v["stderr"]), v["stderr_truncated"])')"

# One U+FFFD per maximal subpart, as Python decodes (Unicode's practice):
# a cut sequence in the middle or at the end of the output, surrogates,
# overlongs, stray bytes (control: valid multi-byte text stays as it is).
printf 'a\342\202b|\360\237\230|\355\240\200|\300\257|\377\200|\342\202\254\360\237\230\200|\360\237' >"$R/bad-utf8"
got=$("$C" run --json -- cat bad-utf8 | $PY -c 'import json,sys; print(ascii(json.load(sys.stdin)["stdout"]))')
want=$($PY -c 'import sys; print(ascii(open(sys.argv[1], "rb").read().decode("utf-8", "replace")))' "$R/bad-utf8")
expect_eq "utf-8: U+FFFD per maximal subpart, as Python" "$want" "$got"

# 1 GB through a captured stream: the supervisor's peak RSS stays small
# (the cap is 1M: a 512K head and a 512K ring for the tail).
PEAK_RSS=${1:?peak-rss helper}
read -r kb st < <("$PEAK_RSS" "$C" run --json --timeout 120 -- sh -c 'head -c 1G /dev/zero; echo done >&2')
expect_eq "1G captured: corral exits 0" 0 "$st"
[ "${kb:-99999}" -le 8192 ] && ok "1G captured: corral peak RSS ${kb} KB <= 8 MB" || bad "1G captured: peak RSS ${kb} KB"
out=$("$C" run --json --timeout 120 -- sh -c 'head -c 1G /dev/zero; echo done >&2')
expect_eq "1G captured: head and tail of the 1M cap, every byte counted, stderr intact" "1048576 True 1073741824 'done\n'" \
	"$(printf '%s' "$out" | $PY -c 'import json,sys; v=json.load(sys.stdin); print(v["stdout"].count("\0"), v["stdout_truncated"], v["stdout_bytes"], repr(v["stderr"]))')"
finish
