/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The exec engine: start one child (clone with CLONE_VM|CLONE_VFORK, the
 * way posix_spawn does, so no page tables are copied), run one poll loop
 * over its output pipes, a pidfd and the deadline, kill the whole tree,
 * reap it and fill a corral_result.
 *
 * Process-wide state, documented because a library owns it:
 *  - corral is a child subreaper (PR_SET_CHILD_SUBREAPER, set once, on the
 *    first run): descendants that setsid or double-fork are re-parented to
 *    us when their parent dies, so the sweep below can find and kill them.
 *  - children are reaped by pid (wait4 with __WALL), never with wait(-1):
 *    a host must likewise not reap children it does not own, nor set
 *    SIGCHLD to SIG_IGN (which makes the kernel reap them).
 *  - a registry of the runs in flight (main pid and session), so a sweep in
 *    one thread never kills or reaps another run's main process.
 *  - the calling thread's CPU affinity, narrowed to its current CPU for the
 *    first PIN_MS of a run and then restored (see "A run starts on one
 *    CPU" below); the command always gets the thread's own mask.
 *  - interactive runs only (see "Interactive runs" below): the terminal on
 *    fd 0, and, when the command stops, a stop signal to corral's own
 *    process group, so the whole host process stops as a job does.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "internal/syscalls.h"
#include "supervisor/exec/engine.h"
#include "supervisor/exec/result.h"
#include "supervisor/exec/sandbox.h"

#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif

#define CHILD_STACK_SIZE (256 * 1024)
#define CHILD_STACK_HOT (16 * 1024) /* what the child's setup touches, with room */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define READ_CHUNK 65536

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;
static pid_t g_subreaper_pid; /* the process that made itself the child subreaper (under g_lock) */
static int g_subreaper_errno;

struct reg {
	pid_t pid;
	pid_t sid;
};
static struct reg *g_runs;
static size_t g_nruns, g_capruns;

/*
 * A fork's copy of g_lock may be held by a thread the fork does not have
 * (its next run would hang with every signal blocked): the child starts
 * with it free again, and with no run in flight (those were the parent's:
 * its registry would make a sweep skip a pid the parent reaped and the
 * child's own child then got). Nothing is locked around fork itself, so a
 * host's fork never waits for a sweep (which may wait on a process stuck
 * in the kernel); only the forking thread exists in the child, so nothing
 * there can hold the lock meanwhile.
 */
static void atfork_child(void)
{
	/* Left to leak: the fork may have come in the middle of reg_add's realloc. */
	g_runs = NULL;
	g_nruns = g_capruns = 0;
	pthread_mutex_init(&g_lock, NULL);
}

static void atfork_register(void)
{
	(void)pthread_atfork(NULL, NULL, atfork_child);
}

/*
 * PR_SET_CHILD_SUBREAPER, once per process: a fork of a process that ran
 * a command is not a subreaper (the flag is not inherited), and its runs'
 * orphans would go to init, unswept. Returns 0 or the errno.
 */
static int subreaper_init(void)
{
	pid_t self = getpid();
	int e;

	pthread_once(&g_atfork_once, atfork_register);
	pthread_mutex_lock(&g_lock);
	if (g_subreaper_pid != self) {
		g_subreaper_errno = prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 ? errno : 0;
		g_subreaper_pid = self;
	}
	e = g_subreaper_errno;
	pthread_mutex_unlock(&g_lock);
	return e;
}

/* Called with g_lock held. */
static int reg_add(pid_t pid, pid_t sid)
{
	if (g_nruns == g_capruns) {
		size_t n = g_capruns ? g_capruns * 2 : 8;
		struct reg *v = realloc(g_runs, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		g_runs = v;
		g_capruns = n;
	}
	g_runs[g_nruns++] = (struct reg){ pid, sid };
	return 0;
}

static void reg_del(pid_t pid)
{
	for (size_t i = 0; i < g_nruns; i++)
		if (g_runs[i].pid == pid) {
			g_runs[i] = g_runs[--g_nruns];
			return;
		}
}

static bool reg_is_main(pid_t pid)
{
	for (size_t i = 0; i < g_nruns; i++)
		if (g_runs[i].pid == pid)
			return true;
	return false;
}

static bool reg_is_other_sid(pid_t sid, pid_t mine)
{
	for (size_t i = 0; i < g_nruns; i++)
		if (g_runs[i].sid == sid && sid != mine)
			return true;
	return false;
}

/*
 * The child's stack, one per thread, kept across runs: a fresh mapping
 * per run costs an mmap, a munmap and the page faults of touching it.
 * With CLONE_VFORK the calling thread is suspended while the child uses
 * it, so one thread never has two children on it. Freed at thread exit.
 */
static pthread_key_t g_stack_key;
static pthread_once_t g_stack_once = PTHREAD_ONCE_INIT;

static void stack_free(void *p)
{
	if (p)
		munmap(p, CHILD_STACK_SIZE);
}

static void stack_key_init(void)
{
	if (pthread_key_create(&g_stack_key, stack_free) != 0)
		g_stack_key = (pthread_key_t)-1;
}

static void *child_stack(void)
{
	void *p;

	pthread_once(&g_stack_once, stack_key_init);
	if (g_stack_key != (pthread_key_t)-1 && (p = pthread_getspecific(g_stack_key)))
		return p;
	p = mmap(NULL, CHILD_STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
		 -1, 0);
	/*
	 * The pages the child uses, in one call rather than a fault each (a
	 * trap to the hypervisor on a paravirtualized host); advice only, it
	 * fails harmlessly before Linux 5.14.
	 */
	if (p != MAP_FAILED)
		(void)madvise((char *)p + CHILD_STACK_SIZE - CHILD_STACK_HOT, CHILD_STACK_HOT, MADV_POPULATE_WRITE);
	if (p != MAP_FAILED && g_stack_key != (pthread_key_t)-1 && pthread_setspecific(g_stack_key, p) != 0) {
		munmap(p, CHILD_STACK_SIZE);
		return MAP_FAILED;
	}
	return p;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	safe_close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

/* Session id of |pid| (field 6 of /proc/PID/stat), or -1; its state letter in |*state| ('?' if unknown). */
static pid_t proc_sid_state(pid_t pid, char *state)
{
	char path[64], buf[1024];
	const char *p;
	int ppid, pgrp, sid;

	*state = '?';
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %d %d %d", state, &ppid, &pgrp, &sid) != 4)
		return -1;
	return sid;
}

static pid_t proc_sid(pid_t pid)
{
	char state;

	return proc_sid_state(pid, &state);
}

/*
 * What a task's cgroup file (/proc/PID/cgroup: "ID:CONTROLLERS:/PATH"
 * lines) says of the run whose cgroups are named |name| (corral-PID-N, N
 * from a process-wide counter: unique): CG_OURS, one of them; CG_OTHER,
 * another run's (corral-...); CG_NONE, no run's at all (a host process, or
 * on cgroup v1 one of ours already exiting, shown in the root);
 * CG_GONE, unreadable (the task is gone).
 */
enum { CG_GONE = -1, CG_NONE = 0, CG_OTHER = 1, CG_OURS = 2 };

static int cgroup_file_state(const char *path, const char *name)
{
	char buf[16384], *save = NULL;
	int st = CG_NONE;

	if (read_small(path, buf, sizeof(buf)) < 0)
		return CG_GONE;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *last = strrchr(line, '/');

		if (!last)
			continue;
		if (strcmp(last + 1, name) == 0)
			return CG_OURS;
		if (strncmp(last + 1, "corral-", 7) == 0)
			st = CG_OTHER;
	}
	return st;
}

static int proc_cgroup_state(pid_t pid, const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	return cgroup_file_state(path, name);
}

/*
 * A leader that called pthread_exit shows 'Z' while its other threads run
 * on: the highest state its other threads' cgroup files show, or CG_GONE
 * when none is readable (a real zombie: the caller decides otherwise).
 */
static int threads_cgroup_state(pid_t pid, const char *name)
{
	char path[64], buf[4096];
	int dfd, found = CG_GONE;
	long n;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return CG_GONE;
	while (found != CG_OURS && (n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n && found != CG_OURS;) {
			struct corral_dirent64 *d = (void *)(buf + off);
			char tpath[96];
			int st;

			off += d->reclen;
			if (d->name[0] < '1' || d->name[0] > '9' || atoi(d->name) == pid)
				continue;
			snprintf(tpath, sizeof(tpath), "/proc/%d/task/%s/cgroup", pid, d->name);
			st = cgroup_file_state(tpath, name);
			if (st > found)
				found = st;
		}
	safe_close(dfd);
	return found;
}

/* The number after |key| in a /proc status text, or -1. */
static int status_field(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);

	return p ? atoi(p + strlen(key)) : -1;
}

/*
 * What tells this run's processes from the host's own children: every
 * process of a confined run has no_new_privs, and, when the run installs a
 * seccomp filter, one more filter than the host has (Seccomp_filters,
 * Linux 5.9+). no_new_privs alone is not enough: a host that has it
 * itself (systemd's NoNewPrivileges=, docker's no-new-privileges, a host
 * inside another sandbox) hands it to all its children, and the sweep
 * would kill them. |min_filters| < 0: no_new_privs alone (a run without a
 * filter, or a kernel that does not show the count).
 */
struct owner_test {
	bool confined;  /* the run was confined (else only its session is its own) */
	bool filtered;  /* the run installs a seccomp filter */
	bool known;     /* min_filters computed */
	int min_filters;
	/*
	 * The name of the run's cgroups when nothing of the run can leave
	 * them (cgroup_holds_tree), else "": then a live process is the run's
	 * only when it is in them, so a setsid daemon of another run in
	 * flight in this process is left to that run. (A zombie shows the
	 * root cgroup: for one, the test above still decides.)
	 */
	char cg_name[64];
};

static int owner_min_filters(struct owner_test *o)
{
	if (!o->known) {
		char buf[4096];
		int host = -1;

		if (o->filtered && read_small("/proc/self/status", buf, sizeof(buf)) > 0)
			host = status_field(buf, "\nSeccomp_filters:");
		o->min_filters = host >= 0 ? host + 1 : -1;
		o->known = true;
	}
	return o->min_filters;
}

/* Is |pid| one of this run's confined processes (see struct owner_test)? */
static bool proc_confined(pid_t pid, struct owner_test *o)
{
	char path[64], buf[4096];
	int min, n;

	if (!o->confined)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_small(path, buf, sizeof(buf)) < 0 || status_field(buf, "\nNoNewPrivs:") != 1)
		return false;
	min = owner_min_filters(o);
	n = status_field(buf, "\nSeccomp_filters:");
	return min < 0 || n < 0 || n >= min;
}

/*
 * Our children, from every thread's /proc/self/task/TID/children. A read
 * that starts while the list is non-empty returns at least one pid, so an
 * empty answer means there was, at that instant, no child.
 */
static size_t list_children(pid_t *out, size_t max)
{
	char buf[8192], path[96];
	size_t n = 0;
	int dfd;
	long nread;

	dfd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	while ((nread = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < nread;) {
			struct corral_dirent64 *d = (void *)(buf + off);
			char cbuf[4096];
			const char *p;

			off += d->reclen;
			if (d->name[0] < '0' || d->name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/self/task/%s/children", d->name);
			if (read_small(path, cbuf, sizeof(cbuf)) <= 0)
				continue;
			for (p = cbuf; *p && n < max;) {
				char *end;
				long v = strtol(p, &end, 10);
				if (end == p)
					break;
				out[n++] = (pid_t)v;
				p = end;
				while (*p == ' ' || *p == '\n')
					p++;
			}
		}
	}
	safe_close(dfd);
	return n;
}

struct tally {
	double cpu_ms;
	long max_rss_kb;
};

static void tally_add(struct tally *t, const struct rusage *ru)
{
	t->cpu_ms += (double)ru->ru_utime.tv_sec * 1e3 + (double)ru->ru_utime.tv_usec / 1e3 +
		     (double)ru->ru_stime.tv_sec * 1e3 + (double)ru->ru_stime.tv_usec / 1e3;
	if (ru->ru_maxrss > t->max_rss_kb)
		t->max_rss_kb = ru->ru_maxrss;
}

/*
 * Reap this run's re-parented descendants that already exited, while the
 * run goes on: as a subreaper we inherit every orphan, and an unreaped
 * zombie still counts against the pids cgroup and RLIMIT_NPROC, so a
 * command that forks many short-lived daemons ((true &) in a loop) would
 * hit EAGAIN. Same ownership test as sweep(); never a main process of a
 * run in flight (another thread reaps that one), never a live process
 * (WNOHANG: waitid only takes a child that has exited).
 */
#define ORPHAN_REAP_MS 20
static void reap_orphans(pid_t sid, struct owner_test *o, struct tally *t)
{
	pid_t kids[512];
	size_t n;

	pthread_mutex_lock(&g_lock);
	n = list_children(kids, ARRAY_SIZE(kids));
	for (size_t i = 0; i < n; i++) {
		siginfo_t si = {};
		struct rusage ru = {};
		pid_t s;

		if (reg_is_main(kids[i]))
			continue;
		s = proc_sid(kids[i]);
		if (!(s == sid || (!reg_is_other_sid(s, sid) && proc_confined(kids[i], o))))
			continue;
		if (waitid(P_PID, (id_t)kids[i], &si, WEXITED | WNOHANG | WNOWAIT | __WALL) < 0 ||
		    si.si_pid != kids[i])
			continue;
		if (wait4(kids[i], NULL, __WALL | WNOHANG, &ru) == kids[i])
			tally_add(t, &ru);
	}
	pthread_mutex_unlock(&g_lock);
}

/*
 * Kill and reap every descendant of this run that was re-parented to us.
 * Called after the main process is reaped (so its children are ours now).
 * Each reaped process hands its own children to us before wait4 returns,
 * so the loop ends only when no run process is left. A child of ours is
 * this run's when it is in our session, or confined and not in the
 * session of another run in flight (a daemon that called setsid). Holding
 * g_lock keeps other runs from spawning or sweeping meanwhile; the pids
 * cannot be reused before we reap them because they are our children.
 */
/*
 * No child at all (ECHILD): nothing was re-parented to us, so nothing of
 * the run is left — every live process of the tree has an ancestor chain
 * up to this subreaper, and the topmost live one would be our child. One
 * call instead of the /proc walk of sweep(). Another run in flight, or a
 * helper, is a child too: then sweep() sorts them out.
 */
static bool no_children(void)
{
	siginfo_t si = {};

	return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) < 0 && errno == ECHILD;
}

static void sweep(pid_t sid, struct owner_test *o, struct tally *t)
{
	pid_t kids[512], mine[512];

	pthread_mutex_lock(&g_lock);
	for (int round = 0; round < 100000; round++) {
		size_t n = list_children(kids, ARRAY_SIZE(kids)), m = 0;

		for (size_t i = 0; i < n; i++) {
			int cg = CG_NONE;
			char state;
			pid_t s;

			if (reg_is_main(kids[i]))
				continue;
			s = proc_sid_state(kids[i], &state);
			/*
			 * With cgroups holding the tree: in ours, ours; in another
			 * run's, never (its setsid daemon lives on); in none (exiting,
			 * or a real zombie), the test below.
			 */
			if (o->cg_name[0] && s != sid)
				cg = state != 'Z' ? proc_cgroup_state(kids[i], o->cg_name) :
						    threads_cgroup_state(kids[i], o->cg_name);
			if (s == sid || cg == CG_OURS ||
			    (cg != CG_OTHER && !reg_is_other_sid(s, sid) && proc_confined(kids[i], o)))
				mine[m++] = kids[i];
		}
		if (m == 0)
			break;
		for (size_t i = 0; i < m; i++)
			kill(mine[i], SIGKILL);
		for (size_t i = 0; i < m; i++) {
			struct rusage ru;
			pid_t w;
			int st;

			while ((w = wait4(mine[i], &st, __WALL, &ru)) < 0 && errno == EINTR)
				;
			if (w == mine[i])
				tally_add(t, &ru);
		}
	}
	pthread_mutex_unlock(&g_lock);
}

/*
 * The watchdog: when a run with cgroups has lasted WATCHDOG_DELAY_MS, a
 * forked process waits on a pipe only corral holds. If corral dies
 * (SIGKILL included) the pipe reads EOF and the watchdog kills the run's
 * tree through its cgroups and removes them; when the run ends normally
 * corral writes one byte and reaps it. Short runs never pay for the fork;
 * a corral killed in a run's first milliseconds leaves its descendants
 * (docs/threat-model.md). After fork the child only makes
 * async-signal-safe calls (the host may be multithreaded).
 */
#define WATCHDOG_DELAY_MS 20.0

/*
 * The Unix-socket mediation listener joins the poll set only once a run
 * has lasted UNOTIFY_GRACE_MS. The kernel reports POLLHUP on it as soon
 * as the last filtered task starts to exit — before that task's pidfd is
 * ready — so polling it from the start costs every short command one
 * extra wake-up of corral while the command is still tearing down its
 * memory, which measured 0.2-0.3 ms per run on a paravirtualized host
 * (docs/benchmarks.md). The price: a connect/sendto/sendmsg mediated in a
 * run's first milliseconds waits until the grace ends (at most this long).
 */
#define UNOTIFY_GRACE_MS 5.0

/*
 * A run starts on one CPU. The child is cloned while this thread is pinned
 * to the CPU it is on, so the scheduler places the child here instead of
 * on an idle vCPU, and wakes this thread here when the child's execve
 * releases it: waking an idle vCPU costs tens of microseconds on a
 * paravirtualized host, and a short run crosses several such hand-overs
 * (0.2-0.3 ms per run measured, docs/benchmarks.md). The child gives the
 * command this thread's own mask back just before execve, so the command
 * and its descendants are scheduled exactly as without corral; this thread
 * gets its mask back once the run has lasted PIN_MS, or when it ends.
 */
#define PIN_MS 5.0

struct pin {
	bool on;
	cpu_set_t cpus; /* the thread's own mask */
};

static void pin_begin(struct pin *p)
{
	cpu_set_t one;
	unsigned cpu;

	p->on = false;
	/* The raw getcpu: glibc's reads rseq's cpu_id, which a clone sharing our TLS does not own. */
	if (sched_getaffinity(0, sizeof(p->cpus), &p->cpus) < 0 || CPU_COUNT(&p->cpus) < 2 ||
	    syscall(SYS_getcpu, &cpu, NULL, NULL) < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &p->cpus))
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	p->on = sched_setaffinity(0, sizeof(one), &one) == 0;
}

static void pin_end(struct pin *p)
{
	if (p->on)
		(void)sched_setaffinity(0, sizeof(p->cpus), &p->cpus);
	p->on = false;
}

struct watchdog {
	pid_t pid;
	int fd; /* write end: closed or written by corral only */
};

static void watchdog_start(const struct corral_run *run, struct watchdog *wd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	pid = fork();
	if (pid < 0) {
		safe_close(p[0]);
		safe_close(p[1]);
		return;
	}
	if (pid == 0) {
		char c;
		ssize_t n;
		sigset_t none;

		/* Nothing of corral's may keep another run's pipe open: keep only fd 3. */
		if (dup2(p[0], 3) < 0)
			_exit(1);
		if (syscall(SYS_close_range, 4U, ~0U, 0) < 0)
			for (int fd = 4; fd < 65536; fd++)
				close(fd);
		for (int s = 1; s < _NSIG; s++) {
			struct sigaction sa = { .sa_handler = SIG_IGN };

			/* Not the run's to end: only corral's death or its byte ends this. */
			if (s == SIGKILL || s == SIGSTOP || (s >= 32 && s < SIGRTMIN))
				continue;
			sigaction(s, &sa, NULL);
		}
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		do
			n = read(3, &c, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			corral_cgroup_kill_and_remove(run);
		_exit(0);
	}
	safe_close(p[0]);
	wd->pid = pid;
	wd->fd = p[1];
}

static void watchdog_stop(struct watchdog *wd)
{
	ssize_t _unused_ n;

	sigset_t pipe_set, prev;
	struct timespec zero = {};

	if (wd->pid < 0)
		return;
	/* A watchdog already gone must not SIGPIPE the host. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &prev);
	n = write(wd->fd, "x", 1);
	if (n < 0 && errno == EPIPE)
		sigtimedwait(&pipe_set, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &prev, NULL);
	wd->fd = safe_close(wd->fd);
	while (waitpid(wd->pid, NULL, __WALL) < 0 && errno == EINTR)
		;
	wd->pid = -1;
}

struct stream {
	int fd;
	char *buf;
	size_t len, alloc, limit;
	bool truncated;
};

enum { READ_DONE = 0, READ_AGAIN = 1, READ_MORE = 2 };

/*
 * Read what is available, up to a bounded amount per call (so one stream
 * cannot starve the loop). READ_DONE: EOF or error (fd closed, or none);
 * READ_AGAIN: nothing more for now; READ_MORE: there may be more.
 */
static int stream_read(struct stream *s)
{
	char scratch[READ_CHUNK];

	if (s->fd < 0)
		return READ_DONE;

	for (int i = 0; i < 64; i++) {
		ssize_t n;

		if (s->len < s->limit) {
			size_t want = s->limit - s->len;

			if (want > READ_CHUNK)
				want = READ_CHUNK;
			if (s->alloc < s->len + want + 1) {
				size_t na = s->alloc ? s->alloc * 2 : 16384;
				char *nb;

				while (na < s->len + want + 1)
					na *= 2;
				if (na > s->limit + 1)
					na = s->limit + 1;
				nb = realloc(s->buf, na);
				if (!nb)
					goto discard; /* keep going: the child must never block */
				s->buf = nb;
				s->alloc = na;
			}
			n = read(s->fd, s->buf + s->len, want);
			if (n > 0) {
				s->len += (size_t)n;
				continue;
			}
		} else {
discard:
			n = read(s->fd, scratch, sizeof(scratch));
			if (n > 0) {
				s->truncated = true;
				continue;
			}
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return READ_AGAIN;
		s->fd = safe_close(s->fd);
		return READ_DONE;
	}
	return READ_MORE;
}

static void stream_finish(struct stream *s, char **buf, size_t *len, bool *trunc)
{
	if (!s->buf)
		s->buf = calloc(1, 1);
	if (s->buf)
		s->buf[s->len] = '\0';
	*buf = s->buf;
	*len = s->buf ? s->len : 0;
	*trunc = s->truncated;
	s->buf = NULL;
}

/*
 * Interactive runs: stdin a terminal, output not captured, corral in the
 * terminal's foreground. The command's process group gets the terminal
 * (corral_child_main), and corral stands between it and the user's shell
 * as a job-control shell stands between its jobs and the terminal:
 *
 *  - the terminal modes are saved at the start and restored at the end,
 *    however the run ended (exit, signal, deadline, cancel);
 *  - when the command stops (Ctrl-Z, SIGTTIN, SIGTTOU, SIGSTOP), corral
 *    saves the command's modes, takes the terminal back, restores the
 *    modes of the start, and stops its own process group, so the user's
 *    shell sees its job stopped and prints its prompt;
 *  - continued in the foreground (`fg`), corral gives the terminal and the
 *    command's modes back and continues the command's group; continued in
 *    the background (`bg`), it continues the command without the terminal
 *    (reading it stops the command again with SIGTTIN, and corral with it),
 *    and hands it the terminal once the shell brings corral to the
 *    foreground.
 *
 * The stop is noticed by polling: waitid(WSTOPPED | WNOHANG) on the main
 * process every TTY_POLL_MS of the event loop. The pidfd reports only the
 * exit, and a SIGCHLD handler, self-pipe or signalfd would take a
 * process-wide signal from a library host that may run other children and
 * threads of its own. No signal disposition is touched; the only
 * process-wide effect is the stop itself. Nothing here runs for a run that
 * is not interactive.
 */
#define TTY_POLL_MS 20
/* How long a stop sent to corral's group may take to reach this thread. */
#define TTY_SETTLE_MS 20

struct tty {
	bool on;         /* an interactive run */
	bool have_start; /* |start|: the modes when the run began */
	bool have_cmd;   /* |cmd|: the command's modes when it last stopped */
	bool bg;         /* corral was continued without the terminal */
	struct termios start, cmd;
};

/*
 * Terminal calls from a process group that may not hold the foreground
 * raise SIGTTOU unless it is blocked (then the kernel lets them through).
 */
static void ttou_block(sigset_t *old)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGTTOU);
	pthread_sigmask(SIG_BLOCK, &s, old);
}

static bool tty_is_ours(void)
{
	return tcgetpgrp(0) == getpgrp();
}

/*
 * The terminal back to corral's group, in the modes of the start. TCSANOW:
 * TCSADRAIN would wait forever on output a command left stopped (^S).
 */
static void tty_take(const struct tty *t)
{
	sigset_t old;

	ttou_block(&old);
	tcsetpgrp(0, getpgrp());
	if (t->have_start)
		tcsetattr(0, TCSANOW, &t->start);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The command's modes, then the terminal, to the command's group. */
static void tty_give(const struct tty *t, pid_t pgid)
{
	sigset_t old;

	ttou_block(&old);
	if (t->have_cmd)
		tcsetattr(0, TCSANOW, &t->cmd);
	tcsetpgrp(0, pgid);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * Stop corral's process group as the terminal would have stopped it, with
 * the command's stop signal (the shell then says "Stopped (tty input)" for
 * SIGTTIN). SIGSTOP becomes SIGTSTP: the kernel discards SIGTSTP, SIGTTIN
 * and SIGTTOU sent to an orphaned group (no shell left to continue it)
 * and to a host that ignores them, and the cgroup watchdog, which ignores
 * every signal it can, must not be stopped. |sig| is unblocked in this
 * thread so the group stop cannot be left pending; when another thread of
 * the host takes the signal, the group stop reaches this one during the
 * wait. Returns once corral runs again, or at once if nothing stopped it.
 */
static void tty_stop_self(int sig)
{
	struct timespec settle = { 0, TTY_SETTLE_MS * 1000000L };
	sigset_t one, old;

	if (sig != SIGTTIN && sig != SIGTTOU)
		sig = SIGTSTP;
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_UNBLOCK, &one, &old);
	kill(0, sig);
	while (nanosleep(&settle, &settle) < 0 && errno == EINTR)
		;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void tty_begin(struct tty *t)
{
	t->on = true;
	t->have_start = tcgetattr(0, &t->start) == 0;
}

/*
 * proc "private": the reports of the namespace's init after the first
 * (supervisor/exec/child.c): STAGE_PIDNS_STOPPED, each time the command
 * stops (interactive runs), and STAGE_PIDNS_DONE, kept in |done|.
 * Returns the stop signal of the first stop read, or 0.
 */
static int ns_reports(int rep_r, struct corral_child_report *done)
{
	struct corral_child_report rep;

	while (read(rep_r, &rep, sizeof(rep)) == (ssize_t)sizeof(rep)) {
		if (rep.stage == STAGE_PIDNS_STOPPED)
			return rep.wstatus;
		if (rep.stage == STAGE_PIDNS_DONE)
			*done = rep;
	}
	return 0;
}

/*
 * One tick of the event loop: has the command stopped, has corral been
 * brought to the foreground? With proc "private" the command (|ns_cmd|,
 * its group's leader) is no child of corral's: its init reports its stops.
 */
static void tty_watch(struct tty *t, pid_t pid, pid_t ns_cmd, int rep_r, struct corral_child_report *done)
{
	siginfo_t si = {};
	int sig;

	if (ns_cmd > 0)
		pid = ns_cmd;
	if (t->bg && tty_is_ours()) {
		/* `fg` while the command ran in the background. */
		tty_give(t, pid);
		t->bg = false;
		kill(-pid, SIGCONT);
	}
	if (ns_cmd > 0) {
		sig = ns_reports(rep_r, done);
		if (!sig)
			return;
	} else {
		if (waitid(P_PID, (id_t)pid, &si, WSTOPPED | WNOHANG | __WALL) < 0 || si.si_pid != pid ||
		    si.si_code != CLD_STOPPED)
			return;
		sig = si.si_status;
	}
	if (!t->bg) {
		t->have_cmd = tcgetattr(0, &t->cmd) == 0;
		tty_take(t);
	}
	tty_stop_self(sig);
	t->bg = !tty_is_ours();
	if (!t->bg)
		tty_give(t, pid);
	kill(-pid, SIGCONT);
}

/*
 * The run is over: the terminal and the start's modes back, unless corral
 * runs in the background, where the terminal is the shell's.
 */
static void tty_end(const struct tty *t)
{
	if (t->on && (!t->bg || tty_is_ours()))
		tty_take(t);
}

static int stage_exit_code(int e)
{
	return e == ENOENT ? 127 : 126;
}

int corral_engine_run(const struct corral_spawn *sp, const struct corral_exec_opts *opts,
		      struct corral_result *res, struct corral_error *err)
{
	struct stream out = { .fd = -1 }, errs = { .fd = -1 };
	int in_r = -1, in_w = -1, out_w = -1, err_w = -1, rep_r = -1, rep_w = -1, pidfd = -1;
	const char *in_data = opts->stdin_data;
	size_t in_len = opts->stdin_len, in_off = 0;
	struct corral_child child = {};
	char **sh_argv = NULL;
	struct corral_child_report rep = {};
	struct tally tally = {};
	struct owner_test owner = {
		.confined = sp->confine != NULL,
		.filtered = sp->confine && (sp->confine->have_bpf || sp->confine->unotify),
	};
	sigset_t all, old;
	void *stack = MAP_FAILED;
	double t0, deadline, last_reap = 0;
	bool interactive = false, timed_out = false, cancelled = false, main_reaped = false;
	struct tty tty = {};
	bool want_watchdog = false, only_main = false;
	struct watchdog wd = { .pid = -1, .fd = -1 };
	struct rusage ru;
	struct corral_unotify *un = NULL;
	struct pin pin = {};
	/* proc "private": the main process is the namespace's init (child.c), not the command. */
	const int ns_flags = sp->confine ? corral_procns_clone_flags(&sp->confine->procns) : 0;
	pid_t pid = -1, ns_cmd = 0;
	struct corral_child_report ns_done = {};
	int status = 0, r = 0;
	ssize_t n;

	r = subreaper_init();
	if (r)
		return corral_err(err, CORRAL_E_SETUP, r, "PR_SET_CHILD_SUBREAPER: %s", corral_strerror(r));

	memset(res, 0, sizeof(*res));
	res->provider = sp->provider ? sp->provider : "local";

	/* stdin: bytes through a pipe, corral's own, or /dev/null. */
	if (in_data) {
		int p[2];
		if (pipe2(p, O_CLOEXEC) < 0) {
			r = corral_err(err, CORRAL_E_SETUP, errno, "stdin pipe: %s", corral_strerror(errno));
			goto out;
		}
		in_r = p[0];
		in_w = p[1];
		if (sp->confine && sp->confine->switch_identity &&
		    fchown(in_r, sp->confine->uid, sp->confine->gid) < 0) {
			r = corral_err(err, CORRAL_E_SETUP, errno, "stdin pipe: fchown: %s", corral_strerror(errno));
			goto out;
		}
		fcntl(in_w, F_SETFL, O_NONBLOCK);
		if (in_len == 0)
			in_w = safe_close(in_w);
	} else if (!opts->stdin_passthrough) {
		in_r = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (in_r < 0) {
			r = corral_err(err, CORRAL_E_SETUP, errno, "/dev/null: %s", corral_strerror(errno));
			goto out;
		}
	} else if (!opts->capture && isatty(0) && tcgetpgrp(0) == getpgrp()) {
		/* A person at a terminal: keep job control and Ctrl-C working. */
		interactive = true;
		tty_begin(&tty);
	}

	if (opts->capture) {
		int p[2];

		if (pipe2(p, O_CLOEXEC) < 0) {
			r = corral_err(err, CORRAL_E_SETUP, errno, "stdout pipe: %s", corral_strerror(errno));
			goto out;
		}
		out.fd = p[0];
		out_w = p[1];
		if (pipe2(p, O_CLOEXEC) < 0) {
			r = corral_err(err, CORRAL_E_SETUP, errno, "stderr pipe: %s", corral_strerror(errno));
			goto out;
		}
		errs.fd = p[0];
		err_w = p[1];
		fcntl(out.fd, F_SETFL, O_NONBLOCK);
		fcntl(errs.fd, F_SETFL, O_NONBLOCK);
		/*
		 * A pipe is owned by its creator, mode 0600: after the switch to
		 * another identity, reopening it (/dev/stdout, /proc/self/fd/1)
		 * would be EACCES. Give the command's ends to the command's uid.
		 */
		if (sp->confine && sp->confine->switch_identity &&
		    (fchown(out_w, sp->confine->uid, sp->confine->gid) < 0 ||
		     fchown(err_w, sp->confine->uid, sp->confine->gid) < 0)) {
			r = corral_err(err, CORRAL_E_SETUP, errno, "output pipes: fchown: %s", corral_strerror(errno));
			goto out;
		}
		/* SIZE_MAX ("no cap") less one: the buffer holds limit + 1 bytes. */
		out.limit = errs.limit = opts->max_output < SIZE_MAX ? opts->max_output : SIZE_MAX - 1;
	}
	{
		int p[2];

		/* Non-blocking: read once after the child released us, below (the write never fills it). */
		if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) {
			r = corral_err(err, CORRAL_E_SETUP, errno, "error pipe: %s", corral_strerror(errno));
			goto out;
		}
		rep_r = p[0];
		rep_w = p[1];
	}

	stack = child_stack();
	if (stack == MAP_FAILED) {
		r = corral_err(err, CORRAL_E_SETUP, errno, "child stack: %s", corral_strerror(errno));
		goto out;
	}

	child = (struct corral_child){
		.sb = sp->confine,
		.run = sp->run,
		.argv = sp->argv,
		.envp = sp->envp,
		.cwd = sp->cwd,
		.fd_in = in_r,
		.fd_out = out_w,
		.fd_err = err_w,
		.err_w = rep_w,
		.interactive = interactive,
		.reset_mask = true,
		.parent = getpid(),
		.rlimits = sp->rlimits,
	};
	{
		size_t argc = 0;

		while (sp->argv[argc])
			argc++;
		/* NULL (no fallback) if this fails: the child then reports ENOEXEC. */
		sh_argv = calloc(argc + 2, sizeof(*sh_argv));
		if (sh_argv) {
			sh_argv[0] = (char *)"/bin/sh";
			for (size_t i = 1; i < argc; i++)
				sh_argv[i + 1] = sp->argv[i];
			child.sh_argv = sh_argv;
		}
	}
	for (char *const *e = sp->envp; e && *e; e++)
		if (strncmp(*e, "PATH=", 5) == 0)
			child.path = *e + 5;

	t0 = now_ms();
	deadline = t0 + opts->timeout * 1e3;
	last_reap = t0; /* nothing of this run can be an orphan yet */

	/*
	 * Every signal blocked around clone: a host handler must not run in
	 * the child on shared memory before it resets the dispositions. g_lock
	 * is held until the pid is registered, so a concurrent sweep never
	 * takes the new main process for an orphan.
	 */
	pin_begin(&pin);
	if (pin.on)
		child.cpus = &pin.cpus;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_mutex_lock(&g_lock);
	if (ns_flags) {
		/* The init's copy of this stack: it runs at the top, the command below the middle. */
		child.inner_stack_top = (char *)stack + CHILD_STACK_SIZE / 2;
		pid = clone(corral_pidns_init_main, (char *)stack + CHILD_STACK_SIZE, ns_flags | SIGCHLD, &child);
	} else {
		pid = clone(corral_child_main, (char *)stack + CHILD_STACK_SIZE, CLONE_VM | CLONE_VFORK | SIGCHLD,
			    &child);
	}
	if (pid > 0 && reg_add(pid, pid) < 0) {
		/* Out of memory: the child already runs; kill it below as a setup error. */
		kill(pid, SIGKILL);
		rep = (struct corral_child_report){ .stage = 0, .err = ENOMEM };
	}
	pthread_mutex_unlock(&g_lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0 && ns_flags) {
		r = corral_err(err, CORRAL_E_SETUP, errno,
			       "creating the PID namespace (proc \"private\"): clone: %s; --proc host runs without",
			       corral_strerror(errno));
		goto out;
	}
	if (pid < 0) {
		r = corral_err(err, CORRAL_E_SETUP, errno, "clone: %s", corral_strerror(errno));
		goto out;
	}
	if (g_stack_key == (pthread_key_t)-1)
		munmap(stack, CHILD_STACK_SIZE);
	stack = MAP_FAILED; /* otherwise kept for this thread's next run */

	rep_w = safe_close(rep_w);
	in_r = safe_close(in_r);
	out_w = safe_close(out_w);
	err_w = safe_close(err_w);

	/*
	 * The child has exec'd or exited by now (CLONE_VFORK): a report it
	 * wrote is already in the pipe, since it writes before _exit. So the
	 * read does not wait (O_NONBLOCK): waiting for EOF would wait until
	 * the exec'ing child closes its copy, later in execve than the point
	 * that released us, and then for this thread to be scheduled again —
	 * 0.3 ms per run measured here, while the command was already running.
	 */
	/*
	 * The init of a PID namespace is no vfork: wait for its first report
	 * (the command exec'd, or why not); EOF if it died without one.
	 */
	if (rep.err == 0 && ns_flags) {
		struct pollfd rp = { .fd = rep_r, .events = POLLIN };

		while (poll(&rp, 1, -1) < 0 && errno == EINTR)
			;
	}
	if (rep.err == 0) {
		do
			n = read(rep_r, &rep, sizeof(rep));
		while (n < 0 && errno == EINTR);
		if (n != (ssize_t)sizeof(rep))
			rep = (struct corral_child_report){ .stage = ns_flags ? STAGE_UNREPORTED : 0,
							    .err = ns_flags ? EIO : 0 };
		if (rep.err == 0 && !ns_flags && !child.reached_exec)
			rep = (struct corral_child_report){ .stage = STAGE_UNREPORTED, .err = EIO };
	}
	if (rep.err) {
		pid_t w;

		while ((w = wait4(pid, &status, __WALL, &ru)) < 0 && errno == EINTR)
			;
		if (w == pid)
			tally_add(&tally, &ru);
		main_reaped = true;
		pthread_mutex_lock(&g_lock);
		reg_del(pid);
		pthread_mutex_unlock(&g_lock);
		tty_end(&tty);
		if (rep.stage == STAGE_EXEC) {
			const char *name = sp->argv[0];

			res->exited = true;
			res->exec_errno = rep.err;
			res->exit_status = stage_exit_code(rep.err);
			if (rep.has_interp) {
				/* The command exists but cannot be executed: 126 (DESIGN.md). */
				rep.interp[sizeof(rep.interp) - 1] = 0;
				res->exec_interp = strdup(rep.interp); /* NULL on ENOMEM: plain "not found", 127 */
				if (rep.err == ENOENT)
					res->exit_status = res->exec_interp ? 126 : 127;
			}
			if (opts->capture) {
				char msg[512];
				int len = corral_exec_error_line(res, name, msg, sizeof(msg));

				if (len < 0)
					len = 0;
				else if ((size_t)len >= sizeof(msg))
					len = (int)sizeof(msg) - 1;
				errs.buf = strdup(msg);
				errs.len = errs.buf ? (size_t)len : 0;
				out.fd = safe_close(out.fd);
				errs.fd = safe_close(errs.fd);
				stream_finish(&out, &res->stdout_buf, &res->stdout_len, &res->stdout_truncated);
				stream_finish(&errs, &res->stderr_buf, &res->stderr_len, &res->stderr_truncated);
			}
			res->wall_ms = now_ms() - t0;
			res->cpu_ms = tally.cpu_ms;
			res->max_rss_kb = tally.max_rss_kb;
			r = 0;
		} else if (rep.stage == STAGE_UNREPORTED) {
			r = corral_err(err, CORRAL_E_SETUP, 0,
				       "child setup failed before execve and could not report why "
				       "(a limit too small for setup itself, e.g. --memory or --open-files?)");
		} else {
			r = corral_err(err, CORRAL_E_SETUP, rep.err, "%s: %s",
				       rep.stage ? corral_child_stage_name(rep.stage) : "registering the run",
				       corral_strerror(rep.err));
		}
		goto finish;
	}

	pidfd = (int)syscall(__NR_pidfd_open, pid, 0);
	/* An interactive run in a PID namespace: the command is the init's one child, here. */
	if (interactive && ns_flags) {
		char path[96], buf[64];

		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
		if (read_small(path, buf, sizeof(buf)) > 0)
			ns_cmd = (pid_t)atoi(buf);
	}
	for (int i = 0; sp->run && i < CORRAL_CG_MAX; i++)
		if (sp->run->cg_dir[i])
			want_watchdog = true;
	/* Unix-socket mediation: the listener the child sent before execve. */
	if (sp->run && sp->run->un_parent >= 0)
		un = corral_unotify_start(sp->confine, sp->run, sp->run->un_parent);

	/* The event loop. */
	for (;;) {
		struct pollfd pf[5 + CORRAL_UNOTIFY_MAX_POLLFDS];
		int np = 0, ipid = -1, iout = -1, ierr = -1, iin = -1, icancel = -1, iun = -1, nun = 0;
		double now = now_ms(), left = deadline - now;
		struct timespec ts;
		bool exited = false;

		if (left <= 0) {
			siginfo_t si = {};

			/* Ended on its own since the last look: an exit, not the deadline's kill. */
			if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) == 0 && si.si_pid == pid)
				break;
			timed_out = true;
			break;
		}
		if (want_watchdog && wd.pid < 0) {
			if (now - t0 >= WATCHDOG_DELAY_MS)
				watchdog_start(sp->run, &wd);
			else if (left > WATCHDOG_DELAY_MS - (now - t0))
				left = WATCHDOG_DELAY_MS - (now - t0);
			if (wd.pid < 0 && now - t0 >= WATCHDOG_DELAY_MS)
				want_watchdog = false; /* could not start one: go on without */
		}
		if (pin.on) {
			if (now - t0 >= PIN_MS)
				pin_end(&pin);
			else if (left > PIN_MS - (now - t0))
				left = PIN_MS - (now - t0);
		}
		if (pidfd >= 0) {
			ipid = np;
			pf[np++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
		} else if (left > 10) {
			left = 10; /* no pidfd (Linux < 5.3): poll the child */
		}
		if (now - last_reap >= ORPHAN_REAP_MS) {
			reap_orphans(pid, &owner, &tally);
			last_reap = now;
		}
		if (left > ORPHAN_REAP_MS)
			left = ORPHAN_REAP_MS;
		if (interactive && left > TTY_POLL_MS)
			left = TTY_POLL_MS;
		if (out.fd >= 0) {
			iout = np;
			pf[np++] = (struct pollfd){ .fd = out.fd, .events = POLLIN };
		}
		if (errs.fd >= 0) {
			ierr = np;
			pf[np++] = (struct pollfd){ .fd = errs.fd, .events = POLLIN };
		}
		if (in_w >= 0) {
			iin = np;
			pf[np++] = (struct pollfd){ .fd = in_w, .events = POLLOUT };
		}
		if (opts->sz >= offsetof(struct corral_exec_opts, cancel_fd) + sizeof(int) &&
		    opts->has_cancel_fd && opts->cancel_fd >= 0) {
			icancel = np;
			pf[np++] = (struct pollfd){ .fd = opts->cancel_fd, .events = POLLIN };
		}
		if (un && now - t0 < UNOTIFY_GRACE_MS) {
			if (left > UNOTIFY_GRACE_MS - (now - t0))
				left = UNOTIFY_GRACE_MS - (now - t0);
		} else if (un) {
			iun = np;
			nun = corral_unotify_pollfds(un, pf + np);
			np += nun;
		}
		ts.tv_sec = (time_t)(left / 1e3);
		ts.tv_nsec = (long)((left - (double)ts.tv_sec * 1e3) * 1e6);
		if (ppoll(pf, (nfds_t)np, &ts, NULL) < 0) {
			if (errno == EINTR)
				continue;
			r = corral_err(err, CORRAL_E_SETUP, errno, "poll: %s", corral_strerror(errno));
			timed_out = false;
			break;
		}
		if (icancel >= 0 && pf[icancel].revents) {
			cancelled = true;
			break;
		}
		if (nun > 0)
			corral_unotify_handle(un, pf + iun, nun);
		if (iout >= 0 && pf[iout].revents)
			stream_read(&out);
		if (ierr >= 0 && pf[ierr].revents)
			stream_read(&errs);
		if (iin >= 0 && pf[iin].revents) {
			if (pf[iin].revents & (POLLERR | POLLHUP)) {
				in_w = safe_close(in_w);
			} else {
				sigset_t pipe_set, prev;
				struct timespec zero = {};

				/* No SIGPIPE for the host: block it, and consume one we caused. */
				sigemptyset(&pipe_set);
				sigaddset(&pipe_set, SIGPIPE);
				pthread_sigmask(SIG_BLOCK, &pipe_set, &prev);
				n = write(in_w, in_data + in_off, in_len - in_off);
				if (n < 0 && errno == EPIPE)
					sigtimedwait(&pipe_set, NULL, &zero);
				pthread_sigmask(SIG_SETMASK, &prev, NULL);
				if (n > 0)
					in_off += (size_t)n;
				if ((n < 0 && errno != EAGAIN && errno != EINTR) || in_off >= in_len)
					in_w = safe_close(in_w);
			}
		}
		if (ipid >= 0) {
			exited = pf[ipid].revents != 0;
		} else {
			siginfo_t si = {};
			exited = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) == 0 &&
				 si.si_pid == pid;
		}
		if (exited)
			break;
		if (interactive)
			tty_watch(&tty, pid, ns_cmd, rep_r, &ns_done);
	}

	/* What the main process wrote before it ended. */
	while (stream_read(&out) == READ_MORE)
		;
	while (stream_read(&errs) == READ_MORE)
		;

	if (timed_out && sp->on_deadline)
		sp->on_deadline(sp->hook_arg);

	/* Kill the tree: main (at the deadline), its process group, its cgroup. */
	if (timed_out || cancelled || r < 0) {
		if (pidfd < 0 || syscall(__NR_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) < 0)
			kill(pid, SIGKILL);
	}
	kill(-pid, SIGKILL);
	/*
	 * With a pids cgroup, one task left is the main process itself (a
	 * zombie, or killed above and no longer able to fork): nothing else of
	 * the run exists, so there is nothing to kill and, below, nothing to
	 * sweep. That saves a /proc walk and a cgroup.procs read per run.
	 */
	if (sp->run && sp->confine && sp->confine->cgroup_holds_tree)
		only_main = corral_cgroup_tasks(sp->run) == 1;
	if (sp->run && !only_main)
		corral_cgroup_kill(sp->run);
	/* Mediated calls still waiting get no answer: their callers are being killed. */
	corral_unotify_free(un);
	un = NULL;

	{
		pid_t w;

		while ((w = wait4(pid, &status, __WALL, &ru)) < 0 && errno == EINTR)
			;
		if (w == pid) {
			tally_add(&tally, &ru);
			/*
			 * Exited on its own between that look and the deadline's kill:
			 * nothing killed it, so its status is the result (124 is for a
			 * command the deadline killed: DESIGN.md). Not with a deadline
			 * hook (docker): the hook's kill of the container is what makes
			 * the client exit.
			 */
			if (timed_out && WIFEXITED(status) && !sp->on_deadline)
				timed_out = false;
		} else if (r >= 0) {
			/* Someone else reaped it: its status is gone, and no result can be made up. */
			r = corral_err(err, CORRAL_E_SETUP, errno,
				       "the command's exit status was taken by another waiter: the host must not "
				       "reap children it did not start (SIGCHLD set to SIG_IGN, or waitpid(-1))");
		}
	}
	main_reaped = true;
	pthread_mutex_lock(&g_lock);
	reg_del(pid);
	pthread_mutex_unlock(&g_lock);
	tty_end(&tty);
	/*
	 * proc "private": the init's last report holds the command's own
	 * status and peak memory (the init itself is a copy of this process,
	 * whose size says nothing of the command's); none when the init was
	 * killed (the deadline), and its status is then the result.
	 */
	if (ns_flags) {
		(void)ns_reports(rep_r, &ns_done);
		if (ns_done.stage == STAGE_PIDNS_DONE) {
			status = ns_done.wstatus;
			tally.max_rss_kb = ns_done.max_rss_kb;
			if (timed_out && WIFEXITED(status) && !sp->on_deadline)
				timed_out = false;
		}
	}

	/* Descendants that left the group (setsid, double fork) are ours now. */
	if (sp->run && sp->confine && sp->confine->cgroup_holds_tree)
		for (int i = 0; i < CORRAL_CG_MAX && !owner.cg_name[0]; i++) {
			const char *slash = sp->run->cg_dir[i] ? strrchr(sp->run->cg_dir[i], '/') : NULL;

			if (slash && strlen(slash + 1) < sizeof(owner.cg_name))
				strcpy(owner.cg_name, slash + 1);
		}
	if (!only_main && !no_children())
		sweep(pid, &owner, &tally);
	watchdog_stop(&wd);

	/* Every writer is gone: read the rest (EAGAIN only if something escaped us). */
	while (stream_read(&out) == READ_MORE)
		;
	while (stream_read(&errs) == READ_MORE)
		;

	if (r < 0)
		goto finish;

	res->timed_out = timed_out;
	if (WIFEXITED(status) && !timed_out) {
		res->exited = true;
		res->exit_status = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		res->signal = WTERMSIG(status);
	}
	if (opts->capture) {
		stream_finish(&out, &res->stdout_buf, &res->stdout_len, &res->stdout_truncated);
		stream_finish(&errs, &res->stderr_buf, &res->stderr_len, &res->stderr_truncated);
	}
	res->wall_ms = now_ms() - t0;
	res->cpu_ms = tally.cpu_ms;
	res->max_rss_kb = tally.max_rss_kb;

finish:
	if (sp->on_finish)
		sp->on_finish(sp->hook_arg);
out:
	pin_end(&pin);
	watchdog_stop(&wd);
	if (pid > 0 && !main_reaped) {
		kill(pid, SIGKILL);
		while (wait4(pid, &status, __WALL, NULL) < 0 && errno == EINTR)
			;
		pthread_mutex_lock(&g_lock);
		reg_del(pid);
		pthread_mutex_unlock(&g_lock);
	}
	corral_unotify_free(un);
	safe_close(pidfd);
	safe_close(in_r);
	safe_close(in_w);
	safe_close(out_w);
	safe_close(err_w);
	safe_close(rep_r);
	safe_close(rep_w);
	safe_close(out.fd);
	safe_close(errs.fd);
	free(out.buf);
	free(errs.buf);
	free(sh_argv);
	if (r < 0)
		corral_result_clear(res);
	return r;
}
