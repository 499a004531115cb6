#!/usr/bin/env bash
# Regenerate every benchmark figure: one command.
#
#   bash bench/run.sh [--smoke] [--build DIR] [--out DIR] [--rounds N]
#                     [--no-docker] [--no-docs] [--nice N]
#
# Full run (default): builds (meson, DIR defaults to build-bench), measures
#   1. whole-command latency of /bin/true, every launcher interleaved in one
#      run (bench/interleave.c), plus policy-size and concurrency rows;
#   2. in-process throughput (bench/throughput.c);
#   3. the supervisor's peak RSS while 1 GB flows through a captured stream;
#   4. a profile of one `corral run -- /bin/true` (strace -c, perf stat,
#      LD_DEBUG=statistics) and a sequential hyperfine cross-check;
# writes bench/results/*.{csv,json,txt}, renders docs/bench-latency.png and
# rewrites the generated blocks of docs/benchmarks.md.
#
# --nice N (default -10 for a full run as root, else 0) runs the measuring
# programs at that priority, so other jobs on a shared machine disturb
# them less; every launcher inherits it alike (docker's containers, started
# by the daemon, do not).
# --smoke (CI): a few rounds into a temporary directory, 64 MB instead of
# 1 GB, docs untouched, no daemon started. Never asserts timings; a launcher
# that cannot run here becomes a "skipped: why" row, not a failure. The
# script fails only when the harness itself is broken.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
smoke=0 build= out= rounds= docker=1 docs=1 drop_out=0 nice=
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) smoke=1 ;;
	--build) build=$2; shift ;;
	--out) out=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--no-docker) docker=0 ;;
	--no-docs) docs=0 ;;
	--nice) nice=$2; shift ;;
	-h|--help) sed -n '2,21p' "$0"; exit 0 ;;
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
cd "$src"
say() { printf 'bench: %s\n' "$*" >&2; }

if [ "$smoke" = 1 ]; then
	rounds=${rounds:-6} warmup=1 every_docker=6 every_x64=3 seconds=0.3 rss_size=64M phase_n=5
	[ -n "$out" ] || { out=$(mktemp -d /tmp/corral-bench-smoke.XXXXXX); drop_out=1; }
	docs=0
else
	rounds=${rounds:-300} warmup=10 every_docker=10 every_x64=3 seconds=4 rss_size=1G phase_n=300
	out=${out:-$src/bench/results}
fi
if [ -z "$nice" ]; then
	nice=0
	[ "$smoke" = 0 ] && [ "$(id -u)" = 0 ] && nice=-10
fi
prio=(nice -n "$nice")
build=${build:-${CORRAL_BUILDDIR:-build-bench}}
[ -f "$build/build.ninja" ] || meson setup "$build" >/dev/null
ninja -C "$build" >/dev/null
build=$(cd "$build" && pwd)
corral=$build/corral
floor=$build/bench/floor
interleave=$build/bench/interleave
throughput=$build/bench/throughput
phases=$build/bench/phases
mechanism=$build/bench/mechanism
# Present when corral itself is linked with musl (meson.build).
floor_musl=$build/bench/floor-musl
mechanism_musl=$build/bench/mechanism-musl
for b in "$corral" "$floor" "$interleave" "$throughput" "$phases" "$mechanism"; do
	[ -x "$b" ] || { echo "run.sh: $b was not built" >&2; exit 1; }
done
mkdir -p "$out"
rm -f "$out"/*.csv "$out"/*.json "$out"/*.txt "$out"/*.tsv

# The confinement root. As root, corral runs commands as the root
# directory's owner, or nobody when that is root: hand it to nobody.
work=$(mktemp -d /tmp/corral-bench.XXXXXX)
trap 'rm -rf "$work"; [ "$drop_out" = 0 ] || rm -rf "$out"' EXIT
chmod 755 "$work"
ws=$work/ws
mkdir "$ws"
[ "$(id -u)" = 0 ] && chown 65534:65534 "$ws"

# ------------------------------------------------------------ the machine
abi=$("$corral" probe --json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin).get("landlock_abi", "?"))' 2>/dev/null) || abi="?"
floor_static=false
file -L "$floor" 2>/dev/null | grep -q 'statically linked' && floor_static=true
corral_libc="glibc, dynamic"
if file -L "$corral" 2>/dev/null | grep -q 'statically linked'; then
	corral_libc="glibc, static"
	[ -x "$floor_musl" ] && corral_libc="musl, static"
fi
B_CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1) \
B_MEMKB=$(sed -n 's/^MemTotal:[[:space:]]*\([0-9]*\).*/\1/p' /proc/meminfo) \
B_DISTRO=$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-?}") \
B_VIRT="vm: $(systemd-detect-virt --vm 2>/dev/null || true), container: $(systemd-detect-virt --container 2>/dev/null || true)" \
B_ABI=$abi B_NICE=$nice B_FLOOR_STATIC=$floor_static B_CORRAL_LIBC=$corral_libc B_SMOKE=$smoke B_ROUNDS=$rounds \
B_COMMIT=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo "?") \
python3 - "$out/machine.json" <<'EOF'
import json, os, platform, sys, time
e = os.environ
json.dump({"nproc": os.cpu_count(), "cpu": e["B_CPU"], "kernel": platform.release(),
           "memory_gb": round(int(e["B_MEMKB"] or 0) / 1048576, 1), "distro": e["B_DISTRO"],
           "virt": e["B_VIRT"], "uid": os.getuid(), "landlock_abi": e["B_ABI"],
           "floor_static": e["B_FLOOR_STATIC"] == "true", "corral_libc": e["B_CORRAL_LIBC"],
           "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), "commit": e["B_COMMIT"],
           "smoke": e["B_SMOKE"] == "1", "nice": int(e["B_NICE"]), "loadavg": " ".join(open("/proc/loadavg").read().split()[:3]), "rounds": int(e["B_ROUNDS"])},
          open(sys.argv[1], "w"), indent=1)
EOF

# ------------------------------------------------------------ docker
image=corral-bench-busybox:latest
docker_why=
if [ "$docker" = 0 ]; then
	docker_why="disabled with --no-docker"
elif ! command -v docker >/dev/null; then
	docker_why="docker is not installed"
else
	if ! docker info >/dev/null 2>&1 && [ "$smoke" = 0 ] && [ -x scripts/start-dockerd.sh ]; then
		bash scripts/start-dockerd.sh >/dev/null 2>&1 || true
	fi
	if ! docker info >/dev/null 2>&1; then
		docker_why="no docker daemon answers"
	elif ! docker_why=$(bash bench/make-image.sh "$image" 2>&1 >/dev/null); then
		docker_why=${docker_why#make-image: }
	else
		docker_why=
	fi
fi

# ------------------------------------------------------------ policies
# N extra read-only directories on top of the default system paths (a
# policy holding only N paths could not run /bin/true at all).
mkdir -p "$work/tree"
policy_why=
if base=$("$corral" policy show --root "$ws" 2>&1); then
	printf '%s' "$base" >"$work/base.json"
	python3 - "$work" <<'EOF'
import json, os, sys
work = sys.argv[1]
base = json.load(open(os.path.join(work, "base.json")))
for n in (1, 10, 100, 1000):
    dirs = []
    for i in range(n):
        d = os.path.join(work, "tree", "d%04d" % i)
        os.makedirs(d, exist_ok=True)
        dirs.append(d)
    p = json.loads(json.dumps(base))
    p["fs"]["read_only"] = list(p["fs"]["read_only"]) + dirs
    json.dump(p, open(os.path.join(work, "policy-%d.json" % n), "w"), indent=1)
p = json.loads(json.dumps(base))
p["fs"]["private_tmp"] = False
json.dump(p, open(os.path.join(work, "policy-notmp.json"), "w"), indent=1)
EOF
	chmod -R a+rX "$work/tree"
else
	policy_why="corral policy show: $(printf '%s' "$base" | head -1)"
fi

# ------------------------------------------------------------ latency rows
# name, every, concurrency, command. A row whose command fails once here is
# reported as skipped with the first line of its error, never timed.
spec=$out/spec.tsv
: >"$spec"
: >"$out/skipped.tsv"
row() { # name every conc why-if-unavailable cmd...
	local name=$1 every=$2 conc=$3 why=$4 err rc
	shift 4
	if [ -z "$why" ]; then
		rc=0
		err=$(timeout 120 "$@" 2>&1 >/dev/null </dev/null) || rc=$?
		if [ "$rc" != 0 ]; then
			why="exit $rc: $(printf '%s' "$err" | grep -v '^$' | head -1 | cut -c1-200)"
			[ "$rc" = 124 ] && why="timed out after 120 s"
		fi
	fi
	if [ -n "$why" ]; then
		printf '%s\t%s\t%s\n' "$name" "$why" "$*" >>"$out/skipped.tsv"
		say "skipped $name: $why"
		return 0
	fi
	(IFS=$'\t'; printf '%s\t%s\t%s\t%s\n' "$name" "$every" "$conc" "$*") >>"$spec"
}
need() { command -v "$1" >/dev/null && echo || echo "$1 is not installed"; }
bwrap_bin=$(command -v bwrap || echo bwrap)
firejail_bin=$(command -v firejail || echo firejail)
docker_bin=$(command -v docker || echo docker)

row bare 1 1 "" /bin/true
row floor 1 1 "" "$floor" /bin/true
row corral 1 1 "" "$corral" run --root "$ws" -- /bin/true
# The kernel work of corral's design alone (bench/mechanism.c): the
# default policy's read-only paths plus the devices and /proc that
# landlock/landlock.c adds, the precompiled default seccomp filter.
mech_paths=()
[ -z "$policy_why" ] && mapfile -t mech_paths < <(python3 -c 'import json, sys; print("\n".join(json.load(open(sys.argv[1]))["fs"]["read_only"]))' "$work/base.json")
row mechanism 1 1 "$policy_why" "$mechanism" "$ws" "${mech_paths[@]}" /dev/null /dev/zero /dev/full \
	/dev/random /dev/urandom /dev/tty /dev/ptmx /dev/pts /proc -- /bin/true
musl_why=
[ -x "$floor_musl" ] && [ -x "$mechanism_musl" ] || musl_why="corral is not linked with musl in this build (scripts/build-musl-deps.sh)"
row floor-musl 1 1 "$musl_why" "$floor_musl" /bin/true
row mechanism-musl 1 1 "${policy_why:-$musl_why}" "$mechanism_musl" "$ws" "${mech_paths[@]}" /dev/null /dev/zero /dev/full \
	/dev/random /dev/urandom /dev/tty /dev/ptmx /dev/pts /proc -- /bin/true
row corral-net-host 1 1 "" "$corral" run --root "$ws" --net host -- /bin/true
row bwrap 1 1 "$(need bwrap)" "$bwrap_bin" --ro-bind / / --unshare-net --die-with-parent /bin/true
row firejail 1 1 "$(need firejail)" "$firejail_bin" --quiet --noprofile --net=none /bin/true
row docker "$every_docker" 1 "$docker_why" "$docker_bin" run --rm --network none "$image" /bin/true
row corral-docker "$every_docker" 1 "$docker_why" "$corral" run --root "$ws" --provider docker --image "$image" -- /bin/true
# As root corral also switches identity and gives each run its own cgroups;
# the same run started as nobody (through setpriv, measured alone too) shows
# what that costs.
if [ "$(id -u)" = 0 ]; then
	asnobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	row setpriv-true 1 1 "$(need setpriv)" "${asnobody[@]}" /bin/true
	row corral-unpriv 1 1 "$(need setpriv)" "${asnobody[@]}" "$corral" run --root "$ws" -- /bin/true
fi
row corral-no-private-tmp 1 1 "$policy_why" "$corral" run --policy "$work/policy-notmp.json" --root "$ws" -- /bin/true
for n in 1 10 100 1000; do
	row "policy-$n" 2 1 "$policy_why" "$corral" run --policy "$work/policy-$n.json" --root "$ws" -- /bin/true
done
row bare-x8 1 8 "" /bin/true
row bare-x64 "$every_x64" 64 "" /bin/true
row corral-x8 1 8 "" "$corral" run --root "$ws" -- /bin/true
row corral-x64 "$every_x64" 64 "" "$corral" run --root "$ws" -- /bin/true

say "latency: $(wc -l <"$spec") rows, $rounds rounds, interleaved"
mkdir -p "$out/stderr"
rm -f "$out"/stderr/*.stderr
"${prio[@]}" "$interleave" -n "$rounds" -w "$warmup" -s 42 -e "$out/stderr" "$spec" >"$out/latency.csv"

# ------------------------------------------------------------ throughput
say "throughput: ${seconds}s per launcher and thread count"
"${prio[@]}" "$throughput" -d "$seconds" -r "$ws" >"$out/throughput.csv"

say "phases: in-process cost of one uncached run, by policy size"
pargs=()
if [ -z "$policy_why" ]; then
	for n in 1 10 100 1000; do pargs+=("+$n paths=$work/policy-$n.json"); done
fi
"${prio[@]}" "$phases" -n "$phase_n" -r "$ws" "${pargs[@]}" >"$out/phases.csv"

# ------------------------------------------------------------ peak RSS
say "peak RSS: $rss_size through a captured stream"
rss_cmd=("$corral" run --json --root "$ws" -- sh -c "head -c $rss_size /dev/zero")
# One untimed run first: it must report exit 0 in its JSON result.
timeout 300 "${rss_cmd[@]}" >"$work/rss-probe.json" 2>"$work/rss-probe.err" || true
if why=$(python3 - "$work/rss-probe.json" "$work/rss-probe.err" <<'EOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except ValueError:
    err = open(sys.argv[2], errors="replace").read().strip().splitlines()
    print(err[0][:200] if err else "no JSON result"); sys.exit(1)
if r.get("exit_status") != 0:
    print("the command did not exit 0: " + json.dumps({k: r.get(k) for k in ("exit_status", "signal", "timed_out", "error")})[:200]); sys.exit(1)
EOF
); then
	"$interleave" --peak-rss "${rss_cmd[@]}" >"$out/rss.json"
else
	python3 -c 'import json, sys; print(json.dumps({"skipped": sys.argv[1]}))' "$why" >"$out/rss.json"
fi
"$interleave" --peak-rss sh -c "head -c $rss_size /dev/zero" >"$out/rss-bare.json"
printf '{"size": "%s"}\n' "$rss_size" >"$out/rss-size.json"

# ------------------------------------------------------------ profile
one=("$corral" run --root "$ws" -- /bin/true)
if "${one[@]}" >/dev/null 2>&1; then
	if command -v strace >/dev/null; then
		strace -c -f -o "$out/strace-c.txt" "${one[@]}" >/dev/null 2>&1 || true
		strace -f -r -o "$out/strace-r.txt" "${one[@]}" >/dev/null 2>&1 || true
	fi
	if command -v perf >/dev/null; then
		reps=$([ "$smoke" = 1 ] && echo 5 || echo 200)
		perf stat -r "$reps" -e task-clock,context-switches,cpu-migrations,page-faults,instructions,cycles \
			-o "$out/perf-stat.txt" "${one[@]}" >/dev/null 2>&1 || true
		perf stat -r "$reps" -e task-clock,context-switches,cpu-migrations,page-faults,instructions,cycles \
			-o "$out/perf-stat-bare.txt" /bin/true >/dev/null 2>&1 || true
	fi
	LD_DEBUG=statistics "${one[@]}" 2>"$out/ld-statistics.txt" >/dev/null || true
	LD_DEBUG=statistics /bin/true 2>"$out/ld-statistics-bare.txt" >/dev/null || true
	(ldd "$corral" || true) >"$out/ldd.txt" 2>&1
fi
# Where the CPU time of 300 runs goes, from timer-based samples (works
# without a hardware PMU, e.g. in a VM): by process and shared object, by
# symbol, and — with call graphs — inclusive time per kernel entry point.
if [ "$smoke" = 0 ] && command -v perf >/dev/null && grep -q '^corral	' "$spec"; then
	say "perf record: 300 runs of corral run -- /bin/true"
	grep '^corral	' "$spec" >"$work/one.tsv"
	if "${prio[@]}" perf record -q -g -e cpu-clock -F 20000 -o "$work/perf.data" -- \
		"$interleave" -n 300 -w 0 "$work/one.tsv" >/dev/null 2>&1; then
		perf report -i "$work/perf.data" --no-children --sort comm,dso --stdio -g none 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -25 >"$out/perf-dso.txt" || true
		perf report -i "$work/perf.data" --no-children --sort comm,dso,sym --stdio -g none 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -40 >"$out/perf-sym.txt" || true
		perf report -i "$work/perf.data" --no-children --sort comm,dso,sym --stdio -g none 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -3000 >"$out/perf-self.txt" || true
		perf report -i "$work/perf.data" --children --sort sym --stdio -g none 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -3000 >"$out/perf-children.txt" || true
	fi
fi

# What one scratch directory costs where corral makes the private /tmp
# (the host's /tmp) against a tmpfs: the filesystem, not corral, sets it.
python3 - "$out/mkdir-cost.json" <<'EOF'
import json, os, subprocess, sys, tempfile, time
res = {}
for base in ("/tmp", "/dev/shm"):
    if not os.path.isdir(base) or not os.access(base, os.W_OK):
        continue
    mk, rm = [], []
    for _ in range(200):
        t0 = time.perf_counter(); d = tempfile.mkdtemp(dir=base); t1 = time.perf_counter()
        os.rmdir(d); t2 = time.perf_counter()
        mk.append(t1 - t0); rm.append(t2 - t1)
    fs = (subprocess.run(["findmnt", "-n", "-o", "FSTYPE,OPTIONS", "-T", base], capture_output=True, text=True).stdout.strip().splitlines() or ["?"])[0]
    res[base] = {"mkdir_us": sorted(mk)[100] * 1e6, "rmdir_us": sorted(rm)[100] * 1e6, "fs": fs}
json.dump(res, open(sys.argv[1], "w"), indent=1)
EOF
if [ "$smoke" = 0 ] && command -v hyperfine >/dev/null; then
	say "hyperfine cross-check (sequential, not interleaved)"
	hyperfine -N --warmup 20 --runs 300 --export-json "$out/hyperfine.json" \
		/bin/true "$floor /bin/true" "${one[*]}" >/dev/null 2>&1 || true
fi

# ------------------------------------------------------------ report
args=("$out")
if [ "$docs" = 1 ]; then
	args+=(--doc docs/benchmarks.md --png docs/bench-latency.png)
else
	args+=(--png "$out/bench-latency.png")
fi
python3 bench/report.py "${args[@]}"
[ "$drop_out" = 1 ] && say "smoke results (removed on exit): $out" || say "results in $out"
