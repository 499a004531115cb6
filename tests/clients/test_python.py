#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Python client (clients/python/corral) against the real built corral.

Every tool, an escape and a write outside the root (each with its allowed
twin), a deadline, a cancel from another thread and from asyncio, 8
overlapping calls, shell state, streaming, close() leaving no process,
bad arguments, and `pip install` into a venv. Runs as root and, through
tests/as-nobody.sh, as nobody.
"""
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

SRCDIR = os.environ.get("CORRAL_SRCDIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CORRAL = os.path.abspath(os.environ.get("CORRAL", os.path.join(SRCDIR, "build", "corral")))
sys.path.insert(0, os.path.join(SRCDIR, "clients", "python"))

from corral import (CallTimeout, CorralError, Denial, DirListing, FileContent, Job, RunResult,  # noqa: E402
                    Session, SessionClosed, Status)

MUST_WORK = os.environ.get("CORRAL_MUST_WORK") == "1"


def make_root():
    root = tempfile.mkdtemp(prefix="corral-pyclient.")
    os.chmod(root, 0o755)
    if os.geteuid() == 0:  # the commands run as nobody: the root must be theirs
        os.chown(root, 65534, 65534)
    return root


def proc_table():
    """{pid: (ppid, starttime)} of every process."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        rest = st[st.rindex(")") + 2:].split()
        out[int(d)] = (int(rest[1]), rest[19])
    return out


def tree(pid):
    """The processes of |pid|'s tree, as {pid: starttime}."""
    table = proc_table()
    kids = {}
    for p, (pp, _) in table.items():
        kids.setdefault(pp, []).append(p)
    out, todo = {}, [pid]
    while todo:
        p = todo.pop()
        if p in table:
            out[p] = table[p][1]
            todo += kids.get(p, [])
    return out


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.root = make_root()
        self.s = Session(root=self.root, corral=CORRAL)

    def tearDown(self):
        self.s.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def test_every_tool(self):
        s = self.s
        st = s.status()
        self.assertIsInstance(st, Status)
        self.assertEqual(st.cwd, ".")
        self.assertEqual(os.path.realpath(st.root), os.path.realpath(self.root))
        self.assertEqual(s.session_id, st.session_id)

        w = s.write_file("src/a.txt", "one\ntwo\nthree\ntwo\n")
        self.assertEqual((w.path, w.bytes), ("src/a.txt", 18))
        r = s.read_file("src/a.txt", offset=2, limit=2)
        self.assertIsInstance(r, FileContent)
        self.assertEqual((r.content, r.lines, r.truncated), ("two\nthree\n", 2, True))

        with self.assertRaises(CorralError) as cm:
            s.edit_file("src/a.txt", "two", "2")
        self.assertEqual(cm.exception.code, "ambiguous")
        with self.assertRaises(CorralError) as cm:
            s.edit_file("src/a.txt", "four", "4")
        self.assertEqual(cm.exception.code, "not_found")
        self.assertEqual(s.edit_file("src/a.txt", "two", "2", all=True).replacements, 2)
        self.assertEqual(s.edit_file("src/a.txt", "one", "1").replacements, 1)
        self.assertEqual(s.read_file("src/a.txt").content, "1\n2\nthree\n2\n")

        ls = s.list_dir(depth=2)
        self.assertIsInstance(ls, DirListing)
        names = {(e.name, e.type) for e in ls.entries}
        self.assertIn(("src", "dir"), names)
        self.assertIn(("src/a.txt", "file"), names)

        g = s.grep("THREE", glob="*.txt", ignore_case=True)
        self.assertEqual([(m.path, m.line, m.text) for m in g.matches], [("src/a.txt", 3, "three")])
        self.assertEqual(s.grep("three", glob="*.c").matches, [])

        b = s.bash("cd src && cat a.txt | wc -l && echo oops >&2; exit 3")
        self.assertIsInstance(b, RunResult)
        self.assertEqual((b.exit_status, b.ended_by, b.stdout.strip(), b.stderr, b.cwd),
                         (3, "exit", "4", "oops\n", "src"))
        self.assertFalse(b.ok)
        self.assertGreater(b.wall_ms, 0)
        self.assertEqual(b.denials, [])
        self.assertEqual(s.bash("tr a-z A-Z", stdin="piped\n").stdout, "PIPED\n")
        e = s.exec(["cat", "a.txt"])  # relative to the session's directory, src
        self.assertEqual((e.exit_status, e.stdout, e.cwd), (0, "1\n2\nthree\n2\n", None))
        self.assertTrue(e.ok)

        job = s.bash_background("echo started; while sleep 0.05; do echo tick; done")
        self.assertIsInstance(job, Job)
        self.assertIn(job.id, s.status().jobs)
        time.sleep(0.3)
        out = job.output()
        self.assertTrue(out.running)
        self.assertTrue(out.stdout.startswith("started\ntick\n"), out.stdout)
        killed = job.kill()
        self.assertEqual((killed.ended_by, killed.job), ("cancelled", job.id))
        self.assertEqual(job.result(5).ended_by, "cancelled")
        self.assertFalse(job.running())
        self.assertFalse(s.cancel(job.id))  # no longer running

        ej = s.exec_background(["sleep", "30"])
        self.assertTrue(s.cancel(ej))
        self.assertEqual(ej.result(10).ended_by, "cancelled")
        self.assertEqual(s.status().running, [])

    def test_escape_is_an_error_the_caller_reads(self):
        s = self.s
        # allowed twins first: inside the root it works
        s.write_file("ok.txt", "x")
        self.assertEqual(s.read_file("ok.txt").content, "x")
        for path in ("../../../etc/passwd", "/etc/passwd"):
            with self.assertRaises(CorralError) as cm:
                s.read_file(path)
            self.assertEqual(cm.exception.code, "escape")
            self.assertIn(path, cm.exception.message)
            self.assertEqual(cm.exception.tool, "read_file")
        target = "/tmp/corral-pyclient-escape-%d" % os.getpid()
        with self.assertRaises(CorralError) as cm:
            s.write_file(target, "pwned")
        self.assertEqual(cm.exception.code, "escape")
        self.assertFalse(os.path.exists(target))
        os.symlink("/etc", os.path.join(self.root, "etc-link"))
        with self.assertRaises(CorralError) as cm:
            s.read_file("etc-link/passwd")
        self.assertEqual(cm.exception.code, "refused")
        # a command writing outside the root fails; the same inside succeeds
        r = s.bash("echo pwned > %s" % target)
        self.assertNotEqual(r.exit_status, 0)
        self.assertIn("ermission denied", r.stderr)
        self.assertFalse(os.path.exists(target))
        for d in r.denials:
            self.assertIsInstance(d, Denial)
            self.assertTrue(d.hint)
        self.assertEqual(s.bash("echo fine > inside.txt").exit_status, 0)
        with open(os.path.join(self.root, "inside.txt")) as f:
            self.assertEqual(f.read(), "fine\n")

    def test_timeout(self):
        t = time.monotonic()
        r = self.s.bash("sleep 10", timeout=0.5)
        self.assertLess(time.monotonic() - t, 5)
        self.assertEqual((r.timed_out, r.ended_by, r.exit_status), (True, "timeout", None))
        # the client-side wait: CallTimeout, the call goes on until cancelled
        c = self.s.start("bash", command="sleep 10")
        with self.assertRaises(CallTimeout) as cm:
            c.result(timeout=0.2)
        self.assertIsInstance(cm.exception, TimeoutError)
        self.assertEqual(cm.exception.code, "timeout")
        self.assertFalse(c.done())
        self.assertTrue(c.cancel())
        self.assertEqual(c.result(10).ended_by, "cancelled")

    def test_cancel_from_another_thread(self):
        s = self.s
        box = {}
        th = threading.Thread(target=lambda: box.setdefault("r", s.bash("sleep 30", id="long")))
        t = time.monotonic()
        th.start()
        while "long" not in s.status().running:
            self.assertLess(time.monotonic() - t, 10)
            time.sleep(0.02)
        self.assertTrue(s.cancel("long"))
        th.join(10)
        self.assertFalse(th.is_alive())
        self.assertEqual(box["r"].ended_by, "cancelled")
        self.assertLess(time.monotonic() - t, 10)
        self.assertEqual(s.bash("echo next").stdout, "next\n")  # the session goes on

    def test_cancel_from_asyncio(self):
        s = self.s

        async def main():
            task = asyncio.ensure_future(s.acall("bash", command="sleep 30", id="aio"))
            await asyncio.sleep(0.3)
            task.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await task
            t = time.monotonic()
            while "aio" in s.status().running:
                self.assertLess(time.monotonic() - t, 10)
                await asyncio.sleep(0.02)
            r = await asyncio.gather(*(s.acall("bash", command="echo %d" % i) for i in range(3)))
            return [x.stdout for x in r]

        self.assertEqual(asyncio.run(main()), ["0\n", "1\n", "2\n"])

    def test_eight_overlapping_calls(self):
        s = self.s
        res = [None] * 8
        go = threading.Barrier(8)

        def one(i):
            go.wait()
            res[i] = s.bash("sleep 1; echo %d" % i)

        ths = [threading.Thread(target=one, args=(i,)) for i in range(8)]
        t = time.monotonic()
        for th in ths:
            th.start()
        for th in ths:
            th.join(30)
        took = time.monotonic() - t
        self.assertEqual([r.stdout for r in res], ["%d\n" % i for i in range(8)])
        self.assertLess(took, 6, "8 calls of 1 s took %.1f s: they did not overlap" % took)
        # and through Call handles, file tools mixed in
        calls = [s.start("bash", command="echo b%d" % i) for i in range(4)]
        calls += [s.start("write_file", path="f%d" % i, content=str(i)) for i in range(4)]
        self.assertEqual([c.result(30).stdout for c in calls[:4]], ["b%d\n" % i for i in range(4)])
        self.assertEqual([c.result(30).bytes for c in calls[4:]], [1] * 4)

    def test_shell_state(self):
        s = self.s
        s.bash("mkdir -p a/b && cd a/b && export GREETING=hello && X=unexported")
        r = s.bash("pwd; echo $GREETING-${X:-none}")
        self.assertEqual(r.cwd, "a/b")
        self.assertEqual(r.stdout.splitlines()[1], "hello-none")
        self.assertTrue(r.stdout.splitlines()[0].endswith("/a/b"))
        self.assertEqual(s.exec(["sh", "-c", "echo $GREETING; pwd"]).stdout.split("\n")[0], "hello")
        self.assertEqual(s.bash("echo $ONCE", env={"ONCE": "1"}).stdout, "1\n")
        self.assertEqual(s.bash("echo ${ONCE:-unset}").stdout, "unset\n")
        # a timed-out call leaves no state
        s.bash("cd / ; cd .. ; export GREETING=changed; sleep 5", timeout=0.3)
        r = s.bash("echo $GREETING")
        self.assertEqual((r.stdout, r.cwd), ("hello\n", "a/b"))
        self.assertEqual(s.status().cwd, "a/b")

    def test_streaming(self):
        got = []
        r = self.s.bash("echo one; sleep 0.2; echo two >&2", on_output=lambda st, d: got.append((st, d)))
        self.assertEqual(got, [("stdout", "one\n"), ("stderr", "two\n")])
        self.assertEqual((r.stdout, r.stderr), ("one\n", "two\n"))

    def test_output_clipping(self):
        r = self.s.bash("head -c 100000 /dev/zero | tr '\\0' x", max_output=1000)
        self.assertTrue(r.stdout_truncated)
        self.assertEqual(r.stdout_bytes, 100000)
        self.assertLess(len(r.stdout), 2000)
        # binary output (a NUL byte) still gives the whole result
        r = self.s.exec(["head", "-c", "100", "/dev/zero"])
        self.assertEqual((r.exit_status, r.stdout, r.stdout_bytes), (0, "\0" * 100, 100))

    def test_bad_arguments(self):
        s = self.s
        with self.assertRaises(CorralError) as cm:
            s.bash(3)  # type: ignore[arg-type]
        self.assertEqual(cm.exception.code, "bad_request")
        self.assertIn('"command" must be a string', cm.exception.message)
        with self.assertRaises(TypeError):
            s.exec("ls -l")  # type: ignore[arg-type]
        with self.assertRaises(CorralError) as cm:
            s.list_dir(depth=-1)
        self.assertEqual(cm.exception.code, "bad_request")
        with self.assertRaises(CorralError) as cm:
            s.call("frobnicate")
        self.assertEqual(cm.exception.code, "unknown_tool")
        self.assertIn("one of bash", cm.exception.message)
        with self.assertRaises(CorralError) as cm:
            s.call("read_file", path="x", bogus=1)
        self.assertIn('unknown argument "bogus"', cm.exception.message)
        with self.assertRaises(CorralError) as cm:
            s.bash("true", timeout=-1)
        self.assertEqual(cm.exception.code, "bad_request")
        c = s.start("bash", command="sleep 5", id="dup")
        with self.assertRaises(CorralError) as cm:
            s.start("bash", command="true", id="dup")
        self.assertEqual(cm.exception.code, "duplicate_id")
        c.cancel()
        with self.assertRaises(CorralError) as cm:
            s.write_file("big", "x" * (17 << 20))
        self.assertEqual(cm.exception.code, "too_large")
        self.assertEqual(s.bash("echo alive").stdout, "alive\n")
        with self.assertRaises(CorralError) as cm:
            Session(root=self.root, corral="/nonexistent/corral")
        self.assertEqual(cm.exception.code, "setup")
        self.assertIn("/nonexistent/corral", cm.exception.message)
        with self.assertRaises(CorralError) as cm:
            Session(root=self.root, corral=CORRAL, options=["--net", "bogus"])
        self.assertEqual(cm.exception.code, "setup")
        self.assertIn("--net", cm.exception.message)
        with self.assertRaises(CorralError) as cm:
            Session(root=os.path.join(self.root, "missing"), corral=CORRAL)
        self.assertEqual(cm.exception.code, "setup")
        with self.assertRaises(TypeError):
            Session(root=self.root, corral=CORRAL, options="--net loopback")  # type: ignore[arg-type]


class CloseTest(unittest.TestCase):
    def test_close_leaves_nothing(self):
        root = make_root()
        try:
            s = Session(root=root, corral=CORRAL)
            job = s.bash_background("sleep 300 & setsid sleep 300 & wait")
            running = s.start("bash", command="sleep 300")
            while running.id not in s.status().running:
                time.sleep(0.02)
            time.sleep(0.2)
            procs = tree(s.pid)
            self.assertGreaterEqual(len(procs), 6, procs)  # supervisor, template, helper, 2 keepers, sleeps
            self.assertEqual(s.close(), 0)
            self.assertEqual(running.result(5).ended_by, "cancelled")
            self.assertEqual(job.result(5).ended_by, "cancelled")
            table = proc_table()
            left = {p for p, start in procs.items() if p in table and table[p][1] == start}
            self.assertEqual(left, set(), "processes left after close()")
            with self.assertRaises(SessionClosed):
                s.status()
            self.assertEqual(s.close(), 0)  # idempotent
            self.assertEqual([e for e in os.listdir(root)], [])
        finally:
            shutil.rmtree(root, ignore_errors=True)

    def test_context_manager(self):
        root = make_root()
        try:
            with Session(root=root, corral=CORRAL) as s:
                pid = s.pid
                self.assertEqual(s.bash("echo hi").stdout, "hi\n")
                procs = tree(pid)
            self.assertEqual(s._proc.returncode, 0)
            table = proc_table()
            self.assertEqual({p for p, start in procs.items() if p in table and table[p][1] == start}, set())
        finally:
            shutil.rmtree(root, ignore_errors=True)

    def test_session_killed_under_a_call(self):
        root = make_root()
        try:
            s = Session(root=root, corral=CORRAL)
            c = s.start("bash", command="sleep 300")
            time.sleep(0.2)
            os.kill(s.pid, 9)
            with self.assertRaises(SessionClosed) as cm:
                c.result(10)
            self.assertIn("exit status", cm.exception.message)
            s.close()
        finally:
            shutil.rmtree(root, ignore_errors=True)


class PipInstallTest(unittest.TestCase):
    def test_pip_install_into_a_venv(self):
        # offline (--no-index --no-build-isolation): the build backend comes
        # from the system, setuptools >= 61 (pyproject metadata) and wheel
        try:
            import ensurepip  # noqa: F401
            import venv  # noqa: F401

            import setuptools
            import wheel  # noqa: F401
            if int(setuptools.__version__.split(".")[0]) < 61:
                raise ImportError("setuptools %s is older than 61" % setuptools.__version__)
        except ImportError as e:
            if MUST_WORK:
                raise
            self.skipTest("%s (python3-venv, python3-setuptools, python3-wheel: scripts/install-deps.sh)" % e)
        tmp = tempfile.mkdtemp(prefix="corral-pyclient-pip.")
        root = make_root()
        try:
            src = os.path.join(tmp, "src")
            shutil.copytree(os.path.join(SRCDIR, "clients", "python"), src,
                            ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
            env = dict(os.environ, HOME=tmp, PIP_CACHE_DIR=os.path.join(tmp, "cache"), PYTHONPATH="")
            subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", os.path.join(tmp, "venv")],
                           check=True, env=env)
            py = os.path.join(tmp, "venv", "bin", "python")
            p = subprocess.run([py, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-index", src],
                               env=env, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            code = ("import corral, sys; assert corral.__file__.startswith(sys.prefix), corral.__file__\n"
                    "with corral.Session(root=sys.argv[1], corral=sys.argv[2]) as s:\n"
                    "    print(s.bash('echo from-venv').stdout, end='')\n")
            p = subprocess.run([py, "-c", code, root, CORRAL], env=env, cwd=tmp, capture_output=True, text=True)
            self.assertEqual((p.returncode, p.stdout), (0, "from-venv\n"), p.stderr)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
