#!/usr/bin/env bash
# Each limit, by two techniques, each paired with a run under the limit.
. "$(dirname "$0")/lib.sh"
mkscratch
build_probe || finish

# -- memory: the run's memory cgroup (as root) bounds what is used, RLIMIT_AS
# (no cgroup) the address space; touching every page is denied either way.
expect_allowed "python: 16M under --memory 256M" crun --memory 256M -- "$PY" -c 'b = bytearray(16 << 20)'
DENY=MEMORY expect_denied "python: 512M under --memory 256M" crun --memory 256M -- "$PY" -c 'b = bytearray(512 << 20)'
expect_allowed "C: map 16M under --memory 256M" crun --memory 256M -- $PROBE mmap $((16 << 20))
expect_allowed "C: map and touch 16M under --memory 256M" crun --memory 256M -- $PROBE mmap-touch $((16 << 20))
DENY=MEMORY expect_denied "C: map and touch 512M under --memory 256M" crun --memory 256M -- $PROBE mmap-touch $((512 << 20))

# -- CPU: killed by SIGXCPU (128+24) or SIGKILL (128+9)
for t in sh py; do
	if [ $t = sh ]; then cmd=(-c 'while :; do :; done'); else cmd=(-- "$PY" -c 'while True: pass'); fi
	crun --cpu 1 --timeout 20 "${cmd[@]}" </dev/null
	rc=$?
	[ $rc -eq 152 ] || [ $rc -eq 137 ] && ok "$t: busy loop stopped by --cpu 1 ($rc)" || bad "$t: busy loop under --cpu 1 ended $rc"
done
expect_allowed "sh: light work under --cpu 1" crun --cpu 1 -c 'echo ok'

# -- processes. Unprivileged, RLIMIT_NPROC counts the uid's tasks system-wide
# and corral sets it relative to the count at the start: other processes of
# the uid (parallel tests as nobody) move the bound, so the margins are wide.
expect_allowed "python: 4 processes under --procs 300" crun --procs 300 -- "$PY" -c '
import os
for _ in range(4):
    if os.fork() == 0: os._exit(0)
    os.wait()'
DENY="Resource temporarily unavailable" expect_denied "python: 800 live processes under --procs 300" crun --procs 300 -- "$PY" -c '
import os, time
for _ in range(800):
    if os.fork() == 0:
        time.sleep(30); os._exit(0)'
expect_allowed "C: 4 processes under --procs 300" crun --procs 300 -- $PROBE nproc 4
DENY=EAGAIN expect_denied "C: 800 processes under --procs 300" crun --procs 300 -- $PROBE nproc 800

# -- file size
expect_allowed "sh: 512K under --file-size 1M" crun --file-size 1M -c 'head -c 524288 /dev/zero > f'
DENY="File size limit exceeded" expect_denied "sh: 2M under --file-size 1M" crun --file-size 1M -c 'head -c 2097152 /dev/zero > f'
size=$(stat -c %s "$R/f")
[ "$size" -le 1048576 ] && ok "sh: the file stopped at $size bytes" || bad "sh: file grew to $size"
DENY="File too large" expect_denied "python: 2M under --file-size 1M" crun --file-size 1M -- "$PY" -c 'open("g", "wb").write(bytes(2 << 20))'
DENY=EFBIG expect_denied "C: a byte at 2M under --file-size 1M" crun --file-size 1M -- $PROBE fsize $((2 << 20))
expect_allowed "C: a byte at 512K under --file-size 1M" crun --file-size 1M -- $PROBE fsize $((512 << 10))

# -- open files
expect_allowed "python: 16 files under --open-files 32" crun --open-files 32 -- "$PY" -c 'fs = [open("/dev/null") for _ in range(16)]'
DENY="Too many open files" expect_denied "python: 64 files under --open-files 32" crun --open-files 32 -- "$PY" -c 'fs = [open("/dev/null") for _ in range(64)]'
expect_allowed "C: 16 files under --open-files 32" crun --open-files 32 -- $PROBE nofile 16
DENY=EMFILE expect_denied "C: 64 files under --open-files 32" crun --open-files 32 -- $PROBE nofile 64

# -- captured output
for t in sh py; do
	if [ $t = sh ]; then cmd=(-c 'head -c 100000 /dev/zero | tr "\0" x; head -c 100000 /dev/zero | tr "\0" y >&2'); else
		cmd=(-- "$PY" -c 'import sys; sys.stdout.write("x" * 100000); sys.stderr.write("y" * 100000)'); fi
	crun --json --max-output 1K "${cmd[@]}" | "$PY" -c '
import json, sys
r = json.load(sys.stdin)
assert r["exit_status"] == 0, r
assert r["stdout_truncated"] and r["stderr_truncated"], r
# head and tail, 512 bytes each, and the one omission line, which does not count against the cap
assert len(r["stdout"].encode()) <= 1024 + 64 and len(r["stderr"].encode()) <= 1024 + 64, (len(r["stdout"]), len(r["stderr"]))
assert r["stdout"].startswith("x" * 512) and r["stdout"].endswith("x" * 512) and "omitted" in r["stdout"], r["stdout"][:600]
assert r["stdout_bytes"] == 100000 and r["stderr_bytes"] == 100000, r
' && ok "$t: 100000 bytes per stream kept to --max-output 1K (head + tail)" || bad "$t: output cap"
done
crun --json --max-output 1K -c 'echo small' | "$PY" -c '
import json, sys
r = json.load(sys.stdin)
assert r["stdout"] == "small\n" and not r["stdout_truncated"], r' && ok "small output kept whole (control)" || bad "small output"

# -- the deadline itself
t0=$(date +%s%N)
crun --timeout 0.5 -c 'sleep 10' </dev/null
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ $rc -eq 124 ] && [ $ms -lt 2500 ] && ok "--timeout 0.5: 124 after ${ms} ms" || bad "--timeout 0.5: exit $rc after ${ms} ms"
finish
