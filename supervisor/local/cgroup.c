/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-run cgroups, where corral may create them (as root, or in a writable
 * delegated subtree): pids.max and the memory limit for the whole tree, and
 * a whole-tree kill. cgroup v2 where the controllers sit on the unified
 * hierarchy; v1 pids/memory otherwise (hybrid hosts: v1 controllers plus a
 * v2 hierarchy without controllers, which still gives membership and
 * cgroup.kill). Each run's cgroup is a child of corral's own cgroup in that
 * hierarchy, so the host's limits still apply above it.
 */
#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal/fileio.h"

#include "supervisor/exec/sandbox.h"

static bool file_has_word(const char *path, const char *word)
{
	char buf[1024];
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	bool found = false;

	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f)) {
		char *save = NULL;

		for (char *tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
			if (strcmp(tok, word) == 0)
				found = true;
	}
	return found;
}

static char *usable_dir(const char *base, const char *rel)
{
	_cleanup_free_ char *d = NULL;
	struct stat st;

	if (asprintf(&d, "%s%s", base, strcmp(rel, "/") == 0 ? "" : rel) < 0)
		return NULL;
	if (stat(d, &st) < 0 || !S_ISDIR(st.st_mode) || access(d, W_OK) < 0)
		return NULL;
	return TAKE_PTR(d);
}

void corral_cgroup_detect(struct corral_cgroup_parents *cg)
{
	char buf[8192];
	const char *path[CORRAL_CG_MAX] = {};
	bool pure_v2;
	struct stat st;
	ssize_t len = 0, n;
	_cleanup_close_ int fd = -1;

	memset(cg, 0, sizeof(*cg));
	pure_v2 = stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0;
	/* Plain read(2), no stdio: this runs once per CLI run, on its hot path. */
	fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	while (len < (ssize_t)sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - (size_t)len)) > 0)
		len += n;
	fd = safe_close(fd);
	buf[len] = '\0';
	for (char *line = buf, *next; line && *line; line = next) {
		char *c1, *c2;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		c1 = strchr(line, ':');
		if (!c1)
			continue;
		c2 = strchr(c1 + 1, ':');
		if (!c2)
			continue;
		*c2 = '\0';
		if (strncmp(line, "0:", 2) == 0 && c1[1] == '\0') {
			path[CORRAL_CG_UNIFIED] = c2 + 1;
			continue;
		}
		if (pure_v2)
			continue;
		char *save = NULL;

		for (char *tok = strtok_r(c1 + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (strcmp(tok, "pids") == 0 && !path[CORRAL_CG_PIDS])
				path[CORRAL_CG_PIDS] = c2 + 1;
			else if (strcmp(tok, "memory") == 0 && !path[CORRAL_CG_MEMORY])
				path[CORRAL_CG_MEMORY] = c2 + 1;
		}
	}
	if (path[CORRAL_CG_PIDS])
		cg->dir[CORRAL_CG_PIDS] = usable_dir("/sys/fs/cgroup/pids", path[CORRAL_CG_PIDS]);
	if (path[CORRAL_CG_MEMORY])
		cg->dir[CORRAL_CG_MEMORY] = usable_dir("/sys/fs/cgroup/memory", path[CORRAL_CG_MEMORY]);
	/*
	 * Hybrid: each cgroup a process joins costs the kernel more work per
	 * run. The v1 pids cgroup already holds the whole tree, so it also
	 * serves for the kill; the controller-less v2 one would only add a
	 * join, and is not even looked at.
	 */
	if (path[CORRAL_CG_UNIFIED] && (pure_v2 || !cg->dir[CORRAL_CG_PIDS]))
		cg->dir[CORRAL_CG_UNIFIED] =
			usable_dir(pure_v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/unified", path[CORRAL_CG_UNIFIED]);
	if (cg->dir[CORRAL_CG_UNIFIED]) {
		char p[4096];

		/* Controllers a child cgroup of ours would get. */
		snprintf(p, sizeof(p), "%s/cgroup.subtree_control", cg->dir[CORRAL_CG_UNIFIED]);
		cg->v2_pids = file_has_word(p, "pids");
		cg->v2_memory = file_has_word(p, "memory");
		if (cg->v2_pids) {
			free(cg->dir[CORRAL_CG_PIDS]);
			cg->dir[CORRAL_CG_PIDS] = NULL;
		}
		if (cg->v2_memory) {
			free(cg->dir[CORRAL_CG_MEMORY]);
			cg->dir[CORRAL_CG_MEMORY] = NULL;
		}
	}
}

void corral_cgroup_parents_clear(struct corral_cgroup_parents *cg)
{
	for (int i = 0; i < CORRAL_CG_MAX; i++)
		free(cg->dir[i]);
	memset(cg, 0, sizeof(*cg));
}

/* |dir|/|name| into |buf|, without snprintf: also used after fork in the watchdog. */
static bool path_join(char *buf, size_t len, const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);

	if (a + 1 + b + 1 > len)
		return false;
	memcpy(buf, dir, a);
	buf[a] = '/';
	memcpy(buf + a + 1, name, b + 1);
	return true;
}

/* Async-signal-safe. */
static int write_file_at(const char *dir, const char *name, const char *value)
{
	char p[4096];

	if (!path_join(p, sizeof(p), dir, name))
		return -ENAMETOOLONG;
	return corral_write_file_at(AT_FDCWD, p, value, 0, 0);
}

/* The kernel's PID_MAX_LIMIT on 64-bit (4 * 1024 * 1024): pids.max takes at most that. */
#define CORRAL_PID_MAX_LIMIT 4194304ULL

int corral_cgroup_create(const struct corral_sandbox *sb, struct corral_run *run,
			 struct corral_error *err)
{
	static atomic_uint counter;
	const struct corral_cgroup_parents *cg = &sb->cg;
	const struct corral_policy *p = sb->policy;
	unsigned n = atomic_fetch_add(&counter, 1);
	char val[64];
	int r;

	for (int i = 0; i < CORRAL_CG_MAX; i++) {
		char procs[4096];

		if (!cg->dir[i])
			continue;
		assert(!run->cg_dir[i] && run->cg_fd[i] < 0);
		if (asprintf(&run->cg_dir[i], "%s/corral-%d-%u", cg->dir[i], (int)getpid(), n) < 0)
			return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
		/*
		 * EEXIST: a directory an earlier corral with this pid could not
		 * remove in time (a task that exits slowly, e.g. with a network
		 * namespace to tear down), or a corral in another pid namespace.
		 * Never touch it: take the next name.
		 */
		for (int tries = 0;; tries++) {
			if (mkdir(run->cg_dir[i], 0755) == 0) {
				r = 0;
				break;
			}
			r = errno;
			if (r != EEXIST || tries >= 64)
				break;
			free(run->cg_dir[i]);
			n = atomic_fetch_add(&counter, 1);
			if (asprintf(&run->cg_dir[i], "%s/corral-%d-%u", cg->dir[i], (int)getpid(), n) < 0) {
				run->cg_dir[i] = NULL;
				return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
			}
		}
		if (r) {
			free(run->cg_dir[i]);
			run->cg_dir[i] = NULL;
			return corral_err(err, CORRAL_E_SETUP, r, "cgroup %s/corral-*: %s", cg->dir[i], corral_strerror(r));
		}
		r = 0;
		if (i == CORRAL_CG_PIDS || (i == CORRAL_CG_UNIFIED && cg->v2_pids)) {
			/*
			 * Above the kernel's PID_MAX_LIMIT pids.max refuses the number
			 * (EINVAL); no system runs more tasks than that, so "max"
			 * enforces the same.
			 */
			if (p->limits.processes > 0) {
				/* proc "private": the namespace's init is in the cgroup too, on top of the limit. */
				unsigned long long lim = p->limits.processes + (sb->procns.mode ? 1 : 0) + run->extra_procs;

				if (lim >= CORRAL_PID_MAX_LIMIT)
					snprintf(val, sizeof(val), "max");
				else
					snprintf(val, sizeof(val), "%llu", lim);
				r = write_file_at(run->cg_dir[i], "pids.max", val);
			}
		}
		if (!r && p->limits.memory > 0) {
			snprintf(val, sizeof(val), "%llu", (unsigned long long)p->limits.memory);
			if (i == CORRAL_CG_MEMORY) {
				r = write_file_at(run->cg_dir[i], "memory.limit_in_bytes", val);
				/* memsw exists only with swap accounting; keep swap out of the limit. */
				if (!r)
					(void)write_file_at(run->cg_dir[i], "memory.memsw.limit_in_bytes", val);
			} else if (i == CORRAL_CG_UNIFIED && cg->v2_memory) {
				r = write_file_at(run->cg_dir[i], "memory.max", val);
				if (!r)
					(void)write_file_at(run->cg_dir[i], "memory.swap.max", "0");
			}
		}
		if (r < 0)
			return corral_err(err, CORRAL_E_SETUP, -r, "cgroup %s: setting the limit: %s",
					  run->cg_dir[i], corral_strerror(-r));
		/*
		 * The child joins by writing "0" here before it execs, while it
		 * is a single thread. On v1 it writes to "tasks": moving one
		 * thread (itself) skips the kernel's global threadgroup lock that
		 * moving a process through cgroup.procs takes (Linux 6.2, "cgroup:
		 * Optimize single thread migration"), and the process is that
		 * one thread, so the result is the same. v2 domain cgroups take
		 * processes only.
		 */
		snprintf(procs, sizeof(procs), "%s/%s", run->cg_dir[i],
			 i == CORRAL_CG_UNIFIED ? "cgroup.procs" : "tasks");
		run->cg_fd[i] = open(procs, O_WRONLY | O_CLOEXEC);
		if (run->cg_fd[i] < 0)
			return corral_err(err, CORRAL_E_SETUP, errno, "%s: %s", procs, corral_strerror(errno));
	}
	return 0;
}

/*
 * v1: SIGKILL everything listed in |dir|/cgroup.procs until it is empty.
 * Async-signal-safe (the watchdog runs it after fork): open/read/kill only.
 */
static bool kill_listed(const char *dir)
{
	char p[4096], buf[4096];

	if (!path_join(p, sizeof(p), dir, "cgroup.procs"))
		return false;
	for (int round = 0; round < 2000; round++) {
		_cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC);
		int n = 0, pid = 0;
		bool in_num = false;
		ssize_t got;

		if (fd < 0)
			return false;
		while ((got = read(fd, buf, sizeof(buf))) > 0) {
			for (ssize_t i = 0; i < got; i++) {
				if (buf[i] >= '0' && buf[i] <= '9') {
					pid = pid * 10 + (buf[i] - '0');
					in_num = true;
				} else if (in_num) {
					kill(pid, SIGKILL);
					n++;
					pid = 0;
					in_num = false;
				}
			}
		}
		if (in_num) {
			kill(pid, SIGKILL);
			n++;
		}
		if (n == 0)
			return true;
		{
			struct timespec ts = { 0, 100000 };
			nanosleep(&ts, NULL);
		}
	}
	return false;
}

/* Async-signal-safe. */
bool corral_cgroup_kill(const struct corral_run *run)
{
	if (run->cg_dir[CORRAL_CG_UNIFIED] &&
	    write_file_at(run->cg_dir[CORRAL_CG_UNIFIED], "cgroup.kill", "1") == 0)
		return true;
	if (run->cg_dir[CORRAL_CG_PIDS])
		return kill_listed(run->cg_dir[CORRAL_CG_PIDS]);
	if (run->cg_dir[CORRAL_CG_MEMORY])
		return kill_listed(run->cg_dir[CORRAL_CG_MEMORY]);
	if (run->cg_dir[CORRAL_CG_UNIFIED])
		return kill_listed(run->cg_dir[CORRAL_CG_UNIFIED]);
	return false;
}

long corral_cgroup_tasks(const struct corral_run *run)
{
	static const int where[] = { CORRAL_CG_PIDS, CORRAL_CG_UNIFIED };

	for (size_t i = 0; i < ARRAY_SIZE(where); i++) {
		char p[4096], buf[32];
		long v = 0;
		ssize_t n;

		if (!run->cg_dir[where[i]] || !path_join(p, sizeof(p), run->cg_dir[where[i]], "pids.current"))
			continue;
		/* Not there: v2 without the pids controller. */
		n = corral_read_file_at(AT_FDCWD, p, 0, buf, sizeof(buf));
		if (n <= 0 || buf[0] < '0' || buf[0] > '9')
			continue;
		for (ssize_t k = 0; k < n && buf[k] >= '0' && buf[k] <= '9'; k++)
			v = v * 10 + (buf[k] - '0');
		return v;
	}
	return -1;
}

/*
 * How many processes the kernel's OOM killer killed in the run's memory
 * cgroup: "oom_kill N" in memory.oom_control (v1, Linux 4.13+) or
 * memory.events (v2). -1 when the run has no memory cgroup or the
 * kernel does not count.
 */
long corral_cgroup_oom_kills(const struct corral_sandbox *sb, const struct corral_run *run)
{
	const char *dir = run->cg_dir[CORRAL_CG_MEMORY], *file = "memory.oom_control";
	char p[4096], buf[512];
	const char *k;

	if (!dir && sb->cg.v2_memory) {
		dir = run->cg_dir[CORRAL_CG_UNIFIED];
		file = "memory.events";
	}
	if (!dir || !path_join(p, sizeof(p), dir, file))
		return -1;
	if (corral_read_file_at(AT_FDCWD, p, 0, buf, sizeof(buf)) <= 0)
		return -1;
	for (k = buf; (k = strstr(k, "oom_kill ")); k++)
		if (k == buf || k[-1] == '\n')
			return strtol(k + 9, NULL, 10);
	return -1;
}

/*
 * After corral died (the watchdog): kill what is left, wait for each
 * cgroup to empty, remove it. Async-signal-safe.
 */
void corral_cgroup_kill_and_remove(const struct corral_run *run)
{
	corral_cgroup_kill(run);
	for (int i = 0; i < CORRAL_CG_MAX; i++) {
		if (!run->cg_dir[i])
			continue;
		kill_listed(run->cg_dir[i]);
		for (int tries = 0; rmdir(run->cg_dir[i]) < 0 && errno == EBUSY && tries < 5000; tries++) {
			struct timespec ts = { 0, 1000000 };
			nanosleep(&ts, NULL);
		}
	}
}

void corral_cgroup_remove(struct corral_run *run)
{
	for (int i = 0; i < CORRAL_CG_MAX; i++) {
		run->cg_fd[i] = safe_close(run->cg_fd[i]);
		if (!run->cg_dir[i])
			continue;
		/* Everything is reaped; a just-exited task may linger a moment. */
		for (int tries = 0; rmdir(run->cg_dir[i]) < 0 && errno == EBUSY && tries < 500; tries++) {
			struct timespec ts = { 0, 100000 };
			nanosleep(&ts, NULL);
		}
		free(run->cg_dir[i]);
		run->cg_dir[i] = NULL;
	}
}
