/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Live: the always-denied calls, in forked children under the real filter.
 * Argument-dependent rows (clone, ioctl, personality) pair each refusal with
 * the allowed neighbour; every other row of seccomp/deny_table.c is called
 * with harmless arguments (-1: bad fds, bad pointers, bad flags, so that a
 * broken filter would still do nothing) and must fail with the table's errno.
 */
#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <termios.h>

#include "sc-test.h"

static void *thread_fn(void *arg)
{
	return arg;
}

static int check_clone(void)
{
	static const struct { const char *name; unsigned long flag; } ns[] = {
		{ "CLONE_NEWUSER", CLONE_NEWUSER }, { "CLONE_NEWNS", CLONE_NEWNS },
		{ "CLONE_NEWUTS", CLONE_NEWUTS }, { "CLONE_NEWIPC", CLONE_NEWIPC },
		{ "CLONE_NEWPID", CLONE_NEWPID }, { "CLONE_NEWNET", CLONE_NEWNET },
		{ "CLONE_NEWCGROUP", CLONE_NEWCGROUP },
		{ "CLONE_NEWUSER|CLONE_NEWNS", CLONE_NEWUSER | CLONE_NEWNS },
	};
	struct clone_args ca = { .exit_signal = SIGCHLD };
	pthread_t t;
	void *ret;
	int bad = 0, st;
	long r;
	pid_t pid;

	/* Neighbours: a thread (glibc tries clone3, gets ENOSYS, uses clone), a fork. */
	r = pthread_create(&t, NULL, thread_fn, (void *)7);
	if (r != 0) {
		fprintf(stderr, "  pthread_create: %s\n", strerror(r));
		bad = 1;
	} else if (pthread_join(t, &ret) != 0 || ret != (void *)7) {
		fprintf(stderr, "  pthread_join failed\n");
		bad = 1;
	}
	pid = fork();
	if (pid == 0)
		_exit(3);
	if (pid < 0 || (waitpid(pid, &st, 0), !WIFEXITED(st) || WEXITSTATUS(st) != 3)) {
		fprintf(stderr, "  fork (neighbour) failed\n");
		bad = 1;
	}
	pid = syscall(SYS_clone, (unsigned long)SIGCHLD, 0, 0, 0, 0);
	if (pid == 0)
		_exit(4);
	bad |= sc_expect("clone(SIGCHLD)", pid, errno, 0);
	if (pid > 0)
		waitpid(pid, &st, 0);

	for (size_t i = 0; i < ARRAY_SIZE(ns); i++) {
		r = syscall(SYS_clone, ns[i].flag | SIGCHLD, 0, 0, 0, 0);
		if (r == 0)
			_exit(0);
		bad |= sc_expect(ns[i].name, r, errno, EPERM);
	}
	/* High bits above the int the kernel reads do not hide a flag. */
	r = syscall(SYS_clone, (1UL << 40) | CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (r == 0)
		_exit(0);
	bad |= sc_expect("clone(1<<40 | CLONE_NEWUSER)", r, errno, EPERM);

	r = syscall(SYS_clone3, &ca, sizeof(ca));
	if (r == 0)
		_exit(0);
	bad |= sc_expect("clone3", r, errno, ENOSYS);
	return bad;
}

static int check_ioctl(void)
{
	struct termios tio;
	int bad = 0, n;
	char c = 'x';
	long r;
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC), s;

	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0) {
		fprintf(stderr, "  no pty: %m\n");
		return 1;
	}
	s = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s < 0) {
		fprintf(stderr, "  open pts: %m\n");
		return 1;
	}
	r = syscall(SYS_ioctl, s, TCGETS, &tio);
	bad |= sc_expect("ioctl(TCGETS) (neighbour)", r, errno, 0);
	r = syscall(SYS_ioctl, m, FIONREAD, &n);
	bad |= sc_expect("ioctl(FIONREAD) (neighbour)", r, errno, 0);
	r = syscall(SYS_ioctl, s, TIOCSTI, &c);
	bad |= sc_expect("ioctl(TIOCSTI)", r, errno, EPERM);
	r = syscall(SYS_ioctl, s, 0xffffffff00005412UL, &c);
	bad |= sc_expect("ioctl(0xffffffff00005412 = TIOCSTI with high bits)", r, errno, EPERM);
	r = syscall(SYS_ioctl, s, 0x0000000100005412UL, &c);
	bad |= sc_expect("ioctl(0x100005412)", r, errno, EPERM);
	r = syscall(SYS_ioctl, s, TIOCLINUX, &c);
	bad |= sc_expect("ioctl(TIOCLINUX)", r, errno, EPERM);
	r = syscall(SYS_ioctl, s, 0xdeadbeef0000541cUL, &c);
	bad |= sc_expect("ioctl(TIOCLINUX with high bits)", r, errno, EPERM);
	/* Nothing reached the terminal's input. */
	r = syscall(SYS_ioctl, m, FIONREAD, &n);
	if (r == 0 && n != 0) {
		fprintf(stderr, "  %d bytes of injected input on the pty\n", n);
		bad = 1;
	}
	return bad;
}

static int check_personality(void)
{
	static const struct { const char *name; unsigned long v; int expect; } cases[] = {
		{ "personality(0xffffffff) query", 0xffffffffUL, 0 },
		{ "personality(PER_LINUX)", PER_LINUX, 0 },
		{ "personality(ADDR_NO_RANDOMIZE)", ADDR_NO_RANDOMIZE, EPERM },
		{ "personality(READ_IMPLIES_EXEC)", READ_IMPLIES_EXEC, EPERM },
		{ "personality(MMAP_PAGE_ZERO)", MMAP_PAGE_ZERO, EPERM },
		{ "personality(PER_LINUX32)", PER_LINUX32, EPERM },
		{ "personality(0xfffffffe)", 0xfffffffeUL, EPERM },
		{ "personality(0x80000000)", 0x80000000UL, EPERM },
		{ "personality(1<<32)", 1UL << 32, EPERM },
		{ "personality(0x1ffffffff)", 0x1ffffffffUL, EPERM },
	};
	int bad = 0;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		long r = syscall(SYS_personality, cases[i].v);

		bad |= sc_expect(cases[i].name, r, errno, cases[i].expect);
	}
	if (syscall(SYS_personality, 0xffffffffUL) != PER_LINUX) {
		fprintf(stderr, "  personality changed\n");
		bad = 1;
	}
	return bad;
}

static int check_ns_mount(void)
{
	int bad = 0;
	long r;

	r = syscall(SYS_unshare, CLONE_NEWUSER);
	bad |= sc_expect("unshare(CLONE_NEWUSER)", r, errno, EPERM);
	r = syscall(SYS_unshare, 0);
	bad |= sc_expect("unshare(0)", r, errno, EPERM);
	{
		int fd = open("/proc/self/ns/uts", O_RDONLY | O_CLOEXEC);

		r = syscall(SYS_setns, fd, 0);
		bad |= sc_expect("setns(own uts ns)", r, errno, EPERM);
	}
	r = syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, NULL);
	bad |= sc_expect("mount(tmpfs)", r, errno, EPERM);
	r = syscall(SYS_chdir, "/");
	bad |= sc_expect("chdir (neighbour)", r, errno, 0);
	return bad;
}

/*
 * process_vm_readv of our own memory, move_pages of our parent: refused only
 * when Landlock is absent. move_pages of ourselves (pid 0) always works.
 */
static int check_vm_read(int expect)
{
	char src[8] = "corral", dst[8] = { 0 };
	struct iovec l = { dst, sizeof(dst) }, rm = { src, sizeof(src) };
	void *page = src;
	int status = 0, bad;
	long r = syscall(SYS_process_vm_readv, getpid(), &l, 1, &rm, 1, 0);

	bad = sc_expect("process_vm_readv(self)", r, errno, expect);
	r = syscall(SYS_move_pages, 0, 1, &page, NULL, &status, 0);
	bad |= sc_expect("move_pages(0 = self, query)", r, errno, 0);
	if (expect) {
		r = syscall(SYS_move_pages, getppid(), 1, &page, NULL, &status, 0);
		bad |= sc_expect("move_pages(parent, query)", r, errno, expect);
	}
	return bad;
}

/*
 * prlimit64: setting another process's limits is refused (here the
 * parent's, same uid, which the kernel itself would allow: the control run
 * without the filter shows it); reading them, and setting its own through
 * pid 0, work. Its own limits through its own pid are refused too: the
 * filter cannot tell that pid from another.
 */
static int check_prlimit(void)
{
	struct rlimit cur;
	long r = syscall(SYS_prlimit64, 0, RLIMIT_CORE, NULL, &cur);
	int bad = sc_expect("prlimit64(0, read)", r, errno, 0);

	r = syscall(SYS_prlimit64, 0, RLIMIT_CORE, &cur, NULL);
	bad |= sc_expect("prlimit64(0, set)", r, errno, 0);
	r = syscall(SYS_prlimit64, getppid(), RLIMIT_CORE, NULL, &cur);
	bad |= sc_expect("prlimit64(parent, read)", r, errno, 0);
	r = syscall(SYS_prlimit64, getppid(), RLIMIT_CORE, &cur, NULL);
	bad |= sc_expect("prlimit64(parent, set)", r, errno, EPERM);
	r = syscall(SYS_prlimit64, (1L << 32) | getppid(), RLIMIT_CORE, &cur, NULL);
	bad |= sc_expect("prlimit64(parent | high bits, set)", r, errno, EPERM);
	r = syscall(SYS_prlimit64, getpid(), RLIMIT_CORE, &cur, NULL);
	bad |= sc_expect("prlimit64(own pid, set)", r, errno, EPERM);
	return bad;
}

/*
 * Another process's scheduling (the parent's, same uid, which the kernel
 * itself allows: the control run without the filter shows it) is refused;
 * the caller's own, through pid or who 0, works.
 */
static int check_sched(void)
{
	cpu_set_t set;
	struct sched_param sp = { 0 };
	long r;
	int bad = 0, prio = getpriority(PRIO_PROCESS, 0);

	CPU_ZERO(&set);
	r = sched_getaffinity(0, sizeof(set), &set);
	bad |= sc_expect("sched_getaffinity(0)", r, errno, 0);
	r = syscall(SYS_sched_setaffinity, 0, sizeof(set), &set);
	bad |= sc_expect("sched_setaffinity(0)", r, errno, 0);
	r = syscall(SYS_sched_setaffinity, getppid(), sizeof(set), &set);
	bad |= sc_expect("sched_setaffinity(parent)", r, errno, EPERM);
	r = syscall(SYS_sched_setscheduler, 0, SCHED_OTHER, &sp);
	bad |= sc_expect("sched_setscheduler(0, OTHER)", r, errno, 0);
	r = syscall(SYS_sched_setscheduler, getppid(), SCHED_IDLE, &sp);
	bad |= sc_expect("sched_setscheduler(parent, IDLE)", r, errno, EPERM);
	r = syscall(SYS_sched_setparam, getppid(), &sp);
	bad |= sc_expect("sched_setparam(parent)", r, errno, EPERM);
	r = syscall(SYS_setpriority, PRIO_PROCESS, 0, prio);
	bad |= sc_expect("setpriority(PROCESS, 0)", r, errno, 0);
	r = syscall(SYS_setpriority, PRIO_PROCESS, getppid(), 19);
	bad |= sc_expect("setpriority(PROCESS, parent)", r, errno, EPERM);
	r = syscall(SYS_setpriority, PRIO_PROCESS, (1L << 32) | getppid(), 19);
	bad |= sc_expect("setpriority(PROCESS, parent | high bits)", r, errno, EPERM);
	r = syscall(SYS_setpriority, PRIO_USER, 0, 19);
	bad |= sc_expect("setpriority(USER, 0)", r, errno, EPERM);
	r = syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, getppid(), 0);
	bad |= sc_expect("ioprio_set(PROCESS, parent)", r, errno, EPERM);
	r = syscall(SYS_ioprio_set, 3 /* IOPRIO_WHO_USER */, 0, 0);
	bad |= sc_expect("ioprio_set(USER, 0)", r, errno, EPERM);
	return bad;
}

/*
 * A host where seccomp() is refused (here by an outer filter answering
 * ENOSYS, as a container runtime's might): nothing is compiled, every
 * promise is dropped with a reason, and installing the empty program is a
 * no-op. Refusing is the posture's job (compat strict).
 */
static int check_unavailable(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_seccomp, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fp = { .len = ARRAY_SIZE(f), .filter = f };
	struct corral_policy p = { .network = CORRAL_NET_NONE };
	struct corral_posture ps = { 0 };
	struct corral_error err = { 0 };
	struct corral_bpf b = { 0 };
	int r, bad = 0;

	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0) < 0) {
		fprintf(stderr, "  outer filter: %m\n");
		return 1;
	}
	if (corral_seccomp_available()) {
		fprintf(stderr, "  corral_seccomp_available() is true with seccomp() refused\n");
		bad = 1;
	}
	r = corral_seccomp_compile_abi(&p, 1, &ps, &b, &err);
	if (r != 0 || b.len != 0 || b.filter) {
		fprintf(stderr, "  compile: %d, len %u\n", r, b.len);
		bad = 1;
	}
	if (ps.n != 5) {
		fprintf(stderr, "  %zu promises, want 5\n", ps.n);
		bad = 1;
	}
	for (size_t i = 0; i < ps.n; i++)
		if (ps.items[i].state != CORRAL_PROMISE_DROPPED || !strstr(ps.items[i].why, "seccomp")) {
			fprintf(stderr, "  %s: state %d, why \"%s\"\n", ps.items[i].id, ps.items[i].state,
				ps.items[i].why);
			bad = 1;
		}
	r = corral_seccomp_install(&b);
	if (r != 0) {
		fprintf(stderr, "  install of the empty program: %d\n", r);
		bad = 1;
	}
	return bad;
}

/*
 * The ptrace decision end to end: under a real Landlock domain and the
 * filter built for it, a process traces its own child (gdb, strace) but
 * not its parent, outside the domain. Without Landlock the filter refuses
 * ptrace outright.
 */
static int check_ptrace(int abi)
{
	struct landlock_ruleset_attr attr = { .handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_SOCK };
	int bad = 0, st, fd;
	pid_t child;
	long r;

	if (abi > 0) {
		fd = syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
		if (fd < 0 || syscall(SYS_landlock_restrict_self, fd, 0) < 0) {
			fprintf(stderr, "  Landlock: %m\n");
			return 1;
		}
		close(fd);
	}
	sc_child_enter(sc_filter(CORRAL_NET_NONE, abi));

	child = fork();
	if (child == 0) {
		raise(SIGSTOP);
		_exit(5);
	}
	waitpid(child, &st, WUNTRACED);
	r = syscall(SYS_ptrace, PTRACE_SEIZE, child, 0, 0);
	bad |= sc_expect("ptrace(SEIZE) of own child", r, errno, abi > 0 ? 0 : EPERM);
	if (r == 0)
		syscall(SYS_ptrace, PTRACE_DETACH, child, 0, 0);
	kill(child, SIGKILL);
	waitpid(child, &st, 0);

	r = syscall(SYS_ptrace, PTRACE_SEIZE, getppid(), 0, 0);
	bad |= sc_expect("ptrace(SEIZE) of the parent, outside", r, errno, EPERM);
	if (r == 0)
		syscall(SYS_ptrace, PTRACE_DETACH, getppid(), 0, 0);
	return bad;
}

struct row_call {
	const char *name;
	long a[6];
	int nr;
	int expect;
	const char *reason;
};

static int check_row(const struct row_call *c)
{
	long r = syscall(c->nr, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4], c->a[5]);
	int bad = sc_expect(c->name, r, errno, c->expect);

	r = syscall(SYS_getppid);
	return bad | sc_expect("getppid (neighbour)", r, errno, 0);
}

static int run(const char *what, int abi, int (*fn)(const void *), const void *arg)
{
	pid_t pid = fork();
	int st;

	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		sc_child_enter(sc_filter(CORRAL_NET_NONE, abi));
		_exit(fn(arg));
	}
	st = sc_wait(pid);
	sc_report(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", what);
	if (!WIFEXITED(st))
		fprintf(stderr, "  %s: killed by signal %d\n", what, WTERMSIG(st));
	return 0;
}

static int fn_clone(const void *a) { return check_clone(); }
static int fn_ioctl(const void *a) { return check_ioctl(); }
static int fn_personality(const void *a) { return check_personality(); }
static int fn_ns_mount(const void *a) { return check_ns_mount(); }
static int fn_vm_read(const void *a) { return check_vm_read(*(const int *)a); }
static int fn_row(const void *a) { return check_row(a); }
static int fn_unavailable(const void *a) { return check_unavailable(); }
static int fn_prlimit(const void *a) { return check_prlimit(); }
static int fn_sched(const void *a) { return check_sched(); }

static void run_ptrace(int abi)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(90);
		_exit(check_ptrace(abi));
	}
	st = sc_wait(pid);
	sc_report(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s",
		  abi ? "Landlock + filter: ptrace of own child works, of the parent EPERM (Landlock)" :
			"no Landlock: the filter refuses ptrace, even of own child");
}

int main(void)
{
	static const int eperm = EPERM, works = 0;
	char what[256];

	sc_require_seccomp();

	run("clone: thread, fork and clone(SIGCHLD) work; clone with each namespace flag EPERM; clone3 ENOSYS",
	    1, fn_clone, NULL);
	run("ioctl: TCGETS and FIONREAD work; TIOCSTI, TIOCLINUX EPERM (also with high bits)", 1, fn_ioctl, NULL);
	run("personality: query and PER_LINUX work; any other value EPERM", 1, fn_personality, NULL);
	run("unshare, setns, mount EPERM; chdir works", 1, fn_ns_mount, NULL);
	run("with Landlock: process_vm_readv(self) is Landlock's business (works); move_pages(self) works",
	    1, fn_vm_read, &works);
	run("without Landlock: process_vm_readv(self), move_pages(parent) EPERM; move_pages(self) works", 0,
	    fn_vm_read, &eperm);
	{
		/* Control for the prlimit row: without the filter, the parent's limit can be set. */
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			struct rlimit cur;

			_exit(syscall(SYS_prlimit64, getppid(), RLIMIT_CORE, NULL, &cur) < 0 ||
			      syscall(SYS_prlimit64, getppid(), RLIMIT_CORE, &cur, NULL) < 0);
		}
		st = sc_wait(pid);
		sc_report(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			  "control: without the filter, prlimit64 sets the parent's limit");
	}
	run("prlimit64: own limits (pid 0) and reading the parent's work; setting the parent's EPERM", 1,
	    fn_prlimit, NULL);
	{
		/* Control for the scheduling rows: without the filter, the parent's affinity can be set (to itself). */
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			cpu_set_t set;

			_exit(sched_getaffinity(getppid(), sizeof(set), &set) < 0 ||
			      syscall(SYS_sched_setaffinity, getppid(), sizeof(set), &set) < 0);
		}
		st = sc_wait(pid);
		sc_report(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			  "control: without the filter, sched_setaffinity sets the parent's affinity");
	}
	run("scheduling: the caller's own (pid/who 0) works; the parent's, and every process of the uid's, EPERM", 1,
	    fn_sched, NULL);
	if (syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) >= 1)
		run_ptrace(1);
	else
		printf("# Landlock unavailable: ptrace under Landlock not checked\n");
	run_ptrace(0);
	{
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
				_exit(90);
			_exit(fn_unavailable(NULL));
		}
		st = sc_wait(pid);
		sc_report(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			  "seccomp() refused by an outer filter: not available, every promise dropped, empty program");
	}

	{
		/* Newer than the table's review: looks absent (ENOSYS) whatever this kernel has. */
		static const struct row_call newer[] = {
			{ .name = "syscall newest+1", .nr = CORRAL_SC_NEWEST_NR + 1, .a = { -1, -1, -1, -1, -1, -1 },
			  .expect = ENOSYS },
			{ .name = "syscall 0x3fffffff", .nr = 0x3fffffff, .a = { -1, -1, -1, -1, -1, -1 },
			  .expect = ENOSYS },
		};

		for (size_t i = 0; i < ARRAY_SIZE(newer); i++) {
			snprintf(what, sizeof(what), "%s: ENOSYS (newer than the table's review)", newer[i].name);
			run(what, 1, fn_row, &newer[i]);
		}
	}

	/* Every unconditional row of the table, under both Landlock settings. */
	for (int abi = 0; abi <= 1; abi++) {
		for (size_t i = 0; i < corral_sc_rules_len; i++) {
			const struct corral_sc_rule *rule = &corral_sc_rules[i];
			struct row_call c = { .name = rule->syscall, .a = { -1, -1, -1, -1, -1, -1 } };
			bool applies = corral_sc_rule_applies(rule, CORRAL_NET_NONE, abi);

			if (rule->cond != CORRAL_SC_ANY)
				continue; /* argument-dependent rows are checked above and in seccomp-net */
			c.nr = seccomp_syscall_resolve_name(rule->syscall);
			if (c.nr == __NR_SCMP_ERROR && rule->fallback_nr > 0)
				c.nr = rule->fallback_nr;
			if (c.nr < 0) {
				printf("# %s: not a syscall on this architecture\n", rule->syscall);
				continue;
			}
			/* Rows left to Landlock when it is there: see process_vm_readv above. */
			if (!applies || (abi == 0 && !(rule->when & CORRAL_SC_NO_LANDLOCK)))
				continue;
			if (strcmp(rule->syscall, "unshare") == 0)
				c.a[0] = 0; /* a no-op the kernel would allow */
			c.expect = rule->err;
			snprintf(what, sizeof(what), "%s%s: %s (%s)", abi ? "" : "[no Landlock] ",
				 rule->syscall, strerrorname_np(rule->err), rule->reason);
			run(what, abi, fn_row, &c);
		}
	}
	return sc_finish("seccomp-deny");
}
