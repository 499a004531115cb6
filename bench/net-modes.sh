#!/usr/bin/env bash
# Cost of the network modes (docs/threat-model.md "Network modes"):
#   1. `corral run -- /bin/true` interleaved (bench/interleave.c) under
#      none with Unix-socket mediation, none with AF_UNIX refused (the
#      behaviour before the mediation: CORRAL_TEST_UNIX_MEDIATION=0),
#      loopback, and host. Every row goes through /usr/bin/env so they pay
#      the same extra exec.
#   2. a connect-heavy loop: /usr/bin/python3 connecting N times to a
#      listener inside the root (each connect goes through the supervisor
#      under none/loopback; host is unmediated), per-connect time measured
#      inside the command.
#
#   3. network "allow": one HTTP GET per fresh connection to a local
#      server on 127.0.0.2, direct (outside corral, and --net host) against
#      through the egress proxy (--net allow --allow 127.0.0.2:PORT).
#
#   bash bench/net-modes.sh [--build DIR] [--rounds N] [--connects N]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${CORRAL_BUILDDIR:-$src/build} rounds=400 connects=1000
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--connects) connects=$2; shift ;;
	*) echo "net-modes.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
C=$build/corral
IL=$build/bench/interleave
work=$(mktemp -d /tmp/corral-bench-net.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
[ "$(id -u)" = 0 ] && chown 65534:65534 "$work"
cd "$work"

spec=$work/spec.tsv
{
	printf 'none_mediated\t1\t1\t/usr/bin/env\tCORRAL_TEST_UNIX_MEDIATION=1\t%s\trun\t--net\tnone\t--\t/bin/true\n' "$C"
	printf 'none_unix_refused\t1\t1\t/usr/bin/env\tCORRAL_TEST_UNIX_MEDIATION=0\t%s\trun\t--net\tnone\t--\t/bin/true\n' "$C"
	printf 'loopback\t1\t1\t/usr/bin/env\tCORRAL_TEST_UNIX_MEDIATION=1\t%s\trun\t--net\tloopback\t--\t/bin/true\n' "$C"
	printf 'host\t1\t1\t/usr/bin/env\tCORRAL_TEST_UNIX_MEDIATION=1\t%s\trun\t--net\thost\t--\t/bin/true\n' "$C"
	printf 'allow\t1\t1\t/usr/bin/env\tCORRAL_TEST_UNIX_MEDIATION=1\t%s\trun\t--net\tallow\t--allow\tpypi.org\t--\t/bin/true\n' "$C"
} >"$spec"
echo "# corral run -- /bin/true, $rounds interleaved rounds ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
"$IL" -n "$rounds" -w 20 -s 42 "$spec" >"$work/latency.csv"
/usr/bin/python3 - "$work/latency.csv" <<'PY'
import csv, statistics, sys, collections
d = collections.defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    d[r["row"]].append(float(r["wall_us"]))
print("%-20s %8s %8s %8s %8s" % ("row", "p10 us", "p25 us", "median", "p90 us"))
for k in ("none_unix_refused", "none_mediated", "loopback", "host", "allow"):
    v = sorted(d[k])
    print("%-20s %8.0f %8.0f %8.0f %8.0f" % (k, v[len(v) // 10], v[len(v) // 4], statistics.median(v), v[len(v) * 9 // 10]))
PY

cat >"$work/loop.py" <<'PY'
import os, socket, sys, time
n = int(sys.argv[1])
s = socket.socket(socket.AF_UNIX); s.bind("bench.sock"); s.listen(128)
t0 = time.perf_counter()
for _ in range(n):
    c = socket.socket(socket.AF_UNIX); c.connect("bench.sock"); a, _ = s.accept(); a.close(); c.close()
t = time.perf_counter() - t0
os.unlink("bench.sock")
print("%.1f" % (t / n * 1e6))
PY
chmod 644 "$work/loop.py"
echo "# $connects connects to a listener inside the root (us per connect+accept+close, median of 5)"
for net in none loopback host; do
	v=()
	for _ in 1 2 3 4 5; do v+=("$("$C" run --net "$net" -- /usr/bin/python3 loop.py "$connects")"); done
	printf '%-10s %s us  (runs: %s)\n' "$net" "$(printf '%s\n' "${v[@]}" | sort -n | sed -n 3p)" "${v[*]}"
done

cat >"$work/srv.py" <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers(); self.wfile.write(b"ok")
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.2", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
cat >"$work/get.py" <<'PY'
import http.client, os, statistics, sys, time
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
proxy = os.environ.get("http_proxy")
ts = []
for _ in range(n):
    t = time.perf_counter()
    if proxy:
        ph, pp = proxy[7:].rsplit(":", 1)
        c = http.client.HTTPConnection(ph, int(pp), timeout=5); c.request("GET", "http://%s:%d/" % (host, port))
    else:
        c = http.client.HTTPConnection(host, port, timeout=5); c.request("GET", "/")
    r = c.getresponse(); r.read(); c.close()
    ts.append((time.perf_counter() - t) * 1e6)
ts = sorted(ts[10:])
print("median %.0f us, p90 %.0f us" % (statistics.median(ts), ts[len(ts) * 9 // 10]))
PY
chmod 644 "$work/srv.py" "$work/get.py"
exec {srv}< <(exec /usr/bin/python3 "$work/srv.py")
srvpid=$!
read -r port <&"$srv"
echo "# network allow: 300 HTTP GETs, one connection each, to 127.0.0.2:$port"
printf '%-28s %s\n' "direct, outside corral" "$(/usr/bin/python3 "$work/get.py" 127.0.0.2 "$port" 300)"
printf '%-28s %s\n' "direct, --net host" "$("$C" run --net host -- /usr/bin/python3 get.py 127.0.0.2 "$port" 300)"
printf '%-28s %s\n' "egress proxy, --net allow" \
	"$("$C" run --net allow --allow "127.0.0.2:$port" -- /usr/bin/python3 get.py 127.0.0.2 "$port" 300)"
kill "$srvpid" 2>/dev/null || true
