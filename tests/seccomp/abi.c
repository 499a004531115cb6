/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Live: syscalls through a foreign ABI (i386 int $0x80, x32 numbers with
 * bit 0x40000000) never reach the kernel under the filter. The child
 * shares the parent's fd table (CLONE_FILES), so a socket it managed to
 * create would outlive it and be counted; it must die by SIGSYS (the
 * bad-architecture action kills the whole process) or see the call fail.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "sc-test.h"

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

#define I386_getpid 20
#define I386_socketcall 102
#define I386_socket 359
#define SYS_SOCKET_CALL 1 /* socketcall's SYS_SOCKET */

#if defined(__x86_64__)
static long int80(long nr, long a, long b, long c)
{
	long ret;

	/* From a 64-bit process int $0x80 enters the i386 (compat) table. */
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(nr), "b"(a), "c"(b), "d"(c)
			 : "memory", "r8", "r9", "r10", "r11");
	return ret;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d) {
		perror("opendir /proc/self/fd");
		exit(1);
	}
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

enum attempt { X32_SOCKET, X32_GETPID, I386_SOCKET, I386_SOCKETCALL, I386_GETPID, I386_FROM_THREAD };

static uint32_t *low_args; /* socketcall's argument block, below 4 GiB */

static long attempt(enum attempt a)
{
	long r;

	switch (a) {
	case X32_SOCKET:
		return syscall(__X32_SYSCALL_BIT | SYS_socket, AF_INET, SOCK_STREAM, 0);
	case X32_GETPID:
		return syscall(__X32_SYSCALL_BIT | SYS_getpid);
	case I386_SOCKET:
		r = int80(I386_socket, AF_INET, SOCK_STREAM, 0);
		return r < 0 ? (errno = -r, -1) : r;
	case I386_SOCKETCALL:
		low_args[0] = AF_INET;
		low_args[1] = SOCK_STREAM;
		low_args[2] = 0;
		r = int80(I386_socketcall, SYS_SOCKET_CALL, (long)(uintptr_t)low_args, 0);
		return r < 0 ? (errno = -r, -1) : r;
	case I386_GETPID:
	case I386_FROM_THREAD:
		r = int80(I386_getpid, 0, 0, 0);
		return r < 0 ? (errno = -r, -1) : r;
	}
	return -1;
}

static void *thread_attempt(void *arg)
{
	attempt(I386_GETPID);
	return NULL;
}

/*
 * Run |a| in a CLONE_FILES child, filtered or not. Returns the wait status;
 * *fds_gained is how many fds the shared table gained.
 */
static int run(enum attempt a, bool filtered, int *fds_gained, long *ret)
{
	int before = count_fds(), st;
	int pipefd[2];
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return perror("pipe2"), exit(1), 0;
	before += 2;
	pid = syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
	if (pid < 0)
		return perror("clone"), exit(1), 0;
	if (pid == 0) {
		long r;

		/*
		 * Where int $0x80 does not work at all (no IA32 emulation, or a
		 * hypervisor without it) the call faults: the default SIGSEGV
		 * must end the child, not a sanitizer's handler, which aborts
		 * instead and opens files in the table we share (CLONE_FILES).
		 */
		signal(SIGSEGV, SIG_DFL);
		if (filtered)
			sc_child_enter(sc_filter(CORRAL_NET_HOST, 1));
		if (a == I386_FROM_THREAD) {
			pthread_t t;

			if (pthread_create(&t, NULL, thread_attempt, NULL) != 0)
				_exit(92);
			pthread_join(t, NULL);
			_exit(0); /* the process survived a foreign-ABI call from a thread */
		}
		r = attempt(a);
		if (write(pipefd[1], &r, sizeof(r)) != sizeof(r))
			_exit(93);
		_exit(0);
	}
	st = sc_wait(pid);
	*ret = -2;
	if (WIFEXITED(st) && read(pipefd[0], ret, sizeof(*ret)) != sizeof(*ret))
		*ret = -2;
	close(pipefd[0]);
	close(pipefd[1]);
	before -= 2;
	*fds_gained = count_fds() - before;
	return st;
}

static const struct {
	enum attempt a;
	const char *what;
	bool makes_fd;
} cases[] = {
	{ X32_SOCKET, "x32 socket (0x40000000 | 41)", true },
	{ X32_GETPID, "x32 getpid (0x40000000 | 39)", false },
	{ I386_SOCKET, "i386 int $0x80 socket (359)", true },
	{ I386_SOCKETCALL, "i386 int $0x80 socketcall(SYS_SOCKET) (102)", true },
	{ I386_GETPID, "i386 int $0x80 getpid (20)", false },
	{ I386_FROM_THREAD, "i386 int $0x80 from a second thread kills the whole process", false },
};

int main(void)
{
	long ret;
	int gained, st;
	bool ia32;

	sc_require_seccomp();
	low_args = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (low_args == MAP_FAILED)
		return perror("mmap MAP_32BIT"), 1;

	/* Controls, unfiltered: does this kernel run i386 / x32 calls at all? */
	st = run(I386_GETPID, false, &gained, &ret);
	ia32 = WIFEXITED(st) && ret > 0;
	printf("# unfiltered: i386 int $0x80 getpid %s\n",
	       ia32 ? "works (IA32 emulation on: the filter is what stops it)" : "does not work here");
	st = run(X32_SOCKET, false, &gained, &ret);
	printf("# unfiltered: x32 socket %s\n",
	       ret >= 0 ? "works (x32 ABI on: the filter is what stops it)" : "fails (kernel without x32)");
	st = run(I386_SOCKET, false, &gained, &ret);
	if (ia32)
		sc_report(WIFEXITED(st) && ret >= 0 && gained == 1,
			  "control: unfiltered i386 socket creates an fd the parent counts (gained %d)", gained);
	/* That fd is in our table now: the control proved the counting. */
	if (ret >= 0)
		close((int)ret);

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		bool ok;

		st = run(cases[i].a, true, &gained, &ret);
		if (WIFSIGNALED(st))
			ok = WTERMSIG(st) == SIGSYS || (!ia32 && WTERMSIG(st) == SIGSEGV);
		else
			ok = WIFEXITED(st) && WEXITSTATUS(st) == 0 && ret < 0 && cases[i].a != I386_FROM_THREAD;
		ok = ok && gained == 0;
		sc_report(ok, "%s: %s, fds gained %d", cases[i].what,
			  WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) :
			  WIFEXITED(st) && ret < 0 ? "call failed" : "call succeeded", gained);
	}
	return sc_finish("seccomp-abi");
}
#else
int main(void)
{
	skip_or_fail("foreign-ABI tests are written for x86_64");
}
#endif
