#!/usr/bin/env bash
# Network "loopback": a private network namespace with only lo up. TCP and
# UDP servers and clients on 127.0.0.1 and ::1 inside talk; a listener on
# the host's 127.0.0.1 sees nothing; every other address is unreachable;
# namespaces stay out of the command's reach; strict refuses and
# best-effort falls back to "none" where namespaces are unavailable.
. "$(dirname "$0")/lib.sh"
R=$(mkroot)
cd "$R"

if ! "$C" probe --net loopback --json | "$PY" -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["network_namespaces"] else 1)'; then
	echo "# network namespaces unavailable here"
	[ "${CORRAL_MUST_WORK:-0}" = 1 ] && exit 1
	exit 77
fi

# A host listener on 127.0.0.1 that counts the connections it accepts.
cat > "$R/host_listener.py" <<'PY'
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16); s.settimeout(0.1)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", s.getsockname()[1])); u.settimeout(0.05)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
n = 0; end = time.time() + float(sys.argv[2])
while time.time() < end and not os.path.exists(sys.argv[1] + ".stop"):
    for sock in (s, u):
        try:
            if sock is s: sock.accept()[0].close()
            else: sock.recv(16)
            n += 1
        except OSError: pass
print(n)
PY
HL=$(mktemp -d /tmp/corral-hl.XXXXXX); cleanup_dirs+=("$HL")
"$PY" "$R/host_listener.py" "$HL/port" 60 > "$HL/count" &
hl_pid=$!
for _ in $(seq 100); do [ -s "$HL/port" ] && break; sleep 0.05; done
PORT=$(cat "$HL/port")
# control: the host listener is reachable from the host itself (then reset the count by design: we count after)
"$PY" -c "import socket; socket.create_connection(('127.0.0.1', $PORT), timeout=2).close()" \
	&& ok "control: host listener reachable from the host" || bad "control: host listener unreachable from the host"

cat > "$R/inside.py" <<'PY'
import os, socket, sys
port = int(sys.argv[1])
out = []
# TCP echo on 127.0.0.1
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
c = socket.create_connection(s.getsockname(), timeout=2); a, _ = s.accept(); c.sendall(b"ping"); a.sendall(a.recv(4)); out.append("tcp4=" + c.recv(4).decode())
# TCP on ::1
s6 = socket.socket(socket.AF_INET6); s6.bind(("::1", 0)); s6.listen()
c6 = socket.create_connection(s6.getsockname()[:2], timeout=2); a6, _ = s6.accept(); c6.sendall(b"six!"); out.append("tcp6=" + a6.recv(4).decode())
# UDP on 127.0.0.1 and ::1
for fam, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    u = socket.socket(fam, socket.SOCK_DGRAM); u.bind((host, 0)); v = socket.socket(fam, socket.SOCK_DGRAM)
    v.sendto(b"dg", u.getsockname()); out.append("udp%d=%s" % (4 if fam == socket.AF_INET else 6, u.recv(2).decode()))
# The host's 127.0.0.1 listener (TCP and UDP) and the outside world.
try:
    socket.create_connection(("127.0.0.1", port), timeout=2); out.append("hosttcp=CONNECTED")
except OSError as e: out.append("hosttcp=" + (os.strerror(e.errno) if e.errno else str(e)))
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.sendto(b"leak", ("127.0.0.1", port)); out.append("hostudp=sent-into-private-lo")
for addr in (("1.1.1.1", 53), ("8.8.8.8", 443)):
    try:
        socket.create_connection(addr, timeout=2); out.append("out=CONNECTED")
    except OSError as e: out.append("out=" + os.strerror(e.errno))
try:
    socket.create_connection(("2606:4700:4700::1111", 53), timeout=2); out.append("out6=CONNECTED")
except OSError as e: out.append("out6=" + os.strerror(e.errno))
try:
    ifs = sorted(l.split(":")[0].strip() for l in open("/proc/self/net/dev").readlines()[2:])
except OSError as e: ifs = ["unreadable:" + os.strerror(e.errno)]
out.append("ifs=" + ",".join(ifs))
print(" ".join(out))
PY
chmod 644 "$R/host_listener.py" "$R/inside.py"

out=$("$C" run --net loopback -- "$PY" inside.py "$PORT" 2>&1); rc=$?
expect_eq "loopback: inside script exits 0" 0 $rc
expect_eq "loopback: tcp/udp on 127.0.0.1 and ::1 inside; host and world unreachable; only lo" \
	"tcp4=ping tcp6=six! udp4=dg udp6=dg hosttcp=Connection refused hostudp=sent-into-private-lo out=Network is unreachable out=Network is unreachable out6=Network is unreachable ifs=lo" "$out"
out=$("$C" run --json --net loopback -- "$PY" inside.py "$PORT" | json '["exit_status"]'); rc=$?
expect_eq "loopback --json: ran, exit_status 0" "0 0" "$rc $out"
touch "$HL/port.stop"; wait $hl_pid
expect_eq "host listener saw only the host's own control connection" 1 "$(cat "$HL/count")"

# Same command under "none": inet refused (pairs with the loopback success above).
out=$("$C" run --net none -- "$PY" -c 'import socket
try: socket.socket(); print("created")
except OSError as e: print(e.errno)' 2>&1)
expect_eq "none: inet socket refused (EACCES)" 13 "$out"

# Namespaces stay denied to the command; the rest of the policy is unchanged.
out=$("$C" run --net loopback -- "$PY" -c 'import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print("unshared" if libc.unshare(0x40000000) == 0 else ctypes.get_errno())' 2>&1)
expect_eq "loopback: unshare(CLONE_NEWNET) denied (EPERM)" 1 "$out"
out=$("$C" run --net loopback -- sh -c '(echo x > /etc/corral-loopback-test) 2>/dev/null && echo wrote || echo denied; echo y > inside.txt && echo ok' 2>&1)
expect_eq "loopback: Landlock unchanged (write outside denied, inside works)" "denied
ok" "$out"
expect_eq "loopback: files keep their owner" "$(stat -c %u "$R")" "$(stat -c %u "$R/inside.txt")"
out=$("$C" run --net loopback -- "$PY" -c 'import socket
try: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0); print("created")
except OSError as e: print(e.errno)' 2>&1)
expect_eq "loopback: netlink refused (EACCES)" 13 "$out"
out=$("$C" run --net loopback -- sh -c 'id -u' 2>&1)
if is_root; then expect_eq "loopback as root: runs as nobody" 65534 "$out"; else expect_eq "loopback: runs as the caller's uid" "$(id -u)" "$out"; fi

# Without namespaces (a user namespace whose max_user_namespaces is 0, as a
# non-root uid): strict refuses naming the promise; best-effort runs as "none".
if is_root && command -v unshare >/dev/null; then
	chmod 755 "$(dirname "$C")"
	# python: unshare a user namespace mapping 0..65535 to itself (the parent writes the maps), set
	# its user.max_user_namespaces to 0, become nobody, exec the command.
	nons() { "$PY" -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
r, w = os.pipe(); r2, w2 = os.pipe()
pid = os.fork()
if pid == 0:
    if libc.unshare(0x10000000) != 0: sys.exit("unshare: %d" % ctypes.get_errno())
    os.write(w2, b"u"); os.read(r, 1)
    open("/proc/sys/user/max_user_namespaces", "w").write("0")
    os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534)
    os.execv(sys.argv[1], sys.argv[1:])
os.read(r2, 1)
open("/proc/%d/uid_map" % pid, "w").write("0 0 65536")
open("/proc/%d/gid_map" % pid, "w").write("0 0 65536")
os.write(w, b"x")
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st))
' "$@"; }
	err=$(nons "$C" run --net loopback -- true 2>&1); rc=$?
	expect_eq "no namespaces, strict: 125" 125 $rc
	expect_match "no namespaces, strict: names the promise and why" \
		"^corral: compat strict: promise net.loopback_namespace cannot be kept: .*max_user_namespaces = 0" "$err"
	out=$(nons "$C" run --compat best-effort --net loopback -- "$PY" -c 'import socket
try: socket.socket(); print("created")
except OSError as e: print(e.errno)' 2>"$HL/err"); rc=$?
	expect_eq "no namespaces, best-effort: runs as none (inet refused)" "0 13" "$rc $out"
	expect_match "no namespaces, best-effort: says so" "falling back to network \"none\"" "$(cat "$HL/err")"
fi
finish
