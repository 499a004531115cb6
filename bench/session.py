#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Session latency and memory from a Python client (issue: agent sessions).

    python3 bench/session.py [--corral PATH] [--against PATH] [--rounds N] [--json FILE]

Interleaved, from one Python process holding one `corral session`:
  exec ["/bin/true"]  vs  subprocess.run(["/bin/true"])
  bash "true"         vs  subprocess.run(["bash", "-c", "true"])
  session start (spawn to first answer)  vs  `corral run -- /bin/true`
then the idle resident memory of the session's processes (RSS and PSS, each
address space once: a keeper shares the template's),
and 1000 sequential calls checked for leaks (supervisor fds, processes,
the session tmp's entries). Prints a table; never asserts timings.
--against PATH: a second corral (another build) held in a session of its
own and interleaved in the same rounds (before/after figures).
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


def tree(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for t in os.listdir("/proc/%d/task" % p):
                with open("/proc/%d/task/%s/children" % (p, t)) as f:
                    todo += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return out


def mem_kb(pid, key):
    try:
        with open("/proc/%d/%s" % (pid, "smaps_rollup" if key == "Pss" else "status")) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def distinct_vm(pids):
    """|pids| less those sharing an address space with an earlier one (kcmp KCMP_VM): a
    session's spare keeper and its command-to-be share one until the call's execve, and
    summing their RSS would count the same pages twice. All of |pids| where kcmp is refused."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    out = []
    for p in pids:
        if not any(libc.syscall(312, p, q, 1, 0, 0) == 0 for q in out):  # SYS_kcmp, KCMP_VM
            out.append(p)
    return out


def med(xs):
    return statistics.median(xs) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corral", default=os.environ.get("CORRAL", "build/corral"))
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--json")
    ap.add_argument("--against")
    a = ap.parse_args()
    root = tempfile.mkdtemp(prefix="corral-bench-sess.")
    if os.geteuid() == 0:
        os.chown(root, 65534, 65534)
    res = {}
    s = Session(a.corral, root)
    s.call("status")
    for _ in range(20):
        s.call("exec", argv=["/bin/true"])
        s.call("bash", command="true")
    rows = {"exec": [], "py_true": [], "bash": [], "py_bash": [], "exec_b": [], "bash_b": []}
    b = Session(a.against, root) if a.against else None
    if b:
        b.call("status")
        for _ in range(20):
            b.call("exec", argv=["/bin/true"])
            b.call("bash", command="true")
    for _ in range(a.rounds):
        if b:
            t = time.perf_counter(); b.call("exec", argv=["/bin/true"]); rows["exec_b"].append(time.perf_counter() - t)
            t = time.perf_counter(); b.call("bash", command="true"); rows["bash_b"].append(time.perf_counter() - t)
        t = time.perf_counter(); s.call("exec", argv=["/bin/true"]); rows["exec"].append(time.perf_counter() - t)
        t = time.perf_counter(); subprocess.run(["/bin/true"]); rows["py_true"].append(time.perf_counter() - t)
        t = time.perf_counter(); s.call("bash", command="true"); rows["bash"].append(time.perf_counter() - t)
        t = time.perf_counter(); subprocess.run(["bash", "-c", "true"]); rows["py_bash"].append(time.perf_counter() - t)
    res["exec_true_ms"] = med(rows["exec"])
    res["subprocess_true_ms"] = med(rows["py_true"])
    res["bash_true_ms"] = med(rows["bash"])
    res["subprocess_bash_true_ms"] = med(rows["py_bash"])
    if b:
        res["against_exec_true_ms"] = med(rows["exec_b"])
        res["against_bash_true_ms"] = med(rows["bash_b"])
        b.close()

    # Idle memory of every process of the session (supervisor, template, mediation helper).
    time.sleep(0.5)
    pids = tree(s.p.pid)
    res["idle_processes"] = len(pids)
    res["idle_address_spaces"] = len(distinct_vm(pids))
    res["idle_rss_kb"] = sum(mem_kb(p, "VmRSS") for p in distinct_vm(pids))
    res["idle_pss_kb"] = sum(mem_kb(p, "Pss") for p in distinct_vm(pids))

    # 1000 calls leak nothing: supervisor fds, processes, tmp entries.
    tmp = s.call("bash", command="echo $TMPDIR").get("stdout", "").strip()
    time.sleep(0.3)  # the last call's keeper gone, the next spare forked
    fds0 = len(os.listdir("/proc/%d/fd" % s.p.pid))
    procs0 = len(tree(s.p.pid))
    tmp0 = sorted(os.listdir(tmp)) + sorted(os.listdir(os.path.join(tmp, ".corral")))
    for i in range(1000):
        if i % 2:
            s.call("exec", argv=["/bin/true"])
        else:
            s.call("bash", command="true")
    time.sleep(0.3)
    fds1 = len(os.listdir("/proc/%d/fd" % s.p.pid))
    procs1 = len(tree(s.p.pid))
    tmp1 = sorted(os.listdir(tmp)) + sorted(os.listdir(os.path.join(tmp, ".corral")))
    res["leak_fds"] = fds1 - fds0
    res["leak_processes"] = procs1 - procs0
    res["leak_tmp_entries"] = len(tmp1) - len(tmp0)
    s.close()

    # Session start vs one corral run.
    st, run = [], []
    for _ in range(max(10, a.rounds // 10)):
        t = time.perf_counter()
        x = Session(a.corral, root)
        x.call("status")
        st.append(time.perf_counter() - t)
        x.close()
        t = time.perf_counter()
        subprocess.run([a.corral, "run", "--root", root, "--", "/bin/true"])
        run.append(time.perf_counter() - t)
    res["session_start_ms"] = med(st)
    res["corral_run_true_ms"] = med(run)
    os.rmdir(root) if not os.listdir(root) else None

    print("session figures (median of %d interleaved rounds)" % a.rounds)
    print("  exec /bin/true        %7.3f ms   subprocess.run(['/bin/true'])        %7.3f ms   ratio %.2f" %
          (res["exec_true_ms"], res["subprocess_true_ms"], res["exec_true_ms"] / res["subprocess_true_ms"]))
    print("  bash true             %7.3f ms   subprocess.run(['bash','-c','true']) %7.3f ms   ratio %.2f" %
          (res["bash_true_ms"], res["subprocess_bash_true_ms"], res["bash_true_ms"] / res["subprocess_bash_true_ms"]))
    if b:
        print("  --against %s: exec /bin/true %7.3f ms (ratio %.2f), bash true %7.3f ms (ratio %.2f)" %
              (a.against, res["against_exec_true_ms"], res["against_exec_true_ms"] / res["subprocess_true_ms"],
               res["against_bash_true_ms"], res["against_bash_true_ms"] / res["subprocess_bash_true_ms"]))
    print("  session start         %7.3f ms   corral run -- /bin/true              %7.3f ms   ratio %.2f" %
          (res["session_start_ms"], res["corral_run_true_ms"], res["session_start_ms"] / res["corral_run_true_ms"]))
    print("  idle: %d processes (%d address spaces), RSS %d KiB (each address space once), PSS %d KiB" %
          (res["idle_processes"], res["idle_address_spaces"], res["idle_rss_kb"], res["idle_pss_kb"]))
    print("  1000 calls: +%d fds, +%d processes, +%d tmp entries" %
          (res["leak_fds"], res["leak_processes"], res["leak_tmp_entries"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
