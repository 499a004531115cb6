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
	static const struct cli_session_cmd cmd = {
		.name = "session",
		.help = "\nSession options (--audit FILE logs one line per call):\n"
			"  --approve CMD          ask CMD (sh -c, on the host, the request's JSON on stdin) before each\n"
			"                         bash, exec and file-tool call; non-zero exit: error \"denied\"\n"
			"                         (overrides the policy key approve)\n"
			"\nRequests on stdin, one JSON object per line; events on stdout (docs/sessions.md).\n",
		.operands = "requests come on stdin, one JSON object per line",
		.output = "events",
	};
	struct cli_common c;
	struct corral_error err = {};
	struct corral_session *s = NULL;
	const char *approve = NULL;
	int r = cli_session_args(argc, argv, &cmd, &c, &approve), sig;

	if (r)
		return r == -1 ? 0 : r;
	if (corral_session_new(c.policy, &CORRAL_SESSION_OPTS(.approve = approve), on_event, NULL, &s, &err) < 0) {
		r = cli_fail_err(false, &err);
		cli_common_clear(&c);
		return r;
	}
	sig = cli_serve_lines(LINE_MAX_BYTES, on_line, s);
	corral_session_free(s);
	cli_common_clear(&c);
	return sig ? 128 + sig : 0;
}
