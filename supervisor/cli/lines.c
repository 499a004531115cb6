/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The line protocol that corral session and corral mcp share: requests on
 * stdin, one per line; answers and events on stdout, one per line, from
 * any thread; SIGTERM, SIGINT and SIGHUP end the reading.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "supervisor/cli/cli.h"

#define BUF_MIN 131072

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static int sig_pipe[2] = { -1, -1 };
static volatile sig_atomic_t got_signal;

void cli_write_line(const char *line, size_t len)
{
	struct iovec iov[2] = { { (void *)line, len }, { (void *)"\n", 1 } };
	size_t left = len + 1;

	pthread_mutex_lock(&out_lock);
	while (left) {
		ssize_t n = writev(1, iov, 2);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* stdout gone: the line is lost; the caller goes on until stdin ends */
		left -= (size_t)n;
		for (int i = 0; i < 2 && n; i++) {
			size_t k = (size_t)n < iov[i].iov_len ? (size_t)n : iov[i].iov_len;

			iov[i].iov_base = (char *)iov[i].iov_base + k;
			iov[i].iov_len -= k;
			n -= (ssize_t)k;
		}
	}
	pthread_mutex_unlock(&out_lock);
}

/* argv without "--approve CMD" and without anything from "--" on; |*n| entries. */
static int take_approve(int argc, char **argv, char **args, const char **approve)
{
	int n = 0;

	for (int i = 0; i < argc; i++) {
		if (i > 0 && strcmp(argv[i], "--approve") == 0 && i + 1 < argc) {
			*approve = argv[++i];
			continue;
		}
		if (strcmp(argv[i], "--") == 0)
			break;
		args[n++] = argv[i];
	}
	return n;
}

static int session_args(int n, char **args, const struct cli_session_cmd *cmd, const bool closed[3],
			struct cli_common *c)
{
	struct corral_error err = {};
	int optind_, r = cli_parse_common(n, args, cmd->name, false, c, &optind_);

	if (r == -1)
		fputs(cmd->help, stdout);
	if (r)
		return r;
	if (optind_ < n)
		r = cli_fail(false, CORRAL_E_USAGE, "%s: unexpected argument '%s' (%s)", cmd->name, args[optind_],
			     cmd->operands);
	else if (closed[1])
		r = cli_fail(false, CORRAL_E_USAGE, "%s: standard output is closed: the %s would go nowhere", cmd->name,
			     cmd->output);
	else if (cli_default_root(c->policy, &err) < 0)
		r = cli_fail_err(false, &err);
	if (r)
		cli_common_clear(c);
	return r;
}

int cli_session_args(int argc, char **argv, const struct cli_session_cmd *cmd, struct cli_common *c,
		     const char **approve)
{
	bool closed[3] = {};
	char **args;
	int r;

	if (cli_hold_stdio(closed) < 0)
		return CLI_EXIT_ERROR;
	/* --approve CMD is the session's own option; the rest are run's (--audit among them). */
	args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args)
		return cli_fail(false, CORRAL_E_INTERNAL, "out of memory");
	r = session_args(take_approve(argc, argv, args, approve), args, cmd, closed, c);
	free(args);
	return r;
}

static void on_signal(int sig)
{
	int saved = errno;
	char b = (char)sig;

	got_signal = sig;
	if (write(sig_pipe[1], &b, 1) < 0)
		got_signal = sig;
	errno = saved;
}

static void catch_signals(void)
{
	if (sig_pipe[0] < 0 && pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) == 0) {
		struct sigaction sa = { .sa_handler = on_signal };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
	}
	signal(SIGPIPE, SIG_IGN);
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

struct lines {
	char *buf;
	size_t len, cap;
	bool skipping; /* inside a line that was too long: dropped up to its newline */
};

/* Hand every complete line in the buffer over; keep the rest. false: |on_line| said stop. */
static bool dispatch_lines(struct lines *l, int (*on_line)(void *, const char *, size_t), void *ud)
{
	size_t start = 0;
	bool go = true;

	for (char *nl; go && (nl = memchr(l->buf + start, '\n', l->len - start));) {
		size_t ll = (size_t)(nl - (l->buf + start));

		if (l->skipping)
			l->skipping = false;
		else if (!blank(l->buf + start, ll))
			go = on_line(ud, l->buf + start, ll) == 0;
		start += ll + 1;
	}
	memmove(l->buf, l->buf + start, l->len - start);
	l->len -= start;
	return go;
}

int cli_serve_lines(size_t max, int (*on_line)(void *ud, const char *line, size_t len), void *ud)
{
	struct lines l = {};

	catch_signals();
	for (;;) {
		struct pollfd pf[2] = { { .fd = 0, .events = POLLIN }, { .fd = sig_pipe[0], .events = POLLIN } };
		ssize_t k;

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents)
			break;
		if (l.cap - l.len < 65536) {
			char *nb = realloc(l.buf, l.cap = l.cap ? l.cap * 2 : BUF_MIN);

			if (!nb)
				break;
			l.buf = nb;
		}
		k = read(0, l.buf + l.len, l.cap - l.len);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0) {
			/* A last line without its newline still counts. */
			if (l.len && !l.skipping && !blank(l.buf, l.len))
				on_line(ud, l.buf, l.len);
			break;
		}
		l.len += (size_t)k;
		if (!dispatch_lines(&l, on_line, ud))
			break;
		if (l.len > max) {
			/* Too long a line: handed over once (answered as too large), the rest of it read and dropped. */
			if (!l.skipping)
				on_line(ud, l.buf, l.len);
			l.skipping = true;
			l.len = 0;
		}
		if (l.cap > 4 * BUF_MIN && l.len < l.cap / 4) {
			char *nb = realloc(l.buf, l.cap / 2);

			if (nb) {
				l.buf = nb;
				l.cap /= 2;
			}
		}
	}
	free(l.buf);
	return got_signal;
}
