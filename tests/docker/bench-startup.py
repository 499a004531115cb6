#!/usr/bin/env python3
"""Start-up cost of the docker provider against a bare `docker run`, interleaved.

  bench-startup.py CORRAL [ROUNDS] [IMAGE]

Each round runs `corral run --provider docker --image IMAGE -- /bin/true`
and `docker run --rm --network none IMAGE /bin/true` back to back,
alternating which goes first, so drift in the daemon's load hits both
alike. Reports per command mean/median/sd, the median of the per-round
ratios (robust to a loaded host), and corral's own time outside the docker
client (outer wall time minus the engine's wall_ms, from a --json run).
"""
import json
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
base = [corral, "run", "--root", root, "--provider", "docker", "--image", image]
cmds = {
    "corral": base + ["--", "/bin/true"],
    "docker": ["docker", "run", "--rm", "--network", "none", image, "/bin/true"],
}
times = {k: [] for k in cmds}
ratios, outside = [], []


def once(argv):
    t0 = time.perf_counter()
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    dt = (time.perf_counter() - t0) * 1000
    if r.returncode != 0:
        sys.exit(f"{argv[0]} exited {r.returncode}")
    return dt, r.stdout


for name in cmds:  # warm-up
    once(cmds[name])
for i in range(rounds):
    order = list(cmds) if i % 2 == 0 else list(reversed(cmds))
    got = {}
    for name in order:
        got[name] = once(cmds[name])[0]
        times[name].append(got[name])
    ratios.append(got["corral"] / got["docker"])
    dt, out = once(base + ["--json", "--", "/bin/true"])
    outside.append(dt - json.loads(out)["wall_ms"])
os.rmdir(root)
for name, ts in times.items():
    print(f"{name:7s} mean {statistics.mean(ts):7.1f} ms  median {statistics.median(ts):7.1f} ms  "
          f"sd {statistics.stdev(ts):5.1f} ms  (n={len(ts)})")
print(f"corral/docker per-round ratio: median {statistics.median(ratios):.3f}  "
      f"(quartiles {statistics.quantiles(ratios, n=4)[0]:.3f} .. {statistics.quantiles(ratios, n=4)[2]:.3f})")
print(f"corral's own time outside the docker client: median {statistics.median(outside):.1f} ms")
