/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* openat2(2) for libcorral: the uapi (with a fallback for old headers) and a retrying wrapper. */
#ifndef CORRAL_INTERNAL_OPENAT2_H
#define CORRAL_INTERNAL_OPENAT2_H

#include <errno.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#else
struct open_how {
	uint64_t flags;
	uint64_t mode;
	uint64_t resolve;
};
#define RESOLVE_NO_XDEV 0x01
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_NO_SYMLINKS 0x04
#define RESOLVE_BENEATH 0x08
#endif
#ifndef SYS_openat2
#define SYS_openat2 437 /* the same number on every architecture */
#endif

/* openat2(dirfd, path, {flags, mode, resolve}): the fd, or -errno. */
static inline int corral_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode,
				 uint64_t resolve)
{
	struct open_how how = { .flags = flags, .mode = mode, .resolve = resolve };

	for (int tries = 0;; tries++) {
		long r = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

		if (r >= 0)
			return (int)r;
		/*
		 * EAGAIN: a rename or mount raced a ".." walk and the kernel
		 * could not prove it stayed beneath; it asks us to retry. A
		 * sandbox can keep this up forever, so the retries are bounded.
		 */
		if ((errno == EAGAIN && tries < 64) || errno == EINTR)
			continue;
		return -errno;
	}
}

#endif
