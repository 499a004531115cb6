#!/usr/bin/env bash
# Shell scripting: bash job control (set -m, fg, wait -n), process
# substitution (/dev/fd), here-documents (TMPDIR), coproc, traps, FIFOs,
# flock, timeout(1), nested shells, and an interactive bash on a terminal
# (corral run inside script(1)'s pty: /dev/tty, job control, window size).
. "$(dirname "$0")/lib.sh"
need bash
R=$(mkroot)
give "$R"
inside() { "$C" run --root "$R" --timeout 60 "$@"; }

expect_eq "job control: set -m, bg, fg, jobs, wait -n" "fg=7 wn=3" "$(inside -- bash -c '
	set -m; sleep 3 & sleep 3.5 & jobs >/dev/null; (sleep 0.3; exit 7) & fg %3 >/dev/null; a=$?
	(sleep 0.05; exit 3) & wait -n; b=$?; wait; echo "fg=$a wn=$b"' 2>/dev/null | tail -n 1)"
expect_eq "process substitution and /dev/fd" "same 3" "$(inside -- bash -c '
	diff <(seq 3) <(printf "1\n2\n3\n") >/dev/null && echo -n "same "; wc -l < <(seq 3)' 2>&1)"
expect_eq "here-doc, here-string, read" "a b c" "$(inside -- bash -c 'read x y <<< "a b"; cat <<EOF
$x $y c
EOF' 2>&1)"
expect_eq "coproc" "HELLO" "$(inside -- bash -c 'coproc tr a-z A-Z; echo hello >&${COPROC[1]}; exec {COPROC[1]}>&-; read -r l <&${COPROC[0]}; echo $l' 2>&1)"
expect_eq "trap EXIT/ERR/INT, kill -INT \$\$" "int exit" "$(inside -- bash -c 'trap "echo -n \"int \"" INT; trap "echo exit" EXIT; kill -INT $$' 2>&1)"
expect_eq "FIFO between processes" "through fifo" "$(inside -- bash -c 'mkfifo p; (echo through fifo > p &); cat p; rm p' 2>&1)"
expect_eq "flock serialises" "2" "$(inside -- bash -c 'for i in 1 2; do flock lk sh -c "n=\$(cat c 2>/dev/null || echo 0); echo \$((n + 1)) > c" & done; wait; cat c' 2>&1)"
expect_eq "timeout(1) inside" "124" "$(inside -- bash -c 'timeout 0.2 sleep 5; echo $?' 2>&1)"
expect_eq "sh -> bash -> sh -> dash nesting, exec" "deep" "$(inside -- sh -c 'bash -c "sh -c \"exec dash -c \\\"echo deep\\\"\""' 2>&1)"
expect_eq "xargs -P8 with 200 short processes" "200" "$(inside -- bash -c 'seq 200 | xargs -P8 -n1 sh -c "echo \$0" | wc -l' 2>&1)"
if command -v script >/dev/null; then
	out=$(TERM=xterm timeout 60 script -qec "$C run --root $R --timeout 30 -- bash -ic 'tty >/dev/null && echo TTY; sleep 0.1 & fg >/dev/null; echo FG=\$?; stty size >/dev/null && echo STTY; exit 0'" /dev/null 2>&1 | tr -d '\r')
	expect_eq "interactive bash on a pty: tty, fg, stty" "TTY FG=0 STTY" "$(grep -E '^(TTY|FG=|STTY)' <<<"$out" | tr '\n' ' ' | sed 's/ $//')"
elif [ "${CORRAL_MUST_WORK:-}" = 1 ]; then
	bad "interactive bash on a pty: script(1) (bsdutils) missing"
else
	echo "# script(1) absent: pty case not run"
fi
finish
