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
#include <stdio.h>
#include <stdlib.h>

#include "supervisor/cli/cli.h"
#include "supervisor/session/mcp.h"

static struct corral_mcp *mcp;

static void op_send(void *ud, const char *msg, size_t len)
{
	(void)ud;
	cli_write_line(msg, len);
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

static int on_line(void *m, const char *line, size_t len)
{
	corral_mcp_input(m, line, len);
	return 0;
}

/* What the server tells the client about its tools (MCP "instructions"). */
static void write_instructions(const struct corral_policy *p, char *buf, size_t size)
{
	int net = corral_policy_network(p);

	snprintf(buf, size,
		 "Tools of one confined session on the project root %s: bash and exec run commands inside a sandbox "
		 "(Landlock, seccomp, limits) where only the root and what the policy allows are reachable; the file "
		 "tools take paths relative to the session's working directory and refuse paths that leave the root. "
		 "bash keeps its working directory and exported variables between calls. A refusal is reported with "
		 "what was denied and a hint. Network: %s", corral_policy_root(p) ? corral_policy_root(p) : ".",
		 net == CORRAL_NET_NONE ? "none (downloads, package installs and name lookups "
		 "fail; the user can allow them with --net or the policy's network key)." :
		 net == CORRAL_NET_LOOPBACK ? "loopback only (127.0.0.1 and ::1)." :
		 net == CORRAL_NET_ALLOW ? "only the hosts the user listed (--allow), "
		 "through corral's proxy in HTTPS_PROXY/HTTP_PROXY, which curl, pip, npm and git over HTTPS use; "
		 "other hosts, raw IP addresses, DNS lookups and UDP are refused (the denial names the host)." :
		 "as the policy allows (its network key).");
}

int cli_mcp(int argc, char **argv)
{
	static const struct corral_mcp_ops ops = { op_send, op_submit, op_cancel, op_log };
	static const struct cli_session_cmd cmd = {
		.name = "mcp",
		.help = "\nMCP options (--audit FILE logs one line per call):\n"
			"  --approve CMD          ask CMD (sh -c, on the host, the request's JSON on stdin) before each\n"
			"                         bash, exec and file-tool call; non-zero exit: a tool error \"denied\"\n"
			"\nA Model Context Protocol server on stdin/stdout (JSON-RPC 2.0, one message per line) serving\n"
			"the session's tools: bash, exec, read_file, write_file, edit_file, list_dir, grep, job_output,\n"
			"job_kill, status. MCP client configuration:\n"
			"  {\"mcpServers\": {\"corral\": {\"command\": \"corral\", \"args\": [\"mcp\", \"--root\", "
			"\"/path/to/project\"]}}}\n",
		.operands = "an MCP client speaks JSON-RPC on stdin",
		.output = "answers",
	};
	struct cli_common c;
	struct corral_error err = {};
	struct corral_session *s = NULL;
	const char *approve = NULL;
	char instructions[4096 + 1024];
	int r = cli_session_args(argc, argv, &cmd, &c, &approve), code = 0, sig;

	if (r)
		return r == -1 ? 0 : r;
	write_instructions(c.policy, instructions, sizeof(instructions));
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
	fprintf(stderr, "corral mcp: serving %s on stdio\n", corral_policy_root(c.policy) ? corral_policy_root(c.policy) : ".");
	sig = cli_serve_lines(CORRAL_MCP_MESSAGE_MAX, on_line, mcp);
	/* Running calls are killed; their answers still go out before free returns. */
	corral_session_free(s);
	s = NULL;
	if (sig)
		code = 128 + sig;
out:
	corral_session_free(s);
	corral_mcp_free(mcp);
	mcp = NULL;
	cli_common_clear(&c);
	return code;
}
