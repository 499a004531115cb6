#!/usr/bin/env bash
# A C/C++ project built and tested inside: 60 translation units, a static
# library, make -j4 and -j16 (processes limit 256), g++ with threads, a
# test runner that forks, `make check`, and a rebuild after touching a header.
. "$(dirname "$0")/lib.sh"
need gcc
need make
need g++ build-essential
R=$(mkroot)
mkdir -p "$R/proj/src" "$R/proj/tests"
cd "$R/proj"
for i in $(seq 1 60); do
	printf '#include "lib.h"\nint f%d(int x) { return x + %d; }\n' "$i" "$i" > "src/f$i.c"
	echo "int f$i(int);" >> src/lib.h.in
done
mv src/lib.h.in src/lib.h
cat > src/main.c <<'C'
#include <stdio.h>
#include "lib.h"
int main(void) { printf("%d\n", f60(f1(0))); return 0; }
C
cat > tests/t.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../src/lib.h"
/* Each case in its own forked child, the way check/cmocka runners do. */
static int f(int i) { return i == 1 ? f1(1) == 2 : i == 2 ? f30(0) == 30 : f60(-60) == 0; }
int main(void)
{
	int failed = 0;
	for (int i = 1; i <= 3; i++) {
		pid_t p = fork();
		if (p == 0)
			_exit(f(i) ? 0 : 1);
		int st;
		waitpid(p, &st, 0);
		failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	printf("%d failed\n", failed);
	return failed != 0;
}
C
cat > Makefile <<'MK'
CFLAGS ?= -O2 -Wall -Werror
SRCS := $(wildcard src/f*.c)
OBJS := $(SRCS:.c=.o)
all: prog
src/%.o: src/%.c src/lib.h
	$(CC) $(CFLAGS) -c -o $@ $<
libf.a: $(OBJS)
	$(AR) rcs $@ $^
prog: src/main.o libf.a
	$(CC) -o $@ $^
tests/t: tests/t.c libf.a
	$(CC) $(CFLAGS) -o $@ $^
check: tests/t
	./tests/t
clean:
	rm -f src/*.o libf.a prog tests/t
.PHONY: all check clean
MK
cat > threads.cc <<'CC'
#include <atomic>
#include <iostream>
#include <thread>
#include <vector>
int main()
{
	std::atomic<int> n{0};
	std::vector<std::thread> v;
	for (int i = 0; i < 32; i++)
		v.emplace_back([&] { n++; });
	for (auto &t : v)
		t.join();
	std::cout << n << " threads, hw " << (std::thread::hardware_concurrency() > 0) << "\n";
}
CC
give "$R"
inside() { "$C" run --root "$R/proj" --timeout 240 --cpu 240 "$@"; }

step "make -j4" inside -- make -s -j4
expect_eq "the program runs" "61" "$(inside -- ./prog 2>&1)"
step "make check (forking test runner)" inside -- make -s check
step "make clean, then make -j16" inside -- sh -c 'make -s clean && make -s -j16 prog'
step "make -j (unbounded)" inside -- sh -c 'make -s clean && make -s -j prog'
step "header touched: everything rebuilds" inside -- sh -c 'sleep 1; touch src/lib.h && make -j4 prog | grep -c " -c " | grep -qx 61'
expect_eq "g++ -pthread, 32 threads" "32 threads, hw 1" \
	"$(inside -- sh -c 'g++ -O1 -pthread -o threads threads.cc && ./threads' 2>&1)"
step "gcc -g -O0 with a big debug object, nm, objdump" inside -- sh -c \
	'gcc -g -O0 -c src/f1.c -o /dev/null && gcc -g -c src/main.c -o m.o && nm m.o | grep -q main && objdump -d m.o > /dev/null'
step "ccache-style TMPDIR: gcc -save-temps and -pipe" inside -- sh -c \
	'cd "$TMPDIR" && gcc -save-temps -c '"$R"'/proj/src/f2.c -o f2.o && gcc -pipe -c '"$R"'/proj/src/f3.c -o f3.o && ls f2.i f2.s >/dev/null'
finish
