/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mediation's helper: a process of the sandbox's uid/gid, outside its
 * Landlock domain, that makes the calls the supervisor checked (so
 * SO_PEERCRED and SCM_CREDENTIALS show the sandbox's identity, and a
 * blocking connect or send never blocks the event loop). The protocol
 * (struct hreq/hrep, OP_*) is in unotify-private.h.
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

static uint8_t helper_buf[sizeof(struct hreq) + PAYLOAD_MAX + CONTROL_MAX];

/* The helper's loop; runs in a forked process, syscalls only. */
static _Noreturn void helper_main(int sock)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * (RIGHTS_MAX + 2))];
		struct cmsghdr align;
	} in;
	union {
		char buf[CMSG_SPACE(sizeof(int) * (RIGHTS_MAX + 2)) + CONTROL_MAX];
		struct cmsghdr align;
	} out;
	int held[RIGHTS_MAX + 2], nheld = 0;

	for (;;) {
		struct iovec iov = { .iov_base = helper_buf, .iov_len = sizeof(helper_buf) };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = in.buf,
				    .msg_controllen = sizeof(in.buf) };
		struct hreq *q = (struct hreq *)helper_buf;
		struct hrep rep = {};
		int fds[RIGHTS_MAX + 2], nfds = 0;
		struct sockaddr_un target;
		struct sockaddr *addr = NULL;
		socklen_t alen = 0;
		ssize_t n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
		long r;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);
		/* A later message: the supervisor has closed its copies of what we hold. */
		while (nheld)
			close(held[--nheld]);
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
				int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));

				for (int i = 0; i < k; i++) {
					int f;

					memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
					if (nfds < (int)ARRAY_SIZE(fds))
						fds[nfds++] = f;
					else
						close(f);
				}
			}
		if ((size_t)n >= sizeof(*q) && (q->op == OP_HOLD || q->op == OP_RELEASE)) {
			memcpy(held, fds, sizeof(int) * (size_t)nfds);
			nheld = nfds;
			continue; /* no answer */
		}
		if ((size_t)n < sizeof(*q) || nfds < 1 + (q->addr_mode == ADDR_TARGET) + (int)q->n_rights ||
		    q->ctl_len > CONTROL_MAX || (size_t)n < sizeof(*q) + q->payload_len + q->ctl_len) {
			rep.err = EIO;
			goto reply;
		}
		rep.id = q->id;
		if (q->addr_mode == ADDR_TARGET) {
			/* /proc/self/fd/N: connect follows it to the socket inode we resolved. */
			char num[16];
			int v = fds[1], k = 0, len = 0;

			memset(&target, 0, sizeof(target));
			target.sun_family = AF_UNIX;
			do
				num[k++] = (char)('0' + v % 10);
			while ((v /= 10) && k < (int)sizeof(num));
			memcpy(target.sun_path, "/proc/self/fd/", 14);
			len = 14;
			while (k)
				target.sun_path[len++] = num[--k];
			addr = (struct sockaddr *)&target;
			alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
		} else if (q->addr_mode == ADDR_COPY) {
			addr = (struct sockaddr *)q->addr;
			alen = q->addr_len;
		}
		switch (q->op) {
		case OP_CONNECT:
			r = connect(fds[0], addr, alen);
			break;
		case OP_SENDTO:
			r = sendto(fds[0], helper_buf + sizeof(*q), q->payload_len, (int)q->flags | MSG_NOSIGNAL,
				   addr, alen);
			break;
		case OP_SENDMSG: {
			struct iovec piov = { .iov_base = helper_buf + sizeof(*q), .iov_len = q->payload_len };
			struct msghdr sm = { .msg_name = addr, .msg_namelen = alen, .msg_iov = &piov,
					     .msg_iovlen = 1 };
			int first = 1 + (q->addr_mode == ADDR_TARGET);
			size_t ctl = 0;

			memset(out.buf, 0, sizeof(out.buf));
			if (q->n_rights) {
				struct cmsghdr *cm = (struct cmsghdr *)out.buf;

				cm->cmsg_level = SOL_SOCKET;
				cm->cmsg_type = SCM_RIGHTS;
				cm->cmsg_len = CMSG_LEN(sizeof(int) * q->n_rights);
				memcpy(CMSG_DATA(cm), &fds[first], sizeof(int) * q->n_rights);
				ctl = CMSG_SPACE(sizeof(int) * q->n_rights);
			}
			/* The inet-level ones, as the caller wrote them (aligned cmsgs: they stay aligned). */
			memcpy(out.buf + ctl, helper_buf + sizeof(*q) + q->payload_len, q->ctl_len);
			ctl += q->ctl_len;
			if (ctl) {
				sm.msg_control = out.buf;
				sm.msg_controllen = ctl;
			}
			r = sendmsg(fds[0], &sm, (int)q->flags | MSG_NOSIGNAL);
			break;
		}
		default:
			r = -1;
			errno = EINVAL;
		}
		if (r < 0)
			rep.err = errno;
		else
			rep.val = r;
reply:
		/* Kept, not closed, until the supervisor's next message (see OP_HOLD). */
		memcpy(held, fds, sizeof(int) * (size_t)nfds);
		nheld = nfds;
		while (send(sock, &rep, sizeof(rep), MSG_NOSIGNAL) < 0 && errno == EINTR)
			;
	}
}

/* Fork the helper as the sandbox's identity. Returns its pid, or -errno. */
pid_t corral_un_helper_spawn(const struct corral_unotify_plan *plan, int *sock_out)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	{
		int sz = 4 * (int)sizeof(helper_buf);

		setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	/* Exit signal 0, as the engine's main child: no SIGCHLD for the host. */
	pid = (pid_t)syscall(SYS_clone, 0L, NULL, NULL, NULL, 0L);
	if (pid < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		return -e;
	}
	if (pid == 0) {
		struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
		struct __user_cap_data_struct data[2] = {};
		sigset_t none;
		int s = sv[1];

		if (s != 3) {
			if (dup3(s, 3, 0) < 0)
				_exit(127);
			s = 3;
		}
		if (syscall(SYS_close_range, 4U, ~0U, 0) < 0)
			for (int fd = 4; fd < 1024; fd++)
				close(fd);
		close(0);
		close(1);
		close(2);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		/* Out of the terminal's reach (Ctrl-C is corral's to handle), and no host handler runs here. */
		setsid();
		for (int sig = 1; sig < _NSIG; sig++) {
			struct sigaction sa = { .sa_handler = sig == SIGPIPE ? SIG_IGN : SIG_DFL };

			if (sig != SIGKILL && sig != SIGSTOP && !(sig >= 32 && sig < SIGRTMIN))
				sigaction(sig, &sa, NULL);
		}
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (plan->switch_identity) {
			gid_t g = plan->gid;

			if (syscall(SYS_setgroups, 1, &g) < 0 || syscall(SYS_setresgid, g, g, g) < 0 ||
			    syscall(SYS_setresuid, plan->uid, plan->uid, plan->uid) < 0)
				_exit(127);
		}
		/* No capability survives: uid 0 (--user root) keeps none either. */
		if (syscall(SYS_capset, &hdr, data) < 0)
			_exit(127);
		helper_main(s);
	}
	close(sv[1]);
	*sock_out = sv[0];
	return pid;
}
