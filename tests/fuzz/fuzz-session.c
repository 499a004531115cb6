/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Session request parser fuzzer (supervisor/session/request.c): every
 * line is either a request whose id is a string or an integer, whose tool
 * is one of the table's and whose every argument has its declared type,
 * or an error with a known code and a message; an id echoed in an event
 * dumps as JSON. Never a crash, a hang or a leak (ASan).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/session/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const codes[] = { "too_large", "bad_json", "bad_request", "unknown_tool" };
	struct corral_request r;
	struct corral_tool_err e = {};
	json_t *ev;
	char *line;
	bool known = false;
	int rc = corral_request_parse((const char *)data, size, &r, &e);

	if (rc < 0) {
		for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
			known |= e.code && strcmp(e.code, codes[i]) == 0;
		if (!known || !e.msg[0])
			abort();
	} else if (!r.req || !r.tool || !r.id || !(json_is_string(r.id) || json_is_integer(r.id))) {
		abort();
	}
	/* The error or result event built from what was read, as the session does. */
	ev = json_object();
	json_object_set(ev, "id", r.id ? r.id : json_null());
	json_object_set_new(ev, "event", json_string(rc < 0 ? "error" : "result"));
	if (r.tag)
		json_object_set(ev, "tag", r.tag);
	if (rc < 0)
		json_object_set_new(ev, "message", corral_json_text(e.msg, strlen(e.msg)));
	line = json_dumps(ev, JSON_COMPACT | JSON_ENCODE_ANY);
	if (!line)
		abort();
	free(line);
	json_decref(ev);
	corral_request_clear(&r);
	return 0;
}
