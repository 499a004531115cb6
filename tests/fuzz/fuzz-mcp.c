/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * MCP translation fuzzer (supervisor/session/mcp.c): the input is lines,
 * each a client message (first byte even) or a session event (odd). Every
 * message sent is one JSON-RPC 2.0 object on one line with exactly one of
 * result or error and an id; every request submitted is one JSON object
 * with an integer id and a tool name. Never a crash, a hang or a leak (ASan).
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral.h"
#include "supervisor/session/mcp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void op_send(void *ud, const char *msg, size_t len)
{
	json_t *j = json_loadb(msg, len, 0, NULL);

	(void)ud;
	if (!j || memchr(msg, '\n', len) || !json_is_object(j) ||
	    !json_is_string(json_object_get(j, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(j, "jsonrpc")), "2.0") != 0 || !json_object_get(j, "id") ||
	    !json_object_get(j, "result") == !json_object_get(j, "error"))
		abort();
	json_decref(j);
}

static int op_submit(void *ud, const char *req, size_t len)
{
	json_t *j = json_loadb(req, len, 0, NULL);

	(void)ud;
	if (!j || !json_is_integer(json_object_get(j, "id")) || !json_is_string(json_object_get(j, "tool")))
		abort();
	json_decref(j);
	return (len & 7) == 7 ? -108 : 0; /* now and then the session refuses (-ESHUTDOWN) */
}

static int op_cancel(void *ud, const char *id_json)
{
	(void)ud;
	if (!id_json[0] || strspn(id_json, "0123456789") != strlen(id_json))
		abort();
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct corral_mcp_ops ops = { op_send, op_submit, op_cancel, NULL };
	struct corral_mcp *m = corral_mcp_new(&ops, NULL, NULL);
	const char *p = (const char *)data, *end = p + size;

	if (!m)
		abort();
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);

		if (n) {
			if ((uint8_t)p[0] % 2 == 0)
				corral_mcp_input(m, p + 1, n - 1);
			else
				corral_mcp_event(m, p + 1, n - 1);
		}
		p += n + 1;
	}
	corral_mcp_free(m);
	return 0;
}

/* corral_version without the library (the target links mcp.c alone). */
const char *corral_version(void)
{
	return "fuzz";
}
