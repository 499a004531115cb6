/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Writing a small file whole, written once. Not installed. */
#ifndef CORRAL_INTERNAL_FILEIO_H
#define CORRAL_INTERNAL_FILEIO_H

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/*
 * Write all of |text| to |path| (relative to |dirfd|), opened
 * O_WRONLY|O_CLOEXEC||flags| (O_CREAT|O_EXCL|O_NOFOLLOW to make a new
 * one, with |mode|). One write: kernel files (uid_map, cgroup knobs) take
 * their value in one. Async-signal-safe (open, write, close only): usable
 * in a forked child. 0 or -errno (-EIO for a short write).
 */
static inline int corral_write_file_at(int dirfd, const char *path, const char *text, int flags, mode_t mode)
{
	size_t len = strlen(text);
	int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | flags, mode);
	ssize_t n;
	int e;

	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	e = n < 0 ? errno : (size_t)n != len ? EIO : 0;
	close(fd);
	return -e;
}

#endif
