#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Docker session latency from a Python client (docs/sessions.md, docker).

    python3 bench/session-docker.py [--corral PATH] [--image IMAGE] [--rounds N] [--json FILE]

Interleaved, from one Python process holding one
`corral session --provider docker`:
  exec ["/bin/true"]  vs  `docker exec CONTAINER /bin/true` of the same container
  bash "true"         vs  `docker exec CONTAINER bash -c true` (when the image has bash)
  session start (spawn to first answer)  vs  `corral run --provider docker -- /bin/true`
then 500 sequential calls checked for leaks (supervisor fds, its
processes, entries of the session's state directory). Prints a table;
never asserts timings. The image: bench/make-image.sh's (busybox) by default.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "session"))
from sessionlib import Session  # noqa: E402


def med(xs):
    return statistics.median(xs) * 1e3


def container_of(sid):
    out = subprocess.run(["docker", "ps", "-q", "--filter", "label=io.corral.session=" + sid],
                         capture_output=True, text=True).stdout.split()
    if len(out) != 1:
        sys.exit("expected one container for session %s, found %r" % (sid, out))
    return out[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corral", default=os.environ.get("CORRAL", "build/corral"))
    ap.add_argument("--image", default="corral-bench-busybox:latest")
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--json")
    a = ap.parse_args()
    root = tempfile.mkdtemp(prefix="corral-bench-dsess.")
    if os.geteuid() == 0:
        os.chown(root, 65534, 65534)
    opts = ("--provider", "docker", "--image", a.image)
    res = {"image": a.image}
    s = Session(a.corral, root, *opts)
    sid = s.call("status", wait_s=60)["session_id"]
    ctr = container_of(sid)
    has_bash = s.call("exec", argv=["/bin/bash", "-c", "true"]).get("exit_status") == 0
    for _ in range(10):
        s.call("exec", argv=["/bin/true"])
        subprocess.run(["docker", "exec", ctr, "/bin/true"])
    rows = {"exec": [], "dexec": [], "bash": [], "dbash": []}
    for _ in range(a.rounds):
        t = time.perf_counter(); s.call("exec", argv=["/bin/true"]); rows["exec"].append(time.perf_counter() - t)
        t = time.perf_counter(); subprocess.run(["docker", "exec", ctr, "/bin/true"]); rows["dexec"].append(time.perf_counter() - t)
        if has_bash:
            t = time.perf_counter(); s.call("bash", command="true"); rows["bash"].append(time.perf_counter() - t)
            t = time.perf_counter(); subprocess.run(["docker", "exec", ctr, "/bin/bash", "-c", "true"]); rows["dbash"].append(time.perf_counter() - t)
    res["exec_true_ms"] = med(rows["exec"])
    res["docker_exec_true_ms"] = med(rows["dexec"])
    if has_bash:
        res["bash_true_ms"] = med(rows["bash"])
        res["docker_exec_bash_true_ms"] = med(rows["dbash"])

    # 500 calls leak nothing: supervisor fds and processes, the state directory's entries.
    pid = s.p.pid
    state = [d for d in os.listdir("/tmp") if d.startswith("corral-dsession.")]

    def entries():
        n = 0
        for d in state:
            for sub in ("st", ".corral"):
                try:
                    n += len(os.listdir(os.path.join("/tmp", d, sub)))
                except OSError:
                    pass
        return n
    fds0, procs0, ent0 = len(os.listdir("/proc/%d/fd" % pid)), len(os.listdir("/proc/%d/task" % pid)), entries()
    for i in range(500):
        if i % 2 or not has_bash:
            s.call("exec", argv=["/bin/true"])
        else:
            s.call("bash", command="true")
    time.sleep(0.3)
    res["leak_fds"] = len(os.listdir("/proc/%d/fd" % pid)) - fds0
    res["leak_threads"] = len(os.listdir("/proc/%d/task" % pid)) - procs0
    res["leak_state_entries"] = entries() - ent0
    s.close(timeout=60)

    # Session start (container up, first answer) vs one throwaway-container run.
    st, run = [], []
    for _ in range(max(5, a.rounds // 20)):
        t = time.perf_counter()
        x = Session(a.corral, root, *opts)
        x.call("status", wait_s=60)
        st.append(time.perf_counter() - t)
        x.close(timeout=60)
        t = time.perf_counter()
        subprocess.run([a.corral, "run", "--root", root, *opts, "--", "/bin/true"])
        run.append(time.perf_counter() - t)
    res["session_start_ms"] = med(st)
    res["corral_run_docker_true_ms"] = med(run)

    print("docker session figures (median of %d interleaved rounds, image %s)" % (a.rounds, a.image))
    print("  exec /bin/true   %8.2f ms   docker exec C /bin/true        %8.2f ms   ratio %.2f" %
          (res["exec_true_ms"], res["docker_exec_true_ms"], res["exec_true_ms"] / res["docker_exec_true_ms"]))
    if has_bash:
        print("  bash true        %8.2f ms   docker exec C bash -c true     %8.2f ms   ratio %.2f" %
              (res["bash_true_ms"], res["docker_exec_bash_true_ms"], res["bash_true_ms"] / res["docker_exec_bash_true_ms"]))
    print("  session start    %8.2f ms   corral run --provider docker   %8.2f ms   ratio %.2f" %
          (res["session_start_ms"], res["corral_run_docker_true_ms"],
           res["session_start_ms"] / res["corral_run_docker_true_ms"]))
    print("  500 calls: +%d fds, +%d threads, +%d state entries" %
          (res["leak_fds"], res["leak_threads"], res["leak_state_entries"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    try:
        os.rmdir(root)
    except OSError:
        pass


if __name__ == "__main__":
    main()
