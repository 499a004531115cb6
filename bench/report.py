#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Turn bench/run.sh's raw results into tables, fits and a chart.

    report.py RESULTS_DIR [--doc docs/benchmarks.md] [--png FILE]

Reads RESULTS_DIR/{machine.json,latency.csv,skipped.tsv,throughput.csv,
rss*.json,strace-c.txt,perf-stat*.txt,ld-statistics*.txt,hyperfine.json},
writes RESULTS_DIR/summary.json and RESULTS_DIR/tables.md, renders the
latency chart with gnuplot when --png is given, and with --doc replaces each
block between "<!-- BEGIN GENERATED: NAME -->" and "<!-- END GENERATED: NAME -->"
in the document. Only the standard library; no timing assertions.
"""
import argparse
import csv
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys

LABELS = {
    "bare": ("bare exec", "/bin/true"),
    "floor": ("static posix_spawn floor", "bench/floor /bin/true"),
    "mechanism": ("mechanism floor: Landlock, seccomp, rlimits, supervisor clone",
                  "bench/mechanism $WS PATHS... -- /bin/true"),
    "floor-musl": ("static posix_spawn floor, musl", "bench/floor-musl /bin/true"),
    "mechanism-musl": ("mechanism floor, musl", "bench/mechanism-musl $WS PATHS... -- /bin/true"),
    "corral": ("corral", "corral run --root $WS -- /bin/true"),
    "corral-net-host": ("corral --net host", "corral run --root $WS --net host -- /bin/true"),
    "bwrap": ("bubblewrap", "bwrap --ro-bind / / --unshare-net --die-with-parent /bin/true"),
    "firejail": ("firejail", "firejail --quiet --noprofile --net=none /bin/true"),
    "docker": ("docker", "docker run --rm --network none corral-bench-busybox /bin/true"),
    "corral-docker": ("corral --provider docker",
                      "corral run --root $WS --provider docker --image corral-bench-busybox -- /bin/true"),
}
MAIN = list(LABELS)
POLICY = [1, 10, 100, 1000]
CONC = [1, 8, 64]


def pct(xs, p):
    """Percentile with linear interpolation between closest ranks."""
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * p / 100
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def linfit(xs, ys):
    """Least squares y = a + b x; returns (a, b, r2)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    b = sxy / sxx if sxx else 0.0
    a = my - b * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys))
    r2 = 1 - ss_res / ss_tot if ss_tot else 1.0
    return a, b, r2


def ms(us):
    return "—" if us is None or math.isnan(us) else f"{us / 1000:.2f}"


def ratio(a, b):
    if a is None or b is None or not b or math.isnan(a) or math.isnan(b):
        return "—"
    r = a / b
    return f"{r:.1f}×" if r >= 10 else f"{r:.2f}×"


def load(out):
    d = {"machine": {}, "rows": {}, "skipped": {}, "throughput": [], "rss": {}, "out": out}
    p = os.path.join(out, "machine.json")
    if os.path.exists(p):
        d["machine"] = json.load(open(p))
    p = os.path.join(out, "latency.csv")
    if os.path.exists(p):
        for r in csv.DictReader(open(p)):
            row = d["rows"].setdefault(r["row"], {"wall": [], "cpu": [], "batch": {}, "fail": 0, "conc": int(r["conc"])})
            if int(r["status"]) != 0:
                row["fail"] += 1
                continue
            row["wall"].append(float(r["wall_us"]))
            row["cpu"].append(float(r.get("cpu_us") or "nan"))
            row["batch"][int(r["round"])] = float(r["batch_us"])
    p = os.path.join(out, "skipped.tsv")
    if os.path.exists(p):
        for line in open(p):
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 2:
                d["skipped"][parts[0]] = parts[1]
    p = os.path.join(out, "throughput.csv")
    if os.path.exists(p):
        d["throughput"] = list(csv.DictReader(open(p)))
    for name in ("rss", "rss-bare", "rss-size"):
        p = os.path.join(out, name + ".json")
        if os.path.exists(p):
            d["rss"][name] = json.load(open(p))
    return d


def stats(row):
    w = row["wall"]
    b = list(row["batch"].values())
    return {
        "n": len(w), "failed": row["fail"],
        "median_us": statistics.median(w) if w else None,
        "p90_us": pct(w, 90) if w else None,
        "p10_us": pct(w, 10) if w else None,
        "mean_us": statistics.fmean(w) if w else None,
        "cpu_median_us": statistics.median(row["cpu"]) if row["cpu"] else None,
        "batch_median_us": statistics.median(b) if b else None,
        "batches": len(b),
    }


def status_cell(name, d, s):
    if name in d["skipped"]:
        return "skipped: " + d["skipped"][name]
    if s is None or not s["n"]:
        return "no successful runs" if s else "not measured"
    return ""


def failures_block(d):
    """The distinct stderr lines of the runs that failed, per row."""
    out = []
    for name, row in sorted(d["rows"].items()):
        if not row["fail"]:
            continue
        p = os.path.join(d["out"], "stderr", name + ".stderr")
        msgs = {}
        if os.path.exists(p):
            for line in open(p, errors="replace"):
                line = re.sub(r"corral-\d+-\d+", "corral-PID-N", line.strip())
                if line:
                    msgs[line[:200]] = msgs.get(line[:200], 0) + 1
        why = "; ".join(f"`{m}` ×{c}" for m, c in sorted(msgs.items(), key=lambda kv: -kv[1])[:3]) or "no message"
        out.append(f"- {name}: {row['fail']} failed run(s): {why}")
    return ("Failed runs (not counted in the figures), with what they printed:\n\n" + "\n".join(out)) if out else ""


def latency_table(d, S):
    bare = S.get("bare", {}).get("median_us")
    corral = S.get("corral", {}).get("median_us")
    lines = ["| launcher | runs | median ms | p90 ms | × bare | × corral | CPU ms (median) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name in MAIN:
        label, _ = LABELS[name]
        s = S.get(name)
        why = status_cell(name, d, s)
        if why:
            lines.append(f"| {label} | — | {why} | | | | |")
            continue
        fail = f" ({s['failed']} failed)" if s["failed"] else ""
        cpu = ms(s["cpu_median_us"]) + (" (client only)" if "docker" in name else "")
        lines.append(f"| {label} | {s['n']}{fail} | {ms(s['median_us'])} | {ms(s['p90_us'])} | "
                     f"{ratio(s['median_us'], bare)} | {ratio(s['median_us'], corral)} | {cpu} |")
    fails = failures_block(d)
    if fails:
        lines += ["", fails]
    cmds = ["", "CPU ms: user + system time of the launcher and every process it reaped (wait4), a figure"
            " that other load on the machine inflates far less than wall time; for docker it is only the"
            " client's, since the daemon, containerd and runc do the work.",
            "", "Commands, as run (paths shortened; `$WS` is a scratch root owned by nobody):", "", "```"]
    for name in MAIN:
        cmds.append(f"{LABELS[name][0]:26} {LABELS[name][1]}")
    cmds.append("```")
    return "\n".join(lines + cmds)


def privilege_block(d, S):
    names = [("setpriv-true", "`setpriv --reuid=65534 … /bin/true`"),
             ("corral-unpriv", "`setpriv --reuid=65534 … corral run -- /bin/true` (corral as nobody)"),
             ("corral", "`corral run -- /bin/true` as root (runs the command as nobody)"),
             ("corral-no-private-tmp", "`corral run --policy P -- /bin/true` as root, `fs.private_tmp: false`")]
    if not any(n in S or n in d["skipped"] for n, _ in names[:2]):
        return "not measured (the run was not as root)"
    lines = ["| launcher | runs | median ms | p90 ms | CPU ms (median) |", "| --- | ---: | ---: | ---: | ---: |"]
    for n, label in names:
        s = S.get(n)
        why = status_cell(n, d, s)
        lines.append(f"| {label} | — | {why} | | |" if why else
                     f"| {label} | {s['n']} | {ms(s['median_us'])} | {ms(s['p90_us'])} | {ms(s['cpu_median_us'])} |")
    # CPU time, not wall time: on a busy machine a difference of two noisy
    # wall-clock medians of a few ms says little; CPU time barely moves.
    try:
        sp, cu, cr, bare = (S[n]["cpu_median_us"] for n in ("setpriv-true", "corral-unpriv", "corral", "bare"))
        unpriv = cu - sp + bare
        diff = cr - unpriv
        if abs(diff) < 200:
            verdict = f"the difference ({diff / 1000:+.2f} ms) is within the noise of this subtraction (±0.2 ms)"
        elif diff > 0:
            verdict = f"root mode adds **{ms(diff)} ms** of CPU"
        else:
            verdict = (f"started as root corral uses **{ms(-diff)} ms less** CPU than started as nobody "
                       "(setpriv's share is only estimated by its run alone, so read this as ±0.2 ms)")
        lines += ["", f"In CPU time, corral started as nobody costs about {ms(unpriv)} ms once setpriv's own "
                  f"exec is taken out ({ms(cu)} − {ms(sp)} + {ms(bare)}); as root {ms(cr)} ms: {verdict} "
                  "(as root: identity switch, capability drop, and per-run cgroups — created, joined, killed "
                  "and removed for every run)."]
    except (KeyError, TypeError):
        pass
    try:
        nt, cr = S["corral-no-private-tmp"]["cpu_median_us"], S["corral"]["cpu_median_us"]
        cost = (f"costs **{ms(cr - nt)} ms** of CPU" if abs(cr - nt) >= 100 else
                f"costs no measurable CPU ({(cr - nt) / 1000:+.2f} ms)")
        lines += ["", f"Without the per-run private `/tmp` directory a run takes {ms(nt)} ms of CPU against "
                  f"{ms(cr)} ms: the private tmp {cost}; its wall-time cost depends on the filesystem it is "
                  f"made on (see the scratch-directory table below)."]
    except (KeyError, TypeError):
        pass
    return "\n".join(lines)


def corral_ratios(S):
    c = S.get("corral", {}).get("median_us")
    out = {}
    for name in MAIN:
        if name == "corral":
            continue
        m = S.get(name, {}).get("median_us")
        if c and m:
            out[name] = c / m
    return out


def ratios_block(d, S):
    c = S.get("corral", {}).get("median_us")
    if not c:
        why = d["skipped"].get("corral", "no successful corral runs")
        return f"corral itself was not measured: {why}."
    r = corral_ratios(S)
    parts = []
    for name, label in (("bare", "bare /bin/true"), ("floor", "the static posix_spawn floor"),
                        ("mechanism", "the mechanism floor (the same kernel work, no corral code)"),
                        ("floor-musl", "the static posix_spawn floor linked with musl, as corral is"),
                        ("mechanism-musl", "the mechanism floor linked with musl"),
                        ("bwrap", "bubblewrap"), ("firejail", "firejail"), ("docker", "docker run"),
                        ("corral-docker", "corral's own docker provider")):
        if name in r:
            v = r[name]
            parts.append(f"- vs {label}: **{v:.2f}×** ({ms(c)} ms against {ms(S[name]['median_us'])} ms)"
                         + (f" — {1 / v:.0f}× faster" if v < 0.5 else ""))
        else:
            parts.append(f"- vs {label}: not measured ({d['skipped'].get(name, 'no successful runs')})")
    return f"Median `corral run -- /bin/true` = **{ms(c)} ms**; corral ÷ other:\n\n" + "\n".join(parts)


def policy_block(d, S):
    pts = [(n, S[f"policy-{n}"]) for n in POLICY if S.get(f"policy-{n}", {}).get("n")]
    if not pts:
        why = d["skipped"].get("policy-1", "not measured")
        return f"skipped: {why}", {}
    lines = ["| extra read-only paths | runs | median ms | p90 ms | Δ vs 1 path ms | marginal µs/path |",
             "| ---: | ---: | ---: | ---: | ---: | ---: |"]
    base = pts[0][1]["median_us"]
    prev = None
    for n, s in pts:
        marg = "—"
        if prev:
            marg = f"{(s['median_us'] - prev[1]['median_us']) / (n - prev[0]):.2f}"
        lines.append(f"| {n} | {s['n']} | {ms(s['median_us'])} | {ms(s['p90_us'])} | "
                     f"{(s['median_us'] - base) / 1000:+.2f} | {marg} |")
        prev = (n, s)
    xs = [n for n, _ in pts]
    ys = [s["median_us"] for _, s in pts]
    a, b, r2 = linfit(xs, ys)
    fit = {"intercept_us": a, "slope_us_per_path": b, "r2": r2}
    if len(pts) >= 2:
        grow = (ys[-1] - ys[0]) / ys[0]
        # Flat when 1000 paths cost less than a tenth more than one path;
        # linear when the last two marginal costs agree within 2× and the
        # straight line explains the points; anything else is said as such.
        if grow < 0.10:
            verdict = (f"**flat**: {xs[-1]} paths cost {grow * 100:+.1f}% over {xs[0]} "
                       f"(fit {b:.2f} µs/path, r² {r2:.3f})")
        else:
            m = []
            for i in range(1, len(xs)):
                m.append((ys[i] - ys[i - 1]) / (xs[i] - xs[i - 1]))
            lin = len(m) < 2 or (m[-2] > 0 and 0.5 <= m[-1] / m[-2] <= 2)
            kind = "linear" if lin and r2 >= 0.95 else ("superlinear" if m[-1] > 2 * max(m[-2], 1e-9) else "irregular")
            verdict = (f"**{kind}** in the number of paths: {b:.2f} µs per extra path "
                       f"(least squares, r² {r2:.3f}; intercept {a / 1000:.2f} ms); "
                       f"{xs[-1]} paths add {(ys[-1] - ys[0]) / 1000:.2f} ms ({grow * 100:+.0f}%)")
        fit["verdict"] = verdict
    return "\n".join(lines) + "\n\nVerdict: " + fit.get("verdict", "too few points"), fit


def conc_block(d, S):
    lines = ["| launcher | runs at once | samples | per-run median ms | per-run p90 ms | batch median ms | runs/s |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    fits = {}
    verdicts = []
    for who, label in (("bare", "bare exec"), ("corral", "corral")):
        xs, ys, bs = [], [], []
        for c in CONC:
            name = who if c == 1 else f"{who}-x{c}"
            s = S.get(name)
            why = status_cell(name, d, s)
            if why:
                lines.append(f"| {label} | {c} | — | {why} | | | |")
                continue
            bm = s["batch_median_us"]
            lines.append(f"| {label} | {c} | {s['n']} | {ms(s['median_us'])} | {ms(s['p90_us'])} | "
                         f"{ms(bm)} | {c / (bm / 1e6):.0f} |")
            xs.append(c)
            ys.append(s["median_us"])
            bs.append(bm)
        if len(xs) >= 2:
            a, b, r2 = linfit(xs, ys)
            ba, bb, br2 = linfit(xs, bs)
            grow = ys[-1] / ys[0]
            if grow < 1.5:
                kind = "flat"
            else:
                kind = "linear" if r2 >= 0.95 else "sublinear/irregular"
            fits[who] = {"per_run": {"intercept_us": a, "slope_us_per_run": b, "r2": r2, "kind": kind},
                         "batch": {"intercept_us": ba, "slope_us_per_run": bb, "r2": br2}}
            verdicts.append(
                f"- {label}: per-run latency is **{kind}** in the number of concurrent runs "
                f"(×{grow:.1f} from {xs[0]} to {xs[-1]}; fit {b / 1000:.3f} ms per extra run, r² {r2:.3f}); "
                f"the whole batch takes {bb / 1000:.3f} ms per run (r² {br2:.3f}), i.e. a sustained "
                f"{1e6 / bb:.0f} runs/s once the {d['machine'].get('nproc', '?')} CPUs are saturated.")
    return "\n".join(lines) + "\n\n" + "\n".join(verdicts), fits


def throughput_block(d):
    rows = d["throughput"]
    if not rows:
        return "not measured", {}
    spawn = {r["threads"]: float(r["execs_per_s"]) for r in rows if r["mode"] == "posix_spawn" and r["status"] == "ok"}
    lines = ["| launcher | threads | execs | execs/s | × posix_spawn |", "| --- | ---: | ---: | ---: | ---: |"]
    res = {}
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| `{r['mode']}` | {r['threads']} | — | skipped: {r['status'].removeprefix('unavailable: ')} | |")
            continue
        eps = float(r["execs_per_s"])
        res[f"{r['mode']}/{r['threads']}"] = eps
        lines.append(f"| `{r['mode']}` | {r['threads']} | {r['execs']} | {eps:.0f} | "
                     f"{ratio(eps, spawn.get(r['threads']))} |")
    return "\n".join(lines), res


def phases_block(out):
    p = os.path.join(out, "phases.csv")
    if not os.path.exists(p):
        return "not measured"
    rows = list(csv.reader(open(p)))[1:]
    pols, cells, bad = [], {}, []
    for r in rows:
        if r[1] == "unavailable":
            bad.append(f"- {r[0]}: skipped: {r[5] if len(r) > 5 else '?'}")
            continue
        if r[0] not in pols:
            pols.append(r[0])
        cells[(r[0], r[1])] = (float(r[3]), float(r[4]))
    phases = ["policy_build", "sandbox_new", "sandbox_exec", "sandbox_free", "total"]
    lines = []
    if pols:
        n = rows[0][2]
        lines = [f"Median µs per step over {n} in-process iterations (p90 in brackets):", "",
                 "| policy | " + " | ".join(f"`{p}`" for p in phases) + " |",
                 "| --- | " + " | ".join("---:" for _ in phases) + " |"]
        for pol in pols:
            lines.append(f"| {pol} | " + " | ".join(
                f"{cells[(pol, ph)][0]:.0f} ({cells[(pol, ph)][1]:.0f})" if (pol, ph) in cells else "—"
                for ph in phases) + " |")
    return "\n".join(lines + ([""] if lines and bad else []) + bad) or "not measured"


def rss_block(d):
    r = d["rss"]
    size = r.get("rss-size", {}).get("size", "?")
    lines = ["| process | stream | wall ms | peak RSS (VmHWM, own) | wait4 ru_maxrss |",
             "| --- | --- | ---: | ---: | ---: |"]
    c = r.get("rss", {})
    if "skipped" in c:
        lines.append(f"| corral supervisor | {size} | — | skipped: {c['skipped']} | |")
    elif c:
        lines.append(f"| corral supervisor (`corral run --json -- sh -c 'head -c {size} /dev/zero'`) | {size} | "
                     f"{c['wall_ms']:.0f} | {c['vmhwm_kb'] / 1024:.1f} MiB | {c['wait4_maxrss_kb'] / 1024:.1f} MiB |")
    b = r.get("rss-bare", {})
    if b:
        lines.append(f"| bare `sh -c 'head -c {size} /dev/zero' > /dev/null`, for scale | {size} | {b['wall_ms']:.0f} | "
                     f"{b['vmhwm_kb'] / 1024:.1f} MiB | {b['wait4_maxrss_kb'] / 1024:.1f} MiB |")
    return "\n".join(lines)


def machine_block(d):
    m = d["machine"]
    if not m:
        return "unknown"
    return "\n".join([
        f"- CPU: {m.get('cpu')} — {m.get('nproc')} CPUs (`nproc`), virtualisation: {m.get('virt')}",
        f"- memory: {m.get('memory_gb')} GiB; kernel {m.get('kernel')}; {m.get('distro')}; Landlock ABI {m.get('landlock_abi')}",
        f"- ran as uid {m.get('uid')} ({'commands run as nobody' if m.get('uid') == 0 else 'unprivileged'}); "
        f"floor {'statically' if m.get('floor_static') else 'dynamically'} linked (glibc); "
        f"corral linked: {m.get('corral_libc', '?')}",
        f"- {m.get('rounds')} interleaved rounds at nice {m.get('nice', 0)}; measured {m.get('date')} at commit {m.get('commit')}",
        f"- load average when the run started: {m.get('loadavg', '?')} (a shared machine: other jobs were running)",
    ])


def read(out, name, limit=None):
    p = os.path.join(out, name)
    if not os.path.exists(p):
        return None
    text = open(p, errors="replace").read()
    if limit:
        text = "\n".join(text.splitlines()[:limit])
    return text.rstrip()


# Inclusive kernel entry points (perf --children) that account for one
# corral run, and the user-space objects (self time) beside them.
COST_CENTRES = [
    ("execve of corral and of /bin/true", [r"__x64_sys_execve"]),
    ("page faults (every process)", [r"asm_exc_page_fault"]),
    ("per-run cgroups: mkdir + rmdir", [r"cgroup_mkdir", r"cgroup_rmdir"]),
    ("per-run cgroups: joining (tasks on v1, cgroup.procs on v2)", [r"__cgroup_procs_write", r"__cgroup1_procs_write"]),
    ("getdents64 + newfstatat (e.g. /proc scans)", [r"__x64_sys_getdents64", r"__do_sys_newfstatat"]),
    ("private /tmp: mkdir + rmdir (ext4 or tmpfs)", [r"ext4_mkdir", r"ext4_rmdir", r"shmem_mkdir", r"shmem_rmdir"]),
    ("seccomp: loading + JIT of the filter (kernel)", [r"do_seccomp"]),
    ("Landlock syscalls", [r"__(x64|do)_sys_landlock_(create_ruleset|add_rule|restrict_self)"]),
    ("openat (policy paths, /proc, cgroup files, libraries)", [r"__x64_sys_openat"]),
    ("clone of the child", [r"__do_sys_clone"]),
    ("exit_group (address-space teardown)", [r"__x64_sys_exit_group"]),
]
def cost_block(out, S):
    pc = read(out, "perf-children.txt")
    pd = read(out, "perf-dso.txt")
    if not pc or not pd:
        return "not measured (full run with perf only)"
    children = {}
    for line in pc.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+([\d.]+)%\s+\[[k.]\]\s+(\S+)", line)
        if m:
            children.setdefault(m.group(3), float(m.group(1)))
    dso, driver = [], 0.0
    for line in pd.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+(\S+)", line)
        if m:
            dso.append((float(m.group(1)), m.group(2), m.group(3)))
            if m.group(2) == "interleave":
                driver += float(m.group(1))
    runs_share = 100.0 - driver
    cpu = S.get("corral", {}).get("cpu_median_us")
    lines = ["| where | share of the runs' CPU samples | ≈ ms per run |", "| --- | ---: | ---: |"]

    def add(label, pct):
        share = pct / runs_share if runs_share > 0 else float("nan")
        est = f"{share * cpu / 1000:.2f}" if cpu and not math.isnan(cpu) else "—"
        lines.append(f"| {label} | {share * 100:.1f}% | {est} |")

    for label, pats in COST_CENTRES:
        # Compilers suffix local clones: __cgroup1_procs_write.isra.0.
        pct = sum(v for k, v in children.items() if any(re.fullmatch(p + r"(\.\w+)*", k) for p in pats))
        add(label, pct)
    # User space, by process and object: the split depends on whether
    # corral is linked statically (then libc, libseccomp and jansson live
    # inside the corral object) or dynamically.
    for pct, comm, obj in dso:
        if comm in ("corral", "true") and not obj.startswith("[") and pct >= 0.2:
            what = "the dynamic loader" if obj.startswith("ld-linux") else f"`{obj}`"
            add(f"user space: `{comm}` in {what}", pct)
    ps = read(out, "perf-self.txt")
    if ps:
        # Self time: these functions call one another, so inclusive
        # figures would count the same samples twice.
        pct = 0.0
        for line in ps.splitlines():
            m = re.match(r"\s*([\d.]+)%\s+(corral|true)\s+\S+\s+\[\.\]\s+(\S+)", line)
            if m and re.match(r"(init_cpu_features|handle_amd|handle_intel|intel_check_word|get_common_indices|"
                              r"get_extended_indices|update_active|get_common_cache_info|dl_init_cacheinfo)",
                              m.group(3)):
                pct += float(m.group(1))
        add("↳ part of the user-space rows: glibc's CPU feature probe at start-up (`cpuid`, which "
            "traps to the hypervisor in a VM), corral and /bin/true", pct)
    note = (f"Samples of 300 `corral run -- /bin/true` runs (`perf record -g -e cpu-clock`), the driver's own "
            f"{driver:.1f}% taken out; kernel rows are inclusive (a row's callees count in it, and rows can "
            f"overlap: a page fault inside execve counts in both). ≈ ms per run = share × the run's median "
            f"CPU time ({ms(cpu)} ms, wait4 of corral and its child).")
    return note + "\n\n" + "\n".join(lines)


def shorten(text):
    """Absolute build and scratch paths out of quoted commands."""
    text = re.sub(r"/\S*/(corral|floor|interleave|libcorral\.so)\b", r"\1", text)
    return re.sub(r"--root \S+", "--root $WS", text)


def profile_block(out):
    parts = []
    p = os.path.join(out, "mkdir-cost.json")
    if os.path.exists(p):
        m = json.load(open(p))
        rows = ["| directory | filesystem (options) | mkdtemp µs | rmdir µs |", "| --- | --- | ---: | ---: |"]
        for base, v in m.items():
            fs = v["fs"].split(None, 1)
            opts = fs[1] if len(fs) > 1 else ""
            flag = " (**discard**)" if "discard" in opts.split(",") else ""
            rows.append(f"| `{base}` | {fs[0] if fs else '?'}{flag} | {v['mkdir_us']:.0f} | {v['rmdir_us']:.0f} |")
        parts += ["One scratch directory created and removed (median of 200; the private `/tmp` of every"
                  " run costs one of each on the host's `/tmp`):", "", *rows, ""]
    s = read(out, "strace-c.txt", 40)
    if s:
        parts += ["`strace -c -f corral run -- /bin/true` (supervisor and child together; times are"
                  " inflated by tracing, counts are exact):", "", "```", s, "```", ""]
    s = read(out, "perf-stat.txt")
    if s:
        s = shorten("\n".join(l for l in s.splitlines() if l.strip() and not l.startswith("#")))
        parts += ["`perf stat -r 200 corral run -- /bin/true` (software counters; hardware counters"
                  " show as not supported when the hypervisor hides the PMU):", "", "```", s, "```", ""]
    s = read(out, "perf-stat-bare.txt")
    if s:
        s = "\n".join(l for l in s.splitlines() if l.strip() and not l.startswith("#"))
        parts += ["Same for bare `/bin/true`:", "", "```", s, "```", ""]
    s = read(out, "perf-dso.txt")
    if s:
        parts += ["`perf record -e cpu-clock` over 300 runs of `corral run -- /bin/true`, share of CPU"
                  " samples by process name and shared object (`corral` is the supervisor and the child"
                  " before it execs; `true` is the child after `execve`; `interleave` is the driver):",
                  "", "```", s, "```", ""]
    s = read(out, "perf-sym.txt", 30)
    if s:
        parts += ["The same samples by symbol (top 30):", "", "```", s, "```", ""]
    s = read(out, "ld-statistics.txt")
    if s:
        s = "\n".join(re.sub(r"^\s*\d+:\s*", "", l) for l in s.splitlines())
        s = "\n".join(l for l in s.splitlines() if l.strip())
        parts += ["`LD_DEBUG=statistics corral run -- /bin/true` (the dynamic loader's own cost in corral):",
                  "", "```", s, "```", ""]
    s = read(out, "ldd.txt")
    if s:
        s = re.sub(r" \(0x[0-9a-f]+\)", "", shorten(s))
        parts += ["Shared objects corral loads (`ldd corral`):", "", "```", s, "```", ""]
    return "\n".join(parts).rstrip() or "not measured"


def hyperfine_block(out, S):
    p = os.path.join(out, "hyperfine.json")
    if not os.path.exists(p):
        return "not run (full run only)"
    try:
        res = json.load(open(p))["results"]
    except (ValueError, KeyError):
        return "hyperfine produced no results"
    lines = ["| command | hyperfine median ms | interleaved median ms |", "| --- | ---: | ---: |"]
    names = {"/bin/true": "bare"}
    for r in res:
        cmd = r["command"]
        name = names.get(cmd) or ("floor" if "/floor" in cmd else "corral" if " run " in cmd else None)
        inter = ms(S.get(name, {}).get("median_us")) if name else "—"
        short = shorten(cmd)
        lines.append(f"| `{short}` | {r['median'] * 1000:.2f} | {inter} |")
    return "\n".join(lines)


def chart(out, S, png, machine):
    gp = shutil.which("gnuplot")
    if not gp:
        print("report: gnuplot not installed; no chart", file=sys.stderr)
        return False
    dat = os.path.join(out, "latency-chart.dat")
    with open(dat, "w") as f:
        f.write("# label median_ms p10_ms p90_ms\n")
        for name in MAIN:
            s = S.get(name)
            if not s or not s["n"]:
                continue
            label = LABELS[name][0].replace(" ", "\\n", 1) if len(LABELS[name][0]) > 12 else LABELS[name][0]
            f.write(f"\"{label}\" {s['median_us'] / 1000:.4f} {s['p10_us'] / 1000:.4f} {s['p90_us'] / 1000:.4f}\n")
    sub = f"{machine.get('cpu', '?')}, {machine.get('nproc', '?')} CPUs, Linux {machine.get('kernel', '?')}, {machine.get('date', '')}"
    script = os.path.join(out, "latency-chart.gp")
    with open(script, "w") as f:
        f.write(f"""set terminal png size 1000,580 font ",11" noenhanced
set output "{png}"
set title "Whole-command latency of /bin/true, interleaved (bars: median; whiskers: p10–p90; log scale)\\n{sub}"
set ylabel "milliseconds"
set logscale y
set yrange [0.1:*]
set grid ytics
set bmargin 5
set style fill solid 0.75 border -1
set boxwidth 0.7
set xtics scale 0 font ",10"
set key off
set offsets 0.5, 0.5, 0, 0
plot "{dat}" using 0:2:xtic(1) with boxes lc rgb "#4477aa", \\
     "" using 0:2:3:4 with yerrorbars lc rgb "#222222" pt -1, \\
     "" using 0:(0.15):($2 >= 100 ? sprintf("%.0f ms", $2) : sprintf("%.2f ms", $2)) with labels font ",10" tc rgb "#ffffff"
""")
    r = subprocess.run([gp, script], capture_output=True, text=True)
    if r.returncode != 0:
        print("report: gnuplot failed: " + r.stderr.strip(), file=sys.stderr)
        return False
    return True


def replace_blocks(doc, blocks):
    text = open(doc).read()
    for name, body in blocks.items():
        pat = re.compile(r"(<!-- BEGIN GENERATED: %s -->\n).*?(<!-- END GENERATED: %s -->)" % (name, name), re.S)
        if not pat.search(text):
            print(f"report: {doc} has no block {name}; left out", file=sys.stderr)
            continue
        text = pat.sub(lambda m: m.group(1) + body.rstrip() + "\n" + m.group(2), text)
    with open(doc, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--doc")
    ap.add_argument("--png")
    a = ap.parse_args()
    d = load(a.out)
    S = {name: stats(row) for name, row in d["rows"].items()}
    pol, pol_fit = policy_block(d, S)
    conc, conc_fit = conc_block(d, S)
    thr, thr_res = throughput_block(d)
    blocks = {
        "machine": machine_block(d),
        "ratios": ratios_block(d, S),
        "latency": latency_table(d, S),
        "privilege": privilege_block(d, S),
        "policy": pol,
        "concurrency": conc,
        "throughput": thr,
        "rss": rss_block(d),
        "phases": phases_block(a.out),
        "cost": cost_block(a.out, S),
        "profile": profile_block(a.out),
        "hyperfine": hyperfine_block(a.out, S),
    }
    summary = {"machine": d["machine"], "latency": S, "skipped": d["skipped"],
               "corral_over": corral_ratios(S), "policy_fit": pol_fit, "concurrency_fit": conc_fit,
               "throughput": thr_res, "rss": d["rss"]}
    json.dump(summary, open(os.path.join(a.out, "summary.json"), "w"), indent=1, default=str)
    with open(os.path.join(a.out, "tables.md"), "w") as f:
        for name, body in blocks.items():
            f.write(f"## {name}\n\n{body}\n\n")
    if a.png and chart(a.out, S, os.path.abspath(a.png), d["machine"]):
        print(f"report: chart {a.png}", file=sys.stderr)
    if a.doc:
        replace_blocks(a.doc, blocks)
        print(f"report: rewrote the generated blocks of {a.doc}", file=sys.stderr)
    for name in ("ratios", "latency"):
        print(blocks[name] + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
