/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * corral session [RUN OPTIONS]: one warm sandbox; JSON requests on stdin,
 * one per line, JSON events on stdout, one per line (DESIGN.md "Agent
 * sessions"). End of stdin ends the session (everything killed, the tmp
 * removed) and exits 0; SIGTERM, SIGINT and SIGHUP do the same, exiting
 * 128+N.
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

#define LINE_MAX_BYTES (16u << 20)

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static int sig_pipe[2] = { -1, -1 };
static volatile sig_atomic_t got_signal;

static void on_event(void *userdata, const char *line, size_t len)
{
	struct iovec iov[2] = { { (void *)line, len }, { (void *)"\n", 1 } };
	size_t left = len + 1;

	(void)userdata;
	pthread_mutex_lock(&out_lock);
	while (left) {
		ssize_t n = writev(1, iov, 2);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* stdout gone: the events are lost, the session goes on until stdin ends */
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

static void on_signal(int sig)
{
	int saved = errno;
	char b = (char)sig;

	got_signal = sig;
	if (write(sig_pipe[1], &b, 1) < 0)
		got_signal = sig;
	errno = saved;
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

int cli_session(int argc, char **argv)
{
	struct cli_common c;
	struct corral_error err = {};
	struct corral_session *s = NULL;
	const char *approve = NULL;
	char **args;
	int n = 0, optind_, r, code = 0;
	bool closed[3] = {}, skipping = false;
	char *buf = NULL;
	size_t len = 0, cap = 0;

	if (cli_hold_stdio(closed) < 0)
		return CLI_EXIT_ERROR;
	/* --approve CMD is the session's own option; the rest are run's (--audit among them). */
	args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args)
		return cli_fail(false, CORRAL_E_INTERNAL, "out of memory");
	for (int i = 0; i < argc; i++) {
		if (i > 0 && strcmp(argv[i], "--approve") == 0 && i + 1 < argc) {
			approve = argv[++i];
			continue;
		}
		if (strcmp(argv[i], "--") == 0)
			break;
		args[n++] = argv[i];
	}
	r = cli_parse_common(n, args, "session", false, &c, &optind_);
	if (r == -1) {
		fputs("\nSession options (--audit FILE logs one line per call):\n"
		      "  --approve CMD          ask CMD (sh -c, on the host, the request's JSON on stdin) before each\n"
		      "                         bash, exec and file-tool call; non-zero exit: error \"denied\"\n"
		      "\nRequests on stdin, one JSON object per line; events on stdout (docs/sessions.md).\n", stdout);
		free(args);
		return 0;
	}
	if (r) {
		free(args);
		return r;
	}
	if (optind_ < n) {
		code = cli_fail(false, CORRAL_E_USAGE, "session: unexpected argument '%s' (requests come on stdin, one "
				"JSON object per line)", args[optind_]);
		goto out;
	}
	if (closed[1]) {
		code = cli_fail(false, CORRAL_E_USAGE, "session: standard output is closed: the events would go nowhere");
		goto out;
	}
	if (cli_default_root(c.policy, &err) < 0 ||
	    corral_session_new(c.policy, &CORRAL_SESSION_OPTS(.approve = approve), on_event, NULL, &s, &err) < 0) {
		code = cli_fail_err(false, &err);
		goto out;
	}
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) == 0) {
		struct sigaction sa = { .sa_handler = on_signal };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
	}
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		struct pollfd pf[2] = { { .fd = 0, .events = POLLIN }, { .fd = sig_pipe[0], .events = POLLIN } };
		size_t start = 0;
		ssize_t k;

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents)
			break;
		if (cap - len < 65536) {
			char *nb = realloc(buf, cap = cap ? cap * 2 : 131072);

			if (!nb)
				break;
			buf = nb;
		}
		k = read(0, buf + len, cap - len);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0) {
			/* A last line without its newline still counts. */
			if (len && !skipping && !blank(buf, len))
				corral_session_call(s, buf, len);
			break;
		}
		len += (size_t)k;
		for (;;) {
			char *nl = memchr(buf + start, '\n', len - start);
			size_t ll;

			if (!nl)
				break;
			ll = (size_t)(nl - (buf + start));
			if (skipping)
				skipping = false;
			else if (!blank(buf + start, ll) && corral_session_call(s, buf + start, ll) == -ESHUTDOWN)
				goto end;
			start += ll + 1;
		}
		memmove(buf, buf + start, len - start);
		len -= start;
		if (len > LINE_MAX_BYTES) {
			/* Too long a line: answered once (too_large), the rest of it read and dropped. */
			if (!skipping)
				corral_session_call(s, buf, len);
			skipping = true;
			len = 0;
		}
		if (cap > 4 * 131072 && len < cap / 4) {
			char *nb = realloc(buf, cap / 2);

			if (nb) {
				buf = nb;
				cap /= 2;
			}
		}
	}
end:
	corral_session_free(s);
	s = NULL;
	if (got_signal)
		code = 128 + got_signal;
out:
	corral_session_free(s);
	free(buf);
	free(args);
	cli_common_clear(&c);
	return code;
}
