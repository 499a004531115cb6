#!/usr/bin/env bash
# What leaks in, and who the command is: only fds 0-2, only the listed
# environment, no capabilities, no_new_privs, a non-root uid when corral
# runs as root, a private TMPDIR that is removed after the run.
. "$(dirname "$0")/lib.sh"
R=$(mkroot)
cd "$R"

# fds: corral is started with fds 5 and 7 open; inside, only 0, 1, 2.
exec 5>/dev/null 7</dev/null
fds=$("$C" run -- $PY -c 'import os; print(" ".join(sorted(os.listdir("/proc/self/fd"), key=int)))')
exec 5>&- 7<&-
# listdir itself holds one fd (3) while reading
expect_eq "only fds 0-2 inside (3 is listdir's own)" "0 1 2 3" "$fds"
fds=$("$C" run --json -- $PY -c 'import os; print(" ".join(sorted(os.listdir("/proc/self/fd"), key=int)))' | json '["stdout"]')
expect_eq "only fds 0-2 inside (--json)" "'0 1 2 3\n'" "$fds"

# stdio passed through from files outside the root can be reopened by name
# (/dev/stdout, tee /dev/stderr, cat /dev/stdin), with only the access the
# fd has: an output file is not readable that way, its directory stays out.
O=$(mktemp -d /tmp/corral-it-out.XXXXXX); chmod 755 "$O"; cleanup_dirs+=("$O")
printf 'from-stdin\n' > "$O/in"; printf 'secret\n' > "$O/out2"
: > "$O/out"; : > "$O/err"; : > "$O/err2"
if is_root; then chown 65534:65534 "$O"/*; fi
"$C" run -- sh -c 'echo a > /dev/stdout; echo b >> /proc/self/fd/1' > "$O/out" 2>"$O/err"
expect_eq "stdio: reopening /dev/stdout (a file outside the root) writes it" "a b" "$(tr '\n' ' ' < "$O/out" | sed 's/ $//')"
"$C" run -- sh -c 'echo t | tee /dev/stderr >/dev/null' 2> "$O/err"
expect_eq "stdio: tee /dev/stderr (a file outside the root)" "t" "$(cat "$O/err")"
expect_eq "stdio: cat /dev/stdin (a file outside the root)" "from-stdin" "$("$C" run -- cat /dev/stdin < "$O/in")"
"$C" run -- sh -c 'cat /proc/self/fd/1 >&2; echo "read $?" >&2' >> "$O/out2" 2>"$O/err2"
expect_match "stdio: an output file cannot be read back by name" "read [1-9]" "$(cat "$O/err2")"
expect_eq "stdio: ... and its content did not come in" "" "$(grep secret "$O/err2")"
# The rights follow how the fd was opened, not its number: stdin opened
# for writing is not readable by name, stdout opened for reading not
# writable, an O_PATH stdout gives nothing.
"$C" run -- sh -c "cat '$O/out2' >&2; echo \"read \$?\" >&2" 0>>"$O/out2" 2>"$O/err2"
expect_eq "stdio: stdin opened write-only is not readable by name" "" "$(grep secret "$O/err2")"
"$C" run -- sh -c "echo OWNED > '$O/out2'; echo \"write \$?\" >&2" 1<"$O/out2" 2>"$O/err2"
expect_eq "stdio: stdout opened read-only is not writable by name" "secret" "$(cat "$O/out2")"
$PY -c 'import os,sys; fd=os.open(sys.argv[1], os.O_PATH); os.dup2(fd, 1, inheritable=True); os.execvp(sys.argv[2], sys.argv[2:])' \
	"$O/out2" "$C" run -- sh -c "echo OWNED > '$O/out2'" 2>/dev/null
expect_eq "stdio: an O_PATH stdout gives nothing" "secret" "$(cat "$O/out2")"
"$C" run -- sh -c "echo x > '$O/sibling'" > "$O/out" 2>/dev/null
expect_eq "stdio: the output file's directory stays out of reach" "absent" "$([ -e "$O/sibling" ] && echo present || echo absent)"

# environment: a secret and LD_PRELOAD in corral's environment are absent.
env_in=$(SECRET_TOKEN=hunter2 LD_PRELOAD=/nonexistent.so BASH_ENV=/x SSH_AUTH_SOCK=/y \
	"$C" run --env PASSME --env SETME=42 -- env 2>/dev/null)
names=$(printf '%s\n' "$env_in" | cut -d= -f1 | sort | tr '\n' ' ')
for bad_name in SECRET_TOKEN LD_PRELOAD BASH_ENV SSH_AUTH_SOCK; do
	[[ " $names " == *" $bad_name "* ]] && bad "env: $bad_name leaked" || ok "env: $bad_name absent"
done
expect_match "env: only the allow-listed names" "^(HOME |LANG |PATH |SETME |TERM |TMPDIR |PWD |SHLVL |_ )+$" "$names"
expect_eq "env: --env NAME=VALUE set" "SETME=42" "$(printf '%s\n' "$env_in" | grep '^SETME=')"
out=$(PASSME=from-host "$C" run --env PASSME -- sh -c 'echo $PASSME')
expect_eq "env: --env NAME passes the host value" "from-host" "$out"
expect_match "env: HOME is the run's own, its tmp (tests/integration/options.sh)" "/corral-tmp-[^/]+$" "$("$C" run -- sh -c 'echo $HOME')"
expect_eq "env: PATH is minimal" "/usr/local/bin:/usr/bin:/bin" "$("$C" run -- sh -c 'echo $PATH')"

# The environment is what the policy says, no more: a file that passes and
# sets nothing but X gets HOME, TMPDIR and X (no PATH, LANG, TERM), as
# `policy show` prints it; the defaults hold PATH, LANG and TERM (control).
printf '{"env": {"pass": [], "set": {"X": "1"}}}' > "$R/env-policy.json"
names=$(LANG=C TERM=dumb "$C" run --policy "$R/env-policy.json" -- /usr/bin/env | cut -d= -f1 | sort | tr '\n' ' ')
expect_eq "env: only what the policy lists, plus HOME and TMPDIR" "HOME TMPDIR X " "$names"
expect_match "env: policy show agrees" '"pass": \[\]' "$("$C" policy show --policy "$R/env-policy.json" | tr -d '\n')"
names=$(LANG=C TERM=dumb "$C" run -- /usr/bin/env | cut -d= -f1 | sort | tr '\n' ' ')
expect_eq "env: the defaults pass LANG, TERM and set PATH" "HOME LANG PATH TERM TMPDIR " "$names"

# An explicit TMPDIR wins over the private one (control: without it, the private tmp).
expect_eq "env: --env TMPDIR=VALUE kept" "$R/mytmp" "$("$C" run --env TMPDIR="$R/mytmp" -- sh -c 'echo $TMPDIR')"
expect_eq "env: --env TMPDIR passes the host value" "/host/tmp" "$(TMPDIR=/host/tmp "$C" run --env TMPDIR -- sh -c 'echo $TMPDIR')"
expect_match "env: TMPDIR otherwise the private tmp" "/corral-tmp-" "$("$C" run -- sh -c 'echo $TMPDIR')"

# Signal dispositions: what corral's caller ignores is default inside
# (control: the same shell really ignores them outside).
ign_out=$( (trap '' INT PIPE USR1 HUP; grep '^SigIgn:' /proc/self/status) | awk '{print $2}')
ign_in=$( (trap '' INT PIPE USR1 HUP; "$C" run -- grep '^SigIgn:' /proc/self/status) | awk '{print $2}')
[ "$ign_out" != 0000000000000000 ] && ok "control: the caller ignores signals ($ign_out)" || bad "control: no ignored signal outside"
expect_eq "ignored signals reset to default inside" "0000000000000000" "$ign_in"
ign_in=$( (trap '' INT PIPE USR1 HUP; "$C" run --json -- grep '^SigIgn:' /proc/self/status) | json '["stdout"]')
expect_eq "ignored signals reset to default inside (--json)" "'SigIgn:\t0000000000000000\n'" "$ign_in"
# musl keeps 32-34 for itself and its sigaction() refuses them; signal 34,
# which a glibc shell can ignore, must be reset all the same.
ign_out=$(bash -c "trap '' 34 35; grep '^SigIgn:' /proc/self/status" | awk '{print $2}')
ign_in=$(bash -c "trap '' 34 35; exec \"\$0\" run -- grep '^SigIgn:' /proc/self/status" "$C" | awk '{print $2}')
# Only bits 34 and 35 matter: a caller started in the background by a
# non-interactive shell also ignores SIGINT and SIGQUIT.
[ -n "$ign_out" ] && [ $((0x$ign_out & 0x600000000)) = $((0x600000000)) ] && ok "control: the caller ignores signals 34 and 35" || bad "control: signals 34-35 outside: $ign_out"
expect_eq "signals 34 and 35 reset to default inside" "0000000000000000" "$ign_in"

# TMPDIR: private, 0700, writable, gone after the run.
out=$("$C" run -- sh -c 'echo x > "$TMPDIR/f" && mkdir -p "$TMPDIR/d/e" && ln -s / "$TMPDIR/d/root" && chmod 000 "$TMPDIR/d/e" && stat -c "%a %u" "$TMPDIR" && echo "$TMPDIR"')
read -r mode owner tmp <<<"$(echo $out)"
expect_eq "TMPDIR mode 0700" "700" "$mode"
if is_root; then expect_eq "TMPDIR owned by the command's uid" "65534" "$owner"; else expect_eq "TMPDIR owned by us" "$(id -u)" "$owner"; fi
[ -n "$tmp" ] && [ ! -e "$tmp" ] && ok "TMPDIR removed after the run" || bad "TMPDIR $tmp still there"
[ -d / ] && [ -e /etc/passwd ] && ok "removal did not follow the planted symlink" || bad "symlink followed"
# Without a memory cgroup nothing would bound tmpfs pages: the private tmp
# is on disk then (unless every candidate is tmpfs), and probe says what
# bounds memory.
mem=$("$C" probe --json | "$PY" -c 'import json,sys
print([p["why"] for p in json.load(sys.stdin)["promises"] if p["id"] == "limits.memory"][0])')
fstype=$(stat -f -c %T "$(dirname "$tmp")")
case $mem in
*"a memory cgroup per run"*) expect_eq "with a memory cgroup: the private tmp may be tmpfs (probe: $mem)" ok ok ;;
*"RLIMIT_AS"*"private tmp goes on disk"*)
	if [ "$(stat -f -c %T /var/tmp)" = tmpfs ] && [ "$(stat -f -c %T /tmp)" = tmpfs ]; then
		ok "no memory cgroup, /var/tmp and /tmp both tmpfs: tmp on $fstype"
	else
		[ "$fstype" != tmpfs ] && ok "no memory cgroup: the private tmp is on disk ($(dirname "$tmp"), $fstype)" ||
			bad "no memory cgroup, yet the private tmp is on tmpfs: $tmp"
	fi ;;
*) bad "probe: limits.memory says [$mem]" ;;
esac
# A tree deeper than the fds the removal holds (it moves deep directories up),
# with mode-000 directories, files, symlinks and FIFOs at every level.
tmp=$("$C" run -- "$PY" -c '
import os
t = os.environ["TMPDIR"]
for top in range(3):
    p = "%s/t%d" % (t, top)
    for d in range(120):
        p += "/d%d" % d
        os.makedirs(p)
        open(p + "/f", "w").write("x")
        os.symlink("/etc", p + "/l")
        os.mkfifo(p + "/p")
for root, dirs, files in os.walk(t, topdown=False):
    if root.count("/d") % 13 == 5:
        os.chmod(root, 0)
print(t)')
[ -n "$tmp" ] && [ ! -e "$tmp" ] && ok "a 120-deep TMPDIR tree with mode-000 levels removed" || bad "deep TMPDIR tree left: $tmp"
# The names deep directories are moved up to cannot be taken ahead.
tmp=$("$C" run -- "$PY" -c '
import os
t = os.environ["TMPDIR"]
for i in range(1100):
    os.makedirs("%s/.corral-deep-%d/x" % (t, i))
os.makedirs(t + "/d" * 30)
print(t)')
[ -n "$tmp" ] && [ ! -e "$tmp" ] && ok "TMPDIR removed though the command made .corral-deep-* names first" ||
	bad "TMPDIR left when .corral-deep-* names were taken: $tmp"
if is_root; then
	# As root the removal runs as the command's uid for the filesystem only:
	# that uid can neither stop nor kill it (the supervisor waits for it).
	"$C" run -- "$PY" -c '
import os
t = os.environ["TMPDIR"]; os.mkdir(t + "/d")
for i in range(300000): open("%s/d/f%d" % (t, i), "w").close()' &
	rpid=$!
	helper=
	for _ in $(seq 1500); do
		for p in $(pgrep -x corral); do
			[ "$(awk '/^Uid/ {print $2, $5}' "/proc/$p/status" 2>/dev/null)" = "0 65534" ] && helper=$p && break
		done
		[ -n "$helper" ] && break
		sleep 0.01
	done
	if [ -z "$helper" ]; then
		bad "tmp removal helper (real uid 0, fsuid 65534) not seen"
	else
		st=$(grep -E '^(Uid|CapEff)' "/proc/$helper/status" | tr -s '\t ' ' ' | tr '\n' ';')
		setpriv --reuid=65534 --regid=65534 --clear-groups kill -STOP "$helper" 2>/dev/null &&
			bad "the command's uid stopped the tmp removal helper" ||
			ok "tmp removal helper: fs identity 65534, no capabilities, not signalable by 65534 ($st)"
		kill -CONT "$helper" 2>/dev/null
	fi
	wait "$rpid"
fi
t1=$("$C" run -- sh -c 'echo $TMPDIR'); t2=$("$C" run -- sh -c 'echo $TMPDIR')
[ "$t1" != "$t2" ] && ok "a fresh TMPDIR per run" || bad "TMPDIR reused: $t1"

# Identity and privileges, read from /proc/self/status inside.
st=$("$C" run -- cat /proc/self/status)
for f in CapInh CapPrm CapEff CapBnd CapAmb; do
	expect_eq "$f all zero" "0000000000000000" "$(printf '%s\n' "$st" | awk -v f="$f:" '$1 == f {print $2}')"
done
expect_eq "NoNewPrivs 1" "1" "$(printf '%s\n' "$st" | awk '$1 == "NoNewPrivs:" {print $2}')"
expect_eq "seccomp filter mode" "2" "$(printf '%s\n' "$st" | awk '$1 == "Seccomp:" {print $2}')"
uid=$(printf '%s\n' "$st" | awk '$1 == "Uid:" {print $2 " " $3 " " $4 " " $5}')
if is_root; then
	expect_eq "as root: runs as nobody (the root dir's owner)" "65534 65534 65534 65534" "$uid"
	expect_eq "as root: no supplementary groups but the gid" "65534" "$("$C" run -- id -G)"
	# The root's owner is the default identity.
	R2=$(mkroot); chown 1234:1234 "$R2"
	expect_eq "as root: default identity is the root's owner" "1234 1234" "$("$C" run --root "$R2" -- sh -c 'echo $(id -u) $(id -g)')"
	# Root owns the directory: nobody cannot write it -> refuse with a how-to.
	R3=$(mkroot); chown 0:0 "$R3"; chmod 755 "$R3"
	err=$("$C" run --root "$R3" -- true 2>&1); rc=$?
	expect_eq "as root: unwritable root refused" 125 $rc
	expect_match "as root: refusal says how to choose" "^corral: root .* is not writable by nobody .*--user USER\[:GROUP\].*--user root" "$err"
	out=$("$C" run --json --root "$R3" -- true); rc=$?
	expect_eq "as root: refusal in --json is an error object" "125 setup" "$rc $(printf '%s' "$out" | $PY -c 'import json,sys; print(json.load(sys.stdin)["error"]["code"])')"
	# --user root: uid 0 with every capability dropped.
	st=$("$C" run --root "$R3" --user root -- cat /proc/self/status)
	expect_eq "--user root: uid 0" "0" "$(printf '%s\n' "$st" | awk '$1 == "Uid:" {print $2}')"
	expect_eq "--user root: CapEff zero" "0000000000000000" "$(printf '%s\n' "$st" | awk '$1 == "CapEff:" {print $2}')"
	expect_eq "--user root: CapBnd zero" "0000000000000000" "$(printf '%s\n' "$st" | awk '$1 == "CapBnd:" {print $2}')"
	# --user root on a root it cannot write without capabilities: the refusal
	# does not suggest the --user root that was just given.
	R4=$(mkroot); chown 65534:65534 "$R4"; chmod 755 "$R4"
	err=$("$C" run --root "$R4" --user root -- true 2>&1); rc=$?
	expect_match "--user root, unwritable: 125, says why" "^125 corral: root .* is not writable by root \(uid 0, gid 0\) without capabilities; choose .*--user USER" "$rc $err"
	case $err in *"pass --user root"*) bad "--user root refusal suggests --user root: $err" ;; *) ok "--user root refusal does not suggest --user root" ;; esac
	# --user by name and number, with a group.
	expect_eq "--user nobody:nogroup" "65534 65534" "$("$C" run --user nobody:nogroup -- sh -c 'echo $(id -u) $(id -g)')"
	expect_eq "--user 65534:65534" "65534 65534" "$("$C" run --user 65534:65534 -- sh -c 'echo $(id -u) $(id -g)')"
	"$C" run --user no-such-user-xyz -- true 2>/dev/null; expect_eq "--user unknown: 125" 125 $?
	# setuid binaries cannot raise privilege (no_new_privs)
	out=$("$C" run -- sh -c 'su -c id root </dev/null 2>&1; echo rc=$?')
	expect_match "setuid su does not grant root" "rc=[1-9]" "$out"
else
	expect_eq "unprivileged: runs as our own uid" "$(id -u)" "$(printf '%s\n' "$uid" | cut -d' ' -f1)"
	"$C" run --user root -- true 2>/dev/null; expect_eq "unprivileged: --user root refused" 125 $?
fi
finish
