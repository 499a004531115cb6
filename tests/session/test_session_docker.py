#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Black-box suite of `corral session --provider docker` (docs/sessions.md).

One long-lived container per session, each call a `docker exec` in it:
the core rows of the local suite (test_session.py) through the docker
provider, each denial paired with a control, and the container's end:
gone at end of stdin, and removed by the guardian when corral is killed.
Needs a daemon and the image tests/session/make-image.sh builds (skips,
77, without them unless CORRAL_MUST_WORK=1).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sessionlib import Session, check, report, scratch  # noqa: E402

CORRAL = os.environ["CORRAL"]
HERE = os.path.dirname(os.path.abspath(__file__))
IMAGE = os.environ.get("CORRAL_TEST_SESSION_IMAGE", "corral-test-session:latest")


def skip(why):
    if os.environ.get("CORRAL_MUST_WORK") == "1":
        print("FAIL (CORRAL_MUST_WORK=1 forbids skipping): " + why)
        sys.exit(1)
    print("SKIP: " + why)
    sys.exit(77)


def containers(session_id):
    out = subprocess.run(["docker", "ps", "-a", "-q", "--filter", "label=io.corral.session=" + session_id],
                         capture_output=True, text=True)
    return out.stdout.split()


def state_dirs():
    """The sessions' state directories (supervisor/docker/session.c: XDG_RUNTIME_DIR when usable, else /tmp)."""
    base = os.environ.get("XDG_RUNTIME_DIR", "")
    if not (base.startswith("/") and len(base) <= 40 and os.access(base, os.W_OK | os.X_OK)):
        base = "/tmp"
    return {os.path.join(base, d) for d in os.listdir(base) if d.startswith("corral-dsession.")}


def session(root, *opts):
    return Session(CORRAL, root, "--provider", "docker", "--image", IMAGE, *opts)


def main():
    if shutil.which("docker") is None:
        skip("no docker client on PATH")
    if subprocess.run(["docker", "version"], capture_output=True).returncode != 0:
        skip("docker daemon not reachable (as %s)" % ("root" if os.geteuid() == 0 else "uid %d" % os.geteuid()))
    rc = subprocess.run(["bash", os.path.join(HERE, "make-image.sh"), IMAGE]).returncode
    if rc == 77:
        sys.exit(77)
    if rc != 0:
        print("FAIL: make-image.sh exited %d" % rc)
        sys.exit(1)
    base, root, outside = scratch("corral-dsess.")
    try:
        run_core(root, outside)
        run_calls(root)
        run_audit(base, root)
        run_spoof(base, root)
        run_trace(base, root)
        run_owner(base)
        run_cleanup(root)
        run_refused_removal(base, root)
        run_swapped_state_dir(base, root)
        run_non_utf8(root)
        run_lifecycle(root)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    report()


def run_core(root, outside):
    dirs0 = state_dirs()
    s = session(root)
    st = s.call("status", wait_s=60)
    sid = st.get("session_id", "")
    check("status answers, naming the container", st.get("event") == "result" and st.get("cwd") == "."
          and st.get("container", "").startswith("corral-s-"), st)
    check("a state directory while the session runs", len(state_dirs() - dirs0) == 1, state_dirs() - dirs0)
    check("one container, labelled with the session", len(containers(sid)) == 1, (sid, containers(sid)))

    r = s.call("exec", argv=["echo", "hi"])
    check("exec runs argv in the container", r.get("stdout") == "hi\n" and r.get("exit_status") == 0
          and r.get("ended_by") == "exit" and r.get("provider") == "docker", r)
    for k in ("signal", "timed_out", "stderr", "wall_ms", "cpu_ms", "max_rss_kb", "denials", "warnings", "run_id"):
        check("exec result has " + k, k in r, r)
    r = s.call("exec", argv=["no-such-command-xyz"])
    check("exec of a missing command is 127, said by the helper", r.get("exit_status") == 127
          and "not found" in r.get("stderr", ""), r)
    r = s.call("bash", command="echo 'corral: x: not found' >&2; exit 127")
    check("control: a command exiting 127 itself is its own status", r.get("exit_status") == 127
          and r.get("stderr") == "corral: x: not found\n", r)
    r = s.call("exec", argv=["sh", "-c", "kill -TERM $$"])
    check("a command killed by a signal reports the signal", r.get("signal") == 15 and r.get("ended_by") == "signal", r)

    # Shell state: cwd and exports persist between calls.
    r = s.call("bash", command="mkdir -p src/deep && cd src && export FOO=bar && pwd")
    check("bash cd reported as cwd", r.get("cwd") == "src" and r.get("stdout") == "/workspace/src\n", r)
    r = s.call("bash", command="pwd; echo \"$FOO\"; exit 3")
    check("cwd and export persist to the next bash call", r.get("stdout") == "/workspace/src\nbar\n", r)
    check("exit status kept when the command calls exit", r.get("exit_status") == 3, r)
    r = s.call("exec", argv=["pwd"])
    check("exec runs from the session's cwd", r.get("stdout") == "/workspace/src\n", r)
    r = s.call("bash", command="unset FOO; export Q=$'a\\nb\"c' E=")
    r = s.call("bash", command="printf '%s|' \"$Q\" \"${E-unset}\" \"${FOO-unset}\"")
    check("exports with quotes and empty values persist; unset ones go", r.get("stdout") == "a\nb\"c||unset|", r)
    r = s.call("bash", command="cd /; pwd")
    r2 = s.call("bash", command="pwd")
    check("a cd outside the root is not kept (warning)", r2.get("stdout") == "/workspace/src\n"
          and any("outside the root" in w for w in r.get("warnings", [])), (r, r2))
    s.call("bash", command="cd /workspace")

    # The container's view: only the root is mounted, the image read-only.
    r = s.call("bash", command="echo x > /etc/corral-x")
    check("write into the image refused (read-only)", r.get("exit_status") != 0 and
          "Read-only file system" in r.get("stderr", ""), r)
    r = s.call("bash", command="ls %s" % outside)
    check("a host path outside the root is not there", r.get("exit_status") != 0, r)
    check("control: the host sees that path", os.path.exists(os.path.join(outside, "secret")))
    r = s.call("bash", command="echo inside > made-in-container")
    check("control: write into the root lands on the host", r.get("exit_status") == 0 and
          open(os.path.join(root, "made-in-container")).read() == "inside\n", r)
    r = s.call("exec", argv=["id", "-u"])
    check("the container runs as the root's owner, never uid 0", r.get("stdout", "").strip() ==
          str(os.stat(root).st_uid if os.stat(root).st_uid else 65534) and r.get("stdout", "").strip() != "0", r)

    # File tools: host-side through the boundary, seen by the container.
    r = s.call("write_file", path="notes.txt", content="hello\n")
    check("write_file", r.get("event") == "result", r)
    r = s.call("exec", argv=["sh", "-c", "cat notes.txt && echo more >> notes.txt"])
    check("the container reads and appends to what write_file made", r.get("stdout") == "hello\n"
          and r.get("exit_status") == 0, r)
    r = s.call("read_file", path="notes.txt")
    check("read_file sees the container's write", r.get("content") == "hello\nmore\n", r)
    r = s.call("read_file", path="../outside/secret")
    check("read_file outside the root refused", r.get("event") == "error", r)
    r = s.call("write_file", path="../outside/planted", content="x")
    check("write_file outside the root refused", r.get("event") == "error"
          and not os.path.exists(os.path.join(outside, "planted")), r)
    s.call("bash", command="ln -s %s/secret link" % outside)
    r = s.call("read_file", path="link")
    check("read_file through a symlink the container planted refused", r.get("event") == "error", r)

    # Streams, stdin, output clipping.
    r = s.call("bash", command="echo out; echo err >&2; cat", stdin="fed\n")
    check("stdout, stderr and stdin", r.get("stdout") == "out\nfed\n" and r.get("stderr") == "err\n", r)
    r = s.call("exec", argv=["sh", "-c", "head -c 100000 /dev/zero | tr '\\0' a"], max_output=1000)
    check("output clipped to max_output, every byte counted", r.get("stdout_truncated") is True
          and r.get("stdout_bytes") == 100000 and len(r.get("stdout", "")) < 1200, str(r)[:300])

    # Timeout and its control.
    t = time.monotonic()
    r = s.call("bash", command="export LEAK=1; sleep 30", timeout=0.5)
    el = time.monotonic() - t
    check("timeout ends the call", r.get("timed_out") is True and r.get("ended_by") == "timeout"
          and r.get("signal") == 9 and el < 5, (el, r))
    r = s.call("exec", argv=["sh", "-c", "ps | grep -c '[s]leep 30'"])
    check("the timed-out command is gone from the container", r.get("stdout", "").strip() == "0", r)
    r = s.call("bash", command="echo \"${LEAK:-unset}\"")
    check("a timed-out call leaves no state", r.get("stdout") == "unset\n", r)
    r = s.call("bash", command="sleep 0.1; echo done", timeout=5)
    check("control: a call within its timeout ends by itself", r.get("ended_by") == "exit"
          and r.get("stdout") == "done\n", r)

    # Leftovers: a background process of the call is killed when it ends.
    t = time.monotonic()
    r = s.call("bash", command="sleep 60 & echo started")
    el = time.monotonic() - t
    check("a call's leftover process is killed and counted, the call not held", r.get("leftovers_killed", 0) >= 1
          and r.get("stdout") == "started\n" and el < 3, (el, r))
    rc = s.close(timeout=30)
    check("end of stdin: exit 0", rc == 0, rc)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and containers(sid):
        time.sleep(0.1)
    check("end of stdin: the container is gone", not containers(sid), containers(sid))
    check("end of stdin: the state directory is removed", not (state_dirs() - dirs0), state_dirs() - dirs0)


def run_calls(root):
    s = session(root)
    s.call("status", wait_s=60)
    # Background job, job_output, cancel (and its control).
    s.send({"id": "bg", "tool": "bash", "command": "echo begun; sleep 30", "background": True})
    check("background: started event", s.wait("bg", kinds=("started",)).get("event") == "started")
    time.sleep(0.5)
    r = s.call("job_output", job="bg")
    check("job_output of a running job", "begun" in r.get("stdout", ""), r)
    t = time.monotonic()
    c = s.call("cancel", target="bg")
    r = s.wait("bg", timeout=10)
    el = time.monotonic() - t
    check("cancel ends a running job", r.get("ended_by") == "cancelled" and r.get("signal") == 9 and el < 5,
          (el, c, r))
    r = s.call("exec", argv=["sh", "-c", "ps | grep -c '[s]leep 30'"])
    check("the cancelled command is gone from the container", r.get("stdout", "").strip() == "0", r)
    s.send({"id": "bg2", "tool": "bash", "command": "sleep 0.3; echo finished", "background": True})
    r = s.wait("bg2", timeout=10)
    check("control: an uncancelled job finishes by itself", r.get("ended_by") == "exit"
          and r.get("stdout") == "finished\n", r)

    # Overlapping calls: 8 at once, each 1 s, together well under 8 s.
    t = time.monotonic()
    for i in range(8):
        s.send({"id": "o%d" % i, "tool": "bash", "command": "sleep 1; echo %d" % i})
    rs = [s.wait("o%d" % i, timeout=30) for i in range(8)]
    el = time.monotonic() - t
    check("8 overlapping calls run at once, each with its own output",
          all(r.get("stdout") == "%d\n" % i and r.get("exit_status") == 0 for i, r in enumerate(rs)) and el < 5,
          (el, rs))
    # kill -9 -1 from a call: every process of the session's user, never the container's pid 1.
    s.send({"id": "victim", "tool": "bash", "command": "sleep 30", "background": True})
    s.wait("victim", kinds=("started",))
    time.sleep(1)
    r = s.call("exec", argv=["sh", "-c", "kill -9 -1"])
    v = s.wait("victim", timeout=10)
    check("kill -9 -1 from a call reaches the other calls (one uid, one PID namespace)", v.get("signal") == 9, v)
    r = s.call("exec", argv=["echo", "still"])
    check("... but not the container: the session goes on", r.get("stdout") == "still\n", r)
    # A process that leaves its call's group (setsid) and keeps stdout cannot hold the call.
    t = time.monotonic()
    r = s.call("bash", command="setsid sleep 30 & echo quick")
    el = time.monotonic() - t
    check("a setsid escapee holding stdout delays the call by at most the drain (2 s)",
          r.get("stdout") == "quick\n" and el < 4, (el, r))
    # End of stdin with a job running: its result still comes, then the container goes.
    sid = s.call("status").get("session_id", "")
    s.send({"id": "last", "tool": "bash", "command": "sleep 30", "background": True})
    s.wait("last", kinds=("started",))
    time.sleep(0.5)
    rc = s.close(timeout=30)
    ev = [e for e in s.events if e.get("id") == "last" and e.get("event") == "result"]
    check("second session: end of stdin, exit 0, the running job's result delivered (cancelled)",
          rc == 0 and len(ev) == 1 and ev[0].get("ended_by") == "cancelled", (rc, s.events[-3:]))
    check("second session: no container after end of stdin", not containers(sid), containers(sid))


SPOOF_C = r"""
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
/* spoof REPORT STATUS: forge the exec helper's report on this call's status socket (its path: the helper's argv). */
int main(int argc, char **argv)
{
	char path[64], cmd[4096];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	ssize_t n;
	int fd;
	const char *sock;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)getppid());
	fd = open(path, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, cmd, sizeof(cmd) - 1);
	if (n <= 0)
		return 99;
	cmd[n] = 0;
	sock = cmd + strlen(cmd) + 1;      /* --corral-session */
	sock += strlen(sock) + 1;          /* SOCKET */
	strncpy(sa.sun_path, sock, sizeof(sa.sun_path) - 1);
	/* corral may close a connection that is not the helper's at once: the write then fails, no matter */
	signal(SIGPIPE, SIG_IGN);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return 98;
	printf("connected\n");
	fflush(stdout);
	(void)!write(fd, argv[1], strlen(argv[1]));
	close(fd);
	return atoi(argv[2]);
}
"""


TRACE_C = r"""
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
/*
 * trace MARKER REPORT: ptrace the exec helper of the call whose argv holds
 * MARKER and make it write REPORT on its status connection (fd 3), then shut
 * that down: the report corral would take as the helper's.
 * trace --child: the control, ptrace of a child of one's own.
 */
static long inject(pid_t pid, struct user_regs_struct *base, long nr, long a, long b, long c)
{
	struct user_regs_struct r = *base;
	int st;

	r.rax = nr; r.orig_rax = -1; r.rdi = a; r.rsi = b; r.rdx = c;
	if (ptrace(PTRACE_SETREGS, pid, 0, &r) < 0 || ptrace(PTRACE_SINGLESTEP, pid, 0, 0) < 0)
		return -1;
	waitpid(pid, &st, __WALL);
	ptrace(PTRACE_GETREGS, pid, 0, &r);
	return (long)r.rax;
}

int main(int argc, char **argv)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (argc == 2 && strcmp(argv[1], "--child") == 0) {
		pid_t c = fork();

		if (c == 0) {
			pause();
			_exit(0);
		}
		if (ptrace(PTRACE_SEIZE, c, 0, 0) < 0) {
			printf("seize child: %s\n", strerror(errno));
			return 1;
		}
		kill(c, SIGKILL);
		printf("traced child\n");
		return 0;
	}
	while ((de = readdir(d))) {
		char path[64], cmd[4096];
		int fd, pid = atoi(de->d_name), st, hit = 0;
		ssize_t n;

		if (pid <= 1 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
		fd = open(path, O_RDONLY);
		n = fd < 0 ? -1 : read(fd, cmd, sizeof(cmd) - 1);
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			continue;
		cmd[n] = 0;
		for (char *p = cmd; p < cmd + n; p += strlen(p) + 1)
			hit |= strstr(p, argv[1]) != NULL;
		if (!hit || !memmem(cmd, n, "--corral-session", 16))
			continue;
		if (ptrace(PTRACE_SEIZE, pid, 0, 0) < 0) {
			printf("seize helper: %s\n", strerror(errno));
			return 90;
		}
		ptrace(PTRACE_INTERRUPT, pid, 0, 0);
		waitpid(pid, &st, __WALL);
		struct user_regs_struct orig, base;
		ptrace(PTRACE_GETREGS, pid, 0, &orig);
		base = orig;
		base.rip -= 2; /* the syscall instruction it is blocked in */
		unsigned long buf = (orig.rsp - 512) & ~7UL;
		size_t len = strlen(argv[2]);
		for (size_t i = 0; i < len + 8; i += 8) {
			long w = 0;

			memcpy(&w, argv[2] + i, len > i ? (len - i < 8 ? len - i : 8) : 0);
			ptrace(PTRACE_POKEDATA, pid, buf + i, w);
		}
		long w1 = inject(pid, &base, SYS_write, 3, buf, len);
		long w2 = inject(pid, &base, SYS_shutdown, 3, SHUT_RDWR, 0);
		orig.rax = orig.orig_rax;
		orig.rip -= 2; /* the poll again */
		ptrace(PTRACE_SETREGS, pid, 0, &orig);
		ptrace(PTRACE_DETACH, pid, 0, 0);
		printf("forged: write %ld shutdown %ld\n", w1, w2);
		return 0;
	}
	printf("no helper\n");
	return 92;
}
"""

FLOOD_C = r"""
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
/* flood DIR SECONDS: each status socket created in DIR gets 16 connections at once, held */
int main(int argc, char **argv)
{
	int in = inotify_init1(0);
	char buf[4096];

	alarm(atoi(argv[2]));
	if (in < 0 || inotify_add_watch(in, argv[1], IN_CREATE) < 0) {
		perror("inotify");
		return 90;
	}
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));

		for (char *p = buf; n > 0 && p < buf + n;) {
			struct inotify_event *e = (struct inotify_event *)p;
			struct sockaddr_un sa = { .sun_family = AF_UNIX };
			int k = 0;

			snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", argv[1], e->name);
			for (int i = 0; i < 16; i++) {
				int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);

				k += connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
			}
			printf("connected %d\n", k);
			fflush(stdout);
			p += sizeof(*e) + e->len;
		}
	}
}
"""


def build(base, root, name, src_text):
    """Compile |src_text| statically into the root as |name|: its path in the root, or None (no compiler)."""
    cc = shutil.which("cc")
    if not cc:
        return None
    src = os.path.join(base, name + ".c")
    with open(src, "w") as f:
        f.write(src_text)
    exe = os.path.join(root, name)
    if subprocess.run([cc, "-static", "-O1", "-o", exe, src]).returncode != 0:
        return None
    os.chmod(exe, 0o755)
    return exe


def run_trace(base, root):
    """Another call's helper cannot be ptraced into forging that call's report (it is not dumpable)."""
    import platform
    if platform.machine() != "x86_64" or not build(base, root, "trace", TRACE_C):
        print("ok - # SKIP trace rows: no static C compiler, or not x86_64")
        return
    s = session(root)
    s.call("status", wait_s=60)
    r = s.call("exec", argv=["./trace", "--child"])
    check("control: a call may ptrace a process of its own", r.get("stdout") == "traced child\n", r)
    s.send({"id": "victim", "tool": "bash", "command": "sleep 2; exit 7", "background": True})
    s.wait("victim", kinds=("started",))
    time.sleep(0.5)
    r = s.call("exec", argv=["./trace", "exit 7", "W 0\nL 0\n"])
    v = s.wait("victim", timeout=15)
    check("another call's exec helper cannot be ptraced (to forge its report)",
          r.get("stdout", "").startswith("seize helper: Operation not permitted"), r)
    check("... and that call's own status stands", v.get("exit_status") == 7 and v.get("ended_by") == "exit", v)
    s.close(timeout=30)


def run_owner(base):
    """
    The container's user owning the state directory (corral not root, or
    --user root): "st" stays corral's (read-only over it), the helper's copy
    unreadable, and connections made first to each call's socket cannot
    crowd out the helper's.
    """
    root = os.path.join(base, "root-owner")
    os.mkdir(root)
    os.chmod(root, 0o755)
    opts = ("--user", "root") if os.geteuid() == 0 else ()
    s = Session(CORRAL, root, "--provider", "docker", "--image", IMAGE, *opts)
    s.call("status", wait_s=60)
    r = s.call("bash", command="id -u; touch /.corral-session/.corral/probe && echo state-writable; "
               "ls /.corral-session/st >/dev/null && echo st-listable")
    check("control: the container's user is corral's and owns the state directory",
          r.get("stdout") == "%d\nstate-writable\nst-listable\n" % os.geteuid(), r)
    r = s.call("bash", command="mv /.corral-session/st /.corral-session/st.x 2>/dev/null && echo moved; "
               "ln -s /tmp /.corral-session/st/x 2>/dev/null && echo planted; "
               "for f in /.corral-session/st/*; do rm -f \"$f\" 2>/dev/null && echo removed; done; "
               "head -c 1 /.corral-session/st/corral-docker-exec >/dev/null 2>&1 && echo read; echo end")
    check("a call cannot move, plant in, remove from \"st\" nor read the helper's copy",
          r.get("stdout") == "end\n", r)
    s.close(timeout=30)
    if not build(base, root, "flood", FLOOD_C):
        print("ok - # SKIP flood rows: no static C compiler")
        return
    s = Session(CORRAL, root, "--provider", "docker", "--image", IMAGE, *opts)
    s.call("status", wait_s=60)
    s.send({"id": "flood", "tool": "exec", "argv": ["./flood", "/.corral-session/st", "4"], "background": True})
    s.wait("flood", kinds=("started",))
    time.sleep(0.5)
    rs = [s.call("bash", command="echo v%d; exit 3" % i) for i in range(4)]
    f = s.wait("flood", timeout=20)
    check("connections made first to a call's status socket do not crowd out its helper's",
          all(r.get("exit_status") == 3 and r.get("stdout") == "v%d\n" % i for i, r in enumerate(rs)), rs)
    # more than the 8 connections corral holds while the daemon does not yet know the exec's pid
    check("control: the flood connected to those calls' sockets first, more than 8 times",
          any(ln.startswith("connected ") and int(ln.split()[1]) > 8 for ln in f.get("stdout", "").splitlines()), f)
    s.close(timeout=30)


def run_spoof(base, root):
    cc = shutil.which("cc")
    if not cc:
        print("ok - # SKIP spoof rows: no C compiler")
        return
    src = os.path.join(base, "spoof.c")
    with open(src, "w") as f:
        f.write(SPOOF_C)
    exe = os.path.join(root, "spoof")
    if subprocess.run([cc, "-static", "-O1", "-o", exe, src]).returncode != 0:
        print("ok - # SKIP spoof rows: cannot link statically")
        return
    os.chmod(exe, 0o755)
    s = session(root)
    s.call("status", wait_s=60)
    r = s.call("exec", argv=["./spoof", "E 2\n", "0"])
    check("a command's forged exec failure on its call's status socket is not believed",
          r.get("exit_status") == 0 and r.get("stdout") == "connected\n" and "not found" not in r.get("stderr", ""), r)
    r = s.call("exec", argv=["./spoof", "W 0\nL 0\n", "3"])
    check("a command's forged exit status is not believed (control: it did connect)",
          r.get("exit_status") == 3 and r.get("stdout") == "connected\n", r)
    s.close(timeout=30)
    os.unlink(exe)


PLANT = ("cd /.corral-session/.corral && mkdir -p d/$(printf 'n/%.0s' $(seq 40)) && "
         "echo x > d/$(printf 'n/%.0s' $(seq 40))f && mkdir -p shut/in && echo y > shut/in/f && "
         "chmod 0 shut/in shut && echo planted")


def run_cleanup(root):
    """What a call leaves in the state directory (deep, or shut to its owner) goes with the session."""
    for how in ("end of stdin", "kill -9 of corral"):
        dirs0 = state_dirs()
        s = session(root)
        s.call("status", wait_s=60)
        r = s.call("bash", command=PLANT)
        check("control (%s): the call planted a deep tree and a shut directory in .corral" % how,
              r.get("stdout") == "planted\n" and len(state_dirs() - dirs0) == 1, r)
        if how == "end of stdin":
            s.close(timeout=30)
        else:
            os.kill(s.p.pid, signal.SIGKILL)
            s.p.wait()
        t = time.monotonic()
        while time.monotonic() - t < 8 and state_dirs() - dirs0:
            time.sleep(0.1)
        check("%s: the state directory is removed, deep tree and all" % how, not (state_dirs() - dirs0),
              state_dirs() - dirs0)
        for d in state_dirs() - dirs0:
            subprocess.run(["chmod", "-R", "u+rwx", d], capture_output=True)
            shutil.rmtree(d, ignore_errors=True)


def refusing_proxy(path, real):
    """A relay to the daemon's socket at |path| that answers the first DELETE of a session's container 500."""
    import socket
    import threading
    state = {"denied": 0}
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(64)

    def pump(a, b):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                b.sendall(d)
        except OSError:
            pass
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def conn(c):
        first = c.recv(65536)
        if first.startswith(b"DELETE /containers/corral-s-") and not state["denied"]:
            state["denied"] += 1
            body = b'{"message":"refused by the test"}'
            c.sendall(b"HTTP/1.0 500 Internal Server Error\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            c.close()
            return
        u = socket.socket(socket.AF_UNIX)
        u.connect(real)
        u.sendall(first)
        threading.Thread(target=pump, args=(u, c), daemon=True).start()
        pump(c, u)

    def loop():
        while True:
            c, _ = srv.accept()
            threading.Thread(target=conn, args=(c,), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()
    return state


def run_refused_removal(base, root):
    """The daemon refusing the removal at session end: the guardian removes the container all the same."""
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if not host.startswith("unix://"):
        print("ok - # SKIP refused-removal row: DOCKER_HOST is not a Unix socket")
        return
    path = os.path.join(base, "proxy.sock")
    state = refusing_proxy(path, host[len("unix://"):])
    env = dict(os.environ, DOCKER_HOST="unix://" + path)
    s = Session(CORRAL, root, "--provider", "docker", "--image", IMAGE, env=env)
    sid = s.call("status", wait_s=60).get("session_id", "")
    r = s.call("exec", argv=["echo", "through"])
    check("control: the session runs through the relay", r.get("stdout") == "through\n" and len(containers(sid)) == 1,
          r)
    s.close(timeout=30)
    t = time.monotonic()
    while time.monotonic() - t < 5 and containers(sid):
        time.sleep(0.1)
    left = containers(sid)
    check("control: the daemon refused the session's removal once", state["denied"] == 1, state)
    check("a removal the daemon refused at session end is retried: no container outlives the session",
          not left, left)
    if left:
        subprocess.run(["docker", "rm", "-f"] + left, capture_output=True)


def run_swapped_state_dir(base, root):
    """
    As root with XDG_RUNTIME_DIR another user's: that user swaps the state
    directory for one whose "st" is a symlink to a directory of theirs; the
    calls' sockets are still made in the real "st" (beneath its fd).
    """
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("ok - # SKIP swapped state directory rows: need root and setpriv")
        return
    xdg = os.path.join(base, "xdg")
    os.mkdir(xdg, 0o700)
    os.chown(xdg, 65534, 65534)
    s = Session(CORRAL, root, "--provider", "docker", "--image", IMAGE,
                env=dict(os.environ, XDG_RUNTIME_DIR=xdg))
    s.call("status", wait_s=60)
    r = s.call("exec", argv=["echo", "before"])
    check("control: a call before the swap", r.get("stdout") == "before\n", r)
    sd = [d for d in os.listdir(xdg) if d.startswith("corral-dsession.")]
    swap = ("cd %s && mv %s moved && mkdir %s trap && ln -s ../trap %s/st" % (xdg, sd[0], sd[0], sd[0])
            if len(sd) == 1 else "false")
    rc = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", swap]).returncode
    check("control: the directory's owner swapped the state directory", rc == 0, (sd, rc))
    s.send({"id": "during", "tool": "bash", "command": "sleep 1; echo after", "background": True})
    s.wait("during", kinds=("started",))
    time.sleep(0.5)
    trap = os.listdir(os.path.join(xdg, "trap"))
    r = s.wait("during", timeout=15)
    check("a swapped state directory path: the call's socket is made in the real st, not followed",
          r.get("stdout") == "after\n" and r.get("exit_status") == 0 and not trap, (trap, r))
    s.close(timeout=30)


def run_non_utf8(root):
    """A bash call exporting bytes that are not UTF-8, or ending in such a directory, cannot stop the session."""
    s = session(root)
    s.call("status", wait_s=60)
    r = s.call("bash", command="export BAD=$'\\xff' GOOD=kept; mkdir -p $'nd\\xfe' && cd $'nd\\xfe' && echo in")
    check("control: the call exported and moved", r.get("stdout") == "in\n", r)
    r = s.call("bash", command="echo \"$GOOD\"; echo \"${BAD-unset}\"; pwd")
    check("the next call runs: without the variable the API cannot carry, in the root, each said",
          r.get("event") == "result" and r.get("stdout") == "kept\nunset\n/workspace\n"
          and any("BAD is not valid UTF-8" in w for w in r.get("warnings", []))
          and any("working directory's name is not valid UTF-8" in w for w in r.get("warnings", [])), r)
    r = s.call("exec", argv=["echo", "on"])
    check("... and so do the calls after it", r.get("stdout") == "on\n" and r.get("exit_status") == 0, r)
    s.close(timeout=30)


def run_audit(base, root):
    path = os.path.join(base, "audit.jsonl")
    s = session(root, "--audit", path)
    s.call("exec", argv=["true"], tag="t-1", wait_s=60)
    s.call("read_file", path="notes.txt", tag="t-2")
    s.close(timeout=30)
    lines = [json.loads(x) for x in open(path) if x.strip()]
    ex = [x for x in lines if x.get("tag") == "t-1"]
    check("audit: a line per call, provider docker, tag echoed", len(ex) == 1 and ex[0].get("provider") == "docker"
          and ex[0].get("exit_status") == 0 and any(x.get("tag") == "t-2" for x in lines), lines)


def run_lifecycle(root):
    # kill -9 of corral: the guardian removes the container within a few seconds.
    dirs0 = state_dirs()
    s = session(root)
    sid = s.call("status", wait_s=60).get("session_id", "")
    s.send({"id": "bg", "tool": "bash", "command": "sleep 60", "background": True})
    s.wait("bg", kinds=("started",))
    time.sleep(0.3)
    check("control: the container runs while corral does", len(containers(sid)) == 1, containers(sid))
    os.kill(s.p.pid, signal.SIGKILL)
    s.p.wait()
    t = time.monotonic()
    while time.monotonic() - t < 10 and containers(sid):
        time.sleep(0.1)
    el = time.monotonic() - t
    check("kill -9 of corral: the guardian removes the container (%.1f s)" % el, not containers(sid) and el < 5,
          containers(sid))
    # The guardian removes the directory before and after the daemon's DELETE, which it retries for
    # a few seconds on a loaded daemon: allow it 15 s, and name what is left if anything is.
    t = time.monotonic()
    while time.monotonic() - t < 15 and state_dirs() - dirs0:
        time.sleep(0.1)
    left = {d: sorted(os.path.relpath(os.path.join(w, f), d) for w, ds, fs in os.walk(d) for f in ds + fs)
            for d in state_dirs() - dirs0}
    check("kill -9 of corral: the guardian removes the state directory (%.1f s)" % (time.monotonic() - t),
          not left, left)
    # A session whose container is removed under it says so.
    s = session(root)
    sid = s.call("status", wait_s=60).get("session_id", "")
    subprocess.run(["docker", "rm", "-f"] + containers(sid), capture_output=True)
    r = s.call("exec", argv=["true"])
    check("a container removed from outside: the call's error says so", r.get("event") == "error"
          and "gone" in r.get("error", {}).get("message", ""), r)
    s.close(timeout=30)


if __name__ == "__main__":
    main()
