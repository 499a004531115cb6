#!/usr/bin/env bash
# The whole process tree ends with the run: at the deadline (even when the
# command ignores SIGTERM, setsids or double-forks) and when the main
# process exits (background leftovers do not delay corral's return).
. "$(dirname "$0")/lib.sh"
R=$(mkroot)
cd "$R"
tag=$$
alive() { pgrep -f "$1" >/dev/null; }

# Control: a background process exists while the run lasts.
out=$("$C" run -- sh -c "sleep 77.$tag & sleep 0.3; pgrep -f 'sleep 77.$tag' >/dev/null && echo seen")
expect_eq "control: background process visible during the run" "seen" "$out"
sleep 0.2
alive "sleep 77.$tag" && bad "background process outlived normal exit" || ok "background process killed at exit"

# Deadline with a SIGTERM-ignoring command; partial output kept.
t0=$(date +%s%N)
out=$("$C" run --timeout 0.5 -- sh -c "trap '' TERM; echo before; sleep 61.$tag; echo after"); rc=$?
t1=$(date +%s%N)
expect_eq "TERM-ignoring command: 124" 124 $rc
expect_eq "partial output kept" "before" "$out"
ms=$(( (t1 - t0) / 1000000 ))
[ $ms -lt 3000 ] && ok "deadline honoured (${ms} ms)" || bad "deadline took ${ms} ms"
alive "sleep 61.$tag" && bad "TERM-ignoring child survived" || ok "TERM-ignoring child killed"

# setsid and double-fork daemons, after the deadline and after a normal exit.
for mode in deadline exit; do
	if [ $mode = deadline ]; then to=0.6 tail='sleep 30'; else to=10 tail='true'; fi
	t0=$(date +%s%N)
	"$C" run --timeout $to -- sh -c "setsid sh -c 'sleep 62.$tag' </dev/null >/dev/null 2>&1 &
		( ( sleep 63.$tag ) & ) ; (setsid sh -c '(sleep 64.$tag &)' &) ; sleep 0.3; $tail" >/dev/null; rc=$?
	t1=$(date +%s%N)
	ms=$(( (t1 - t0) / 1000000 ))
	if [ $mode = deadline ]; then expect_eq "daemons ($mode): 124" 124 $rc; else expect_eq "daemons ($mode): 0" 0 $rc; fi
	[ $ms -lt 5000 ] && ok "daemons ($mode): returned in ${ms} ms" || bad "daemons ($mode): took ${ms} ms"
	for s in 62 63 64; do
		alive "sleep $s.$tag" && bad "daemon sleep $s ($mode) survived" || ok "daemon sleep $s ($mode) killed"
	done
done

# Background leftovers holding the captured pipes do not delay the return.
t0=$(date +%s%N)
out=$("$C" run --json -- sh -c "sleep 65.$tag & (setsid sleep 66.$tag &) ; echo done")
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
[ $ms -lt 2000 ] && ok "leftovers holding the pipes: returned in ${ms} ms" || bad "leftovers delayed return: ${ms} ms"
expect_eq "leftovers: output kept" "'done\n'" "$(printf '%s' "$out" | json '["stdout"]')"
alive "sleep 65.$tag" && bad "leftover 65 survived" || ok "leftover 65 killed"
alive "sleep 66.$tag" && bad "leftover 66 survived" || ok "leftover 66 killed"
# Same in plain mode (stdio passed through).
t0=$(date +%s%N)
"$C" run -- sh -c "sleep 67.$tag &" > /dev/null
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
[ $ms -lt 2000 ] && ok "plain mode leftovers: returned in ${ms} ms" || bad "plain mode leftovers: ${ms} ms"
alive "sleep 67.$tag" && bad "leftover 67 survived" || ok "leftover 67 killed"

# corral killed by SIGKILL: the main process dies with it (PR_SET_PDEATHSIG).
"$C" run -- sleep 68.$tag &
cpid=$!
for i in $(seq 50); do alive "sleep 68.$tag" && break; sleep 0.05; done
alive "sleep 68.$tag" && ok "control: command running under corral" || bad "command did not start"
kill -KILL $cpid
wait $cpid 2>/dev/null
for i in $(seq 50); do alive "sleep 68.$tag" || break; sleep 0.05; done
alive "sleep 68.$tag" && bad "main process survived corral's SIGKILL" || ok "main process died with corral"

# As root, the run's cgroups let a watchdog (started once a run lasts
# 20 ms) kill the rest of the tree too: a setsid daemon dies with corral.
if is_root; then
	"$C" run -- sh -c "setsid sleep 72.$tag & sleep 73.$tag" &
	cpid=$!
	for i in $(seq 50); do alive "sleep 73.$tag" && alive "sleep 72.$tag" && break; sleep 0.05; done
	sleep 0.1
	kill -KILL $cpid
	wait $cpid 2>/dev/null
	for i in $(seq 60); do alive "sleep 72.$tag" || alive "sleep 73.$tag" || break; sleep 0.05; done
	alive "sleep 73.$tag" && bad "as root: main survived corral's SIGKILL" || ok "as root: main died with corral"
	alive "sleep 72.$tag" && bad "as root: setsid daemon survived corral's SIGKILL" || ok "as root: setsid daemon died with corral (cgroup watchdog)"
	left=$(ls -d /sys/fs/cgroup/*/corral-$cpid-* /sys/fs/cgroup/*/*/*/corral-$cpid-* 2>/dev/null | head -3)
	[ -z "$left" ] && ok "as root: the run's cgroups removed" || bad "cgroups left: $left"
fi

# corral killed by SIGTERM: the whole tree is killed, corral exits 143.
"$C" run -- sh -c "setsid sleep 69.$tag & sleep 70.$tag" &
cpid=$!
for i in $(seq 50); do alive "sleep 70.$tag" && alive "sleep 69.$tag" && break; sleep 0.05; done
kill -TERM $cpid
wait $cpid; rc=$?
expect_eq "corral SIGTERMed exits 143" 143 $rc
alive "sleep 69.$tag" && bad "daemon survived corral's SIGTERM" || ok "daemon killed on corral's SIGTERM"
alive "sleep 70.$tag" && bad "main survived corral's SIGTERM" || ok "main killed on corral's SIGTERM"

# The command reopens its captured stdio by name (pipes are owned by its
# identity, not by a root corral): control first, then the reopen.
out=$("$C" run --json -- bash -c 'echo a; echo x > /dev/stdout; echo y > /proc/self/fd/1; echo z > /dev/stderr' 2>&1)
expect_eq "stdio reopen: /dev/stdout, /proc/self/fd/1, /dev/stderr" "0 'a\\nx\\ny\\n' 'z\\n'" \
	"$(printf '%s' "$out" | $PY -c 'import json,sys; v=json.load(sys.stdin); print(v["exit_status"], repr(v["stdout"]), repr(v["stderr"]))')"
finish
