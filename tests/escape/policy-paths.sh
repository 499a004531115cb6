#!/usr/bin/env bash
# Policy paths against what a previous run left in the root: a --rw/--ro
# path under the root is resolved beneath it with no symlink followed (a
# planted `root/cachelink -> outside` must not grant outside); the
# read-only-inside-writable check is made on what a path resolves to; a
# root or read-write path holding system directories is refused. Also the
# default devices (/dev/ptmx) and the JSON error path with non-UTF-8 bytes.
. "$(dirname "$0")/lib.sh"
mkscratch
X=$S/extra
mkdir "$X"
if is_root; then chown 65534:65534 "$X"; fi

# expect_refused NAME PATTERN CMD...: corral itself refuses (125), saying PATTERN.
expect_refused() {
	local name=$1 pat=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" = 125 ] && grep -q -- "$pat" <<<"$out"; then ok "$name"; else bad "$name: rc=$rc: $out"; fi
}

# -- a symlink planted by one run, named by the next
expect_allowed "plant a symlink from inside" crun -- ln -s "$O" cachelink
expect_refused "--rw ROOT/cachelink (planted symlink)" "symlink inside the root" \
	crun --rw "$R/cachelink" -c 'echo x > cachelink/planted'
expect_refused "--ro ROOT/cachelink (planted symlink)" "symlink inside the root" \
	crun --ro "$R/cachelink" -c "cat '$O/secret'"
expect_allowed "plant a nested symlink" crun -c 'mkdir -p d && ln -s "'"$O"'" d/link'
expect_refused "--rw ROOT/d/link" "symlink inside the root" crun --rw "$R/d/link" -- true
ln -s "$R" "$S/alias"
expect_refused "--rw ALIAS/cachelink (root reached through a host symlink)" "symlink inside the root" \
	crun --rw "$S/alias/cachelink" -- true
# the root reached through "..", and through a symlinked directory further up
mkdir "$S/side"
expect_refused "--rw SIDE/../ROOTNAME/cachelink (root reached through ..)" "symlink inside the root" \
	crun --rw "$S/side/../$(basename "$R")/cachelink" -- true
ln -s "$S" "$S/up"
expect_refused "--rw UP/ROOTNAME/cachelink (a symlink above the root)" "symlink inside the root" \
	crun --rw "$S/up/$(basename "$R")/cachelink" -- true
# a host symlink (outside the root) that leads to a planted one inside it:
# followed by hand, it meets the root, and the planted link is refused
ln -s "$R/cachelink" "$S/to-planted"
ln -s "$(basename "$R")/d" "$S/rel-to-d"
expect_refused "--ro HOSTLINK -> ROOT/cachelink (a planted link behind a host link)" "symlink inside the root" \
	crun --ro "$S/to-planted" -c "cat '$O/secret'"
expect_refused "--ro RELLINK/link (relative host link into the root, then a planted link)" "symlink inside the root" \
	crun --ro "$S/rel-to-d/link" -c "cat '$O/secret'"
expect_refused "--rw HOSTLINK -> ROOT/cachelink" "symlink inside the root" \
	crun --rw "$S/to-planted" -c 'echo x > cachelink/planted'
# a link planted inside a read-write path: refused the same way within one policy
expect_allowed "plant a link inside EXTRA" crun --rw "$X" -- ln -s "$O" "$X/planted"
expect_refused "--rw EXTRA --rw EXTRA/planted" "symlink inside the read-write path $X" \
	crun --rw "$X" --rw "$X/planted" -c "echo x > '$O/planted-rw'"
expect_refused "--rw EXTRA --ro EXTRA/planted" "symlink inside the read-write path $X" \
	crun --rw "$X" --ro "$X/planted" -c "cat '$O/secret'"
expect_refused "--rw EXTRA/planted --rw EXTRA (the other order)" "symlink inside the read-write path $X" \
	crun --rw "$X/planted" --rw "$X" -c "echo x > '$O/planted-rw'"
mkdir -p "$X/nest"
if is_root; then chown 65534:65534 "$X/nest"; fi
expect_allowed "--rw EXTRA/nest --rw EXTRA, nested the other way round" \
	crun --rw "$X/nest" --rw "$X" -c "echo x > '$X/nest/ok4' && echo y > '$X/ok5'"
rm -f "$X/planted"
# a /proc magic link names an object, not its text: a directory whose
# name is gone is still the directory, and (as root) another mount
# namespace's directory is not the host's of the same name
mkdir "$S/gone"
chmod 777 "$S/gone"
(cd "$S/gone" && exec sleep 30) &
gone_pid=$!
for i in $(seq 500); do [ "$(readlink "/proc/$gone_pid/cwd")" = "$S/gone" ] && break; sleep 0.01; done
[ "$(readlink "/proc/$gone_pid/cwd")" = "$S/gone" ] || bad "control: the process in $S/gone did not start"
rmdir "$S/gone"
expect_allowed "--ro /proc/PID/cwd, a removed directory (magic link)" crun --ro "/proc/$gone_pid/cwd" -- true
kill $gone_pid 2>/dev/null
if is_root && command -v unshare >/dev/null; then
	mkdir -p "$S/ns"
	chmod 777 "$S/ns"
	unshare -m --propagation private sh -c "mount -t tmpfs t '$S/ns' && chmod 777 '$S/ns' && exec sleep 30" &
	ns_pid=$!
	for i in $(seq 500); do grep -q " $S/ns " "/proc/$ns_pid/mounts" 2>/dev/null && break; sleep 0.01; done
	grep -q " $S/ns " "/proc/$ns_pid/mounts" 2>/dev/null && ok "control: the other namespace's tmpfs is mounted" ||
		bad "control: the other namespace's tmpfs never appeared"
	expect_denied "--rw /proc/PID/root/NS: the host's directory of that name stays read-only" \
		crun --rw "/proc/$ns_pid/root$S/ns" -c "echo x > '$S/ns/host-file'"
	[ ! -e "$S/ns/host-file" ] && ok "the host's $S/ns untouched" || bad "the host's $S/ns was written"
	kill $ns_pid 2>/dev/null
fi
# ".." out of the root or a read-write path is the user's own spelling, not
# an escape: `--ro ../shared` from the root works (with controls above)
mkdir -p "$S/shared"
echo shared >"$S/shared/f"
chmod -R a+rX "$S/shared"
expect_allowed "--ro ../shared from the root (root = current directory)" \
	sh -c "cd '$R' && '$C' run --ro ../shared -- cat '$S/shared/f'"
expect_allowed "--rw EXTRA --ro EXTRA/../shared" crun --rw "$X" --ro "$X/../shared" -- cat "$S/shared/f"
expect_allowed "--ro /proc/self/cwd/../shared from the root (a magic link, then '..' out of the root)" \
	sh -c "cd '$R' && '$C' run --ro /proc/self/cwd/../shared -- cat '$S/shared/f'"
expect_refused "--ro ROOT/d/.. (the root again)" "lies within the read-write root" crun --ro "$R/d/.." -- true
# a file reached through a /proc magic link (stdin): judged by its real path
echo f >"$R/stdin-file"
expect_refused "--ro /dev/stdin, a file in the root" "lies within the read-write root" \
	sh -c "'$C' run --root '$R' --ro /dev/stdin -- true < '$R/stdin-file'"
expect_allowed "--ro /dev/stdin, a file outside" sh -c "'$C' run --root '$R' --ro /dev/stdin -- true < '$S/shared/f'"
echo g >"$R/gone-file"
ln -f "$R/gone-file" "$R/gone-link"
exec 5<"$R/gone-file"
rm "$R/gone-file"
expect_refused "--ro /dev/stdin, a removed file (its other name in the root)" "whose place cannot be told" \
	sh -c "'$C' run --root '$R' --ro /dev/stdin -- true <&5"
exec 5<&-
rm -f "$R/gone-link" "$R/stdin-file"
# the docker provider checks its bind mounts the same way (before any daemon)
if command -v docker >/dev/null; then
	ln -s "$O" "$X/planted-d"
	expect_refused "docker: --rw EXTRA --ro EXTRA/planted" "symlink inside the read-write path $X" \
		crun --provider docker --image corral-none --rw "$X" --ro "$X/planted-d" -- true
	rm -f "$X/planted-d"
fi
# a --ro naming a file that is itself a read-write path stays writable: refused
echo w >"$S/rwfile"
chmod 666 "$S/rwfile"
expect_refused "--rw FILE --ro FILE" "lies within the read-write path $S/rwfile" \
	crun --rw "$S/rwfile" --ro "$S/rwfile" -c "echo x >> '$S/rwfile'"
# ".." in the root while another run of the same root moves directories:
# every ".." is checked where it really landed (the walk may refuse, never
# land outside)
mkdir -p "$R/ra/rb" "$R/rx" "$S/rx"
chmod 777 "$S/rx"
if is_root; then chown -R 65534:65534 "$R/ra" "$R/rx"; fi
crun --timeout 20 -- python3 -c "
import os, time
end = time.time() + 15
n = 0
while time.time() < end and not os.path.exists('stop-mover'):
    try:
        os.rename('ra/rb', 'rbb'); os.rename('rbb', 'ra/rb')
        n += 1
        if n == 1:
            open('mover-started', 'w').close()
    except OSError:
        pass" &
mover=$!
for i in $(seq 1000); do [ -e "$R/mover-started" ] && break; sleep 0.01; done
[ -e "$R/mover-started" ] && ok "control: the concurrent run renames ra/rb" || bad "control: the mover never renamed ra/rb"
for i in $(seq 30); do
	crun --rw "$R/ra/rb/../../rx" -c "touch '$S/rx/escaped' 2>/dev/null" >/dev/null 2>&1
done
touch "$R/stop-mover"
wait $mover 2>/dev/null
[ ! -e "$S/rx/escaped" ] && ok "'..' raced by a concurrent run: never landed outside the root" ||
	bad "'..' raced by a concurrent run: a --rw rule landed outside the root"
rm -f "$R/stop-mover"
expect_allowed "--rw ROOT/ra/rb/../../rx, no race" crun --rw "$R/ra/rb/../../rx" -c "touch '$R/rx/ok'"
# ... and out of a writable tree nested in another: a root inside a --rw
# path, its top swapped with a sibling by a run of the same policy
W=$S/wtree
mkdir -p "$W/d/r" "$W/r" "$W/x" "$S/x2"
chmod 777 "$S/x2"
if is_root; then chown -R 65534:65534 "$W"; fi
"$C" run --timeout 20 --root "$W/d/r" --rw "$W" -- python3 -c "
import ctypes, os, time
libc = ctypes.CDLL(None)
end = time.time() + 15
n = 0
while time.time() < end and not os.path.exists('$W/stop'):
    if libc.renameat2(-100, b'$W/d/r', -100, b'$W/r', 2) == 0:
        n += 1
        if n == 1:
            open('$W/mover-started', 'w').close()" &
mover=$!
for i in $(seq 1000); do [ -e "$W/mover-started" ] && break; sleep 0.01; done
[ -e "$W/mover-started" ] && ok "control: the concurrent run swaps $W/d/r and $W/r" || bad "control: the mover never swapped"
for i in $(seq 25); do
	"$C" run --root "$W/d/r" --rw "$W" --rw "$W/d/r/../../x" -c "touch '$S/x2/escaped' 2>/dev/null" >/dev/null 2>&1
done
touch "$W/stop"
wait $mover 2>/dev/null
[ ! -e "$S/x2/escaped" ] && ok "'..' out of a nested tree, raced: never landed outside" ||
	bad "'..' out of a nested tree, raced: a --rw rule landed outside"
ln -s loop2 "$S/loop1"
ln -s loop1 "$S/loop2"
expect_refused "--ro a symlink loop" "Too many levels of symbolic links" crun --ro "$S/loop1" -- true
ln -s "$O/secret" "$S/to-secret"
expect_allowed "--ro HOSTLINK -> a file outside the root" crun --ro "$S/to-secret" -c "cat '$O/secret'"
expect_allowed "--rw RELLINK, a host link to a real directory in the root" crun --rw "$S/rel-to-d" -c 'echo x > d/ok-rel'
expect_denied "planted symlink: write outside" crun -c 'echo x > cachelink/planted'
outside_intact
# controls: real directories, under the root and outside it
expect_allowed "--rw ROOT/d (a real directory)" crun --rw "$R/d" -c 'echo x > d/ok'
expect_allowed "--rw EXTRA (outside the root)" crun --rw "$X" -c "echo x > '$X/ok' && test -s '$X/ok'"
expect_allowed "--ro OUTSIDE reads it" crun --ro "$O" -c "cat '$O/secret'"

# -- read-only inside a writable path: decided on what the path resolves to
expect_refused "--ro ROOT/d" "lies within the read-write root" crun --ro "$R/d" -- true
expect_refused "--ro ROOT/d/../d" "lies within the read-write root" crun --ro "$R/d/../d" -- true
expect_refused "--ro ALIAS/d" "lies within the read-write root" crun --ro "$S/alias/d" -- true
expect_refused "--ro EXTRA/ok with --rw EXTRA" "lies within the read-write path" \
	crun --rw "$X" --ro "$X/ok" -- true
# ... found walking the path down from "/" (directories, nested, a file)
# or, through a symlink, walking up from what it opened; with controls.
mkdir -p "$X/sub/deeper" "$S/sibling/sub"
echo s >"$S/sibling/sub/f"
chmod -R a+rX "$S/sibling"
ln -s "$X" "$S/xlink"
if is_root; then chown -R 65534:65534 "$X"; fi
expect_refused "--ro EXTRA/sub with --rw EXTRA" "lies within the read-write path $X" \
	crun --rw "$X" --ro "$X/sub" -- true
expect_refused "--ro EXTRA/sub/deeper with --rw EXTRA" "lies within the read-write path $X" \
	crun --rw "$X" --ro "$X/sub/deeper" -- true
expect_refused "--ro XLINK/sub (a symlink to EXTRA) with --rw EXTRA" "lies within the read-write path $X" \
	crun --rw "$X" --ro "$S/xlink/sub" -- true
expect_refused "--ro EXTRA/sub with --rw XLINK" "lies within the read-write path" \
	crun --rw "$S/xlink" --ro "$X/sub" -- true
expect_refused "--ro EXTRA/sub/deeper with --rw EXTRA/sub" "lies within the read-write path $X/sub" \
	crun --rw "$X/sub" --ro "$X/sub/deeper" -- true
echo f >"$X/sub/file"
if is_root; then chown 65534:65534 "$X/sub/file"; fi
ln -s "$X/sub/file" "$S/to-xfile"
ln -s "$R/d" "$S/to-rd"
expect_refused "--ro a host link to a file in EXTRA, with --rw EXTRA" "lies within the read-write path $X" \
	crun --rw "$X" --ro "$S/to-xfile" -c "echo pwned > '$S/to-xfile'"
expect_refused "--ro a host link to a directory in the root" "lies within the read-write root" \
	crun --ro "$S/to-rd" -- true
expect_allowed "--ro SIBLING/sub with --rw EXTRA" \
	crun --rw "$X" --ro "$S/sibling/sub" -c "cat '$S/sibling/sub/f'"
expect_allowed "--ro SIBLING/sub/f, a file, with --rw EXTRA" \
	crun --rw "$X" --ro "$S/sibling/sub/f" -c "cat '$S/sibling/sub/f'"
expect_allowed "--ro EXTRA with --rw EXTRA/sub: the writable path beneath it" \
	crun --rw "$X/sub" --ro "$X" -c "echo x > '$X/sub/ok2'"
expect_denied "--ro EXTRA with --rw EXTRA/sub: EXTRA itself stays read-only" \
	crun --rw "$X/sub" --ro "$X" -c "echo x > '$X/ok3'"

# -- roots and read-write paths that contain system directories
expect_refused "--root /" "root /: refusing a root that contains system directories (/etc" \
	"$C" run --root / -- true
if is_root; then
	expect_refused "--root / --user root" "refusing a root that contains system directories" \
		"$C" run --root / --user root -c 'echo x > /etc/corral-planted'
	[ ! -e /etc/corral-planted ] && ok "/etc untouched" || { bad "/etc written"; rm -f /etc/corral-planted; }
fi
expect_refused "--root /usr/.." "refusing a root that contains system directories" "$C" run --root /usr/.. -- true
expect_refused "--root /home" "refusing a root that contains system directories (/home)" "$C" run --root /home -- true
expect_refused "--rw /" "refusing a read-write path that contains system directories" crun --rw / -- true
expect_refused "--rw /var" "refusing a read-write path" crun --rw /var -- true
expect_refused "run from / with no --root" "refusing a root" sh -c "cd / && '$C' run -- true"
# probe reports the refusal (exit 0, "runnable": false) rather than failing
out=$("$C" probe --json --root /)
rc=$?
if [ "$rc" = 0 ] && "$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["runnable"] is False and "refusing a root that contains system directories" in d["refusal"], d' "$out"; then
	ok "probe --root /: runnable false, with the reason"
else
	bad "probe --root /: rc=$rc: $out"
fi
expect_refused "check --root /" "refusing a root that contains system directories" "$C" check --root /
out=$(cd / && "$C" check --json 2>&1)
rc=$?
if [ "$rc" != 125 ] && ! grep -q "refusing a root" <<<"$out"; then
	ok "check from / without --root: its own scratch root (control)"
else
	bad "check from / without --root: rc=$rc: $(head -c 300 <<<"$out")"
fi
out=$("$C" run --json --root / -- true)
if [ $? = 125 ] && "$PY" -c 'import json,sys; e=json.loads(sys.argv[1])["error"]; assert e["code"]=="policy", e' "$out"; then
	ok "--json --root /: a policy error"
else
	bad "--json --root /: $out"
fi
expect_allowed "--root ROOT (control)" crun -- true

# -- terminals: /dev/pts is not granted (it holds every terminal of the
# command's uid); a pty the command makes works through the supervisor's
# TIOCGPTPEER (tests/integration/pty.sh); --rw /dev/pts opts in to the rest.
expect_allowed "python: os.openpty without --rw /dev/pts (its own pty)" crun -- "$PY" -c '
import os
m, s = os.openpty()
os.write(s, b"hi\n")
assert os.read(m, 10).startswith(b"hi")'
expect_allowed "python: os.openpty with --rw /dev/pts" crun --rw /dev/pts -- "$PY" -c '
import os
m, s = os.openpty()
os.write(s, b"hi\n")
assert os.read(m, 10).startswith(b"hi")'
expect_allowed "python: pty.fork runs a child on a terminal (--rw /dev/pts)" crun --rw /dev/pts -- "$PY" -c '
import os, pty
pid, fd = pty.fork()
if pid == 0:
    os.execv("/bin/sh", ["sh", "-c", "test -t 0 && echo tty-ok"])
out = b""
while True:
    try:
        b = os.read(fd, 100)
    except OSError:
        break
    if not b:
        break
    out += b
os.waitpid(pid, 0)
assert b"tty-ok" in out, out'

# -- the JSON error object with bytes that are not UTF-8
out=$("$C" run --json --policy $'/tmp/corral-missing-\xff' -- true)
rc=$?
if [ "$rc" = 125 ] && "$PY" -c '
import json, sys
e = json.loads(sys.argv[1])["error"]
assert e["code"] == "not_found", e
assert "\ufffd" in e["message"], e' "$out"; then
	ok "--json error with a non-UTF-8 path: U+FFFD, real code"
else
	bad "--json error with a non-UTF-8 path: rc=$rc: $out"
fi
finish
