/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mechanism floor: the kernel work corral's design asks for, done by
 * the smallest program that can do it, so a benchmark can tell what the
 * kernel costs from what corral's own code costs. Statically linked, like
 * the floor, and like corral:
 *
 *   - a top process and a supervisor clone sharing its memory (corral's T
 *     and S), both started on one CPU;
 *   - the supervisor builds a Landlock ruleset (read-write ROOT, read and
 *     execute on every PATH, every right this kernel knows handled) and
 *     starts the command with clone(CLONE_VM|CLONE_VFORK);
 *   - the child: new session, parent-death signal, the five rlimits, every
 *     fd from 3 closed, chdir ROOT, empty signal mask, the CPU mask back,
 *     no_new_privs, Landlock, then the seccomp filter corral precompiled
 *     for the default policy (network "none", this Landlock ABI), execve.
 *
 * No policy, no identity switch, no cgroups, no private tmp, no output
 * handling, no result: what is left of corral's cost over this program is
 * those and corral's own code (docs/benchmarks.md).
 *
 *   mechanism ROOT [PATH...] -- PROGRAM [ARG...]
 *   exit status: the program's (128+N on signal N), 125 on a setup error
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* The table's types, as seccomp/cache.c declares them. */
struct sc_pre_promise {
	const char *id;
	int state;
	const char *why;
};
struct sc_pre {
	int network, abi, unix_allowed, handover;
	const struct sock_filter *filter;
	size_t len;
	const struct sc_pre_promise *promises;
	size_t n_promises;
};
#include "seccomp-precompiled.h"

/* Landlock, up to ABI 6, without relying on the installed header. */
struct ll_attr {
	uint64_t handled_access_fs, handled_access_net, scoped;
};
struct ll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));
#define LL_EXECUTE (1ULL << 0)
#define LL_READ_FILE (1ULL << 2)
#define LL_READ_DIR (1ULL << 3)
/* The rights a rule on a non-directory may carry: execute, write, read, truncate, ioctl. */
#define LL_FILE_RIGHTS ((1ULL << 0) | (1ULL << 1) | (1ULL << 2) | (1ULL << 14) | (1ULL << 15))

extern char **environ;

static const char *root;
static char **ro, **cmd;
static int n_ro, ruleset = -1, abi;
static cpu_set_t cpus;
static char s_stack[64 * 1024] __attribute__((aligned(64)));
static char c_stack[64 * 1024] __attribute__((aligned(64)));

static int fail(const char *what)
{
	fprintf(stderr, "mechanism: %s: %s\n", what, strerror(errno));
	return 125;
}

static int child(void *arg)
{
	static const int res[] = { RLIMIT_AS, RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NOFILE, RLIMIT_CORE };
	static const rlim_t lim[] = { 1ULL << 30, 60, 1ULL << 30, 1024, 0 };
	const struct sc_pre *f = arg;
	struct sock_fprog prog = { (unsigned short)f->len, (struct sock_filter *)f->filter };
	sigset_t none;

	if (setsid() < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		_exit(125);
	for (size_t i = 0; i < ARRAY_SIZE(res); i++) {
		struct rlimit rl = { lim[i], res[i] == RLIMIT_CPU ? lim[i] + 1 : lim[i] };

		if (setrlimit(res[i], &rl) < 0)
			_exit(125);
	}
	if (ruleset > 3 && syscall(SYS_close_range, 3, ruleset - 1, 0) < 0)
		_exit(125);
	if (syscall(SYS_close_range, ruleset + 1, ~0U, 0) < 0 || chdir(root) < 0)
		_exit(125);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(__NR_landlock_restrict_self, ruleset, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		_exit(125);
	execve(cmd[0], cmd, environ);
	_exit(errno == ENOENT ? 127 : 126);
}

static int add_rule(const char *path, uint64_t access, uint64_t handled)
{
	struct ll_path_beneath pb;
	struct stat st;
	int fd = open(path, O_PATH | O_CLOEXEC), r;

	if (fd < 0)
		return errno == ENOENT ? 0 : -1; /* absent here, as corral skips it */
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		access &= LL_FILE_RIGHTS;
	pb = (struct ll_path_beneath){ .allowed_access = access & handled, .parent_fd = fd };
	r = (int)syscall(__NR_landlock_add_rule, ruleset, 1 /* LANDLOCK_RULE_PATH_BENEATH */, &pb, 0);
	close(fd);
	return r;
}

static int supervisor(void *arg)
{
	/* Rights by ABI: 13 at 1, REFER at 2, TRUNCATE at 3, IOCTL_DEV at 5. */
	uint64_t fs = (1ULL << 13) - 1;
	struct ll_attr at = {};
	size_t size = sizeof(at.handled_access_fs);
	siginfo_t si;
	pid_t pid;

	(void)arg;
	sched_setaffinity(0, sizeof(cpus), &cpus);
	if (abi >= 2)
		fs |= 1ULL << 13;
	if (abi >= 3)
		fs |= 1ULL << 14;
	if (abi >= 5)
		fs |= 1ULL << 15;
	at.handled_access_fs = fs;
	if (abi >= 4) {
		at.handled_access_net = 3; /* bind and connect TCP */
		size = offsetof(struct ll_attr, scoped);
	}
	if (abi >= 6) {
		at.scoped = 3; /* abstract Unix sockets, signals */
		size = sizeof(at);
	}
	ruleset = (int)syscall(__NR_landlock_create_ruleset, &at, size, 0);
	if (ruleset < 0)
		return fail("landlock_create_ruleset");
	if (add_rule(root, fs, fs) < 0)
		return fail(root);
	for (int i = 0; i < n_ro; i++)
		if (add_rule(ro[i], LL_EXECUTE | LL_READ_FILE | LL_READ_DIR, fs) < 0)
			return fail(ro[i]);
	{
		/* The child runs pinned to this CPU, as corral's does; it restores |cpus|. */
		cpu_set_t one;
		unsigned cpu;

		if (syscall(SYS_getcpu, &cpu, NULL, NULL) == 0 && cpu < CPU_SETSIZE) {
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			sched_setaffinity(0, sizeof(one), &one);
		}
	}
	pid = clone(child, c_stack + sizeof(c_stack), CLONE_VM | CLONE_VFORK | SIGCHLD, arg);
	if (pid < 0)
		return fail("clone");
	close(ruleset);
	while (waitid(P_PID, (id_t)pid, &si, WEXITED) < 0)
		if (errno != EINTR)
			return fail("waitid");
	return si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
}

int main(int argc, char **argv)
{
	const struct sc_pre *f = NULL;
	int i, status;
	pid_t pid;

	for (i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
		;
	if (argc < 2 || i + 1 >= argc) {
		fprintf(stderr, "usage: mechanism ROOT [PATH...] -- PROGRAM [ARG...]\n");
		return 125;
	}
	root = argv[1];
	ro = argv + 2;
	n_ro = i - 2;
	cmd = argv + i + 1;
	abi = (int)syscall(__NR_landlock_create_ruleset, NULL, 0, 1 /* VERSION */);
	if (abi < 1)
		return fail("Landlock");
	for (const struct sc_pre *e = sc_pre_table; e->filter; e++)
		if (e->network == 0 && e->unix_allowed == 0 && e->handover == -1 && e->abi <= abi &&
		    (!f || e->abi > f->abi))
			f = e;
	if (!f) {
		fprintf(stderr, "mechanism: no precompiled seccomp filter in this build\n");
		return 125;
	}
	if (sched_getaffinity(0, sizeof(cpus), &cpus) < 0)
		return fail("sched_getaffinity");
	{
		cpu_set_t one;
		unsigned cpu;

		if (syscall(SYS_getcpu, &cpu, NULL, NULL) == 0 && cpu < CPU_SETSIZE) {
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			sched_setaffinity(0, sizeof(one), &one);
		}
	}
	pid = clone(supervisor, s_stack + sizeof(s_stack), CLONE_VM | CLONE_SIGHAND | SIGCHLD, (void *)f);
	if (pid < 0)
		return fail("clone");
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return fail("waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
