#!/usr/bin/env bash
# The result's "denials": what the policy refused, each paired with a
# control where the same thing is allowed (or done outside) and lists
# nothing. Exact entries (source "supervisor") need the Unix-socket
# mediation's listener (Landlock ABI < 9 with seccomp user notification);
# fs entries are inferred from stderr and must name a path the policy
# really denies.
. "$CORRAL_SRCDIR/tests/integration/lib.sh"
R=$(mkroot)
cd "$R"

den() { "$PY" -c 'import json,sys
d = json.load(sys.stdin)["denials"]
print(";".join("%s|%s|%s|%s" % (x["kind"], x["what"], x["count"], x["source"]) for x in d))'; }
hint() { "$PY" -c 'import json,sys
print(";".join(x["hint"] for x in json.load(sys.stdin)["denials"]))'; }

out=$("$C" run --json -- /bin/true)
expect_eq "a clean run has no denials" "" "$(den <<<"$out")"

mode=$("$C" probe --json | "$PY" -c 'import json,sys
for p in json.load(sys.stdin)["promises"]:
    if p["id"] in ("net.unix_mediated", "net.unix_refused") and p["state"] == "enforced": print(p["id"])')
if [ "$mode" = net.unix_mediated ]; then
	# network: socket() refused as before (EACCES), and counted.
	out=$("$C" run --json -- "$PY" -c 'import socket; socket.socket()')
	expect_eq "socket(AF_INET) under none: one network denial" "network|socket(AF_INET)|1|supervisor" "$(den <<<"$out")"
	expect_match "the command still gets EACCES" "Errno 13" "$(json '["stderr"]' <<<"$out")"
	expect_match "the hint names --net" "--net host" "$(hint <<<"$out")"
	out=$("$C" run --json -- "$PY" -c '
import socket
for f in (socket.AF_INET, socket.AF_INET6, socket.AF_INET, socket.AF_PACKET):
    try: socket.socket(f, socket.SOCK_DGRAM)
    except PermissionError: pass')
	expect_eq "counted per family" "network|socket(AF_INET)|2|supervisor;network|socket(AF_INET6)|1|supervisor;network|socket(AF_PACKET)|1|supervisor" "$(den <<<"$out")"
	out=$("$C" run --json -- "$PY" -c 'import socket; a, b = socket.socketpair(); s = socket.socket(socket.AF_UNIX); print("ok")')
	expect_eq "control: Unix sockets and socketpair are no denial" "ok|" "$(json '["stdout"]' <<<"$out" | tr -d "'\\\\n")|$(den <<<"$out")"
	if is_root; then
		out=$("$C" run --json --net host -- "$PY" -c 'import socket; socket.socket(); print("ok")')
		expect_eq "control: --net host makes the socket, no denial" "'ok\\n'|" "$(json '["stdout"]' <<<"$out")|$(den <<<"$out")"
	fi

	# unix_socket: a listener outside the root, reachable outside (control).
	OUT=$(mktemp -d /tmp/corral-den.XXXXXX); cleanup_dirs+=("$OUT"); chmod 755 "$OUT"
	"$PY" -c 'import socket,sys,os,time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen(8)
open(sys.argv[1] + ".ready", "w").close()
s.settimeout(60)
try:
    while True: s.accept()
except OSError: pass' "$OUT/l.sock" &
	lpid=$!
	for _ in $(seq 200); do [ -e "$OUT/l.sock.ready" ] && break; sleep 0.05; done
	as_id() { if is_root; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi; }
	expect_eq "control: the outside socket is reachable outside corral" ok \
		"$(as_id "$PY" -c 'import socket,sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1]); print("ok")' "$OUT/l.sock")"
	out=$("$C" run --json -- "$PY" -c 'import socket,sys
try: socket.socket(socket.AF_UNIX).connect(sys.argv[1])
except PermissionError: print("refused")' "$OUT/l.sock")
	expect_eq "Unix connect outside: refused and one unix_socket denial" "'refused\\n'|unix_socket|$OUT/l.sock|1|supervisor" \
		"$(json '["stdout"]' <<<"$out")|$(den <<<"$out")"
	expect_match "its hint names --rw" "--rw DIR" "$(hint <<<"$out")"
	# A socket that is not there (glibc tries /var/run/nscd/socket in every
	# name lookup) is no refusal: ENOENT as outside, nothing listed; but a
	# missing name in a directory the command may not search stays EACCES
	# (no oracle on the host's files).
	out=$("$C" run --json -- "$PY" -c 'import socket,sys
try: socket.socket(socket.AF_UNIX).connect(sys.argv[1])
except OSError as e: print(e.errno)' "$OUT/missing.sock")
	expect_eq "a missing socket outside: ENOENT, no denial" "'2\\n'|" "$(json '["stdout"]' <<<"$out")|$(den <<<"$out")"
	mkdir -m 700 "$OUT/hidden"
	if is_root; then
		out=$("$C" run --json -- "$PY" -c 'import socket,sys
try: socket.socket(socket.AF_UNIX).connect(sys.argv[1])
except OSError as e: print(e.errno)' "$OUT/hidden/missing.sock")
		expect_eq "a missing socket in a directory the command cannot search: EACCES and listed" \
			"'13\\n'|unix_socket|$OUT/hidden/missing.sock|1|supervisor" "$(json '["stdout"]' <<<"$out")|$(den <<<"$out")"
	fi
	out=$("$C" run --json -- "$PY" -c 'import socket
s = socket.socket(socket.AF_UNIX); s.bind("in.sock"); s.listen(1)
socket.socket(socket.AF_UNIX).connect("in.sock"); print("ok")')
	expect_eq "control: a Unix socket under the root, no denial" "'ok\\n'|" "$(json '["stdout"]' <<<"$out")|$(den <<<"$out")"
	kill "$lpid" 2>/dev/null; wait "$lpid" 2>/dev/null
else
	echo "# Unix-socket mediation not in force here ($mode): no supervisor denials to see"
	[ "${CORRAL_MUST_WORK:-0}" = 1 ] && bad "mediation expected (CORRAL_MUST_WORK=1)"
fi

# fs, inferred: a write outside, and what must not be listed.
rm -f /tmp/corral-den-x 2>/dev/null
out=$("$C" run --json -- sh -c 'echo > /tmp/corral-den-x')
expect_eq "echo > /tmp/x: one inferred fs denial" "fs|/tmp/corral-den-x|1|inferred" "$(den <<<"$out")"
expect_match "its hint says use \$TMPDIR" '^/tmp is not writable: use \$TMPDIR' "$(hint <<<"$out")"
[ -e /tmp/corral-den-x ] && bad "the write outside happened" || ok "the write outside did not happen"
out=$("$C" run --json -- sh -c 'echo > "$TMPDIR/x" && echo > inroot && cat inroot')
expect_eq "control: writes to \$TMPDIR and the root, no denial" "0|" "$(json '["exit_status"]' <<<"$out")|$(den <<<"$out")"
out=$("$C" run --json -- "$PY" -c 'open("/tmp/corral-den-y", "w")')
expect_eq "python's PermissionError names the path" "fs|/tmp/corral-den-y|1|inferred" "$(den <<<"$out")"
out=$("$C" run --json -- sh -c 'cat /root/.profile /nonexistent-dir/x; true')
if [ -e /root/.profile ]; then
	expect_eq "a read outside every path" "fs|/root/.profile|1|inferred" "$(den <<<"$out")"
fi
# Lines naming paths the policy allows are never listed, whatever they say.
out=$("$C" run --json -- sh -c 'echo "x: $PWD/f: Permission denied" >&2; echo "x: /usr/bin/env: Permission denied" >&2;
	echo "x: $TMPDIR/f: Read-only file system" >&2; echo "cat: /etc/shadow: Permission denied" >&2;
	echo "/tmp/not-a-refusal: No such file or directory" >&2')
expect_eq "control: allowed paths, DAC refusals and other errors are not denials" "" "$(den <<<"$out")"
# Inferred paths are resolved with the command's identity: a root
# supervisor must not tell the caller what exists under, or where a symlink
# points in, a directory the command (nobody) cannot search.
if is_root; then
	H=$(mktemp -d /var/tmp/corral-den-hidden.XXXXXX)
	mkdir "$H/there" && ln -s "$H/there" "$H/link"
	lines="echo \"x: $H/there/f: Permission denied\" >&2; echo \"x: $H/missing/f: Permission denied\" >&2;
		echo \"x: $H/link: Permission denied\" >&2"
	chmod 755 "$H"
	out=$("$C" run --json -- sh -c "$lines")
	expect_eq "control: a searchable directory is resolved" \
		"fs|$H/there/f|1|inferred;fs|$H/there|1|inferred" "$(den <<<"$out")"
	chmod 700 "$H"
	out=$("$C" run --json -- sh -c "$lines")
	expect_eq "an unsearchable directory: no existence or symlink target leaks" \
		"fs|$H/link|1|inferred" "$(den <<<"$out")"
	rm -rf "$H"
fi
finish
