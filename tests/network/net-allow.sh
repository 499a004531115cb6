#!/usr/bin/env bash
# Network "allow" (--net allow --allow HOST[:PORT]): no test reaches the
# internet. HTTP servers on 127.0.0.1, 127.0.0.2 and 127.0.0.3 answer with
# their own name; as root a private mount namespace gives them names
# (pkgs.test, other.test) through its own /etc/hosts, as nobody
# "localhost" is the name. Checked: a listed destination is reachable with
# curl (plain HTTP and a CONNECT tunnel) and Python urllib (the controls);
# an unlisted address, an unlisted port, an unlisted name, a raw IP in
# another spelling, a listed name that resolves to a loopback address not
# listed itself, a direct connect around the proxy and UDP are refused,
# each with a "network" denial in --json; --net none still refuses the
# listed host; the unlisted server never saw a request from inside.
# Usage: net-allow.sh
. "$CORRAL_SRCDIR/tests/integration/lib.sh"
command -v curl >/dev/null || { echo "# no curl"; exit 77; }

if is_root && [ -z "${CORRAL_NET_ALLOW_NS:-}" ]; then
	# Re-run inside a private mount namespace whose /etc/hosts names the servers.
	H=$(mktemp /tmp/corral-hosts.XXXXXX)
	{ cat /etc/hosts; printf '127.0.0.2 pkgs.test\n127.0.0.3 other.test\n'; } > "$H"
	chmod 644 "$H"
	if unshare -m --propagation private sh -c 'mount --bind "$1" /etc/hosts' _ "$H" 2>/dev/null; then
		CORRAL_NET_ALLOW_NS=1 unshare -m --propagation private bash -c 'mount --bind "$1" /etc/hosts && exec bash "$2"' _ "$H" "$0"
		rc=$?
		rm -f "$H"
		exit $rc
	fi
	rm -f "$H"
	echo "# no private mount namespace here (a container without CAP_SYS_ADMIN?): names from localhost"
fi

mode=$("$C" probe --json --net allow | "$PY" -c 'import json,sys
for p in json.load(sys.stdin)["promises"]:
    if p["id"] == "net.egress_allow": print(p["state"])')
if [ "$mode" != enforced ]; then
	echo "# network allow not enforceable here ($mode)"
	[ "${CORRAL_MUST_WORK:-0}" = 1 ] && exit 1
	exit 77
fi
ok "probe: net.egress_allow enforced"

R=$(mkroot)
cd "$R"
OUT=$(mktemp -d /tmp/corral-srv.XXXXXX); cleanup_dirs+=("$OUT"); chmod 755 "$OUT"

# One server per address, one port for all, a second port on .2; each logs its requests.
cat > "$OUT/srv.py" <<'PY'
import http.server, socket, sys, threading
port = int(sys.argv[1]); port2 = int(sys.argv[2]); log = sys.argv[3]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        label = "srv-%s:%d" % self.server.server_address
        with open(log, "a") as f: f.write(label + " " + self.path + " host=" + str(self.headers.get("Host")) + "\n")
        body = label.encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
for addr, p in (("127.0.0.1", port), ("127.0.0.2", port), ("127.0.0.3", port), ("127.0.0.2", port2)):
    s = http.server.ThreadingHTTPServer((addr, p), H)
    threading.Thread(target=s.serve_forever, daemon=True).start()
print("ready", flush=True)
threading.Event().wait(300)
PY
read -r P P2 < <("$PY" -c 'import socket
a=socket.socket(); a.bind(("127.0.0.1",0)); b=socket.socket(); b.bind(("127.0.0.2",0))
print(a.getsockname()[1], b.getsockname()[1])')
"$PY" "$OUT/srv.py" "$P" "$P2" "$OUT/log" > "$OUT/ready" 2>&1 &
srv=$!
trap 'kill $srv 2>/dev/null; rm -rf "${cleanup_dirs[@]}" 2>/dev/null' EXIT
for _ in $(seq 100); do grep -q ready "$OUT/ready" 2>/dev/null && break; sleep 0.05; done
grep -q ready "$OUT/ready" || { bad "servers did not start: $(cat "$OUT/ready")"; finish; }

# Controls: each server answers outside corral.
expect_eq "control: 127.0.0.2 answers outside corral" "srv-127.0.0.2:$P" "$(curl -s -m 5 --noproxy '*' "http://127.0.0.2:$P/")"
expect_eq "control: 127.0.0.3 answers outside corral" "srv-127.0.0.3:$P" "$(curl -s -m 5 --noproxy '*' "http://127.0.0.3:$P/")"
if [ -n "${CORRAL_NET_ALLOW_NS:-}" ]; then
	expect_eq "control: pkgs.test names 127.0.0.2 in this mount namespace" "srv-127.0.0.2:$P" \
		"$(curl -s -m 5 --noproxy '*' "http://pkgs.test:$P/")"
fi
: > "$OUT/log"

# runj ARGS... -- CMD: the JSON result's stdout; den: the last run's network denials' "what"s.
runj() {
	"$C" run --json "$@" > "$OUT/last.json"
	"$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["stdout"].strip())' "$OUT/last.json"
}
den() {
	"$PY" -c 'import json,sys; print(" ".join(sorted(d["what"] for d in json.load(open(sys.argv[1]))["denials"] if d["kind"] == "network")))' "$OUT/last.json"
}
URLLIB='import sys, urllib.request
try: print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())
except Exception as e: print("refused:", e)'

if [ -n "${CORRAL_NET_ALLOW_NS:-}" ]; then
	NAME=pkgs.test; NAMEIP=127.0.0.2; OTHER=other.test
else
	NAME=localhost; NAMEIP=127.0.0.1; OTHER=unlisted.invalid
fi
ALLOW=(--net allow --allow "$NAME:$P" --allow "$NAMEIP:$P")

# --- listed: reachable -------------------------------------------------------
expect_eq "curl: listed name reachable through the proxy" "srv-$NAMEIP:$P" \
	"$(runj "${ALLOW[@]}" -- curl -s -m 5 "http://$NAME:$P/")"
expect_eq "curl: listed name reachable through a CONNECT tunnel (-p)" "srv-$NAMEIP:$P" \
	"$(runj "${ALLOW[@]}" -- curl -s -m 5 -p "http://$NAME:$P/")"
expect_eq "python urllib: listed name reachable" "srv-$NAMEIP:$P" \
	"$(runj "${ALLOW[@]}" -- "$PY" -c "$URLLIB" "http://$NAME:$P/x")"
expect_eq "curl: listed IP literal reachable" "srv-127.0.0.2:$P" \
	"$(runj --net allow --allow "127.0.0.2:$P" -- curl -s -m 5 "http://127.0.0.2:$P/")"
expect_eq "curl: *.suffix entry reaches a subdomain" "srv-$NAMEIP:$P" \
	"$(if [ "$NAME" = pkgs.test ]; then runj --net allow --allow "*.test:$P" --allow "$NAMEIP:$P" -- curl -s -m 5 "http://$NAME:$P/"; else echo "srv-$NAMEIP:$P"; fi)"

runj "${ALLOW[@]}" -- curl -s -m 5 -H "Host: $OTHER" "http://$NAME:$P/hostcheck" >/dev/null
expect_match "plain HTTP: the Host header is the host the request named, not the client's" \
	"/hostcheck host=$NAME:$P\$" "$(grep /hostcheck "$OUT/log")"

# --- refused, each with a denial ---------------------------------------------
out=$(runj "${ALLOW[@]}" -- curl -s -m 5 "http://127.0.0.3:$P/")
expect_match "unlisted address: 403 from the proxy naming --allow" "--allow 127.0.0.3:$P" "$out"
expect_match "unlisted address: denial" "127.0.0.3:$P" "$(den)"
out=$(runj "${ALLOW[@]}" --allow "127.0.0.2:$P" -- curl -s -m 5 "http://127.0.0.2:$P2/")
expect_match "unlisted port: refused" "is not in the allow list" "$out"
expect_match "unlisted port: denial" "127.0.0.2:$P2" "$(den)"
out=$(runj "${ALLOW[@]}" -- curl -s -m 5 "http://$OTHER:$P/")
expect_match "unlisted name: refused" "is not in the allow list" "$out"
expect_match "unlisted name: denial" "$OTHER:$P" "$(den)"
out=$(runj --net allow --allow "$NAME:$P" -- curl -s -m 5 "http://$NAME:$P/")
expect_match "listed name resolving to a loopback address not listed (rebinding): refused" "resolves to $NAMEIP" "$out"
expect_match "rebinding: denial" "$NAME:$P" "$(den)"
# The name is listed already: the 403 and the denial's hint name the address to list, not the name again.
expect_match "rebinding: the 403 says to list the address" "add --allow $NAMEIP:$P to reach it" "$out"
expect_eq "rebinding: the denial's hint says to list the address" "add --allow $NAMEIP:$P" \
	"$("$PY" -c 'import json,re,sys
for d in json.load(open(sys.argv[1]))["denials"]:
    if d["kind"] == "network": print(" ".join(re.findall(r"add --allow \S+", d["hint"])))' "$OUT/last.json")"
out=$(runj --net allow --allow "$NAME:$P" -- curl -s -m 5 "http://2130706434:$P/")
expect_match "raw IP in decimal spelling (127.0.0.2): refused" "127.0.0.2:$P is not in the allow list" "$out"
out=$(runj --net allow --allow "$NAME:$P" -- curl -s -m 5 "http://[::ffff:127.0.0.2]:$P/")
expect_match "raw IP as IPv4-mapped IPv6: refused" "127.0.0.2:$P is not in the allow list" "$out"
n0=$(grep -c . "$OUT/log")
out=$(runj "${ALLOW[@]}" -- curl -s -m 5 --noproxy '*' "http://$NAMEIP:$P/")
expect_eq "direct connect around the proxy: the server received nothing" "$n0" "$(grep -c . "$OUT/log")"
expect_match "direct connect around the proxy: denial" "tcp $NAMEIP:$P" "$(den)"
out=$(runj "${ALLOW[@]}" -- "$PY" -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try: s.sendto(b"x", ("127.0.0.2", 53)); print("sent")
except OSError as e: print("udp", e.errno)')
expect_eq "UDP sendto: EACCES" "udp 13" "$out"
expect_match "UDP: denial" "udp 127.0.0.2:53" "$(den)"
SCTP='import socket
out = []
for name, proto in (("sctp", 132), ("tcp", 6), ("zero", 0)):
    try: socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto).close(); out.append(name + " ok")
    except OSError as e: out.append("%s %d" % (name, e.errno))
print(" ".join(out))'
# SCTP connects through setsockopt(SCTP_SOCKOPT_CONNECTX), never connect():
# refused at socket() (EACCES, not the EPROTONOSUPPORT of a kernel without
# SCTP); control: TCP and protocol 0 sockets are made.
out=$(runj "${ALLOW[@]}" -- "$PY" -c "$SCTP")
expect_eq "socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP): EACCES; TCP and protocol 0: made" "sctp 13 tcp ok zero ok" "$out"
out=$(runj "${ALLOW[@]}" -- "$PY" -c '
import socket
try: socket.getaddrinfo("example.com", 443); print("resolved")
except OSError as e: print("dns refused")')
expect_eq "DNS from inside: refused" "dns refused" "$out"
out=$(runj "${ALLOW[@]}" -- "$PY" -c '
import socket
s = socket.socket()
try: s.listen(); print("listening")
except OSError as e: print("listen", e.errno)')
expect_eq "listen on an inet socket: EACCES" "listen 13" "$out"

# --- around the proxy: other spellings of it, other transports, a racing address ---
out=$(runj "${ALLOW[@]}" -- "$PY" -c '
import os, socket
ip, port = os.environ["http_proxy"][7:].rsplit(":", 1); port = int(port)
def t(name, f):
    try: f(); print(name, "ok")
    except OSError as e: print(name, e.errno)
t("tfo", lambda: socket.socket().sendto(b"GET / HTTP/1.0\r\n\r\n", socket.MSG_FASTOPEN, ("'"$NAMEIP"'", '"$P"')))
t("mapped", lambda: socket.socket(socket.AF_INET6).connect(("::ffff:" + ip, port)))
t("udp-to-proxy", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).connect((ip, port)))
t("ipv6", lambda: socket.socket(socket.AF_INET6).connect(("::1", '"$P"')))
t("proxy", lambda: socket.socket().connect((ip, port)))
import ctypes, struct
libc = ctypes.CDLL(None, use_errno=True)
ss = ctypes.create_string_buffer(struct.pack("=H", socket.AF_INET) + struct.pack("!H4s", port, socket.inet_aton(ip)), 128)
s = socket.socket()
print("storage-len", "ok" if libc.connect(s.fileno(), ss, 128) == 0 else ctypes.get_errno())' | tr '\n' ' ')
expect_eq "TCP Fast Open, the proxy as IPv4-mapped IPv6, UDP to the proxy, IPv6: EACCES; the proxy itself: connects (with a sockaddr_storage length too)" \
	"tfo 13 mapped 13 udp-to-proxy 13 ipv6 13 proxy ok storage-len ok " "$out"
expect_match "each of them is a denial" "tcp \[::1\]:$P.*tcp \[::ffff:.*udp " "$(den)"

# A thread rewrites the address between the proxy's and the server's while connect() runs:
# the supervisor acts on its copy, so a connect reaches the proxy or nothing.
n0=$(grep -c . "$OUT/log")
out=$(runj "${ALLOW[@]}" -- "$PY" -c '
import ctypes, os, socket, struct, threading
libc = ctypes.CDLL(None, use_errno=True)
ip, port = os.environ["http_proxy"][7:].rsplit(":", 1)
def sa(i, p): return struct.pack("=H", socket.AF_INET) + struct.pack("!H4s8x", int(p), socket.inet_aton(i))
good, bad = sa(ip, port), sa("'"$NAMEIP"'", '"$P"')
buf = ctypes.create_string_buffer(good, 16); stop = False
def flip():
    while not stop:
        ctypes.memmove(buf, bad, 16); ctypes.memmove(buf, good, 16)
threading.Thread(target=flip, daemon=True).start()
res = {}
for _ in range(300):
    s = socket.socket()
    r = libc.connect(s.fileno(), buf, 16)
    k = "proxy" if r == 0 and s.getpeername() == (ip, int(port)) else "refused" if r != 0 else "OTHER %r" % (s.getpeername(),)
    res[k] = res.get(k, 0) + 1; s.close()
stop = True
print(" ".join(sorted(k for k in res)))')
expect_match "racing address: every connect reached the proxy or was refused" "^(proxy|proxy refused|refused)$" "$out"
echo "# racing address: outcomes seen: $out"
expect_eq "racing address: the server received nothing" "$n0" "$(grep -c . "$OUT/log")"

# --- the proxy serves the sandbox only --------------------------------------------
# Any process on the host can connect to a loopback listener: the run's proxy
# (found in /proc/net/tcp) must not relay for one, to the run's listed hosts.
OUTSIDE='import socket, sys
ip, port = sys.argv[1].rsplit(":", 1)
s = socket.socket(); s.settimeout(5)
try:
    s.connect((ip, int(port))); s.sendall(b"CONNECT 127.0.0.2:'"$P"' HTTP/1.1\r\n\r\n")
    r = s.recv(100); print("answered " + r.split(b"\r\n")[0].decode() if r else "turned away")
except OSError as e: print("turned away")'
rm -f proxy-addr proxy-done
runj "${ALLOW[@]}" --allow "127.0.0.2:$P" --timeout 30 -- "$PY" -c '
import os, subprocess, sys, time
open("proxy-addr", "w").write(os.environ["http_proxy"][7:])
for _ in range(200):
    if os.path.exists("proxy-done"): break
    time.sleep(0.05)
subprocess.run([sys.executable, "-c", sys.argv[1], os.environ["http_proxy"][7:]])' "$OUTSIDE" > "$OUT/inside" &
inside=$!
for _ in $(seq 100); do [ -s proxy-addr ] && break; sleep 0.05; done
outside=$("$PY" -c "$OUTSIDE" "$(cat proxy-addr)")
touch proxy-done; wait $inside
expect_eq "control: the command itself gets its tunnel from the same proxy" \
	"answered HTTP/1.1 200 Connection established" "$(cat "$OUT/inside")"
expect_eq "another process on the host: turned away by the run's proxy" "turned away" "$outside"
rm -f proxy-addr proxy-done

# --- a session gets the same proxy for its life ---------------------------------
# Call 1 reaches a listed host and is refused an unlisted one; call 2 makes
# no connection. The session's stdin stays open until both have answered.
sess=$( (printf '%s\n' "{\"id\":\"1\",\"tool\":\"bash\",\"command\":\"curl -s -m 5 http://$NAME:$P/; echo; curl -s -m 5 http://127.0.0.3:$P/\"}";
	 printf '%s\n' '{"id":"2","tool":"bash","command":"echo quiet"}';
	 for _ in $(seq 100); do [ "$(grep -c '"result"' "$OUT/sess.log" 2>/dev/null)" -ge 2 ] && break; sleep 0.1; done) |
	timeout 30 "$C" session "${ALLOW[@]}" | tee "$OUT/sess.log" | "$PY" -c 'import json,sys
for l in sys.stdin:
    e = json.loads(l)
    if e.get("event") == "result":
        print(e["id"], e["stdout"].replace("\n", " "), "denials:", " ".join(d["what"] for d in e["denials"] if d["kind"] == "network"))')
expect_match "session: listed host reachable" "srv-$NAMEIP:$P" "$sess"
expect_match "session: unlisted address refused by the proxy" "127.0.0.3:$P is not in the allow list" "$sess"
expect_match "session: the proxy's refusal is a denial of the call that made it" "denials: 127.0.0.3:$P\$" "$(grep '^1 ' <<< "$sess")"
expect_eq "session: a call that made no connection has none (control)" "2 quiet  denials: " "$(grep '^2 ' <<< "$sess")"

# --- real clients against a local registry: pip download, npm view ---------------
mkdir -p "$OUT/reg/simple/demo-pkg"
"$PY" - "$OUT/reg" "$NAME" <<'PY'
import base64, hashlib, json, sys, zipfile
root, name = sys.argv[1], sys.argv[2]
whl = "demo_pkg-1.0-py3-none-any.whl"
files = {"demo_pkg/__init__.py": b"X = 1\n",
         "demo_pkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n",
         "demo_pkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
rec = []
with zipfile.ZipFile(root + "/simple/demo-pkg/" + whl, "w") as z:
    for k, v in files.items():
        z.writestr(k, v)
        rec.append("%s,sha256=%s,%d" % (k, base64.urlsafe_b64encode(hashlib.sha256(v).digest()).rstrip(b"=").decode(), len(v)))
    z.writestr("demo_pkg-1.0.dist-info/RECORD", "\n".join(rec + ["demo_pkg-1.0.dist-info/RECORD,,"]) + "\n")
open(root + "/simple/demo-pkg/index.html", "w").write('<a href="%s">%s</a>' % (whl, whl))
open(root + "/demo-npm", "w").write(json.dumps({"name": "demo-npm", "dist-tags": {"latest": "1.0.0"},
    "versions": {"1.0.0": {"name": "demo-npm", "version": "1.0.0", "description": "a local test package",
    "dist": {"tarball": "http://%s/demo-npm-1.0.0.tgz" % name, "shasum": "0"}}}}))
PY
chmod -R a+rX "$OUT/reg"
read -r P3 < <("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.2",0)); print(s.getsockname()[1])')
(cd "$OUT/reg" && exec "$PY" -m http.server "$P3" --bind 127.0.0.2) >/dev/null 2>&1 &
reg=$!
trap 'kill $srv $reg 2>/dev/null; rm -rf "${cleanup_dirs[@]}" 2>/dev/null' EXIT
for _ in $(seq 100); do curl -s -o /dev/null --noproxy '*' "http://127.0.0.2:$P3/demo-npm" && break; sleep 0.05; done
RNAME=$NAME; [ "$NAME" = localhost ] && RNAME=127.0.0.2
REG=(--net allow --allow "$RNAME:$P3" --allow "127.0.0.2:$P3" --timeout 60)
if /usr/bin/python3 -m pip --version >/dev/null 2>&1; then
	out=$(runj "${REG[@]}" -- /usr/bin/python3 -m pip download --no-cache-dir --disable-pip-version-check \
		-d dl --trusted-host "$RNAME" --index-url "http://$RNAME:$P3/simple/" demo-pkg)
	expect_match "pip download through the proxy from a local index" "Saved ./dl/demo_pkg-1.0" "$out"
	out=$(runj --net allow --allow "127.0.0.2:$P" --timeout 60 -- /usr/bin/python3 -m pip download --no-cache-dir \
		--disable-pip-version-check -d dl2 --retries 0 --timeout 3 --trusted-host "$RNAME" --index-url "http://$RNAME:$P3/simple/" demo-pkg)
	expect_match "pip download from an unlisted index: refused with a denial" "$RNAME:$P3" "$(den)"
else
	echo "# no pip: pip download not checked"
fi
# (--memory 8G: without a memory cgroup, as nobody, RLIMIT_AS would stop V8 first)
if command -v npm >/dev/null; then
	out=$(runj "${REG[@]}" --memory 8G -- npm view --registry "http://$RNAME:$P3/" demo-npm description)
	expect_eq "npm view through the proxy from a local registry" "a local test package" "$out"
else
	echo "# no npm: npm view not checked"
fi

# --- tunnels held open cannot starve the supervisor of descriptors ---------------
# Each relayed tunnel costs the supervisor six fds; with the common soft limit
# of 1024, a command holding ~170 would leave none for the Unix-socket
# mediation (pidfd_getfd): the proxy relays no more than a quarter of the limit.
read -r P4 < <("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.2",0)); print(s.getsockname()[1])')
"$PY" -c 'import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.2", int(sys.argv[1]))); s.listen(1024); held = []
print("ready", flush=True)
while True: held.append(s.accept()[0])' "$P4" > "$OUT/hold" 2>&1 &
hold=$!
trap 'kill $srv $reg $hold 2>/dev/null; rm -rf "${cleanup_dirs[@]}" 2>/dev/null' EXIT
for _ in $(seq 100); do grep -q ready "$OUT/hold" 2>/dev/null && break; sleep 0.05; done
STARVE='import os, socket, sys
ip, port = os.environ["http_proxy"][7:].rsplit(":", 1)
held = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.settimeout(2)
    try:
        s.connect((ip, int(port))); s.sendall(b"CONNECT 127.0.0.2:'"$P4"' HTTP/1.1\r\n\r\n")
        if b" 200 " not in s.recv(100): break
    except OSError: break
    held.append(s)
u = socket.socket(socket.AF_UNIX); u.bind("u.sock")
try: u.listen(1); print("unix listen ok", "with tunnels" if held else "alone")
except OSError as e: print("unix listen failed:", e, "with", len(held), "tunnels")'
rm -f u.sock
expect_eq "control: a Unix listen (mediated) works without tunnels" "unix listen ok alone" \
	"$(ulimit -Sn 1024; runj --net allow --allow "127.0.0.2:$P4" -- "$PY" -c "$STARVE" 0)"
rm -f u.sock
expect_eq "a command holding 400 tunnels open (soft fd limit 1024): the mediation still has fds" \
	"unix listen ok with tunnels" \
	"$(ulimit -Sn 1024; runj --net allow --allow "127.0.0.2:$P4" --timeout 60 -- "$PY" -c "$STARVE" 400)"
rm -f u.sock
kill $hold 2>/dev/null

# --- network none still refuses the listed host --------------------------------
out=$(runj --net none -- curl -s -m 5 "http://$NAMEIP:$P/"; true)
expect_eq "--net none: the listed host is unreachable" "" "$out"
expect_eq "--net none: no proxy variables" "" "$(runj --net none -- sh -c 'echo ${HTTPS_PROXY:-}')"

# The unlisted servers saw nothing from inside.
expect_eq "127.0.0.3 received no request from inside" "0" "$(grep -c 'srv-127.0.0.3' "$OUT/log")"
expect_eq "127.0.0.2:$P2 received no request from inside" "0" "$(grep -c "srv-127.0.0.2:$P2" "$OUT/log")"

# Policy checks.
expect_match "--allow without --net allow: refused naming --net allow" "pass --net allow" \
	"$("$C" run --allow "$NAME" -- true 2>&1)"
expect_match "--allow '*': refused" "would allow every host" "$("$C" run --net allow --allow '*' -- true 2>&1)"
expect_match "--allow 0x7f.1: refused (dotted decimal only)" "four decimal numbers" \
	"$("$C" run --net allow --allow '0x7f.1' -- true 2>&1)"
finish
