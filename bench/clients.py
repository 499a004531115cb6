#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Latency of one `bash` call of `true` through the Python and Node clients.

    python3 bench/clients.py [--corral build/corral] [--calls 200]

Python: clients/python's Session.bash("true") against the same process's
subprocess.run(["bash", "-c", "true"]) and the bare protocol (a JSON line
written to a second `corral session`, its result line read), alternating. Node: bench/clients.mjs
(clients/node's s.bash('true') against spawnSync('bash', ['-c', 'true'])).
Medians with p10/p90; never asserts timings.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "clients", "python"))
from corral import Session  # noqa: E402


def stats(xs):
    s = sorted(xs)
    q = lambda p: s[min(len(s) - 1, int(p * len(s)))] * 1e3  # noqa: E731
    return {"median": statistics.median(s) * 1e3, "p10": q(0.1), "p90": q(0.9)}


def fmt(st):
    return "%.2f ms (p10 %.2f, p90 %.2f)" % (st["median"], st["p10"], st["p90"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corral", default=os.path.join(here, "..", "build", "corral"))
    ap.add_argument("--calls", type=int, default=200)
    a = ap.parse_args()
    corral = os.path.abspath(a.corral)
    root = tempfile.mkdtemp(prefix="corral-bench-clients.")
    os.chmod(root, 0o755)
    if os.geteuid() == 0:
        os.chown(root, 65534, 65534)
    try:
        with Session(root=root, corral=corral) as s:
            for _ in range(20):
                s.bash("true")
                subprocess.run(["bash", "-c", "true"])
            raw = subprocess.Popen([corral, "session", "--root", root], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE)
            cl, ref, rl = [], [], []
            for i in range(a.calls):
                t = time.perf_counter(); s.bash("true"); cl.append(time.perf_counter() - t)  # noqa: E702
                t = time.perf_counter(); subprocess.run(["bash", "-c", "true"]); ref.append(time.perf_counter() - t)  # noqa: E702,E501
                t = time.perf_counter()
                raw.stdin.write(b'{"id": %d, "tool": "bash", "command": "true"}\n' % i)
                raw.stdin.flush()
                raw.stdout.readline()
                rl.append(time.perf_counter() - t)
            raw.stdin.close()
            raw.wait()
        py, pyref, pyraw = stats(cl), stats(ref), stats(rl)
        out = subprocess.run(["node", os.path.join(here, "clients.mjs"), "--corral", corral, "--calls", str(a.calls),
                              "--root", root], capture_output=True, text=True)
        node = json.loads(out.stdout) if out.returncode == 0 else None
    finally:
        shutil.rmtree(root, ignore_errors=True)
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print("load average %s, %d calls each, medians" % (load, a.calls))
    print("| client | `bash` of `true` through the client | reference | ratio |")
    print("| --- | --- | --- | --- |")
    print("| Python | %s | `subprocess.run([\"bash\", \"-c\", \"true\"])` %s | %.2f |"
          % (fmt(py), fmt(pyref), py["median"] / pyref["median"]))
    print("| (Python, no client: a JSON line written, the result line read) | %s | | %.2f |"
          % (fmt(pyraw), pyraw["median"] / pyref["median"]))
    if node:
        print("| Node | %s | `spawnSync('bash', ['-c', 'true'])` %s | %.2f |"
              % (fmt(node["client"]), fmt(node["ref"]), node["client"]["median"] / node["ref"]["median"]))
    else:
        print("node: %s" % (out.stderr.strip() or "failed"), file=sys.stderr)


if __name__ == "__main__":
    main()
