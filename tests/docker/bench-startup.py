#!/usr/bin/env python3
"""Start-up cost of the docker provider against a bare `docker run`, interleaved.

  bench-startup.py CORRAL [ROUNDS] [IMAGE]

Each round runs both commands back to back, alternating which goes first,
so drift in the daemon's load hits both alike. Prints mean, median and
standard deviation per command, and corral's overhead over bare docker.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

corral = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 30
image = sys.argv[3] if len(sys.argv) > 3 else "corral-test-busybox"
root = tempfile.mkdtemp(prefix="corral-bench.")
os.chmod(root, 0o777)
cmds = {
    "corral": [corral, "run", "--root", root, "--provider", "docker", "--image", image, "--", "/bin/true"],
    "docker": ["docker", "run", "--rm", "--network", "none", image, "/bin/true"],
}
times = {k: [] for k in cmds}


def once(name):
    t0 = time.perf_counter()
    r = subprocess.run(cmds[name], stdin=subprocess.DEVNULL)
    dt = (time.perf_counter() - t0) * 1000
    if r.returncode != 0:
        sys.exit(f"{name} exited {r.returncode}")
    return dt


for name in cmds:  # warm-up
    once(name)
for i in range(rounds):
    order = list(cmds) if i % 2 == 0 else list(reversed(cmds))
    for name in order:
        times[name].append(once(name))
os.rmdir(root)
for name, ts in times.items():
    print(f"{name:7s} mean {statistics.mean(ts):7.1f} ms  median {statistics.median(ts):7.1f} ms  "
          f"sd {statistics.stdev(ts):5.1f} ms  (n={len(ts)})")
m = {k: statistics.median(v) for k, v in times.items()}
a = {k: statistics.mean(v) for k, v in times.items()}
print(f"overhead: median {100 * (m['corral'] / m['docker'] - 1):+.1f} %, mean {100 * (a['corral'] / a['docker'] - 1):+.1f} %")
