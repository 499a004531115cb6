# SPDX-License-Identifier: LGPL-2.1-or-later
"""A small client of `corral session` for the black-box tests and the bench."""
import json
import os
import select
import subprocess
import sys
import tempfile
import time

# The suites' tally: check() counts and prints one "ok -" or "FAIL -" line, report() ends the suite.
failures = []
passes = 0


def check(name, cond, detail=""):
    global passes
    if cond:
        passes += 1
        print("ok - " + name)
    else:
        failures.append(name)
        print("FAIL - %s %s" % (name, str(detail)[:1500]))


def scratch(prefix):
    """A scratch dir holding the session's root and, beside it, outside/secret (nobody's, as root)."""
    d = tempfile.mkdtemp(prefix=prefix)
    root = os.path.join(d, "root")
    outside = os.path.join(d, "outside")
    os.mkdir(root)
    os.mkdir(outside)
    with open(os.path.join(outside, "secret"), "w") as f:
        f.write("SECRET\n")
    if os.geteuid() == 0:
        for p in (d, root, outside, os.path.join(outside, "secret")):
            os.chown(p, 65534, 65534)
    os.chmod(d, 0o755)
    return d, root, outside


def report():
    """Print the tally; exit 1 when a check failed."""
    print("%d passed, %d failed" % (passes, len(failures)))
    if failures:
        print("failed: " + ", ".join(failures))
        sys.exit(1)


class Session:
    def __init__(self, corral, root, *opts, env=None):
        self.p = subprocess.Popen([corral, "session", "--root", root, *opts],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env)
        self.buf = b""
        self.events = []  # every event seen, in order
        self.unclaimed = []  # the events no wait() has returned yet (wait scans these, not the history)
        self.next_id = 1000

    def send_raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, req):
        self.send_raw(json.dumps(req).encode() + b"\n")

    def _read_event(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no event within %.1f s; seen: %r" % (timeout, self.events[-5:]))
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                chunk = os.read(self.p.stdout.fileno(), 1 << 16)
                if not chunk:
                    raise EOFError("corral session closed stdout; stderr: %r" % self.p.stderr.read())
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        self.last_line = line
        ev = json.loads(line)
        self.events.append(ev)
        self.unclaimed.append(ev)
        return ev

    def wait(self, id_, kinds=("result", "error"), timeout=30):
        """The first event for |id_| of one of |kinds| (events already seen count)."""
        while True:
            for i, ev in enumerate(self.unclaimed):
                if ev.get("id") == id_ and ev.get("event") in kinds:
                    del self.unclaimed[i]
                    return ev
            self._read_event(timeout)

    def call(self, tool, wait_s=30, **args):
        self.next_id += 1
        req = {"id": self.next_id, "tool": tool}
        req.update(args)
        self.send(req)
        return self.wait(self.next_id, timeout=wait_s)

    def close(self, timeout=20):
        """End of stdin; read every remaining event (the session may block on a full stdout otherwise)."""
        rest, _ = self.p.communicate(timeout=timeout)  # closes stdin first
        for line in (self.buf + rest).split(b"\n"):
            if line.strip():
                self.events.append(json.loads(line))
        self.buf = b""
        return self.p.returncode
