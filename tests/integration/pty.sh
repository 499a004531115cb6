#!/usr/bin/env bash
# Pseudo-terminals inside: a pty the command makes works (openpty, the pty
# module, script), each with its control outside corral; a host pty owned
# by the command's own uid stays unreachable by name (control: the same
# open outside succeeds), and TIOCGPTPEER yields nothing from a file that
# is not a ptmx master. The peer comes from the supervisor (seccomp user
# notification): it needs the Unix-socket mediation's listener.
. "$CORRAL_SRCDIR/tests/integration/lib.sh"
R=$(mkroot)
cd "$R"

mode=$("$C" probe --json | "$PY" -c 'import json,sys
for p in json.load(sys.stdin)["promises"]:
    if p["id"] in ("net.unix_mediated", "net.unix_refused") and p["state"] == "enforced": print(p["id"])')
if [ "$mode" != net.unix_mediated ]; then
	echo "# the supervisor's mediation is not in force here ($mode): ptys inside need it"
	[ "${CORRAL_MUST_WORK:-0}" = 1 ] && exit 1
	exit 77
fi
as_id() { if is_root; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi; }

OPENPTY='import os; m, s = os.openpty(); os.write(m, b"hi\n"); print(os.ttyname(s).startswith("/dev/pts/"), os.read(s, 3))'
expect_eq "control: openpty outside" "True b'hi\\n'" "$(as_id "$PY" -c "$OPENPTY")"
out=$("$C" run --json -- "$PY" -c "$OPENPTY")
expect_eq "openpty inside" "True b'hi\\n'" "$("$PY" -c 'import json,sys; print(json.load(sys.stdin)["stdout"].strip())' <<<"$out")"

if command -v script >/dev/null; then
	expect_match "control: script outside" '^/dev/pts/[0-9]+' "$(as_id script -qec tty /dev/null)"
	out=$("$C" run --json -- script -qec tty /dev/null)
	expect_match "script -qec tty inside" "^'/dev/pts/[0-9]+" "$(json '["stdout"]' <<<"$out")"
	out=$("$C" run --json --net host -- script -qec tty /dev/null)
	expect_match "script -qec tty inside, --net host" "^'/dev/pts/[0-9]+" "$(json '["stdout"]' <<<"$out")"
fi

PTYFORK='import pty, os
pid, fd = pty.fork()
if pid == 0:
    os.execv("/bin/sh", ["sh", "-c", "test -t 0 && echo child-has-tty"])
out = b""
while True:
    try: b = os.read(fd, 100)
    except OSError: break
    if not b: break
    out += b
os.waitpid(pid, 0)
print(out.strip().decode())'
expect_eq "control: pty.fork outside" "child-has-tty" "$(as_id "$PY" -c "$PTYFORK")"
out=$("$C" run --json -- "$PY" -c "$PTYFORK")
expect_eq "pty.fork inside" "'child-has-tty\\n'" "$(json '["stdout"]' <<<"$out")"

# TIOCGPTPEER on what is not a master: the kernel's own answer, no fd.
out=$("$C" run --json -- "$PY" -c 'import fcntl, os, errno
fd = os.open("/dev/null", os.O_RDWR)
try: fcntl.ioctl(fd, 0x5441, os.O_RDWR); print("got a peer")
except OSError as e: print(errno.errorcode[e.errno])')
expect_eq "TIOCGPTPEER on /dev/null: ENOTTY" "'ENOTTY\\n'" "$(json '["stdout"]' <<<"$out")"

# A host pty owned by the command's uid: held open outside by a process of that uid.
as_id "$PY" -c 'import os, sys, time
m, s = os.openpty()
open(sys.argv[1] + ".tmp", "w").write(os.ttyname(s)); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
for _ in range(1200):
    if os.path.exists(sys.argv[1] + ".stop"): break
    time.sleep(0.05)' "$R/host-pty" &
hpid=$!
for _ in $(seq 200); do [ -e "$R/host-pty" ] && break; sleep 0.05; done
HP=$(cat "$R/host-pty" 2>/dev/null)
if [ -z "$HP" ]; then
	bad "could not make a host pty"
else
	OPENIT='import os, sys
try: os.close(os.open(sys.argv[1], os.O_RDWR | os.O_NOCTTY)); print("opened")
except OSError as e: print(e.strerror)'
	expect_eq "control: the host pty $HP opens outside, as its owner" opened "$(as_id "$PY" -c "$OPENIT" "$HP")"
	out=$("$C" run --json -- "$PY" -c "$OPENIT" "$HP")
	expect_eq "the host pty $HP is refused inside" "'Permission denied\\n'" "$(json '["stdout"]' <<<"$out")"
	out=$("$C" run --json -- "$PY" -c 'import os, sys
m, s = os.openpty()
try: os.close(os.open(sys.argv[1], os.O_RDWR | os.O_NOCTTY)); print("opened")
except OSError as e: print(e.strerror)' "$HP")
	expect_eq "... also after making a pty of its own" "'Permission denied\\n'" "$(json '["stdout"]' <<<"$out")"
fi
touch "$R/host-pty.stop"; wait "$hpid" 2>/dev/null
finish
