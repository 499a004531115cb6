/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The run's private tmp (a fresh 0700 directory owned by the command's
 * uid, TMPDIR inside, every Landlock right beneath it) and its removal,
 * plus the per-uid task count RLIMIT_NPROC is set relative to.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "supervisor/sandbox.h"

int corral_tmp_create(const struct corral_sandbox *sb, struct corral_run *run,
		      struct corral_error *err)
{
	char tmpl[64];

	snprintf(tmpl, sizeof(tmpl), "%s/corral-tmp-XXXXXX", sb->tmp_base);

	if (!mkdtemp(tmpl))
		return corral_err(err, CORRAL_E_SETUP, errno, "private tmp %s: %s", tmpl, strerror(errno));
	run->tmp_path = strdup(tmpl);
	run->tmp_fd = open(tmpl, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (!run->tmp_path || run->tmp_fd < 0) {
		int e = run->tmp_path ? errno : ENOMEM;
		rmdir(tmpl);
		return corral_err(err, CORRAL_E_SETUP, e, "private tmp %s: %s", tmpl, strerror(e));
	}
	if (sb->switch_identity && fchown(run->tmp_fd, sb->uid, sb->gid) < 0)
		return corral_err(err, CORRAL_E_SETUP, errno, "private tmp %s: chown: %s", tmpl,
				  strerror(errno));
	return 0;
}

/* Open the directory |name| in |dirfd| without following symlinks, made 0700 first if needed. */
static int open_subdir(int dirfd, const char *name)
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
 * Remove everything beneath |top| (a directory fd), iteratively so a deep
 * tree needs neither recursion nor an fd per level: descend into the first
 * non-empty subdirectory, go back up through ".." when a directory is
 * empty. Never follows a symlink the command planted (unlinkat removes the
 * link; directories are opened O_NOFOLLOW). The whole tree is dead by now,
 * so nothing renames under us. Gives up on an entry it cannot remove.
 */
static void remove_beneath(int top)
{
	char buf[8192];
	int cur = fcntl(top, F_DUPFD_CLOEXEC, 3), depth = 0;
	bool stuck = false;

	if (cur < 0)
		return;
	(void)fchmod(cur, 0700);
	for (long budget = 0; budget < 10000000 && !stuck; budget++) {
		bool descended = false, failed = false;
		long n;

		if (lseek(cur, 0, SEEK_SET) < 0)
			break;
		while (!descended && (n = syscall(SYS_getdents64, cur, buf, sizeof(buf))) > 0) {
			for (long off = 0; off < n && !descended;) {
				struct {
					uint64_t ino;
					int64_t off;
					unsigned short reclen;
					unsigned char type;
					char name[];
				} *d = (void *)(buf + off);
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
				(void)fchmod(fd, 0700);
				safe_close(cur);
				cur = fd;
				depth++;
				descended = true;
			}
		}
		if (descended)
			continue;
		if (failed)
			stuck = true;
		if (depth == 0)
			break;
		{
			int up = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			safe_close(cur);
			cur = up;
			depth--;
			if (cur < 0)
				return;
		}
	}
	safe_close(cur);
}

void corral_tmp_remove(struct corral_run *run)
{
	if (run->tmp_fd >= 0) {
		remove_beneath(run->tmp_fd);
		run->tmp_fd = safe_close(run->tmp_fd);
	}
	if (run->tmp_path) {
		rmdir(run->tmp_path);
		free(run->tmp_path);
		run->tmp_path = NULL;
	}
}

/*
 * Where private tmps go: /dev/shm when it is a world-writable sticky
 * tmpfs — creating and removing a directory there costs microseconds,
 * against tens of microseconds and a journal write on ext4 — else /tmp.
 * What a command writes there is memory: charged to the run's memory
 * cgroup when it has one; otherwise bounded by the tmpfs size, as files
 * under the root are bounded by their filesystem (docs/threat-model.md).
 */
const char *corral_tmp_base(void)
{
	struct statfs sf;
	struct stat st;

	if (statfs("/dev/shm", &sf) == 0 && sf.f_type == TMPFS_MAGIC && stat("/dev/shm", &st) == 0 &&
	    (st.st_mode & 01777) == 01777 && access("/dev/shm", W_OK | X_OK) == 0)
		return "/dev/shm";
	return "/tmp";
}

long corral_count_uid_tasks(uid_t uid)
{
	char buf[8192], sub[300];
	long total = 0, n;
	int self = (int)getpid();
	int dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return -1;
	while ((n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);
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
			/* Our own process is counted by the caller, at run time. */
			if (atoi(d->name) == self)
				continue;
			snprintf(sub, sizeof(sub), "%s/task", d->name);
			if (fstatat(dfd, sub, &st, 0) == 0)
				total += st.st_nlink > 2 ? (long)st.st_nlink - 2 : 1;
		}
	}
	safe_close(dfd);
	return total;
}
