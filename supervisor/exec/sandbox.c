/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sandbox object: built once from a policy (root opened, identity
 * decided, Landlock plan, seccomp BPF, environment, cgroup parents), then
 * any number of runs through corral_sandbox_exec — thread-safe, because
 * each run keeps its own state in a struct corral_run and only reads |sb|.
 */
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal/timefmt.h"
#include "supervisor/exec/audit.h"
#include "supervisor/docker/docker.h"
#include "supervisor/exec/engine.h"
#include "supervisor/exec/result.h"
#include "supervisor/exec/sandbox.h"
#include "internal/hostpath.h"

#define DEFAULT_TIMEOUT 30.0
#define DEFAULT_OUTPUT (1024 * 1024)

/*
 * The /proc walk behind RLIMIT_NPROC costs about as much as the rest of
 * the setup together, so it runs in a thread alongside it; the first run
 * takes its count.
 *
 * The count is waited for without pthread_join. Under `corral run` the
 * thread belongs to the top process and the supervisor process (a
 * CLONE_VM child) waits for it, and when the top process is killed
 * (SIGKILL) the thread dies with it, unfinished. glibc's pthread_join
 * returns even then (it waits on the thread id the kernel clears), musl's
 * waits forever (on a word only a finishing thread writes). So the thread
 * stores its count and a done word (a futex), and count_wait stops
 * waiting when the thread is gone (tgkill 0: ESRCH), when the run is
 * cancelled, when the waiter is a fork of the thread's process (its copy
 * of the done word never changes), or when the thread has not even
 * started after COUNT_PATIENCE_MS. The thread writes nothing but its job,
 * and is joined by the process that started it (corral_sandbox_free).
 */
#define COUNT_PATIENCE_MS 2000
#define COUNT_GONE (-2L)
#define COUNT_CANCELLED (-3L)

/* Bumped in the child of every fork(): a job of an older generation is the parent's. */
static unsigned g_fork_generation;
static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;

/*
 * The first count's lock (nproc_base) is process-wide, and a fork starts
 * with it free: the fork's copy may be held by a thread it does not have
 * (engine.c's atfork_child does the same for its lock; only the forking
 * thread exists there). A count job of the parent's generation then
 * answers COUNT_GONE, and the fork counts for itself.
 */
static pthread_mutex_t g_nproc_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * A count started before any sandbox exists (the CLI starts it first
 * thing, so the walk overlaps its option parsing too), handed to the
 * first sandbox that needs the same uid's count; joined by the first
 * sandbox freed otherwise (corral run's top process relies on having no
 * other thread left once its sandbox is freed).
 */
static struct {
	pthread_mutex_t lock;
	bool started, claimed;
	pthread_t thread;
	struct corral_count_job job;
} g_prefetch = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void on_fork_child(void)
{
	g_fork_generation++;
	pthread_mutex_init(&g_nproc_lock, NULL);
	pthread_mutex_init(&g_prefetch.lock, NULL);
}

static void register_atfork(void)
{
	(void)pthread_atfork(NULL, NULL, on_fork_child);
}

static void *count_thread(void *arg)
{
	struct corral_count_job *job = arg;
	long n;

	__atomic_store_n(&job->tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	n = corral_count_uid_tasks(job->uid, 0);
	job->count = n;
	__atomic_store_n(&job->done, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &job->done, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	return NULL;
}

static int count_start(struct corral_count_job *job, pthread_t *thread, uid_t uid)
{
	pthread_once(&g_atfork_once, register_atfork);
	*job = (struct corral_count_job){ .uid = uid, .tgid = getpid(), .generation = g_fork_generation };
	return pthread_create(thread, NULL, count_thread, job);
}

/* The job's count, or COUNT_GONE / COUNT_CANCELLED when it will not come (see above). */
static long count_wait(struct corral_count_job *job, int cancel_fd)
{
	if (job->generation != g_fork_generation)
		return COUNT_GONE;
	for (int waited = 0; !__atomic_load_n(&job->done, __ATOMIC_ACQUIRE); waited += 10) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		struct pollfd pfd = { .fd = cancel_fd, .events = POLLIN };
		int tid;

		/* A private futex: the waiter shares the thread's memory (CLONE_VM). */
		syscall(SYS_futex, &job->done, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
		if (__atomic_load_n(&job->done, __ATOMIC_ACQUIRE))
			break;
		if (cancel_fd >= 0 && poll(&pfd, 1, 0) > 0)
			return COUNT_CANCELLED;
		tid = __atomic_load_n(&job->tid, __ATOMIC_ACQUIRE);
		if (tid > 0 && syscall(SYS_tgkill, (long)job->tgid, (long)tid, 0L) < 0 && errno == ESRCH) {
			/* Gone: done (then its count stands), or killed before it. */
			if (__atomic_load_n(&job->done, __ATOMIC_ACQUIRE))
				break;
			return COUNT_GONE;
		}
		if (tid == 0 && waited >= COUNT_PATIENCE_MS)
			return COUNT_GONE;
	}
	return job->count;
}


_public_ void corral_nproc_prefetch(uid_t uid)
{
	pthread_mutex_lock(&g_prefetch.lock);
	if (!g_prefetch.started)
		g_prefetch.started = count_start(&g_prefetch.job, &g_prefetch.thread, uid) == 0;
	pthread_mutex_unlock(&g_prefetch.lock);
}

/* Not in a fork of the process that started it: the thread is not there. */
static bool prefetch_ours(void)
{
	return g_prefetch.started && !g_prefetch.claimed && g_prefetch.job.tgid == getpid() &&
	       g_prefetch.job.generation == g_fork_generation;
}

static bool prefetch_claim(uid_t uid, pthread_t *thread)
{
	bool ok;

	pthread_mutex_lock(&g_prefetch.lock);
	ok = prefetch_ours() && g_prefetch.job.uid == uid;
	if (ok) {
		g_prefetch.claimed = true;
		*thread = g_prefetch.thread;
	}
	pthread_mutex_unlock(&g_prefetch.lock);
	return ok;
}

static void prefetch_release(void)
{
	pthread_mutex_lock(&g_prefetch.lock);
	if (prefetch_ours()) {
		g_prefetch.claimed = true;
		pthread_join(g_prefetch.thread, NULL);
	}
	pthread_mutex_unlock(&g_prefetch.lock);
}

/*
 * |cancel_fd|: the run's (readable: cancelled), or -1. A cancelled run
 * gets -1 (no baseline: the run is about to be killed) and leaves the
 * count to the next run.
 */
static long nproc_base(struct corral_sandbox *sb, int cancel_fd)
{
	long v;

	pthread_mutex_lock(&g_nproc_lock);
	if (sb->nproc_pending) {
		v = count_wait(sb->nproc_job, cancel_fd);
		if (v == COUNT_CANCELLED) {
			pthread_mutex_unlock(&g_nproc_lock);
			return -1;
		}
		/* Walked here: leave out the process that started the thread too, as it did. */
		if (v == COUNT_GONE)
			v = corral_count_uid_tasks(sb->nproc_uid, sb->nproc_self);
		sb->nproc_base = v;
		sb->nproc_pending = false;
	}
	v = sb->nproc_base;
	pthread_mutex_unlock(&g_nproc_lock);
	return v;
}

/*
 * Is corral in a PID namespace other than the initial one (a container's)?
 * The initial one's /proc/self/ns/pid has a fixed inode (PROC_PID_INIT_INO).
 */
static bool in_child_pidns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) == 0 && st.st_ino != 0xEFFFFFFCU;
}

void corral_processes_posture(const struct corral_policy *p, bool uid0, bool pids_cg, struct corral_posture *ps)
{
	if (p->limits.processes == 0)
		corral_posture_add(ps, CORRAL_P_LIMITS_PROCESSES, CORRAL_PROMISE_NA,
				   "limits.processes is 0: no process limit of corral's own (no RLIMIT_NPROC, the "
				   "run's pids cgroup at max); only what bounds corral itself applies");
	else if (!uid0)
		corral_posture_add(ps, CORRAL_P_LIMITS_PROCESSES, CORRAL_PROMISE_ENFORCED, "%llu processes: %s",
				   (unsigned long long)p->limits.processes,
				   pids_cg ? "a pids cgroup per run" :
				   !in_child_pidns() ? "RLIMIT_NPROC, relative to the uid's current task count" :
				   "RLIMIT_NPROC, relative to the uid's task count in this PID namespace (a "
				   "container's); the kernel counts the uid's tasks outside it too (other "
				   "containers, the host), which lower the budget: give each container a uid of "
				   "its own (docs/deploy.md)");
	else if (pids_cg)
		corral_posture_add(ps, CORRAL_P_LIMITS_PROCESSES, CORRAL_PROMISE_ENFORCED,
				   "%llu processes: pids cgroup (uid 0 is exempt from RLIMIT_NPROC)",
				   (unsigned long long)p->limits.processes);
	else
		corral_posture_add(ps, CORRAL_P_LIMITS_PROCESSES, CORRAL_PROMISE_DROPPED,
				   "the command runs as uid 0, which RLIMIT_NPROC does not bound, and no pids "
				   "cgroup can be created here (in a container /sys/fs/cgroup is read-only): run "
				   "it as another user (--user), or --compat best-effort under the container's "
				   "--pids-limit");
}

void corral_memory_posture(const struct corral_policy *p, bool mem_cg, struct corral_posture *ps)
{
	unsigned long long m = p->limits.memory;
	char size[48];

	if (m % (1ULL << 30) == 0)
		snprintf(size, sizeof(size), "%llu GiB", m >> 30);
	else if (m % (1ULL << 20) == 0)
		snprintf(size, sizeof(size), "%llu MiB", m >> 20);
	else
		snprintf(size, sizeof(size), "%llu bytes", m);
	if (mem_cg)
		corral_posture_add(ps, CORRAL_P_LIMITS_MEMORY, CORRAL_PROMISE_ENFORCED,
				   "%s: a memory cgroup per run (the whole tree, tmpfs and memfd pages included; the "
				   "OOM killer ends the run, ended_by memory); no address-space limit, which would "
				   "break V8 and the JVM", size);
	else
		corral_posture_add(ps, CORRAL_P_LIMITS_MEMORY, CORRAL_PROMISE_ENFORCED,
				   "%s of address space per process (RLIMIT_AS); with no memory cgroup here, nothing "
				   "bounds the tree as a whole, nor shared memory kept outside an address space (memfd, "
				   "tmpfs files): the private tmp goes on disk for that: docs/threat-model.md", size);
}

bool corral_sandbox_memory_cgroup(const struct corral_sandbox *sb)
{
	return sb->use_cgroups && (sb->cg.dir[CORRAL_CG_MEMORY] || sb->cg.v2_memory);
}

static void add_supervisor_promises(struct corral_sandbox *sb)
{
	bool uid0 = sb->switch_identity ? sb->uid == 0 : geteuid() == 0;
	bool pids_cg = sb->use_cgroups && (sb->cg.dir[CORRAL_CG_PIDS] || sb->cg.v2_pids);
	bool mem_cg = corral_sandbox_memory_cgroup(sb);

	corral_posture_add(&sb->posture, CORRAL_P_PRIV_NO_NEW_PRIVS, CORRAL_PROMISE_ENFORCED,
			   "no_new_privs: setuid and file capabilities cannot raise privilege");
	corral_processes_posture(sb->policy, uid0, pids_cg, &sb->posture);
	corral_memory_posture(sb->policy, mem_cg, &sb->posture);
}

static int finish_posture(struct corral_sandbox *sb, struct corral_error *err)
{
	const struct corral_promise *d = corral_posture_first_dropped(&sb->posture);

	if (!d)
		return 0;
	if (sb->policy->compat != CORRAL_COMPAT_BEST_EFFORT)
		return corral_err(err, CORRAL_E_UNENFORCEABLE, EPERM,
				  "compat strict: promise %s cannot be kept: %s (use --compat best-effort to run anyway)",
				  d->id, d->why);
	sb->dropped = calloc(sb->posture.n + 1, sizeof(char *));
	if (!sb->dropped)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	for (size_t i = 0; i < sb->posture.n; i++) {
		const struct corral_promise *pr = &sb->posture.items[i];

		if (pr->state != CORRAL_PROMISE_DROPPED)
			continue;
		if (asprintf(&sb->dropped[sb->n_dropped], "%s: %s", pr->id, pr->why) < 0)
			return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
		sb->n_dropped++;
	}
	return 0;
}

/* Is |path| /sys or beneath it, as spelled or resolved (unless |canonical| already)? */
static bool under_sys(const char *path, bool canonical)
{
	_cleanup_free_ char *real = canonical ? strdup(path) : realpath(path, NULL);

	for (int i = 0; i < 2; i++) {
		const char *p = i ? real : path;

		if (!p)
			return i == 1; /* unresolvable: assume the worst */
		if (corral_path_contains("/sys", p))
			return true;
	}
	return false;
}

/* Unix sockets (Landlock, mediation or the filter) and the seccomp filter of the policy. */
static int build_filter(struct corral_sandbox *sb, struct corral_error *err)
{
	int handover = -1, r;

	sb->unix_mode = corral_unix_mode(sb->policy, corral_landlock_abi(), &handover, &sb->posture);
	if (handover >= 0) {
		r = corral_unotify_plan_new(sb, handover, &sb->unotify, err);
		if (r < 0)
			return r;
	}
	/* The standard policies' filters were compiled at build time. */
	r = corral_seccomp_compile_cached(sb->policy, corral_landlock_abi(),
					  sb->unix_mode == CORRAL_UNIX_MEDIATED ||
					  sb->unix_mode == CORRAL_UNIX_LANDLOCK,
					  handover, &sb->posture, &sb->bpf, err);
	if (r < 0)
		return r;
	sb->have_bpf = sb->bpf.len > 0;
	return 0;
}

/* provider "auto": the strongest that works here (docs/providers.md): docker when usable, else local. */
static int choose_provider(struct corral_sandbox *sb, struct corral_error *err)
{
	struct corral_error derr = {};

	if (sb->policy->network == CORRAL_NET_ALLOW) {
		/* Only the local provider enforces an allow list (docs/providers.md). */
		sb->policy->provider = CORRAL_PROVIDER_LOCAL;
		sb->auto_why = strdup("provider auto ran this with the local provider: network \"allow\" (the "
				      "egress proxy) is enforced by the local provider only");
		return sb->auto_why ? 0 : corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	}
	sb->policy->provider = corral_docker_usable(sb->policy, &derr) == 0 ? CORRAL_PROVIDER_DOCKER
									    : CORRAL_PROVIDER_LOCAL;
	if (sb->policy->provider == CORRAL_PROVIDER_LOCAL &&
	    asprintf(&sb->auto_why, "provider auto ran this with the local provider: %s", derr.message) < 0) {
		sb->auto_why = NULL;
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	}
	return 0;
}

/* sb->root and sb->root_fd: the policy's root, or the current directory, proven not planted. */
static int open_root(struct corral_sandbox *sb, struct corral_error *err)
{
	_cleanup_free_ char *cwd = NULL;
	_cleanup_close_ int checked_fd = -1;
	const char *root;
	struct stat st;
	int r;

	/*
	 * A root reached through a symlink another uid could have planted is
	 * refused before anything (the identity above all) is derived from
	 * the directory it leads to.
	 */
	root = sb->policy->root;
	r = root ? corral_root_links_check("root", root, &checked_fd, err) : corral_cwd_links_check(err);
	if (r < 0)
		return r;
	/*
	 * The current directory as a root is reopened by name below: the
	 * directory the process is in is what that name must still lead to.
	 */
	if (!root)
		checked_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!root) {
		cwd = getcwd(NULL, 0);
		if (!cwd) {
			r = corral_err(err, CORRAL_E_SETUP, errno, "current directory: %s", corral_strerror(errno));
			return r;
		}
		root = cwd;
	}
	sb->root = realpath(root, NULL);
	if (!sb->root) {
		r = corral_err(err, errno == ENOENT ? CORRAL_E_NOT_FOUND : CORRAL_E_SETUP, errno,
			       "root %s: %s", root, corral_strerror(errno));
		return r;
	}
	sb->root_fd = open(sb->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* Never 0..2 (a caller with one closed now): the child's stdio goes there before it enters the root. */
	if (sb->root_fd >= 0 && sb->root_fd < 3) {
		int high = fcntl(sb->root_fd, F_DUPFD_CLOEXEC, 3);

		safe_close(sb->root_fd);
		sb->root_fd = high;
	}
	if (sb->root_fd < 0 || fstat(sb->root_fd, &st) < 0) {
		r = corral_err(err, errno == ENOENT || errno == ENOTDIR ? CORRAL_E_NOT_FOUND : CORRAL_E_SETUP,
			       errno, "root %s: %s", root, corral_strerror(errno));
		return r;
	}
	if (checked_fd >= 0) {
		struct stat cst;

		if (fstat(checked_fd, &cst) < 0 || cst.st_dev != st.st_dev || cst.st_ino != st.st_ino) {
			r = corral_err(err, CORRAL_E_REFUSED, ELOOP,
				       "root %s: changed while corral checked it (a symlink or directory swapped in the path); run again",
				       root);
			return r;
		}
		checked_fd = safe_close(checked_fd);
	}

	return 0;
}

/* The audit log: opened now, so a path corral cannot append to is an error before anything runs. */
static int open_audit(struct corral_sandbox *sb, struct corral_error *err)
{
	int fd = corral_audit_open(sb->policy->audit, "audit", sb->root, sb->policy->fs.read_write.v,
				   sb->policy->fs.read_write.n, err);

	if (fd < 0)
		return fd;
	/* Never 0..2, as the root fd. */
	if (fd < 3) {
		int high = fcntl(fd, F_DUPFD_CLOEXEC, 3), e = errno;

		safe_close(fd);
		if (high < 0)
			return corral_err(err, CORRAL_E_SETUP, e, "audit %s: %s", sb->policy->audit, corral_strerror(e));
		fd = high;
	}
	sb->audit_fd = fd;
	if (corral_audit_policy_sha256(sb->policy, sb->policy_sha256) < 0)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	return 0;
}

/* Cgroups (as root), and how RLIMIT_NPROC is set where no pids cgroup bounds the tree. */
static void plan_processes(struct corral_sandbox *sb)
{
	if (geteuid() == 0) {
		corral_cgroup_detect(&sb->cg);
		for (int i = 0; i < CORRAL_CG_MAX; i++)
			if (sb->cg.dir[i])
				sb->use_cgroups = true;
	}
	/*
	 * RLIMIT_NPROC counts every task of the real uid system-wide, so it is
	 * set relative to the uid's task count, taken once here (a /proc walk
	 * costs about as much as a run). Caveat: tasks the uid starts or ends
	 * later, outside corral, shift the effective limit. A pids cgroup
	 * makes all this unnecessary: it is exact for the run's tree.
	 */
	sb->nproc_relative = !(sb->use_cgroups && (sb->cg.dir[CORRAL_CG_PIDS] || sb->cg.v2_pids));
	/*
	 * proc "private" through a user namespace: RLIMIT_NPROC counts the
	 * uid's tasks of that namespace (Linux 5.14+ ucounts), the run's
	 * alone, so no host count is needed: the limit plus the init.
	 */
	if (sb->nproc_relative && sb->procns.mode == CORRAL_PROCNS_USERNS)
		sb->nproc_in_userns = true;
	else if (sb->nproc_relative && sb->policy->limits.processes) {
		sb->nproc_uid = sb->switch_identity ? sb->uid : getuid();
		sb->nproc_self = getpid(); /* the count skips this process (a prefetch's too: same one) */
		if (prefetch_claim(sb->nproc_uid, &sb->nproc_thread)) {
			sb->nproc_job = &g_prefetch.job;
			sb->nproc_pending = sb->nproc_joinable = true;
		} else if (count_start(&sb->nproc_own_job, &sb->nproc_thread, sb->nproc_uid) == 0) {
			sb->nproc_job = &sb->nproc_own_job;
			sb->nproc_pending = sb->nproc_joinable = true;
		} else {
			sb->nproc_base = corral_count_uid_tasks(sb->nproc_uid, 0);
		}
	}
	sb->tmp_base = corral_tmp_base(sb->use_cgroups && (sb->cg.dir[CORRAL_CG_MEMORY] || sb->cg.v2_memory));

}

_public_ int corral_sandbox_new(const struct corral_policy *p, struct corral_sandbox **out,
				struct corral_error *err)
{
	struct corral_sandbox *sb;
	int r;

	if (!p || !out)
		return corral_err(err, CORRAL_E_USAGE, EINVAL, "sandbox: no policy");
	sb = calloc(1, sizeof(*sb));
	if (!sb)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	sb->root_fd = -1;
	sb->audit_fd = -1;
	sb->policy = corral_policy_dup(p);
	if (!sb->policy) {
		r = corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
		goto fail;
	}
	if (sb->policy->allow.n && sb->policy->network != CORRAL_NET_ALLOW) {
		r = corral_err(err, CORRAL_E_POLICY, 0,
			       "allow: %zu host(s) listed but network is \"%s\": pass --net allow (policy key "
			       "\"network\") to reach only them, or drop the --allow entries",
			       sb->policy->allow.n, corral_network_name(sb->policy->network));
		goto fail;
	}
	if (sb->policy->provider == CORRAL_PROVIDER_AUTO) {
		r = choose_provider(sb, err);
		if (r < 0)
			goto fail;
	}
	sb->provider = sb->policy->provider;

	r = open_root(sb, err);
	if (r < 0)
		goto fail;

	if (sb->policy->audit) {
		r = open_audit(sb, err);
		if (r < 0)
			goto fail;
	}

	sb->shell = sb->policy->shell;
	if (!sb->shell && sb->provider != CORRAL_PROVIDER_DOCKER)
		sb->shell = access("/bin/bash", X_OK) == 0 ? "/bin/bash" : "/bin/sh";

	if (sb->provider == CORRAL_PROVIDER_DOCKER) {
		r = corral_docker_prepare(sb->policy, sb->root, &sb->docker, err);
		if (r < 0)
			goto fail;
		*out = sb;
		return 0;
	}

	/* First: best-effort may turn "loopback" into "none" for every module below. */
	corral_netns_posture(sb->policy, &sb->netns, &sb->posture);
	corral_egress_posture(sb->policy, &sb->posture);
	corral_procns_posture(sb->policy, &sb->procns, &sb->posture);

	r = corral_identity_decide(sb, err);
	if (r < 0)
		goto fail;

	plan_processes(sb);
	r = corral_ll_plan_new(sb->policy, sb->root, &sb->posture, &sb->ll, err);
	if (r < 0)
		goto fail;
	if (sb->policy->network == CORRAL_NET_ALLOW) {
		/* Before the filter's plan: the mediation lets connects reach this listener only. */
		r = corral_egress_new(sb->policy, &sb->egress, err);
		if (r < 0)
			goto fail;
	}
	r = build_filter(sb, err);
	if (r < 0)
		goto fail;
	/*
	 * Two ways out of a cgroup: a write to cgroupfs (Landlock, and no
	 * writable path under /sys) and clone3(CLONE_INTO_CGROUP) into any
	 * cgroup the uid may write (seccomp answers clone3 with ENOSYS).
	 */
	if (sb->use_cgroups && sb->have_bpf && sb->ll && corral_ll_plan_abi(sb->ll) > 0) {
		sb->cgroup_holds_tree = !under_sys(sb->root, true);
		for (size_t i = 0; i < sb->policy->fs.read_write.n; i++)
			if (under_sys(sb->policy->fs.read_write.v[i], false))
				sb->cgroup_holds_tree = false;
	}
	add_supervisor_promises(sb);
	r = finish_posture(sb, err);
	if (r < 0)
		goto fail;

	r = corral_env_build(sb, err);
	if (r < 0)
		goto fail;

	*out = sb;
	return 0;
fail:
	corral_sandbox_free(sb);
	return r;
}

_public_ void corral_sandbox_free(struct corral_sandbox *sb)
{
	if (!sb)
		return;
	/* Only where it was started: in a fork the thread is not there. */
	if (sb->nproc_joinable && sb->nproc_job->tgid == getpid() &&
	    sb->nproc_job->generation == g_fork_generation)
		pthread_join(sb->nproc_thread, NULL);
	prefetch_release();
	corral_docker_free(sb->docker);
	corral_ll_plan_free(sb->ll);
	corral_unotify_plan_free(sb->unotify);
	corral_egress_free(sb->egress);
	if (sb->have_bpf || sb->bpf.filter)
		corral_bpf_free(&sb->bpf);
	for (size_t i = 0; i < sb->n_dropped; i++)
		free(sb->dropped[i]);
	free(sb->dropped);
	for (size_t i = 0; i < sb->n_envp; i++)
		free(sb->envp[i]);
	free(sb->envp);
	corral_cgroup_parents_clear(&sb->cg);
	safe_close(sb->root_fd);
	safe_close(sb->audit_fd);
	free(sb->root);
	free(sb->auto_why);
	corral_policy_free(sb->policy);
	free(sb);
}

_public_ const char *corral_sandbox_shell(const struct corral_sandbox *sb)
{
	return sb ? (sb->shell ? sb->shell : "/bin/sh") : NULL;
}

/*
 * The argv of `-c STRING` in |v| (room for 6): SHELL -c STRING. Docker with
 * the default shell: the image decides, as the local provider does on the
 * host: its /bin/bash where it has one, else /bin/sh (both get STRING as
 * their $1 here and as their -c string there, $0 "sh" or "bash").
 */
static void shell_argv(const struct corral_sandbox *sb, const char *string, char **v)
{
	if (sb->shell) {
		v[0] = (char *)sb->shell;
		v[1] = (char *)"-c";
		v[2] = (char *)string;
		v[3] = NULL;
		return;
	}
	v[0] = (char *)"/bin/sh";
	v[1] = (char *)"-c";
	v[2] = (char *)"if [ -x /bin/bash ]; then exec /bin/bash -c \"$1\" bash; fi; exec /bin/sh -c \"$1\" sh";
	v[3] = (char *)"sh";
	v[4] = (char *)string;
	v[5] = NULL;
}

_public_ int corral_sandbox_provider(const struct corral_sandbox *sb)
{
	return sb->provider;
}

_public_ size_t corral_sandbox_dropped(const struct corral_sandbox *sb, const char *const **lines)
{
	if (lines)
		*lines = sb && sb->n_dropped ? (const char *const *)sb->dropped : NULL;
	return sb ? sb->n_dropped : 0;
}

static void set_rl(struct corral_spawn_rlimits *rl, int res, rlim_t soft, rlim_t hard)
{
	struct rlimit cur;

	/*
	 * At most 2^63-1 (8 EiB): 2^64-1 is RLIM_INFINITY, which would make
	 * the limit "unlimited", and the kernel compares RLIMIT_FSIZE with a
	 * file offset as a signed number, so anything from 2^63 on reads as
	 * negative: SIGXFSZ at the first write to a file.
	 */
	if (soft > (rlim_t)INT64_MAX)
		soft = (rlim_t)INT64_MAX;
	if (hard > (rlim_t)INT64_MAX)
		hard = (rlim_t)INT64_MAX;
	/* Never above what corral itself may have: lower is only stricter. */
	if (getrlimit(res, &cur) == 0 && cur.rlim_max != RLIM_INFINITY) {
		if (hard > cur.rlim_max)
			hard = cur.rlim_max;
		if (soft > hard)
			soft = hard;
	}
	rl->rl[res] = (struct rlimit){ soft, hard };
	rl->set[res] = true;
}

static void fill_rlimits(struct corral_sandbox *sb, struct corral_spawn_rlimits *rl, int cancel_fd)
{
	const struct corral_policy *p = sb->policy;

	memset(rl, 0, sizeof(*rl));
	/*
	 * Memory: the run's memory cgroup bounds the whole tree by what it
	 * really uses; an address-space limit besides would only break the
	 * runtimes that reserve far more than they touch (V8: a code range
	 * and a heap cage per isolate; the JVM: its heap and class space).
	 * RLIMIT_AS only where no memory cgroup can be made.
	 */
	if (p->limits.memory && !corral_sandbox_memory_cgroup(sb))
		set_rl(rl, RLIMIT_AS, p->limits.memory, p->limits.memory);
	if (p->limits.cpu)
		set_rl(rl, RLIMIT_CPU, p->limits.cpu, p->limits.cpu + 1); /* SIGXCPU, then SIGKILL */
	if (p->limits.file_size)
		set_rl(rl, RLIMIT_FSIZE, p->limits.file_size, p->limits.file_size);
	if (p->limits.open_files)
		set_rl(rl, RLIMIT_NOFILE, p->limits.open_files, p->limits.open_files);
	set_rl(rl, RLIMIT_CORE, 0, 0);
	/*
	 * Processes: a pids cgroup bounds exactly this run's tree; without
	 * one, RLIMIT_NPROC, which counts every task of the uid system-wide,
	 * so it is set to the uid's current count plus the limit.
	 */
	if (p->limits.processes && sb->nproc_in_userns) {
		set_rl(rl, RLIMIT_NPROC, p->limits.processes + 1, p->limits.processes + 1);
	} else if (p->limits.processes && sb->nproc_relative) {
		rlim_t n = p->limits.processes;

		long have = nproc_base(sb, cancel_fd);
		struct stat st;

		if (have > 0)
			n += (rlim_t)have;
		/*
		 * corral's own tasks, when they count against the same uid: the
		 * count left out the process that took it (corral_count_uid_tasks
		 * skips its caller). That is this process, or, under `corral
		 * run`'s supervisor process, its parent: then both count.
		 */
		if (getuid() == sb->nproc_uid) {
			if (stat("/proc/self/task", &st) == 0 && st.st_nlink > 2)
				n += (rlim_t)st.st_nlink - 2;
			if (sb->nproc_self != getpid()) {
				char path[64];

				snprintf(path, sizeof(path), "/proc/%d/task", (int)sb->nproc_self);
				if (stat(path, &st) == 0 && st.st_nlink > 2)
					n += (rlim_t)st.st_nlink - 2;
			}
		}
		set_rl(rl, RLIMIT_NPROC, n, n);
	}
}

/* What compat "best-effort" dropped, into the result's warnings (the CLI also prints them on stderr). */
static int add_warnings(const struct corral_sandbox *sb, struct corral_result *res)
{
	res->warnings = calloc(sb->n_dropped, sizeof(*res->warnings));
	if (!res->warnings)
		return -ENOMEM;
	for (; res->n_warnings < sb->n_dropped; res->n_warnings++)
		if (asprintf(&res->warnings[res->n_warnings], "best-effort: dropped %s", sb->dropped[res->n_warnings]) < 0)
			return -ENOMEM;
	return 0;
}

/*
 * The run's working directory: |cwd| opened beneath the root as the
 * boundary resolver does (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | ...), so
 * the child's fchdir lands on the directory the kernel proved, never on
 * what a rename put there since. |rel| (may be NULL): the path relative
 * to the root, normalised ("" for the root), for docker's -w.
 */
static int open_cwd(const struct corral_sandbox *sb, const char *cwd, int *fd_out, char **rel,
		    struct corral_error *err)
{
	struct corral_error e = {};
	char *host = NULL;
	int fd;

	fd = corral_resolve_open(sb->root_fd, sb->root, cwd, CORRAL_RESOLVE_DIRECTORY, &e);
	if (fd >= 0 && rel) {
		size_t n = strlen(sb->root);

		if (corral_resolve_path(sb->root, cwd, true, &host, &e) < 0) {
			fd = safe_close(fd);
			fd = -(e.sys_errno ? e.sys_errno : EINVAL);
		} else {
			*rel = strdup(host[n] == '/' ? host + n + 1 : "");
			free(host);
			if (!*rel) {
				safe_close(fd);
				return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
			}
		}
	}
	if (fd < 0)
		return corral_err(err, e.code ? e.code : CORRAL_E_SETUP, e.sys_errno ? e.sys_errno : -fd,
				  "cwd %s (root %s): --cwd (policy key cwd) must name a directory under the root, "
				  "reached without symlinks", e.message, sb->root);
	*fd_out = fd;
	return 0;
}

void corral_sandbox_rlimits(struct corral_sandbox *sb, struct corral_spawn_rlimits *rl, int cancel_fd)
{
	fill_rlimits(sb, rl, cancel_fd);
}

static void run_clear(const struct corral_sandbox *sb, struct corral_run *run)
{
	run->ruleset_fd = safe_close(run->ruleset_fd);
	run->cwd_fd = safe_close(run->cwd_fd);
	run->un_parent = safe_close(run->un_parent);
	run->un_child = safe_close(run->un_child);
	corral_cgroup_remove(run);
	corral_tmp_remove(sb, run);
}

/*
 * run_id and started_at, when the provider left them empty (docker), and ended_by
 * from what the result says: exit, signal, timeout, or cancelled (the
 * cancel fd readable: the engine killed the tree for it). The limits that
 * end a run (memory, cpu, file_size) are the engine's to tell.
 */
static void result_identity(struct corral_result *res, const struct timespec *t0, int cancel_fd)
{
	if (!res->run_id[0]) {
		uint64_t rnd[2] = { 0, 0 };

		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
			struct timespec now;

			clock_gettime(CLOCK_REALTIME, &now);
			rnd[0] ^= (uint64_t)now.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
			rnd[1] ^= (uint64_t)now.tv_sec ^ (uint64_t)(uintptr_t)res;
		}
		snprintf(res->run_id, sizeof(res->run_id), "%016llx%016llx", (unsigned long long)rnd[0],
			 (unsigned long long)rnd[1]);
	}
	if (!res->started_at_ms)
		res->started_at_ms = (int64_t)t0->tv_sec * 1000 + t0->tv_nsec / 1000000;
	if (!res->ended_by) {
		struct pollfd pfd = { .fd = cancel_fd, .events = POLLIN };

		if (res->timed_out)
			res->ended_by = "timeout";
		else if (res->signal > 0 && cancel_fd >= 0 && poll(&pfd, 1, 0) > 0)
			res->ended_by = "cancelled";
		else if (res->signal > 0)
			res->ended_by = "signal";
		else
			res->ended_by = "exit";
	}
}

/*
 * The caller's options, copied (an older caller's smaller struct padded
 * with zeros) and checked, with the policy's defaults filled in and -c
 * STRING turned into the policy's shell's argv (in sh_argv, which must
 * outlive o).
 */
static int exec_opts(const struct corral_sandbox *sb, const struct corral_exec_opts *opts,
		     struct corral_exec_opts *o, char **sh_argv, struct corral_error *err)
{
	memcpy(o, opts, opts->sz && opts->sz < sizeof(*o) ? opts->sz : sizeof(*o));
	o->sz = sizeof(*o);
	if (!o->shell && (!o->argv || !o->argv[0]))
		return corral_err(err, CORRAL_E_USAGE, EINVAL, "exec: no command");
	if (!isfinite(o->timeout))
		return corral_err(err, CORRAL_E_USAGE, EINVAL, "exec: timeout must be a finite number of seconds");
	if (o->timeout < 0)
		return corral_err(err, CORRAL_E_USAGE, EINVAL, "exec: timeout must not be negative (0: the policy's)");
	if (o->timeout == 0)
		o->timeout = sb->policy->timeout > 0 ? sb->policy->timeout : DEFAULT_TIMEOUT;
	if (o->max_output == 0)
		o->max_output = sb->policy->limits.output ? sb->policy->limits.output : DEFAULT_OUTPUT;
	/*
	 * A closed 0, 1 or 2 would be taken by the run's own pipes and fds,
	 * which the child's stdio then overwrites (it failed as "chdir to the
	 * root: Not a directory"); a bad cancel fd would poll as cancelled.
	 */
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
			return corral_err(err, CORRAL_E_USAGE, EBADF,
					  "exec: file descriptor %d of the calling process is closed; corral needs 0, 1 "
					  "and 2 open (open /dev/null on a closed one)", fd);
	if (o->has_cancel_fd && o->cancel_fd >= 0 && fcntl(o->cancel_fd, F_GETFD) < 0)
		return corral_err(err, CORRAL_E_USAGE, EBADF, "exec: cancel_fd %d is not an open file descriptor",
				  o->cancel_fd);

	/* -c STRING: the policy's shell, for every provider. */
	if (o->shell) {
		shell_argv(sb, o->shell, sh_argv);
		o->argv = (const char *const *)sh_argv;
		o->shell = NULL;
	}
	if (!o->cwd)
		o->cwd = sb->policy->cwd;
	return 0;
}

/* The docker provider: the cwd proven on the host, given to docker as the normalised path under the workdir. */
static int exec_docker(struct corral_sandbox *sb, struct corral_exec_opts *o, struct corral_result *res,
		       const struct timespec *t0, struct corral_error *err)
{
	_cleanup_free_ char *rel = NULL;
	int r;

	if (o->cwd) {
		_cleanup_close_ int cwd_fd = -1;

		r = open_cwd(sb, o->cwd, &cwd_fd, &rel, err);
		if (r < 0)
			return r;
		o->cwd = rel;
	}
	r = corral_docker_exec(sb->docker, o, res, err);
	if (r == 0)
		result_identity(res, t0, o->has_cancel_fd ? o->cancel_fd : -1);
	return r;
}

/*
 * What the command inherits (engine.c: stdin passed through, output not
 * captured): its terminal, or its files, which it may reopen by name
 * (/dev/stdout, tee /dev/stderr, cat /dev/stdin). Landlock grants those
 * the rights of the fd's access mode, whatever its number; an O_PATH fd
 * has none. Returns how many entries of stdio[3] were filled.
 */
static size_t inherited_stdio(const struct corral_exec_opts *o, struct corral_ll_stdio *stdio)
{
	bool inherits[3] = { !o->stdin_data && o->stdin_passthrough, !o->capture, !o->capture };
	size_t n_stdio = 0;

	for (int fd = 0; fd < 3; fd++) {
		struct stat st;
		unsigned access = 0;
		int fl;

		if (!inherits[fd] || (fl = fcntl(fd, F_GETFL)) < 0 || (fl & O_PATH))
			continue;
		if ((fl & O_ACCMODE) == O_RDONLY || (fl & O_ACCMODE) == O_RDWR)
			access |= CORRAL_LL_STDIO_READ;
		if ((fl & O_ACCMODE) == O_WRONLY || (fl & O_ACCMODE) == O_RDWR)
			access |= CORRAL_LL_STDIO_WRITE;
		if (isatty(fd))
			access |= CORRAL_LL_STDIO_TTY;
		else if (fstat(fd, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode)))
			continue;
		if (access & (CORRAL_LL_STDIO_READ | CORRAL_LL_STDIO_WRITE))
			stdio[n_stdio++] = (struct corral_ll_stdio){ fd, access };
	}
	return n_stdio;
}

/*
 * The local provider's per-run kernel objects, in order: the mediation
 * socketpair, the cwd, the private /tmp (and home), the Landlock ruleset
 * (which names the private /tmp), the cgroup. What was made is in run,
 * for run_clear, also on failure.
 */
static int prepare_run(struct corral_sandbox *sb, const struct corral_exec_opts *o, struct corral_run *run,
		       struct corral_error *err)
{
	int r;

	if (sb->unotify) {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
			return corral_err(err, CORRAL_E_SETUP, errno, "Unix-socket mediation: socketpair: %s",
					  corral_strerror(errno));
		run->un_parent = sv[0];
		run->un_child = sv[1];
	}
	if (o->cwd) {
		r = open_cwd(sb, o->cwd, &run->cwd_fd, NULL, err);
		if (r < 0)
			return r;
	}
	if (sb->policy->fs.private_tmp || sb->private_home) {
		r = corral_tmp_create(sb, run, err);
		if (r < 0)
			return r;
	}
	if (sb->ll && corral_ll_plan_abi(sb->ll) > 0) {
		struct corral_ll_stdio stdio[3];
		size_t n_stdio = inherited_stdio(o, stdio);

		run->ruleset_fd = corral_ll_ruleset(sb->ll, run->tmp_fd, stdio, n_stdio, err);
		if (run->ruleset_fd < 0)
			return run->ruleset_fd;
	}
	if (sb->use_cgroups) {
		r = corral_cgroup_create(sb, run, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The local provider: prepare the run's objects, run it, and add what corral knows beyond the command's own result. */
static int exec_local(struct corral_sandbox *sb, const struct corral_exec_opts *o, struct corral_result *res,
		      const struct timespec *t0, struct corral_error *err)
{
	struct corral_denials denials = {};
	struct corral_run run = { .ruleset_fd = -1, .tmp_fd = -1, .un_parent = -1, .un_child = -1, .cwd_fd = -1,
				  .denials = &denials };
	struct corral_spawn_rlimits rl;
	char **envp = NULL, *env_bufs[2] = {};
	int r;

	for (int i = 0; i < CORRAL_CG_MAX; i++)
		run.cg_fd[i] = -1;
	r = prepare_run(sb, o, &run, err);
	if (r < 0)
		goto out;
	fill_rlimits(sb, &rl, o->has_cancel_fd ? o->cancel_fd : -1);
	envp = corral_env_for_run(sb, sb->policy->fs.private_tmp ? run.tmp_path : NULL,
				  sb->private_home ? run.tmp_path : NULL, env_bufs);
	if (!envp) {
		r = corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
		goto out;
	}

	r = corral_engine_run(&(struct corral_spawn){
				      .argv = (char *const *)o->argv,
				      .envp = envp,
				      .confine = sb,
				      .provider = "local",
				      .run = &run,
				      .rlimits = &rl,
			      },
			      o, res, err);
	corral_egress_drain(sb->egress, &denials);
	if (r == 0)
		corral_denials_collect(&denials, sb, &run, res);
	if (r == 0 && sb->n_dropped) {
		r = add_warnings(sb, res);
		if (r < 0) {
			corral_result_clear(res);
			r = corral_err(err, CORRAL_E_INTERNAL, -r, "out of memory");
		}
	}
	if (r == 0)
		result_identity(res, t0, o->has_cancel_fd ? o->cancel_fd : -1);
out:
	corral_denials_clear(&denials);
	run_clear(sb, &run);
	free(envp);
	free(env_bufs[0]);
	free(env_bufs[1]);
	if (r == 0 && sb->auto_why)
		r = corral_docker_add_warning(res, sb->auto_why, err);
	return r;
}

static int sandbox_exec(struct corral_sandbox *sb, const struct corral_exec_opts *opts,
			struct corral_result *res, struct corral_error *err)
{
	struct corral_exec_opts o = {};
	struct timespec t0;
	char *sh_argv[6] = {};
	int r;

	if (!sb || !opts || !res)
		return corral_err(err, CORRAL_E_USAGE, EINVAL, "exec: missing argument");
	if (res->sz < CORRAL_RESULT_SZ_MIN)
		return corral_err(err, CORRAL_E_USAGE, EINVAL,
				  "exec: the result's sz is %zu: set it to sizeof(struct corral_result) "
				  "(struct corral_result res = CORRAL_RESULT_INIT)", res->sz);
	corral_result_reset(res);
	clock_gettime(CLOCK_REALTIME, &t0);
	r = exec_opts(sb, opts, &o, sh_argv, err);
	if (r < 0)
		return r;
	if (sb->docker)
		return exec_docker(sb, &o, res, &t0, err);
	return exec_local(sb, &o, res, &t0, err);
}

/*
 * Append the run's audit line (a run that corral's own error stopped
 * included; a call refused for bad arguments is no run). A line that
 * could not be written is said in the result's warnings.
 */
static void audit_run(struct corral_sandbox *sb, const struct corral_exec_opts *opts, struct corral_result *res,
		      int r, const struct corral_error *cerr)
{
	struct corral_exec_opts o = {};
	struct corral_audit_call call = { .tool = "run" };
	char msg[512], **w;
	int ar;

	memcpy(&o, opts, opts->sz && opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	call.argv = o.shell ? NULL : o.argv;
	call.command = o.shell;
	call.cwd = o.cwd ? o.cwd : sb->policy->cwd;
	ar = corral_audit_write(sb->audit_fd, sb->policy_sha256, sb->docker ? "docker" : "local",
				corral_network_name(sb->policy->network), &call, res, r, cerr);
	if (ar == 0 || r < 0)
		return;
	snprintf(msg, sizeof(msg), "audit %s: the run's line could not be written: %s", sb->policy->audit,
		 ar == -EIO ? "short write (disk full or file size limit?)" : corral_strerror(-ar));
	w = realloc(res->warnings, (res->n_warnings + 1) * sizeof(*w));
	if (!w)
		return;
	res->warnings = w;
	w[res->n_warnings] = strdup(msg);
	if (w[res->n_warnings])
		res->n_warnings++;
}

_public_ int corral_sandbox_exec(struct corral_sandbox *sb, const struct corral_exec_opts *opts,
				 struct corral_result *res, struct corral_error *err)
{
	struct corral_error e = {};
	int r = sandbox_exec(sb, opts, res, err ? err : &e);

	if (sb && opts && res && sb->audit_fd >= 0 && !(r < 0 && (err ? err : &e)->code == CORRAL_E_USAGE))
		audit_run(sb, opts, res, r, err ? err : &e);
	return r;
}
