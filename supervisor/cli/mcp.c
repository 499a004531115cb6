/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * corral mcp [RUN OPTIONS]: a session served as a Model Context Protocol
 * server over stdio (DESIGN.md "Agent sessions"): JSON-RPC 2.0, one
 * message per line. The translation lives in supervisor/session/mcp.c;
 * this file is the I/O: stdin lines in, stdout lines out (protocol only),
 * stderr for the operator. End of stdin ends the session (every call
 * killed, the tmp removed) and exits 0; SIGTERM, SIGINT and SIGHUP do the
 * same, exiting 128+N.
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
#include "supervisor/session/mcp.h"

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static int sig_pipe[2] = { -1, -1 };
static volatile sig_atomic_t got_signal;
static struct corral_mcp *mcp;

static void write_line(const char *line, size_t len)
{
	struct iovec iov[2] = { { (void *)line, len }, { (void *)"\n", 1 } };
	size_t left = len + 1;

	pthread_mutex_lock(&out_lock);
	while (left) {
		ssize_t n = writev(1, iov, 2);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* the client is gone: answers are lost, the session ends when stdin does */
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

static void op_send(void *ud, const char *msg, size_t len)
{
	(void)ud;
	write_line(msg, len);
}

static int op_submit(void *ud, const char *req, size_t len)
{
	return corral_session_call(ud, req, len);
}

static int op_cancel(void *ud, const char *id_json)
{
	return corral_session_cancel(ud, id_json);
}

static void op_log(void *ud, const char *text)
{
	(void)ud;
	fprintf(stderr, "corral mcp: %s\n", text);
}

static void on_event(void *userdata, const char *line, size_t len)
{
	(void)userdata;
	if (mcp)
		corral_mcp_event(mcp, line, len);
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

int cli_mcp(int argc, char **argv)
{
	static const struct corral_mcp_ops ops = { op_send, op_submit, op_cancel, op_log };
	struct cli_common c;
	struct corral_error err = {};
	struct corral_session *s = NULL;
	const char *approve = NULL;
	char **args, instructions[4096 + 1024];
	int n = 0, optind_, r, code = 0;
	bool closed[3] = {}, skipping = false;
	char *buf = NULL;
	size_t len = 0, cap = 0;

	if (cli_hold_stdio(closed) < 0)
		return CLI_EXIT_ERROR;
	/* --approve CMD as for corral session; the rest are run's (--audit among them). */
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
	r = cli_parse_common(n, args, "mcp", false, &c, &optind_);
	if (r == -1) {
		fputs("\nMCP options (--audit FILE logs one line per call):\n"
		      "  --approve CMD          ask CMD (sh -c, on the host, the request's JSON on stdin) before each\n"
		      "                         bash, exec and file-tool call; non-zero exit: a tool error \"denied\"\n"
		      "\nA Model Context Protocol server on stdin/stdout (JSON-RPC 2.0, one message per line) serving\n"
		      "the session's tools: bash, exec, read_file, write_file, edit_file, list_dir, grep, job_output,\n"
		      "job_kill, status. MCP client configuration:\n"
		      "  {\"mcpServers\": {\"corral\": {\"command\": \"corral\", \"args\": [\"mcp\", \"--root\", \"/path/to/project\"]}}}\n",
		      stdout);
		free(args);
		return 0;
	}
	if (r) {
		free(args);
		return r;
	}
	if (optind_ < n) {
		code = cli_fail(false, CORRAL_E_USAGE, "mcp: unexpected argument '%s' (an MCP client speaks JSON-RPC "
				"on stdin)", args[optind_]);
		goto out;
	}
	if (closed[1]) {
		code = cli_fail(false, CORRAL_E_USAGE, "mcp: standard output is closed: the answers would go nowhere");
		goto out;
	}
	if (cli_default_root(c.policy, &err) < 0) {
		code = cli_fail_err(false, &err);
		goto out;
	}
	snprintf(instructions, sizeof(instructions),
		 "Tools of one confined session on the project root %s: bash and exec run commands inside a sandbox "
		 "(Landlock, seccomp, limits) where only the root and what the policy allows are reachable; the file "
		 "tools take paths relative to the session's working directory and refuse paths that leave the root. "
		 "bash keeps its working directory and exported variables between calls. A refusal is reported with "
		 "what was denied and a hint. Network: %s", corral_policy_root(c.policy) ? corral_policy_root(c.policy) : ".",
		 corral_policy_network(c.policy) == CORRAL_NET_NONE ? "none (downloads, package installs and name lookups "
		 "fail; the user can allow them with --net or the policy's network key)." :
		 corral_policy_network(c.policy) == CORRAL_NET_LOOPBACK ? "loopback only (127.0.0.1 and ::1)." :
		 corral_policy_network(c.policy) == CORRAL_NET_ALLOW ? "only the hosts the user listed (--allow), "
		 "through corral's proxy in HTTPS_PROXY/HTTP_PROXY, which curl, pip, npm and git over HTTPS use; "
		 "other hosts, raw IP addresses, DNS lookups and UDP are refused (the denial names the host)." :
		 "as the policy allows (its network key).");
	if (corral_session_new(c.policy, &CORRAL_SESSION_OPTS(.approve = approve), on_event, NULL,
			       &s, &err) < 0) {
		code = cli_fail_err(false, &err);
		goto out;
	}
	mcp = corral_mcp_new(&ops, s, instructions);
	if (!mcp) {
		code = cli_fail(false, CORRAL_E_INTERNAL, "mcp: out of memory");
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
	fprintf(stderr, "corral mcp: serving %s on stdio\n", corral_policy_root(c.policy) ? corral_policy_root(c.policy) : ".");
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
			if (len && !skipping && !blank(buf, len))
				corral_mcp_input(mcp, buf, len);
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
			else if (!blank(buf + start, ll))
				corral_mcp_input(mcp, buf + start, ll);
			start += ll + 1;
		}
		memmove(buf, buf + start, len - start);
		len -= start;
		if (len > CORRAL_MCP_MESSAGE_MAX) {
			/* Too long a message: answered once, the rest of it read and dropped. */
			if (!skipping)
				corral_mcp_input(mcp, buf, len);
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
	/* Running calls are killed; their answers still go out before free returns. */
	corral_session_free(s);
	s = NULL;
	if (got_signal)
		code = 128 + got_signal;
out:
	corral_session_free(s);
	corral_mcp_free(mcp);
	mcp = NULL;
	free(buf);
	free(args);
	cli_common_clear(&c);
	return code;
}
