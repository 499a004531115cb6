/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The session's template process T (its keepers and commands: keeper.c).
 *
 * The template is a fork of the supervisor that runs every confinement
 * step of a run once (corral_child_main: process group, cgroups, network
 * namespace, identity and capabilities, no_new_privs, Landlock, seccomp
 * with the Unix-socket mediation) and then, instead of execve, serves
 * requests on a SOCK_SEQPACKET socket. Each request carries its command
 * in the message (a memfd beyond 56 KiB) and its pipes as SCM_RIGHTS. A
 * "keeper" process K serves one call at a time and starts its command C
 * ahead of it (a spare pair: keeper.c); T starts keepers as the calls
 * need them and a keeper serves call after call while it is the only
 * spare. Three Landlock domains with LANDLOCK_SCOPE_SIGNAL (and abstract
 * Unix sockets scoped) nest:
 *
 *   template T (the session's ruleset)  >  K's domain A  >  C's domain B
 *
 * Landlock lets a process signal or ptrace only processes of its own
 * domain or of domains nested in it. So C's tree (domain B and below)
 * cannot signal, ptrace or read the memory of K, T, the supervisor or any
 * sibling call (each call has its own B, each running call its own A); `kill -9 -1` in C reaches
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
 * namespace, and K and C raw clones of the single-threaded T in its
 * memory, with no atfork handlers of the caller's (keeper.c says what
 * they may and may not do there).
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
#include "supervisor/session/keeper.h"
#include "supervisor/session/template.h"
#include "supervisor/session/wire.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif

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

/* T's keepers that run, each with its arena (T takes it back when it reaps the keeper). */
static struct k_arena *g_busy;

/* Start a keeper on |ar| (or give |ar| back). Its pid, or -errno. */
static pid_t start_keeper(const struct t_args *a, struct k_arena *ar)
{
	pid_t k;

	ar->a = a;
	ar->template_pid = getpid();
	k = corral_keeper_start(ar);
	if (k < 0) {
		corral_arena_put(ar, true);
		return k;
	}
	ar->next = g_busy;
	g_busy = ar;
	return k;
}

/* |pid| was reaped (|status|): its arena, if it was a keeper, back to the pool. True for a keeper. */
static bool keeper_reaped(pid_t pid, int status)
{
	for (struct k_arena **p = &g_busy; *p; p = &(*p)->next)
		if ((*p)->pid == pid) {
			struct k_arena *ar = *p;

			*p = ar->next;
			corral_keeper_gone(ar);
			corral_arena_put(ar, !WIFSIGNALED(status));
			return true;
		}
	return false;
}

/* The spare whose K is |pid| took a call and no spare is left (keeper.c idle_take). */
static void keeper_took(pid_t pid)
{
	for (struct k_arena *ar = g_busy; ar; ar = ar->next)
		if (ar->pid == pid) {
			corral_keeper_gone(ar);
			return;
		}
}

/* A spare keeper (keeper.c), for the next call. Its pid, or -1. */
static pid_t spawn_spare(const struct t_args *a, int taken_w)
{
	struct k_arena *ar = corral_arena_get();

	if (!ar)
		return -1;
	ar->spare = corral_keeper_spare_no();
	ar->taken_w = taken_w;
	return start_keeper(a, ar) < 0 ? -1 : ar->pid;
}

/*
 * T's own service, when it has no spare (it could not start one): one
 * call, for a keeper started now, or answered with the error. Returns
 * false on EOF (or a broken socket).
 */
static bool serve_one(const struct t_args *a)
{
	static char drop[T_INLINE_MAX]; /* a call's data with no arena to go to: answered, not run */
	struct k_arena *ar = corral_arena_get();
	int kf[T_NFDS];
	size_t inline_len;
	int r = corral_keeper_receive(a->ctl, MSG_DONTWAIT, kf, ar ? ar->inline_buf : drop, &inline_len);
	pid_t k = -ENOMEM;

	if (r <= 0) {
		if (ar)
			corral_arena_put(ar, true);
		return r == 0;
	}
	if (ar) {
		memcpy(ar->kf, kf, sizeof(kf));
		ar->inline_len = inline_len;
		ar->spare = 0;
		k = start_keeper(a, ar);
	}
	if (k < 0)
		corral_keeper_report_error(kf[4], -k);
	for (int i = 0; i < T_NFDS; i++)
		if (kf[i] >= 0)
			close(kf[i]);
	return true;
}

static int template_main(const struct corral_child *c, void *arg)
{
	const struct t_args *a = arg;
	int keep[5] = { a->root_fd, a->scope_fd, a->ctl, a->took_w, a->hint_r }, sfd, taken[2];
	unsigned want = 0;
	bool serving = false;
	sigset_t ss;

	/* Sorted for close_except. */
	for (int i = 0; i < 5; i++)
		for (int j = i + 1; j < 5; j++)
			if (keep[j] < keep[i]) {
				int x = keep[i];
				keep[i] = keep[j];
				keep[j] = x;
			}
	close_except(keep, 5);
	sigfillset(&ss);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) < 0 || getppid() != a->parent)
		goto die;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		goto die;
	corral_keeper_init(corral_landlock_abi() >= 7 ? 1 /* LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF */ : 0);
	sigemptyset(&ss);
	sigaddset(&ss, SIGCHLD);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGHUP);
	sigaddset(&ss, SIGINT);
	sfd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0 || pipe2(taken, O_CLOEXEC | O_NONBLOCK) < 0 || send(a->ctl, "R", 1, MSG_NOSIGNAL) != 1)
		goto die;
	want = 1;
	for (;;) {
		/*
		 * While a spare waits, the calls are its (a keeper waits again
		 * after its call when no other spare does): T sleeps, watching for
		 * the session's end (POLLHUP). It starts a spare at the start, for
		 * each call the supervisor sent while others were in flight (a
		 * byte on hint_r) that no waiting spare can take, and when a
		 * keeper ends and none waits. Where none could be started (the
		 * processes limit), T serves the calls itself (serve_one).
		 */
		struct pollfd pf[4] = { { .fd = a->ctl, .events = serving ? POLLIN : 0 }, { .fd = sfd, .events = POLLIN },
					{ .fd = taken[0], .events = POLLIN }, { .fd = a->hint_r, .events = POLLIN } };
		struct signalfd_siginfo si;
		bool stop = false;
		char hints[64];
		ssize_t n;
		pid_t w;
		int st;

		if (want == 0 && poll(pf, 4, -1) < 0 && errno != EINTR)
			break;
		while (read(sfd, &si, sizeof(si)) == sizeof(si))
			if (si.ssi_signo != SIGCHLD)
				stop = true;
		/* K processes, and orphans whose K died: reaped here, nothing reported. */
		while ((w = waitpid(-1, &st, WNOHANG | __WALL)) > 0)
			if (keeper_reaped(w, st) && !corral_keeper_idle() && !want)
				want = 1;
		/* A spare took a call and none is left (a fork of T), or one with a call waiting (keeper.c pair_k). */
		while (read(taken[0], &w, sizeof(w)) == sizeof(w)) {
			keeper_took(w);
			if (!corral_keeper_idle() && !want)
				want = 1;
		}
		while ((n = read(a->hint_r, hints, sizeof(hints))) > 0)
			want += (unsigned)n;
		if (stop || (pf[0].revents & (POLLHUP | POLLERR)))
			break;
		/* One spare for each call that may find none waiting, less those that wait. */
		while (want > (unsigned)corral_keeper_idle()) {
			if (spawn_spare(a, taken[1]) < 0) {
				serving = true;
				break;
			}
			serving = false;
		}
		want = 0;
		if (serving && (pf[0].revents & POLLIN) && !corral_keeper_idle() && !serve_one(a))
			break;
	}
die:
	corral_kill_all_and_reap(0, NULL, NULL);
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
	_cleanup_close_ int scope = -1, devw = -1, took_w = -1, hint_r = -1;
	int sv[2] = { -1, -1 }, ep[2] = { -1, -1 }, tk[2] = { -1, -1 }, hp[2] = { -1, -1 }, r, abi;
	struct t_args a;
	struct corral_child c;

	void (*route)(void *arg, pid_t pid, struct corral_denials *d) = t->route;
	void *route_arg = t->route_arg;

	memset(t, 0, sizeof(*t));
	t->route = route;
	t->route_arg = route_arg;
	t->sb = sb;
	t->pid = -1;
	t->pidfd = t->ctl = t->devnull = t->un_stop = t->took_r = t->hint_w = -1;
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
	    pipe2(ep, O_CLOEXEC) < 0 || pipe2(tk, O_CLOEXEC | O_NONBLOCK) < 0 || pipe2(hp, O_CLOEXEC | O_NONBLOCK) < 0) {
		r = corral_err(err, CORRAL_E_SETUP, errno, "session: %s", corral_strerror(errno));
		goto fail;
	}
	t->ctl = sv[0];
	t->took_r = tk[0];
	took_w = tk[1];
	hint_r = hp[0];
	t->hint_w = hp[1];
	t->pidns = sb->procns.mode != CORRAL_PROCNS_OFF;
	/* In its own PID namespace the template is pid 1: its parent is outside (getppid() says 0). */
	a = (struct t_args){ .ctl = sv[1], .scope_fd = scope, .root_fd = sb->root_fd, .took_w = took_w,
			     .hint_r = hint_r, .parent = t->pidns ? 0 : getpid() };
	c = (struct corral_child){
		.sb = sb, .run = &t->run, .fd_in = devw, .fd_out = devw, .fd_err = devw, .err_w = ep[1],
		.reset_mask = true, .parent = getpid(), .after_confine = template_main, .after_arg = &a,
		.after_fds = { sv[1], scope, took_w, hint_r },
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
	t->hint_w = safe_close(t->hint_w);
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
