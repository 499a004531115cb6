#!/usr/bin/env bash
# Filesystem promises: writes only under the root, reads only allowed paths;
# traversal, symlinks, link/rename out, truncate. Three techniques each
# (shell, python, C), each paired with the same action inside the root.
. "$(dirname "$0")/lib.sh"
mkscratch
build_probe || finish

# -- writes outside
expect_allowed "sh: write inside" crun -c 'echo x > inside-sh && test -s inside-sh'
expect_denied "sh: write outside" crun -c "echo x > '$O/planted-sh'"
expect_denied "sh: append to an outside file" crun -c "echo x >> '$O/victim'"
expect_denied "sh: mkdir outside" crun -c "mkdir '$O/planted-dir'"
expect_denied "sh: rm outside" crun -c "rm -f '$O/victim'"
expect_allowed "python: write inside" crun -- "$PY" -c 'open("inside-py", "w").write("x")'
expect_denied "python: write outside" crun -- "$PY" -c "open('$O/planted-py', 'w').write('x')"
expect_denied "python: unlink outside" crun -- "$PY" -c "import os; os.unlink('$O/victim')"
expect_allowed "C: write inside" crun -- $PROBE write inside-c
expect_denied "C: write outside" crun -- $PROBE write "$O/planted-c"
expect_denied "C: append to an outside file" crun -- $PROBE write "$O/victim"

# -- reads outside
expect_allowed "sh: read inside" crun -c 'cat inside-sh'
expect_denied "sh: read outside" crun -c "cat '$O/secret'"
expect_denied "sh: list outside" crun -c "ls '$O'"
expect_allowed "python: read inside" crun -- "$PY" -c 'print(open("inside-sh").read())'
expect_denied "python: read outside" crun -- "$PY" -c "print(open('$O/secret').read())"
expect_allowed "C: read inside" crun -- $PROBE read inside-sh
expect_denied "C: read outside" crun -- $PROBE read "$O/secret"
# the host's home directories are not among the read-only paths
home=$(getent passwd "$(id -un)" | cut -d: -f6)
if [ -n "$home" ] && [ -d "$home" ] && [ "$home" != / ]; then
	expect_denied "sh: list the host's home ($home)" crun -c "ls -A '$home' | head -1 | grep -q ."
fi

# -- traversal
expect_allowed "sh: ./sub/../ inside" crun -c 'mkdir -p sub && echo x > sub/../trav-ok'
expect_denied "sh: ../ traversal write" crun -c 'echo x > ../outside/planted-trav'
expect_denied "sh: ../ traversal read" crun -c 'cat ../outside/secret'
expect_denied "python: ../ traversal write" crun -- "$PY" -c 'open("../outside/planted-trav-py", "w")'
expect_denied "python: /proc/self/cwd/../ write" crun -- "$PY" -c 'open("/proc/self/cwd/../outside/planted-proc", "w")'
expect_denied "C: ../ traversal write" crun -- $PROBE write ../outside/planted-trav-c

# -- symlink escape (a symlink inside the root pointing outside)
expect_allowed "sh: symlink inside" crun -c 'ln -s sub lnk-in && echo x > lnk-in/f'
expect_denied "sh: write through a symlink to outside" crun -c "ln -sf '$O' lnk-out; echo x > lnk-out/planted-sym"
expect_denied "sh: read through a symlink to outside" crun -c "ln -sf '$O/secret' lnk-secret; cat lnk-secret"
expect_denied "python: write through a symlink to outside" crun -- "$PY" -c "
import os
os.symlink('$O', 'lnk-py')
open('lnk-py/planted-sym-py', 'w')"
expect_allowed "C: write through a symlink inside" crun -- $PROBE symlink-write inside-c lnk-c-in
expect_denied "C: write through a symlink to outside" crun -- $PROBE symlink-write "$O/victim" lnk-c-out

# -- link / rename out (and in)
expect_allowed "sh: mv within the root" crun -c 'echo a > mv-a && mv mv-a sub/mv-a && ln sub/mv-a ln-a'
expect_denied "sh: mv out" crun -c "echo a > mv-out && mv mv-out '$O/'"
expect_denied "sh: ln out" crun -c "ln sub/mv-a '$O/planted-ln'"
expect_denied "sh: mv an outside file in" crun -c "mv '$O/victim' stolen"
expect_allowed "python: rename within" crun -- "$PY" -c 'import os; open("r1","w"); os.rename("r1", "sub/r1")'
expect_denied "python: rename out" crun -- "$PY" -c "import os; open('r2','w'); os.rename('r2', '$O/planted-r2')"
expect_denied "python: link an outside file in" crun -- "$PY" -c "import os; os.link('$O/secret', 'stolen-link')"
expect_allowed "C: rename within" crun -- $PROBE rename ln-a sub/ln-a
expect_denied "C: rename out" crun -- $PROBE rename sub/ln-a "$O/planted-c-rename"
expect_denied "C: link out" crun -- $PROBE link sub/mv-a "$O/planted-c-link"

# -- truncate
expect_allowed "sh: truncate inside" crun -c 'echo abc > t && : > t && test ! -s t'
expect_denied "sh: truncate outside (O_TRUNC)" crun -c ": > '$O/victim'"
expect_denied "sh: truncate(1) outside" crun -c "truncate -s 0 '$O/victim'"
expect_allowed "python: truncate inside" crun -- "$PY" -c 'import os; os.truncate("t", 0)'
expect_denied "python: truncate outside" crun -- "$PY" -c "import os; os.truncate('$O/victim', 0)"
expect_allowed "C: truncate inside" crun -- $PROBE truncate t
expect_denied "C: truncate outside" crun -- $PROBE truncate "$O/victim"

# -- the private tmp's removal stays in the tmp. Another run (B) of the same
# uid that can write the tmp base (--rw on it) renames a directory out of
# run A's tmp while corral removes it: the removal used to climb back
# through ".." into where the directory went, deleting what was there with
# corral's rights (root's, as root). Bounded: the climb stops at the level
# it started from, $sac (on the tmp base's filesystem, so a rename gets
# there); the attacker can write $sac/Z only.
base=$(dirname "$(crun -c 'echo $TMPDIR')")
if [ "$(stat -f -c %T "$base")" != tmpfs ]; then
	# Unprivileged, the removal runs with the command's own rights, which
	# the race cannot raise; as root it must run.
	if is_root && [ "${CORRAL_MUST_WORK:-}" = 1 ]; then
		bad "tmp removal race: tmp base $base is not tmpfs (its directory sizes do not shrink): the race did not run"
	else
		echo "# tmp removal race: tmp base $base is not tmpfs (its directory sizes do not shrink), not run"
	fi
else
	sac=$(mktemp -d "$base/corral-esc-sac.XXXXXX") && cleanup_dirs+=("$sac")
	mkdir -p "$sac/Z" "$sac/keepdir" && echo keep > "$sac/keep" && echo keep > "$sac/keepdir/f"
	chmod 1777 "$sac"; chmod 600 "$sac/keep"
	if is_root; then chown 65534:65534 "$sac/Z"; fi
	rm -f "$R/tmpname"
	crun -- "$PY" -c '
import os; t = os.environ["TMPDIR"]; os.makedirs(t + "/X/Y")
for i in range(60000): open("%s/X/Y/f%d" % (t, i), "w").close()
open("tmpname", "w").write(t)' &
	bpid=$!
	for _ in $(seq 600); do [ -s "$R/tmpname" ] && break; sleep 0.05; done
	moved=$("$C" run --root "$R" --rw "$base" --rw "$sac/Z" --timeout 60 -- "$PY" -c '
import os, sys, time
y = sys.argv[1] + "/X/Y"
seen = 0
while True:
    try:
        n = os.stat(y).st_size
    except FileNotFoundError:
        time.sleep(0.001); continue
    if n >= seen:
        seen = n; time.sleep(0.0005); continue
    os.rename(y, sys.argv[2] + "/Y"); print("moved"); break' "$(cat "$R/tmpname")" "$sac/Z" 2>&1)
	wait "$bpid"
	[ "$moved" = moved ] && ok "tmp removal race: Y renamed out of the tmp mid-removal (control)" ||
		bad "tmp removal race: the attacker did not get to move Y: $moved"
	[ -f "$sac/keep" ] && [ -f "$sac/keepdir/f" ] && ok "tmp removal race: nothing outside the tmp removed" ||
		bad "tmp removal race: the removal deleted outside the tmp: $(ls -A "$sac" | tr '\n' ' ')"
	[ ! -e "$(cat "$R/tmpname")" ] && ok "tmp removal race: the tmp itself is gone" || bad "tmp removal race: tmp left"
	rm -rf "$sac"
fi

# -- from outside: nothing planted, nothing changed
outside_intact
finish
