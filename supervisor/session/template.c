/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The session's template process and the calls it forks.
 *
 * The template is a fork of the supervisor that runs every confinement
 * step of a run once (corral_child_main: process group, cgroups, network
 * namespace, identity and capabilities, no_new_privs, Landlock, seccomp
 * with the Unix-socket mediation) and then, instead of execve, serves
 * requests on a SOCK_SEQPACKET socket. Each request carries its command
 * in the message (a memfd beyond 56 KiB) and its pipes as SCM_RIGHTS. The template forks one "keeper"
 * process K per call, ahead of it; K starts the command C (ahead of the
 * call too: a spare pair, see spare_pair). Three Landlock domains with
 * LANDLOCK_SCOPE_SIGNAL (and abstract Unix sockets scoped) nest:
 *
 *   template T (the session's ruleset)  >  K's domain A  >  C's domain B
 *
 * Landlock lets a process signal or ptrace only processes of its own
 * domain or of domains nested in it. So C's tree (domain B and below)
 * cannot signal, ptrace or read the memory of K, T, the supervisor or any
 * sibling call (each call has its own A and B); `kill -9 -1` in C reaches
 * exactly C's own tree. K, the only process of A, is a child subreaper:
 * C's orphans come to it, and its kill(-1) reaches exactly B and below,
 * however the command left its process group (setsid, double fork). T's
 * kill(-1) reaches every process of the session, and nothing else. K and
 * T are not dumpable.
 *
 * Deadline and cancel: the supervisor writes to (or closes) the call's
 * kill pipe; K kills the tree, reaps it and reports status and usage on
 * the report pipe. The command's stdout/stderr are pipes straight to the
 * supervisor. T dies with the supervisor (PR_SET_PDEATHSIG, SIGTERM read
 * through a signalfd: it first kills every process of the session), K
 * with T, C with K.
 *
 * T, K and C are forks of a possibly multithreaded library caller: T is a
 * glibc fork(), or (proc "private") a raw clone into its own PID
 * namespace, and K and C raw clones of the single-threaded T, with no
 * atfork handlers of the caller's. K and C take memory from mmap, never
 * from malloc, whose locks another thread may have held at the clone. C
 * shares K's memory and fd table until its execve, and K touches neither
 * before then (it sleeps on the CLONE_CHILD_CLEARTID futex).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <linux/close_range.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
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

#include "internal/syscalls.h"
#include "landlock/uapi.h"
#include "supervisor/exec/result.h"
#include "supervisor/exec/stream.h"
#include "supervisor/session/template.h"
#include "supervisor/session/wire.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif

/* The template's receive buffer for inline data (each keeper reads its own copy). */
static char g_inline[T_INLINE_MAX];

struct t_args {
	int ctl, scope_fd, root_fd;
	int took_w; /* to the supervisor: which spare took which call (struct t_took) */
	pid_t parent;
};

/* What C of a spare pair tells its K of the call it took (on a pipe: they share one fd table). */
struct c_taken {
	uint32_t magic;
	int32_t setup_err; /* C's own steps failed (the call is reported as not started) */
	uint64_t seq;
	int fds[6];        /* receive_call's (T_NFDS): memfd or -1, stdin, stdout, stderr, report, kill */
};

/*
 * K's and C's scope layers. From ABI 7 a domain logs its denials to the
 * audit subsystem until the next execve; K's kill(-1) is denied for every
 * process outside its domain by design, and logging each one made a
 * call's tree kill cost ~75 ms. LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF
 * silences what K itself is denied (the command's own denials, after its
 * execve, are still logged as the session's ruleset says).
 */
static int g_ll_flags;

static int ll_restrict(int fd)
{
	return (int)syscall(__NR_landlock_restrict_self, fd, g_ll_flags);
}

/* K's and C's memory: zeroed, from mmap (see the top of this file); NULL when there is none. */
static void *k_alloc(size_t n)
{
	void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static pid_t raw_fork(void)
{
	return (pid_t)syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
}

/*
 * Kill every process this one may signal (its Landlock domain and below),
 * until none is left, and reap them all. Returns how many were reaped
 * besides |main| (whose status lands in *|status|, *|main_done| set).
 */
static unsigned long kill_all_and_reap(pid_t main, int *status, bool *main_done)
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
		(void)kill(-1, SIGKILL);
	for (;;) {
		int st;
		pid_t p = waitpid(-1, &st, __WALL);

		if (p > 0) {
			if (p == main && main_done) {
				*status = st;
				*main_done = true;
			} else {
				n++;
			}
			continue;
		}
		if (p < 0 && errno == EINTR)
			continue;
		break;
	}
	return n;
}

static void write_report(int fd, const struct t_report *r)
{
	ssize_t _unused_ n = write(fd, r, sizeof(*r));
}

/* Close every fd from 3 except |keep| (sorted ascending, each >= 3). */
static void close_except(const int *keep, size_t n)
{
	unsigned lo = 3;

	for (size_t i = 0; i < n; i++) {
		if (keep[i] < 0 || (unsigned)keep[i] < lo)
			continue;
		if ((unsigned)keep[i] > lo)
			syscall(SYS_close_range, lo, (unsigned)keep[i] - 1, 0);
		lo = (unsigned)keep[i] + 1;
	}
	syscall(SYS_close_range, lo, ~0U, 0);
}

static int exec_path(char *const *argv, char *const *envp)
{
	const char *path = NULL, *file = argv[0];
	char buf[4096];
	bool eacces = false;
	int e = ENOENT;

	if (!file || !*file)
		return ENOENT;
	if (strchr(file, '/')) {
		execve(file, argv, envp);
		e = errno;
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
			execve(buf, argv, envp);
			if (errno == EACCES)
				eacces = true;
			else if (errno == ENOEXEC) {
				file = buf;
				e = ENOEXEC;
				goto sh;
			} else if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP &&
				   errno != ENAMETOOLONG)
				return errno;
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
		v = k_alloc((n + 2) * sizeof(*v));
		if (v) {
			v[0] = (char *)"/bin/sh";
			v[1] = (char *)file;
			for (size_t i = 1; i < n; i++)
				v[i + 1] = argv[i];
			execve("/bin/sh", v, envp);
		}
	}
	return e;
}

struct c_args {
	const struct t_args *a;
	const struct t_data_hdr *h;
	const char *cwd;
	char **argv, **envp;
	int err_w;
	int src[3];
	pid_t keeper;
};

/* C's own steps: its session, death with K, its Landlock domain B. 0 or an errno; exits when K is gone. */
static int c_confine(const struct t_args *a, pid_t keeper)
{
	int e = 0;

	if (setsid() < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || ll_restrict(a->scope_fd) < 0)
		e = errno ? errno : EIO;
	if (getppid() != keeper) /* K is gone: PDEATHSIG was set too late */
		_exit(127);
	return e;
}

static _Noreturn void c_exec(const struct c_args *ca);

/* C: the command, in K's memory until execve (CLONE_VM | CLONE_VFORK). */
static int c_main(void *arg)
{
	const struct c_args *ca = arg;
	int e[2] = { 3, c_confine(ca->a, ca->keeper) };

	if (!e[1])
		c_exec(ca);
	{
		ssize_t _unused_ n = write(ca->err_w, e, sizeof(e));
	}
	_exit(127);
}

/* C's call: rlimits, stdio, cwd, then execve; errors on err_w (K reads them). */
static _Noreturn void c_exec(const struct c_args *ca)
{
	int e[2] = { 0, 0 };
	int src[3] = { ca->src[0], ca->src[1], ca->src[2] };
	sigset_t ss;

	sigemptyset(&ss);
	for (int i = 0; i < RLIM_NLIMITS; i++)
		if (ca->h->rl_set[i] && setrlimit(i, &ca->h->rl[i]) < 0) {
			e[1] = errno;
			goto fail;
		}
	for (int i = 0; i < 3; i++)
		if (src[i] <= 2 && src[i] != i) {
			src[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 3);
			if (src[i] < 0) {
				e[1] = errno;
				goto fail;
			}
		}
	for (int i = 0; i < 3; i++)
		if (dup2(src[i], i) < 0) {
			e[1] = errno;
			goto fail;
		}
	if (fchdir(ca->a->root_fd) < 0) {
		e[1] = errno;
		goto fail;
	}
	if (*ca->cwd && strcmp(ca->cwd, ".") != 0 && chdir(ca->cwd) < 0) {
		int ce[2] = { 1, errno };
		ssize_t _unused_ n = write(ca->err_w, ce, sizeof(ce));
	}
	/* Nothing but stdio crosses the execve; a kernel that cannot promise it does not run the command. */
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
		e[1] = errno;
		goto fail;
	}
	sigprocmask(SIG_SETMASK, &ss, NULL);
	e[0] = 2;
	e[1] = exec_path(ca->argv, ca->envp);
fail:
	if (!e[0])
		e[0] = 3;
	{
		ssize_t _unused_ n = write(ca->err_w, e, sizeof(e));
	}
	_exit(127);
}

/* A call's data as K sees it: argv, envp and cwd point into |data|. */
struct k_call {
	char *data; /* g_inline, or k_alloc'd (|size| + 1 bytes) */
	size_t size;
	struct t_data_hdr h;
	char **argv, **envp, *cwd;
};

/* K: read the call's data (inline, or from its memfd) into |k|. 0 or an errno. */
static int keeper_parse(int memfd, size_t inline_len, struct k_call *k)
{
	off_t size;
	char *p, *end;

	if (memfd < 0) {
		/* Inline: the template's buffer, this process's own copy of it. */
		size = (off_t)inline_len;
		k->data = g_inline;
		if (inline_len < sizeof(k->h) || inline_len >= sizeof(g_inline))
			return EINVAL;
	} else {
		struct stat st;

		if (fstat(memfd, &st) < 0 || st.st_size < (off_t)sizeof(k->h) || st.st_size > T_DATA_MAX)
			return EINVAL;
		size = st.st_size;
		k->size = (size_t)size;
		k->data = k_alloc((size_t)size + 1);
		if (!k->data || pread(memfd, k->data, (size_t)size, 0) != size)
			return k->data ? EIO : ENOMEM;
	}
	k->data[size] = 0;
	memcpy(&k->h, k->data, sizeof(k->h));
	if (k->h.magic != T_MAGIC || k->h.argc == 0 || k->h.argc > (1u << 20) || k->h.envc > (1u << 20))
		return EINVAL;
	/* argv and envp in one mapping (K ends with the call: never unmapped). */
	k->argv = k_alloc(((size_t)k->h.argc + 1 + (size_t)k->h.envc + 1) * sizeof(*k->argv));
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

/* K: start C (its stdio fds[1..3], errors on |err_w|). C's pid, or -errno. */
static pid_t keeper_spawn(const struct t_args *a, const int fds[T_NFDS], const struct k_call *k, int err_w)
{
	struct c_args ca = { .a = a, .h = &k->h, .cwd = k->cwd, .argv = k->argv, .envp = k->envp, .err_w = err_w,
			     .src = { fds[1], fds[2], fds[3] }, .keeper = getpid() };
	size_t stack_sz = 64 * 1024;
	char *stack = k_alloc(stack_sz);
	pid_t c;

	if (!stack)
		return -ENOMEM;
	/*
	 * C shares K's memory until its execve (K is suspended meanwhile):
	 * no page tables copied, no copy-on-write faults, which on the
	 * paravirtualised hosts corral is measured on cost more than the
	 * rest of the call's set-up.
	 */
	c = clone(c_main, stack + stack_sz, CLONE_VM | CLONE_VFORK | SIGCHLD, &ca);
	if (c < 0)
		c = -errno;
	munmap(stack, stack_sz);
	return c;
}

/* K: wait for C's end (or the kill pipe), then kill and reap what is left of its tree. */
static void keeper_wait(int sfd, int kill_r, pid_t c, struct t_report *rep)
{
	bool main_done = false, killed = false;

	for (;;) {
		struct pollfd pf[2] = { { .fd = sfd, .events = POLLIN }, { .fd = kill_r, .events = POLLIN } };
		struct signalfd_siginfo si;

		if (poll(pf, killed ? 1 : 2, main_done ? 0 : -1) < 0 && errno != EINTR)
			break;
		if (!killed && pf[1].revents) {
			killed = true;
			/* Killed by the deadline or a cancel: nothing was "left over", all of it was running. */
			(void)kill_all_and_reap(c, &rep->status, &main_done);
			break;
		}
		while (read(sfd, &si, sizeof(si)) > 0)
			;
		for (;;) {
			int status;
			pid_t w = waitpid(-1, &status, WNOHANG | __WALL);

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

			if (waitid(P_ALL, 0, &si2, WEXITED | WNOHANG | WNOWAIT | __WALL) == 0 || errno != ECHILD)
				rep->leftovers += kill_all_and_reap(c, &rep->status, &main_done);
			break;
		}
	}
	rep->main_done = main_done;
}

/* K: C's own errors (cwd, execve, set-up) from |err_r|, and the tree's usage. */
static void keeper_collect(int err_r, struct t_report *rep)
{
	struct rusage ru;
	int e[2];

	while (read(err_r, e, sizeof(e)) == sizeof(e)) {
		if (e[0] == 1)
			rep->chdir_err = e[1];
		else if (e[0] == 2)
			rep->exec_err = e[1];
		else
			rep->start_err = e[1];
	}
	if (getrusage(RUSAGE_CHILDREN, &ru) == 0) {
		rep->cpu_us = (uint64_t)ru.ru_utime.tv_sec * 1000000 + (uint64_t)ru.ru_utime.tv_usec +
			      (uint64_t)ru.ru_stime.tv_sec * 1000000 + (uint64_t)ru.ru_stime.tv_usec;
		rep->maxrss_kb = ru.ru_maxrss;
	}
}

/* K's own steps, before any call: its session, death with T, subreaper, its Landlock domain A. 0 or an errno. */
static int keeper_setup(const struct t_args *a, pid_t template_pid)
{
	if (setsid() < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != template_pid ||
	    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 || ll_restrict(a->scope_fd) < 0)
		return errno ? errno : EIO;
	return 0;
}

/* K: one call (|setup_err|: keeper_setup's). Never returns. */
static _Noreturn void keeper(const struct t_args *a, int fds[T_NFDS], size_t inline_len, int setup_err)
{
	struct t_report rep = { .magic = T_MAGIC };
	struct k_call k = {};
	int ep[2], sfd, e;
	sigset_t ss;
	pid_t c;

	if (setup_err) {
		rep.start_err = setup_err;
		goto out;
	}
	e = keeper_parse(fds[0], inline_len, &k);
	if (e) {
		rep.start_err = e;
		goto out;
	}
	{
		char name[16];

		snprintf(name, sizeof(name), "corral-k%" PRIx64, k.h.seq);
		(void)prctl(PR_SET_NAME, name, 0, 0, 0);
	}
	if (pipe2(ep, O_CLOEXEC) < 0) {
		rep.start_err = errno;
		goto out;
	}
	sigemptyset(&ss);
	sigaddset(&ss, SIGCHLD);
	sfd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		rep.start_err = errno;
		goto out;
	}
	c = keeper_spawn(a, fds, &k, ep[1]);
	if (c < 0) {
		rep.start_err = -c;
		goto out;
	}
	/*
	 * K's copies of the command's stdin, stdout and stderr go now: a
	 * writer must see the reader gone, and the supervisor learns of the
	 * tree's end from the end of both streams at the moment the last of
	 * its processes exits, woken alongside K rather than after it (K's
	 * report follows; its exit, a teardown of its memory with a TLB
	 * shootdown on every CPU C ran on, is off the call's path).
	 */
	for (int i = 0; i < 4; i++)
		fds[i] = safe_close(fds[i]);
	safe_close(ep[1]);
	if (k.data && k.data != g_inline)
		munmap(k.data, k.size + 1);
	keeper_wait(sfd, fds[5], c, &rep);
	keeper_collect(ep[0], &rep);
out:
	fds[2] = safe_close(fds[2]);
	fds[3] = safe_close(fds[3]);
	write_report(fds[4], &rep);
	_exit(0);
}

/*
 * Receive one call from the control socket into |kf| (kf[0] the memfd, or
 * -1 with the data inline in g_inline, |*inline_len| bytes). 1: a call;
 * 0: nothing (EAGAIN, EINTR, or a malformed message, dropped); -1: EOF or
 * a broken socket.
 */
static int receive_call(int ctl, int flags, int kf[T_NFDS], size_t *inline_len)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * T_NFDS)];
		struct cmsghdr align;
	} u;
	uint32_t magic = 0;
	struct iovec iov[2] = { { .iov_base = &magic, .iov_len = sizeof(magic) },
				{ .iov_base = g_inline, .iov_len = sizeof(g_inline) - 1 } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	int fds[T_NFDS], nfds = 0;
	ssize_t n = recvmsg(ctl, &msg, MSG_CMSG_CLOEXEC | flags);

	*inline_len = n > (ssize_t)sizeof(magic) ? (size_t)n - sizeof(magic) : 0;
	if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
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
					close(fd);
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
		close(fds[i]);
	return 0;
}

/*
 * T's own service, when it has no spare (it could not fork one):
 * one call, for a keeper forked now, or answered with the fork's error.
 * Returns false on EOF (or a broken socket).
 */
static bool serve_one(const struct t_args *a)
{
	int kf[T_NFDS];
	size_t inline_len;
	int r = receive_call(a->ctl, MSG_DONTWAIT, kf, &inline_len);
	pid_t self = getpid(), k;

	if (r <= 0)
		return r == 0;
	k = raw_fork();
	if (k == 0) {
		close(a->ctl);
		close(a->took_w);
		keeper(a, kf, inline_len, keeper_setup(a, self));
	}
	if (k < 0) {
		struct t_report rep = { .magic = T_MAGIC, .start_err = errno };

		write_report(kf[4], &rep);
	}
	for (int i = 0; i < T_NFDS; i++)
		if (kf[i] >= 0)
			close(kf[i]);
	return true;
}

/* What C of a spare pair needs: it runs on its own stack in K's memory (CLONE_VM) until its execve. */
struct pair_args {
	const struct t_args *a;
	int taken_w, info_w, err_w;
	uint64_t spare;
	pid_t keeper;
};

/*
 * C of a spare pair: a call off the control socket, then the command. It
 * shares K's memory and fd table until its execve, and K waits for that
 * execve (or C's end) before it touches either, so C alone uses them (and
 * the errno they share) until then.
 */
static int pair_c(void *arg)
{
	const struct pair_args *p = arg;
	const struct t_args *a = p->a;
	int setup = c_confine(a, p->keeper), r, pe;
	struct c_taken m = { .magic = T_MAGIC };
	struct k_call k = {};
	size_t inline_len;

	while ((r = receive_call(a->ctl, 0, m.fds, &inline_len)) == 0)
		;
	if (r < 0)
		_exit(0); /* the session ends */
	{
		/* T forks the next spare pair meanwhile. */
		ssize_t _unused_ n = write(p->taken_w, &p->keeper, sizeof(p->keeper));
	}
	pe = keeper_parse(m.fds[0], inline_len, &k);
	m.setup_err = setup ? setup : pe;
	m.seq = pe ? 0 : k.h.seq;
	if (!pe) {
		/* Before the execve, so before the command's first mediated syscall (corral_template_call_of). */
		struct t_took tk = { .spare = p->spare, .seq = k.h.seq };
		ssize_t _unused_ n = write(a->took_w, &tk, sizeof(tk));
	}
	{
		/* The fds are K's too (one table until the execve): K needs their numbers only. */
		ssize_t _unused_ n = write(p->info_w, &m, sizeof(m));
	}
	if (m.setup_err)
		_exit(127);
	/*
	 * Neither C nor K needs these any more: out of the shared table now,
	 * not only at the execve, so no later slip could hand the command the
	 * control socket that carries every later call's pipes.
	 */
	close(a->ctl);
	close(p->taken_w);
	close(a->took_w);
	close(a->scope_fd);
	{
		struct c_args ca = { .a = a, .h = &k.h, .cwd = k.cwd, .argv = k.argv, .envp = k.envp, .err_w = p->err_w,
				     .src = { m.fds[1], m.fds[2], m.fds[3] }, .keeper = p->keeper };

		c_exec(&ca);
	}
}

/* K of a spare pair, once C has exec'd or ended: the call's fds from C, then as a keeper. */
static _Noreturn void pair_k(int info_r, const int ep[2], int sfd, pid_t c)
{
	struct t_report rep = { .magic = T_MAGIC };
	struct c_taken m = {};

	if (read(info_r, &m, sizeof(m)) != (ssize_t)sizeof(m) || m.magic != T_MAGIC) {
		/* C ended without a call (the session ends): nothing to report, nobody to report to. */
		kill(c, SIGKILL);
		while (waitpid(c, NULL, __WALL) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	{
		char name[16];

		snprintf(name, sizeof(name), "corral-k%" PRIx64, m.seq);
		(void)prctl(PR_SET_NAME, name, 0, 0, 0);
	}
	/*
	 * C's execve gave it a table of its own: K's copies of the command's
	 * stdin, stdout and stderr go now, both the received fds and the 0, 1
	 * and 2 that C's dup2 made in the table they shared (a writer must see
	 * the reader gone, and the supervisor learns of the tree's end from
	 * the end of both streams when its last process exits, woken alongside
	 * K), and the error pipe's write end, so that its end means C's.
	 */
	for (int i = 0; i < 4; i++)
		if (m.fds[i] > 2)
			close(m.fds[i]);
	syscall(SYS_close_range, 0U, 2U, 0U);
	close(ep[1]);
	if (m.setup_err) {
		rep.start_err = m.setup_err;
		while (waitpid(c, NULL, __WALL) < 0 && errno == EINTR)
			;
	} else {
		keeper_wait(sfd, m.fds[5], c, &rep);
		keeper_collect(ep[0], &rep);
	}
	write_report(m.fds[4], &rep);
	_exit(0);
}

/*
 * A spare pair: K (this process, its steps done) starts C ahead of the
 * call, and C does its own steps (c_confine) ahead of it too. C takes the
 * next call off the control socket, tells T (which forks the next pair
 * meanwhile) and execs the command. So a call's path has no fork, no
 * setsid and no Landlock domain to make, and no hand-over to wait for.
 *
 * C shares K's memory and fd table until its execve (CLONE_VM |
 * CLONE_FILES): no page tables copied, and the call's pipes it receives
 * are K's too, with no sendmsg between them (the session's seccomp filter
 * hands sendmsg to the Unix-socket mediation). The kernel clears
 * |c_alive| and wakes its futex when C's execve (or end) leaves that
 * memory (CLONE_CHILD_CLEARTID): K sleeps on it until then, as a vfork
 * parent would, and touches neither memory nor table before. Returns only
 * when C cannot be started (K then takes the call itself).
 */
static void spare_pair(const struct t_args *a, int taken_w, uint64_t spare)
{
	int ep[2] = { -1, -1 }, ip[2] = { -1, -1 }, sfd = -1;
	size_t stack_sz = 64 * 1024;
	char *stack = k_alloc(stack_sz);
	volatile int c_alive = 1;
	struct pair_args p = { .a = a, .taken_w = taken_w, .spare = spare, .keeper = getpid() };
	pid_t c = -1;
	sigset_t ss;

	sigemptyset(&ss);
	sigaddset(&ss, SIGCHLD);
	if (stack && pipe2(ep, O_CLOEXEC) == 0 && pipe2(ip, O_CLOEXEC | O_NONBLOCK) == 0 &&
	    (sfd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK)) >= 0) {
		p.info_w = ip[1];
		p.err_w = ep[1];
		c = clone(pair_c, stack + stack_sz, CLONE_VM | CLONE_FILES | CLONE_CHILD_CLEARTID | SIGCHLD, &p, NULL,
			  NULL, &c_alive);
	}
	if (c < 0) {
		for (int i = 0; i < 2; i++) {
			safe_close(ep[i]);
			safe_close(ip[i]);
		}
		safe_close(sfd);
		if (stack)
			munmap(stack, stack_sz);
		return;
	}
	/* No errno read here: C may be using it. FUTEX_WAIT fails only once c_alive is 0 (or on a signal, blocked). */
	while (c_alive)
		syscall(SYS_futex, &c_alive, FUTEX_WAIT, 1, NULL, NULL, 0);
	pair_k(ip[0], ep, sfd, c);
}

/*
 * A spare: forked ahead of the next call, its own steps done
 * (keeper_setup), named "corral-s" and |spare| in hex. It becomes a spare
 * pair (spare_pair); where it cannot, it takes the next call off the
 * control socket itself, tells T (its pid on |taken_w|: T forks the next
 * spare meanwhile) and runs it as a keeper. A call's critical path then
 * has no fork of T and no hand-over through T. The spare's pid, or -1.
 */
static pid_t spawn_spare(const struct t_args *a, int taken_w, uint64_t spare)
{
	pid_t self = getpid(), k = raw_fork();

	if (k == 0) {
		int kf[T_NFDS], e = keeper_setup(a, self), r;
		size_t inline_len;
		pid_t me = getpid();
		char name[16];

		snprintf(name, sizeof(name), "corral-s%" PRIx64, spare);
		(void)prctl(PR_SET_NAME, name, 0, 0, 0);
		if (!e)
			spare_pair(a, taken_w, spare);
		close(a->took_w);
		while ((r = receive_call(a->ctl, 0, kf, &inline_len)) == 0)
			;
		if (r < 0)
			_exit(0); /* the session ends */
		{
			ssize_t _unused_ n = write(taken_w, &me, sizeof(me));
		}
		close(taken_w);
		close(a->ctl);
		keeper(a, kf, inline_len, e);
	}
	return k;
}

static int template_main(const struct corral_child *c, void *arg)
{
	const struct t_args *a = arg;
	int keep[4] = { a->root_fd, a->scope_fd, a->ctl, a->took_w }, sfd, taken[2];
	uint64_t spares = 0;
	pid_t spare;
	sigset_t ss;

	/* Sorted for close_except. */
	for (int i = 0; i < 4; i++)
		for (int j = i + 1; j < 4; j++)
			if (keep[j] < keep[i]) {
				int x = keep[i];
				keep[i] = keep[j];
				keep[j] = x;
			}
	close_except(keep, 4);
	sigfillset(&ss);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) < 0 || getppid() != a->parent)
		goto die;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		goto die;
	g_ll_flags = corral_landlock_abi() >= 7 ? 1 /* LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF */ : 0;
	sigemptyset(&ss);
	sigaddset(&ss, SIGCHLD);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGHUP);
	sigaddset(&ss, SIGINT);
	sfd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0 || pipe2(taken, O_CLOEXEC | O_NONBLOCK) < 0 || send(a->ctl, "R", 1, MSG_NOSIGNAL) != 1)
		goto die;
	spare = spawn_spare(a, taken[1], ++spares);
	for (;;) {
		/* With a spare the calls are its: T only watches for the session's end (POLLHUP). */
		struct pollfd pf[3] = { { .fd = a->ctl, .events = spare > 0 ? 0 : POLLIN }, { .fd = sfd, .events = POLLIN },
					{ .fd = taken[0], .events = POLLIN } };
		struct signalfd_siginfo si;
		bool stop = false;
		pid_t w;

		if (poll(pf, 3, -1) < 0 && errno != EINTR)
			break;
		while (read(sfd, &si, sizeof(si)) == sizeof(si))
			if (si.ssi_signo != SIGCHLD)
				stop = true;
		/* K processes, and orphans whose K died: reaped here, nothing reported. */
		while ((w = waitpid(-1, NULL, WNOHANG | __WALL)) > 0)
			if (w == spare)
				spare = -1;
		while (read(taken[0], &w, sizeof(w)) == sizeof(w))
			if (w == spare)
				spare = -1;
		if (stop || (spare > 0 && (pf[0].revents & (POLLHUP | POLLERR))))
			break;
		if (spare < 0)
			spare = spawn_spare(a, taken[1], ++spares);
		/* No spare (the processes limit is reached): T forks a keeper per call, or answers the error. */
		if (spare < 0 && (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) && !serve_one(a))
			break;
	}
die:
	kill_all_and_reap(0, NULL, NULL);
	(void)c;
	return 0;
}

static void *un_main(void *arg)
{
	struct corral_template *t = arg;

	for (;;) {
		struct pollfd pf[1 + CORRAL_UNOTIFY_MAX_POLLFDS] = { { .fd = t->un_stop, .events = POLLIN } };
		int n = corral_unotify_pollfds(t->un, pf + 1);

		if (poll(pf, (nfds_t)n + 1, -1) < 0 && errno != EINTR)
			break;
		if (pf[0].revents)
			break;
		corral_unotify_handle(t->un, pf + 1, n);
	}
	return NULL;
}

static int scope_ruleset(void)
{
	struct corral_ll_ruleset_attr attr = {
		.scoped = CORRAL_LL_SCOPE_SIGNAL | CORRAL_LL_SCOPE_ABSTRACT_UNIX_SOCKET,
	};

	return (int)syscall(__NR_landlock_create_ruleset, &attr, CORRAL_LL_ATTR_SIZE_V6, 0);
}

/*
 * The template says "R" once confined; a failed step reports (stage,
 * errno) on the error pipe |err_r| and exits. The template closes its end
 * of that pipe before it says "R", so a hang-up alone is not a failure.
 */
static int wait_ready(struct corral_template *t, int err_r, struct corral_error *err)
{
	struct corral_child_report rep = {};
	struct pollfd pf[2] = { { .fd = t->ctl, .events = POLLIN }, { .fd = err_r, .events = POLLIN } };
	ssize_t n = 0;
	bool ready = false;
	char byte;

	for (int round = 0; round < 2 && !ready; round++) {
		if (poll(pf, round ? 1 : 2, 10000) <= 0)
			break;
		if (pf[0].revents & POLLIN)
			ready = recv(t->ctl, &byte, 1, MSG_DONTWAIT) == 1;
		else if (pf[1].revents) {
			n = read(err_r, &rep, sizeof(rep));
			if (n != 0)
				break;
		}
	}
	if (!ready)
		return corral_err(err, CORRAL_E_SETUP, n == sizeof(rep) ? rep.err : EIO,
				  "session: the template process failed at %s: %s",
				  n == sizeof(rep) ? corral_child_stage_name(rep.stage) : "start",
				  n == sizeof(rep) ? corral_strerror(rep.err) : "no report");
	return 0;
}

/* The session's private tmp with its HOME, Landlock ruleset, cgroups and mediation socket. */
static int session_objects(struct corral_template *t, struct corral_sandbox *sb, struct corral_error *err)
{
	int sv[2], r;

	r = corral_tmp_create(sb, &t->run, err);
	if (r < 0)
		return r;
	if (mkdirat(t->run.tmp_fd, "home", 0700) < 0 || mkdirat(t->run.tmp_fd, ".corral", 0700) < 0 ||
	    (sb->switch_identity && (fchownat(t->run.tmp_fd, "home", sb->uid, sb->gid, AT_SYMLINK_NOFOLLOW) < 0 ||
				     fchownat(t->run.tmp_fd, ".corral", sb->uid, sb->gid, AT_SYMLINK_NOFOLLOW) < 0)))
		return corral_err(err, CORRAL_E_SETUP, errno, "session: private HOME in %s: %s", t->run.tmp_path,
				  corral_strerror(errno));
	if (asprintf(&t->home, "%s/home", t->run.tmp_path) < 0) {
		t->home = NULL;
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	}
	t->run.ruleset_fd = corral_ll_ruleset(sb->ll, t->run.tmp_fd, NULL, 0, err);
	if (t->run.ruleset_fd < 0)
		return t->run.ruleset_fd;
	if (sb->use_cgroups) {
		/* The spare pair's C, a process waiting for the next call, is not counted against limits.processes. */
		t->run.extra_procs = 1;
		r = corral_cgroup_create(sb, &t->run, err);
		if (r < 0)
			return r;
	}
	if (sb->unotify) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
			return corral_err(err, CORRAL_E_SETUP, errno, "session: socketpair: %s", corral_strerror(errno));
		t->run.un_parent = sv[0];
		t->run.un_child = sv[1];
	}
	return 0;
}

#define T_STACK_SIZE (256 * 1024)

/*
 * Start the template: a glibc fork(), or with proc "private" a clone into
 * new PID and mount namespaces (and a user namespace, unprivileged) where
 * corral_pidns_init_main mounts the namespace's /proc and becomes the
 * template itself, pid 1 (a raw clone: K and C use no malloc). 0 or -errno.
 */
static int spawn_template(struct corral_template *t, struct corral_child *c)
{
	sigset_t all, old;
	void *stack = MAP_FAILED;
	int e = 0;

	if (t->pidns) {
		stack = mmap(NULL, T_STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (stack == MAP_FAILED)
			return -errno;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (t->pidns) {
		t->pid = clone(corral_pidns_init_main, (char *)stack + T_STACK_SIZE,
			       corral_procns_clone_flags(&t->sb->procns) | SIGCHLD, c);
	} else {
		t->pid = fork();
		if (t->pid == 0)
			corral_child_main(c);
	}
	e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (stack != MAP_FAILED)
		munmap(stack, T_STACK_SIZE); /* the template runs on its own copy */
	return t->pid < 0 ? -e : 0;
}

int corral_template_start(struct corral_template *t, struct corral_sandbox *sb, struct corral_error *err)
{
	_cleanup_close_ int scope = -1, devw = -1, took_w = -1;
	int sv[2] = { -1, -1 }, ep[2] = { -1, -1 }, tk[2] = { -1, -1 }, r, abi;
	struct t_args a;
	struct corral_child c;

	void (*route)(void *arg, pid_t pid, struct corral_denials *d) = t->route;
	void *route_arg = t->route_arg;

	memset(t, 0, sizeof(*t));
	t->route = route;
	t->route_arg = route_arg;
	t->sb = sb;
	t->pid = -1;
	t->pidfd = t->ctl = t->devnull = t->un_stop = t->took_r = -1;
	pthread_mutex_init(&t->took_lock, NULL);
	t->run.ruleset_fd = t->run.tmp_fd = t->run.un_parent = t->run.un_child = t->run.cwd_fd = -1;
	for (int i = 0; i < CORRAL_CG_MAX; i++)
		t->run.cg_fd[i] = -1;

	if (sb->docker)
		return corral_err(err, CORRAL_E_NOT_IMPLEMENTED, EOPNOTSUPP,
				  "session: the docker provider has no sessions yet; use --provider local");
	abi = corral_ll_plan_abi(sb->ll);
	if (abi < 6)
		return corral_err(err, CORRAL_E_UNSUPPORTED, EOPNOTSUPP,
				  "session: needs Landlock ABI 6 (scoped signals and ptrace) to keep calls apart "
				  "from each other and from the session; this kernel has ABI %d (use corral run per "
				  "command instead)", abi);
	r = session_objects(t, sb, err);
	if (r < 0)
		goto fail;
	scope = scope_ruleset();
	if (scope < 0) {
		r = corral_err(err, CORRAL_E_SETUP, errno, "session: landlock scope ruleset: %s", corral_strerror(errno));
		goto fail;
	}
	corral_sandbox_rlimits(sb, &t->rl, -1);
	/* RLIMIT_NPROC where no pids cgroup bounds the session: the spare pair's C is not counted either. */
	if (t->rl.set[RLIMIT_NPROC] && t->rl.rl[RLIMIT_NPROC].rlim_cur != RLIM_INFINITY) {
		t->rl.rl[RLIMIT_NPROC].rlim_cur++;
		if (t->rl.rl[RLIMIT_NPROC].rlim_max != RLIM_INFINITY)
			t->rl.rl[RLIMIT_NPROC].rlim_max++;
	}
	t->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	devw = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (t->devnull < 0 || devw < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
	    pipe2(ep, O_CLOEXEC) < 0 || pipe2(tk, O_CLOEXEC | O_NONBLOCK) < 0) {
		r = corral_err(err, CORRAL_E_SETUP, errno, "session: %s", corral_strerror(errno));
		goto fail;
	}
	t->ctl = sv[0];
	t->took_r = tk[0];
	took_w = tk[1];
	t->pidns = sb->procns.mode != CORRAL_PROCNS_OFF;
	/* In its own PID namespace the template is pid 1: its parent is outside (getppid() says 0). */
	a = (struct t_args){ .ctl = sv[1], .scope_fd = scope, .root_fd = sb->root_fd, .took_w = took_w,
			     .parent = t->pidns ? 0 : getpid() };
	c = (struct corral_child){
		.sb = sb, .run = &t->run, .fd_in = devw, .fd_out = devw, .fd_err = devw, .err_w = ep[1],
		.reset_mask = true, .parent = getpid(), .after_confine = template_main, .after_arg = &a,
		.after_fds = { sv[1], scope, took_w },
	};
	r = spawn_template(t, &c);
	safe_close(sv[1]);
	ep[1] = safe_close(ep[1]);
	if (r < 0) {
		r = corral_err(err, CORRAL_E_SETUP, -r, "session: %s: %s%s",
			       t->pidns ? "creating the PID namespace (proc \"private\")" : "fork", corral_strerror(-r),
			       t->pidns ? "; --proc host runs the session without" : "");
		goto fail;
	}
	t->pidfd = (int)syscall(__NR_pidfd_open, t->pid, 0);
	r = wait_ready(t, ep[0], err);
	if (r < 0)
		goto fail;
	corral_template_pool_fill(t);
	safe_close(ep[0]);
	ep[0] = -1;
	if (sb->unotify) {
		t->un = corral_unotify_start(sb, &t->run, t->run.un_parent);
		if (t->route)
			corral_unotify_route(t->un, t->route, t->route_arg);
		t->un_stop = eventfd(0, EFD_CLOEXEC);
		if (t->un && t->un_stop >= 0 && pthread_create(&t->un_thread, NULL, un_main, t) == 0)
			t->un_running = true;
	}
	return 0;
fail:
	safe_close(ep[0]);
	safe_close(ep[1]);
	corral_template_stop(t);
	return r;
}

void corral_template_stop(struct corral_template *t)
{
	if (t->pid > 0) {
		/* EOF on the socket: the template kills every process of the session, then exits. */
		t->ctl = safe_close(t->ctl);
		if (t->pidfd >= 0) {
			struct pollfd pf = { .fd = t->pidfd, .events = POLLIN };

			if (poll(&pf, 1, 2000) == 0)
				syscall(__NR_pidfd_send_signal, t->pidfd, SIGKILL, NULL, 0);
		}
		while (waitpid(t->pid, NULL, __WALL) < 0 && errno == EINTR)
			;
		t->pid = -1;
	}
	if (t->run.cg_fd[0] >= 0 || t->run.cg_dir[0] || t->run.cg_dir[1] || t->run.cg_dir[2])
		corral_cgroup_kill_and_remove(&t->run);
	if (t->un_running) {
		uint64_t one = 1;
		ssize_t _unused_ n = write(t->un_stop, &one, sizeof(one));

		pthread_join(t->un_thread, NULL);
		t->un_running = false;
	}
	corral_unotify_free(t->un);
	t->un = NULL;
	t->un_stop = safe_close(t->un_stop);
	t->ctl = safe_close(t->ctl);
	t->pidfd = safe_close(t->pidfd);
	t->devnull = safe_close(t->devnull);
	pthread_mutex_lock(&t->took_lock); /* the egress proxy may still ask corral_template_call_of */
	t->took_r = safe_close(t->took_r);
	while (t->n_pool)
		for (int i = 0, *p = t->pool[--t->n_pool]; i < 8; i++)
			close(p[i]);
	free(t->took);
	t->took = NULL;
	t->n_took = t->took_alloc = 0;
	pthread_mutex_unlock(&t->took_lock);
	t->run.ruleset_fd = safe_close(t->run.ruleset_fd);
	t->run.un_parent = safe_close(t->run.un_parent);
	t->run.un_child = safe_close(t->run.un_child);
	corral_cgroup_remove(&t->run);
	if (t->run.tmp_path)
		corral_tmp_remove(t->sb, &t->run);
	free(t->home);
	t->home = NULL;
}

/* From /proc/|pid|/stat: its parent's pid; 0 when it cannot be read. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	_cleanup_close_ int fd = -1;
	ssize_t n;
	int ppid = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return 0;
	buf[n] = 0;
	/* "pid (comm) state ppid ...": the comm may hold anything but the last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return 0;
	return ppid;
}

/* What the spares' C wrote to the took pipe, into t->took (under took_lock). An entry that finds no memory is lost. */
static void took_drain(struct corral_template *t)
{
	struct t_took b[64];
	ssize_t n;

	while (t->took_r >= 0 && (n = read(t->took_r, b, sizeof(b))) > 0)
		for (size_t i = 0; i < (size_t)n / sizeof(*b); i++) {
			if (t->n_took == t->took_alloc) {
				size_t na = t->took_alloc ? t->took_alloc * 2 : 16;
				struct corral_took *v = realloc(t->took, na * sizeof(*v));

				if (!v)
					continue;
				t->took = v;
				t->took_alloc = na;
			}
			t->took[t->n_took++] = (struct corral_took){ .spare = b[i].spare, .seq = b[i].seq };
		}
}

/* The call spare |spare| took; 0 when none is known. */
static unsigned long took_lookup(struct corral_template *t, uint64_t spare)
{
	unsigned long seq = 0;

	pthread_mutex_lock(&t->took_lock);
	took_drain(t);
	for (size_t i = t->n_took; i-- > 0;)
		if (t->took[i].spare == spare) {
			seq = (unsigned long)t->took[i].seq;
			break;
		}
	pthread_mutex_unlock(&t->took_lock);
	return seq;
}

/* Call |seq| ended: its entry goes (it was written before its command started, so it is read by now). */
void corral_template_took_forget(struct corral_template *t, unsigned long seq)
{
	size_t j = 0;

	pthread_mutex_lock(&t->took_lock);
	took_drain(t);
	for (size_t i = 0; i < t->n_took; i++)
		if (t->took[i].seq != seq)
			t->took[j++] = t->took[i];
	t->n_took = j;
	pthread_mutex_unlock(&t->took_lock);
}

unsigned long corral_template_call_of(struct corral_template *t, pid_t pid)
{
	/* Up the tree to the keeper, the child of the template (orphans go to the keeper: a subreaper). */
	for (int depth = 0; pid > 1 && depth < 256; depth++) {
		pid_t ppid = parent_of(pid);

		if (ppid == t->pid) {
			char path[64], name[32] = "";
			_cleanup_close_ int fd = -1;
			unsigned long seq = 0;
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			n = fd < 0 ? -1 : read(fd, name, sizeof(name) - 1);
			if (n > 0 && sscanf(name, "corral-k%lx", &seq) == 1)
				return seq;
			/* A spare pair's K, not renamed yet: its C said which call it took before its execve. */
			if (n > 0 && sscanf(name, "corral-s%lx", &seq) == 1)
				return took_lookup(t, seq);
			return 0;
		}
		pid = ppid;
	}
	return 0;
}
