#!/usr/bin/env bash
# The whole process tree ends with the run: at the deadline (even when the
# command ignores SIGTERM, setsids or double-forks) and when the main
# process exits (background leftovers do not delay corral's return).
. "$(dirname "$0")/lib.sh"
R=$(mkroot)
cd "$R"
tag=$$
alive() { pgrep -f "$1" >/dev/null; }
# killed PATTERN NAME: no process matches PATTERN. corral has returned, so
# what it killed can only be dying: polled up to 3 s (a survivor sleeps
# for a minute or more, so waiting cannot make this pass).
killed() {
	local i
	for i in $(seq 300); do alive "$1" || { ok "$2"; return; }; sleep 0.01; done
	bad "$2: [$1] survived"
	pkill -KILL -f "$1" 2>/dev/null
}
# waitfor FILE...: inside a run, wait (up to 10 s) until each FILE exists,
# the handshake by which each process below announces it started.
waitfor() {
	local f out="" i
	for f; do out="$out [ -e $f ] &&"; done
	echo "i=0; until $out true; do i=\$((i + 1)); [ \$i -gt 1000 ] && exit 99; sleep 0.01; done"
}
# started NAME FILE...: the processes that were to write FILE... did.
started() {
	local name=$1 f
	shift
	for f; do [ -e "$R/$f" ] || { bad "$name: control: $f was never written (the process did not start)"; return 1; }; done
	ok "$name: control: every process started"
	rm -f "${@/#/$R/}"
}

# Control: a background process exists while the run lasts.
out=$("$C" run -- sh -c "sleep 77.$tag & until pgrep -f 'sleep 77.$tag' >/dev/null; do sleep 0.01; done; echo seen")
expect_eq "control: background process visible during the run" "seen" "$out"
killed "sleep 77.$tag" "background process killed at exit"

# Deadline with a SIGTERM-ignoring command; partial output kept.
t0=$(date +%s%N)
out=$("$C" run --timeout 0.5 -- sh -c "trap '' TERM; echo before; sleep 61.$tag; echo after"); rc=$?
t1=$(date +%s%N)
expect_eq "TERM-ignoring command: 124" 124 $rc
expect_eq "partial output kept" "before" "$out"
ms=$(( (t1 - t0) / 1000000 ))
[ $ms -lt 3000 ] && ok "deadline honoured (${ms} ms)" || bad "deadline took ${ms} ms"
killed "sleep 61.$tag" "TERM-ignoring child killed"

# setsid and double-fork daemons, after the deadline and after a normal exit.
for mode in deadline exit; do
	if [ $mode = deadline ]; then to=0.6 tail='sleep 30'; else to=10 tail='true'; fi
	t0=$(date +%s%N)
	"$C" run --timeout $to -- sh -c "setsid sh -c ': > s62; exec sleep 62.$tag' </dev/null >/dev/null 2>&1 &
		( ( : > s63; exec sleep 63.$tag ) & ) ; (setsid sh -c '(: > s64; exec sleep 64.$tag &)' &) ; $(waitfor s62 s63 s64); $tail" >/dev/null; rc=$?
	t1=$(date +%s%N)
	ms=$(( (t1 - t0) / 1000000 ))
	if [ $mode = deadline ]; then expect_eq "daemons ($mode): 124" 124 $rc; else expect_eq "daemons ($mode): 0" 0 $rc; fi
	[ $ms -lt 5000 ] && ok "daemons ($mode): returned in ${ms} ms" || bad "daemons ($mode): took ${ms} ms"
	started "daemons ($mode)" s62 s63 s64
	for s in 62 63 64; do
		killed "sleep $s.$tag" "daemon sleep $s ($mode) killed"
	done
done

# The command cannot blind the supervisor: lowering its open-files limit
# (possible for a same-uid process, i.e. when corral runs unprivileged)
# would keep it from opening /proc to sweep a setsid'd leftover.
for mode in deadline exit; do
	if [ $mode = deadline ]; then to=1 tail='time.sleep(30)'; else to=10 tail='
while not os.path.exists("s69"):
    time.sleep(0.01)'; fi
	out=$("$C" run --timeout $to -- "$PY" -c "
import os, resource, time
try:
    resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE, (4, 4))
    print('lowered', flush=True)
except OSError as e:
    print('refused', flush=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open('s69', 'w').close()
        os.execvp('sleep', ['sleep', '69.$tag'])
    os._exit(0)
$tail" 2>&1)
	expect_eq "supervisor's limit not lowerable ($mode)" "refused" "$out"
	started "leftover 69 ($mode)" s69
	killed "sleep 69.$tag" "leftover 69 ($mode) killed"
done

# Background leftovers holding the captured pipes do not delay the return.
t0=$(date +%s%N)
out=$("$C" run --json -- sh -c "(: > s65; exec sleep 65.$tag) & (setsid sh -c ': > s66; exec sleep 66.$tag' &) ; $(waitfor s65 s66); echo done")
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
[ $ms -lt 2000 ] && ok "leftovers holding the pipes: returned in ${ms} ms" || bad "leftovers delayed return: ${ms} ms"
expect_eq "leftovers: output kept" "'done\n'" "$(printf '%s' "$out" | json '["stdout"]')"
started "leftovers 65 66" s65 s66
killed "sleep 65.$tag" "leftover 65 killed"
killed "sleep 66.$tag" "leftover 66 killed"
# Same in plain mode (stdio passed through).
t0=$(date +%s%N)
"$C" run -- sh -c "(: > s67; exec sleep 67.$tag) & $(waitfor s67)" > /dev/null
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
[ $ms -lt 2000 ] && ok "plain mode leftovers: returned in ${ms} ms" || bad "plain mode leftovers: ${ms} ms"
started "leftover 67" s67
killed "sleep 67.$tag" "leftover 67 killed"

# corral killed by SIGKILL: the main process dies with it (PR_SET_PDEATHSIG).
"$C" run -- sleep 68.$tag &
cpid=$!
# Polled up to 10 s: a loaded machine may take seconds to start it.
for i in $(seq 1000); do alive "sleep 68.$tag" && break; sleep 0.01; done
alive "sleep 68.$tag" && ok "control: command running under corral" || bad "command did not start"
kill -KILL $cpid
wait $cpid 2>/dev/null
killed "sleep 68.$tag" "main process died with corral"

# corral killed by SIGKILL takes the whole tree with it, as root and
# unprivileged: its supervisor process (the subreaper, ancestor of every
# process of the run) turns corral's death into a cancel. daemons.sh starts
# a setsid daemon and a double-forked one; each announces itself on a FIFO
# once it has left the main process. The sleeps' arguments are built inside
# the sandbox, so pgrep never matches corral's own command line.
cat > "$R/daemons.sh" <<'EOF'
setsid sh -c "echo setsid > fifo; exec sleep 83.$1" </dev/null >/dev/null 2>&1 &
( (sh -c "echo dfork > fifo; exec sleep 84.$1" </dev/null >/dev/null 2>&1 &) & )
exec sleep 85.$1
EOF
chmod 644 "$R/daemons.sh"
whos=(self)
is_root && whos+=(nobody)
# The prefix that runs a command as WHO (a simple command: $! is corral's own pid).
as_who() { if [ "$1" = nobody ]; then as=(setpriv --reuid=65534 --regid=65534 --clear-groups); else as=(); fi; }
newfifo() { rm -f "$R/fifo"; mkfifo -m 666 "$R/fifo"; }
# gone NAME: the daemons, the main process and corral's supervisor are gone (polled up to 3 s).
gone() {
	local i
	for i in $(seq 60); do
		pgrep -f "sleep 8[345]\.$tag" >/dev/null || pgrep -f "daemons.sh $tag" >/dev/null || break
		sleep 0.05
	done
	alive "sleep 83.$tag" && bad "$1: setsid daemon survived" || ok "$1: setsid daemon killed"
	alive "sleep 84.$tag" && bad "$1: double-forked daemon survived" || ok "$1: double-forked daemon killed"
	alive "sleep 85.$tag" && bad "$1: main process survived" || ok "$1: main process killed"
	alive "daemons.sh $tag" && bad "$1: corral's supervisor process survived" || ok "$1: corral's supervisor process exited"
	pkill -KILL -f "sleep 8[345]\.$tag" 2>/dev/null
}
us() { echo "${1/./}"; }
for who in "${whos[@]}"; do
	as_who $who
	for when in announced later; do
		name="SIGKILL ($who, $when)"
		newfifo
		exec 3<>"$R/fifo" # held read-write: the daemons' writes never block
		t0=$EPOCHREALTIME
		"${as[@]}" "$C" run -- sh daemons.sh $tag &
		cpid=$!
		a= b=
		read -r -t 10 -u 3 a
		read -r -t 10 -u 3 b
		t1=$EPOCHREALTIME
		[[ " $a $b " == *" setsid "* && " $a $b " == *" dfork "* ]] && ok "$name: control: both daemons announced themselves" ||
			bad "$name: control: the daemons did not announce themselves [$a $b]"
		if [ $when = later ]; then
			# Control: the same daemons are alive while corral runs (each
			# announced itself just before its exec: polled up to 2 s).
			for i in $(seq 200); do alive "sleep 83.$tag" && alive "sleep 84.$tag" && alive "sleep 85.$tag" && break; sleep 0.01; done
			alive "sleep 83.$tag" && alive "sleep 84.$tag" && alive "sleep 85.$tag" &&
				ok "$name: control: both daemons and the main process run" ||
				bad "$name: control: daemons not running [$a $b]"
		fi
		kill -KILL $cpid
		t2=$EPOCHREALTIME
		exec 3<&-
		wait $cpid 2>/dev/null
		echo "# $name: daemons announced [$a $b] $(( ($(us $t1) - $(us $t0)) / 1000 )) ms after start, corral killed at $(( ($(us $t2) - $(us $t0)) / 1000 )) ms"
		gone "$name"
	done
	# Killed at once, before or while corral sets up (its supervisor not yet
	# started, or its death signal not yet set): nothing is left either.
	for d in 0 0 0.001 0.003 0.005 0.01 0.02; do
		"${as[@]}" "$C" run -- sh daemons.sh $tag &
		cpid=$!
		[ $d = 0 ] || sleep $d
		kill -KILL $cpid
		wait $cpid 2>/dev/null
	done
	gone "SIGKILL ($who, within the first ms)"
	# SIGKILL to corral's whole process group (kill -9 -PGID, a shell's
	# kill -9 %N): its supervisor is not in that group, so it lives to kill
	# the tree and clean up.
	newfifo
	exec 3<>"$R/fifo"
	setsid "${as[@]}" "$C" run -- sh daemons.sh $tag </dev/null &
	cpid=$!
	read -r -t 10 -u 3 a
	read -r -t 10 -u 3 b
	kill -KILL -- -$cpid
	exec 3<&-
	wait $cpid 2>/dev/null
	gone "SIGKILL to corral's process group ($who)"
	# SIGTERM: corral exits 143 and kills the whole tree.
	newfifo
	exec 3<>"$R/fifo"
	"${as[@]}" "$C" run -- sh daemons.sh $tag &
	cpid=$!
	read -r -t 10 -u 3 a
	read -r -t 10 -u 3 b
	kill -TERM $cpid
	wait $cpid
	rc=$?
	exec 3<&-
	expect_eq "SIGTERM ($who): corral exits 143" 143 $rc
	gone "SIGTERM ($who)"
	# With --json, the result so far is printed before corral dies of it:
	# the output until then, and the tree killed (signal 9, not timed out).
	newfifo
	exec 3<>"$R/fifo"
	"${as[@]}" "$C" run --json -- sh -c "echo partial; echo go > '$R/fifo'; sleep 30" > "$R/cancel.json" &
	cpid=$!
	read -r -t 10 -u 3 a
	kill -INT $cpid
	wait $cpid
	rc=$?
	exec 3<&-
	got=$($PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["exit_status"], d["signal"], d["timed_out"], repr(d["stdout"]))' "$R/cancel.json" 2>&1)
	expect_eq "SIGINT ($who) with --json: 130 and the result so far" "130 None 9 False 'partial\n'" "$rc $got"
done
rm -f "$R/fifo"

# As root the run's cgroups are removed when corral is killed (by its
# supervisor, or failing that by the cgroup watchdog); they are named after
# the supervisor process, corral's child.
if is_root; then
	"$C" run -- sh -c "setsid sleep 72.$tag & sleep 73.$tag" &
	cpid=$!
	for i in $(seq 500); do alive "sleep 73.$tag" && alive "sleep 72.$tag" && break; sleep 0.01; done
	alive "sleep 73.$tag" && alive "sleep 72.$tag" && ok "as root: control: main and setsid daemon run" ||
		bad "as root: control: main and daemon did not start"
	spid=$(pgrep -P $cpid | head -1)
	kill -KILL $cpid
	wait $cpid 2>/dev/null
	for i in $(seq 60); do alive "sleep 72.$tag" || alive "sleep 73.$tag" || break; sleep 0.05; done
	alive "sleep 73.$tag" && bad "as root: main survived corral's SIGKILL" || ok "as root: main died with corral"
	alive "sleep 72.$tag" && bad "as root: setsid daemon survived corral's SIGKILL" || ok "as root: setsid daemon died with corral"
	for i in $(seq 60); do [ -d "/proc/${spid:-0}" ] || break; sleep 0.05; done
	left=$(ls -d /sys/fs/cgroup/corral-"$spid"-* /sys/fs/cgroup/*/corral-"$spid"-* /sys/fs/cgroup/*/*/*/corral-"$spid"-* 2>/dev/null | head -3)
	[ -n "$spid" ] && [ -z "$left" ] && ok "as root: the run's cgroups removed" || bad "cgroups left (supervisor ${spid:-not found}): $left"
fi

# The command reopens its captured stdio by name (pipes are owned by its
# identity, not by a root corral): control first, then the reopen.
out=$("$C" run --json -- bash -c 'echo a; echo x > /dev/stdout; echo y > /proc/self/fd/1; echo z > /dev/stderr' 2>&1)
expect_eq "stdio reopen: /dev/stdout, /proc/self/fd/1, /dev/stderr" "0 'a\\nx\\ny\\n' 'z\\n'" \
	"$(printf '%s' "$out" | $PY -c 'import json,sys; v=json.load(sys.stdin); print(v["exit_status"], repr(v["stdout"]), repr(v["stderr"]))')"
# CPU affinity: corral starts a run on one CPU, but the command gets the
# caller's own mask back (the whole mask, or a narrower one it was given).
host=$(grep Cpus_allowed_list /proc/self/status)
expect_eq "affinity: the command has the caller's mask" "$host" "$("$C" run -- grep Cpus_allowed_list /proc/self/status)"
if [ "$(nproc)" -gt 1 ]; then
	expect_eq "affinity: a caller narrowed to CPU 1 narrows the command" "Cpus_allowed_list:	1" \
		"$(taskset -c 1 "$C" run -- grep Cpus_allowed_list /proc/self/status)"
	expect_eq "affinity: children of the command too" "$host" \
		"$("$C" run -- sh -c 'sleep 0.01; grep Cpus_allowed_list /proc/self/status')"
fi
finish
