#!/usr/bin/env bash
# proc "private": the command's own PID namespace and /proc. A host
# process started with a secret in its arguments (as the command's own
# uid, so only the namespace hides it) is invisible with --proc private
# and, as the control, readable with --proc host; the run's exit status,
# signals, deadline, tree kill, process limit and CPU accounting stay what
# they are without the namespace; strict refuses where no namespace can be
# made. Runs as root and, through tests/as-nobody.sh, as nobody.
. "$(dirname "$0")/lib.sh"
mkscratch

if ! "$C" probe --root "$R" --proc private --json |
	"$PY" -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["runnable"] else 1)'; then
	skip "proc \"private\" is not available here: $("$C" probe --root "$R" --proc private | grep proc.private)"
fi
prun() { crun --proc private "$@"; }
hrun() { crun --proc host "$@"; }

SECRET=pidns-secret-$$
"${AS_ID[@]}" "$PY" -c 'import time; time.sleep(1000)' --api-key=$SECRET </dev/null >/dev/null 2>&1 &
victim=$!
cleanup_pids+=($victim)
disown
for _ in $(seq 50); do grep -q "$SECRET" /proc/$victim/cmdline 2>/dev/null && break; sleep 0.02; done

# -- host processes and their command lines
# A pattern that matches the secret and not itself: grep's own argv is in /proc too.
grep_all="cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' ' | grep -c -- pidns-secre[t]-$$"
out=$(hrun -c "$grep_all")
[ "${out:-0}" -ge 1 ] && ok "control: --proc host reads the host process's --api-key argument" ||
	bad "control: --proc host did not see the secret argument (out: $out)"
out=$(prun -c "$grep_all")
[ "${out:-0}" = 0 ] && ok "sh: no host command line is readable with --proc private" ||
	bad "sh: the secret argument leaked with --proc private (out: $out)"
expect_allowed "python: /proc/$victim/cmdline with --proc host" hrun -- "$PY" -c "open('/proc/$victim/cmdline').read()"
# The pid names no process in the namespace (ENOENT), or another one without the secret.
DENY='FileNotFoundError|No such file|no secret' expect_denied "python: /proc/$victim/cmdline with --proc private" prun -- "$PY" -c "
import sys; d = open('/proc/$victim/cmdline').read(); '$SECRET' in d or sys.exit('no secret')"
out=$(hrun -- ps ax 2>&1)
grep -q -- "$SECRET" <<<"$out" && ok "control: ps ax with --proc host lists the host process" ||
	bad "control: ps ax with --proc host: $out"
out=$(prun -- ps ax 2>&1)
if ! grep -q -- "$SECRET" <<<"$out" && [ "$(wc -l <<<"$out")" -le 4 ]; then
	ok "ps ax with --proc private lists the run's processes only"
else
	bad "ps ax with --proc private: $out"
fi
out=$(prun -c 'cd /proc; echo [0-9]*; echo $$; cat /proc/1/comm')
# "1 2 N" (init, sh, the glob's own nothing: sh expands before forking), sh is pid 2, pid 1 is corral's init.
if [ "$(sed -n 2p <<<"$out")" = 2 ] && [ "$(sed -n 3p <<<"$out")" = corral-init ] &&
	! grep -qw "$victim" <<<"$(sed -n 1p <<<"$out")"; then
	ok "ls /proc: only the run's pids (the command is pid 2 under corral's init)"
else
	bad "ls /proc with --proc private: $out"
fi
# corral's own arguments (an --env value among them) are not the init's command line; the
# command still gets what it needs of them (its argv and that variable point into them).
out=$(prun --env PIDNS_K=kval-$$ -- sh -c 'tr "\0" " " </proc/1/cmdline; echo; echo "$PIDNS_K"' arg0)
if ! sed -n 1p <<<"$out" | grep -q -- "--root\|$R\|kval-$$" && [ "$(sed -n 2p <<<"$out")" = kval-$$ ]; then
	ok "the init's command line does not carry corral's arguments; the command's argv and --env value intact"
else
	bad "the init's command line or the command's environment: $out"
fi

# -- the confinement is unchanged inside
expect_allowed "sh: /proc/self/status readable" prun -c 'grep -q ^Pid: /proc/self/status'
expect_denied "sh: write to /proc/sys" prun -c 'echo 1 > /proc/sys/kernel/ns_last_pid'
DENY='must be superuser|Operation not permitted|Permission denied' expect_denied "sh: umount the private /proc" prun -- umount -l /proc
expect_denied "python: mount a proc over it" prun -- "$PY" -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
r = libc.mount(b"proc", b"/proc", b"proc", 0, None)
assert r == 0, os.strerror(ctypes.get_errno())'
DENY='No such process' expect_denied "sh: kill -0 the host process by its pid" prun -c "kill -0 $victim"

# -- status, signals, deadline, exec errors
for m in host private; do
	while IFS='|' read -r name want cmd; do
		crun --proc $m -- sh -c "$cmd" >/dev/null 2>&1
		rc=$?
		[ $rc = "$want" ] && ok "--proc $m: $name ($want)" || bad "--proc $m: $name: $rc, want $want"
	done <<'EOF'
exit status|3|exit 3
kill -TERM $$|143|kill -TERM $$
kill -SEGV $$|139|kill -SEGV $$
kill -KILL $$|137|kill -KILL $$
EOF
	crun --proc $m --timeout 0.3 -- sleep 10
	rc=$?
	[ $rc = 124 ] && ok "--proc $m: deadline (124)" || bad "--proc $m: deadline: $rc"
	crun --proc $m -- /nonexistent-$$ 2>/dev/null
	rc=$?
	[ $rc = 127 ] && ok "--proc $m: not found (127)" || bad "--proc $m: not found: $rc"
	out=$(echo piped-$$ | crun --proc $m -- cat)
	[ "$out" = piped-$$ ] && ok "--proc $m: stdin reaches the command, and its EOF" || bad "--proc $m: stdin: $out"
	out=$(crun --proc $m --json -- sh -c 'exit 5' | "$PY" -c 'import json,sys; d=json.load(sys.stdin); print(d["exit_status"], d["signal"], d["timed_out"])')
	[ "$out" = "5 None False" ] && ok "--proc $m: --json exit_status 5" || bad "--proc $m: --json: $out"
done

# -- the tree kill: a setsid double-forked daemon does not outlive the run
# (A sleep of a duration no one else uses is the marker: dash has no exec -a.)
# gone_within MARK: no process runs MARK within 3 s. corral has returned, so
# what it killed can only be dying (a survivor sleeps 100 s or more:
# waiting cannot make this pass).
gone_within() {
	for _ in $(seq 300); do pgrep -f "^$1\$" >/dev/null || return 0; sleep 0.01; done
	return 1
}
n=0
for m in host private; do
	n=$((n + 1))
	mark="sleep 10$n.$$"
	# The command waits until it sees both daemons (up to 10 s), not a fixed time.
	crun --proc $m -- sh -c "setsid sh -c '($mark &)'; ($mark &); i=0
		until [ \"\$(pgrep -fc '^$mark\$')\" -ge 2 ] || [ \$i -ge 1000 ]; do sleep 0.01; i=\$((i + 1)); done
		pgrep -fc '^$mark\$'" >"$S/count" 2>&1
	[ "$(cat "$S/count")" = 2 ] && ok "control: --proc $m: both daemons started" || bad "control: --proc $m: daemons: $(cat "$S/count")"
	if ! gone_within "$mark"; then
		bad "--proc $m: a daemon outlived the run"
		kill -9 $(pgrep -f "^$mark\$") 2>/dev/null
	else
		ok "--proc $m: setsid and double-forked daemons killed at the end"
	fi
done
# ... nor a corral killed mid-run (its init dies with it, and the namespace with the init)
mark="sleep 103.$$"
"$C" run --root "$R" --proc private -- sh -c "setsid sh -c '($mark &)'; $mark" >/dev/null 2>&1 &
cp=$! # corral itself (not a subshell running crun)
for _ in $(seq 100); do [ "$(pgrep -f "^$mark\$" | wc -l)" -ge 2 ] && break; sleep 0.02; done
[ "$(pgrep -f "^$mark\$" | wc -l)" -ge 2 ] && ok "control: the run's processes are there" || bad "control: the run did not start its processes"
kill -9 $cp
wait $cp 2>/dev/null
if ! gone_within "$mark"; then
	bad "corral killed with -9: the namespace's processes live on"
	kill -9 $(pgrep -f "^$mark\$") 2>/dev/null
else
	ok "corral killed with -9: nothing of the namespace is left"
fi

# -- accounting: a CPU-burning grandchild that double-forked is counted
# (the main process waits for its file, so a loaded machine cannot end it early).
burn='import time
t = time.process_time()
while time.process_time() - t < 0.3: pass
open("burnt", "w")'
for m in host private; do
	rm -f "$R/burnt"
	cpu=$(crun --proc $m --json -- sh -c "(\"$PY\" -c '$burn' &); while [ ! -e burnt ]; do sleep 0.05; done; sleep 0.1" |
		"$PY" -c 'import json,sys; print(int(json.load(sys.stdin)["cpu_ms"]))')
	[ "${cpu:-0}" -ge 280 ] && ok "--proc $m: cpu_ms counts the orphaned grandchild ($cpu ms)" ||
		bad "--proc $m: cpu_ms $cpu, want >= 280"
done
rss=$(prun --json -- "$PY" -c 'b = bytearray(64 << 20); b[::4096] = b"x" * (len(b) // 4096)' |
	"$PY" -c 'import json,sys; print(json.load(sys.stdin)["max_rss_kb"])')
[ "${rss:-0}" -ge 60000 ] && ok "--proc private: max_rss_kb is the command's ($rss kB for 64 MiB touched)" ||
	bad "--proc private: max_rss_kb $rss"

# -- the process limit stays exact: sh and 4 children under --procs 5
# Unprivileged under proc "host", RLIMIT_NPROC is the uid's task count
# when the run starts plus the limit, and that count is host-wide: first
# let the earlier runs' killed tasks finish ending (the count of the uid's
# tasks unchanged over 0.25 s), or each one still ending is a free slot.
settle_uid_tasks() {
	local prev=-1 same=0 n
	for _ in $(seq 100); do
		n=$(ps -L -u "$(id -u)" --no-headers 2>/dev/null | wc -l)
		if [ "$n" = "$prev" ]; then
			same=$((same + 1))
			[ $same -ge 5 ] && return 0
		else
			same=0
		fi
		prev=$n
		sleep 0.05
	done
}
for m in host private; do
	is_root || settle_uid_tasks
	out=$(crun --proc $m --procs 5 -- sh -c 'n=0; for i in 1 2 3 4 5 6; do sleep 1 & n=$((n+1)); echo $n; done; kill $(jobs -p)' 2>/dev/null | tail -1)
	# Unprivileged under proc "host", RLIMIT_NPROC is set relative to the
	# uid's task count taken before the run (docs/threat-model.md): a task
	# of nobody's that ends in between (the previous test's) leaves one more.
	if [ "$out" = 4 ] || { [ "$m" = host ] && ! is_root && [ "$out" = 5 ]; }; then
		ok "--proc $m: --procs 5 allows sh and 4 children ($out)"
	else
		bad "--proc $m: --procs 5 started $out children"
	fi
done

# -- corral check: the proc-private canary holds, and sees the outside process under --proc host
out=$("$C" check --root "$R" --proc private --json | "$PY" -c '
import json, sys
print([p["state"] for p in json.load(sys.stdin)["promises"] if p["id"] == "proc.private"])')
[ "$out" = "['held']" ] && ok "check --proc private: proc.private held" || bad "check --proc private: $out"
out=$(hrun --ro "$(dirname "$C")" -- "$C" __canary proc-private $victim)
[ "${out%% *}" = broken ] && ok "control: the proc-private canary under --proc host finds the outside process" ||
	bad "control: the canary under --proc host: $out"
out=$(prun --ro "$(dirname "$C")" -- "$C" __canary proc-private $victim)
[ "${out%% *}" = held ] && ok "the proc-private canary under --proc private: $out" || bad "the canary under --proc private: $out"

# -- strict refuses where no namespace can be made (as root: without CAP_SYS_ADMIN)
no_ns=(env CORRAL_TEST_NO_USERNS=1)
if is_root; then no_ns=(setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin "${no_ns[@]}"); fi
out=$("${no_ns[@]}" "$C" run --root "$R" --proc private -- true 2>&1)
rc=$?
if [ $rc = 125 ] && grep -q "proc.private" <<<"$out" && grep -q -- "--proc host" <<<"$out"; then
	ok "strict refuses --proc private without namespaces (125, naming proc.private and --proc host)"
else
	bad "strict without namespaces: rc $rc: $out"
fi
expect_allowed "control: --proc host runs there" "${no_ns[@]}" "$C" run --root "$R" --proc host -- true
out=$("${no_ns[@]}" "$C" run --root "$R" --proc private --compat best-effort -- true 2>&1)
rc=$?
[ $rc = 0 ] && grep -q "dropped proc.private" <<<"$out" && ok "best-effort runs and says proc.private was dropped" ||
	bad "best-effort without namespaces: rc $rc: $out"
out=$("${no_ns[@]}" "$C" probe --root "$R" --proc private --json | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
print([p["state"] for p in d["promises"] if p["id"] == "proc.private"], d["runnable"])')
[ "$out" = "['dropped'] False" ] && ok "probe: proc.private dropped, not runnable" || bad "probe: $out"

finish
