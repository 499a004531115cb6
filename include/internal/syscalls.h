/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Syscall numbers newer than some libc headers (the same on every architecture). */
#ifndef CORRAL_INTERNAL_SYSCALLS_H
#define CORRAL_INTERNAL_SYSCALLS_H

#include <sys/syscall.h>

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif

#include <stdint.h>

/*
 * One record of getdents64(2), read with the raw syscall (async-signal-safe,
 * no DIR allocation): advance by |reclen|.
 */
struct corral_dirent64 {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

#endif
