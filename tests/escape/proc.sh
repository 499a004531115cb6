#!/usr/bin/env bash
# Other processes, the terminal, and the syscall surfaces around the filter:
# no signals, ptrace or /proc/PID of a process outside the sandbox (one of
# the sandbox's own uid, so only the sandbox stands in the way); no TIOCSTI;
# no io_uring; no x32 or i386 syscalls. Techniques: shell, python, C.
. "$(dirname "$0")/lib.sh"
mkscratch
build_probe || finish

"${AS_ID[@]}" env CORRAL_ESC_SECRET=esc-secret-$$ sleep 1000 </dev/null >/dev/null 2>&1 &
victim=$!
cleanup_pids+=($victim)
disown
sleep 0.1
alive() { [ -d /proc/$victim ] && ! grep -q '^State:.*Z' /proc/$victim/status 2>/dev/null; }
alive || { bad "the outside sleeper did not start"; finish; }

# -- signals
expect_allowed "sh: signal our own child" crun -c 'sleep 100 & kill $!'
expect_denied "sh: kill -0 outside" crun -c "kill -0 $victim"
expect_denied "sh: kill -TERM outside" crun -c "kill -TERM $victim"
expect_allowed "python: signal our own child" crun -- "$PY" -c 'import os, signal, subprocess; p = subprocess.Popen(["sleep", "100"]); os.kill(p.pid, signal.SIGTERM); p.wait()'
expect_denied "python: os.kill outside" crun -- "$PY" -c "import os; os.kill($victim, 15)"
expect_denied "C: kill outside" crun -- $PROBE kill $victim 15
alive && ok "the outside process survived" || bad "the outside process was killed"

# -- ptrace and /proc/PID
expect_allowed "C: ptrace our own child" crun -- $PROBE ptrace-child
expect_denied "C: ptrace outside" crun -- $PROBE ptrace $victim
expect_allowed "python: ptrace our own child" crun -- "$PY" -c '
import ctypes, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
pid = os.fork()
if pid == 0:
    time.sleep(100); os._exit(0)
r = libc.ptrace(16, pid, 0, 0)
os.kill(pid, signal.SIGKILL)
assert r == 0, os.strerror(ctypes.get_errno())'
expect_denied "python: ptrace outside" crun -- "$PY" -c "
import ctypes, os
r = ctypes.CDLL(None, use_errno=True).ptrace(16, $victim, 0, 0)
assert r == 0, os.strerror(ctypes.get_errno())"
expect_allowed "sh: read /proc/self/environ" crun -c 'cat /proc/self/environ >/dev/null'
expect_denied "sh: read /proc/PID/environ outside" crun -c "cat /proc/$victim/environ"
expect_denied "sh: readlink /proc/PID/cwd outside" crun -c "readlink -e /proc/$victim/cwd"
expect_denied "python: /proc/PID/environ outside" crun -- "$PY" -c "print(open('/proc/$victim/environ').read())"
expect_denied "python: /proc/PID/mem outside" crun -- "$PY" -c "open('/proc/$victim/mem', 'rb')"
alive && ok "the outside process survived" || bad "the outside process died"

# -- terminal injection, on a pty the test holds (the run, a session leader, makes it its terminal)
"$PY" -c '
import os, pty, sys, time
m, s = pty.openpty()
print(os.ttyname(s), flush=True)
time.sleep(600)' </dev/null >"$S/pty" 2>/dev/null &
cleanup_pids+=($!)
disown
for _ in $(seq 100); do [ -s "$S/pty" ] && break; sleep 0.05; done
pts=$(head -1 "$S/pty")
if [ -z "$pts" ]; then
	echo "# no pty on this host: TIOCSTI skipped"
else
	if is_root; then chown 65534 "$pts"; fi
	# The redirection happens in a subshell: this shell may lead a session,
	# and opening a terminal there would make it this shell's own. Read and
	# write, as a terminal's stdio is (the rights by name follow the fd's).
	on_pts() { ("$@") <>"$pts"; }
	on_pts_ro() { ("$@") <"$pts"; }
	# Another terminal of the command's own uid (a user's other shell, when
	# corral runs unprivileged) cannot be opened: no reading its keystrokes,
	# no writing on its screen. Control: --rw /dev/pts grants it, so the
	# attack is real; and the terminal the command inherits can be reopened.
	expect_denied "python: open another terminal of the uid" crun -- "$PY" -c "import os; os.open('$pts', os.O_RDWR | os.O_NOCTTY)"
	expect_denied "sh: open another terminal of the uid" crun -c "exec 3<>'$pts'"
	expect_allowed "python: the same terminal with --rw /dev/pts" crun --rw /dev/pts -- "$PY" -c "import os; os.open('$pts', os.O_RDWR | os.O_NOCTTY)"
	expect_allowed "python: reopen the inherited terminal by name" on_pts crun -- "$PY" -c "import os; os.open(os.ttyname(0), os.O_RDWR | os.O_NOCTTY)"
	# Given read-only, it reopens read-only only: no writing on that screen by name.
	expect_denied "python: a terminal given read-only, reopened for writing" on_pts_ro crun -- "$PY" -c "import os; os.open(os.ttyname(0), os.O_WRONLY | os.O_NOCTTY)"
	expect_allowed "python: a terminal given read-only, reopened for reading" on_pts_ro crun -- "$PY" -c "import os; os.open(os.ttyname(0), os.O_RDONLY | os.O_NOCTTY)"
	# Injection into the terminal the command inherits (its stdin; opening
	# it by name makes it the run's controlling terminal).
	expect_allowed "C: TCGETS on the pty" on_pts crun -- $PROBE tiocsti "$pts" control
	expect_denied "C: TIOCSTI" on_pts crun -- $PROBE tiocsti "$pts"
	expect_allowed "python: tcgetattr on the pty" on_pts crun -- "$PY" -c "import os, termios; termios.tcgetattr(os.open('$pts', os.O_RDWR))"
	expect_denied "python: TIOCSTI" on_pts crun -- "$PY" -c "
import fcntl, os, termios
fcntl.ioctl(os.open('$pts', os.O_RDWR), termios.TIOCSTI, b'x')"
	expect_denied "python: TIOCSTI with high bits set" on_pts crun -- "$PY" -c "
import ctypes, os
fd = os.open('$pts', os.O_RDWR)
r = ctypes.CDLL(None, use_errno=True).syscall(16, fd, ctypes.c_ulong(0x5412 | (1 << 32)), ctypes.c_char_p(b'x'))
assert r == 0, os.strerror(ctypes.get_errno())"
fi

# -- System V IPC and POSIX message queues: no filesystem path, so Landlock
# does not see them; a process of the uid outside made them.
sysv=$CORRAL_SRCDIR/tests/escape/sysv.py
cp "$sysv" "$R/sysv.py"
secret="sysv-secret-$$"
if shmid=$(as_id "$PY" "$sysv" host-shm "$secret"); then
	as_id "$PY" "$sysv" find-shm "$secret" >/dev/null && ok "control: outside, the uid reads the segment without its key" ||
		bad "control: find-shm outside failed"
	expect_denied "python: find and attach an outside System V segment" crun -- "$PY" sysv.py find-shm "$secret"
	expect_denied "python: shmget(IPC_PRIVATE) (would outlive the run)" crun -- "$PY" sysv.py private-shm
	ipcrm -m "$shmid" 2>/dev/null || as_id ipcrm -m "$shmid"
else
	bad "control: could not make a System V segment outside"
fi
q=/corral-esc-q-$$
if as_id "$PY" "$sysv" host-mq "$q"; then
	expect_denied "python: mq_unlink an outside POSIX queue" crun -- "$PY" sysv.py unlink-mq "$q"
	as_id "$PY" "$sysv" unlink-mq "$q" && ok "control: the queue was still there, and the uid removes it outside" ||
		bad "control: the outside queue was gone"
else
	bad "control: could not make a POSIX queue outside"
fi
expect_allowed "python: shared memory through a file in the root (mmap MAP_SHARED)" \
	crun -- "$PY" -c 'import mmap; f = open("m", "w+b"); f.truncate(4096); m = mmap.mmap(f.fileno(), 4096); m[0:2] = b"ok"'

# -- io_uring
expect_denied "C: io_uring_setup" crun -- $PROBE io_uring
expect_allowed "python: a native syscall through ctypes" crun -- "$PY" -c 'import ctypes; assert ctypes.CDLL(None).syscall(39) > 0'
expect_denied "python: io_uring_setup" crun -- "$PY" -c "
import ctypes, os
r = ctypes.CDLL(None, use_errno=True).syscall(425, 4, ctypes.create_string_buffer(120))
assert r >= 0, os.strerror(ctypes.get_errno())"

# -- foreign syscall ABIs (x86_64 only): killed by SIGSYS or refused
if [ "$(uname -m)" = x86_64 ]; then
	expect_denied "C: x32 getpid" crun -- $PROBE x32
	expect_denied "C: int 0x80 getpid" crun -- $PROBE i386
	expect_denied "python: x32 getpid through ctypes" crun -- "$PY" -c 'import ctypes; assert ctypes.CDLL(None).syscall(0x40000000 | 39) > 0'
	crun -- $PROBE x32 >/dev/null 2>&1
	rc=$?
	[ $rc -eq 159 ] || [ $rc -eq 1 ] && ok "x32: SIGSYS (159) or refused ($rc)" || bad "x32 ended with $rc"
fi
finish
