/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The two small filters of Unix-socket mediation (see seccomp.h), written
 * as classic BPF by hand: each is a dozen instructions, and both must
 * leave every architecture but the native one, and x32 numbers, to the
 * main filter (which kills them) rather than take a decision of their own.
 *
 * Why sendmsg is notified whatever its destination: the address is behind a
 * pointer the filter cannot read. Why sendto only with dest_addr != NULL: a
 * send without an address goes to the connected peer, whose connect() was
 * mediated. sendmmsg: as sendmsg.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp/seccomp.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#elif defined(__riscv) && __riscv_xlen == 64
#define NATIVE_ARCH AUDIT_ARCH_RISCV64
#endif

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif

#define OFF_NR offsetof(struct seccomp_data, nr)
#define OFF_ARCH offsetof(struct seccomp_data, arch)
#if __BYTE_ORDER == __LITTLE_ENDIAN
#define OFF_ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#define OFF_ARG_HI(i) (offsetof(struct seccomp_data, args) + 8 * (i) + 4)
#else
#define OFF_ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i) + 4)
#define OFF_ARG_HI(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#endif

#define LD(off) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define JEQ(k, t, f) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (t), (f))
#define JGE(k, t, f) BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (k), (t), (f))
#define RET(k) BPF_STMT(BPF_RET | BPF_K, (k))

static int copy_prog(const struct sock_filter *insns, size_t n, struct corral_bpf *out)
{
	out->filter = malloc(n * sizeof(*insns));
	if (!out->filter)
		return -ENOMEM;
	memcpy(out->filter, insns, n * sizeof(*insns));
	out->len = (unsigned short)n;
	return 0;
}

int corral_unotify_compile(struct corral_bpf *notify, struct corral_bpf *guard, struct corral_error *err)
{
#ifdef NATIVE_ARCH
	/* Jump offsets are relative: target = this index + 1 + offset. ALLOW is 15, NOTIFY 14. */
	static const struct sock_filter n[] = {
		/* 0 */ LD(OFF_ARCH),
		/* 1 */ JEQ(NATIVE_ARCH, 0, 13),
		/* 2 */ LD(OFF_NR),
		/* 3 */ JGE(0x40000000, 11, 0),        /* x32: the main filter kills it */
		/* 4 */ JEQ(__NR_connect, 9, 0),
		/* 5 */ JEQ(__NR_sendmmsg, 8, 0),
		/* 6 */ JEQ(__NR_sendto, 1, 0),
		/* 7 */ JEQ(__NR_sendmsg, 4, 7),
		/* 8 */ LD(OFF_ARG_LO(4)),             /* sendto: dest_addr */
		/* 9 */ JEQ(0, 0, 4),
		/* 10 */ LD(OFF_ARG_HI(4)),
		/* 11 */ JEQ(0, 3, 2),
		/* 12 */ LD(OFF_ARG_HI(2)),            /* sendmsg: flags, upper half */
		/* 13 */ JEQ(0, 0, 1),
		/* 14 */ RET(SECCOMP_RET_USER_NOTIF),
		/* 15 */ RET(SECCOMP_RET_ALLOW),
	};
	static const struct sock_filter g[] = {
		/* 0 */ LD(OFF_ARCH),
		/* 1 */ JEQ(NATIVE_ARCH, 0, 5),
		/* 2 */ LD(OFF_NR),
		/* 3 */ JEQ(__NR_sendmsg, 0, 3),
		/* 4 */ LD(OFF_ARG_HI(2)),
		/* 5 */ JEQ(0, 1, 0),
		/* 6 */ RET(SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		/* 7 */ RET(SECCOMP_RET_ALLOW),
	};

	notify->filter = guard->filter = NULL;
	notify->len = guard->len = 0;
	if (copy_prog(n, ARRAY_SIZE(n), notify) < 0 || copy_prog(g, ARRAY_SIZE(g), guard) < 0) {
		corral_bpf_free(notify);
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	}
	return 0;
#else
	return corral_err(err, CORRAL_E_UNSUPPORTED, EOPNOTSUPP,
			  "Unix-socket mediation: no filter for this architecture");
#endif
}

bool corral_unotify_available(char *why, size_t why_len)
{
	uint32_t action = SECCOMP_RET_USER_NOTIF;
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_BENEATH };
	int pfd, fd;

#ifndef NATIVE_ARCH
	snprintf(why, why_len, "no mediation filter for this architecture");
	return false;
#endif
	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) < 0) {
		snprintf(why, why_len, "seccomp user notification (Linux 5.0) unavailable: %s",
			 strerror(errno));
		return false;
	}
	pfd = (int)syscall(__NR_pidfd_open, getpid(), 0);
	if (pfd < 0) {
		snprintf(why, why_len, "pidfd_open (Linux 5.3) unavailable: %s", strerror(errno));
		return false;
	}
	fd = (int)syscall(__NR_pidfd_getfd, pfd, pfd, 0);
	if (fd < 0) {
		snprintf(why, why_len, "pidfd_getfd (Linux 5.6) unavailable: %s", strerror(errno));
		close(pfd);
		return false;
	}
	close(fd);
	close(pfd);
	fd = (int)syscall(__NR_openat2, AT_FDCWD, ".", &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS) {
		snprintf(why, why_len, "openat2 (Linux 5.6) unavailable");
		return false;
	}
	if (fd >= 0)
		close(fd);
	return true;
}

int corral_unotify_install(const struct corral_bpf *prog)
{
	struct sock_fprog fprog = { .len = prog->len, .filter = prog->filter };
	long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);

	return fd < 0 ? -errno : (int)fd;
}
