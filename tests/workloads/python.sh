#!/usr/bin/env bash
# Python the way test suites use it: a unittest project discovered and run,
# tempfile under TMPDIR, threads, subprocess, multiprocessing with fork and
# pipes, signals, selectors, sqlite3, archives, a venv, a local package
# installed with pip --no-index, compileall, locale and time zones.
. "$(dirname "$0")/lib.sh"
[ -x "$PY" ] || need python3
R=$(mkroot)
mkdir -p "$R/proj/pkg" "$R/proj/tests"
cat > "$R/proj/pkg/__init__.py" <<'P'
def add(a, b):
    return a + b
P
cat > "$R/proj/pyproject.toml" <<'P'
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"
[project]
name = "pkg"
version = "0.1"
P
: > "$R/proj/tests/__init__.py"
cat > "$R/proj/tests/test_all.py" <<'P'
import concurrent.futures, locale, multiprocessing as mp, os, selectors, shutil
import signal, sqlite3, subprocess, sys, tarfile, tempfile, threading, time
import unittest, zipfile

import pkg


def child(conn, x):
    conn.send(x * 2)
    conn.close()


class T(unittest.TestCase):
    def test_pkg(self):
        self.assertEqual(pkg.add(2, 3), 5)

    def test_tempfile_in_tmpdir(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertTrue(d.startswith(os.environ["TMPDIR"]))
            with open(os.path.join(d, "f"), "w") as f:
                f.write("x" * 100000)
            shutil.copytree(d, d + ".copy")
            shutil.rmtree(d + ".copy")
        with tempfile.NamedTemporaryFile() as f, tempfile.SpooledTemporaryFile(10) as s:
            f.write(b"abc"); s.write(b"0123456789abc")

    def test_threads(self):
        # 8 workers: glibc gives threads their own malloc arenas, so many
        # more hit the 1G address-space limit (see docs/workloads.md).
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as ex:
            self.assertEqual(sum(ex.map(lambda i: i * i, range(1000))), 332833500)
        lock = threading.Lock(); n = [0]
        def inc():
            for _ in range(10000):
                with lock:
                    n[0] += 1
        ts = [threading.Thread(target=inc) for _ in range(8)]
        [t.start() for t in ts]; [t.join() for t in ts]
        self.assertEqual(n[0], 80000)

    def test_subprocess(self):
        out = subprocess.run(["sh", "-c", "echo $((6*7)); ls / >/dev/null 2>&1; exit 3"],
                             capture_output=True, text=True)
        self.assertEqual((out.stdout, out.returncode), ("42\n", 3))
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        p.terminate()
        self.assertEqual(p.wait(10), -signal.SIGTERM)
        self.assertEqual(subprocess.check_output("echo hi | tr a-z A-Z", shell=True), b"HI\n")

    def test_multiprocessing_fork_pipe(self):
        ctx = mp.get_context("fork")
        parent, kid = ctx.Pipe()
        p = ctx.Process(target=child, args=(kid, 21))
        p.start()
        self.assertEqual(parent.recv(), 42)
        p.join(10)
        self.assertEqual(p.exitcode, 0)

    def test_signals_and_selectors(self):
        got = []
        signal.signal(signal.SIGUSR1, lambda *a: got.append(1))
        os.kill(os.getpid(), signal.SIGUSR1)
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        signal.signal(signal.SIGALRM, lambda *a: got.append(2))
        time.sleep(0.2)
        self.assertEqual(got, [1, 2])
        r, w = os.pipe()
        with selectors.DefaultSelector() as sel:
            sel.register(r, selectors.EVENT_READ)
            os.write(w, b"x")
            self.assertEqual(len(sel.select(1)), 1)

    def test_sqlite(self):
        db = sqlite3.connect("t.db")
        db.execute("pragma journal_mode=wal")
        db.execute("create table if not exists t(x)")
        db.executemany("insert into t values (?)", [(i,) for i in range(1000)])
        db.commit()
        self.assertGreaterEqual(db.execute("select count(*) from t").fetchone()[0], 1000)

    def test_archives(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "a")
            with zipfile.ZipFile(p + ".zip", "w", zipfile.ZIP_DEFLATED) as z:
                z.writestr("x.txt", "hello" * 1000)
            with tarfile.open(p + ".tar.xz", "w:xz") as t:
                t.add(p + ".zip", arcname="a.zip")
            shutil.unpack_archive(p + ".tar.xz", d + "/out")
            self.assertTrue(zipfile.is_zipfile(d + "/out/a.zip"))

    def test_locale_and_time(self):
        locale.setlocale(locale.LC_ALL, "")
        self.assertIn(locale.getpreferredencoding(False).upper().replace("-", ""), ("UTF8", "ANSI_X3.41968"))
        os.environ["TZ"] = "Europe/Paris"; time.tzset()
        self.assertIn(time.strftime("%Z", time.localtime(0)), ("CET", "CEST"))


if __name__ == "__main__":
    unittest.main()
P
give "$R"
inside() { "$C" run --root "$R/proj" --timeout 240 --cpu 240 "$@"; }

step "unittest discover (tempfile, threads, subprocess, fork+pipe, signals, sqlite, archives)" \
	inside -- "$PY" -m unittest discover -s tests -t . -v
step "python3 -m venv (with pip), pip install --no-index --no-build-isolation ." inside -- sh -c \
	"$PY -m venv --system-site-packages venv && venv/bin/pip install -q --no-index --no-build-isolation . && venv/bin/python -c 'import pkg; assert pkg.add(1, 1) == 2'"
step "compileall (serial)" inside -- "$PY" -m compileall -q pkg tests
step "python3 -X importtime, faulthandler, tracemalloc" inside -- "$PY" -X faulthandler -X tracemalloc -c 'import json, email, http.client'
expect_eq "HOME is the run's own and writable (~/.cache), not the root" "ok" \
	"$(inside -- "$PY" -c 'import os, pathlib; p = pathlib.Path.home() / ".cache" / "x"; p.parent.mkdir(parents=True, exist_ok=True); p.write_text("1"); print("ok" if os.path.realpath(os.environ["HOME"]) != os.path.realpath(os.getcwd()) and not os.path.exists(".cache") else "no")' 2>&1)"
finish
