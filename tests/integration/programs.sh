#!/usr/bin/env bash
# Real programs work inside with the default policy: sh, coreutils,
# python3, gcc compiling and running a program, git, make, socketpair.
. "$(dirname "$0")/lib.sh"
R=$(mkroot)
cd "$R"
run() { "$C" run --timeout 60 -- "$@"; }

expect_eq "sh" "3" "$(run sh -c 'echo $((1 + 2))')"
expect_eq "coreutils" "3 b" "$(run sh -c 'printf "a\nb\nc\n" > f && wc -l < f | tr -d " " && sort -r f | sed -n 2p && rm f' | tr '\n' ' ' | sed 's/ $//')"
expect_eq "ls, cp, mv, mkdir, rm" "y" "$(run sh -c 'mkdir -p d/e && echo y > d/e/x && cp d/e/x d/z && mv d/z w && cat w && rm -r d w')"
expect_eq "python3 (Debian's)" "42 True" "$(run /usr/bin/python3 -c 'import json, os, tempfile; f = tempfile.NamedTemporaryFile(); print(42, os.path.dirname(f.name) == os.environ["TMPDIR"])')"
if command -v gcc >/dev/null; then
	printf '#include <stdio.h>\nint main(void) { printf("compiled %%d\\n", 6 * 7); return 0; }\n' > "$R/hello.c"
	is_root && chown 65534:65534 "$R/hello.c"
	expect_eq "gcc compiles and runs a program" "compiled 42" "$(run sh -c 'gcc -O1 -o hello hello.c && ./hello')"
else
	bad "gcc not installed"
fi
out=$(run sh -c 'git init -q repo && cd repo && git config user.email a@b && git config user.name t && echo hi > f && git add f && git commit -qm first && git log --oneline | wc -l')
expect_eq "git init, add, commit" "1" "$out"
printf 'all: out.txt\nout.txt:\n\techo made > out.txt\n' > "$R/Makefile"
is_root && chown 65534:65534 "$R/Makefile"
expect_eq "make" "made" "$(run sh -c 'make -s && cat out.txt')"
expect_eq "socketpair(AF_UNIX) works" "ping" "$(run /usr/bin/python3 -c 'import socket; a, b = socket.socketpair(); a.send(b"ping"); print(b.recv(4).decode())')"
expect_eq "pipes and subshells" "5" "$(run sh -c 'seq 5 | (while read x; do last=$x; done; echo $last)')"
# writes stay under the root: control write inside works, outside fails
run sh -c 'echo in > inside.txt'; expect_eq "write inside the root" "in" "$(cat "$R/inside.txt")"
run sh -c 'echo out > /tmp/corral-outside-'$$'.txt' 2>/dev/null
[ -e /tmp/corral-outside-$$.txt ] && { bad "wrote outside the root"; rm -f /tmp/corral-outside-$$.txt; } || ok "write outside the root refused"
finish
