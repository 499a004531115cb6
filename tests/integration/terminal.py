#!/usr/bin/env python3
# Interactive runs on a terminal (black-box, in a pseudo-terminal): the
# terminal modes come back after the run however it ends, Ctrl-Z stops the
# command and corral so the user's shell gets its prompt back, `fg` and
# `bg` continue it, Ctrl-C still kills it. Each check has a control that
# shows the harness can see the failure it looks for. Runs as root and,
# through tests/as-nobody.sh, as nobody. Standard library only.
import errno
import os
import pty
import re
import select
import shutil
import signal
import sys
import tempfile
import termios
import time

C = os.environ.get("CORRAL")
if not C:
    print("CORRAL must point at the built corral", file=sys.stderr)
    sys.exit(99)
MUST = os.environ.get("CORRAL_MUST_WORK") == "1"
BASH = shutil.which("bash") or "/bin/bash"
TAG = str(os.getpid())
npass = nfail = 0


def ok(msg):
    global npass
    npass += 1
    print("ok - " + msg, flush=True)


def bad(msg):
    global nfail
    nfail += 1
    print("FAIL - " + msg, flush=True)


def check(name, cond, detail=""):
    (ok if cond else bad)(name + ("" if cond else ": " + detail))


def skip(why):
    print("SKIP: " + why, flush=True)
    sys.exit(1 if MUST else 77)


def mkroot():
    d = tempfile.mkdtemp(prefix="corral-tty.")
    os.chmod(d, 0o755)
    if os.getuid() == 0:
        os.chown(d, 65534, 65534)
    return d


ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "TERM": "dumb",
    "LANG": "C",
    "PS1": "PROMPT$ ",
    "CORRAL": C,
}


class Pty:
    """A program on a fresh pty: session leader, the pty its controlling terminal."""

    def __init__(self, argv):
        pid, fd = pty.fork()
        if pid == 0:
            try:
                os.execve(argv[0], argv, ENV)
            finally:
                os._exit(127)
        self.pid, self.fd, self.buf, self.status = pid, fd, b"", None

    def modes(self):
        # On a pty master, TCGETS reads the slave's modes.
        return termios.tcgetattr(self.fd)

    def send(self, data):
        os.write(self.fd, data.encode() if isinstance(data, str) else data)

    def _read(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return False
        try:
            chunk = os.read(self.fd, 65536)
        except OSError as e:
            if e.errno != errno.EIO:
                raise
            chunk = b""
        if not chunk:
            return None
        self.buf += chunk
        return True

    def expect(self, pattern, timeout=5.0):
        """Wait for |pattern| in the output; consume up to its end. Returns the match or None."""
        rx = re.compile(pattern.encode() if isinstance(pattern, str) else pattern)
        end = time.monotonic() + timeout
        while True:
            m = rx.search(self.buf)
            if m:
                self.buf = self.buf[m.end():]
                return m
            left = end - time.monotonic()
            if left <= 0 or self._read(left) is None:
                return None

    def wait(self, timeout=10.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            p, st = os.waitpid(self.pid, os.WNOHANG)
            if p == self.pid:
                self.status = st
                return st
            self._read(0.05)
        return None

    def close(self):
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except OSError:
                pass
        try:
            os.close(self.fd)
        except OSError:
            pass


def proc_states(marker):
    """
    {pid: state letter} of every process whose command line contains
    |marker|, except those that ignore SIGTSTP (corral's cgroup watchdog,
    a copy of corral that ignores every signal it can): job control never
    stops them.
    """
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
            with open(f"/proc/{d}/status") as f:
                ign = int(re.search(r"^SigIgn:\s*([0-9a-f]+)", f.read(), re.M).group(1), 16)
        except (OSError, AttributeError):
            continue
        if marker.encode() in cmd and not ign & (1 << (signal.SIGTSTP - 1)):
            out[int(d)] = st[st.rindex(")") + 2]
    return out


def wait_states(marker, want, timeout=3.0, n=1):
    """Wait until at least |n| processes match |marker| and all are in a state of |want|."""
    end = time.monotonic() + timeout
    while True:
        s = proc_states(marker)
        if len(s) >= n and all(v in want for v in s.values()):
            return s
        if time.monotonic() >= end:
            return s
        time.sleep(0.02)


def exit_code(st):
    if st is None:
        return None
    return os.waitstatus_to_exitcode(st)


# ------------------------------------------------------------------ modes


def modes_case(root):
    """A command that leaves the terminal raw and dies: the modes come back."""
    raw = "stty raw -echo; "
    cases = [
        ("SIGKILLed in raw mode", [C, "run", "--root", root, "--", "sh", "-c", raw + "kill -KILL $$"], 137),
        ("exits in raw mode", [C, "run", "--root", root, "--", "sh", "-c", raw + "exit 3"], 3),
        ("deadline in raw mode", [C, "run", "--root", root, "--timeout", "0.5", "--", "sh", "-c", raw + "sleep 30"], 124),
    ]
    # Control: the same command without corral leaves the terminal raw, so
    # the comparison below can see a broken terminal.
    p = Pty(["/bin/sh", "-c", raw + "kill -KILL $$"])
    before = p.modes()
    st = p.wait()
    after = p.modes()
    check("control: without corral, the terminal stays raw", st is not None and before != after,
          "modes unchanged: the harness could not see a broken terminal")
    p.close()
    for name, argv, want in cases:
        p = Pty(argv)
        before = p.modes()
        st = p.wait()
        after = p.modes()
        check(f"{name}: exit {want}", exit_code(st) == want, f"got {exit_code(st)}; output {p.buf!r}")
        check(f"{name}: terminal modes restored", before == after,
              f"lflag {before[3]:#x} -> {after[3]:#x}, iflag {before[0]:#x} -> {after[0]:#x}")
        p.close()


# ------------------------------------------------------------ job control


def shell():
    p = Pty([BASH, "--norc", "--noprofile", "--noediting", "-i"])
    if not p.expect(r"PROMPT\$ ", 5):
        p.close()
        skip("no interactive bash prompt on a pty")
    return p


def run_line(p, line, timeout=5.0):
    p.send(line + "\n")
    return p.expect(r"PROMPT\$ ", timeout)


def last_rc(p):
    p.send("echo rc=$?\n")
    m = p.expect(r"rc=(\d+)\r?\n", 5)
    p.expect(r"PROMPT\$ ", 5)
    return int(m.group(1)) if m else None


def stop_control():
    """Control: Ctrl-Z on a plain command: the harness sees Stopped, the T state, and the prompt."""
    marker = f"ctl-{TAG}"
    p = shell()
    p.send(f"sh -c 'echo ready; read x; echo got:$x; exit 5' {marker}\n")
    p.expect(r"ready\r?\n", 5)
    time.sleep(0.1)
    wait_states(marker, "S")
    p.send(b"\x1a")
    m = p.expect(r"Stopped.*\r?\n", 3)
    check("control: Ctrl-Z on a plain command is seen as Stopped", m is not None, repr(p.buf))
    s = wait_states(marker, "T")
    check("control: a stopped command is seen in state T", s and all(v == "T" for v in s.values()), repr(s))
    check("control: the shell prompts again", p.expect(r"PROMPT\$ ", 3) is not None, repr(p.buf))
    p.send("fg\n")
    p.expect(marker, 3)
    time.sleep(0.2)
    p.send("hello\n")
    check("control: fg, input reaches the command", p.expect(r"got:hello", 3) is not None, repr(p.buf))
    p.expect(r"PROMPT\$ ", 3)
    check("control: its exit status", last_rc(p) == 5)
    run_line(p, "exit")
    p.close()


def ctrl_z(root):
    marker = f"tstp-{TAG}"
    p = shell()
    start = p.modes()
    # The command turns echo off, then reads the terminal after Ctrl-Z and fg.
    p.send(f"{C} run --root {root} --timeout 30 -- sh -c 'stty -echo; echo ready; read x; echo got:$x; exit 7' {marker}\n")
    if not p.expect(r"ready\r?\n", 5):
        bad("corral run did not start: " + repr(p.buf))
        p.close()
        return
    time.sleep(0.1)
    wait_states(marker, "S", n=2)
    t0 = time.monotonic()
    p.send(b"\x1a")
    m = p.expect(r"Stopped.*\r?\n", 3)
    ms = (time.monotonic() - t0) * 1e3
    check(f"Ctrl-Z: the shell reports the job stopped ({ms:.0f} ms)", m is not None and ms < 2000, repr(p.buf))
    check("Ctrl-Z: the shell prompts again", p.expect(r"PROMPT\$ ", 3) is not None, repr(p.buf))
    s = wait_states(marker, "T", n=2)
    check("Ctrl-Z: corral and the command are both stopped", len(s) >= 2 and all(v == "T" for v in s.values()),
          repr(s))
    p.send("echo alive\n")
    check("Ctrl-Z: the shell reads the terminal", p.expect(r"\nalive\r?\n", 3) is not None, repr(p.buf))
    p.expect(r"PROMPT\$ ", 3)
    p.send("jobs\n")
    check("Ctrl-Z: jobs lists it Stopped", p.expect(r"\[1\]\+ +Stopped +.*corral run", 3) is not None, repr(p.buf))
    p.expect(r"PROMPT\$ ", 3)
    check("Ctrl-Z: the shell's terminal modes are those of the start", p.modes() == start)
    p.send("fg\n")
    p.expect(r"corral run.*\r?\n", 3)
    s = wait_states(marker, "S", n=2)
    check("fg: corral and the command run again", len(s) >= 2 and all(v != "T" for v in s.values()), repr(s))
    time.sleep(0.1)
    check("fg: the command's modes are back (echo off)", not p.modes()[3] & termios.ECHO)
    p.send("hello\n")
    check("fg: the command reads the terminal", p.expect(r"got:hello", 3) is not None, repr(p.buf))
    check("fg: corral returns to the shell", p.expect(r"PROMPT\$ ", 5) is not None, repr(p.buf))
    check("fg: the command's exit status (7)", last_rc(p) == 7)
    check("the terminal's modes after the run are those of the start", p.modes() == start)

    # bg: the command runs on without the terminal; reading it stops the job
    # again (SIGTTIN); fg hands it the terminal.
    p.send(f"{C} run --root {root} --timeout 30 -- sh -c 'echo ready; sleep 0.5; read x; echo got:$x; exit 9' {marker}\n")
    p.expect(r"ready\r?\n", 5)
    # Not while sh forks sleep: a vfork parent cannot stop until its child
    # execs, so Ctrl-Z then stops the child only, with or without corral.
    time.sleep(0.1)
    wait_states(marker, "S", n=2)
    p.send(b"\x1a")
    check("bg: Ctrl-Z stops the job", p.expect(r"Stopped.*\r?\n", 3) is not None, repr(p.buf))
    p.expect(r"PROMPT\$ ", 3)
    run_line(p, "bg")
    s = wait_states(marker, "T", timeout=4, n=2)
    check("bg: reading the terminal stops corral and the command again",
          len(s) >= 2 and all(v == "T" for v in s.values()), repr(s))
    # In POSIX mode bash names the stop signal: corral stopped as the command did.
    p.send("set -o posix; jobs; set +o posix\n")
    check("bg: jobs lists it Stopped(SIGTTIN)", p.expect(r"\[1\]\+ +Stopped\(SIGTTIN\) +.*corral run", 3) is not None,
          repr(p.buf))
    p.expect(r"PROMPT\$ ", 3)
    p.send("fg\n")
    p.expect(r"corral run.*\r?\n", 3)
    time.sleep(0.2)
    p.send("world\n")
    check("bg, fg: the command reads the terminal", p.expect(r"got:world", 3) is not None, repr(p.buf))
    p.expect(r"PROMPT\$ ", 5)
    check("bg, fg: the command's exit status (9)", last_rc(p) == 9)

    # A command that stops itself with SIGSTOP: the job stops too; fg continues it.
    p.send(f"{C} run --root {root} --timeout 30 -- sh -c 'kill -STOP $$; echo continued; exit 4' {marker}\n")
    check("SIGSTOP: the shell reports the job stopped", p.expect(r"Stopped.*\r?\n", 3) is not None, repr(p.buf))
    p.expect(r"PROMPT\$ ", 3)
    p.send("fg\n")
    check("SIGSTOP, fg: the command continues", p.expect(r"continued", 3) is not None, repr(p.buf))
    p.expect(r"PROMPT\$ ", 5)
    check("SIGSTOP, fg: exit status 4", last_rc(p) == 4)
    run_line(p, "exit")
    p.close()


def ctrl_c(root):
    marker = f"61.{TAG}"
    p = shell()
    start = p.modes()
    p.send(f"{C} run --root {root} -- sh -c 'stty -echo; exec sleep {marker}'\n")
    s = wait_states(f"sleep {marker}", "S", n=1)
    check("Ctrl-C: the command runs", len(s) >= 1, repr(s))
    t0 = time.monotonic()
    p.send(b"\x03")
    m = p.expect(r"PROMPT\$ ", 3)
    ms = (time.monotonic() - t0) * 1e3
    check(f"Ctrl-C: corral returns ({ms:.0f} ms)", m is not None, repr(p.buf))
    check("Ctrl-C: exit status 130", last_rc(p) == 130)
    check("Ctrl-C: the command is gone", not proc_states(f"sleep {marker}"))
    check("Ctrl-C: the terminal's modes are those of the start", p.modes() == start)
    run_line(p, "exit")
    p.close()


def main():
    if not os.path.exists("/dev/ptmx"):
        skip("no /dev/ptmx")
    try:
        fd_m, fd_s = os.openpty()
        os.close(fd_m)
        os.close(fd_s)
    except OSError as e:
        skip(f"openpty: {e}")
    if not os.access(BASH, os.X_OK):
        skip("no bash")
    root = mkroot()
    try:
        modes_case(root)
        stop_control()
        ctrl_z(root)
        ctrl_c(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"# {npass} passed, {nfail} failed")
    sys.exit(0 if nfail == 0 else 1)


main()
