/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Model Context Protocol face of a session: JSON-RPC 2.0 messages in,
 * session requests out, session events in, JSON-RPC messages out. Pure
 * translation (no I/O, no session): what it sends and submits goes through
 * the callbacks, so the same code runs under `corral mcp` and the fuzzer.
 */
#ifndef CORRAL_MCP_H
#define CORRAL_MCP_H

#include <stddef.h>

/* Longest JSON-RPC message accepted (write_file content travels in it). */
#define CORRAL_MCP_MESSAGE_MAX (16u << 20)

struct corral_mcp_ops {
	/* One complete JSON-RPC message for the client (no newline). */
	void (*send)(void *userdata, const char *msg, size_t len);
	/* One session request line; 0, or a negative errno when the session cannot take it. */
	int (*submit)(void *userdata, const char *request, size_t len);
	/* Cancel the session call whose id is |id_json|. */
	int (*cancel)(void *userdata, const char *id_json);
	/* A line for the operator's log (stderr); may be NULL. */
	void (*log)(void *userdata, const char *text);
};

struct corral_mcp;

/* |instructions|: the initialize result's text for the model (copied); NULL: a default. */
struct corral_mcp *corral_mcp_new(const struct corral_mcp_ops *ops, void *userdata, const char *instructions);

/* One message from the client (one line without its newline). Thread-safe. */
void corral_mcp_input(struct corral_mcp *m, const char *msg, size_t len);

/* One event line of the session (corral_session_event_fn). Thread-safe. */
void corral_mcp_event(struct corral_mcp *m, const char *line, size_t len);

/* Calls submitted and not yet answered (or dropped after a cancel). */
unsigned corral_mcp_pending(struct corral_mcp *m);

void corral_mcp_free(struct corral_mcp *m);

#endif
