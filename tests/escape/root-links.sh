#!/usr/bin/env bash
# A root reached through a symlink someone else could have planted: a run
# (as nobody) makes ROOT/planted -> a directory of another uid; a later
# `corral run --root ROOT/planted` or `cd ROOT/planted && corral run` must
# not confine a run there — as root it would run as that directory's owner.
# Refused (125, naming the link and its owner) for --root, the policy's
# root and the current directory ($PWD); links root or the caller made, in
# directories only they may write, keep working.
. "$(dirname "$0")/lib.sh"
mkscratch

# expect_refused NAME PATTERN CMD...: corral itself refuses (125), saying PATTERN.
expect_refused() {
	local name=$1 pat=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" = 125 ] && grep -q -- "$pat" <<<"$out"; then ok "$name"; else bad "$name: rc=$rc: $out"; fi
}
# expect_out NAME WANT CMD...: exit 0 and stdout WANT.
expect_out() {
	local name=$1 want=$2 out rc
	shift 2
	out=$("$@" 2>/dev/null)
	rc=$?
	if [ "$rc" = 0 ] && [ "$out" = "$want" ]; then ok "$name"; else bad "$name: rc=$rc, got [$out], want [$want]"; fi
}

if is_root; then
	# A directory of another user (uid 4242, "alice"), 0700: nobody cannot read it.
	A=$S/alice
	mkdir "$A"
	echo "alice-$$" >"$A/private"
	chown -R 4242:4242 "$A"
	chmod 700 "$A"
	expect_denied "the command (nobody) cannot read alice's directory" crun -- cat "$A/private"
	expect_allowed "plant ROOT/planted -> alice's directory from inside" crun -- ln -s "$A" planted
	# What the link would give: named directly, the root is alice's, and the run is hers.
	expect_out "control: --root ALICE (named directly) runs as its owner" 4242 "$C" run --root "$A" -- id -u
	expect_refused "--root ROOT/planted (planted by nobody)" "symlink $R/planted, owned by uid 65534" \
		"$C" run --root "$R/planted" -- id -u
	expect_refused "--root ROOT/planted/. (a component)" "symlink $R/planted, owned by uid 65534" \
		"$C" run --root "$R/planted/." -- cat private
	expect_refused "cd ROOT/planted && corral run (root = current directory)" \
		"current directory, \$PWD) $R/planted: reached through the symlink $R/planted, owned by uid 65534" \
		sh -c "cd '$R/planted' && exec '$C' run -- id -u"
	expect_refused "cd ROOT/planted && corral run --root . (a relative root)" "symlink $R/planted, owned by uid 65534" \
		sh -c "cd '$R/planted' && exec '$C' run --root . -- id -u"
	expect_refused "cd ROOT/planted && corral run --json" '"code": "refused"' \
		sh -c "cd '$R/planted' && exec '$C' run --json -- id -u"
	out=$(cd "$R/planted" && "$C" probe --json)
	rc=$?
	if [ "$rc" = 0 ] && "$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["runnable"] is False and "symlink '"$R"'/planted" in d["refusal"], d' "$out"; then
		ok "cd ROOT/planted && corral probe: runnable false, naming the link"
	else
		bad "cd ROOT/planted && corral probe: rc=$rc: $out"
	fi
	printf '{"root": "%s"}\n' "$R/planted" >"$S/pol.json"
	expect_refused "policy file root: ROOT/planted" "symlink $R/planted, owned by uid 65534" \
		"$C" run --policy "$S/pol.json" -- id -u
	expect_refused "--provider docker --root ROOT/planted" "symlink $R/planted" \
		"$C" run --provider docker --image corral-none --root "$R/planted" -- id -u
	# A link root made, but in a directory nobody may write (it could be swapped).
	ln -s "$A" "$R/rootmade"
	expect_refused "--root ROOT/rootmade (root's link in nobody's directory)" "in a directory uid 65534" \
		"$C" run --root "$R/rootmade" -- id -u
	rm -f "$R/rootmade"
	# Controls: root's own link in root's own directory, and /proc/self/cwd.
	ln -s "$R" "$S/mine"
	expect_out "control: --root MYLINK -> ROOT (root's link)" 65534 "$C" run --root "$S/mine" -- id -u
	expect_out "control: cd MYLINK && corral run" 65534 sh -c "cd '$S/mine' && exec '$C' run -- id -u"
	expect_out "control: cd MYLINK && corral run --root ." 65534 sh -c "cd '$S/mine' && exec '$C' run --root . -- id -u"
	expect_out "control: cd -P ROOT/planted (the user chose alice's directory)" 4242 \
		sh -c "cd -P '$R/planted' && exec '$C' run -- id -u"
else
	ME=$(id -u)
	# A link the caller made itself, in its own directory: trusted.
	expect_allowed "plant ROOT/planted -> OUTSIDE from inside (nobody's own link)" crun -- ln -s "$O" planted
	expect_out "control: --root ROOT/planted (a link of the caller's own uid)" "$ME" \
		"$C" run --root "$R/planted" -- id -u
	expect_out "control: cd ROOT/planted && corral run" "$ME" sh -c "cd '$R/planted' && exec '$C' run -- id -u"
	# A directory any uid may write, not sticky: anyone could have swapped the link.
	mkdir "$S/open"
	chmod 777 "$S/open"
	ln -s "$R" "$S/open/l"
	expect_refused "--root OPEN/l (a link in a world-writable directory)" "in a directory other uids may write" \
		"$C" run --root "$S/open/l" -- id -u
	expect_refused "cd OPEN/l && corral run" "in a directory other uids may write" \
		sh -c "cd '$S/open/l' && exec '$C' run -- id -u"
	expect_out "control: cd -P OPEN/l && corral run" "$ME" sh -c "cd -P '$S/open/l' && exec '$C' run -- id -u"
	chmod 1777 "$S/open"
	expect_out "control: the same link, the directory sticky" "$ME" "$C" run --root "$S/open/l" -- id -u
	chmod 755 "$S/open"
fi
# Both: a root-owned link on the way (/proc/self) and a stale $PWD.
expect_out "control: --root /proc/self/cwd (a root-owned link)" "$R" \
	sh -c "cd '$R' && exec '$C' run --root /proc/self/cwd -- pwd"
expect_out "control: a stale \$PWD naming another directory is ignored" "$R" \
	sh -c "cd '$R' && PWD=/nonexistent exec '$C' run -- pwd"
finish
