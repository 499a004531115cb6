/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A session's keepers K and the commands C they start (the template T,
 * which starts each K, is template.c; the security design is there).
 *
 * K runs in T's memory (CLONE_VM), on a stack of an arena T keeps for it
 * (struct k_arena), and C in that same memory until its execve. A fork
 * would copy T's page tables, take a copy-on-write fault for each page T
 * and K then write, and tear the copy down at K's end; on the
 * paravirtualised hosts corral is measured on, where a page fault traps
 * to the hypervisor, that was a third of a call's cost. Sharing T's memory
 * while T runs binds K and C to three rules:
 *
 *   - no malloc (its locks and lists are T's, and T's caller's, whose
 *     other threads may have held them at T's fork): memory is k_alloc's;
 *   - no errno: it is T's thread-local storage, written here between a
 *     failed call of T's and T's read of it. Every system call here is a
 *     raw one (internal/rawsys.h) returning -errno; the libc functions
 *     left are pure (memcpy, strnlen, snprintf) but clone(), whose errno
 *     is read at once in a path that only reports;
 *   - nothing of T's that T writes (T's globals, its receive buffer): K
 *     reads the call into its arena, and T's t_args only.
 *
 * Where the raw instruction is not written here (RAWSYS_INLINE 0), K is a
 * fork of T, and these rules hold trivially.
 *
 * C shares K's fd table too (a spare pair) and K does not run until C has
 * exec'd or ended (it sleeps on C's CLONE_CHILD_CLEARTID futex, or is a
 * CLONE_VFORK parent), so C alone uses the stack-free parts of the arena
 * until then.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <linux/close_range.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal/rawsys.h"
#include "internal/util.h"
#include "supervisor/session/keeper.h"

#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

#define K_PAGE 4096
#define K_STACK (64 * 1024)
#define K_HEAD (((sizeof(struct k_arena) + K_PAGE - 1) / K_PAGE) * K_PAGE)
/* Head, guard page, K's stack, guard page, C's stack. */
#define K_MAP (K_HEAD + K_PAGE + K_STACK + K_PAGE + K_STACK)
#define K_POOL 4 /* arenas T keeps for reuse */

/*
 * A K that has served a call waits for the next one (when no other spare
 * does) instead of ending: no clone of T, no K set-up and no exit per
 * call. Only where K shares T's memory: the count below is T's and every
 * K's at once.
 */
#define K_REUSE RAWSYS_INLINE

static int g_ll_flags;
/* Spares waiting for a call (arenas with |idle| set), and the last spare number given: T's and every K's. */
static _Atomic int g_idle;
static _Atomic uint64_t g_spare_no;
/* T's pool (only T touches it). */
static struct k_arena *g_free;
static unsigned g_n_free;

void corral_keeper_init(int ll_flags)
{
	g_ll_flags = ll_flags;
}

static bool k_failed(long r)
{
	return (unsigned long)r > -4096UL;
}

static void *k_mmap(size_t n)
{
	long r = rawsys6(SYS_mmap, 0, (long)n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return k_failed(r) ? NULL : (void *)r;
}

static long k_close(int fd)
{
	return fd >= 0 ? rawsys1(SYS_close, fd) : 0;
}

static ssize_t k_read(int fd, void *b, size_t n)
{
	return rawsys3(SYS_read, fd, b, n);
}

static ssize_t k_write(int fd, const void *b, size_t n)
{
	return rawsys3(SYS_write, fd, b, n);
}

static _Noreturn void k_exit(int code)
{
	for (;;)
		rawsys1(SYS_exit_group, code);
}

static pid_t k_wait(pid_t pid, int *status, int options)
{
	return (pid_t)rawsys4(SYS_wait4, pid, status, options, 0);
}

/* k_wait, adding the reaped process's usage (its own and its reaped descendants') to |rep|. */
static pid_t k_wait_usage(pid_t pid, int *status, int options, struct t_report *rep)
{
	struct rusage ru;
	pid_t p = (pid_t)rawsys4(SYS_wait4, pid, status, options, rep ? &ru : NULL);

	if (p > 0 && rep) {
		rep->cpu_us += (uint64_t)ru.ru_utime.tv_sec * 1000000 + (uint64_t)ru.ru_utime.tv_usec +
			       (uint64_t)ru.ru_stime.tv_sec * 1000000 + (uint64_t)ru.ru_stime.tv_usec;
		if (ru.ru_maxrss > rep->maxrss_kb)
			rep->maxrss_kb = ru.ru_maxrss;
	}
	return p;
}

/* poll(2) with no timeout or a zero one (ppoll: every architecture has it). */
static int k_poll(struct pollfd *pf, nfds_t n, bool block)
{
	struct timespec zero = { 0, 0 };

	return (int)rawsys5(SYS_ppoll, pf, n, block ? NULL : &zero, 0, 8);
}

static long k_prctl(int op, unsigned long arg)
{
	return rawsys5(SYS_prctl, op, arg, 0, 0, 0);
}

static int k_restrict(int fd)
{
	return (int)rawsys2(__NR_landlock_restrict_self, fd, g_ll_flags);
}

static long k_close_range(unsigned lo, unsigned hi, unsigned flags)
{
	return rawsys3(SYS_close_range, lo, hi, flags);
}

static void k_name(const char *prefix, uint64_t n)
{
	char name[16];

	snprintf(name, sizeof(name), "%s%" PRIx64, prefix, n);
	(void)k_prctl(PR_SET_NAME, (unsigned long)name);
}

/* Zeroed memory from |ar| (a scratch bump, or an mmap T unmaps); NULL when there is none. */
static void *k_alloc(struct k_arena *ar, size_t n)
{
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (n && n <= sizeof(ar->scratch) - ar->used) {
		p = ar->scratch + ar->used;
		ar->used += n;
		memset(p, 0, n);
		return p;
	}
	for (int i = 0; i < K_EXTRA; i++)
		if (!ar->extra[i]) {
			p = k_mmap(n ? n : 1);
			if (p) {
				ar->extra[i] = p;
				ar->extra_len[i] = n ? n : 1;
			}
			return p;
		}
	return NULL;
}

struct k_arena *corral_arena_get(void)
{
	struct k_arena *ar = g_free;

	if (ar) {
		g_free = ar->next;
		g_n_free--;
	} else {
		char *m = mmap(NULL, K_MAP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (m == MAP_FAILED)
			return NULL;
		if (mprotect(m + K_HEAD, K_PAGE, PROT_NONE) < 0 ||
		    mprotect(m + K_HEAD + K_PAGE + K_STACK, K_PAGE, PROT_NONE) < 0) {
			munmap(m, K_MAP);
			return NULL;
		}
		ar = (struct k_arena *)m;
	}
	ar->next = NULL;
	ar->pid = -1;
	atomic_store(&ar->idle, 0);
	ar->spare = 0;
	ar->used = 0;
	for (int i = 0; i < T_NFDS; i++)
		ar->kf[i] = -1;
	return ar;
}

void corral_arena_put(struct k_arena *ar, bool reuse)
{
	for (int i = 0; i < K_EXTRA; i++)
		if (ar->extra[i]) {
			munmap(ar->extra[i], ar->extra_len[i]);
			ar->extra[i] = NULL;
		}
	if (!reuse || g_n_free >= K_POOL) {
		munmap(ar, K_MAP);
		return;
	}
	ar->next = g_free;
	g_free = ar;
	g_n_free++;
}

static char *k_stack_top(struct k_arena *ar)
{
	return (char *)ar + K_HEAD + K_PAGE + K_STACK;
}

static char *c_stack_top(struct k_arena *ar)
{
	return (char *)ar + K_MAP;
}

/* corral_kill_all_and_reap, the usage of what it reaps added to |rep| (when not NULL). */
static unsigned long kill_all_and_reap(pid_t main, int *status, bool *main_done, struct t_report *rep)
{
	unsigned long n = 0;

	/*
	 * One pass is enough: kill(-1) walks the task list under its lock, and
	 * a fork racing it either lands in the list first or fails (its parent
	 * has SIGKILL pending). kill(-1) says 0 also when every process it met
	 * was out of reach (EPERM), so its return value cannot drive a loop;
	 * the second pass is belt and braces.
	 */
	for (int i = 0; i < 2; i++)
		(void)rawsys2(SYS_kill, -1, SIGKILL);
	for (;;) {
		int st;
		pid_t p = k_wait_usage(-1, &st, __WALL, rep);

		if (p > 0) {
			if (p == main && main_done) {
				*status = st;
				*main_done = true;
			} else {
				n++;
			}
			continue;
		}
		if (p == -EINTR)
			continue;
		break;
	}
	return n;
}

unsigned long corral_kill_all_and_reap(pid_t main, int *status, bool *main_done)
{
	return kill_all_and_reap(main, status, main_done, NULL);
}

int corral_keeper_idle(void)
{
	return atomic_load(&g_idle);
}

uint64_t corral_keeper_spare_no(void)
{
	return atomic_fetch_add(&g_spare_no, 1) + 1;
}

/* One idle spare fewer (never below 0). How many are left. */
static int idle_dec(void)
{
	int v = atomic_load(&g_idle);

	while (v > 0 && !atomic_compare_exchange_weak(&g_idle, &v, v - 1))
		;
	return v > 0 ? v - 1 : 0;
}

void corral_keeper_gone(struct k_arena *ar)
{
	if (atomic_exchange(&ar->idle, 0))
		idle_dec();
}

/*
 * |ar|'s spare (K's pid |keeper|) took a call: when it was the last one
 * waiting, T hears of it (it then watches for calls no spare is there to
 * take). Where K is a fork of T the count here is K's copy: T's own is
 * kept by what T hears (corral_keeper_gone).
 */
static void idle_take(struct k_arena *ar, pid_t keeper)
{
	if (!atomic_exchange(&ar->idle, 0))
		return;
	if (K_REUSE) {
		idle_dec();
	} else {
		/* Each spare's own copy of the count: T keeps the real one, from this (keeper_took). */
		ssize_t _unused_ n = k_write(ar->taken_w, &keeper, sizeof(keeper));
	}
}

/*
 * K took a call: with no spare left and another call already queued
 * (sent with this one, so maybe before the supervisor's hint could count
 * it), T hears of it and starts one. A call that comes later is sent
 * while this one is in flight, and the supervisor's hint (call.c) tells T.
 */
static void tell_if_queued(struct k_arena *ar, pid_t keeper)
{
	struct pollfd pf = { .fd = ar->a->ctl, .events = POLLIN };

	if (K_REUSE && !atomic_load(&g_idle) && k_poll(&pf, 1, false) > 0 && (pf.revents & POLLIN)) {
		ssize_t _unused_ n = k_write(ar->taken_w, &keeper, sizeof(keeper));
	}
}

/*
 * After its call, K waits for the next one when no other spare does
 * (true), else ends (false). Its flag is set before the count: were K
 * killed in between, T's corral_keeper_gone would take one off a count
 * that never had it, and the worst of that is one spare too many.
 */
static bool idle_again(struct k_arena *ar)
{
	int zero = 0;

	atomic_store(&ar->idle, 1);
	if (atomic_compare_exchange_strong(&g_idle, &zero, 1))
		return true;
	atomic_store(&ar->idle, 0);
	return false;
}

/*
 * No child of K's is left, so no process of the last call's (each has an
 * ancestor among them: K is their subreaper). Where keeper_wait could not
 * make sure of that (a failed poll), K ends instead of waiting again.
 */
static bool nothing_left(void)
{
	siginfo_t si = {};

	return rawsys5(SYS_waitid, P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT | __WALL, 0) == -ECHILD;
}

/* Between two calls of a K: its scratch and its extra mappings back. */
static void k_reset(struct k_arena *ar)
{
	ar->used = 0;
	for (int i = 0; i < K_EXTRA; i++)
		if (ar->extra[i]) {
			rawsys2(SYS_munmap, ar->extra[i], ar->extra_len[i]);
			ar->extra[i] = NULL;
		}
}

void corral_keeper_report_error(int fd, int err)
{
	struct t_report r = { .magic = T_MAGIC, .start_err = err };
	ssize_t _unused_ n = k_write(fd, &r, sizeof(r));
}

static void write_report(int fd, const struct t_report *r)
{
	ssize_t _unused_ n = k_write(fd, r, sizeof(*r));
}

/* C: execve |argv| as execvp would, PATH from |envp|. Returns the errno to report. */
static int exec_path(struct k_arena *ar, char *const *argv, char *const *envp)
{
	const char *path = NULL, *file = argv[0];
	char buf[4096];
	bool eacces = false;
	int e = ENOENT;

	if (!file || !*file)
		return ENOENT;
	if (strchr(file, '/')) {
		e = (int)-rawsys3(SYS_execve, file, argv, envp);
		goto sh;
	}
	for (char *const *v = envp; *v; v++)
		if (strncmp(*v, "PATH=", 5) == 0)
			path = *v + 5;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;;) {
		const char *end = strchrnul(p, ':');
		int n = snprintf(buf, sizeof(buf), "%.*s/%s", (int)(end - p), end == p ? "." : p, file);

		if (end == p)
			n = snprintf(buf, sizeof(buf), "./%s", file);
		if (n > 0 && (size_t)n < sizeof(buf)) {
			int x = (int)-rawsys3(SYS_execve, buf, argv, envp);

			if (x == EACCES)
				eacces = true;
			else if (x == ENOEXEC) {
				file = buf;
				e = ENOEXEC;
				goto sh;
			} else if (x != ENOENT && x != ENOTDIR && x != ELOOP && x != ENAMETOOLONG)
				return x;
		}
		if (!*end)
			break;
		p = end + 1;
	}
	return eacces ? EACCES : ENOENT;
sh:
	if (e == ENOEXEC) {
		/* A text file without #!: /bin/sh runs it, as execvp and shells do. */
		size_t n = 0;
		char **v;

		while (argv[n])
			n++;
		v = k_alloc(ar, (n + 2) * sizeof(*v));
		if (v) {
			v[0] = (char *)"/bin/sh";
			v[1] = (char *)file;
			for (size_t i = 1; i < n; i++)
				v[i + 1] = argv[i];
			rawsys3(SYS_execve, "/bin/sh", v, envp);
		}
	}
	return e;
}

/* A call's data as K sees it: argv, envp and cwd point into |data|. */
struct k_call {
	char *data; /* the arena's inline buffer, or k_alloc'd (|size| + 1 bytes) */
	size_t size;
	struct t_data_hdr h;
	char **argv, **envp, *cwd;
};

struct c_args {
	struct k_arena *ar;
	const struct k_call *k;
	int err_w;
	int src[3];
	pid_t keeper;
};

/* C's own steps: its session, death with K, its Landlock domain B. 0 or an errno; exits when K is gone. */
static int c_confine(const struct t_args *a, pid_t keeper)
{
	long r = rawsys0(SYS_setsid);

	if (r >= 0)
		r = k_prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (r >= 0)
		r = k_restrict(a->scope_fd);
	if (rawsys0(SYS_getppid) != keeper) /* K is gone: PDEATHSIG was set too late */
		k_exit(127);
	return r < 0 ? (int)-r : 0;
}

static _Noreturn void c_fail(int err_w, int stage, int err)
{
	int e[2] = { stage, err };
	ssize_t _unused_ n = k_write(err_w, e, sizeof(e));

	k_exit(127);
}

/* C's call: rlimits, stdio, cwd, then execve; errors on err_w (K reads them). */
static _Noreturn void c_exec(const struct c_args *ca)
{
	const struct t_data_hdr *h = &ca->k->h;
	int src[3] = { ca->src[0], ca->src[1], ca->src[2] };
	uint64_t empty = 0;
	long r;

	for (int i = 0; i < RLIM_NLIMITS; i++)
		if (h->rl_set[i] && (r = rawsys4(SYS_prlimit64, 0, i, &h->rl[i], 0)) < 0)
			c_fail(ca->err_w, 3, (int)-r);
	for (int i = 0; i < 3; i++)
		if (src[i] <= 2 && src[i] != i) {
			r = rawsys3(SYS_fcntl, src[i], F_DUPFD_CLOEXEC, 3);
			if (r < 0)
				c_fail(ca->err_w, 3, (int)-r);
			src[i] = (int)r;
		}
	for (int i = 0; i < 3; i++) {
		/* dup3 leaves the new fd without FD_CLOEXEC; one already in place has it cleared. */
		r = src[i] == i ? rawsys3(SYS_fcntl, i, F_SETFD, 0) : rawsys3(SYS_dup3, src[i], i, 0);
		if (r < 0)
			c_fail(ca->err_w, 3, (int)-r);
	}
	r = rawsys1(SYS_fchdir, ca->ar->a->root_fd);
	if (r < 0)
		c_fail(ca->err_w, 3, (int)-r);
	if (*ca->k->cwd && strcmp(ca->k->cwd, ".") != 0 && (r = rawsys1(SYS_chdir, ca->k->cwd)) < 0) {
		int ce[2] = { 1, (int)-r };
		ssize_t _unused_ n = k_write(ca->err_w, ce, sizeof(ce));
	}
	/* Nothing but stdio crosses the execve; a kernel that cannot promise it does not run the command. */
	r = k_close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	if (r < 0)
		c_fail(ca->err_w, 3, (int)-r);
	rawsys4(SYS_rt_sigprocmask, SIG_SETMASK, &empty, 0, 8);
	c_fail(ca->err_w, 2, exec_path(ca->ar, ca->k->argv, ca->k->envp));
}

/* C: the command, in K's memory until execve (CLONE_VM | CLONE_VFORK). */
static int c_main(void *arg)
{
	const struct c_args *ca = arg;
	int e = c_confine(ca->ar->a, ca->keeper);

	if (e)
		c_fail(ca->err_w, 3, e);
	c_exec(ca);
}

/* K: read the call's data (inline in the arena, or from its memfd) into |k|. 0 or an errno. */
static int keeper_parse(struct k_arena *ar, int memfd, size_t inline_len, struct k_call *k)
{
	size_t size;
	char *p, *end;

	if (memfd < 0) {
		size = inline_len;
		k->data = ar->inline_buf;
		if (inline_len < sizeof(k->h) || inline_len >= sizeof(ar->inline_buf))
			return EINVAL;
	} else {
		struct stat st;

		if (rawsys2(SYS_fstat, memfd, &st) < 0 || st.st_size < (off_t)sizeof(k->h) || st.st_size > T_DATA_MAX)
			return EINVAL;
		size = (size_t)st.st_size;
		k->size = size;
		k->data = k_alloc(ar, size + 1);
		if (!k->data)
			return ENOMEM;
		if (rawsys4(SYS_pread64, memfd, k->data, size, 0) != (long)size)
			return EIO;
	}
	k->data[size] = 0;
	memcpy(&k->h, k->data, sizeof(k->h));
	if (k->h.magic != T_MAGIC || k->h.argc == 0 || k->h.argc > (1u << 20) || k->h.envc > (1u << 20))
		return EINVAL;
	/* argv and envp in one allocation. */
	k->argv = k_alloc(ar, ((size_t)k->h.argc + 1 + (size_t)k->h.envc + 1) * sizeof(*k->argv));
	if (!k->argv)
		return ENOMEM;
	k->envp = k->argv + k->h.argc + 1;
	p = k->data + sizeof(k->h);
	end = k->data + size;
	k->cwd = p;
	p += strnlen(p, (size_t)(end - p)) + 1;
	for (uint32_t i = 0; i < k->h.argc + k->h.envc; i++) {
		if (p >= end)
			return EINVAL;
		if (i < k->h.argc)
			k->argv[i] = p;
		else
			k->envp[i - k->h.argc] = p;
		p += strnlen(p, (size_t)(end - p)) + 1;
	}
	return 0;
}

/*
 * ECANCELED when the call's kill pipe has a byte or has hung up before its
 * command starts: the supervisor has answered it already (its deadline or
 * a cancel came while it waited for a keeper, every one busy), and a
 * command reported as not run must not run later. 0 otherwise.
 */
static int answered(int kill_r)
{
	struct pollfd pf = { .fd = kill_r, .events = POLLIN };

	return k_poll(&pf, 1, false) > 0 && pf.revents ? ECANCELED : 0;
}

/* A signalfd for SIGCHLD (blocked since T's start). The fd, or -errno. */
static int k_sigchld_fd(void)
{
	uint64_t mask = 1ULL << (SIGCHLD - 1);

	return (int)rawsys4(SYS_signalfd4, -1, &mask, 8, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* K: start C (its stdio fds[1..3], errors on |err_w|). C's pid, or -errno. */
static pid_t keeper_spawn(struct k_arena *ar, const int fds[T_NFDS], const struct k_call *k, int err_w)
{
	struct c_args ca = { .ar = ar, .k = k, .err_w = err_w, .src = { fds[1], fds[2], fds[3] },
			     .keeper = (pid_t)rawsys0(SYS_getpid) };
	pid_t c;

	/* C shares K's memory until its execve (K is suspended meanwhile), on the arena's C stack. */
	c = clone(c_main, c_stack_top(ar), CLONE_VM | CLONE_VFORK | SIGCHLD, &ca);
	return c < 0 ? -errno : c;
}

/* K: wait for C's end (or the kill pipe), then kill and reap what is left of its tree. */
static void keeper_wait(int sfd, int kill_r, pid_t c, struct t_report *rep)
{
	bool main_done = false, killed = false;

	for (;;) {
		struct pollfd pf[2] = { { .fd = sfd, .events = POLLIN }, { .fd = kill_r, .events = POLLIN } };
		struct signalfd_siginfo si;
		int r = k_poll(pf, killed ? 1 : 2, !main_done);

		if (r < 0 && r != -EINTR)
			break;
		if (!killed && pf[1].revents) {
			killed = true;
			/* Killed by the deadline or a cancel: nothing was "left over", all of it was running. */
			(void)kill_all_and_reap(c, &rep->status, &main_done, rep);
			break;
		}
		while (k_read(sfd, &si, sizeof(si)) > 0)
			;
		for (;;) {
			int status;
			pid_t w = k_wait_usage(-1, &status, WNOHANG | __WALL, rep);

			if (w <= 0)
				break;
			if (w == c) {
				rep->status = status;
				main_done = true;
			} else if (main_done) {
				rep->leftovers++;
			}
		}
		if (main_done) {
			/*
			 * The main process ended: what is left of its tree is killed
			 * and counted. Every process left has an ancestor among K's
			 * children (K is the subreaper its orphans go to), so with no
			 * child left there is nothing to kill, and the kill(-1) walk
			 * of every task on the host is skipped.
			 */
			siginfo_t si2 = {};

			if (rawsys5(SYS_waitid, P_ALL, 0, &si2, WEXITED | WNOHANG | WNOWAIT | __WALL, 0) != -ECHILD)
				rep->leftovers += kill_all_and_reap(c, &rep->status, &main_done, rep);
			break;
		}
	}
	rep->main_done = main_done;
}

/* K: C's own errors (cwd, execve, set-up) from |err_r| (the tree's usage was added as it was reaped). */
static void keeper_collect(int err_r, struct t_report *rep)
{
	int e[2];

	while (k_read(err_r, e, sizeof(e)) == sizeof(e)) {
		if (e[0] == 1)
			rep->chdir_err = e[1];
		else if (e[0] == 2)
			rep->exec_err = e[1];
		else
			rep->start_err = e[1];
	}
}

/* K's own steps, before any call: its session, death with T, subreaper, its Landlock domain A. 0 or an errno. */
static int keeper_setup(const struct t_args *a, pid_t template_pid)
{
	long r = rawsys0(SYS_setsid);

	if (r >= 0)
		r = k_prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (r >= 0 && rawsys0(SYS_getppid) != template_pid)
		r = -ESRCH;
	if (r >= 0)
		r = k_prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (r >= 0)
		r = k_restrict(a->scope_fd);
	return r < 0 ? (int)-r : 0;
}

/* K: one call in |fds| (|setup_err|: keeper_setup's). Never returns. */
static _Noreturn void keeper(struct k_arena *ar, int fds[T_NFDS], size_t inline_len, int setup_err)
{
	struct t_report rep = { .magic = T_MAGIC };
	struct k_call k = {};
	int ep[2] = { -1, -1 }, sfd = -1, e;
	long r;
	pid_t c;

	if (setup_err) {
		rep.start_err = setup_err;
		goto out;
	}
	e = keeper_parse(ar, fds[0], inline_len, &k);
	if (!e)
		e = answered(fds[5]);
	if (e) {
		rep.start_err = e;
		goto out;
	}
	k_name("corral-k", k.h.seq);
	r = rawsys2(SYS_pipe2, ep, O_CLOEXEC);
	if (r >= 0)
		r = sfd = k_sigchld_fd();
	if (r < 0) {
		rep.start_err = (int)-r;
		goto out;
	}
	c = keeper_spawn(ar, fds, &k, ep[1]);
	if (c < 0) {
		rep.start_err = -c;
		goto out;
	}
	/*
	 * K's copies of the command's stdin, stdout and stderr go now: a
	 * writer must see the reader gone, and the supervisor learns of the
	 * tree's end from the end of both streams at the moment the last of
	 * its processes exits, woken alongside K rather than after it.
	 */
	for (int i = 0; i < 4; i++) {
		k_close(fds[i]);
		fds[i] = -1;
	}
	k_close(ep[1]);
	keeper_wait(sfd, fds[5], c, &rep);
	keeper_collect(ep[0], &rep);
out:
	k_close(fds[2]);
	k_close(fds[3]);
	write_report(fds[4], &rep);
	k_exit(0);
}

/* What C of a spare pair tells its K of the call it took (on a pipe: they share one fd table). */
struct c_taken {
	uint32_t magic;
	int32_t setup_err; /* C's own steps failed (the call is reported as not started) */
	uint64_t seq;
	int fds[T_NFDS];   /* receive_call's: memfd or -1, stdin, stdout, stderr, report, kill */
};

int corral_keeper_receive(int ctl, int flags, int kf[T_NFDS], char *buf, size_t *inline_len)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * T_NFDS)];
		struct cmsghdr align;
	} u;
	uint32_t magic = 0;
	struct iovec iov[2] = { { .iov_base = &magic, .iov_len = sizeof(magic) },
				{ .iov_base = buf, .iov_len = T_INLINE_MAX - 1 } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	int fds[T_NFDS], nfds = 0;
	long n = rawsys3(SYS_recvmsg, ctl, &msg, MSG_CMSG_CLOEXEC | flags);

	*inline_len = n > (long)sizeof(magic) ? (size_t)n - sizeof(magic) : 0;
	if (n == 0 || (n < 0 && n != -EINTR && n != -EAGAIN))
		return -1;
	if (n < 0)
		return 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));

			for (int i = 0; i < k; i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
				if (nfds < T_NFDS)
					fds[nfds++] = fd;
				else
					k_close(fd);
			}
		}
	/* Five fds: the data came inline; six: the first is its memfd. */
	if ((nfds == T_NFDS || (nfds == T_NFDS - 1 && *inline_len)) && magic == T_MAGIC &&
	    !(msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC))) {
		kf[0] = -1;
		memcpy(kf + (T_NFDS - nfds), fds, sizeof(int) * (size_t)nfds);
		return 1;
	}
	for (int i = 0; i < nfds; i++)
		k_close(fds[i]);
	return 0;
}

/* What C of a spare pair needs: it runs on the arena's C stack in K's memory (CLONE_VM) until its execve. */
struct pair_args {
	struct k_arena *ar;
	int info_w, err_w;
	int null_fd; /* K's /dev/null, its 0, 1 and 2 between calls (K_REUSE), or -1 */
	pid_t keeper;
};

/*
 * C of a spare pair: a call off the control socket, then the command. It
 * shares K's memory and fd table until its execve, and K waits for that
 * execve (or C's end) before it touches either.
 */
static int pair_c(void *arg)
{
	const struct pair_args *p = arg;
	struct k_arena *ar = p->ar;
	const struct t_args *a = ar->a;
	int setup = c_confine(a, p->keeper), r, pe;
	struct c_taken m = { .magic = T_MAGIC };
	struct k_call k = {};
	size_t inline_len;

	while ((r = corral_keeper_receive(a->ctl, 0, m.fds, ar->inline_buf, &inline_len)) == 0)
		;
	if (r < 0)
		k_exit(0); /* the session ends */
	idle_take(ar, p->keeper);
	pe = keeper_parse(ar, m.fds[0], inline_len, &k);
	m.setup_err = setup ? setup : pe ? pe : answered(m.fds[5]);
	m.seq = pe ? 0 : k.h.seq;
	if (!pe) {
		/* Before the execve, so before the command's first mediated syscall (corral_template_call_of). */
		struct t_took tk = { .spare = ar->spare, .seq = k.h.seq };
		ssize_t _unused_ n = k_write(a->took_w, &tk, sizeof(tk));
	}
	{
		/* The fds are K's too (one table until the execve): K needs their numbers only. */
		ssize_t _unused_ n = k_write(p->info_w, &m, sizeof(m));
	}
	if (m.setup_err)
		k_exit(127);
	/*
	 * Where K ends with the call, C needs none of these and K none any
	 * more: out of the shared table now. A K that serves the next call
	 * keeps them (the table is its own too): the close_range
	 * CLOSE_RANGE_CLOEXEC before the execve, whose failure refuses the
	 * command, keeps them from it.
	 */
	if (!K_REUSE || p->null_fd < 0) {
		k_close(a->ctl);
		k_close(ar->taken_w);
		k_close(a->took_w);
		k_close(a->scope_fd);
	}
	{
		struct c_args ca = { .ar = ar, .k = &k, .err_w = p->err_w,
				     .src = { m.fds[1], m.fds[2], m.fds[3] }, .keeper = p->keeper };

		c_exec(&ca);
	}
}

/*
 * K of a spare pair, once C has exec'd or ended: the call's fds from C,
 * then as a keeper. 1: the call was served (reported); -1: C ended
 * without one (the session ends).
 */
static int pair_k(struct k_arena *ar, int info_r, int ep[2], int sfd, int null_fd, pid_t c)
{
	struct t_report rep = { .magic = T_MAGIC };
	struct c_taken m = {};

	if (k_read(info_r, &m, sizeof(m)) != (ssize_t)sizeof(m) || m.magic != T_MAGIC) {
		/* C ended without a call (the session ends): nothing to report, nobody to report to. */
		rawsys2(SYS_kill, c, SIGKILL);
		while (k_wait(c, NULL, __WALL) == -EINTR)
			;
		return -1;
	}
	k_name("corral-k", m.seq);
	tell_if_queued(ar, (pid_t)rawsys0(SYS_getpid));
	/*
	 * C's execve gave it a table of its own: K's copies of the command's
	 * stdin, stdout and stderr go now, both the received fds and the 0, 1
	 * and 2 that C's dup3 made in the table they shared (a writer must see
	 * the reader gone, and the supervisor learns of the tree's end from
	 * the end of both streams when its last process exits, woken alongside
	 * K), and the error pipe's write end, so that its end means C's.
	 */
	for (int i = 0; i < 4; i++)
		if (m.fds[i] > 2)
			k_close(m.fds[i]);
	/* Closed, or /dev/null for a K that serves on: a call's fds never land on 0-2 under C's dup3. */
	for (int i = 0; i < 3; i++)
		if (null_fd < 0 || rawsys3(SYS_dup3, null_fd, i, 0) < 0)
			k_close(i);
	k_close(ep[1]);
	ep[1] = -1;
	if (m.setup_err) {
		rep.start_err = m.setup_err;
		while (k_wait(c, NULL, __WALL) == -EINTR)
			;
	} else {
		keeper_wait(sfd, m.fds[5], c, &rep);
		keeper_collect(ep[0], &rep);
	}
	write_report(m.fds[4], &rep);
	k_close(m.fds[4]);
	k_close(m.fds[5]);
	return 1;
}

/*
 * A spare pair: K (this process, its steps done) starts C ahead of the
 * call, and C does its own steps (c_confine) ahead of it too. C takes the
 * next call off the control socket (telling T where it must start another
 * spare: idle_take, tell_if_queued) and execs the command. So a call's
 * path has no fork, no setsid and no Landlock domain to make, and no
 * hand-over to wait for.
 *
 * C shares K's memory and fd table until its execve (CLONE_VM |
 * CLONE_FILES): the call's pipes it receives are K's too, with no sendmsg
 * between them (the session's seccomp filter hands sendmsg to the
 * Unix-socket mediation). The kernel clears |c_alive| and wakes its futex
 * when C's execve (or end) leaves that memory (CLONE_CHILD_CLEARTID): K
 * sleeps on it until then, as a vfork parent would, and touches neither
 * memory nor table before. Returns pair_k's 1 or -1, or 0 when C cannot
 * be started (K then takes the call itself).
 */
static int spare_pair(struct k_arena *ar, int null_fd)
{
	int ep[2] = { -1, -1 }, ip[2] = { -1, -1 }, sfd = -1, r = 0;
	volatile int c_alive = 1;
	struct pair_args p = { .ar = ar, .null_fd = null_fd, .keeper = (pid_t)rawsys0(SYS_getpid) };
	pid_t c = -1;

	if (rawsys2(SYS_pipe2, ep, O_CLOEXEC) == 0 && rawsys2(SYS_pipe2, ip, O_CLOEXEC | O_NONBLOCK) == 0 &&
	    (sfd = k_sigchld_fd()) >= 0) {
		p.info_w = ip[1];
		p.err_w = ep[1];
		c = clone(pair_c, c_stack_top(ar), CLONE_VM | CLONE_FILES | CLONE_CHILD_CLEARTID | SIGCHLD, &p, NULL,
			  NULL, &c_alive);
	}
	if (c >= 0) {
		/* FUTEX_WAIT fails only once c_alive is 0 (or on a signal, blocked). */
		while (c_alive)
			rawsys6(SYS_futex, (long)&c_alive, FUTEX_WAIT, 1, 0, 0, 0);
		r = pair_k(ar, ip[0], ep, sfd, null_fd, c);
	}
	for (int i = 0; i < 2; i++) {
		k_close(ep[i]);
		k_close(ip[i]);
	}
	k_close(sfd);
	return r;
}

/*
 * K's start, on its arena's stack. A spare ("corral-s<n>", its own steps
 * done) becomes a spare pair (spare_pair), and after each call a new one
 * with a new number, for as long as it is the only spare left
 * (idle_again). Where it cannot start a pair, it takes the next call off
 * the control socket itself (telling T as a pair's C would) and runs it
 * as a keeper. Otherwise (T had no spare) K runs the call T received for
 * it.
 */
static int keeper_main(void *arg)
{
	struct k_arena *ar = arg;
	const struct t_args *a = ar->a;
	int e = keeper_setup(a, ar->template_pid), r;
	pid_t me = (pid_t)rawsys0(SYS_getpid);

	if (!ar->spare) {
		k_close(a->ctl);
		k_close(a->took_w);
		keeper(ar, ar->kf, ar->inline_len, e);
	}
	if (!e) {
		/* T's stdio is /dev/null: K's copy of it keeps 0-2 taken between calls. */
		int null_fd = K_REUSE ? (int)rawsys3(SYS_fcntl, 0, F_DUPFD_CLOEXEC, 3) : -1;

		for (;;) {
			k_name("corral-s", ar->spare);
			r = spare_pair(ar, null_fd < 0 ? -1 : null_fd);
			if (r < 0)
				k_exit(0); /* the session ends */
			if (r == 0)
				break;
			if (null_fd < 0 || !nothing_left() || !idle_again(ar))
				k_exit(0);
			k_reset(ar);
			ar->spare = corral_keeper_spare_no();
		}
		k_close(null_fd);
	}
	k_name("corral-s", ar->spare);
	k_close(a->took_w);
	while ((r = corral_keeper_receive(a->ctl, 0, ar->kf, ar->inline_buf, &ar->inline_len)) == 0)
		;
	if (r < 0)
		k_exit(0); /* the session ends */
	idle_take(ar, me);
	tell_if_queued(ar, me);
	k_close(ar->taken_w);
	k_close(a->ctl);
	keeper(ar, ar->kf, ar->inline_len, e);
}

pid_t corral_keeper_start(struct k_arena *ar)
{
	/* In T's memory where every system call of K's and C's leaves errno alone (see the top of this file). */
	int flags = (RAWSYS_INLINE ? CLONE_VM : 0) | SIGCHLD, e;
	pid_t k;

	if (ar->spare) {
		atomic_store(&ar->idle, 1);
		atomic_fetch_add(&g_idle, 1);
	}
	k = clone(keeper_main, k_stack_top(ar), flags, ar);
	e = errno;
	ar->pid = k;
	if (k < 0) {
		corral_keeper_gone(ar);
		return -e;
	}
	return k;
}
