#!/usr/bin/env bash
# What leaks in (fds, environment), privilege (capabilities, no_new_privs,
# a non-root uid as root) and what outlives the run (setsid / double-fork
# daemons, at the deadline and at exit). Techniques: shell, python, C.
. "$(dirname "$0")/lib.sh"
mkscratch
build_probe || finish

# -- inherited fds: the test holds fd 7 (no close-on-exec) on an outside file
exec 7<"$O/secret"
out=$(crun -c 'for f in /proc/self/fd/*; do echo "${f##*/}"; done' | tr '\n' ' ')
[[ "$out" =~ ^"0 1 2 "(3 )?$ ]] && ok "sh: only stdio inside ($out)" || bad "sh: fds inside: [$out]"
expect_denied "sh: read the planted fd 7" crun -c 'cat <&7'
out=$(crun -- "$PY" -c 'import os; print(sorted(int(f) for f in os.listdir("/proc/self/fd")))')
[[ "$out" =~ ^\[0,\ 1,\ 2(,\ [0-9]+)?\]$ ]] && ok "python: only stdio inside ($out)" || bad "python: fds inside: [$out]"
expect_denied "python: os.read(7)" crun -- "$PY" -c 'import os; os.read(7, 10)'
expect_denied "C: any fd above 2" crun -- $PROBE fds
expect_allowed "sh: stdio works" crun -c 'echo hi >&2 && echo hi'
exec 7<&-

# -- environment: a token and LD_PRELOAD in corral's own environment stay out
export CORRAL_ESC_TOKEN=tok-$$
leaky() { env LD_PRELOAD=/nonexistent/corral-esc.so "$C" run --root "$R" "$@" 2>/dev/null; }
out=$(leaky -c 'env')
echo "$out" | grep -q "CORRAL_ESC_TOKEN\|LD_PRELOAD" && bad "sh: env shows a host variable" || ok "sh: no token, no LD_PRELOAD"
out=$(leaky -- "$PY" -c 'import os; print(" ".join(sorted(os.environ)))')
[[ "$out" == *CORRAL_ESC_TOKEN* || "$out" == *LD_PRELOAD* ]] && bad "python: host variable inside: $out" || ok "python: only [$out]"
for n in $out; do
	case $n in PATH|HOME|TMPDIR|LANG|TERM|LC_CTYPE) ;; *) bad "python: unexpected variable $n" ;; esac
done
out=$(leaky -- /usr/bin/env)
echo "$out" | grep -q "CORRAL_ESC_TOKEN" && bad "/usr/bin/env shows the token" || ok "/usr/bin/env: no token"
# controls: what is asked for does arrive, by each technique
[ "$(leaky --env CORRAL_ESC_TOKEN -c 'echo $CORRAL_ESC_TOKEN')" = "tok-$$" ] && ok "sh: --env NAME passes it (control)" || bad "sh: --env NAME"
[ "$(leaky --env FOO=bar -- "$PY" -c 'import os; print(os.environ["FOO"])')" = bar ] && ok "python: --env NAME=VALUE (control)" || bad "python: --env"
unset CORRAL_ESC_TOKEN

# -- privilege
# The bounding set is cleared when corral is privileged; an unprivileged caller
# cannot clear it, and with NoNewPrivs nothing can raise a capability into it.
bnd='|Bnd'
[ "$(awk '/^CapEff/ {print $2}' /proc/self/status)" = 0000000000000000 ] && bnd=
caps=$(crun -c "grep -E '^(Cap(Inh|Prm|Eff|Amb$bnd)|NoNewPrivs):' /proc/self/status" | awk '{print $2}' | sort -u | tr '\n' ' ')
[ "$caps" = "0000000000000000 1 " ] && ok "sh: capability sets 0 (Bnd too: ${bnd:-no}), NoNewPrivs 1" ||
	bad "sh: capability sets / NoNewPrivs: [$caps]"
crun -- "$PY" -c '
import sys
st = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines())
for k in ["CapInh", "CapPrm", "CapEff", "CapAmb"] + (["CapBnd"] if sys.argv[1] else []):
    assert int(st[k], 16) == 0, k
assert st["NoNewPrivs"].strip() == "1"' "$bnd" && ok "python: capability sets 0, NoNewPrivs 1" || bad "python: capabilities"
if is_root; then
	[ "$(crun -c 'id -u')" != 0 ] && ok "sh: as root, the command is not uid 0" || bad "sh: uid 0 inside"
	[ "$(crun -- "$PY" -c 'import os; print(os.geteuid())')" != 0 ] && ok "python: not uid 0" || bad "python: uid 0"
fi
expect_denied "python: setuid(0)" crun -- "$PY" -c 'import os; os.setuid(0)'
# A setuid-root program (a copy of id(1), made by the test as root) raises
# the euid outside; inside, no_new_privs keeps the uid. Unprivileged, the
# test cannot make one: NoNewPrivs is checked above, and outside it is 0.
[ "$(awk '/^NoNewPrivs/ {print $2}' /proc/self/status)" = 0 ] && ok "control: NoNewPrivs is 0 outside" ||
	echo "# the test itself runs with no_new_privs: no control for it"
if is_root; then
	cp /usr/bin/id "$R/suid-id" && chown 0:0 "$R/suid-id" && chmod 4755 "$R/suid-id"
	out=$(as_id "$R/suid-id" -u 2>&1)
	if [ "$out" = 0 ]; then
		ok "control: outside, the setuid-root copy of id runs with euid 0"
		out=$(crun -- ./suid-id -u 2>&1)
		[ "$out" = 65534 ] && ok "sh: a setuid-root binary does not raise privilege (euid $out)" ||
			bad "sh: a setuid-root binary inside: euid [$out]"
	else
		echo "# $R is on a nosuid mount ($out): no setuid control"
	fi
	rm -f "$R/suid-id"
fi
expect_allowed "python: setuid to itself (control)" crun -- "$PY" -c 'import os; os.setuid(os.getuid())'

# -- nothing outlives the run
gone() { # PIDFILE NAME: the daemon it names ran, and is gone now
	local pid i
	pid=$(cat "$1" 2>/dev/null)
	if [ -z "$pid" ]; then bad "$2: the daemon never started (control)"; return; fi
	ok "$2: the daemon started (control)"
	# corral has returned: the daemon was killed before that, so it can
	# only be dying. Wait up to 2 s for the kernel to finish it off (a
	# daemon nobody killed sleeps 1000 s, so this cannot pass by waiting).
	for i in $(seq 200); do
		if [ -d /proc/$pid ] && ! grep -q '^State:.*Z' /proc/$pid/status 2>/dev/null && grep -q "sleep\|python" /proc/$pid/cmdline 2>/dev/null; then
			sleep 0.01
		else
			ok "$2: daemon gone"
			return
		fi
	done
	bad "$2: daemon $pid still running"
	kill -9 "$pid"
}
# Each command waits for its daemon's pidfile before it ends or sleeps into
# the deadline, so the daemon is known to run when the run ends.
t0=$(date +%s%N)
crun --timeout 1 -c "setsid sh -c 'echo \$\$ > d1.pid; exec sleep 1000' & until [ -s d1.pid ]; do sleep 0.01; done; sleep 1000" </dev/null
rc=$?
[ $rc -eq 124 ] && ok "sh: deadline exit 124" || bad "sh: deadline exit $rc"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ $ms -lt 3000 ] && ok "sh: deadline honoured (${ms} ms)" || bad "sh: deadline took ${ms} ms"
gone "$R/d1.pid" "sh: setsid daemon at the deadline"
crun -c "setsid sh -c 'echo \$\$ > d2.pid.tmp; mv d2.pid.tmp d2.pid; exec sleep 1000' & until [ -s d2.pid ]; do sleep 0.01; done" </dev/null
gone "$R/d2.pid" "sh: setsid daemon at exit"
crun --timeout 1 -- "$PY" -c '
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open("d3.tmp", "w").write(str(os.getpid())); os.rename("d3.tmp", "d3.pid")
        time.sleep(1000)
    os._exit(0)
time.sleep(1000)' </dev/null
gone "$R/d3.pid" "python: double-fork daemon at the deadline"
double_fork_at_exit='
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open(sys.argv[1] + ".tmp", "w").write(str(os.getpid())); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
        time.sleep(1000)
    os._exit(0)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)'
crun -- "$PY" -c "$double_fork_at_exit" d4.pid </dev/null
gone "$R/d4.pid" "python: double-fork daemon at exit"

# As root corral puts each run in a cgroup and kills it whole, which would
# hide a broken sweep of the session and the escaped daemons. Without a
# cgroup hierarchy (an empty tmpfs over /sys/fs/cgroup in a private mount
# namespace) only the sweep can find the daemon.
if is_root; then
	if unshare -m --propagation private true 2>/dev/null; then
		unshare -m --propagation private sh -c 'mount -t tmpfs corral-no-cgroup /sys/fs/cgroup && exec "$@"' sh \
			"$C" run --root "$R" -- "$PY" -c "$double_fork_at_exit" d5.pid </dev/null
		gone "$R/d5.pid" "python: double-fork daemon at exit, root without cgroups"
		unshare -m --propagation private sh -c 'mount -t tmpfs corral-no-cgroup /sys/fs/cgroup && exec "$@"' sh \
			"$C" run --root "$R" -c "setsid sh -c 'echo \$\$ > d6.pid.tmp; mv d6.pid.tmp d6.pid; exec sleep 1000' & until [ -s d6.pid ]; do sleep 0.01; done" </dev/null
		gone "$R/d6.pid" "sh: setsid daemon at exit, root without cgroups"
	else
		bad "unshare -m failed as root: the sweep without cgroups was not tested"
	fi
fi
finish
