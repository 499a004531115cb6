/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading and writing a small file whole, written once. Not installed. */
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

/*
 * Read |path| (relative to |dirfd|, opened O_RDONLY|O_CLOEXEC||flags|)
 * into |buf|: one read of at most |size| - 1 bytes, NUL-terminated, as
 * /proc, /sys and cgroup files are read whole. Async-signal-safe (open,
 * read, close only). The byte count, or -errno (|buf| then "").
 */
static inline ssize_t corral_read_file_at(int dirfd, const char *path, int flags, char *buf, size_t size)
{
	int fd, e;
	ssize_t n;

	if (size == 0)
		return -EINVAL;
	buf[0] = '\0';
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | flags);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = '\0';
	return n;
}

#endif
