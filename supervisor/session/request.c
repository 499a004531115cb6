/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The session protocol's request parser: pure (no syscalls), so that it
 * can be fuzzed on its own (tests/fuzz/fuzz-session.c). One line in, a
 * validated request or an error code and a message out.
 */
#include <math.h>
#include <string.h>

#include "internal/util.h"
#include "policy/policy.h"
#include "supervisor/session/session.h"

#define RUN_OPTS { "timeout", A_NUM, false }, { "stdin", A_STR, false }, { "env", A_ENV, false }, \
	{ "max_output", A_INT, false }, { "background", A_BOOL, false }, { "stream", A_BOOL, false }

const struct corral_tool_spec corral_tools[] = {
	{ "bash", true, true, { { "command", A_STR, true }, RUN_OPTS } },
	{ "exec", true, true, { { "argv", A_ARGV, true }, RUN_OPTS } },
	{ "read_file", false, true, { { "path", A_STR, true }, { "offset", A_INT, false }, { "limit", A_INT, false } } },
	{ "write_file", false, true, { { "path", A_STR, true }, { "content", A_STR, true } } },
	{ "edit_file", false, true,
	  { { "path", A_STR, true }, { "old", A_STR, true }, { "new", A_STR, true }, { "all", A_BOOL, false } } },
	{ "list_dir", false, true, { { "path", A_STR, false }, { "depth", A_INT, false } } },
	{ "grep", false, true,
	  { { "pattern", A_STR, true }, { "path", A_STR, false }, { "glob", A_STR, false },
	    { "ignore_case", A_BOOL, false } } },
	{ "job_output", false, false, { { "job", A_ID, true } } },
	{ "job_kill", false, false, { { "job", A_ID, true } } },
	{ "cancel", false, false, { { "target", A_ID, true } } },
	{ "status", false, false, { { NULL, 0, false } } },
};

static const char *type_name(enum corral_argtype t)
{
	switch (t) {
	case A_STR: return "a string";
	case A_INT: return "a non-negative integer";
	case A_NUM: return "a number of seconds > 0";
	case A_BOOL: return "true or false";
	case A_ENV: return "an object of strings";
	case A_ARGV: return "a non-empty array of strings";
	case A_ID: return "a string or an integer (a call's id)";
	}
	return "?";
}

static bool type_ok(enum corral_argtype t, json_t *v)
{
	const char *k;
	json_t *x;
	size_t i;

	switch (t) {
	case A_STR:
		return json_is_string(v);
	case A_INT:
		return json_is_integer(v) && json_integer_value(v) >= 0;
	case A_NUM:
		return json_is_number(v) && json_number_value(v) > 0 && isfinite(json_number_value(v)) &&
		       json_number_value(v) <= CORRAL_TIMEOUT_MAX;
	case A_BOOL:
		return json_is_boolean(v);
	case A_ENV:
		if (!json_is_object(v))
			return false;
		json_object_foreach(v, k, x) {
			if (!json_is_string(x) || !*k || strchr(k, '='))
				return false;
			if (strlen(json_string_value(x)) != json_string_length(x))
				return false;
		}
		return true;
	case A_ARGV:
		if (!json_is_array(v) || json_array_size(v) == 0)
			return false;
		json_array_foreach(v, i, x)
			if (!json_is_string(x) || strlen(json_string_value(x)) != json_string_length(x))
				return false;
		return true;
	case A_ID:
		return json_is_string(v) || json_is_integer(v);
	}
	return false;
}


const size_t corral_n_tools = ARRAY_SIZE(corral_tools);

int corral_tool_fail(struct corral_tool_err *e, const char *code, const char *fmt, ...)
{
	va_list ap;

	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

#define fail corral_tool_fail

void corral_request_clear(struct corral_request *r)
{
	json_decref(r->req);
	memset(r, 0, sizeof(*r));
}

int corral_request_parse(const char *line, size_t len, struct corral_request *r, struct corral_tool_err *e)
{
	json_error_t jerr;
	json_t *v;
	const char *name, *key;

	memset(r, 0, sizeof(*r));
	if (len > CORRAL_SESSION_LINE_MAX)
		return fail(e, "too_large", "request of %zu bytes: at most %u per line (write large files in parts, "
			    "or from a command)", len, CORRAL_SESSION_LINE_MAX);
	r->req = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
	if (!r->req)
		return fail(e, "bad_json", "request is not valid JSON: %s (column %d); send one JSON object per line",
			    jerr.text, jerr.column);
	if (!json_is_object(r->req))
		return fail(e, "bad_request", "request must be a JSON object with \"id\" and \"tool\"");
	v = json_object_get(r->req, "id");
	r->tag = json_object_get(r->req, "tag");
	if (!v || !(json_is_string(v) || json_is_integer(v)))
		return fail(e, "bad_request", "%s: every request needs an \"id\" (a string or an integer)",
			    v ? "\"id\" has the wrong type" : "\"id\" is missing");
	r->id = v;
	v = json_object_get(r->req, "tool");
	name = json_string_value(v);
	for (size_t i = 0; name && i < corral_n_tools; i++)
		if (strcmp(corral_tools[i].name, name) == 0)
			r->tool = &corral_tools[i];
	if (!r->tool) {
		if (!name)
			return fail(e, "bad_request", "\"tool\" is %s: it must be one of bash, exec, read_file, write_file, "
				    "edit_file, list_dir, grep, job_output, job_kill, cancel, status",
				    v ? "not a string" : "missing");
		return fail(e, "unknown_tool", "unknown tool \"%.100s\": one of bash, exec, read_file, write_file, "
			    "edit_file, list_dir, grep, job_output, job_kill, cancel, status", name);
	}
	json_object_foreach(r->req, key, v) {
		const struct argspec *a = NULL;

		if (strcmp(key, "id") == 0 || strcmp(key, "tool") == 0 || strcmp(key, "tag") == 0)
			continue;
		for (size_t i = 0; i < ARRAY_SIZE(r->tool->args) && r->tool->args[i].name; i++)
			if (strcmp(r->tool->args[i].name, key) == 0)
				a = &r->tool->args[i];
		if (!a)
			return fail(e, "bad_request", "%s: unknown argument \"%.100s\"", r->tool->name, key);
		if (!type_ok(a->type, v))
			return fail(e, "bad_request", "%s: \"%s\" must be %s", r->tool->name, key, type_name(a->type));
	}
	for (size_t i = 0; i < ARRAY_SIZE(r->tool->args) && r->tool->args[i].name; i++)
		if (r->tool->args[i].required && !json_object_get(r->req, r->tool->args[i].name))
			return fail(e, "bad_request", "%s: \"%s\" is required (%s)", r->tool->name, r->tool->args[i].name,
				    type_name(r->tool->args[i].type));
	v = json_object_get(r->req, "command");
	if (v && strlen(json_string_value(v)) != json_string_length(v))
		return fail(e, "bad_request", "%s: \"command\" contains a NUL character", r->tool->name);
	v = json_object_get(r->req, "path");
	if (v && strlen(json_string_value(v)) != json_string_length(v))
		return fail(e, "bad_request", "%s: \"path\" contains a NUL character", r->tool->name);
	return 0;
}
