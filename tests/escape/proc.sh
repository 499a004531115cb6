#!/usr/bin/env bash
# Other processes, the terminal, and the syscall surfaces around the filter:
# no signals, ptrace or /proc/PID of a process outside the sandbox (one of
# the sandbox's own uid, so only the sandbox stands in the way); no TIOCSTI;
# no io_uring; no x32 or i386 syscalls. Techniques: shell, python, C.
. "$(dirname "$0")/lib.sh"
mkscratch
build_probe || finish

# The victim lets any process of its uid trace it (PR_SET_PTRACER_ANY, for
# Yama's ptrace_scope 1), so the ptrace control outside can succeed; it
# writes a pidfile once it has done so.
"${AS_ID[@]}" env CORRAL_ESC_SECRET=esc-secret-$$ "$PY" -c '
import ctypes, os, sys, time
ctypes.CDLL(None).prctl(0x59616d61, ctypes.c_ulong(-1), 0, 0, 0)
open(sys.argv[1], "w").write(str(os.getpid()))
time.sleep(1000)' "$O/victim.pid" </dev/null >/dev/null 2>&1 &
victim=$!
cleanup_pids+=($victim)
disown
for _ in $(seq 200); do [ -s "$O/victim.pid" ] && break; sleep 0.05; done
alive() { [ -d /proc/$victim ] && ! grep -q '^State:.*Z' /proc/$victim/status 2>/dev/null; }
[ "$(cat "$O/victim.pid" 2>/dev/null)" = "$victim" ] && alive || { bad "the outside victim did not start"; finish; }

# -- signals
expect_allowed "sh: signal our own child" crun -c 'sleep 100 & kill $!'
as_id kill -0 $victim && ok "control: outside, the uid signals the victim (kill -0)" || bad "control: kill -0 outside failed"
expect_denied "sh: kill -0 outside" crun -c "kill -0 $victim"
expect_denied "sh: kill -TERM outside" crun -c "kill -TERM $victim"
expect_allowed "python: signal our own child" crun -- "$PY" -c 'import os, signal, subprocess; p = subprocess.Popen(["sleep", "100"]); os.kill(p.pid, signal.SIGTERM); p.wait()'
expect_denied "python: os.kill outside" crun -- "$PY" -c "import os; os.kill($victim, 15)"
expect_denied "C: kill outside" crun -- $PROBE kill $victim 15
alive && ok "the outside process survived" || bad "the outside process was killed"

# -- ptrace and /proc/PID
expect_allowed "C: ptrace our own child" crun -- $PROBE ptrace-child
# Control: outside, the same uid attaches to the victim (then detaches);
# Yama's ptrace_scope 2 and 3 forbid that to any non-root process.
if [ "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)" -le 1 ]; then
	as_id "$R/probe" ptrace $victim >/dev/null && ok "control: outside, the uid ptraces the victim" ||
		bad "control: ptrace of the victim outside failed: $(as_id "$R/probe" ptrace $victim 2>&1)"
else
	echo "# kernel.yama.ptrace_scope >= 2: no ptrace outside either, the denial below proves little"
fi
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
expect_denied "sh: list /proc/PID/cwd outside" crun -c "ls /proc/$victim/cwd/"
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
	if [ "${CORRAL_MUST_WORK:-}" = 1 ]; then bad "no pty on this host: the terminal cases did not run"; else echo "# no pty on this host: TIOCSTI skipped"; fi
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
	# Control: outside, the uid injects into that terminal when the kernel
	# allows TIOCSTI at all (dev.tty.legacy_tiocsti, Linux 6.2); inside, the
	# filter's EPERM (a kernel without legacy TIOCSTI answers EIO).
	if [ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null || echo 1)" = 1 ]; then
		out=$(on_pts as_id setsid "$R/probe" tiocsti "$pts" 2>&1)
		[ "$out" = "ok tiocsti" ] && ok "control: outside, TIOCSTI on the pty works" || bad "control: TIOCSTI outside: $out"
	fi
	DENY='EPERM|Operation not permitted' expect_denied "C: TIOCSTI" on_pts crun -- $PROBE tiocsti "$pts"
	expect_allowed "python: tcgetattr on the pty" on_pts crun -- "$PY" -c "import os, termios; termios.tcgetattr(os.open('$pts', os.O_RDWR))"
	DENY='Operation not permitted' expect_denied "python: TIOCSTI" on_pts crun -- "$PY" -c "
import fcntl, os, termios
fcntl.ioctl(os.open('$pts', os.O_RDWR), termios.TIOCSTI, b'x')"
	DENY='Operation not permitted' expect_denied "python: TIOCSTI with high bits set" on_pts crun -- "$PY" -c "
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

# -- io_uring: outside it works where the kernel allows it
# (kernel.io_uring_disabled 0); inside, the filter's ENOSYS (a kernel that
# disables io_uring answers EPERM).
out=$(as_id "$R/probe" io_uring 2>&1)
if [ "$out" = "ok io_uring" ]; then
	ok "control: outside, io_uring_setup works"
elif [ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" = 0 ]; then
	bad "control: io_uring_setup outside: $out (kernel.io_uring_disabled is 0)"
else
	echo "# io_uring disabled on this host (kernel.io_uring_disabled): outside [$out]; ENOSYS inside is the filter's"
fi
DENY='ENOSYS' expect_denied "C: io_uring_setup" crun -- $PROBE io_uring
expect_allowed "python: a native syscall through ctypes" crun -- "$PY" -c 'import ctypes; assert ctypes.CDLL(None).syscall(39) > 0'
DENY='Function not implemented' expect_denied "python: io_uring_setup" crun -- "$PY" -c "
import ctypes, os
r = ctypes.CDLL(None, use_errno=True).syscall(425, 4, ctypes.create_string_buffer(120))
assert r >= 0, os.strerror(ctypes.get_errno())"

# -- foreign syscall ABIs (x86_64 only). Outside, an x32 call fails on its
# own (ENOSYS, no CONFIG_X86_X32_ABI) and int 0x80 works only with IA32
# emulation; so the denial counted is the filter's own signature, the kill
# by SIGSYS (exit 159), never a mere failure.
if [ "$(uname -m)" = x86_64 ]; then
	out=$(as_id "$R/probe" i386 2>&1)
	case $out in
	"ok i386") ok "control: outside, int 0x80 getpid works (IA32 emulation)" ;;
	*) echo "# int 0x80 outside: [$out] (no IA32 emulation): only the SIGSYS signature tells the filter" ;;
	esac
	out=$(as_id "$R/probe" x32 2>&1)
	case $out in
	"ok x32" | "denied x32: ENOSYS") ok "control: outside, an x32 call returns ($out) and is not killed" ;;
	*) bad "control: x32 outside: [$out]" ;;
	esac
	DENY=SIGSYS expect_denied "C: x32 getpid" crun -- $PROBE x32
	DENY=SIGSYS expect_denied "C: int 0x80 getpid" crun -- $PROBE i386
	DENY=SIGSYS expect_denied "python: x32 getpid through ctypes" crun -- "$PY" -c 'import ctypes; assert ctypes.CDLL(None).syscall(0x40000000 | 39) > 0'
fi
finish
