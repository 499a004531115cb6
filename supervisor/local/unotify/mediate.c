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
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "policy/path.h"
#include "internal/fileio.h"
#include "internal/syscalls.h"
#include "landlock/landlock.h"
#include "supervisor/exec/denials.h"
#include "supervisor/exec/sandbox.h"
#include "supervisor/local/unotify/unotify.h"
#include "supervisor/local/egress/egress.h"

#include "supervisor/local/unotify/unotify-private.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#ifndef SO_DOMAIN
#define SO_DOMAIN 39
#endif
/* The number 5.0-5.7 kernels know (later ones accept both). */
#define NOTIF_ID_VALID_OLD _IOR('!', 2, __u64)


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

/*
 * A call no helper can take now (every helper's queue is full: a socketpair
 * queues net.unix.max_dgram_qlen messages, 10 by default; or INFLIGHT_MAX
 * calls are out). Its caller stays blocked in the kernel, as in a slow
 * connect; the call waits here with the fds taken for it and goes to the
 * first helper with room (retry_deferred: when a helper answers, or its
 * queue drains, POLLOUT). Never answered EAGAIN for want of a helper.
 */
struct deferred {
	struct deferred *next;
	uint64_t id;
	bool mmsg;
	int nfds;
	int fds[RIGHTS_MAX + 2];
	struct hreq hq;
	uint8_t body[]; /* hq.payload_len + hq.ctl_len bytes */
};

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
	struct deferred *deferred, **deferred_tail; /* oldest first */
	int *pending; /* fds taken from the command that no helper could be given yet (see OP_HOLD) */
	int n_pending, cap_pending;
	struct hreq *hq; /* request header + payload being built */
	struct corral_un_req *dec; /* the call being decoded */
	struct corral_denials *denials; /* the run's; may be NULL */
	/* A session's: each notification's denials handed to |route| with its pid (corral_unotify_route). */
	void (*route)(void *arg, pid_t pid, struct corral_denials *d);
	void *route_arg;
	struct corral_denials staged;
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
	un->deferred_tail = &un->deferred;
	return un;
fail:
	/* Closing the listener makes every mediated call fail with ENOSYS: closed, not open. */
	safe_close(lfd);
	if (un) {
		free(un->req);
		free(un->resp);
		free(un->hq);
		free(un->dec);
		free(un);
	}
	return NULL;
}

static void drop_pending(struct corral_unotify *u);
static void park_fds(struct corral_unotify *u, const int *fds, int nfds);

void corral_unotify_route(struct corral_unotify *u, void (*fn)(void *arg, pid_t pid, struct corral_denials *d),
			  void *arg)
{
	if (!u)
		return;
	u->route = fn;
	u->route_arg = arg;
	u->denials = &u->staged;
}

void corral_unotify_free(struct corral_unotify *u)
{
	if (!u)
		return;
	corral_denials_clear(&u->staged);
	safe_close(u->listener);
	while (u->deferred) {
		struct deferred *d = u->deferred;

		u->deferred = d->next;
		park_fds(u, d->fds, d->nfds);
		free(d);
	}
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
	free(u->pending);
	free(u->req);
	free(u->resp);
	free(u->hq);
	free(u->dec);
	free(u);
}

int corral_unotify_pollfds(struct corral_unotify *u, struct pollfd *pf)
{
	int n = 0;

	if (!u)
		return 0;
	if (u->listener >= 0)
		pf[n++] = (struct pollfd){ .fd = u->listener, .events = POLLIN };
	for (size_t i = 0; i < u->n_helpers; i++) {
		const struct helper *h = &u->helpers[i];
		/*
		 * Room in a helper's queue is awaited only for what waits on it:
		 * deferred calls (when a call can go out at all), fds to hand
		 * over, a release owed to this helper. Otherwise POLLOUT, ready
		 * almost always, would spin the loop.
		 */
		bool wait_room = h->owe_release || u->n_pending > 0 ||
				 (u->deferred && u->n_inflight < INFLIGHT_MAX);

		if (h->sock >= 0)
			pf[n++] = (struct pollfd){ .fd = h->sock, .events = POLLIN | (wait_room ? POLLOUT : 0) };
	}
	return n;
}

/*
 * A session's: the denials of the notification being served, to the call
 * of the task that made it, before that task is answered. Until then it
 * waits in the refused call: alive, its pid its own, its process tree as
 * it was, and its call not over (its keeper cannot report before it
 * ends). Routed after the answer, a task that exited at once lost its
 * denials (its keeper reported first, or /proc no longer had it), or had
 * them blamed on whoever reused its pid.
 */
static void route_staged(struct corral_unotify *u)
{
	if (u->route && u->staged.n && u->req)
		u->route(u->route_arg, (pid_t)u->req->pid, &u->staged);
}

static void respond(struct corral_unotify *u, uint64_t id, int64_t val, int err)
{
	if (u->req && id == u->req->id)
		route_staged(u);
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

/*
 * Resolve the pathname |name| (task |tid|'s view: relative to its cwd
 * unless absolute) to an O_PATH fd of a socket inode beneath an allowed
 * base. Returns the fd, or -errno to answer the caller with.
 */
/* May |uid|/|gid| search the directory |st| (owner, then group, then other bits; no capabilities)? */
static bool searchable(const struct stat *st, uid_t uid, gid_t gid)
{
	if (st->st_uid == uid)
		return st->st_mode & S_IXUSR;
	if (st->st_gid == gid)
		return st->st_mode & S_IXGRP;
	return st->st_mode & S_IXOTH;
}

/*
 * Whether the command would find nothing at |path| itself: the path does
 * not exist, and every directory down to the deepest one that does may be
 * searched by the command's identity, so connect's ENOENT tells it no more
 * than a stat of its own would. glibc's name lookups try
 * /var/run/nscd/socket on every host: a socket that is not there is no
 * refusal, and its hint (--rw a missing directory) would mislead.
 */
static bool missing_for_command(const struct corral_unotify_plan *plan, const char *path)
{
	uid_t uid = plan->switch_identity ? plan->uid : getuid();
	gid_t gid = plan->switch_identity ? plan->gid : getgid();
	char p[PATH_MAX];
	size_t n = strlen(path), end;
	struct stat st;

	/* /proc/self, /dev/fd and the like name the supervisor's own here, not the command's. */
	if (n >= sizeof(p) || path[0] != '/' || corral_path_contains("/proc", path) ||
	    corral_path_contains("/dev/fd", path))
		return false;
	memcpy(p, path, n + 1);
	if (stat(p, &st) == 0 || errno != ENOENT)
		return false;
	/* The deepest ancestor that exists: a directory. */
	for (;;) {
		char *slash = strrchr(p, '/');

		if (slash == p) {
			p[1] = '\0';
		} else {
			*slash = '\0';
		}
		if (stat(p, &st) == 0)
			break;
		if (errno != ENOENT || slash == p)
			return false;
	}
	if (!S_ISDIR(st.st_mode))
		return false;
	/* Every directory from / down to it searchable by the command. */
	end = strlen(p);
	for (size_t i = 1; i <= end; i++) {
		char c;

		if (i < end && p[i] != '/')
			continue;
		c = p[i];
		p[i] = '\0';
		if (stat(i == 1 && end > 1 ? "/" : p, &st) < 0 || !searchable(&st, uid, gid)) {
			p[i] = c;
			return false;
		}
		p[i] = c;
	}
	return stat("/", &st) == 0 && searchable(&st, uid, gid);
}

static int resolve_socket(struct corral_unotify *u, pid_t tid, uint64_t id, const char *name)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS };
	char path[PATH_MAX + sizeof(((struct sockaddr_un *)0)->sun_path) + 2];
	size_t plen = strlen(name), best = 0;
	int base_fd = -1, fd;
	const char *rel = NULL;
	struct stat st;

	if (plen == 0 || plen > sizeof(((struct sockaddr_un *)0)->sun_path))
		return -EINVAL;
	if (name[0] == '/') {
		memcpy(path, name, plen + 1);
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
		memcpy(path + n, name, plen + 1);
	}
	corral_un_normalise(path);

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
		if (!corral_path_contains(b, path))
			continue;
		if (bl >= best || base_fd < 0) {
			best = bl;
			base_fd = bfd;
			rel = path + bl;
		}
	}
	if (base_fd < 0) {
		if (missing_for_command(u->plan, path))
			return -ENOENT;
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

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if (corral_read_file_at(AT_FDCWD, path, 0, buf, sizeof(buf)) <= 0)
		return -1;
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

/*
 * A new helper in a free slot (a gone helper's, or one not used yet): its
 * index, or -1 (every slot holds a live helper, or the fork failed: then
 * no other is tried before the loop's next round).
 */
static int spawn_helper(struct corral_unotify *u)
{
	int free_slot = -1;

	for (size_t i = 0; i < u->n_helpers && free_slot < 0; i++)
		if (u->helpers[i].sock < 0)
			free_slot = (int)i;
	if (free_slot < 0 && u->n_helpers < CORRAL_UNOTIFY_HELPERS_MAX)
		free_slot = (int)u->n_helpers;
	if (free_slot >= 0 && !u->spawn_failed) {
		struct helper *h = &u->helpers[free_slot];
		int sock = -1;
		pid_t pid = corral_un_helper_spawn(u->plan, &sock);

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
	return -1;
}

/*
 * The helper for the next call: an idle one, else a new one, else (all
 * CORRAL_UNOTIFY_HELPERS_MAX busy) the least busy. -1 when none can be had.
 */
static int pick_helper(struct corral_unotify *u)
{
	int best = -1, fresh;

	for (size_t i = 0; i < u->n_helpers; i++) {
		const struct helper *h = &u->helpers[i];

		if (h->sock < 0)
			continue;
		if (h->busy == 0)
			return (int)i;
		if (best < 0 || h->busy < u->helpers[best].busy)
			best = (int)i;
	}
	fresh = spawn_helper(u);
	return fresh >= 0 ? fresh : best;
}

/*
 * Send with |send_one| to the helper pick_helper chooses, else to any other
 * live helper whose queue has room, else to a new one. The helper's index;
 * -EBUSY when every queue is full (wait for POLLOUT), -EAGAIN when no
 * helper is alive and none could be made, another -errno on a dead helper.
 */
static int send_some_helper(struct corral_unotify *u, int (*send_one)(struct corral_unotify *, int, const void *),
			    const void *arg)
{
	int hi = pick_helper(u), r;

	if (hi < 0)
		return -EAGAIN;
	r = send_one(u, hi, arg);
	for (size_t i = 0; r == -EAGAIN && i < u->n_helpers; i++)
		if ((int)i != hi && u->helpers[i].sock >= 0 && (r = send_one(u, (int)i, arg)) == 0)
			hi = (int)i;
	if (r == -EAGAIN) {
		int fresh = spawn_helper(u);

		if (fresh >= 0 && (r = send_one(u, fresh, arg)) == 0)
			hi = fresh;
	}
	if (r == -EAGAIN || r == -EWOULDBLOCK)
		return -EBUSY;
	return r < 0 ? r : hi;
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

struct hold {
	const int *fds;
	int nfds;
};

static int send_hold(struct corral_unotify *u, int hi, const void *arg)
{
	const struct hold *a = arg;

	return helper_send(u, hi, OP_HOLD, a->fds, a->nfds);
}

/*
 * Keep |fds| in |pending| for the next chance (flush_pending). Closed
 * here only when no memory is left for the list: the last resort.
 */
static void park_fds(struct corral_unotify *u, const int *fds, int nfds)
{
	if (u->n_pending + nfds > u->cap_pending) {
		int cap = u->cap_pending ? u->cap_pending : 256;
		int *p;

		while (cap < u->n_pending + nfds)
			cap *= 2;
		p = realloc(u->pending, sizeof(*p) * (size_t)cap);
		if (p) {
			u->pending = p;
			u->cap_pending = cap;
		}
	}
	for (int i = 0; i < nfds; i++) {
		if (u->n_pending < u->cap_pending)
			u->pending[u->n_pending++] = fds[i];
		else
			close(fds[i]);
	}
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
	if (hi < 0)
		hi = send_some_helper(u, send_hold, &(struct hold){ fds, nfds });
	if (hi >= 0)
		after_handover(u, hi, fds, nfds);
	else
		park_fds(u, fds, nfds);
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
		int hi = send_some_helper(u, send_hold, &(struct hold){ from, chunk });

		if (hi < 0)
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
	pid = corral_un_helper_spawn(u->plan, &sock);
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

/* The caller's memory, for the decoder: process_vm_readv of task |ctx|. */
static int peek_task(void *ctx, uint64_t remote, void *local, size_t len)
{
	return peek(*(const pid_t *)ctx, remote, local, len);
}

/* Take the request's SCM_RIGHTS fds from the caller; the inet-level control goes after the payload. */
static int take_control(struct corral_unotify *u, const struct corral_un_req *rq, int domain, int pidfd,
			int *fds, int *nfds)
{
	struct hreq *h = u->hq;
	int rights[RIGHTS_MAX + 2];
	size_t n_rights = 0, pass_len = 0;
	int r = corral_un_parse_control(rq->control, rq->ctl_len, domain, rights,
					(size_t)(RIGHTS_MAX + 2 - *nfds), &n_rights,
					(uint8_t *)(h + 1) + h->payload_len, CONTROL_MAX, &pass_len);

	if (r < 0)
		return r;
	h->ctl_len = (uint32_t)pass_len;
	for (size_t i = 0; i < n_rights; i++) {
		int f = (int)syscall(__NR_pidfd_getfd, pidfd, rights[i], 0);

		if (f < 0)
			return -EBADF;
		fds[(*nfds)++] = f;
		h->n_rights++;
	}
	return 0;
}

struct request {
	const struct hreq *h;
	const uint8_t *body; /* h->payload_len + h->ctl_len bytes */
	const int *fds;
	int nfds;
};

/* Give helper |hi| the request and the fds it needs. 0 or -errno (-EAGAIN: its queue is full). */
static int send_request(struct corral_unotify *u, int hi, const void *arg)
{
	const struct request *rq = arg;
	const int *fds = rq->fds;
	int nfds = rq->nfds;
	union {
		char buf[CMSG_SPACE(sizeof(int) * (RIGHTS_MAX + 2))];
		struct cmsghdr align;
	} cu;
	struct iovec iov[2] = { { .iov_base = (void *)rq->h, .iov_len = sizeof(*rq->h) },
				{ .iov_base = (void *)rq->body, .iov_len = rq->h->payload_len + rq->h->ctl_len } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = cu.buf,
			    .msg_controllen = CMSG_SPACE(sizeof(int) * nfds) };
	struct cmsghdr *cm;

	memset(cu.buf, 0, sizeof(cu.buf));
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	if (sendmsg(u->helpers[hi].sock, &m, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		return errno == EAGAIN ? -EAGAIN : -EIO;
	return 0;
}

/* "tcp 1.2.3.4:443" for a denial, from the caller's (copied) inet address. */
static void inet_what(const struct corral_un_req *rq, int type, char *out, size_t len)
{
	const char *proto = type == SOCK_STREAM ? "tcp" : type == SOCK_DGRAM ? "udp" : "inet";
	char ip[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	sa_family_t fam = AF_UNSPEC;

	if (rq->addr_len >= sizeof(fam))
		memcpy(&fam, rq->addr, sizeof(fam));
	if (fam == AF_INET && rq->addr_len >= sizeof(struct sockaddr_in)) {
		struct sockaddr_in a;

		memcpy(&a, rq->addr, sizeof(a));
		inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip));
		port = ntohs(a.sin_port);
		snprintf(out, len, "%s %s:%u", proto, ip, port);
	} else if (fam == AF_INET6 && rq->addr_len >= sizeof(struct sockaddr_in6)) {
		struct sockaddr_in6 a;

		memcpy(&a, rq->addr, sizeof(a));
		inet_ntop(AF_INET6, &a.sin6_addr, ip, sizeof(ip));
		port = ntohs(a.sin6_port);
		snprintf(out, len, "%s [%s]:%u", proto, ip, port);
	} else {
		snprintf(out, len, "%s address of family %d", proto, (int)fam);
	}
}

/*
 * Network "allow": an inet connect or addressed send. Only a TCP connect
 * to the egress proxy goes on, to the supervisor's own copy of its
 * address; a disconnect (AF_UNSPEC) goes as copied; the rest is refused
 * (EACCES, as Landlock's TCP rule answers) and counted. 0 or -errno.
 */
static int egress_only(struct corral_unotify *u, const struct corral_un_req *rq, struct hreq *h, int sock, int type,
		       pid_t pid)
{
	struct corral_egress *e = u->plan->egress;
	sa_family_t fam = AF_UNSPEC;
	char what[96];

	if (rq->addr_len >= sizeof(fam))
		memcpy(&fam, rq->addr, sizeof(fam));
	if (h->op == OP_CONNECT && fam == AF_UNSPEC)
		return 0;
	if (h->op == OP_CONNECT && type == SOCK_STREAM && corral_egress_is_proxy(e, rq->addr, rq->addr_len)) {
		memset(h->addr, 0, sizeof(h->addr));
		memcpy(h->addr, corral_egress_addr(e), sizeof(struct sockaddr_in));
		h->addr_len = sizeof(struct sockaddr_in);
		h->addr_mode = ADDR_COPY;
		/* The proxy serves this socket's connection only, not another host process's. */
		corral_egress_admit(e, sock, pid);
		corral_egress_kick(e);
		return 0;
	}
	inet_what(rq, type, what, sizeof(what));
	corral_denials_add(u->denials, "network", what, "supervisor",
			   type == SOCK_DGRAM ?
			   "network \"allow\": UDP is refused, DNS included (names are resolved by corral's egress "
			   "proxy); reach a listed host by name with a proxy-aware client (HTTPS_PROXY is set), or "
			   "add --allow HOST for a new one" :
			   "network \"allow\": direct connections are refused; reach a listed host by name through "
			   "the proxy in HTTPS_PROXY/HTTP_PROXY (curl, pip, npm, git do), or add --allow HOST[:PORT] "
			   "(an IP address only when listed as written)");
	return -EACCES;
}

/*
 * listen() under network "allow": a Unix socket's goes on (the supervisor
 * calls listen on its copy of the socket, the same socket); an inet one is
 * refused, so nothing on the host's network can connect in.
 */
static void mediate_listen(struct corral_unotify *u, const struct seccomp_notif *q)
{
	int pidfd = open_task_pidfd((pid_t)q->pid), sock = -1, domain = 0, err = 0;
	socklen_t olen = sizeof(domain);

	if (pidfd < 0 || !id_valid(u, q->id)) {
		err = ESRCH;
		goto answer;
	}
	sock = (int)syscall(__NR_pidfd_getfd, pidfd, (int)q->data.args[0], 0);
	if (sock < 0) {
		err = errno == ESRCH ? ESRCH : EBADF;
		goto answer;
	}
	if (getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &domain, &olen) < 0) {
		err = errno == ENOTSOCK ? ENOTSOCK : EBADF;
		goto answer;
	}
	if (domain != AF_UNIX) {
		corral_denials_add(u->denials, "network", "listen on an inet socket", "supervisor",
				   "network \"allow\" reaches out to listed hosts only and takes no connection in; "
				   "for a local server the command talks to itself, use --net loopback");
		err = EACCES;
		goto answer;
	}
	err = listen(sock, (int)q->data.args[1]) < 0 ? errno : 0;
answer:
	respond(u, q->id, 0, err);
	if (sock >= 0)
		release_fds(u, -1, &sock, 1);
	safe_close(pidfd);
}

/*
 * Give the call |id| to a helper (send_some_helper) and count it in
 * flight. The helper's index, -EBUSY when it must wait (every queue full,
 * or INFLIGHT_MAX calls out: defer it), or the -errno to answer.
 */
static int dispatch(struct corral_unotify *u, uint64_t id, bool mmsg, const struct request *rq)
{
	int hi;

	if (u->n_inflight >= INFLIGHT_MAX)
		return -EBUSY;
	hi = send_some_helper(u, send_request, rq);
	if (hi < 0)
		return hi;
	u->helpers[hi].busy++;
	u->inflight[u->n_inflight++] = (struct inflight){ id, mmsg, hi };
	return hi;
}

/* Keep the call for later (see struct deferred); its fds go with it. 0 or -ENOMEM. */
static int defer(struct corral_unotify *u, uint64_t id, bool mmsg, const struct request *rq)
{
	size_t body = rq->h->payload_len + rq->h->ctl_len;
	struct deferred *d = malloc(sizeof(*d) + body);

	if (!d)
		return -ENOMEM;
	*d = (struct deferred){ .id = id, .mmsg = mmsg, .nfds = rq->nfds, .hq = *rq->h };
	memcpy(d->fds, rq->fds, sizeof(int) * (size_t)rq->nfds);
	memcpy(d->body, rq->body, body);
	*u->deferred_tail = d;
	u->deferred_tail = &d->next;
	return 0;
}

/*
 * The deferred calls, oldest first, as far as the helpers take them. A
 * call whose caller is gone (or was interrupted by a signal: it will make
 * the call again) is dropped unanswered.
 */
static void retry_deferred(struct corral_unotify *u)
{
	while (u->deferred) {
		struct deferred *d = u->deferred;
		int hi = -1;

		if (id_valid(u, d->id)) {
			hi = dispatch(u, d->id, d->mmsg,
				      &(struct request){ .h = &d->hq, .body = d->body, .fds = d->fds, .nfds = d->nfds });
			if (hi == -EBUSY)
				return;
			if (hi < 0)
				respond(u, d->id, 0, -hi);
		}
		u->deferred = d->next;
		if (!u->deferred)
			u->deferred_tail = &u->deferred;
		release_fds(u, hi, d->fds, d->nfds);
		free(d);
	}
}

/*
 * Handle one connect/sendto/sendmsg/sendmmsg: decode it (decode.c), take
 * the caller's socket, check a Unix pathname address, and hand the call to
 * a helper; or answer the caller with an error.
 */
static void mediate(struct corral_unotify *u)
{
	const struct seccomp_notif *q = u->req;
	struct hreq *h = u->hq;
	struct corral_un_req *rq = u->dec;
	int fds[RIGHTS_MAX + 2], nfds = 0, pidfd = -1, sock = -1, err = 0, domain = 0, type = 0, ak;
	char name[sizeof(((struct sockaddr_un *)0)->sun_path) + 2];
	socklen_t olen = sizeof(int);
	pid_t tid = (pid_t)q->pid;
	int sent_to = -1;

	memset(h, 0, sizeof(*h));
	h->id = q->id;
	pidfd = open_task_pidfd(tid);
	if (pidfd < 0 || !id_valid(u, q->id)) {
		err = ESRCH;
		goto answer;
	}
	err = -corral_un_decode(&q->data, peek_task, &tid, (uint8_t *)(h + 1), PAYLOAD_MAX, rq);
	if (err)
		goto answer;
	if (rq->empty) {
		respond(u, q->id, 0, 0);
		goto out;
	}
	h->op = rq->kind == CORRAL_UN_CONNECT ? OP_CONNECT : rq->kind == CORRAL_UN_SENDTO ? OP_SENDTO : OP_SENDMSG;
	h->flags = rq->flags;
	if (rq->addr_len) {
		memcpy(h->addr, rq->addr, rq->addr_len);
		h->addr_mode = ADDR_COPY;
		h->addr_len = rq->addr_len;
	}

	sock = (int)syscall(__NR_pidfd_getfd, pidfd, rq->fd, 0);
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
	if (!u->plan->inet && domain != AF_UNIX && (h->op == OP_CONNECT || rq->addr_len)) {
		corral_denials_socket(u->denials, u->plan->network, h->op == OP_CONNECT ? "connect" : "send",
				      domain);
		err = EACCES;
		goto answer;
	}

	if (u->plan->network == CORRAL_NET_ALLOW && (domain == AF_INET || domain == AF_INET6) &&
	    (h->op == OP_CONNECT || rq->addr_len)) {
		err = -egress_only(u, rq, h, fds[0], type, tid);
		if (err)
			goto answer;
	}

	/* Only a Unix socket's pathname address is a security decision here; anything else goes as copied. */
	ak = corral_un_addr_kind(rq, domain, name, sizeof(name));
	if (ak == CORRAL_UN_ADDR_ABSTRACT) {
		corral_denials_unix(u->denials, name, true);
		err = EACCES; /* abstract: see the header comment */
		goto answer;
	}
	if (ak == CORRAL_UN_ADDR_PATH) {
		int t = resolve_socket(u, tid, q->id, name);

		if (t < 0) {
			err = -t;
			goto answer;
		}
		fds[nfds++] = t;
		h->addr_mode = ADDR_TARGET;
	}

	if (h->op != OP_CONNECT && rq->total > rq->payload_len && type != SOCK_STREAM) {
		err = EMSGSIZE; /* a datagram cannot be cut short */
		goto answer;
	}
	h->payload_len = (uint32_t)rq->payload_len;

	/* Control messages: SCM_RIGHTS are taken from the caller; credentials are the helper's anyway. */
	err = -take_control(u, rq, domain, pidfd, fds, &nfds);
	if (err)
		goto answer;

	/* Everything was read: is it still the same caller? */
	if (!id_valid(u, q->id)) {
		err = ESRCH;
		goto out;
	}

	{
		struct request req = { .h = h, .body = (const uint8_t *)(h + 1), .fds = fds, .nfds = nfds };
		/* Behind calls already waiting, this one waits too (and keeps their order). */
		int hi = u->deferred ? -EBUSY : dispatch(u, q->id, rq->mmsg, &req);

		if (hi == -EBUSY)
			hi = defer(u, q->id, rq->mmsg, &req) == 0 ? -EINPROGRESS : -ENOMEM;
		if (hi == -EINPROGRESS) {
			nfds = 0; /* the fds went with it */
			goto out;
		}
		if (hi < 0) {
			err = -hi;
			goto answer;
		}
		sent_to = hi;
	}
	goto out;

answer:
	respond(u, q->id, 0, err ? err : EIO);
out:
	release_fds(u, sent_to, fds, nfds);
	safe_close(pidfd);
}

/* One notification: the call's kind decides who serves it. */
static void serve(struct corral_unotify *u)
{
	const struct seccomp_notif *q = u->req;

	switch (q->data.nr) {
	case __NR_ioctl:
		if ((uint32_t)q->data.args[1] == (uint32_t)TIOCGPTPEER)
			pty_peer(u, q);
		else
			respond(u, q->id, 0, ENOSYS);
		return;
	case __NR_listen:
		mediate_listen(u, q);
		return;
	case __NR_socket:
		/*
		 * socket() of a family the network mode refuses: the filter
		 * sends it here only to be counted (costs nothing for a
		 * command that never asks); the answer is the filter's own.
		 */
		corral_denials_socket(u->denials, u->plan->network, "socket", (int)(uint32_t)q->data.args[0]);
		respond(u, q->id, 0, EACCES);
		return;
	}
	mediate(u);
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
	u->spawn_failed = false; /* a fork that failed may work now */
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
					u->dec = malloc(sizeof(*u->dec));
				}
				if (!u->req || !u->resp || !u->hq || !u->dec) {
					/* Out of memory: close the listener; pending and later calls fail ENOSYS. */
					u->listener = safe_close(u->listener);
					continue;
				}
				memset(u->req, 0, u->req_size);
				if (ioctl(u->listener, SECCOMP_IOCTL_NOTIF_RECV, u->req) == 0) {
					serve(u);
					route_staged(u); /* what a call handed to a helper was refused */
				}
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
	retry_deferred(u);
}
