/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unix-socket mediation, set-up side: which mode a policy gets, the plan
 * (the bases a pathname may resolve under, the identity), and the child's
 * steps that install the filter and hand its listener over. The parent's
 * side is mediate.c; decode.c takes calls apart; helper.c makes them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal/syscalls.h"
#include "landlock/landlock.h"
#include "supervisor/exec/denials.h"
#include "supervisor/exec/sandbox.h"
#include "supervisor/local/unotify/unotify.h"

#include "supervisor/local/unotify/unotify-private.h"

/* ------------------------------------------------------------------ mode */

/*
 * The hand-over fd of a supervisor listener, when this host and |p| allow
 * one; else -1 with |why| saying what is missing.
 */
int corral_unotify_handover(const struct corral_policy *p, char *why, size_t why_len)
{
	struct rlimit own;

	if (!corral_seccomp_available()) {
		snprintf(why, why_len, "no seccomp");
		return -1;
	}
	if (getrlimit(RLIMIT_NOFILE, &own) < 0 || p->limits.open_files == 0 ||
	    (own.rlim_max != RLIM_INFINITY && p->limits.open_files >= (uint64_t)own.rlim_max) ||
	    p->limits.open_files >= INT_MAX) {
		/* The hand-over fd must be one the command cannot allocate, yet one we can. */
		snprintf(why, why_len, "limits.open_files (%llu) must be set and below corral's own "
			 "hard RLIMIT_NOFILE (%llu)", (unsigned long long)p->limits.open_files,
			 (unsigned long long)own.rlim_max);
		return -1;
	}
	if (!corral_unotify_available(why, why_len))
		return -1;
	/*
	 * At the limit: the first number the command cannot allocate. Never
	 * below 3, which would replace one of its stdio fds (any number at
	 * or above the limit will do).
	 */
	return p->limits.open_files < 3 ? 3 : (int)p->limits.open_files;
}

int corral_unix_mode(const struct corral_policy *p, int landlock_abi, int *handover_fd,
		     struct corral_posture *ps)
{
	const char *force = secure_getenv("CORRAL_TEST_UNIX_MEDIATION");
	char why[256] = "";

	*handover_fd = -1;
	if (p->network == CORRAL_NET_ALLOW) {
		/*
		 * Every inet connect goes to the supervisor (the egress proxy
		 * only), whatever becomes of Unix sockets; the sandbox checked
		 * the listener can be had (corral_egress_posture).
		 */
		*handover_fd = corral_unotify_handover(p, why, sizeof(why));
		if (*handover_fd >= 0 && !(force && strcmp(force, "0") == 0)) {
			corral_posture_add(ps, CORRAL_P_NET_UNIX_MEDIATED, CORRAL_PROMISE_ENFORCED,
					   "connect/sendto/sendmsg of Unix sockets checked by the supervisor "
					   "(seccomp user notification): only socket files under the root, the "
					   "private tmp and read_write paths; abstract addresses refused");
			return CORRAL_UNIX_MEDIATED;
		}
		if (!*why)
			snprintf(why, sizeof(why), "CORRAL_TEST_UNIX_MEDIATION=0");
		corral_posture_add(ps, CORRAL_P_NET_UNIX_REFUSED, CORRAL_PROMISE_ENFORCED,
				   "socket(AF_UNIX) refused (socketpair works): %s", why);
		return CORRAL_UNIX_REFUSED;
	}
	if (force && strcmp(force, "0") == 0) {
		snprintf(why, sizeof(why), "CORRAL_TEST_UNIX_MEDIATION=0");
	} else if (p->network == CORRAL_NET_HOST || landlock_abi >= 9) {
		/*
		 * Unix sockets need no mediation here, but a pty's peer
		 * (TIOCGPTPEER) and the denials' socket() counts still go
		 * through a listener when the host can have one.
		 */
		*handover_fd = corral_unotify_handover(p, why, sizeof(why));
		if (p->network == CORRAL_NET_HOST) {
			corral_posture_add(ps, CORRAL_P_NET_UNIX_MEDIATED, CORRAL_PROMISE_NA,
					   "network \"host\": Unix sockets are not confined");
			return CORRAL_UNIX_OPEN;
		}
		corral_posture_add(ps, CORRAL_P_NET_UNIX_MEDIATED, CORRAL_PROMISE_ENFORCED,
				   "pathname Unix sockets reachable only under the root and read_write paths: "
				   "Landlock ABI 9 (RESOLVE_UNIX); abstract ones scoped");
		return CORRAL_UNIX_LANDLOCK;
	} else if ((*handover_fd = corral_unotify_handover(p, why, sizeof(why))) >= 0) {
		corral_posture_add(ps, CORRAL_P_NET_UNIX_MEDIATED, CORRAL_PROMISE_ENFORCED,
				   "connect/sendto/sendmsg of Unix sockets checked by the supervisor "
				   "(seccomp user notification): only socket files under the root, the "
				   "private tmp and read_write paths; abstract addresses refused");
		return CORRAL_UNIX_MEDIATED;
	}
	corral_posture_add(ps, CORRAL_P_NET_UNIX_REFUSED, CORRAL_PROMISE_ENFORCED,
			   "socket(AF_UNIX) refused (socketpair works): Unix-socket mediation needs "
			   "Landlock ABI 9, or seccomp user notification + pidfd_getfd + openat2 (Linux "
			   "5.6): %s", why);
	return CORRAL_UNIX_REFUSED;
}

/* ------------------------------------------------------------------ plan */

void corral_unotify_plan_free(struct corral_unotify_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n_bases; i++) {
		free(plan->bases[i].path);
		safe_close(plan->bases[i].fd);
	}
	free(plan->bases);
	free(plan);
}

static int add_base(struct corral_unotify_plan *plan, const char *path)
{
	char *real = realpath(path, NULL);
	int fd;

	if (!real)
		return errno == ENOENT ? 0 : -errno; /* a missing read_write path is skipped, as Landlock does */
	fd = open(real, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		free(real);
		return -e;
	}
	plan->bases[plan->n_bases++] = (struct base){ real, fd };
	return 0;
}

int corral_unotify_plan_new(const struct corral_sandbox *sb, int handover_fd,
			    struct corral_unotify_plan **out, struct corral_error *err)
{
	const struct corral_strv *rw = &sb->policy->fs.read_write;
	struct corral_unotify_plan *plan = calloc(1, sizeof(*plan));
	int r;

	if (!plan)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	plan->bases = calloc(rw->n + 1, sizeof(*plan->bases));
	if (!plan->bases) {
		corral_unotify_plan_free(plan);
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	}
	r = add_base(plan, sb->root);
	for (size_t i = 0; r == 0 && i < rw->n; i++)
		r = add_base(plan, rw->v[i]);
	if (r < 0) {
		corral_unotify_plan_free(plan);
		return corral_err(err, CORRAL_E_SETUP, -r, "Unix-socket mediation: opening the allowed paths: %s",
				  corral_strerror(-r));
	}
	plan->handover_fd = handover_fd;
	plan->switch_identity = sb->switch_identity;
	plan->uid = sb->uid;
	plan->gid = sb->gid;
	plan->inet = sb->policy->network != CORRAL_NET_NONE;
	plan->network = sb->policy->network;
	plan->egress = sb->egress;
	*out = plan;
	return 0;
}

/* ----------------------------------------------------------------- child */

int corral_unotify_child_prepare(const struct corral_unotify_plan *plan, int sock, int *const *keep,
				  size_t n_keep)
{
	const int h = plan->handover_fd;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	/* Room for h, and for what moves above it. */
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur <= (rlim_t)h + n_keep + 1) {
		rl.rlim_cur = (rlim_t)h + n_keep + 2;
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max)
			rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			return -errno;
	}
	if (sock == h)
		return 0; /* already there (SOCK_CLOEXEC) */
	for (size_t i = 0; i < n_keep; i++)
		if (*keep[i] == h) {
			int fd = fcntl(h, F_DUPFD_CLOEXEC, h + 1);

			if (fd < 0)
				return -errno;
			/* The same fd named twice moves once. */
			for (size_t j = i; j < n_keep; j++)
				if (*keep[j] == h)
					*keep[j] = fd;
		}
	/* Close-on-exec: gone before the command runs; and above its RLIMIT_NOFILE for good. */
	if (dup3(sock, h, O_CLOEXEC) < 0)
		return -errno;
	return 0;
}

int corral_unotify_child_install(const struct corral_unotify_plan *plan, const struct corral_bpf *prog)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char byte = 'L';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	int lfd, r = 0;

	lfd = corral_unotify_install(prog);
	if (lfd < 0)
		return lfd;
	memset(u.buf, 0, sizeof(u.buf));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &lfd, sizeof(int));
	/*
	 * The filter is live: a plain sendmsg would wait for a supervisor
	 * that has not got the listener yet. The upper flag bits (ignored by
	 * the kernel) on the hand-over fd are the one sendmsg it lets through.
	 */
	if (syscall(SYS_sendmsg, plan->handover_fd, &msg, (long)(CORRAL_UNOTIFY_PASS_FLAGS | MSG_NOSIGNAL)) != 1)
		r = -errno;
	close(lfd);
	return r;
}
