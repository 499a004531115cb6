/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The run's private tmp (a fresh 0700 directory owned by the command's
 * uid, TMPDIR inside, every Landlock right beneath it) and its removal,
 * plus the per-uid task count RLIMIT_NPROC is set relative to.
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal/syscalls.h"
#include "supervisor/exec/sandbox.h"

/* <linux/fs.h>; musl's <stdio.h> does not have it. */
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

int corral_tmp_create(const struct corral_sandbox *sb, struct corral_run *run,
		      struct corral_error *err)
{
	char tmpl[64];

	snprintf(tmpl, sizeof(tmpl), "%s/corral-tmp-XXXXXX", sb->tmp_base);

	if (!mkdtemp(tmpl))
		return corral_err(err, CORRAL_E_SETUP, errno, "private tmp %s: %s", tmpl, corral_strerror(errno));
	run->tmp_path = strdup(tmpl);
	run->tmp_fd = open(tmpl, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (!run->tmp_path || run->tmp_fd < 0) {
		int e = run->tmp_path ? errno : ENOMEM;
		rmdir(tmpl);
		return corral_err(err, CORRAL_E_SETUP, e, "private tmp %s: %s", tmpl, corral_strerror(e));
	}
	if (sb->switch_identity && fchown(run->tmp_fd, sb->uid, sb->gid) < 0)
		return corral_err(err, CORRAL_E_SETUP, errno, "private tmp %s: chown: %s", tmpl,
				  corral_strerror(errno));
	return 0;
}

/*
 * Removal runs while other processes of the command's uid may still be
 * writing into the tmp: another run sharing it (--rw /dev/shm, or /tmp
 * when the tmps fall back there) or, as root, any process of that uid
 * outside corral. So it never goes up through "..": a directory renamed
 * out while we were inside it would lead there, and the removal would go
 * on outside the tmp (and, as root, with root's rights). It holds an fd
 * for each level it is in instead, at most TMP_DEPTH; a directory below
 * that is first moved up to the top (its contents come with it), so any
 * depth is removed with a few fds. And as root it runs in a helper
 * process with the command's identity and no capabilities, so whatever
 * is moved into the tmp is removed with no right the command lacks.
 */
#define TMP_DEPTH 16
/* Runs in the helper (a CLONE_VM child) too: no sanitizer, no malloc. */
#define _rm_ __attribute__((no_sanitize("address", "undefined")))

/* Open the directory |name| in |dirfd| without following symlinks, made 0700 first if needed. */
static _rm_ int open_subdir(int dirfd, const char *name)
{
	char proc[64];
	int pfd, fd;

	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 || errno != EACCES)
		return fd;
	/* Mode 000 set by the command: fix the mode through an O_PATH fd of this very inode. */
	pfd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return -1;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	if (chmod(proc, 0700) < 0) {
		safe_close(pfd);
		return -1;
	}
	fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	safe_close(pfd);
	return fd;
}

/*
 * Move the directory |name| in |dirfd| up to |top| under a fresh name, one
 * the command cannot have made ahead (random; a name it could guess, it
 * could take, and make the move and so the removal fail).
 */
static _rm_ int move_to_top(int dirfd, const char *name, int top, unsigned long *seq)
{
	char fresh[64];

	for (int tries = 0; tries < 16; tries++) {
		uint64_t rnd[2] = { 0, 0 };

		if (syscall(SYS_getrandom, rnd, sizeof(rnd), 0) != (long)sizeof(rnd))
			rnd[0] = *seq * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)&fresh, rnd[1] = (uint64_t)tries;
		snprintf(fresh, sizeof(fresh), ".corral-deep-%016llx%016llx", (unsigned long long)rnd[0],
			 (unsigned long long)rnd[1]);
		(*seq)++;
		if (syscall(SYS_renameat2, dirfd, name, top, fresh, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

/* Directories that could not be emptied: skipped, so the rest of the tree still goes. */
#define TMP_STUCK_MAX 64
struct stuck {
	struct {
		dev_t dev;
		ino_t ino;
	} v[TMP_STUCK_MAX];
	int n;
};

static _rm_ bool is_stuck(const struct stuck *s, int fd)
{
	struct stat st;

	if (s->n == 0 || fstat(fd, &st) < 0)
		return false;
	for (int i = 0; i < s->n; i++)
		if (s->v[i].dev == st.st_dev && s->v[i].ino == st.st_ino)
			return true;
	return false;
}

/* False when the set is full: then the removal stops where it is. */
static _rm_ bool add_stuck(struct stuck *s, int fd)
{
	struct stat st;

	if (s->n == TMP_STUCK_MAX || fstat(fd, &st) < 0)
		return false;
	s->v[s->n].dev = st.st_dev;
	s->v[s->n].ino = st.st_ino;
	s->n++;
	return true;
}

/*
 * Remove everything beneath |top| (a directory fd): descend into a
 * non-empty subdirectory, return to the level above (its held fd) when a
 * directory is empty. Never follows a symlink the command planted
 * (unlinkat removes the link; directories are opened O_NOFOLLOW). An entry
 * it cannot remove is left, with the directories above it; everything
 * else still goes. Returns true when everything went.
 */
static _rm_ bool remove_beneath(int top)
{
	char buf[8192];
	int fds[TMP_DEPTH + 1];
	int depth = 0;
	unsigned long seq = 0, seq_seen = 0;
	struct stuck skip = { .n = 0 };
	bool stuck = false, top_failed = false;

	fds[0] = top;
	(void)fchmod(top, 0700);
	for (long budget = 0; budget < 10000000 && !stuck; budget++) {
		int cur = fds[depth];
		bool descended = false, failed = false;
		long n;

		if (lseek(cur, 0, SEEK_SET) < 0) {
			stuck = true;
			break;
		}
		while (!descended && (n = syscall(SYS_getdents64, cur, buf, sizeof(buf))) > 0) {
			for (long off = 0; off < n && !descended;) {
				struct corral_dirent64 *d = (void *)(buf + off);
				const char *name = d->name;
				int fd;

				off += d->reclen;
				if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
					continue;
				if (unlinkat(cur, name, 0) == 0)
					continue;
				if (errno != EISDIR && errno != EPERM) {
					failed = true;
					continue;
				}
				if (unlinkat(cur, name, AT_REMOVEDIR) == 0)
					continue;
				if (errno != ENOTEMPTY && errno != EEXIST && errno != EACCES) {
					failed = true;
					continue;
				}
				fd = open_subdir(cur, name);
				if (fd < 0) {
					failed = true;
					continue;
				}
				if (is_stuck(&skip, fd)) {
					safe_close(fd);
					failed = true;
					continue;
				}
				(void)fchmod(fd, 0700); /* also what moving it takes */
				if (depth == TMP_DEPTH) {
					/* Too deep to hold one more fd: up to the top, and on. */
					safe_close(fd);
					if (move_to_top(cur, name, top, &seq) < 0)
						failed = true;
					continue;
				}
				fds[++depth] = fd;
				descended = true;
			}
		}
		if (descended)
			continue;
		if (depth == 0) {
			/* Directories moved up since the last pass may have come in behind its listing. */
			if (seq != seq_seen) {
				seq_seen = seq;
				continue;
			}
			top_failed = failed;
			break;
		}
		/* Not emptied: never entered again (the level above then keeps it, and is not emptied either). */
		if (failed && !add_stuck(&skip, cur)) {
			stuck = true;
			break;
		}
		safe_close(fds[depth--]); /* back to the level above: its own fd, never ".." */
	}
	while (depth > 0)
		safe_close(fds[depth--]);
	return !stuck && !top_failed && skip.n == 0;
}

struct rm_helper {
	int top;
	uid_t uid;
	gid_t gid;
};

/*
 * The helper: the command's uid and gid for the filesystem (fsuid/fsgid),
 * no supplementary groups, no capabilities. Only the filesystem identity:
 * with its real and saved uid still 0, the command's uid can neither
 * signal it (SIGSTOP would hold the supervisor, which waits for it) nor
 * ptrace it.
 */
static _rm_ int rm_helper_main(void *arg)
{
	const struct rm_helper *h = arg;
	struct {
		uint32_t version;
		int pid;
	} hdr = { 0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0 };
	struct {
		uint32_t effective, permitted, inheritable;
	} data[2] = {};

	if (syscall(SYS_setgroups, 0, NULL) < 0)
		_exit(2);
	/* setfs[ug]id return the previous value, never an error: read back to check. */
	syscall(SYS_setfsgid, h->gid);
	syscall(SYS_setfsuid, h->uid);
	if ((gid_t)syscall(SYS_setfsgid, -1) != h->gid || (uid_t)syscall(SYS_setfsuid, -1) != h->uid ||
	    syscall(SYS_capset, &hdr, data) < 0)
		_exit(2);
	_exit(remove_beneath(h->top) ? 0 : 1);
}

/* Run remove_beneath as the command's identity. False if it could not run or gave up. */
static bool remove_as(int top, uid_t uid, gid_t gid)
{
	const size_t stack_size = 128 * 1024;
	struct rm_helper h = { .top = top, .uid = uid, .gid = gid };
	sigset_t all, old;
	void *stack;
	pid_t pid;
	int status = -1;

	stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return false;
	/* No handler of the caller's runs in the helper: it starts, and stays, with every signal blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* CLONE_VFORK: this thread waits while the helper runs on its memory. */
	pid = clone(rm_helper_main, (char *)stack + stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD, &h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid > 0)
		while (waitpid(pid, &status, __WALL) < 0 && errno == EINTR)
			;
	munmap(stack, stack_size);
	return pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void corral_tmp_remove(const struct corral_sandbox *sb, struct corral_run *run)
{
	if (run->tmp_path && rmdir(run->tmp_path) == 0) { /* empty, the common case */
		run->tmp_fd = safe_close(run->tmp_fd);
		free(run->tmp_path);
		run->tmp_path = NULL;
		return;
	}
	if (run->tmp_fd >= 0) {
		if (geteuid() == 0)
			remove_as(run->tmp_fd, sb->switch_identity ? sb->uid : 0,
				  sb->switch_identity ? sb->gid : 0);
		else
			remove_beneath(run->tmp_fd);
		run->tmp_fd = safe_close(run->tmp_fd);
	}
	if (run->tmp_path) {
		rmdir(run->tmp_path);
		free(run->tmp_path);
		run->tmp_path = NULL;
	}
}

/* A world-writable sticky directory we may use, on tmpfs (|tmpfs|) or not. */
static bool tmp_candidate(const char *dir, bool tmpfs)
{
	struct statfs sf;
	struct stat st;

	return statfs(dir, &sf) == 0 && (sf.f_type == TMPFS_MAGIC) == tmpfs && stat(dir, &st) == 0 &&
	       (st.st_mode & 01777) == 01777 && access(dir, W_OK | X_OK) == 0;
}

/*
 * Where private tmps go. With a memory cgroup per run (|mem_cg|):
 * /dev/shm when it is a world-writable sticky tmpfs — creating and
 * removing a directory there costs microseconds, against tens of
 * microseconds and a journal write on ext4 — else /tmp; what a command
 * writes there is memory charged to its cgroup. Without one, nothing would
 * bound that memory (tmpfs pages are outside every rlimit), so a disk is
 * preferred: /var/tmp or /tmp when not tmpfs, and only when both are,
 * /dev/shm (docs/threat-model.md).
 */
const char *corral_tmp_base(bool mem_cg)
{
	if (!mem_cg) {
		if (tmp_candidate("/var/tmp", false))
			return "/var/tmp";
		if (tmp_candidate("/tmp", false))
			return "/tmp";
	}
	if (tmp_candidate("/dev/shm", true))
		return "/dev/shm";
	return "/tmp";
}

long corral_count_uid_tasks(uid_t uid, pid_t skip)
{
	char buf[8192], sub[300];
	long total = 0, n;
	int self = (int)getpid();
	int dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return -1;
	while ((n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct corral_dirent64 *d = (void *)(buf + off);
			struct stat st;

			off += d->reclen;
			if (d->name[0] < '1' || d->name[0] > '9')
				continue;
			/*
			 * /proc/PID is owned by the task's euid (root when it is not
			 * dumpable: not counted, which errs on the strict side); its
			 * task directory has 2 + threads links.
			 */
			if (fstatat(dfd, d->name, &st, 0) < 0 || st.st_uid != uid)
				continue;
			/* Our own process (and |skip|) is counted by the caller, at run time. */
			if (atoi(d->name) == self || (skip > 0 && atoi(d->name) == skip))
				continue;
			snprintf(sub, sizeof(sub), "%s/task", d->name);
			if (fstatat(dfd, sub, &st, 0) == 0)
				total += st.st_nlink > 2 ? (long)st.st_nlink - 2 : 1;
		}
	}
	safe_close(dfd);
	return total;
}
