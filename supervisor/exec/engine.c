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
#include <assert.h>
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
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "internal/clock.h"
#include "internal/fileio.h"
#include "internal/syscalls.h"
#include "supervisor/exec/engine.h"
#include "supervisor/exec/result.h"
#include "supervisor/exec/sandbox.h"
#include "supervisor/exec/stream.h"

#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif

#define CHILD_STACK_SIZE (256 * 1024)
#define CHILD_STACK_HOT (16 * 1024) /* what the child's setup touches, with room */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

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

/* Session id of |pid| (field 6 of /proc/PID/stat), or -1; its state letter in |*state| ('?' if unknown). */
static pid_t proc_sid_state(pid_t pid, char *state)
{
	char path[64], buf[1024];
	const char *p;
	int ppid, pgrp, sid;

	*state = '?';
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (corral_read_file_at(AT_FDCWD, path, 0, buf, sizeof(buf)) < 0)
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

	if (corral_read_file_at(AT_FDCWD, path, 0, buf, sizeof(buf)) < 0)
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
	_cleanup_close_ int dfd = -1;
	int found = CG_GONE;
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

		if (o->filtered && corral_read_file_at(AT_FDCWD, "/proc/self/status", 0, buf, sizeof(buf)) > 0)
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
	if (corral_read_file_at(AT_FDCWD, path, 0, buf, sizeof(buf)) < 0 || status_field(buf, "\nNoNewPrivs:") != 1)
		return false;
	min = owner_min_filters(o);
	n = status_field(buf, "\nSeccomp_filters:");
	return min < 0 || n < 0 || n >= min;
}

/*
 * The children of |pid| (0: ours), from every thread's
 * /proc/PID/task/TID/children. A read that starts while the list is
 * non-empty returns at least one pid, so an empty answer means there was,
 * at that instant, no child.
 */
static size_t list_children_of(pid_t pid, pid_t *out, size_t max)
{
	char buf[8192], path[96];
	size_t n = 0;
	_cleanup_close_ int dfd = -1;
	long nread;

	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dfd = open(pid > 0 ? path : "/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
			if (pid > 0)
				snprintf(path, sizeof(path), "/proc/%d/task/%s/children", (int)pid, d->name);
			else
				snprintf(path, sizeof(path), "/proc/self/task/%s/children", d->name);
			if (corral_read_file_at(AT_FDCWD, path, 0, cbuf, sizeof(cbuf)) <= 0)
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
	return n;
}

static size_t list_children(pid_t *out, size_t max)
{
	return list_children_of(0, out, max);
}

struct tally {
	double cpu_ms;
	long max_rss_kb;
};

static double ru_cpu_ms(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec * 1e3 + (double)ru->ru_utime.tv_usec / 1e3 +
	       (double)ru->ru_stime.tv_sec * 1e3 + (double)ru->ru_stime.tv_usec / 1e3;
}

static void tally_add(struct tally *t, const struct rusage *ru)
{
	t->cpu_ms += ru_cpu_ms(ru);
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

/*
 * Is |kid|, a child of ours, a process of this run (whose main process
 * was |sid|)? Called with g_lock held. |*state|: its state letter.
 */
static bool kid_is_ours(pid_t kid, pid_t sid, struct owner_test *o, char *state)
{
	int cg = CG_NONE;
	pid_t s;

	*state = '?';
	if (reg_is_main(kid))
		return false;
	s = proc_sid_state(kid, state);
	/*
	 * With cgroups holding the tree: in ours, ours; in another run's,
	 * never (its setsid daemon lives on); in none (exiting, or a real
	 * zombie), the test below.
	 */
	if (o->cg_name[0] && s != sid)
		cg = *state != 'Z' ? proc_cgroup_state(kid, o->cg_name) : threads_cgroup_state(kid, o->cg_name);
	return s == sid || cg == CG_OURS || (cg != CG_OTHER && !reg_is_other_sid(s, sid) && proc_confined(kid, o));
}

/*
 * How many processes of the run are alive now that its main process has
 * exited (before anything is killed): the children of ours that are the
 * run's (the main process's children came to us when it exited) and all
 * their descendants, zombies not counted; at most LEFTOVERS_MAX.
 */
#define LEFTOVERS_MAX 4096
static unsigned count_leftovers(pid_t sid, struct owner_test *o)
{
	_cleanup_free_ pid_t *q = malloc(LEFTOVERS_MAX * sizeof(*q));
	size_t n, head = 0, tail = 0;
	unsigned alive = 0;
	char state;

	if (!q)
		return 0;
	pthread_mutex_lock(&g_lock);
	n = list_children(q, LEFTOVERS_MAX);
	for (size_t i = 0; i < n; i++)
		if (q[i] != sid && kid_is_ours(q[i], sid, o, &state))
			q[tail++] = q[i];
	pthread_mutex_unlock(&g_lock);
	/* Breadth first: every process once (a tree), descendants through /proc/PID/task/TID/children. */
	while (head < tail) {
		pid_t p = q[head++];

		proc_sid_state(p, &state);
		if (state != 'Z' && state != 'X' && state != '?')
			alive++;
		tail += list_children_of(p, q + tail, LEFTOVERS_MAX - tail);
	}
	return alive;
}

static void sweep(pid_t sid, struct owner_test *o, struct tally *t)
{
	pid_t kids[512], mine[512];

	pthread_mutex_lock(&g_lock);
	for (int round = 0; round < 100000; round++) {
		size_t n = list_children(kids, ARRAY_SIZE(kids)), m = 0;

		for (size_t i = 0; i < n; i++) {
			char state;

			if (kid_is_ours(kids[i], sid, o, &state))
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
	assert(wd->fd >= 0);
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

/*
 * One run of the engine: the state its steps share. corral_engine_run
 * calls them in order —
 *
 *   run_pipes      stdin, the output pipes, the child's report pipe
 *   run_spawn      clone the child; its report (did it reach execve?)
 *   run_poll_once  one turn of the event loop, until the main process
 *                  ends, the deadline passes, the run is cancelled, or
 *                  poll fails
 *   run_kill_tree  the deadline hook, then SIGKILL to main (when it did
 *                  not end by itself), its group and its cgroups
 *   run_collect    reap main, sweep what was re-parented to us, read
 *                  what the streams still hold
 *   run_done       fill the result, once
 *
 * — and run_release, the one way out, frees whatever the steps left.
 * |r| is 0 until corral itself fails (a negative errno, |err| filled);
 * the steps after a failure only tear down.
 */
struct run {
	const struct corral_spawn *sp;
	const struct corral_exec_opts *opts;
	struct corral_result *res;
	struct corral_error *err;
	int r;

	/* Pipes: the parent's ends, and the child's until it has them. */
	int in_r, in_w, out_w, err_w, rep_r, rep_w, pidfd;
	size_t in_off; /* bytes of opts->stdin_data written */
	struct corral_stream out, errs;

	struct corral_child child;
	char **sh_argv;
	void *stack;
	struct corral_child_report rep; /* rep.err: setup or execve failed in the child */
	pid_t pid;                      /* the main process, once cloned */
	/*
	 * proc "private": the clone flags of the namespace's init (the main
	 * process then, child.c), the command's pid when the run is
	 * interactive, and the init's last report.
	 */
	int ns_flags;
	pid_t ns_cmd;
	struct corral_child_report ns_done;
	bool main_reaped;
	int status;                     /* its wait status, once reaped */
	double main_cpu_ms;             /* its CPU time (and its reaped children's), once reaped */

	double t0, deadline, last_reap;
	bool interactive, timed_out, cancelled;
	bool want_watchdog, only_main;
	unsigned leftovers;             /* processes alive when main exited by itself, then killed */
	struct tty tty;
	struct pin pin;
	struct watchdog wd;
	struct corral_unotify *un;
	struct owner_test owner;
	struct tally tally;
};

/* stdin: bytes through a pipe, corral's own, or /dev/null; then the output pipes and the report pipe. */
static int run_pipes(struct run *run)
{
	const struct corral_exec_opts *opts = run->opts;
	const struct corral_sandbox *sb = run->sp->confine;
	bool give = sb && sb->switch_identity; /* the command's ends go to the command's uid */
	struct corral_error *err = run->err;
	int p[2];

	if (opts->stdin_data) {
		if (pipe2(p, O_CLOEXEC) < 0)
			return corral_err(err, CORRAL_E_SETUP, errno, "stdin pipe: %s", corral_strerror(errno));
		run->in_r = p[0];
		run->in_w = p[1];
		if (give && fchown(run->in_r, sb->uid, sb->gid) < 0)
			return corral_err(err, CORRAL_E_SETUP, errno, "stdin pipe: fchown: %s", corral_strerror(errno));
		fcntl(run->in_w, F_SETFL, O_NONBLOCK);
		if (opts->stdin_len == 0)
			run->in_w = safe_close(run->in_w);
	} else if (!opts->stdin_passthrough) {
		run->in_r = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (run->in_r < 0)
			return corral_err(err, CORRAL_E_SETUP, errno, "/dev/null: %s", corral_strerror(errno));
	} else if (!opts->capture && isatty(0) && tcgetpgrp(0) == getpgrp()) {
		/* A person at a terminal: keep job control and Ctrl-C working. */
		run->interactive = true;
		tty_begin(&run->tty);
	}

	if (opts->capture) {
		if (pipe2(p, O_CLOEXEC) < 0)
			return corral_err(err, CORRAL_E_SETUP, errno, "stdout pipe: %s", corral_strerror(errno));
		corral_stream_init(&run->out, p[0], opts->max_output);
		run->out_w = p[1];
		if (pipe2(p, O_CLOEXEC) < 0)
			return corral_err(err, CORRAL_E_SETUP, errno, "stderr pipe: %s", corral_strerror(errno));
		corral_stream_init(&run->errs, p[0], opts->max_output);
		run->err_w = p[1];
		fcntl(run->out.fd, F_SETFL, O_NONBLOCK);
		fcntl(run->errs.fd, F_SETFL, O_NONBLOCK);
		/*
		 * A pipe is owned by its creator, mode 0600: after the switch to
		 * another identity, reopening it (/dev/stdout, /proc/self/fd/1)
		 * would be EACCES. Give the command's ends to the command's uid.
		 */
		if (give && (fchown(run->out_w, sb->uid, sb->gid) < 0 || fchown(run->err_w, sb->uid, sb->gid) < 0))
			return corral_err(err, CORRAL_E_SETUP, errno, "output pipes: fchown: %s",
					  corral_strerror(errno));
	}

	/* Non-blocking: read once after the child released us (run_spawn; the write never fills it). */
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return corral_err(err, CORRAL_E_SETUP, errno, "error pipe: %s", corral_strerror(errno));
	run->rep_r = p[0];
	run->rep_w = p[1];
	return 0;
}

/* The run's id (128 random bits, hex) and the wall-clock time it starts. */
static void run_identify(struct corral_result *res)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char rnd[16];
	struct timespec ts;
	ssize_t n;

	do
		n = getrandom(rnd, sizeof(rnd), GRND_NONBLOCK);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(rnd)) {
		/* The pool not yet initialised (early boot) or no getrandom: still unique enough for an id. */
		_cleanup_close_ int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

		if (fd < 0 || read(fd, rnd, sizeof(rnd)) != (ssize_t)sizeof(rnd)) {
			clock_gettime(CLOCK_REALTIME, &ts);
			for (size_t i = 0; i < sizeof(rnd); i++)
				rnd[i] = (unsigned char)((ts.tv_nsec >> (i % 4 * 8)) ^ (getpid() >> (i % 3 * 8)) ^ (i * 37));
		}
	}
	for (size_t i = 0; i < sizeof(rnd); i++) {
		res->run_id[2 * i] = hex[rnd[i] >> 4];
		res->run_id[2 * i + 1] = hex[rnd[i] & 15];
	}
	res->run_id[2 * sizeof(rnd)] = '\0';
	clock_gettime(CLOCK_REALTIME, &ts);
	res->started_at_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The child's argument block: everything it needs, prepared here (it may not allocate). */
static void run_child_args(struct run *run)
{
	const struct corral_spawn *sp = run->sp;
	size_t argc = 0;

	run->child = (struct corral_child){
		.sb = sp->confine,
		.run = sp->run,
		.argv = sp->argv,
		.envp = sp->envp,
		.cwd = sp->cwd,
		.fd_in = run->in_r,
		.fd_out = run->out_w,
		.fd_err = run->err_w,
		.err_w = run->rep_w,
		.interactive = run->interactive,
		.reset_mask = true,
		.parent = getpid(),
		.rlimits = sp->rlimits,
	};
	while (sp->argv[argc])
		argc++;
	/* NULL (no fallback) if this fails: the child then reports ENOEXEC. */
	run->sh_argv = calloc(argc + 2, sizeof(*run->sh_argv));
	if (run->sh_argv) {
		run->sh_argv[0] = (char *)"/bin/sh";
		for (size_t i = 1; i < argc; i++)
			run->sh_argv[i + 1] = sp->argv[i];
		run->child.sh_argv = run->sh_argv;
	}
	for (char *const *e = sp->envp; e && *e; e++)
		if (strncmp(*e, "PATH=", 5) == 0)
			run->child.path = *e + 5;
}

/*
 * Clone the child and learn whether it reached execve: run->rep.err is
 * then 0, or what failed (STAGE_EXEC: the command could not be executed,
 * a result; any other stage: a setup error). Returns 0 once the child
 * exists, or a negative errno when it could not be started.
 */
static int run_spawn(struct run *run)
{
	sigset_t all, old;
	ssize_t n;

	assert(run->pid < 0 && run->rep_w >= 0);
	run->stack = child_stack();
	if (run->stack == MAP_FAILED)
		return corral_err(run->err, CORRAL_E_SETUP, errno, "child stack: %s", corral_strerror(errno));
	run_child_args(run);

	run_identify(run->res);
	run->t0 = corral_now_ms();
	run->deadline = run->t0 + run->opts->timeout * 1e3;
	run->last_reap = run->t0; /* nothing of this run can be an orphan yet */

	/*
	 * Every signal blocked around clone: a host handler must not run in
	 * the child on shared memory before it resets the dispositions. g_lock
	 * is held until the pid is registered, so a concurrent sweep never
	 * takes the new main process for an orphan.
	 */
	pin_begin(&run->pin);
	if (run->pin.on)
		run->child.cpus = &run->pin.cpus;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_mutex_lock(&g_lock);
	if (run->ns_flags) {
		/* The init's copy of this stack: it runs at the top, the command below the middle. */
		run->child.inner_stack_top = (char *)run->stack + CHILD_STACK_SIZE / 2;
		run->pid = clone(corral_pidns_init_main, (char *)run->stack + CHILD_STACK_SIZE,
				 run->ns_flags | SIGCHLD, &run->child);
	} else {
		run->pid = clone(corral_child_main, (char *)run->stack + CHILD_STACK_SIZE,
				 CLONE_VM | CLONE_VFORK | SIGCHLD, &run->child);
	}
	if (run->pid > 0 && reg_add(run->pid, run->pid) < 0) {
		/* Out of memory: the child already runs; kill it as a setup error. */
		kill(run->pid, SIGKILL);
		run->rep = (struct corral_child_report){ .stage = 0, .err = ENOMEM };
	}
	pthread_mutex_unlock(&g_lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (run->pid < 0 && run->ns_flags)
		return corral_err(run->err, CORRAL_E_SETUP, errno,
				  "creating the PID namespace (proc \"private\"): clone: %s; --proc host runs without",
				  corral_strerror(errno));
	if (run->pid < 0)
		return corral_err(run->err, CORRAL_E_SETUP, errno, "clone: %s", corral_strerror(errno));
	if (g_stack_key == (pthread_key_t)-1)
		munmap(run->stack, CHILD_STACK_SIZE);
	run->stack = MAP_FAILED; /* otherwise kept for this thread's next run */

	run->rep_w = safe_close(run->rep_w);
	run->in_r = safe_close(run->in_r);
	run->out_w = safe_close(run->out_w);
	run->err_w = safe_close(run->err_w);

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
	if (run->rep.err == 0 && run->ns_flags) {
		struct pollfd rp = { .fd = run->rep_r, .events = POLLIN };

		while (poll(&rp, 1, -1) < 0 && errno == EINTR)
			;
	}
	if (run->rep.err == 0) {
		do
			n = read(run->rep_r, &run->rep, sizeof(run->rep));
		while (n < 0 && errno == EINTR);
		if (n != (ssize_t)sizeof(run->rep))
			run->rep = (struct corral_child_report){ .stage = run->ns_flags ? STAGE_UNREPORTED : 0,
								 .err = run->ns_flags ? EIO : 0 };
		if (run->rep.err == 0 && !run->ns_flags && !run->child.reached_exec)
			run->rep = (struct corral_child_report){ .stage = STAGE_UNREPORTED, .err = EIO };
	}
	return 0;
}

/* The child did not reach execve: a result when the exec itself failed, else corral's error. */
static int run_child_failed(struct run *run)
{
	const struct corral_child_report *rep = &run->rep;

	assert(rep->err != 0);
	if (rep->stage == STAGE_EXEC)
		return 0;
	if (rep->stage == STAGE_UNREPORTED)
		return corral_err(run->err, CORRAL_E_SETUP, 0,
				  "child setup failed before execve and could not report why "
				  "(a limit too small for setup itself, e.g. --memory or --open-files?)");
	return corral_err(run->err, CORRAL_E_SETUP, rep->err, "%s: %s",
			  rep->stage ? corral_child_stage_name(rep->stage) : "registering the run",
			  corral_strerror(rep->err));
}

/* After the main process started: its pidfd, the watchdog's due, the Unix-socket mediation. */
static void run_started(struct run *run)
{
	const struct corral_run *cr = run->sp->run;

	run->pidfd = (int)syscall(__NR_pidfd_open, run->pid, 0);
	/* An interactive run in a PID namespace: the command is the init's one child, here. */
	if (run->interactive && run->ns_flags) {
		char path[96], buf[64];

		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)run->pid, (int)run->pid);
		if (corral_read_file_at(AT_FDCWD, path, 0, buf, sizeof(buf)) > 0)
			run->ns_cmd = (pid_t)atoi(buf);
	}
	for (int i = 0; cr && i < CORRAL_CG_MAX; i++)
		if (cr->cg_dir[i])
			run->want_watchdog = true;
	/* Unix-socket mediation: the listener the child sent before execve. */
	if (cr && cr->un_parent >= 0)
		run->un = corral_unotify_start(run->sp->confine, cr, cr->un_parent);
	/* The run's cgroup name, when nothing of the run can leave it: how the sweep tells its processes. */
	if (cr && run->sp->confine && run->sp->confine->cgroup_holds_tree)
		for (int i = 0; i < CORRAL_CG_MAX && !run->owner.cg_name[0]; i++) {
			const char *slash = cr->cg_dir[i] ? strrchr(cr->cg_dir[i], '/') : NULL;

			if (slash && strlen(slash + 1) < sizeof(run->owner.cg_name))
				strcpy(run->owner.cg_name, slash + 1);
		}
}

/* The poll set of one turn of the event loop, and where each fd sits in it (-1: absent). */
struct poll_set {
	struct pollfd pf[5 + CORRAL_UNOTIFY_MAX_POLLFDS];
	int n, ipid, iout, ierr, iin, icancel, iun, nun;
};

static void poll_add(struct poll_set *ps, int *idx, int fd, short events)
{
	assert(ps->n < (int)ARRAY_SIZE(ps->pf));
	*idx = ps->n;
	ps->pf[ps->n++] = (struct pollfd){ .fd = fd, .events = events };
}

/*
 * The timers of the run (watchdog, CPU pin, orphan reaping) and the poll
 * set of this turn; |*left| (ms) shrinks to the next timer's due.
 */
static void run_poll_prepare(struct run *run, struct poll_set *ps, double now, double *left)
{
	const struct corral_exec_opts *opts = run->opts;
	double ran = now - run->t0;

	*ps = (struct poll_set){ .ipid = -1, .iout = -1, .ierr = -1, .iin = -1, .icancel = -1, .iun = -1 };
	if (run->want_watchdog && run->wd.pid < 0) {
		if (ran >= WATCHDOG_DELAY_MS)
			watchdog_start(run->sp->run, &run->wd);
		else if (*left > WATCHDOG_DELAY_MS - ran)
			*left = WATCHDOG_DELAY_MS - ran;
		if (run->wd.pid < 0 && ran >= WATCHDOG_DELAY_MS)
			run->want_watchdog = false; /* could not start one: go on without */
	}
	if (run->pin.on) {
		if (ran >= PIN_MS)
			pin_end(&run->pin);
		else if (*left > PIN_MS - ran)
			*left = PIN_MS - ran;
	}
	if (run->pidfd >= 0)
		poll_add(ps, &ps->ipid, run->pidfd, POLLIN);
	else if (*left > 10)
		*left = 10; /* no pidfd (Linux < 5.3): poll the child */
	if (now - run->last_reap >= ORPHAN_REAP_MS) {
		reap_orphans(run->pid, &run->owner, &run->tally);
		run->last_reap = now;
	}
	if (*left > ORPHAN_REAP_MS)
		*left = ORPHAN_REAP_MS;
	if (run->interactive && *left > TTY_POLL_MS)
		*left = TTY_POLL_MS;
	if (run->out.fd >= 0)
		poll_add(ps, &ps->iout, run->out.fd, POLLIN);
	if (run->errs.fd >= 0)
		poll_add(ps, &ps->ierr, run->errs.fd, POLLIN);
	if (run->in_w >= 0)
		poll_add(ps, &ps->iin, run->in_w, POLLOUT);
	if (opts->sz >= offsetof(struct corral_exec_opts, cancel_fd) + sizeof(int) && opts->has_cancel_fd &&
	    opts->cancel_fd >= 0)
		poll_add(ps, &ps->icancel, opts->cancel_fd, POLLIN);
	if (run->un && ran < UNOTIFY_GRACE_MS) {
		if (*left > UNOTIFY_GRACE_MS - ran)
			*left = UNOTIFY_GRACE_MS - ran;
	} else if (run->un) {
		ps->iun = ps->n;
		ps->nun = corral_unotify_pollfds(run->un, ps->pf + ps->n);
		ps->n += ps->nun;
	}
}

/* Feed opts->stdin_data to the command, as much as the pipe takes now. */
static void run_feed_stdin(struct run *run, short revents)
{
	const struct corral_exec_opts *opts = run->opts;
	sigset_t pipe_set, prev;
	struct timespec zero = {};
	ssize_t n;

	if (revents & (POLLERR | POLLHUP)) {
		run->in_w = safe_close(run->in_w);
		return;
	}
	/* No SIGPIPE for the host: block it, and consume one we caused. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &prev);
	n = write(run->in_w, (const char *)opts->stdin_data + run->in_off, opts->stdin_len - run->in_off);
	if (n < 0 && errno == EPIPE)
		sigtimedwait(&pipe_set, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &prev, NULL);
	if (n > 0)
		run->in_off += (size_t)n;
	if ((n < 0 && errno != EAGAIN && errno != EINTR) || run->in_off >= opts->stdin_len)
		run->in_w = safe_close(run->in_w);
}

static bool main_exited(pid_t pid)
{
	siginfo_t si = {};

	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) == 0 && si.si_pid == pid;
}

/*
 * One turn of the event loop. Returns true while the run goes on; false
 * once the main process exited, the deadline passed (timed_out), the run
 * was cancelled (cancelled), or poll failed (r).
 */
static bool run_poll_once(struct run *run)
{
	struct poll_set ps;
	double now = corral_now_ms(), left = run->deadline - now;
	struct timespec ts;

	if (left <= 0) {
		/* Ended on its own since the last look: an exit, not the deadline's kill. */
		run->timed_out = !main_exited(run->pid);
		return false;
	}
	run_poll_prepare(run, &ps, now, &left);
	ts.tv_sec = (time_t)(left / 1e3);
	ts.tv_nsec = (long)((left - (double)ts.tv_sec * 1e3) * 1e6);
	if (ppoll(ps.pf, (nfds_t)ps.n, &ts, NULL) < 0) {
		if (errno == EINTR)
			return true;
		run->r = corral_err(run->err, CORRAL_E_SETUP, errno, "poll: %s", corral_strerror(errno));
		return false;
	}
	if (ps.icancel >= 0 && ps.pf[ps.icancel].revents) {
		run->cancelled = true;
		return false;
	}
	if (ps.nun > 0)
		corral_unotify_handle(run->un, ps.pf + ps.iun, ps.nun);
	if (ps.iout >= 0 && ps.pf[ps.iout].revents)
		corral_stream_read(&run->out);
	if (ps.ierr >= 0 && ps.pf[ps.ierr].revents)
		corral_stream_read(&run->errs);
	if (ps.iin >= 0 && ps.pf[ps.iin].revents)
		run_feed_stdin(run, ps.pf[ps.iin].revents);
	if (ps.ipid >= 0 ? ps.pf[ps.ipid].revents != 0 : main_exited(run->pid))
		return false;
	if (run->interactive)
		tty_watch(&run->tty, run->pid, run->ns_cmd, run->rep_r, &run->ns_done);
	return true;
}

/* Read what the streams hold (all of it, once every writer is gone). */
static void run_drain(struct run *run)
{
	while (corral_stream_read(&run->out) == CORRAL_STREAM_MORE)
		;
	while (corral_stream_read(&run->errs) == CORRAL_STREAM_MORE)
		;
}

/*
 * The main process ended, or must: the deadline hook, then the tree
 * killed — main (unless it ended by itself), its process group, its
 * cgroups.
 */
static void run_kill_tree(struct run *run)
{
	const struct corral_spawn *sp = run->sp;

	bool ended = !(run->timed_out || run->cancelled || run->r < 0); /* by itself */

	assert(run->pid > 0 && !run->main_reaped);
	if (run->timed_out && sp->on_deadline)
		sp->on_deadline(sp->hook_arg);
	if (!ended) {
		if (run->pidfd < 0 || syscall(__NR_pidfd_send_signal, run->pidfd, SIGKILL, NULL, 0) < 0)
			kill(run->pid, SIGKILL);
	}
	/*
	 * With a pids cgroup, one task left is the main process itself (a
	 * zombie, or killed above and no longer able to fork): nothing else of
	 * the run exists, so there is nothing to kill and, below, nothing to
	 * sweep or count. That saves a /proc walk and a cgroup.procs read per run.
	 */
	if (sp->run && sp->confine && sp->confine->cgroup_holds_tree)
		run->only_main = corral_cgroup_tasks(sp->run) == 1;
	/* What the command left running (a server started with &), counted before it is killed. */
	if (ended && !run->only_main)
		run->leftovers = count_leftovers(run->pid, &run->owner);
	kill(-run->pid, SIGKILL);
	if (sp->run && !run->only_main)
		corral_cgroup_kill(sp->run);
	/* Mediated calls still waiting get no answer: their callers are being killed. */
	corral_unotify_free(run->un);
	run->un = NULL;
}

/* Reap the main process (its status in run->status); false when another waiter took it. */
static bool run_reap_main(struct run *run)
{
	struct rusage ru;
	pid_t w;

	assert(run->pid > 0 && !run->main_reaped);
	while ((w = wait4(run->pid, &run->status, __WALL, &ru)) < 0 && errno == EINTR)
		;
	if (w == run->pid) {
		tally_add(&run->tally, &ru);
		run->main_cpu_ms = ru_cpu_ms(&ru);
	}
	run->main_reaped = true;
	pthread_mutex_lock(&g_lock);
	reg_del(run->pid);
	pthread_mutex_unlock(&g_lock);
	tty_end(&run->tty);
	/*
	 * proc "private": the init's last report holds the command's own
	 * status, peak memory and the leftovers the init killed (the init is a
	 * copy of this process, whose size says nothing of the command's);
	 * none when the init was killed (the deadline): its status is then
	 * the result.
	 */
	if (run->ns_flags && w == run->pid) {
		(void)ns_reports(run->rep_r, &run->ns_done);
		if (run->ns_done.stage == STAGE_PIDNS_DONE) {
			run->status = run->ns_done.wstatus;
			run->tally.max_rss_kb = run->ns_done.max_rss_kb;
			run->leftovers += run->ns_done.leftovers;
			if (run->timed_out && WIFEXITED(run->status) && !run->sp->on_deadline)
				run->timed_out = false;
		}
	}
	return w == run->pid;
}

/* Reap main and sweep what is left of the tree; the rest of the output. */
static void run_collect(struct run *run)
{
	const struct corral_spawn *sp = run->sp;
	struct owner_test *o = &run->owner;

	if (run_reap_main(run)) {
		/*
		 * Exited on its own between that look and the deadline's kill:
		 * nothing killed it, so its status is the result (124 is for a
		 * command the deadline killed: DESIGN.md). Not with a deadline
		 * hook (docker): the hook's kill of the container is what makes
		 * the client exit.
		 */
		if (run->timed_out && WIFEXITED(run->status) && !sp->on_deadline)
			run->timed_out = false;
	} else if (run->r >= 0) {
		/* Someone else reaped it: its status is gone, and no result can be made up. */
		run->r = corral_err(run->err, CORRAL_E_SETUP, errno,
				    "the command's exit status was taken by another waiter: the host must not "
				    "reap children it did not start (SIGCHLD set to SIG_IGN, or waitpid(-1))");
	}

	/* Descendants that left the group (setsid, double fork) are ours now. */
	if (!run->only_main && !no_children())
		sweep(run->pid, o, &run->tally);
	watchdog_stop(&run->wd);

	/* Every writer is gone: read the rest (EAGAIN only if something escaped us). */
	run_drain(run);
}

/* The command could not be executed: its exit code (126/127) and the shell's line on stderr. */
static void run_exec_error(struct run *run)
{
	struct corral_result *res = run->res;
	struct corral_child_report *rep = &run->rep;

	assert(rep->stage == STAGE_EXEC);
	res->exited = true;
	res->exec_errno = rep->err;
	res->exit_status = stage_exit_code(rep->err);
	if (rep->has_interp) {
		/* The command exists but cannot be executed: 126 (DESIGN.md). */
		rep->interp[sizeof(rep->interp) - 1] = 0;
		res->exec_interp = strdup(rep->interp); /* NULL on ENOMEM: plain "not found", 127 */
		if (rep->err == ENOENT)
			res->exit_status = res->exec_interp ? 126 : 127;
	}
	if (run->opts->capture) {
		char msg[512];
		int len = corral_exec_error_line(res, run->sp->argv[0], msg, sizeof(msg));

		if (len < 0)
			len = 0;
		else if ((size_t)len >= sizeof(msg))
			len = (int)sizeof(msg) - 1;
		corral_stream_set(&run->errs, msg, (size_t)len);
	}
}

/*
 * Which limit ended the run, as far as the kernel says: the memory
 * cgroup's OOM kills (a process of the run killed, and the command did
 * not then exit 0), SIGXCPU or SIGKILL once the main process's CPU time
 * reached RLIMIT_CPU (a signal sent by anyone else comes with less),
 * SIGXFSZ under RLIMIT_FSIZE.
 */
static const char *run_ended_by(const struct run *run)
{
	const struct corral_spawn *sp = run->sp;
	const struct corral_spawn_rlimits *rl = sp->rlimits;
	int st = run->status, sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;

	if (run->cancelled)
		return "cancelled";
	if (run->timed_out)
		return "timeout";
	if (run->rep.err || (WIFEXITED(st) && WEXITSTATUS(st) == 0))
		return "exit";
	if (sp->run && sp->confine && corral_cgroup_oom_kills(sp->confine, sp->run) > 0)
		return "memory";
	/*
	 * The kernel checks RLIMIT_CPU against its tick-sampled CPU time,
	 * which on a virtual machine runs up to a fifth ahead of what wait4
	 * reports (measured: SIGXCPU at 0.9 s of rusage for a 1 s limit, 1.6 s
	 * for 2 s): half the limit tells a limit's signal from one sent by
	 * another process to a command that had hardly run.
	 */
	if ((sig == SIGXCPU || sig == SIGKILL) && rl && rl->set[RLIMIT_CPU] &&
	    run->main_cpu_ms >= (double)rl->rl[RLIMIT_CPU].rlim_cur * 1e3 / 2)
		return "cpu";
	if (sig == SIGXFSZ && rl && rl->set[RLIMIT_FSIZE])
		return "file_size";
	return sig ? "signal" : "exit";
}

/* Fill the result: how the command ended, its output, its cost. */
static void run_done(struct run *run)
{
	struct corral_result *res = run->res;

	assert(run->r == 0 && run->main_reaped);
	if (run->rep.err) {
		run_exec_error(run);
	} else {
		res->timed_out = run->timed_out;
		if (WIFEXITED(run->status) && !run->timed_out) {
			res->exited = true;
			res->exit_status = WEXITSTATUS(run->status);
		} else if (WIFSIGNALED(run->status)) {
			res->signal = WTERMSIG(run->status);
		}
	}
	res->ended_by = run_ended_by(run);
	res->leftovers_killed = run->leftovers;
	if (run->opts->capture) {
		corral_stream_finish(&run->out, &res->stdout_buf, &res->stdout_len, &res->stdout_truncated,
				     &res->stdout_bytes);
		corral_stream_finish(&run->errs, &res->stderr_buf, &res->stderr_len, &res->stderr_truncated,
				     &res->stderr_bytes);
	}
	res->wall_ms = corral_now_ms() - run->t0;
	res->cpu_ms = run->tally.cpu_ms;
	res->max_rss_kb = run->tally.max_rss_kb;
}

/* The one way out: whatever the steps left behind, released; the result cleared on corral's own error. */
static void run_release(struct run *run)
{
	int *const fds[] = { &run->pidfd, &run->in_r, &run->in_w, &run->out_w, &run->err_w, &run->rep_r, &run->rep_w };

	pin_end(&run->pin);
	watchdog_stop(&run->wd);
	if (run->pid > 0 && !run->main_reaped) {
		kill(run->pid, SIGKILL);
		while (wait4(run->pid, &run->status, __WALL, NULL) < 0 && errno == EINTR)
			;
		pthread_mutex_lock(&g_lock);
		reg_del(run->pid);
		pthread_mutex_unlock(&g_lock);
	}
	corral_unotify_free(run->un);
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		*fds[i] = safe_close(*fds[i]);
	corral_stream_free(&run->out);
	corral_stream_free(&run->errs);
	free(run->sh_argv);
	if (run->r < 0)
		corral_result_clear(run->res);
}

int corral_engine_run(const struct corral_spawn *sp, const struct corral_exec_opts *opts,
		      struct corral_result *res, struct corral_error *err)
{
	struct run run = {
		.sp = sp, .opts = opts, .res = res, .err = err,
		.in_r = -1, .in_w = -1, .out_w = -1, .err_w = -1, .rep_r = -1, .rep_w = -1, .pidfd = -1,
		.out = { .fd = -1 }, .errs = { .fd = -1 },
		.stack = MAP_FAILED, .pid = -1,
		/* proc "private": the main process is the namespace's init (child.c), not the command. */
		.ns_flags = sp->confine ? corral_procns_clone_flags(&sp->confine->procns) : 0,
		.wd = { .pid = -1, .fd = -1 },
		.owner = {
			.confined = sp->confine != NULL,
			.filtered = sp->confine && (sp->confine->have_bpf || sp->confine->unotify),
		},
	};
	int e = subreaper_init();

	if (e)
		return corral_err(err, CORRAL_E_SETUP, e, "PR_SET_CHILD_SUBREAPER: %s", corral_strerror(e));
	assert(res->sz >= CORRAL_RESULT_SZ_MIN);
	corral_result_reset(res);
	res->provider = sp->provider ? sp->provider : "local";

	run.r = run_pipes(&run);
	if (run.r == 0)
		run.r = run_spawn(&run);
	if (run.r == 0 && run.rep.err) {
		run_reap_main(&run);
		run.r = run_child_failed(&run);
	} else if (run.r == 0) {
		run_started(&run);
		while (run_poll_once(&run))
			;
		/* What the main process wrote before it ended. */
		run_drain(&run);
		run_kill_tree(&run);
		run_collect(&run);
	}
	if (run.r == 0)
		run_done(&run);
	if (run.pid > 0 && sp->on_finish)
		sp->on_finish(sp->hook_arg);
	run_release(&run);
	return run.r;
}
