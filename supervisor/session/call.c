/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A session's call, from the supervisor's side: its data and pipes sent to
 * the template's spare (supervisor/session/template.c), its stdin fed, its
 * output captured, its deadline and cancel, and K's report made a result.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal/util.h"
#include "supervisor/exec/result.h"
#include "supervisor/exec/stream.h"
#include "supervisor/session/template.h"
#include "supervisor/session/wire.h"

const char *corral_template_ended_by(const struct corral_result *r, bool cancelled)
{
	if (cancelled)
		return "cancelled";
	if (r->timed_out)
		return "timeout";
	if (r->signal == SIGXCPU)
		return "cpu";
	if (r->signal == SIGXFSZ)
		return "file_size";
	if (r->signal)
		return "signal";
	return "exit";
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The call's data (header, cwd, argv, envp) in one malloc'd block. */
static char *build_data(struct corral_template *t, const struct corral_tcall *c, size_t *len)
{
	struct t_data_hdr h = { .magic = T_MAGIC, .seq = c->seq };
	const char *cwd = c->cwd ? c->cwd : ".";
	size_t n = sizeof(h) + strlen(cwd) + 1, o;
	char *b;

	for (h.argc = 0; c->argv[h.argc]; h.argc++)
		n += strlen(c->argv[h.argc]) + 1;
	for (h.envc = 0; c->envp[h.envc]; h.envc++)
		n += strlen(c->envp[h.envc]) + 1;
	if (n > T_DATA_MAX || !(b = malloc(n)))
		return NULL;
	h.cwd_len = (uint32_t)strlen(cwd);
	for (int i = 0; i < RLIM_NLIMITS; i++) {
		h.rl[i] = t->rl.rl[i];
		h.rl_set[i] = t->rl.set[i];
	}
	memcpy(b, &h, sizeof(h));
	o = sizeof(h);
	memcpy(b + o, cwd, strlen(cwd) + 1);
	o += strlen(cwd) + 1;
	for (uint32_t i = 0; i < h.argc; i++) {
		memcpy(b + o, c->argv[i], strlen(c->argv[i]) + 1);
		o += strlen(c->argv[i]) + 1;
	}
	for (uint32_t i = 0; i < h.envc; i++) {
		memcpy(b + o, c->envp[i], strlen(c->envp[i]) + 1);
		o += strlen(c->envp[i]) + 1;
	}
	*len = o;
	return b;
}

/* |nfds| fds, and the data inline (|data|, |len|) when |nfds| is T_NFDS - 1. */
static int send_call(struct corral_template *t, const int *fds, int nfds, const char *data, size_t len)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * T_NFDS)];
		struct cmsghdr align;
	} u = {};
	uint32_t magic = T_MAGIC;
	struct iovec iov[2] = { { .iov_base = &magic, .iov_len = sizeof(magic) },
				{ .iov_base = (void *)data, .iov_len = data ? len : 0 } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = data ? 2 : 1, .msg_control = u.buf,
			      .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
	while (sendmsg(t->ctl, &msg, MSG_NOSIGNAL) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/* One call as the supervisor sees it: its pipes, captured output and K's report. */
struct x_call {
	struct corral_template *t;
	int out[2], er[2], rp[2], kp[2], in[2];
	struct corral_stream cap[2];
	struct t_report rep;
	bool have_rep, rep_eof, eof[2], killed;
	bool inflight;            /* counted in t->inflight */
	size_t in_off;
	double start, deadline;
};

/* The call's data in a memfd when it is too large to travel inline. The fd, or -errno with |err|. */
static int x_memfd(const char *blob, size_t blob_len, struct corral_error *err)
{
	size_t off = 0;
	int memfd = memfd_create("corral-call", MFD_CLOEXEC);

	while (memfd >= 0 && off < blob_len) {
		ssize_t w = write(memfd, blob + off, blob_len - off);

		if (w <= 0) {
			if (w < 0 && errno == EINTR)
				continue;
			memfd = safe_close(memfd);
			errno = w < 0 ? errno : EIO;
			break;
		}
		off += (size_t)w;
	}
	if (memfd < 0)
		return corral_err(err, CORRAL_E_SETUP, errno, "session: call setup: memfd: %s", corral_strerror(errno));
	return memfd;
}

/* A pipe set made ahead (t->pool) into |x|. False when there is none. */
static bool pool_take(struct corral_template *t, struct x_call *x)
{
	bool got = false;

	pthread_mutex_lock(&t->took_lock);
	if (t->n_pool) {
		int *p = t->pool[--t->n_pool];

		memcpy(x->out, p, sizeof(x->out));
		memcpy(x->er, p + 2, sizeof(x->er));
		memcpy(x->rp, p + 4, sizeof(x->rp));
		memcpy(x->kp, p + 6, sizeof(x->kp));
		got = true;
	}
	pthread_mutex_unlock(&t->took_lock);
	return got;
}

/* Fill t->pool (a set that cannot be made is left for the call to make). */
void corral_template_pool_fill(struct corral_template *t)
{
	for (;;) {
		int p[8], i;

		pthread_mutex_lock(&t->took_lock);
		i = t->n_pool < CORRAL_TEMPLATE_POOL && t->ctl >= 0;
		pthread_mutex_unlock(&t->took_lock);
		if (!i)
			return;
		for (i = 0; i < 8; i += 2)
			if (pipe2(p + i, O_CLOEXEC) < 0)
				break;
		if (i < 8) {
			while (i > 0)
				close(p[--i]);
			return;
		}
		pthread_mutex_lock(&t->took_lock);
		if (t->n_pool < CORRAL_TEMPLATE_POOL) {
			memcpy(t->pool[t->n_pool++], p, sizeof(p));
			i = -1;
		}
		pthread_mutex_unlock(&t->took_lock);
		if (i != -1) {
			for (i = 0; i < 8; i++)
				close(p[i]);
			return;
		}
	}
}

/* Make the call's pipes and hand the call to the template. 0 or -errno with |err|. */
static int x_send(struct corral_template *t, const struct corral_tcall *c, struct x_call *x,
		  struct corral_error *err)
{
	size_t blob_len = 0;
	_cleanup_free_ char *blob = build_data(t, c, &blob_len);
	_cleanup_close_ int memfd = -1;
	int r;

	if (!blob)
		return corral_err(err, CORRAL_E_USAGE, E2BIG,
				  "session: the command and its environment exceed %u bytes", T_DATA_MAX);
	if (blob_len >= T_INLINE_MAX) {
		memfd = x_memfd(blob, blob_len, err);
		if (memfd < 0)
			return TAKE_FD(memfd);
	}
	if ((!pool_take(t, x) && (pipe2(x->out, O_CLOEXEC) < 0 || pipe2(x->er, O_CLOEXEC) < 0 ||
				  pipe2(x->rp, O_CLOEXEC) < 0 || pipe2(x->kp, O_CLOEXEC) < 0)) ||
	    (c->stdin_data && pipe2(x->in, O_CLOEXEC) < 0))
		return corral_err(err, CORRAL_E_SETUP, errno, "session: call setup: %s", corral_strerror(errno));
	{
		int fds[T_NFDS] = { memfd, c->stdin_data ? x->in[0] : t->devnull, x->out[1], x->er[1], x->rp[1],
				    x->kp[0] };

		r = memfd >= 0 ? send_call(t, fds, T_NFDS, NULL, 0) : send_call(t, fds + 1, T_NFDS - 1, blob, blob_len);
	}
	x->out[1] = safe_close(x->out[1]);
	x->er[1] = safe_close(x->er[1]);
	x->rp[1] = safe_close(x->rp[1]);
	x->kp[0] = safe_close(x->kp[0]);
	x->in[0] = safe_close(x->in[0]);
	if (r < 0)
		return corral_err(err, CORRAL_E_SETUP, -r, "session: the template does not answer: %s",
				  corral_strerror(-r));
	if (x->in[1] >= 0) {
		fcntl(x->in[1], F_SETFL, O_NONBLOCK);
		if (c->stdin_len == 0)
			x->in[1] = safe_close(x->in[1]);
	}
	return 0;
}

/* Indexes into the poll set of x_wait. */
enum { X_OUT, X_ERR, X_REP, X_IN, X_CANCEL, X_N };

/* Handle what poll reported on the call's fds (|ip| maps each kind to its pollfd, or -1). */
static void x_handle(struct corral_tcall *c, struct x_call *x, const struct pollfd *pf, const int ip[X_N])
{
	char buf[65536];

	for (int s = 0; s < 2; s++) {
		int fd = s ? x->er[0] : x->out[0];

		if (ip[s] < 0 || !pf[ip[s]].revents)
			continue;
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n > 0) {
			corral_stream_add(&x->cap[s], buf, (size_t)n);
			if (c->on_output)
				c->on_output(c->arg, s + 1, buf, (size_t)n);
		} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
			x->eof[s] = true;
		}
	}
	if (ip[X_REP] >= 0 && pf[ip[X_REP]].revents) {
		ssize_t n = read(x->rp[0], &x->rep, sizeof(x->rep));

		if (n == sizeof(x->rep) && x->rep.magic == T_MAGIC)
			x->have_rep = true;
		else if (n >= 0 || (errno != EINTR && errno != EAGAIN))
			x->rep_eof = true;
		if (x->have_rep || x->rep_eof) {
			/* The tree is gone (or K is): nothing more is coming on stdin. */
			x->in[1] = safe_close(x->in[1]);
			if (x->rep.start_err && x->have_rep)
				x->eof[0] = x->eof[1] = true;
		}
	}
	if (ip[X_IN] >= 0 && pf[ip[X_IN]].revents) {
		ssize_t n = write(x->in[1], (const char *)c->stdin_data + x->in_off, c->stdin_len - x->in_off);

		if (n > 0)
			x->in_off += (size_t)n;
		if ((n < 0 && errno != EAGAIN && errno != EINTR) || x->in_off >= c->stdin_len)
			x->in[1] = safe_close(x->in[1]);
	}
	if (ip[X_CANCEL] >= 0 && pf[ip[X_CANCEL]].revents) {
		c->cancelled = true;
		x->killed = true;
		x->kp[1] = safe_close(x->kp[1]);
	}
}

/*
 * After K's report (or its end), how long the output pipes may stay open:
 * K has reaped the call's whole tree by then and exits at once, so a
 * writer still holding one is outside the call (a process of another call
 * it was passed to over a Unix socket), and neither the call's deadline
 * nor its output may be that process's.
 */
#define X_AFTER_REPORT_MS 1000.0

/* Feed stdin, capture output, enforce the deadline and cancel, until the tree and K have ended. */
static void x_wait(struct corral_tcall *c, struct x_call *x, struct corral_result *res)
{
	double rep_at = 0;

	while (!(x->eof[0] && x->eof[1] && (x->have_rep || x->rep_eof))) {
		struct pollfd pf[X_N];
		int np = 0, ip[X_N] = { -1, -1, -1, -1, -1 }, tmo;
		double now = now_ms();
		bool any = false;

		if ((x->have_rep || x->rep_eof) && !rep_at)
			rep_at = now;
		if (rep_at && now - rep_at >= X_AFTER_REPORT_MS)
			break;
		if (!x->killed && now >= x->deadline) {
			res->timed_out = true;
			x->killed = true;
			x->kp[1] = safe_close(x->kp[1]);
		}
		if (!x->eof[0])
			ip[X_OUT] = np, pf[np++] = (struct pollfd){ .fd = x->out[0], .events = POLLIN };
		if (!x->eof[1])
			ip[X_ERR] = np, pf[np++] = (struct pollfd){ .fd = x->er[0], .events = POLLIN };
		if (!x->have_rep && !x->rep_eof)
			ip[X_REP] = np, pf[np++] = (struct pollfd){ .fd = x->rp[0], .events = POLLIN };
		if (x->in[1] >= 0)
			ip[X_IN] = np, pf[np++] = (struct pollfd){ .fd = x->in[1], .events = POLLOUT };
		if (!x->killed && c->cancel_fd >= 0)
			ip[X_CANCEL] = np, pf[np++] = (struct pollfd){ .fd = c->cancel_fd, .events = POLLIN };
		tmo = x->killed ? 5000 : (int)(x->deadline - now) + 1;
		if (rep_at && tmo > (int)(rep_at + X_AFTER_REPORT_MS - now) + 1)
			tmo = (int)(rep_at + X_AFTER_REPORT_MS - now) + 1;
		if (poll(pf, (nfds_t)np, tmo) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < np; i++)
			any |= pf[i].revents != 0;
		if (!any && x->killed && now_ms() - now >= 4999)
			break; /* nothing for 5 s after the kill: give up waiting */
		x_handle(c, x, pf, ip);
	}
}

/* Fill |res| from K's report. 0, or -errno with |err| when the command could not be started. */
static int x_result(struct corral_tcall *c, struct x_call *x, struct corral_result *res, struct corral_error *err)
{
	const struct t_report *rep = &x->rep;

	res->wall_ms = now_ms() - x->start;
	res->provider = "local";
	/* ECANCELED: K saw the kill before the command started (keeper.c answered): a killed call, not a failed one. */
	if (x->have_rep && rep->start_err && !rep->main_done &&
	    !(rep->start_err == ECANCELED && (res->timed_out || c->cancelled)))
		return corral_err(err, CORRAL_E_SETUP, rep->start_err, "session: could not start the command: %s%s",
				  corral_strerror(rep->start_err),
				  rep->start_err == EAGAIN ? " (the session's limits.processes is reached: end "
							     "background jobs, or raise --procs)" : "");
	if (x->have_rep && rep->main_done) {
		if (WIFEXITED(rep->status)) {
			res->exited = true;
			res->exit_status = WEXITSTATUS(rep->status);
		} else if (WIFSIGNALED(rep->status)) {
			res->signal = WTERMSIG(rep->status);
		}
		res->exec_errno = rep->exec_err;
		res->cpu_ms = (double)rep->cpu_us / 1e3;
		res->max_rss_kb = (long)rep->maxrss_kb;
		c->cwd_failed = rep->chdir_err != 0;
		c->leftovers = (unsigned long)rep->leftovers;
	} else {
		/* K ended without a report: only something outside the session can do that. */
		res->signal = SIGKILL;
	}
	/* A deadline or cancel that came after the command had ended on its own changed nothing. */
	if ((res->timed_out || c->cancelled) && x->have_rep && rep->main_done &&
	    !(WIFSIGNALED(rep->status) && WTERMSIG(rep->status) == SIGKILL)) {
		res->timed_out = false;
		c->cancelled = false;
	}
	if (res->timed_out || c->cancelled) {
		res->exited = false;
		res->signal = SIGKILL;
	}
	if (res->exec_errno && res->exited) {
		char line[512];
		int n;

		res->exit_status = res->exec_errno == ENOENT ? 127 : 126;
		n = corral_exec_error_line(res, c->argv[0], line, sizeof(line));
		if (n > 0)
			corral_stream_add(&x->cap[1], line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	}
	corral_stream_finish(&x->cap[0], &res->stdout_buf, &res->stdout_len, &res->stdout_truncated,
			     &res->stdout_bytes);
	corral_stream_finish(&x->cap[1], &res->stderr_buf, &res->stderr_len, &res->stderr_truncated,
			     &res->stderr_bytes);
	res->leftovers_killed = (unsigned)c->leftovers;
	res->ended_by = corral_template_ended_by(res, c->cancelled);
	return 0;
}

/* |x|'s keeper is done with it: one call fewer in flight. */
static void x_done(struct x_call *x)
{
	if (x->inflight)
		atomic_fetch_sub(&x->t->inflight, 1);
	x->inflight = false;
}

static void x_free(struct x_call *x)
{
	if (!x)
		return;
	x_done(x);
	corral_stream_free(&x->cap[0]);
	corral_stream_free(&x->cap[1]);
	for (int i = 0; i < 2; i++) {
		safe_close(x->out[i]);
		safe_close(x->er[i]);
		safe_close(x->rp[i]);
		safe_close(x->kp[i]);
		safe_close(x->in[i]);
	}
	free(x);
}

int corral_template_send(struct corral_template *t, struct corral_tcall *c, struct corral_error *err)
{
	struct x_call *x;
	int r;

	c->x = NULL;
	if (t->ctl < 0)
		return corral_err(err, CORRAL_E_SETUP, ESHUTDOWN, "session: the template is gone");
	x = malloc(sizeof(*x));
	if (!x)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	*x = (struct x_call){ .t = t, .out = { -1, -1 }, .er = { -1, -1 }, .rp = { -1, -1 }, .kp = { -1, -1 },
			      .in = { -1, -1 } };
	x->start = now_ms();
	x->deadline = x->start + c->timeout * 1e3;
	corral_stream_init(&x->cap[0], -1, c->max_output);
	corral_stream_init(&x->cap[1], -1, c->max_output);
	r = x_send(t, c, x, err);
	if (r < 0) {
		x_free(x);
		return r;
	}
	/*
	 * A call sent while others are in flight may find no spare waiting
	 * (each keeper serves one call at a time): the template hears of it
	 * and starts one. A call alone in flight finds the last call's keeper
	 * waiting again, and the template is left asleep.
	 */
	x->inflight = true;
	if (atomic_fetch_add(&t->inflight, 1) > 0) {
		ssize_t _unused_ n = write(t->hint_w, "h", 1);
	}
	c->x = x;
	return 0;
}

int corral_template_wait(struct corral_tcall *c, struct corral_result *res, struct corral_error *err)
{
	struct x_call *x = c->x;

	memset(res, 0, sizeof(*res));
	res->sz = sizeof(*res);
	if (!x)
		return corral_err(err, CORRAL_E_INTERNAL, EINVAL, "session: no call was sent");
	x_wait(c, x, res);
	x_done(x);
	corral_template_took_forget(x->t, c->seq);
	return x_result(c, x, res, err);
}

void corral_template_release(struct corral_template *t, struct corral_tcall *c)
{
	if (!c->x)
		return;
	x_free(c->x);
	c->x = NULL;
	corral_template_pool_fill(t);
}

int corral_template_exec(struct corral_template *t, struct corral_tcall *c, struct corral_result *res,
			 struct corral_error *err)
{
	int r = corral_template_send(t, c, err);

	if (r < 0) {
		memset(res, 0, sizeof(*res));
		res->sz = sizeof(*res);
		return r;
	}
	r = corral_template_wait(c, res, err);
	corral_template_release(t, c);
	return r;
}
