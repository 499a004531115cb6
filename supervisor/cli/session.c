/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * corral session [RUN OPTIONS]: one warm sandbox; JSON requests on stdin,
 * one per line, JSON events on stdout, one per line (DESIGN.md "Agent
 * sessions"). End of stdin ends the session (everything killed, the tmp
 * removed) and exits 0; SIGTERM, SIGINT and SIGHUP do the same, exiting
 * 128+N.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "supervisor/cli/cli.h"

#define LINE_MAX_BYTES (16u << 20)

static void on_event(void *userdata, const char *line, size_t len)
{
	(void)userdata;
	cli_write_line(line, len);
}

/* A request line; a too-long one is answered too_large. Stop once the session has shut down. */
static int on_line(void *s, const char *line, size_t len)
{
	return corral_session_call(s, line, len) == -ESHUTDOWN;
}

int cli_session(int argc, char **argv)
{
	struct cli_common c;
	struct corral_error err = {};
	struct corral_session *s = NULL;
	const char *approve = NULL;
	char **args;
	int n, optind_, r, code = 0, sig;
	bool closed[3] = {};

	if (cli_hold_stdio(closed) < 0)
		return CLI_EXIT_ERROR;
	args = cli_take_approve(argc, argv, &approve, &n);
	if (!args)
		return cli_fail(false, CORRAL_E_INTERNAL, "out of memory");
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
	sig = cli_serve_lines(LINE_MAX_BYTES, on_line, s);
	corral_session_free(s);
	s = NULL;
	if (sig)
		code = 128 + sig;
out:
	corral_session_free(s);
	free(args);
	cli_common_clear(&c);
	return code;
}
