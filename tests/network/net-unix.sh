#!/usr/bin/env bash
# Unix sockets under network "none" (and "loopback"): inside the root they
# work (stream, datagram, fd passing, relative paths, SO_PEERCRED shows the
# sandbox's uid); a socket anywhere else is EACCES — directly, through a
# symlink in the root, by a relative path, and while another thread
# rewrites the address during connect(); the outside listener counts what
# it accepted and must see only the host's own control connections.
# Usage: net-unix.sh UNIXT (the built tests/network/unixt)
. "$CORRAL_SRCDIR/tests/integration/lib.sh"
UNIXT=${1:?usage: net-unix.sh UNIXT}
R=$(mkroot)
cd "$R"
install -m 755 "$UNIXT" "$R/unixt"
mkdir -p "$R/sub"
if is_root; then chown -R 65534:65534 "$R"; fi

mode=$("$C" probe --json | "$PY" -c 'import json,sys
for p in json.load(sys.stdin)["promises"]:
    if p["id"] in ("net.unix_mediated", "net.unix_refused") and p["state"] == "enforced": print(p["id"])')
if [ "$mode" != net.unix_mediated ]; then
	echo "# Unix-socket mediation not in force here ($mode)"
	[ "${CORRAL_MUST_WORK:-0}" = 1 ] && exit 1
	exit 77
fi
ok "probe: net.unix_mediated enforced"

# The outside world: a listener in a directory outside the root, reachable
# by the sandbox's identity when not sandboxed (the control below).
OUT=$(mktemp -d /tmp/corral-out.XXXXXX); cleanup_dirs+=("$OUT"); chmod 755 "$OUT"
"$UNIXT" listen "$OUT/host.sock" 120 > "$OUT/count" &
lpid=$!
for _ in $(seq 100); do [ -S "$OUT/host.sock" ] && break; sleep 0.05; done
as_id() { if is_root; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi; }
expect_eq "control: the outside listener is reachable outside the sandbox" ok "$(as_id "$UNIXT" connect "$OUT/host.sock")"
controls=1
# An outside datagram socket that counts what it receives.
"$PY" -c '
import socket, sys, time, os
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); d.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); d.settimeout(0.1)
n = 0; end = time.time() + 120
while time.time() < end and not os.path.exists(sys.argv[1] + ".stop"):
    try: d.recv(64); n += 1
    except OSError: pass
print(n)' "$OUT/dg.sock" > "$OUT/dgcount" &
dpid=$!
for _ in $(seq 100); do [ -S "$OUT/dg.sock" ] && break; sleep 0.05; done
as_id "$PY" -c 'import socket,sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"c", sys.argv[1])' "$OUT/dg.sock" \
	&& ok "control: the outside datagram socket is reachable outside the sandbox" || bad "control: outside datagram socket"
dgcontrols=1

run() { "$C" run "$@"; }

# --- inside: everything works -------------------------------------------------
cat > "$R/inside.py" <<'PY'
import array, os, socket, struct, sys
out = []
s = socket.socket(socket.AF_UNIX); s.bind("srv.sock"); s.listen()
c = socket.socket(socket.AF_UNIX); c.connect(os.path.abspath("srv.sock")); a, _ = s.accept()
c.sendall(b"ping"); out.append("stream=" + a.recv(4).decode())
uid = struct.unpack("3i", a.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[1]
out.append("peeruid=%s" % ("self" if uid == os.getuid() else uid))
os.chdir("sub")
r = socket.socket(socket.AF_UNIX); r.connect("../srv.sock"); s.accept(); out.append("relative=ok")
os.chdir("..")
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); d.bind("dg.sock")
e = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); e.sendto(b"dg", "dg.sock"); out.append("dgram=" + d.recv(2).decode())
e.sendmsg([b"m2"], [], 0, "dg.sock"); out.append("sendmsg_addr=" + d.recv(2).decode())
fd = os.open("inside.py", os.O_RDONLY)
c.sendmsg([b"F"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
msg, anc, _, _ = a.recvmsg(1, socket.CMSG_SPACE(4))
got = array.array("i"); got.frombytes(anc[0][2]); out.append("fdpass=" + os.read(got[0], 6).decode())
n = socket.socket(socket.AF_UNIX); n.setblocking(False)
try: n.connect("srv.sock"); out.append("nonblock=ok")
except BlockingIOError: out.append("nonblock=inprogress")
p, q = socket.socketpair(); p.send(b"sp"); out.append("socketpair=" + q.recv(2).decode())
import threading
res = []
def th():
    t = socket.socket(socket.AF_UNIX); t.connect("srv.sock"); res.append("ok")
x = threading.Thread(target=th); x.start(); x.join(); s.accept(); out.append("thread=" + (res[0] if res else "failed"))
tmp = os.environ.get("TMPDIR")
if tmp:
    t = socket.socket(socket.AF_UNIX); t.bind(os.path.join(tmp, "t.sock")); t.listen()
    u = socket.socket(socket.AF_UNIX); u.connect(os.path.join(tmp, "t.sock")); out.append("tmpdir=ok")
print(" ".join(out))
PY
chmod 644 "$R/inside.py"
for net in none loopback; do
	rm -f "$R"/*.sock
	out=$(run --net "$net" -- "$PY" inside.py 2>&1)
	expect_eq "$net: inside the root: stream, SO_PEERCRED = sandbox uid, relative, dgram, sendmsg, fd passing, non-blocking, socketpair, another thread, TMPDIR" \
		"stream=ping peeruid=self relative=ok dgram=dg sendmsg_addr=m2 fdpass=import nonblock=ok socketpair=sp thread=ok tmpdir=ok" "$out"
done
out=$(run -- sh -c 'id -u')
if is_root; then expect_eq "root: the sandbox (and the listener's peer) is nobody" 65534 "$out"; fi

# SO_PEERCRED seen by a listener OUTSIDE the sandbox's control: the peer is
# the sandbox's uid, never corral's (as root: 65534, not 0).
rm -f "$R"/*.sock
out=$(run -- "$PY" -c '
import os, socket, struct, subprocess, sys
s = socket.socket(socket.AF_UNIX); s.bind("cred.sock"); s.listen()
subprocess.run(["./unixt", "connect", "cred.sock"], stdout=subprocess.DEVNULL)
a, _ = s.accept()
pid, uid, gid = struct.unpack("3i", a.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
print(uid, gid)')
expect_eq "SO_PEERCRED uid/gid of a mediated connect = the sandbox's" "$(run -- sh -c 'echo $(id -u) $(id -g)')" "$out"

# --- outside: EACCES, every way -----------------------------------------------
ln -sf "$OUT/host.sock" "$R/link.sock"
ln -sf ../link.sock "$R/sub/rel-link.sock"
rel_out="../../$(basename "$OUT")/host.sock"
for net in none loopback; do
	expect_eq "$net: absolute path outside" EACCES "$(run --net "$net" -- ./unixt connect "$OUT/host.sock")"
	expect_eq "$net: symlink in the root to the outside socket" EACCES "$(run --net "$net" -- ./unixt connect link.sock)"
	expect_eq "$net: symlink chain in the root to the outside socket" EACCES "$(run --net "$net" -- sh -c 'cd sub && ../unixt connect rel-link.sock')"
	expect_eq "$net: relative path after chdir (../..)" EACCES "$(run --net "$net" -- sh -c "cd sub && ../unixt connect $rel_out")"
	expect_eq "$net: relative path after chdir out of the root" EACCES "$(run --net "$net" -- sh -c "cd $OUT && $R/unixt connect host.sock")"
	expect_eq "$net: /proc/self/cwd path" EACCES "$(run --net "$net" -- sh -c "cd $OUT && $R/unixt connect /proc/self/cwd/host.sock")"
	expect_eq "$net: abstract address" EACCES "$(run --net "$net" -- "$PY" -c '
import socket
try: socket.socket(socket.AF_UNIX).connect("\0corral-test"); print("CONNECTED")
except OSError as e: print("EACCES" if e.errno == 13 else e)')"
	out=$(run --net "$net" -- "$PY" -c '
import socket, sys
e = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); r = []
for f in (lambda: e.sendto(b"x", sys.argv[1]), lambda: e.sendmsg([b"x"], [], 0, sys.argv[1])):
    try: f(); r.append("SENT")
    except OSError as x: r.append("EACCES" if x.errno == 13 else str(x))
print(" ".join(r))' "$OUT/dg.sock")
	expect_eq "$net: sendto and sendmsg to an outside datagram socket" "EACCES EACCES" "$out"
	out=$(run --net "$net" -- ./unixt race "$R/in.sock" "$OUT/host.sock" 3000)
	expect_match "$net: address rewritten by another thread during connect: only inside or EACCES" \
		"^ok=[1-9][0-9]* denied=[1-9][0-9]* other=[0-9]+$" "$out"
	echo "# race ($net): $out"
done
expect_eq "the hand-over flag bit is refused (EPERM) and the hand-over fd (open_files) cannot be had" \
	"plain=ok magic=EPERM dupK=EBADF" "$(run --open-files 64 -- ./unixt magic 64)"

# A mediated call that blocks (a sendmsg into a full socketpair) does not
# hold up another thread's, which here is the one that lets the peer drain:
# the helpers are a pool. Control: the same program outside.
cat > "$R/twosend.py" <<'PYEOF'
import socket, threading, time
a, b = socket.socketpair()
big = b"x" * (4 << 20)
def writer():
    n = 0
    while n < len(big):
        n += a.sendmsg([big[n:n + 65536]])
t = threading.Thread(target=writer); t.start()
time.sleep(0.3)
b.sendmsg([b"hello"])
got = 0
while got < len(big):
    got += len(b.recv(1 << 20))
t.join()
print("done", a.recv(10).decode())
PYEOF
expect_eq "control: two threads sending on a socketpair, outside" "done hello" "$("$PY" "$R/twosend.py")"
expect_eq "two threads sending on a socketpair, one blocked: no deadlock" "done hello" \
	"$(run --timeout 20 -- "$PY" twosend.py 2>&1)"

# The mediation takes the command's fds (pidfd_getfd). A command killed
# mid-call can leave it the last references, and the last close of a TCP
# socket with SO_LINGER and unsent data sleeps for the linger time (here
# 100000 s): that close is never the event loop's, so the deadline holds.
# Before, corral sat in close() long past it (timeout(1) bounds this test).
t0=$(date +%s)
timeout -s KILL 40 "$C" run --root "$R" --net loopback --timeout 6 -- ./unixt linger 1000000 >/dev/null 2>&1
rc=$?; el=$(( $(date +%s) - t0 ))
[ "$rc" = 124 ] && [ "$el" -le 15 ] && ok "mediated fds of a killed caller: the 6 s deadline held (${el} s)" ||
	bad "mediated fds of a killed caller: exit $rc after ${el} s, deadline 6 s"
# An inherited inet socket (stdin) cannot be connected under "none": the
# helper that connects is outside Landlock, whose TCP rule would refuse it.
# Control: under loopback, inet is the mode's to allow (the socket is the
# host's, handed in by the caller).
"$PY" - "$C" "$R" > "$R/inherit.out" <<'PYEOF'
import socket, subprocess, sys, threading
L = socket.socket(); L.bind(("127.0.0.1", 0)); L.listen()
port = str(L.getsockname()[1])
threading.Thread(target=lambda: [L.accept()[0].close() for _ in range(4)], daemon=True).start()
for net in ("none", "loopback"):
    s = socket.socket()
    r = subprocess.run([sys.argv[1], "run", "--root", sys.argv[2], "--net", net, "--", "./unixt", "inherit-connect", port],
                       stdin=s, capture_output=True, text=True)
    print("%s=%s" % (net, r.stdout.strip()), end=" ")
PYEOF
expect_eq "an inherited TCP socket: connect refused under none, the mode's under loopback" "none=EACCES loopback=ok " "$(cat "$R/inherit.out")"
# Control messages at the IP level (IP_TTL, IP_TOS, IPV6_*, UDP GSO) on an
# inet socket go along under loopback (they used to be EINVAL).
expect_eq "loopback: UDP sendmsg with an IP_TTL control message" ok "$(run --net loopback -- ./unixt udp-cmsg)"

# Six processes blocked sending into a full datagram queue (it holds 10)
# occupy six helpers; the reader's own connect, the call that comes before
# it drains the queue, still gets a helper (there are 16), so the run ends
# at once, as outside (with 4 helpers it waited for the deadline).
cat > "$R/hol.py" <<'PYEOF'
import os, socket, sys, time
d = os.environ.get("TMPDIR", ".")
rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); rx.bind(d + "/hol.rx")
ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); ls.bind(d + "/hol.ls"); ls.listen()
kids = []
for k in range(6):
    pid = os.fork()
    if pid == 0:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        for i in range(40):
            s.sendto(b"m", d + "/hol.rx")
        os._exit(0)
    kids.append(pid)
time.sleep(1)
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); c.connect(d + "/hol.ls")
got = 0
while got < 240:
    rx.recv(16); got += 1
for pid in kids:
    os.waitpid(pid, 0)
print("got", got)
PYEOF
expect_eq "control: six blocked senders and the reader's connect, outside" "got 240" "$(TMPDIR=$(mktemp -d) "$PY" "$R/hol.py")"
expect_eq "six blocked senders do not hold up the reader's connect (helpers: 16)" "got 240" \
	"$(run --timeout 20 -- "$PY" hol.py 2>&1)"

# Many mediated connects at once: 150 threads connect to a listener in the
# root whose backlog is 1 and which starts accepting 0.3 s later, so every
# helper is held in a connect and their queues fill (a socketpair queues
# net.unix.max_dgram_qlen messages, 10 by default). A call no helper can
# take waits for one; none fails with EAGAIN for want of a helper (84 of
# 150 did). Control: the same program outside. And the same storm at a
# socket outside the root is refused every time (the outside listener's
# count is checked at the end).
cat > "$R/storm.py" <<'PYEOF'
import collections, os, socket, sys, threading, time
# N threads connect at once to PATH (default: a listener in TMPDIR with a
# backlog of 1 that starts accepting only 0.3 s after the threads start, so
# every mediated connect is held in corral's helpers a while). Prints how
# the connects ended, e.g. "ok=150".
n = int(sys.argv[1]); d = os.environ.get("TMPDIR", ".")
path = sys.argv[2] if len(sys.argv) > 2 else d + "/storm.sock"
try: os.unlink(d + "/storm.sock")
except OSError: pass
srv = socket.socket(socket.AF_UNIX); srv.bind(d + "/storm.sock"); srv.listen(1)
threading.stack_size(256 * 1024)  # where no memory cgroup bounds the run, RLIMIT_AS does
bar = threading.Barrier(n + 1)
res, keep = [], []
def th():
    c = socket.socket(socket.AF_UNIX)
    bar.wait()
    try:
        c.connect(path); res.append("ok"); keep.append(c)
    except OSError as e:
        res.append(os.strerror(e.errno))
def acceptor():
    bar.wait(); time.sleep(0.3)
    while True: keep.append(srv.accept()[0])
ts = [threading.Thread(target=th) for _ in range(n)]
for t in ts: t.start()
threading.Thread(target=acceptor, daemon=True).start()
for t in ts: t.join()
print(" ".join("%s=%d" % kv for kv in sorted(collections.Counter(res).items())))
PYEOF
ST=$(mktemp -d /tmp/corral-storm.XXXXXX); cleanup_dirs+=("$ST"); chmod 777 "$ST"
expect_eq "control: 150 concurrent connects, outside" "ok=150" "$(TMPDIR=$ST as_id "$PY" "$R/storm.py" 150 2>&1)"
for round in 1 2; do
	expect_eq "150 concurrent mediated connects inside the root all succeed (round $round)" "ok=150" \
		"$(run --procs 1000 --timeout 30 -- "$PY" storm.py 150 2>&1)"
done
expect_eq "150 concurrent connects to a socket outside the root: all EACCES" "Permission denied=150" \
	"$(run --procs 1000 --timeout 30 -- "$PY" storm.py 150 "$OUT/host.sock" 2>&1)"

# A read_write path outside the root: its sockets are reachable.
RW=$(mktemp -d /tmp/corral-rw.XXXXXX); cleanup_dirs+=("$RW"); chmod 777 "$RW"
"$UNIXT" listen "$RW/rw.sock" 30 > "$RW/count" &
rwpid=$!
for _ in $(seq 100); do [ -S "$RW/rw.sock" ] && break; sleep 0.05; done
expect_eq "a socket in a --rw path is reachable" ok "$(run --rw "$RW" -- ./unixt connect "$RW/rw.sock")"
expect_eq "...and not without --rw" EACCES "$(run -- ./unixt connect "$RW/rw.sock")"
touch "$RW/rw.sock.stop"; wait $rwpid

# The outside listeners saw only the controls.
touch "$OUT/host.sock.stop" "$OUT/dg.sock.stop"; wait $lpid; wait $dpid
expect_eq "outside stream listener accepted only the control connection" "$controls" "$(cat "$OUT/count")"
expect_eq "outside datagram socket received only the control datagram" "$dgcontrols" "$(cat "$OUT/dgcount")"

# Where mediation is unavailable: socket(AF_UNIX) refused, socketpair works, probe says so.
out=$(CORRAL_TEST_UNIX_MEDIATION=0 run -- "$PY" -c '
import socket
a, b = socket.socketpair(); a.send(b"k"); r = [b.recv(1).decode()]
try: socket.socket(socket.AF_UNIX); r.append("created")
except OSError as e: r.append(str(e.errno))
print(*r)')
expect_eq "refused mode: socketpair works, socket(AF_UNIX) EACCES" "k 13" "$out"
expect_match "refused mode: probe shows net.unix_refused" "enforced +net\.unix_refused" "$(CORRAL_TEST_UNIX_MEDIATION=0 "$C" probe)"
finish
