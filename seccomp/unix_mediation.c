/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What Unix-socket mediation needs from the kernel, and installing the
 * filter that carries it (its rules are built with the rest in filter.c:
 * corral_seccomp_compile_unix).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal/syscalls.h"
#include "seccomp/seccomp.h"

static bool has_cap_sys_ptrace(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data) < 0)
		return false;
	return (data[CAP_SYS_PTRACE / 32].effective >> (CAP_SYS_PTRACE % 32)) & 1;
}

bool corral_unotify_available(char *why, size_t why_len)
{
	uint32_t action = SECCOMP_RET_USER_NOTIF;
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_BENEATH };
	int pfd, fd;

	if (geteuid() == 0 && !has_cap_sys_ptrace()) {
		/*
		 * Root without CAP_SYS_PTRACE (a container's default capability
		 * set) cannot take the socket of a command running as another
		 * uid: pidfd_getfd needs ptrace access to it.
		 */
		snprintf(why, why_len, "corral runs as root without CAP_SYS_PTRACE (as in a container), so "
			 "pidfd_getfd cannot take a socket of a command of another uid: run the container "
			 "as a non-root user, or with --cap-add SYS_PTRACE (docs/deploy.md)");
		return false;
	}
	if (geteuid() != 0) {
		/* pidfd_getfd and process_vm_readv need ptrace access to the command. */
		int yfd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
		char c = '0';

		if (yfd >= 0) {
			if (read(yfd, &c, 1) != 1)
				c = '0';
			close(yfd);
		}
		if (c >= '2') {
			snprintf(why, why_len, "Yama ptrace_scope %c keeps an unprivileged supervisor from "
				 "reading the command's arguments", c);
			return false;
		}
	}
		if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) < 0) {
		snprintf(why, why_len, "seccomp user notification (Linux 5.0) unavailable: %s",
			 corral_strerror(errno));
		return false;
	}
	pfd = (int)syscall(__NR_pidfd_open, getpid(), 0);
	if (pfd < 0) {
		snprintf(why, why_len, "pidfd_open (Linux 5.3) unavailable: %s", corral_strerror(errno));
		return false;
	}
	fd = (int)syscall(__NR_pidfd_getfd, pfd, pfd, 0);
	if (fd < 0 && errno == EPERM) {
		/*
		 * Taking an fd of our own process needs no privilege: a seccomp
		 * filter corral runs under refused it (docker's and Kubernetes'
		 * RuntimeDefault allow pidfd_getfd only with CAP_SYS_PTRACE).
		 */
		snprintf(why, why_len, "a seccomp filter corral runs under (a container's profile) refuses "
			 "pidfd_getfd: start the container with --security-opt "
			 "seccomp=docs/deploy/seccomp-corral.json (docs/deploy.md)");
		close(pfd);
		return false;
	}
	if (fd < 0) {
		snprintf(why, why_len, "pidfd_getfd (Linux 5.6) unavailable: %s", corral_strerror(errno));
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

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

int corral_unotify_install(const struct corral_bpf *prog)
{
	struct sock_fprog fprog = { .len = prog->len, .filter = prog->filter };
	long fd;

	/*
	 * Once the supervisor has received a call, only a fatal signal may
	 * end the caller's wait (Linux 5.19): otherwise a handled signal
	 * would restart a connect the helper already made (EISCONN).
	 * Older kernels: without it.
	 */
	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		     SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &fprog);
	if (fd < 0 && errno == EINVAL)
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);
	return fd < 0 ? -errno : (int)fd;
}
