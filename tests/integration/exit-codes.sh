#!/usr/bin/env bash
# Exit statuses of `corral run` (DESIGN.md): the command's own, 128+N,
# 124 deadline, 125 corral's error, 126 not executable, 127 not found;
# --json exits 0 whenever the command ran and prints the result object.
. "$(dirname "$0")/lib.sh"
R=$(mkroot)
cd "$R"

"$C" run -- true; expect_eq "true exits 0" 0 $?
"$C" run -- sh -c 'exit 3'; expect_eq "own status 3" 3 $?
"$C" run -- sh -c 'kill -TERM $$'; expect_eq "SIGTERM -> 143" 143 $?
"$C" run -- sh -c 'kill -KILL $$'; expect_eq "SIGKILL -> 137" 137 $?
"$C" run --timeout 0.3 -- sleep 5; expect_eq "deadline -> 124" 124 $?
# A command that ends on its own just as the deadline comes: either it exited
# (its status kept) or the deadline killed it (signal 9), never "timed out"
# with no status and no signal (the race used to give that one run in four).
out=$(for i in $(seq 80); do "$C" run --json --timeout 0.03 -- sleep 0.0$((22 + i % 9)); done | "$PY" -c '
import collections, json, sys
c = collections.Counter()
for l in sys.stdin:
    v = json.loads(l)
    c[(v["exit_status"], v["signal"], v["timed_out"])] += 1
print(" ".join(sorted("%s/%s/%s" % k for k in c if k not in [(0, None, False), (None, 9, True)])) or "consistent")')
expect_eq "at the deadline: exited with its status, or killed by it" consistent "$out"
err=$("$C" run -- no-such-command-xyz 2>&1); rc=$?
expect_eq "not found -> 127" 127 $rc
expect_eq "not found message" "corral: no-such-command-xyz: command not found" "$err"
printf 'echo hi\n' > "$R/script.sh"; chmod 644 "$R/script.sh"
err=$("$C" run -- ./script.sh 2>&1); rc=$?
expect_eq "not executable -> 126" 126 $rc
expect_match "not executable message" "^corral: \./script\.sh: Permission denied$" "$err"
# An executable text file without #! runs as a /bin/sh script, as execvp and
# shells do, by path and through PATH; a binary for another system does not.
chmod 755 "$R/script.sh"; printf 'echo "args:$*"\n' > "$R/args.sh"; chmod 755 "$R/args.sh"
out=$("$C" run -- ./script.sh); rc=$?
expect_eq "no #!: run by /bin/sh" "0 hi" "$rc $out"
out=$("$C" run -- ./args.sh a 'b c'); rc=$?
expect_eq "no #!: arguments passed" "0 args:a b c" "$rc $out"
out=$("$C" run --env PATH="$R:/usr/bin:/bin" -- args.sh x); rc=$?
expect_eq "no #!: found through PATH" "0 args:x" "$rc $out"
printf '\177ELF\002\001\001garbage' > "$R/foreign"; chmod 755 "$R/foreign"
err=$("$C" run -- ./foreign 2>&1); rc=$?
expect_eq "foreign binary -> 126, not run by sh" "126 corral: ./foreign: Exec format error" "$rc $err"
printf 'x\000y\n' > "$R/nul"; chmod 755 "$R/nul"
err=$("$C" run -- ./nul 2>&1); rc=$?
expect_eq "NUL in the first line -> 126, not run by sh" "126 corral: ./nul: Exec format error" "$rc $err"
mkdir "$R/adir"
err=$("$C" run -- ./adir 2>&1); rc=$?
expect_eq "directory -> 126" 126 $rc
expect_match "directory: one line naming it" "^corral: \./adir: [^
]+$" "$err"
# A file that is there but whose interpreter is not: the command exists, so
# 126, and the message names what is missing (not "command not found").
printf '#!/no/such/interp -x\necho hi\n' > "$R/orphan.sh"; chmod 755 "$R/orphan.sh"
err=$("$C" run -- ./orphan.sh 2>&1); rc=$?
expect_eq "missing #! interpreter -> 126, named" "126 corral: ./orphan.sh: cannot execute: interpreter /no/such/interp not found" "$rc $err"
out=$("$C" run --json --env PATH="$R:/usr/bin:/bin" -- orphan.sh)
expect_eq "--json: missing interpreter through PATH" "126 'corral: orphan.sh: cannot execute: interpreter /no/such/interp not found\n'" \
	"$(json '["exit_status"]' <<<"$out") $(json '["stderr"]' <<<"$out")"
printf '#!/no/\033]0;x\007\n' > "$R/esc.sh"; chmod 755 "$R/esc.sh"
err=$("$C" run -- ./esc.sh 2>&1); rc=$?
expect_eq "interpreter name printed without control bytes" "126 corral: ./esc.sh: cannot execute: interpreter /no/?]0;x? not found" "$rc $err"
"$PY" -c '
import sys
d = open("/bin/true", "rb").read()
old = b"/lib64/ld-linux-x86-64.so.2"
assert old in d
open(sys.argv[1], "wb").write(d.replace(old, b"/lib64/ld-corral-nonex.so.2"))' "$R/noloader"
chmod 755 "$R/noloader"
err=$("$C" run -- ./noloader 2>&1); rc=$?
expect_eq "missing ELF interpreter -> 126, said" "126 corral: ./noloader: cannot execute: a file it needs (its interpreter or dynamic loader) was not found" "$rc $err"
chmod 111 "$R/noloader"
err=$("$C" run -- ./noloader 2>&1); rc=$?
expect_eq "...also when it is execute-only (not readable)" "126 corral: ./noloader: cannot execute: a file it needs (its interpreter or dynamic loader) was not found" "$rc $err"
printf '#!%s/orphan.sh\n' "$R" > "$R/chain.sh"; chmod 755 "$R/chain.sh"
err=$("$C" run -- ./chain.sh 2>&1); rc=$?
expect_eq "a #! chain whose last interpreter is missing: the one named is not blamed" "126 corral: ./chain.sh: cannot execute: a file it needs (its interpreter or dynamic loader) was not found" "$rc $err"
err=$("$C" run -- ./no-such-file 2>&1); rc=$?
expect_eq "a missing file is still 127 (control)" "127 corral: ./no-such-file: command not found" "$rc $err"
printf '#!/bin/sh\r\necho hi\r\n' > "$R/crlf.sh"; chmod 755 "$R/crlf.sh"
err=$("$C" run -- ./crlf.sh 2>&1); rc=$?
expect_eq "CRLF line endings: said" '126 corral: ./crlf.sh: cannot execute: interpreter /bin/sh\r not found: the script has Windows (CRLF) line endings' "$rc $err"
# An interpreter that is there but outside the sandbox's paths (a venv made
# with a pyenv python under /root, say): named, not a bare "Permission denied".
IN=$(mktemp -d /tmp/corral-interp.XXXXXX); chmod 755 "$IN"; cp /bin/sh "$IN/mysh"
printf '#!%s/mysh\necho via-mysh\n' "$IN" > "$R/denied.sh"; chmod 755 "$R/denied.sh"
err=$("$C" run -- ./denied.sh 2>&1); rc=$?
expect_eq "interpreter outside the sandbox: named" "126 corral: ./denied.sh: cannot execute: interpreter $IN/mysh: Permission denied" "$rc $err"
cp "$R/denied.sh" "$R/denied-nx.sh"; chmod 644 "$R/denied-nx.sh"
err=$("$C" run -- ./denied-nx.sh 2>&1); rc=$?
expect_eq "...but a script that is not executable itself is that" "126 corral: ./denied-nx.sh: Permission denied" "$rc $err"
out=$("$C" run --ro "$IN" -- ./denied.sh 2>&1); rc=$?
expect_eq "...and with --ro on its directory it runs (control)" "0 via-mysh" "$rc $out"
rm -rf "$IN"
err=$("$C" run --root /no/such/dir -- true 2>&1); rc=$?
expect_eq "missing root -> 125" 125 $rc
expect_eq "missing root message" "corral: root /no/such/dir: No such file or directory" "$err"
err=$("$C" run --timeout nope -- true 2>&1); rc=$?
expect_eq "bad option -> 125" 125 $rc
expect_match "bad option: the message names --timeout and the bad value" "^corral: .*--timeout.*nope" "$err"
err=$("$C" run --bogus -- true 2>&1); rc=$?
expect_eq "unknown option -> 125" "125 corral: run: unknown option --bogus (see corral run --help)" "$rc $err"
# Long options match exactly (getopt_long's abbreviations would make a
# near-miss flag mean another option); the error names the closest ones.
err=$("$C" run --r /tmp -- true 2>&1); rc=$?
expect_eq "abbreviation of several (--r) -> 125" "125 corral: run: unknown option --r; did you mean --root, --ro or --rw?" "$rc $err"
err=$("$C" run --time 5 -- true 2>&1); rc=$?
expect_eq "abbreviation of one (--time) -> 125" "125 corral: run: unknown option --time; did you mean --timeout?" "$rc $err"
err=$("$C" run --proce 5 -- true 2>&1); rc=$?
expect_eq "--proce is neither --procs nor --proc" "125 corral: run: unknown option --proce; did you mean --procs or --proc?" "$rc $err"
err=$("$C" run --proc 5 -- true 2>&1); rc=$?
expect_match "--proc is its own option, not --procs" "^corral: --proc: unknown value '5'" "$err"
err=$("$C" run --tiemout=5 -- true 2>&1); rc=$?
expect_eq "a misspelling (--tiemout=5): the closest option, not the value" "125 corral: run: unknown option --tiemout; did you mean --timeout?" "$rc $err"
err=$("$C" probe --rot /tmp 2>&1); rc=$?
expect_eq "probe: the same rule" "125 corral: probe: unknown option --rot; did you mean --root or --ro?" "$rc $err"
"$C" run --timeout 5 -- true; expect_eq "the exact --timeout (control)" 0 $?
"$C" run --timeout=5 -- true; expect_eq "the exact --timeout=5 (control)" 0 $?
out=$("$C" run --timeout 5 -- echo --time); rc=$?
expect_eq "the command's own --time is its own (control)" "0 --time" "$rc $out"
err=$("$C" run 2>&1); rc=$?
expect_eq "missing command -> 125" 125 $rc
expect_match "missing command: said" "^corral: .*missing command" "$err"
# control: exit statuses above 128 from the command itself pass through
"$C" run -- sh -c 'exit 200'; expect_eq "status 200 passes through" 200 $?

# --json: exit 0 whenever the command ran.
out=$("$C" run --json -- sh -c 'echo out; echo err >&2; exit 7'); rc=$?
expect_eq "--json exits 0" 0 $rc
keys=$(printf '%s' "$out" | "$PY" -c 'import json,sys; print(",".join(json.load(sys.stdin).keys()))')
expect_eq "--json keys in order" "run_id,started_at,exit_status,signal,timed_out,ended_by,stdout,stderr,stdout_truncated,stderr_truncated,stdout_bytes,stderr_bytes,wall_ms,cpu_ms,max_rss_kb,provider,leftovers_killed,denials,warnings" "$keys"
types=$(printf '%s' "$out" | "$PY" -c '
import json,sys; v=json.load(sys.stdin)
print(type(v["exit_status"]).__name__, v["signal"], v["timed_out"], repr(v["stdout"]), repr(v["stderr"]),
      v["stdout_truncated"], v["stderr_truncated"], type(v["wall_ms"]).__name__ in ("int","float"),
      type(v["cpu_ms"]).__name__ in ("int","float"), type(v["max_rss_kb"]).__name__, v["provider"])')
expect_eq "--json values and types" "int None False 'out\n' 'err\n' False False True True int local" "$types"
expect_eq "--json exit_status" "7" "$(printf '%s' "$out" | json '["exit_status"]')"

out=$("$C" run --json -- sh -c 'kill -KILL $$'); rc=$?
expect_eq "--json signal: exit 0" 0 $rc
expect_eq "--json signal: exit_status null, signal 9" "None 9 False" \
	"$(printf '%s' "$out" | "$PY" -c 'import json,sys; v=json.load(sys.stdin); print(v["exit_status"], v["signal"], v["timed_out"])')"

out=$("$C" run --json --timeout 0.5 -- sh -c 'echo partial; echo e-partial >&2; sleep 10'); rc=$?
expect_eq "--json deadline: exit 0" 0 $rc
expect_eq "--json deadline: null status, timed out, partial output kept" "None True 'partial\n' 'e-partial\n'" \
	"$(printf '%s' "$out" | "$PY" -c 'import json,sys; v=json.load(sys.stdin); print(v["exit_status"], v["timed_out"], repr(v["stdout"]), repr(v["stderr"]))')"
wall=$(printf '%s' "$out" | json '["wall_ms"]')
expect_match "--json deadline: wall_ms about 500" "^(4[5-9][0-9]|[5-9][0-9][0-9]|1[0-9][0-9][0-9])\." "$wall"

out=$("$C" run --json -- no-such-command-xyz); rc=$?
expect_eq "--json not found: exit 0" 0 $rc
expect_eq "--json not found: 127 and message" "127 'corral: no-such-command-xyz: command not found\n'" \
	"$(printf '%s' "$out" | "$PY" -c 'import json,sys; v=json.load(sys.stdin); print(v["exit_status"], repr(v["stderr"]))')"

out=$("$C" run --json --root /no/such/dir -- true); rc=$?
expect_eq "--json corral error: exit 125" 125 $rc
expect_eq "--json corral error object" "not_found root /no/such/dir: No such file or directory" \
	"$(printf '%s' "$out" | "$PY" -c 'import json,sys; v=json.load(sys.stdin); print(v["error"]["code"], v["error"]["message"])')"

# Everything from COMMAND on is the command's own, --json included; an
# option's value is not an option (control: --json before the command).
out=$("$C" run echo --json); rc=$?
expect_eq "--json after COMMAND is the command's argument" "0 --json" "$rc $out"
out=$("$C" run printf '%s|' a --json b); rc=$?
expect_eq "--json after COMMAND, among its arguments" "0 a|--json|b|" "$rc $out"
out=$("$C" run --root /no/such/dir echo --json 2>"$R/err"); rc=$?
expect_eq "error with --json after COMMAND: plain, on stderr" "125 ''" "$rc '$out'"
expect_match "error with --json after COMMAND: the corral: line" "^corral: root /no/such/dir" "$(cat "$R/err")"
out=$("$C" run --timeout --json true 2>"$R/err"); rc=$?
expect_eq "--json as an option's value is not --json" "125 ''" "$rc '$out'"
out=$("$C" run --jso --root /no/such/dir true); rc=$?
expect_eq "an abbreviated --json is refused, in JSON (the caller asked for it)" "125 usage" "$rc $(printf '%s' "$out" | json '["error"]["code"]' | tr -d "'")"

out=$("$C" --json run -- true); rc=$?
expect_eq "--json before the subcommand: a JSON usage error" "125 usage" "$rc $(printf '%s' "$out" | json '["error"]["code"]' | tr -d "'")"
out=$("$C" bogus --json); rc=$?
expect_eq "unknown command with --json: a JSON usage error" "125 usage" "$rc $(printf '%s' "$out" | json '["error"]["code"]' | tr -d "'")"

# -c runs the policy's shell -c (tests/integration/options.sh)
expect_eq "-c shell string" "a b" "$("$C" run -c 'echo a b')"
# stdin passes through
expect_eq "stdin passthrough" "HELLO" "$(echo hello | "$C" run -- tr a-z A-Z)"
expect_eq "stdin with --json --stdin pass" "'HELLO\n'" "$(echo hello | "$C" run --json --stdin pass -- tr a-z A-Z | json '["stdout"]')"
expect_eq "stdin with --json: /dev/null by default" "''" "$(echo hello | "$C" run --json -- tr a-z A-Z | json '["stdout"]')"
# compat: a kernel that cannot keep a promise (pretend Landlock ABI 2).
err=$(CORRAL_TEST_LANDLOCK_ABI=2 "$C" run -- true 2>&1); rc=$?
expect_eq "strict refuses an unenforceable promise: 125" 125 $rc
expect_match "strict names the promise and why" "^corral: compat strict: promise fs\.truncate cannot be kept: .*needs Landlock ABI 3" "$err"
out=$(CORRAL_TEST_LANDLOCK_ABI=2 "$C" run --json -- true); rc=$?
expect_eq "strict refusal in --json" "125 unenforceable" "$rc $(printf '%s' "$out" | $PY -c 'import json,sys; print(json.load(sys.stdin)["error"]["code"])')"
out=$(CORRAL_TEST_LANDLOCK_ABI=2 "$C" run --compat best-effort -- echo ran 2>"$R/warn"); rc=$?
expect_eq "best-effort runs" "0 ran" "$rc $out"
expect_match "best-effort warns what it dropped" "corral: warning: best-effort: dropped fs\.truncate" "$(cat "$R/warn")"
# A setup step that dies without being able to report (as root: joining the
# memory cgroup under a 100-byte limit) is corral's error, never a fake 127.
if is_root; then
  err=$("$C" run --memory 100 -- true 2>&1); rc=$?
  expect_eq "unreported setup failure -> 125" 125 $rc
  expect_match "unreported setup failure names it" "^corral: child setup failed before execve" "$err"
fi
# control: a command that itself exits 127 keeps its status
"$C" run -- sh -c 'exit 127'; expect_eq "own status 127 stays 127" 127 $?
# A result corral could not deliver is its error (125 and a line), not a silent 0.
if [ -w /dev/full ]; then
	err=$("$C" run --json -- true 2>&1 >/dev/full); rc=$?
	expect_eq "--json result to a full device: 125, said" "125 corral: writing the result to standard output: No space left on device" "$rc $err"
	err=$("$C" run --json -- head -c 100000 /dev/zero 2>&1 >/dev/full); rc=$?
	expect_eq "--json big result to a full device: 125, said" "125 corral: writing the result to standard output: No space left on device" "$rc $err"
	err=$("$C" policy show 2>&1 >/dev/full); rc=$?
	expect_eq "policy show to a full device: 125, said" "125 corral: writing to standard output: No space left on device" "$rc $err"
	err=$("$C" run -- true 2>&1 >/dev/full); rc=$?
	expect_eq "plain run prints nothing itself: its command's status (control)" "0 " "$rc $err"
fi
# A closed stdout: --json refuses before running anything (the result would
# be lost); a plain run hands the command its stdio as it is, closed too.
err=$("$C" run --json -- touch "$R/closed-ran" 2>&1 >&-); rc=$?
expect_eq "--json with stdout closed: 125, said, nothing run" "125 corral: --json: standard output is closed, so the result could not be printed no" \
	"$rc $err $([ -e "$R/closed-ran" ] && echo ran || echo no)"
err=$("$C" run -- sh -c 'echo hi; echo "status $?" >&2' 2>&1 >&-); rc=$?
expect_match "plain run with stdout closed: the command finds it closed" "^0 .*status [1-9]" "$rc $err"
err=$("$C" run -- sh -c 'echo hi; echo "status $?" >&2' 2>&1 >/dev/null); rc=$?
expect_eq "plain run with stdout on /dev/null: the write works (control)" "0 status 0" "$rc $err"
err=$("$C" run -- sh -c '[ -e /proc/self/fd/0 ] && echo open || echo closed' <&-); rc=$?
expect_eq "plain run with stdin closed: the command finds it closed" "0 closed" "$rc $err"
err=$("$C" run -- sh -c '[ -e /proc/self/fd/0 ] && echo open || echo closed' </dev/null); rc=$?
expect_eq "plain run with stdin on /dev/null: open (control)" "0 open" "$rc $err"
rc=$(trap '' PIPE; "$C" run --json -- sleep 0.2 2>"$R/pipe.err" | true; echo "${PIPESTATUS[0]}")
expect_eq "--json result to a closed pipe (SIGPIPE ignored): 125, said" "125 corral: writing the result to standard output: Broken pipe" "$rc $(cat "$R/pipe.err")"
finish
