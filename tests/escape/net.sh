#!/usr/bin/env bash
# Network promises: no TCP/UDP over IPv4/IPv6 and no netlink under "none",
# no packet or vsock in any mode, no Unix socket outside the sandbox
# (pathname and abstract). Techniques: bash's /dev/tcp, python, C; the
# positive control of each is the same attack under --net host (it must
# reach the listener: the technique works) plus socketpair.
. "$(dirname "$0")/lib.sh"
mkscratch
build_probe || finish

ABS=corral-esc-$$-$RANDOM
"$PY" "$(dirname "$0")/listen.py" "$S/ports" "$S/hits" "$O/sock" "$ABS" </dev/null >/dev/null 2>&1 &
cleanup_pids+=($!)
disown
for _ in $(seq 100); do [ -f "$S/ports" ] && break; sleep 0.05; done
[ -f "$S/ports" ] || { bad "listeners did not start"; finish; }
if is_root; then chown 65534:65534 "$O/sock"; fi
port() { awk -v n="$1" '$1 == n { print $2 }' "$S/ports"; }
hits() {
	local n=0
	[ -f "$S/hits" ] && n=$(grep -c "^$1\$" "$S/hits")
	echo "${n:-0}"
}

# attack NAME KIND CMD...: denied under none, no hit; allowed under host, one hit.
attack() {
	local name=$1 kind=$2
	shift 2
	local before after
	before=$(hits "$kind")
	expect_denied "$name (none)" crun --net none -- "$@"
	after=$(hits "$kind")
	[ "$before" = "$after" ] && ok "$name (none): nothing reached the listener" ||
		bad "$name (none): the listener got $((after - before)) hits"
	expect_allowed "$name under --net host" crun --net host -- "$@"
	# The listener records the hit on its own time: wait for it (up to 5 s).
	for _ in $(seq 500); do [ "$(hits "$kind")" -gt "$after" ] && break; sleep 0.01; done
	[ "$(hits "$kind")" -gt "$after" ] && ok "$name under --net host reached the listener" ||
		bad "$name under --net host: no hit recorded"
}

expect_allowed "python: socketpair" crun -- "$PY" -c 'import socket; a, b = socket.socketpair(); a.send(b"x"); assert b.recv(1) == b"x"'
expect_allowed "C: socketpair" crun -- $PROBE socketpair

for v in 4 6; do
	p=$(port tcp$v)
	host=127.0.0.1
	[ $v = 6 ] && host=::1
	if [ -z "$p" ]; then
		if [ "${CORRAL_MUST_WORK:-}" = 1 ]; then
			bad "no IPv$v loopback on this host: the tcp$v/udp$v attacks did not run"
		else
			echo "# no IPv$v loopback on this host: tcp$v/udp$v skipped"
		fi
		continue
	fi
	attack "bash /dev/tcp IPv$v" tcp$v bash -c "exec 3<>/dev/tcp/$host/$p"
	attack "python TCP IPv$v" tcp$v "$PY" -c "import socket; socket.create_connection(('$host', $p), timeout=3)"
	attack "C TCP IPv$v" tcp$v $PROBE tcp "$host" "$p"
	pu=$(port udp$v)
	attack "python UDP IPv$v" udp$v "$PY" -c "
import socket
s = socket.socket(socket.AF_INET6 if ':' in '$host' else socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b'x', ('$host', $pu))"
	attack "C UDP IPv$v" udp$v $PROBE udp "$host" "$pu"
done

# netlink: refused under none (host allows it by design)
expect_denied "python: netlink" crun -- "$PY" -c 'import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)'
expect_denied "C: netlink" crun -- $PROBE netlink
# packet and vsock: refused in every mode
for net in none host; do
	expect_denied "python: AF_PACKET (--net $net)" crun --net $net -- "$PY" -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, 0)'
	expect_denied "C: AF_PACKET (--net $net)" crun --net $net -- $PROBE packet
	expect_denied "python: AF_VSOCK (--net $net)" crun --net $net -- "$PY" -c 'import socket; socket.socket(40, socket.SOCK_STREAM, 0)'
	expect_denied "C: AF_VSOCK (--net $net)" crun --net $net -- $PROBE vsock
done

# Unix sockets outside the sandbox. Pathname: refused under none (socket()
# is refused outright until Landlock ABI 9 can mediate connect()).
before=$(hits unix)
expect_denied "python: connect to a Unix socket outside" crun -- "$PY" -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('$O/sock')"
expect_denied "C: connect to a Unix socket outside" crun -- $PROBE unix "$O/sock"
expect_denied "sh (python -m): connect to a Unix socket outside" crun -c "$PY -c \"import socket; socket.socket(socket.AF_UNIX).connect('$O/sock')\""
[ "$(hits unix)" = "$before" ] && ok "the outside Unix socket saw no connection" || bad "the outside Unix socket was reached"
# control: the same technique reaches it when nothing confines it
expect_allowed "python: the outside Unix socket is reachable unconfined" as_id "$PY" -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('$O/sock')"

# Abstract: refused under none, and under host by Landlock's scope (ABI 6).
before=$(hits abstract)
for net in none host; do
	expect_denied "python: abstract socket outside (--net $net)" crun --net $net -- "$PY" -c "import socket; socket.socket(socket.AF_UNIX).connect('\0$ABS')"
	expect_denied "C: abstract socket outside (--net $net)" crun --net $net -- $PROBE abstract "$ABS"
done
[ "$(hits abstract)" = "$before" ] && ok "the outside abstract socket saw no connection" || bad "the outside abstract socket was reached"
expect_allowed "python: abstract socket of the sandbox's own (--net host)" crun --net host -- "$PY" -c "
import socket
l = socket.socket(socket.AF_UNIX); l.bind('\0$ABS-in'); l.listen(1)
socket.socket(socket.AF_UNIX).connect('\0$ABS-in')"
expect_allowed "python: abstract socket outside reachable unconfined" as_id "$PY" -c "import socket; socket.socket(socket.AF_UNIX).connect('\0$ABS')"
finish
