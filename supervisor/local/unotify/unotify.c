/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unix-socket mediation, supervisor side (see unotify.h for the shape).
 *
 * Hazards, and what each step is for:
 *  - The sandbox can rewrite its memory while we look at it: every
 *    argument (address, msghdr, iovecs, payload, control) is copied once
 *    with process_vm_readv, and only the copy is used. The kernel never
 *    re-executes the call (no SECCOMP_USER_NOTIF_FLAG_CONTINUE), so there
 *    is no second read.
 *  - The fd number can be re-pointed by another thread (dup2): we act on
 *    the socket object taken with pidfd_getfd, never on the number again.
 *  - The pid in a notification may die and be reused: a pidfd is opened,
 *    then SECCOMP_IOCTL_NOTIF_ID_VALID proves the notification (hence the
 *    task) is still the one we took the pidfd and the memory of.
 *  - Paths are resolved by the kernel beneath a base directory fd with
 *    RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS (no "..", absolute symlink or
 *    /proc magic link escapes); the call then goes to /proc/self/fd/N of
 *    that O_PATH fd, so nothing is looked up twice.
 *  - SO_PEERCRED and SCM_CREDENTIALS show whoever calls connect/send: a
 *    helper process running as the sandbox's uid/gid makes the calls, so
 *    a listener sees the sandbox's identity (its pid is the helper's).
 *    The helper is also what keeps the event loop from blocking on a
 *    blocking connect or send (it serves requests one at a time).
 *  - The helper is a child of corral outside the run's session and
 *    without no_new_privs (unless corral itself has it: then a concurrent
 *    run's sweep in the same process could take it for a sandboxed
 *    orphan); it is killed and reaped before this run's sweep.
 *  - Abstract addresses are refused (EACCES): the helper is outside the
 *    sandbox's Landlock domain, so the abstract-socket scope would not
 *    hold for a call it makes.
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

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#ifndef SO_DOMAIN
#define SO_DOMAIN 39
#endif
/* The number 5.0-5.7 kernels know (later ones accept both). */
#define NOTIF_ID_VALID_OLD _IOR('!', 2, __u64)

#define PAYLOAD_MAX (64 * 1024)  /* bytes one mediated send carries (stream: a short write) */
#define CONTROL_MAX 4096
#define RIGHTS_MAX 250            /* SCM_MAX_FD is 253; 2 go to the socket and the target */
#define INFLIGHT_MAX 64

/* ------------------------------------------------------------------ mode */

/*
 * The hand-over fd of a supervisor listener, when this host and |p| allow
 * one; else -1 with |why| saying what is missing.
 */
static int listener_handover(const struct corral_policy *p, char *why, size_t why_len)
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
	char why[200] = "";

	*handover_fd = -1;
	if (force && strcmp(force, "0") == 0) {
		snprintf(why, sizeof(why), "CORRAL_TEST_UNIX_MEDIATION=0");
	} else if (p->network == CORRAL_NET_HOST || landlock_abi >= 9) {
		/*
		 * Unix sockets need no mediation here, but a pty's peer
		 * (TIOCGPTPEER) and the denials' socket() counts still go
		 * through a listener when the host can have one.
		 */
		*handover_fd = listener_handover(p, why, sizeof(why));
		if (p->network == CORRAL_NET_HOST) {
			corral_posture_add(ps, "net.unix_mediated", CORRAL_PROMISE_NA,
					   "network \"host\": Unix sockets are not confined");
			return CORRAL_UNIX_OPEN;
		}
		corral_posture_add(ps, "net.unix_mediated", CORRAL_PROMISE_ENFORCED,
				   "pathname Unix sockets reachable only under the root and read_write paths: "
				   "Landlock ABI 9 (RESOLVE_UNIX); abstract ones scoped");
		return CORRAL_UNIX_LANDLOCK;
	} else if ((*handover_fd = listener_handover(p, why, sizeof(why))) >= 0) {
		corral_posture_add(ps, "net.unix_mediated", CORRAL_PROMISE_ENFORCED,
				   "connect/sendto/sendmsg of Unix sockets checked by the supervisor "
				   "(seccomp user notification): only socket files under the root, the "
				   "private tmp and read_write paths; abstract addresses refused");
		return CORRAL_UNIX_MEDIATED;
	}
	corral_posture_add(ps, "net.unix_refused", CORRAL_PROMISE_ENFORCED,
			   "socket(AF_UNIX) refused (socketpair works): Unix-socket mediation needs "
			   "Landlock ABI 9, or seccomp user notification + pidfd_getfd + openat2 (Linux "
			   "5.6): %s", why);
	return CORRAL_UNIX_REFUSED;
}

/* ------------------------------------------------------------------ plan */

struct base {
	char *path; /* absolute, no trailing slash (except "/") */
	int fd;     /* O_PATH */
};

struct corral_unotify_plan {
	int handover_fd;
	struct base *bases; /* root, then read_write paths */
	size_t n_bases;
	bool switch_identity;
	uid_t uid;
	gid_t gid;
	bool inet; /* the network mode lets inet sockets connect and address sends (not "none") */
	int network; /* enum corral_network, for the denials' hints */
};

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

/* ---------------------------------------------------------------- helper */

/*
 * OP_HOLD: no call, only fds to keep. The fds a request carries (the
 * command's socket and SCM_RIGHTS, taken with pidfd_getfd) may be the last
 * references once the command is gone, and closing the last one can block:
 * a TCP socket with SO_LINGER and unsent data sleeps for its linger time in
 * close(). So the supervisor's event loop never makes that close: it hands
 * every fd it took to a helper (with the request, or OP_HOLD when the
 * request failed), closes its own copies, and only then sends the helper
 * anything else; a helper closes what it holds when the next message
 * comes (OP_RELEASE, or any other), so the last close is always the
 * helper's, and a helper killed at the end of the run closes without
 * lingering (an exiting task does not linger).
 */
enum { OP_CONNECT = 1, OP_SENDTO = 2, OP_SENDMSG = 3, OP_HOLD = 4, OP_RELEASE = 5 };
enum { ADDR_NONE = 0, ADDR_COPY = 1, ADDR_TARGET = 2 };

struct hreq {
	uint64_t id;
	uint32_t op;
	uint32_t flags;
	uint32_t addr_mode;
	uint32_t addr_len;
	uint32_t payload_len;
	uint32_t n_rights;
	uint32_t ctl_len; /* inet-level control messages, after the payload */
	uint8_t addr[sizeof(struct sockaddr_un) + 8];
};

struct hrep {
	uint64_t id;
	int64_t val;
	int32_t err;
};

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
static pid_t helper_spawn(const struct corral_unotify_plan *plan, int *sock_out)
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

/* ---------------------------------------------------------------- parent */

struct inflight {
	uint64_t id;
	bool mmsg; /* sendmmsg: answer 1 (one message sent), not the byte count */
	int helper; /* which helper makes the call */
};

/*
 * A helper makes the calls it is given one after the other, and a call
 * blocks as the caller's would (a full peer, a full backlog). So a call
 * goes to an idle helper, and a new one is forked (up to
 * CORRAL_UNOTIFY_HELPERS_MAX) when every helper is busy: one thread blocked
 * sending into a full socket does not hold up another's send, which may be
 * the one that lets the peer drain it.
 */
struct helper {
	int sock; /* -1: none (not started, or gone) */
	pid_t pid;
	unsigned busy; /* calls given, not answered */
	bool owe_release; /* holds fds and its OP_RELEASE could not be sent yet */
};

/* Fds taken from the command that no helper could be given yet (see OP_HOLD). */
#define PENDING_MAX 1024

struct corral_unotify {
	const struct corral_unotify_plan *plan;
	const char *tmp_path;
	int tmp_fd;
	int listener;
	struct helper helpers[CORRAL_UNOTIFY_HELPERS_MAX];
	size_t n_helpers; /* slots used, gone ones included */
	bool spawn_failed;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	size_t req_size, resp_size;
	struct inflight inflight[INFLIGHT_MAX];
	size_t n_inflight;
	int pending[PENDING_MAX];
	int n_pending;
	struct hreq *hq; /* request header + payload being built */
	struct corral_denials *denials; /* the run's; may be NULL */
};

static struct seccomp_notif_sizes notif_sizes;
static pthread_once_t sizes_once = PTHREAD_ONCE_INIT;

static void sizes_init(void)
{
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &notif_sizes) < 0)
		memset(&notif_sizes, 0, sizeof(notif_sizes));
}

struct corral_unotify *corral_unotify_start(const struct corral_sandbox *sb,
					    const struct corral_run *run, int sock)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct corral_unotify *un;
	struct cmsghdr *cm;
	int lfd = -1;

	if (!sb || !sb->unotify || sock < 0)
		return NULL;
	if (recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) != 1)
		return NULL;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return NULL;
	memcpy(&lfd, CMSG_DATA(cm), sizeof(int));
	un = calloc(1, sizeof(*un));
	if (!un)
		goto fail;
	/* The kernel's structures may be larger than this header's: ask once per process. */
	pthread_once(&sizes_once, sizes_init);
	if (!notif_sizes.seccomp_notif)
		goto fail;
	un->req_size = notif_sizes.seccomp_notif > sizeof(*un->req) ? notif_sizes.seccomp_notif :
		       sizeof(*un->req);
	un->resp_size = notif_sizes.seccomp_notif_resp > sizeof(*un->resp) ?
			notif_sizes.seccomp_notif_resp : sizeof(*un->resp);
	un->plan = sb->unotify;
	un->tmp_path = run ? run->tmp_path : NULL;
	un->tmp_fd = run ? run->tmp_fd : -1;
	un->denials = run ? run->denials : NULL;
	un->listener = lfd;
	return un;
fail:
	/* Closing the listener makes every mediated call fail with ENOSYS: closed, not open. */
	safe_close(lfd);
	if (un) {
		free(un->req);
		free(un->resp);
		free(un->hq);
		free(un);
	}
	return NULL;
}

static void drop_pending(struct corral_unotify *u);

void corral_unotify_free(struct corral_unotify *u)
{
	if (!u)
		return;
	safe_close(u->listener);
	for (size_t i = 0; i < u->n_helpers; i++) {
		struct helper *h = &u->helpers[i];

		safe_close(h->sock);
		if (h->pid > 0) {
			kill(h->pid, SIGKILL);
			while (waitpid(h->pid, NULL, __WALL) < 0 && errno == EINTR)
				;
		}
	}
	drop_pending(u);
	free(u->req);
	free(u->resp);
	free(u->hq);
	free(u);
}

int corral_unotify_pollfds(struct corral_unotify *u, struct pollfd *pf)
{
	int n = 0;

	if (!u)
		return 0;
	if (u->listener >= 0)
		pf[n++] = (struct pollfd){ .fd = u->listener, .events = POLLIN };
	for (size_t i = 0; i < u->n_helpers; i++)
		if (u->helpers[i].sock >= 0)
			pf[n++] = (struct pollfd){ .fd = u->helpers[i].sock, .events = POLLIN };
	return n;
}

static void respond(struct corral_unotify *u, uint64_t id, int64_t val, int err)
{
	memset(u->resp, 0, u->resp_size);
	u->resp->id = id;
	u->resp->val = err ? 0 : val;
	u->resp->error = err ? -err : 0;
	u->resp->flags = 0;
	/* ENOENT: the caller was interrupted (a signal) and will restart the call. */
	ioctl(u->listener, SECCOMP_IOCTL_NOTIF_SEND, u->resp);
}

static bool id_valid(struct corral_unotify *u, uint64_t id)
{
	if (ioctl(u->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0)
		return true;
	if (errno == ENOTTY || errno == EINVAL)
		return ioctl(u->listener, NOTIF_ID_VALID_OLD, &id) == 0;
	return false;
}

/* Copy |len| bytes at |remote| of task |tid|; 0 or -errno (short reads are EFAULT). */
static int peek(pid_t tid, uint64_t remote, void *local, size_t len)
{
	struct iovec l = { .iov_base = local, .iov_len = len };
	struct iovec r = { .iov_base = (void *)(uintptr_t)remote, .iov_len = len };
	ssize_t n;

	if (len == 0)
		return 0;
	n = process_vm_readv(tid, &l, 1, &r, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* Lexically normalise an absolute path in place: "//", "/./", "a/.." (the kernel re-checks beneath). */
static void normalise(char *p)
{
	char *out = p, *in = p;

	while (*in) {
		while (*in == '/')
			in++;
		if (!*in)
			break;
		if (in[0] == '.' && (in[1] == '/' || !in[1])) {
			in++;
			continue;
		}
		if (in[0] == '.' && in[1] == '.' && (in[2] == '/' || !in[2])) {
			in += 2;
			while (out > p && *--out != '/')
				;
			continue;
		}
		*out++ = '/';
		while (*in && *in != '/')
			*out++ = *in++;
	}
	if (out == p)
		*out++ = '/';
	*out = '\0';
}

/*
 * Resolve the pathname in |sun|/|alen| (task |tid|'s view) to an O_PATH fd
 * of a socket inode beneath an allowed base. Returns the fd, or -errno to
 * answer the caller with.
 */
static int resolve_socket(struct corral_unotify *u, pid_t tid, uint64_t id,
			  const struct sockaddr_un *sun, socklen_t alen)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS };
	char path[PATH_MAX + sizeof(sun->sun_path) + 2];
	size_t plen = alen - offsetof(struct sockaddr_un, sun_path), best = 0;
	int base_fd = -1, fd;
	const char *rel = NULL;
	struct stat st;

	if (plen > sizeof(sun->sun_path))
		plen = sizeof(sun->sun_path);
	plen = strnlen(sun->sun_path, plen);
	if (plen == 0)
		return -EINVAL;
	if (sun->sun_path[0] == '/') {
		memcpy(path, sun->sun_path, plen);
		path[plen] = '\0';
	} else {
		char link[64];
		ssize_t n;

		/* The calling thread's cwd (threads may differ without CLONE_FS). */
		snprintf(link, sizeof(link), "/proc/%d/cwd", tid);
		n = readlink(link, path, PATH_MAX);
		if (n <= 0 || n >= PATH_MAX || path[0] != '/')
			return -EACCES;
		path[n] = '\0';
		if (!id_valid(u, id))
			return -ESRCH;
		if (n > 10 && strcmp(path + n - 10, " (deleted)") == 0)
			return -ENOENT;
		path[n++] = '/';
		memcpy(path + n, sun->sun_path, plen);
		path[n + plen] = '\0';
	}
	normalise(path);

	/* The longest allowed base the path lies under: root, read_write paths, the private tmp. */
	for (size_t i = 0; i <= u->plan->n_bases; i++) {
		const char *b;
		int bfd;
		size_t bl;

		if (i < u->plan->n_bases) {
			b = u->plan->bases[i].path;
			bfd = u->plan->bases[i].fd;
		} else {
			b = u->tmp_path;
			bfd = u->tmp_fd;
		}
		if (!b || bfd < 0)
			continue;
		bl = strlen(b);
		if (bl == 1 && b[0] == '/')
			bl = 0; /* root "/": everything is under it */
		if (strncmp(path, b, bl) != 0 || (path[bl] != '/' && path[bl] != '\0'))
			continue;
		if (bl >= best || base_fd < 0) {
			best = bl;
			base_fd = bfd;
			rel = path + bl;
		}
	}
	if (base_fd < 0) {
		corral_denials_unix(u->denials, path, false);
		return -EACCES;
	}
	while (*rel == '/')
		rel++;
	if (*rel)
		fd = (int)syscall(__NR_openat2, base_fd, rel, &how, sizeof(how));
	else
		fd = fcntl(base_fd, F_DUPFD_CLOEXEC, 3); /* the base itself (a socket given as read_write) */
	if (fd < 0 && errno == EXDEV) {
		corral_denials_unix(u->denials, path, false);
		return -EACCES;
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		close(fd);
		return -ECONNREFUSED;
	}
	return fd;
}

/* Thread group of |tid| from /proc/TID/status, or -1. */
static pid_t task_tgid(pid_t tid)
{
	char path[64], buf[1024];
	const char *t;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	t = strstr(buf, "\nTgid:");
	return t ? (pid_t)atoi(t + 6) : -1;
}

/*
 * A pidfd for the calling thread (PIDFD_THREAD, Linux 6.9), else for its
 * thread group (threads made by pthread_create share the fd table the
 * socket is looked up in). The notification id is checked valid after
 * this, so a recycled tid cannot slip in.
 */
static int open_task_pidfd(pid_t tid)
{
	int fd = (int)syscall(__NR_pidfd_open, tid, PIDFD_THREAD);
	pid_t tgid;

	if (fd >= 0 || errno != EINVAL)
		return fd;
	fd = (int)syscall(__NR_pidfd_open, tid, 0);
	if (fd >= 0 || errno != EINVAL)
		return fd;
	tgid = task_tgid(tid);
	return tgid > 0 ? (int)syscall(__NR_pidfd_open, tgid, 0) : -1;
}

/* Copy the iovecs' bytes into |buf| (at most |cap|); returns the total length asked for, or -errno. */
static ssize_t gather(pid_t tid, uint64_t iov_ptr, uint64_t iovlen, uint8_t *buf, size_t cap,
		      size_t *copied)
{
	struct iovec riov[64];
	size_t total = 0, got = 0;
	uint64_t done = 0;

	if (iovlen > 1024)
		return -EMSGSIZE;
	while (done < iovlen) {
		size_t k = iovlen - done > ARRAY_SIZE(riov) ? ARRAY_SIZE(riov) : (size_t)(iovlen - done);
		int r = peek(tid, iov_ptr + done * sizeof(struct iovec), riov, k * sizeof(struct iovec));

		if (r < 0)
			return r;
		for (size_t i = 0; i < k; i++) {
			size_t want = riov[i].iov_len;

			total += want;
			if (got < cap) {
				size_t take = want < cap - got ? want : cap - got;

				r = peek(tid, (uint64_t)(uintptr_t)riov[i].iov_base, buf + got, take);
				if (r < 0)
					return r;
				got += take;
			}
		}
		done += k;
	}
	*copied = got;
	return (ssize_t)total;
}

/*
 * Handle one notification. Returns 0 when it was answered or handed to the
 * helper; the caller answers nothing more.
 */
/*
 * The helper for the next call: an idle one, else a new one, else (all
 * CORRAL_UNOTIFY_HELPERS_MAX busy) the least busy. -1 when none can be had.
 */
static int pick_helper(struct corral_unotify *u)
{
	int best = -1, free_slot = -1;

	for (size_t i = 0; i < u->n_helpers; i++) {
		const struct helper *h = &u->helpers[i];

		if (h->sock < 0) {
			if (free_slot < 0)
				free_slot = (int)i;
			continue;
		}
		if (h->busy == 0)
			return (int)i;
		if (best < 0 || h->busy < u->helpers[best].busy)
			best = (int)i;
	}
	if (free_slot < 0 && u->n_helpers < CORRAL_UNOTIFY_HELPERS_MAX)
		free_slot = (int)u->n_helpers;
	if (free_slot >= 0 && !u->spawn_failed) {
		struct helper *h = &u->helpers[free_slot];
		int sock = -1;
		pid_t pid = helper_spawn(u->plan, &sock);

		if (pid >= 0) {
			if (h->pid > 0) /* a gone helper's slot: reap it first */
				while (waitpid(h->pid, NULL, __WALL) < 0 && errno == EINTR)
					;
			*h = (struct helper){ .sock = sock, .pid = pid };
			if ((size_t)free_slot == u->n_helpers)
				u->n_helpers++;
			return free_slot;
		}
		u->spawn_failed = true;
	}
	return best;
}

/* One fd-less message to helper |hi| (OP_RELEASE), or the fds to hold (OP_HOLD). */
static int helper_send(struct corral_unotify *u, int hi, uint32_t op, const int *fds, int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * (RIGHTS_MAX + 2))];
		struct cmsghdr align;
	} cu;
	struct hreq q = { .op = op };
	struct iovec iov = { .iov_base = &q, .iov_len = sizeof(q) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (nfds > 0) {
		struct cmsghdr *cm;

		memset(cu.buf, 0, sizeof(cu.buf));
		m.msg_control = cu.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
	}
	return sendmsg(u->helpers[hi].sock, &m, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* Our copies are closed: let helper |hi| close its own (now, or at its next message). */
static void after_handover(struct corral_unotify *u, int hi, const int *fds, int nfds)
{
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	u->helpers[hi].owe_release = helper_send(u, hi, OP_RELEASE, NULL, 0) < 0;
}

/*
 * Drop the fds mediate took from the command, without ever making a last
 * close here (see OP_HOLD): helper |hi| has them already (the request), or
 * one is given them now; when none can take them (every helper's queue
 * full), they wait in |pending| for the next chance (flush_pending).
 */
static void release_fds(struct corral_unotify *u, int hi, const int *fds, int nfds)
{
	if (nfds == 0)
		return;
	if (hi < 0) {
		hi = pick_helper(u);
		if (hi >= 0 && helper_send(u, hi, OP_HOLD, fds, nfds) < 0)
			hi = -1;
	}
	if (hi >= 0) {
		after_handover(u, hi, fds, nfds);
		return;
	}
	for (int i = 0; i < nfds; i++) {
		if (u->n_pending < PENDING_MAX)
			u->pending[u->n_pending++] = fds[i];
		else
			close(fds[i]); /* unreachable: mediate takes nothing when the list could overflow */
	}
}

/* Hand pending fds and owed releases over, as far as the helpers' queues take them. */
static void flush_pending(struct corral_unotify *u)
{
	for (size_t i = 0; i < u->n_helpers; i++)
		if (u->helpers[i].owe_release && u->helpers[i].sock >= 0)
			u->helpers[i].owe_release = helper_send(u, (int)i, OP_RELEASE, NULL, 0) < 0;
	while (u->n_pending > 0) {
		int chunk = u->n_pending < RIGHTS_MAX ? u->n_pending : RIGHTS_MAX;
		int *from = u->pending + u->n_pending - chunk;
		int hi = pick_helper(u);

		if (hi < 0 || helper_send(u, hi, OP_HOLD, from, chunk) < 0)
			return;
		u->n_pending -= chunk;
		after_handover(u, hi, from, chunk);
	}
}

/*
 * At the end of the run, fds still pending go to a fresh helper that exits
 * at once: an exiting process does not linger in close.
 */
static void drop_pending(struct corral_unotify *u)
{
	int sock = -1;
	pid_t pid;

	if (u->n_pending == 0)
		return;
	pid = helper_spawn(u->plan, &sock);
	while (pid > 0 && u->n_pending > 0) {
		int chunk = u->n_pending < RIGHTS_MAX ? u->n_pending : RIGHTS_MAX;
		union {
			char buf[CMSG_SPACE(sizeof(int) * RIGHTS_MAX)];
			struct cmsghdr align;
		} cu;
		struct hreq q = { .op = OP_HOLD };
		struct iovec iov = { .iov_base = &q, .iov_len = sizeof(q) };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cu.buf,
				    .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)chunk) };
		struct cmsghdr *cm;

		memset(cu.buf, 0, sizeof(cu.buf));
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)chunk);
		memcpy(CMSG_DATA(cm), u->pending + u->n_pending - chunk, sizeof(int) * (size_t)chunk);
		if (sendmsg(sock, &m, MSG_NOSIGNAL) < 0) /* a fresh, empty queue: blocking is brief */
			break;
		for (int i = 0; i < chunk; i++)
			close(u->pending[--u->n_pending]);
	}
	safe_close(sock);
	/*
	 * Killed, not left to see the end: a live helper closes one chunk when
	 * the next arrives, and that close could linger; a task being killed
	 * closes what it holds and what is still queued to it without lingering.
	 */
	if (pid > 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
			;
	}
	while (u->n_pending > 0) /* no helper could be started: the last resort */
		close(u->pending[--u->n_pending]);
}

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif
#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif
#define PTMX_MAJOR 5
#define PTMX_MINOR 2

/*
 * ioctl(master, TIOCGPTPEER, flags): the peer of a pseudo-terminal the
 * command made. Landlock denies opening /dev/pts/N (every host terminal
 * lies there), and the kernel's TIOCGPTPEER opens the peer by that path
 * in the caller's domain: so the supervisor takes the master with
 * pidfd_getfd, checks it is a ptmx master (a /dev/ptmx character device
 * that answers TIOCGPTN), asks for the peer itself and injects it into
 * the caller (SECCOMP_IOCTL_NOTIF_ADDFD). A terminal the command does not
 * hold the master of stays out of reach: only a master yields a peer.
 * The supervisor's own open is always O_NOCTTY|O_CLOEXEC, so the pty never
 * becomes the supervisor's terminal; the command's O_CLOEXEC is honoured
 * on the injected fd (O_NOCTTY is implied: a session leader takes the
 * pty with TIOCSCTTY, as login_tty does).
 */
static void pty_peer(struct corral_unotify *u, const struct seccomp_notif *q)
{
	const int allowed = O_ACCMODE | O_NOCTTY | O_NONBLOCK | O_CLOEXEC;
	int flags = (int)q->data.args[2], pidfd = -1, master = -1, peer = -1, err = 0;
	unsigned int ptn;
	struct stat st;

	if (flags & ~allowed) {
		err = EINVAL;
		goto answer;
	}
	pidfd = open_task_pidfd((pid_t)q->pid);
	if (pidfd < 0 || !id_valid(u, q->id)) {
		err = ESRCH;
		goto answer;
	}
	master = (int)syscall(__NR_pidfd_getfd, pidfd, (int)q->data.args[0], 0);
	if (master < 0) {
		err = errno == ESRCH ? ESRCH : EBADF;
		goto answer;
	}
	if (fstat(master, &st) < 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) != PTMX_MAJOR ||
	    minor(st.st_rdev) != PTMX_MINOR || ioctl(master, TIOCGPTN, &ptn) < 0) {
		err = ENOTTY; /* what the kernel answers on anything but a master */
		goto answer;
	}
	peer = ioctl(master, TIOCGPTPEER, (flags & (O_ACCMODE | O_NONBLOCK)) | O_NOCTTY | O_CLOEXEC);
	if (peer < 0) {
		err = errno;
		goto answer;
	}
	{
		struct seccomp_notif_addfd add = {
			.id = q->id, .flags = SECCOMP_ADDFD_FLAG_SEND, .srcfd = (__u32)peer,
			.newfd_flags = (__u32)(flags & O_CLOEXEC),
		};
		int fd = ioctl(u->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);

		if (fd < 0 && errno == EINVAL) { /* before Linux 5.14: no FLAG_SEND, answer after */
			add.flags = 0;
			fd = ioctl(u->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
			if (fd >= 0)
				respond(u, q->id, fd, 0);
		}
		if (fd < 0)
			err = errno == ENOENT ? 0 : errno; /* ENOENT: the caller is gone, or was interrupted */
		if (fd < 0 && err)
			goto answer;
	}
	goto out;
answer:
	respond(u, q->id, 0, err ? err : EIO);
out:
	safe_close(peer);
	safe_close(master);
	safe_close(pidfd);
}

static void mediate(struct corral_unotify *u)
{
	const struct seccomp_notif *q = u->req;
	const __u64 *a = q->data.args;
	struct hreq *h = u->hq;
	uint8_t control[CONTROL_MAX];
	int fds[RIGHTS_MAX + 2], nfds = 0, pidfd = -1, sock = -1, err = 0, domain = 0, type = 0;
	socklen_t olen = sizeof(int);
	uint64_t addr_ptr = 0, addr_len = 0, fdno = a[0];
	size_t copied = 0, ctl_len = 0;
	bool mmsg = false, has_addr;
	pid_t tid = (pid_t)q->pid;
	int hi, sent_to = -1;
	ssize_t total = 0;

	/*
	 * socket() of a family the network mode refuses: the filter sends it
	 * here only to be counted (costs nothing for a command that never
	 * asks); the answer is the filter's own, EACCES.
	 */
	if (q->data.nr == __NR_ioctl) {
		pty_peer(u, q);
		return;
	}
	if (q->data.nr == __NR_socket) {
		corral_denials_socket(u->denials, u->plan->network, "socket", (int)(uint32_t)a[0]);
		respond(u, q->id, 0, EACCES);
		return;
	}
	memset(h, 0, sizeof(*h));
	h->id = q->id;
	/* No room left to park what this call could take: take nothing (see release_fds). */
	if (u->n_pending > PENDING_MAX - (RIGHTS_MAX + 2)) {
		respond(u, q->id, 0, EAGAIN);
		return;
	}
	pidfd = open_task_pidfd(tid);
	if (pidfd < 0 || !id_valid(u, q->id)) {
		err = ESRCH;
		goto answer;
	}

	if (q->data.nr == __NR_connect) {
		h->op = OP_CONNECT;
		addr_ptr = a[1];
		addr_len = a[2];
	} else if (q->data.nr == __NR_sendto) {
		h->op = OP_SENDTO;
		h->flags = (uint32_t)a[3];
		addr_ptr = a[4];
		addr_len = a[5];
		total = (ssize_t)a[2];
		copied = a[2] < PAYLOAD_MAX ? (size_t)a[2] : PAYLOAD_MAX;
		err = -peek(tid, a[1], (uint8_t *)(h + 1), copied);
		if (err)
			goto answer;
	} else if (q->data.nr == __NR_sendmsg || q->data.nr == __NR_sendmmsg) {
		struct msghdr m;

		if (q->data.nr == __NR_sendmmsg) {
			mmsg = true;
			if ((uint32_t)a[2] == 0) {
				respond(u, q->id, 0, 0);
				goto out;
			}
			h->flags = (uint32_t)a[3];
		} else {
			h->flags = (uint32_t)a[2];
		}
		h->op = OP_SENDMSG;
		/* struct mmsghdr starts with its msghdr: the first message only (a short count is allowed). */
		err = -peek(tid, a[1], &m, sizeof(m));
		if (err)
			goto answer;
		addr_ptr = (uint64_t)(uintptr_t)m.msg_name;
		addr_len = m.msg_namelen;
		total = gather(tid, (uint64_t)(uintptr_t)m.msg_iov, m.msg_iovlen, (uint8_t *)(h + 1),
			       PAYLOAD_MAX, &copied);
		if (total < 0) {
			err = (int)-total;
			goto answer;
		}
		if (m.msg_controllen > CONTROL_MAX) {
			err = ENOBUFS;
			goto answer;
		}
		ctl_len = m.msg_controllen;
		err = -peek(tid, (uint64_t)(uintptr_t)m.msg_control, control, ctl_len);
		if (err)
			goto answer;
	} else {
		err = ENOSYS;
		goto answer;
	}
	has_addr = addr_ptr != 0 && addr_len != 0;
	if (has_addr) {
		if (addr_len > sizeof(h->addr)) {
			err = EINVAL;
			goto answer;
		}
		err = -peek(tid, addr_ptr, h->addr, (size_t)addr_len);
		if (err)
			goto answer;
		h->addr_mode = ADDR_COPY;
		h->addr_len = (uint32_t)addr_len;
	}

	sock = (int)syscall(__NR_pidfd_getfd, pidfd, (int)fdno, 0);
	if (sock < 0) {
		err = errno == ESRCH ? ESRCH : errno == EBADF ? EBADF : errno;
		goto answer;
	}
	fds[nfds++] = sock;
	if (getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &domain, &olen) < 0 ||
	    getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &olen) < 0) {
		err = errno;
		goto answer;
	}
	sock = -1;
	/*
	 * Under "none" the command can create no inet socket, but one may be
	 * inherited (a socket as stdin). The helper is outside Landlock, so
	 * connecting it, or sending it to an address, here would get round
	 * Landlock's TCP rule: refused as that rule would.
	 */
	if (!u->plan->inet && domain != AF_UNIX && (h->op == OP_CONNECT || has_addr)) {
		corral_denials_socket(u->denials, u->plan->network, h->op == OP_CONNECT ? "connect" : "send",
				      domain);
		err = EACCES;
		goto answer;
	}

	/* Only a Unix socket's pathname address is a security decision here; anything else goes as copied. */
	if (has_addr && domain == AF_UNIX && addr_len > offsetof(struct sockaddr_un, sun_path) &&
	    ((struct sockaddr *)h->addr)->sa_family == AF_UNIX) {
		const struct sockaddr_un *sun = (const struct sockaddr_un *)h->addr;
		int t;

		if (sun->sun_path[0] == '\0') {
			char name[sizeof(sun->sun_path) + 1] = "@";
			size_t nl = addr_len - offsetof(struct sockaddr_un, sun_path);

			if (nl > sizeof(sun->sun_path))
				nl = sizeof(sun->sun_path);
			for (size_t i = 1; i < nl; i++)
				name[i] = sun->sun_path[i] >= 0x20 && sun->sun_path[i] < 0x7f ? sun->sun_path[i] : '?';
			name[nl ? nl : 1] = '\0';
			corral_denials_unix(u->denials, name, true);
			err = EACCES; /* abstract: see the header comment */
			goto answer;
		}
		t = resolve_socket(u, tid, q->id, sun, (socklen_t)addr_len);
		if (t < 0) {
			err = -t;
			goto answer;
		}
		fds[nfds++] = t;
		h->addr_mode = ADDR_TARGET;
	}

	if (h->op != OP_CONNECT && (size_t)total > copied && type != SOCK_STREAM) {
		err = EMSGSIZE; /* a datagram cannot be cut short */
		goto answer;
	}
	h->payload_len = (uint32_t)copied;

	/* Control messages: SCM_RIGHTS are taken from the caller; credentials are the helper's anyway. */
	if (ctl_len) {
		struct msghdr cm_msg = { .msg_control = control, .msg_controllen = ctl_len };

		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&cm_msg); cm; cm = CMSG_NXTHDR(&cm_msg, cm)) {
			if (cm->cmsg_len < CMSG_LEN(0) || (size_t)((uint8_t *)cm - control) + cm->cmsg_len > ctl_len) {
				err = EINVAL;
				goto answer;
			}
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS)
				continue;
			/*
			 * IP-level ones on an inet socket (IP_TOS, IP_PKTINFO, IPV6_HOPLIMIT,
			 * UDP_SEGMENT...) go along as written: they say how to send, not
			 * where to, and the socket's own namespace bounds them.
			 */
			if ((domain == AF_INET || domain == AF_INET6) &&
			    (cm->cmsg_level == IPPROTO_IP || cm->cmsg_level == IPPROTO_IPV6 ||
			     cm->cmsg_level == IPPROTO_UDP || cm->cmsg_level == IPPROTO_TCP)) {
				size_t sp = CMSG_ALIGN(cm->cmsg_len);

				if (sp > (size_t)(control + ctl_len - (uint8_t *)cm))
					sp = (size_t)(control + ctl_len - (uint8_t *)cm);
				if (h->ctl_len + sp > CONTROL_MAX) {
					err = ENOBUFS;
					goto answer;
				}
				memcpy((uint8_t *)(h + 1) + h->payload_len + h->ctl_len, cm, sp);
				h->ctl_len += (uint32_t)sp;
				continue;
			}
			if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) {
				err = EINVAL;
				goto answer;
			}
			for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
				int n, f;

				memcpy(&n, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
				if (nfds >= (int)ARRAY_SIZE(fds)) {
					err = ETOOMANYREFS;
					goto answer;
				}
				f = (int)syscall(__NR_pidfd_getfd, pidfd, n, 0);
				if (f < 0) {
					err = EBADF;
					goto answer;
				}
				fds[nfds++] = f;
				h->n_rights++;
			}
		}
	}

	/* Everything was read: is it still the same caller? */
	if (!id_valid(u, q->id)) {
		err = ESRCH;
		goto out;
	}

	hi = pick_helper(u);
	if (hi < 0 || u->n_inflight >= INFLIGHT_MAX) {
		err = EAGAIN;
		goto answer;
	}
	{
		union {
			char buf[CMSG_SPACE(sizeof(int) * (RIGHTS_MAX + 2))];
			struct cmsghdr align;
		} cu;
		struct iovec iov = { .iov_base = h, .iov_len = sizeof(*h) + h->payload_len + h->ctl_len };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cu.buf,
				    .msg_controllen = CMSG_SPACE(sizeof(int) * nfds) };
		struct cmsghdr *cm;

		memset(cu.buf, 0, sizeof(cu.buf));
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
		if (sendmsg(u->helpers[hi].sock, &m, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
			err = errno == EAGAIN ? EAGAIN : EIO;
			goto answer;
		}
		u->helpers[hi].busy++;
		u->inflight[u->n_inflight++] = (struct inflight){ q->id, mmsg, hi };
		sent_to = hi;
	}
	goto out;

answer:
	respond(u, q->id, 0, err ? err : EIO);
out:
	release_fds(u, sent_to, fds, nfds);
	safe_close(pidfd);
}

static void helper_reply(struct corral_unotify *u, int hi)
{
	struct helper *h = &u->helpers[hi];
	struct hrep rep;
	ssize_t n = recv(h->sock, &rep, sizeof(rep), MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n != (ssize_t)sizeof(rep)) {
		/* This helper is gone: every call it held fails; the others carry on. */
		for (size_t i = 0; i < u->n_inflight;)
			if (u->inflight[i].helper == hi) {
				respond(u, u->inflight[i].id, 0, EIO);
				u->inflight[i] = u->inflight[--u->n_inflight];
			} else {
				i++;
			}
		h->sock = safe_close(h->sock);
		h->busy = 0;
		return;
	}
	for (size_t i = 0; i < u->n_inflight; i++)
		if (u->inflight[i].id == rep.id && u->inflight[i].helper == hi) {
			bool mmsg = u->inflight[i].mmsg;

			u->inflight[i] = u->inflight[--u->n_inflight];
			if (h->busy)
				h->busy--;
			respond(u, rep.id, rep.err ? 0 : mmsg ? 1 : rep.val, rep.err);
			return;
		}
}

void corral_unotify_handle(struct corral_unotify *u, const struct pollfd *pf, int n)
{
	if (!u)
		return;
	flush_pending(u);
	for (int i = 0; i < n; i++) {
		if (!pf[i].revents)
			continue;
		if (pf[i].fd == u->listener) {
			if (pf[i].revents & POLLIN) {
				/* Allocated at the first notification: a run without one pays nothing. */
				if (!u->req) {
					u->req = calloc(1, u->req_size);
					u->resp = calloc(1, u->resp_size);
					u->hq = malloc(sizeof(struct hreq) + PAYLOAD_MAX + CONTROL_MAX);
				}
				if (!u->req || !u->resp || !u->hq) {
					/* Out of memory: close the listener; pending and later calls fail ENOSYS. */
					u->listener = safe_close(u->listener);
					continue;
				}
				memset(u->req, 0, u->req_size);
				if (ioctl(u->listener, SECCOMP_IOCTL_NOTIF_RECV, u->req) == 0)
					mediate(u);
			} else if (pf[i].revents & (POLLHUP | POLLERR | POLLNVAL)) {
				/* Every filtered task is gone. */
				u->listener = safe_close(u->listener);
			}
		} else {
			for (size_t k = 0; k < u->n_helpers; k++)
				if (u->helpers[k].sock >= 0 && pf[i].fd == u->helpers[k].sock) {
					helper_reply(u, (int)k);
					break;
				}
		}
	}
}
