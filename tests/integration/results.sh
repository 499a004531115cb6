#!/usr/bin/env bash
# The --json result an agent acts on (DESIGN.md "Command-line contract"):
# --stdin, head+tail clipping with the byte counts, ended_by,
# leftovers_killed, run_id/started_at/warnings, and the memory limit.
# Each case pairs what corral reports with a control that shows the
# report is not vacuous. Root and nobody.
. "$(dirname "$0")/lib.sh"
R=$(mkroot)
cd "$R"

# jf FIELD... < json: the fields' python reprs, space-separated.
jf() { "$PY" -c '
import json, sys
v = json.load(sys.stdin)
print(" ".join(repr(v[k]) for k in sys.argv[1:]))' "$@"; }

# ------------------------------------------------------------------ --stdin
# With --json, stdin is /dev/null unless --stdin pass: `cat` with a stdin
# pipe that stays open (Node's spawn() default) returns at once.
mkfifo "$R/held"
sleep 60 >"$R/held" & holder=$!
out=$("$C" run --json --timeout 5 -- cat <"$R/held")
expect_eq "--json: stdin is /dev/null, cat with an open pipe returns at once" "0 False ''" \
	"$(jf exit_status timed_out stdout <<<"$out")"
# Control: the same open pipe passed through holds cat until the deadline.
out=$("$C" run --json --stdin pass --timeout 0.5 -- cat <"$R/held")
expect_eq "control: --stdin pass with the pipe open waits for it (deadline)" "True" "$(jf timed_out <<<"$out")"
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
out=$(echo piped | "$C" run --json --stdin pass -- cat)
expect_eq "--json --stdin pass: the caller's stdin reaches the command" "'piped\n'" "$(jf stdout <<<"$out")"
out=$(echo piped | "$C" run --json --stdin null -- cat)
expect_eq "--json --stdin null: /dev/null" "''" "$(jf stdout <<<"$out")"
out=$(echo piped | "$C" run -- cat)
expect_eq "without --json: stdin passed by default" "piped" "$out"
out=$(echo piped | "$C" run --stdin null -- cat)
expect_eq "without --json, --stdin null: /dev/null" "" "$out"
err=$("$C" run --stdin maybe -- true 2>&1); rc=$?
expect_eq "--stdin maybe: 125 naming the values" "125 corral: --stdin: 'maybe' is neither pass (the caller's stdin) nor null (/dev/null)" "$rc $err"

# ------------------------------------------------------- head + tail clipping
# A build log longer than the cap keeps its start and its end (where the
# error is), joined by one marker line; stdout_bytes counts all of it
# (control: the same command outside corral).
want_bytes=$(seq 1 200000 | wc -c)
out=$("$C" run --json --max-output 1K -- sh -c 'seq 1 200000; echo "error: the end" >&2')
got=$("$PY" -c '
import json, sys
v = json.load(sys.stdin)
o = v["stdout"]
head, sep, tail = o.partition("\n[\u2026 ")
n, _, tail = tail.partition(" bytes omitted \u2026]\n")
kept = len(head.encode()) + 1 + len(tail.encode())  # the head ends with its newline
print(head.startswith("1\n2\n3\n"), tail.endswith("199999\n200000\n"), len(head.encode()) <= 512, len(tail.encode()) <= 512,
      int(n) + kept == v["stdout_bytes"], v["stdout_bytes"], v["stdout_truncated"], repr(v["stderr"]), v["stderr_truncated"], v["stderr_bytes"])' <<<"$out")
expect_eq "clipped: head and tail kept, marker counts the rest, every byte counted" \
	"True True True True True $want_bytes True 'error: the end\n' False 15" "$got"
out=$("$C" run --json --max-output 1K -- seq 1 10)
expect_eq "control: output under the cap comes back whole" "'1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n' False 21" \
	"$(jf stdout stdout_truncated stdout_bytes <<<"$out")"

# ------------------------------------------- run_id, started_at, warnings
before=$(date -u +%s%3N)
out=$("$C" run --json -- true)
after=$(date -u +%s%3N)
out2=$("$C" run --json -- true)
got=$("$PY" -c '
import datetime, json, re, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
before, after = int(sys.argv[3]), int(sys.argv[4])
ok_id = all(re.fullmatch("[0-9a-f]{32}", v["run_id"]) for v in (a, b))
m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{3})Z", a["started_at"])
t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc).timestamp() * 1000 + int(m.group(2)) if m else 0
print(ok_id, a["run_id"] != b["run_id"], bool(m), before <= t <= after, list(a)[:2])' "$out" "$out2" "$before" "$after")
expect_eq "run_id: 32 hex digits, unique; started_at: RFC 3339 UTC ms, between the clock before and after; first keys" \
	"True True True True ['run_id', 'started_at']" "$got"
# best-effort: what was dropped is in the JSON, line for line what stderr says.
out=$(CORRAL_TEST_LANDLOCK_ABI=2 "$C" run --json --compat best-effort -- true 2>"$R/warn")
got=$("$PY" -c '
import json, sys
v = json.loads(sys.argv[1])
err = [l[len("corral: warning: "):] for l in open(sys.argv[2]).read().splitlines() if l.startswith("corral: warning: ")]
print(len(v["warnings"]) > 0, v["warnings"] == err, any("fs.truncate" in w for w in v["warnings"]), v["exit_status"])' "$out" "$R/warn")
expect_eq "best-effort: warnings list what was dropped (fs.truncate), as stderr says" "True True True 0" "$got"
out=$("$C" run --json -- true 2>"$R/warn")
expect_eq "control: nothing dropped, no warnings" "[] ''" "$(jf warnings <<<"$out") '$(cat "$R/warn")'"

# ------------------------------------------------------------------ ended_by
eb() { "$C" run --json "$@" 2>/dev/null | jf ended_by exit_status signal; }
expect_eq "ended_by exit: the command's own exit 3" "'exit' 3 None" "$(eb -- sh -c 'exit 3')"
expect_eq "ended_by signal: SIGTERM the command sent itself" "'signal' None 15" "$(eb -- sh -c 'kill -TERM $$')"
expect_eq "ended_by timeout: the deadline" "'timeout' None 9" "$(eb --timeout 0.3 -- sleep 5)"
expect_eq "ended_by cpu: RLIMIT_CPU's SIGXCPU" "'cpu' None 24" "$(eb --cpu 1 -- sh -c 'while :; do :; done')"
expect_eq "ended_by cpu: the hard limit's SIGKILL when SIGXCPU is ignored" "'cpu' None 9" \
	"$(eb --cpu 1 -- sh -c 'trap "" XCPU; while :; do :; done')"
expect_eq "control: SIGXCPU the command sent itself, CPU unspent, is a signal" "'signal' None 24" \
	"$(eb --cpu 1 -- sh -c 'kill -XCPU $$')"
expect_eq "ended_by file_size: a write past --file-size (SIGXFSZ)" "'file_size' None 25" \
	"$(eb --file-size 1K -- dd if=/dev/zero of=big bs=4096 count=1)"
expect_eq "control: the same write under --file-size" "'exit' 0 None" \
	"$(eb --file-size 8K -- dd if=/dev/zero of=big bs=4096 count=1)"
# memory: only a memory cgroup's OOM killer says so (as root here); under
# RLIMIT_AS alone the allocation fails inside the program, its own way.
if "$C" probe --json | "$PY" -c 'import json,sys; sys.exit(0 if any(p["id"] == "limits.memory" and "memory cgroup per run" in p["why"] for p in json.load(sys.stdin)["promises"]) else 1)'; then
	# The OOM killer picks its victim (head, or sh itself): 137 or signal 9.
	expect_match "ended_by memory: tmpfs writes past --memory 64M, the cgroup's OOM killer" "^'memory' (137 None|None 9)$" \
		"$(eb --memory 64M -- sh -c 'head -c 100M /dev/zero >"$TMPDIR/big"')"
	expect_eq "control: 10M under --memory 64M" "'exit' 0 None" \
		"$(eb --memory 64M -- sh -c 'head -c 10M /dev/zero >"$TMPDIR/big"')"
else
	echo "# no memory cgroup per run here (probe): ended_by memory not checked"
fi
# cancelled: SIGTERM to corral kills the tree; the result so far says so.
rm -f started
"$C" run --json -- sh -c 'echo $$ >started; exec sleep 30' >"$R/cancel.json" & cpid=$!
for _ in $(seq 200); do [ -s started ] && break; sleep 0.05; done
kill -TERM "$cpid"; wait "$cpid"; rc=$?
expect_eq "ended_by cancelled: SIGTERM to corral (which dies of it)" "143 'cancelled' None 9" "$rc $(jf ended_by exit_status signal <"$R/cancel.json")"

# ---------------------------------------------------------- leftovers_killed
# What the command left running when it exited is counted, then killed.
lk() { "$C" run --json "$@" 2>/dev/null | jf exit_status leftovers_killed; }
tag=$RANDOM$RANDOM
expect_eq "leftovers: two background sleeps counted and killed" "0 2" \
	"$(lk -- sh -c "sleep 300$tag & sleep 301$tag & echo started")"
pgrep -f "^sleep 30[01]$tag\$" >/dev/null && bad "leftovers: the sleeps still run after corral" || ok "leftovers: the sleeps are gone after corral"
rm -f ready
expect_eq "leftovers: a subshell and its two children, the whole tree" "0 3" \
	"$(lk -- sh -c "(sleep 302$tag & sleep 303$tag & echo ready >ready; wait) & while [ ! -s ready ]; do sleep 0.01; done")"
expect_eq "leftovers: a setsid daemon that left the session" "0 1" \
	"$(lk -- sh -c "setsid sleep 304$tag >/dev/null 2>&1 & sleep 0.2")"
expect_eq "control: a command that waits for its children leaves none" "0 0" \
	"$(lk -- sh -c "sleep 0.05 & sleep 0.05 & wait")"
expect_eq "control: nothing counted when the deadline kills the tree" "None 0" \
	"$(lk --timeout 0.5 -- sh -c "sleep 305$tag & sleep 306$tag")"
pgrep -f "^sleep 30[0-6]$tag\$" >/dev/null && bad "leftovers: a sleep survived" || ok "leftovers: nothing of these runs survived"

# ------------------------------------------------------------------ memory
# Where a memory cgroup bounds the run (as root here), it alone bounds
# memory: no address-space limit, so V8 and the JVM start at the defaults
# (control: RLIMIT_AS 1G, as corral sets without a cgroup, makes the same
# ArrayBuffer fail).
if "$C" probe --json | "$PY" -c 'import json,sys; sys.exit(0 if any(p["id"] == "limits.memory" and "memory cgroup per run" in p["why"] for p in json.load(sys.stdin)["promises"]) else 1)'; then
	expect_eq "memory cgroup: RLIMIT_AS is off inside" "unlimited" "$("$C" run -- sh -c 'ulimit -v')"
	if command -v node >/dev/null; then
		expect_eq "memory cgroup: node -e 'new ArrayBuffer(2**30)' at the defaults" "'exit' 0 '1073741824\n'" \
			"$("$C" run --json -- node -e 'console.log(new ArrayBuffer(2**30).byteLength)' | jf ended_by exit_status stdout)"
		out=$(sh -c 'ulimit -v 1048576; exec node -e "console.log(new ArrayBuffer(2**30).byteLength)"' 2>&1)
		expect_match "control: under RLIMIT_AS 1G, outside corral, the same ArrayBuffer fails" "RangeError|allocation failed|Fatal" "$out"
		expect_eq "memory cgroup: npm --version at the defaults" "'exit' 0" "$("$C" run --json -- npm --version | jf ended_by exit_status)"
	else
		echo "# no node here: V8 at the defaults not checked"
	fi
	if command -v javac >/dev/null; then
		expect_eq "memory cgroup: javac -version at the defaults" "'exit' 0" "$("$C" run --json -- javac -version | jf ended_by exit_status)"
	else
		echo "# no javac here: the JVM at the defaults not checked"
	fi
	expect_eq "memory cgroup: 600M in python under --memory 256M ends by memory" "'memory' None 9" \
		"$("$C" run --json --memory 256M -- python3 -c 'b = bytearray(600 << 20)' | jf ended_by exit_status signal)"
	expect_eq "control: 100M in python under --memory 256M" "'exit' 0 None" \
		"$("$C" run --json --memory 256M -- python3 -c 'b = bytearray(100 << 20)' | jf ended_by exit_status signal)"
else
	# Without a memory cgroup the address-space limit bounds each process.
	expect_eq "no memory cgroup: RLIMIT_AS is the limit" "262144" "$("$C" run --memory 256M -- sh -c 'ulimit -v')"
fi

# The keys in DESIGN.md's order.
expect_eq "--json keys in DESIGN.md's order" \
	"run_id started_at exit_status signal timed_out ended_by stdout stderr stdout_truncated stderr_truncated stdout_bytes stderr_bytes wall_ms cpu_ms max_rss_kb provider leftovers_killed denials warnings" \
	"$("$C" run --json -- true | "$PY" -c 'import json,sys; print(" ".join(json.load(sys.stdin)))')"

finish
