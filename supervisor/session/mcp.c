/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * MCP (Model Context Protocol) over a session: JSON-RPC 2.0 requests from
 * the client become session requests with an internal integer id; the
 * session's events for that id become the JSON-RPC answer, as text a model
 * reads plus structuredContent matching the tool's declared outputSchema.
 * Tool errors (escape, not_found, denied, bad arguments) are results with
 * isError, never protocol errors. See DESIGN.md "Agent sessions".
 */
#include <inttypes.h>
#include <stdarg.h>
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral.h"
#include "supervisor/session/mcp.h"

/* Newest first: an unknown requested revision is answered with the first. */
static const char *const protocol_versions[] = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05" };

enum render { R_RUN, R_READ, R_WRITE, R_EDIT, R_LIST, R_GREP, R_JOB_OUTPUT, R_STATUS };

#define RUN_INPUT \
	"\"timeout\": {\"type\": \"number\", \"exclusiveMinimum\": 0, \"description\": \"seconds before the command " \
	"and everything it started are killed (default: the policy's)\"}," \
	"\"stdin\": {\"type\": \"string\", \"description\": \"text given to the command on standard input\"}," \
	"\"env\": {\"type\": \"object\", \"additionalProperties\": {\"type\": \"string\"}, \"description\": " \
	"\"variables set for this call only\"}," \
	"\"max_output\": {\"type\": \"integer\", \"minimum\": 0, \"description\": \"bytes kept of stdout and of " \
	"stderr each (head and tail)\"}," \
	"\"background\": {\"type\": \"boolean\", \"description\": \"start it and answer at once with its job id; " \
	"read its output with job_output, end it with job_kill\"}"

#define RUN_OUTPUT \
	"{\"type\": \"object\", \"properties\": {" \
	"\"exit_status\": {\"type\": [\"integer\", \"null\"]}," \
	"\"signal\": {\"type\": [\"integer\", \"null\"]}," \
	"\"timed_out\": {\"type\": \"boolean\"}," \
	"\"ended_by\": {\"type\": \"string\", \"description\": \"exit, signal, timeout, memory, cpu, file_size or " \
	"cancelled\"}," \
	"\"stdout\": {\"type\": \"string\"}, \"stderr\": {\"type\": \"string\"}," \
	"\"stdout_truncated\": {\"type\": \"boolean\"}, \"stderr_truncated\": {\"type\": \"boolean\"}," \
	"\"stdout_bytes\": {\"type\": \"integer\"}, \"stderr_bytes\": {\"type\": \"integer\"}," \
	"\"wall_ms\": {\"type\": \"number\"}, \"cpu_ms\": {\"type\": \"number\"}," \
	"\"max_rss_kb\": {\"type\": [\"integer\", \"null\"]}," \
	"\"provider\": {\"type\": \"string\"}," \
	"\"denials\": {\"type\": \"array\", \"items\": {\"type\": \"object\", \"properties\": {" \
	"\"kind\": {\"type\": \"string\"}, \"what\": {\"type\": \"string\"}, \"count\": {\"type\": \"integer\"}," \
	"\"source\": {\"type\": \"string\"}, \"hint\": {\"type\": \"string\"}}}}," \
	"\"warnings\": {\"type\": \"array\"}," \
	"\"leftovers_killed\": {\"type\": \"integer\"}," \
	"\"cwd\": {\"type\": \"string\", \"description\": \"where the shell ended, relative to the root\"}," \
	"\"job\": {\"type\": \"integer\", \"description\": \"a background call's job id\"}," \
	"\"background\": {\"type\": \"boolean\"}, \"running\": {\"type\": \"boolean\"}}}"

#define ID_INPUT(what) \
	"{\"type\": \"object\", \"properties\": {\"job\": {\"type\": [\"integer\", \"string\"], \"description\": " \
	"\"" what "\"}}, \"required\": [\"job\"], \"additionalProperties\": false}"

static const struct tool {
	const char *name;
	const char *title;
	const char *description;
	const char *input;
	const char *output;
	enum render render;
	bool read_only;
} tools[] = {
	{ "bash", "Run a shell command",
	  "Run a bash command confined to the project root (files outside it, other processes and the network "
	  "as the policy allows). The working directory and exported variables carry over from one call to the "
	  "next, like a terminal. Answers the exit status, stdout, stderr, the directory the shell ended in, and "
	  "what the policy refused (denials, with a hint).",
	  "{\"type\": \"object\", \"properties\": {\"command\": {\"type\": \"string\", \"description\": \"the bash "
	  "script\"}," RUN_INPUT "}, \"required\": [\"command\"], \"additionalProperties\": false}",
	  RUN_OUTPUT, R_RUN, false },
	{ "exec", "Run a program without a shell",
	  "Run a program with exact arguments (no shell), confined like bash, in the session's working directory.",
	  "{\"type\": \"object\", \"properties\": {\"argv\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}, "
	  "\"minItems\": 1, \"description\": \"the program and its arguments\"}," RUN_INPUT "}, \"required\": "
	  "[\"argv\"], \"additionalProperties\": false}",
	  RUN_OUTPUT, R_RUN, false },
	{ "read_file", "Read a text file",
	  "Read a UTF-8 text file under the project root (paths relative to the session's working directory).",
	  "{\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}, \"offset\": {\"type\": "
	  "\"integer\", \"minimum\": 1, \"description\": \"first line, 1-based\"}, \"limit\": {\"type\": \"integer\", "
	  "\"minimum\": 1, \"description\": \"lines to return\"}}, \"required\": [\"path\"], "
	  "\"additionalProperties\": false}",
	  "{\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}, \"content\": {\"type\": "
	  "\"string\"}, \"lines\": {\"type\": \"integer\"}, \"truncated\": {\"type\": \"boolean\"}}, \"required\": "
	  "[\"content\", \"lines\", \"truncated\"]}",
	  R_READ, true },
	{ "write_file", "Write a file",
	  "Create or replace a file under the project root with the given content; missing parent directories "
	  "are created.",
	  "{\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}, \"content\": {\"type\": "
	  "\"string\"}}, \"required\": [\"path\", \"content\"], \"additionalProperties\": false}",
	  "{\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}, \"bytes\": {\"type\": "
	  "\"integer\"}}, \"required\": [\"bytes\"]}",
	  R_WRITE, false },
	{ "edit_file", "Replace text in a file",
	  "Replace the exact text old with new in a file under the project root. old must occur exactly once "
	  "unless all is true.",
	  "{\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}, \"old\": {\"type\": \"string\"}, "
	  "\"new\": {\"type\": \"string\"}, \"all\": {\"type\": \"boolean\", \"description\": \"replace every "
	  "occurrence\"}}, \"required\": [\"path\", \"old\", \"new\"], \"additionalProperties\": false}",
	  "{\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}, \"replacements\": {\"type\": "
	  "\"integer\"}}, \"required\": [\"replacements\"]}",
	  R_EDIT, false },
	{ "list_dir", "List a directory",
	  "List a directory under the project root (default: the working directory), depth levels deep.",
	  "{\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}, \"depth\": {\"type\": "
	  "\"integer\", \"minimum\": 1, \"description\": \"levels (default 1)\"}}, \"additionalProperties\": false}",
	  "{\"type\": \"object\", \"properties\": {\"entries\": {\"type\": \"array\", \"items\": {\"type\": "
	  "\"object\", \"properties\": {\"name\": {\"type\": \"string\"}, \"type\": {\"type\": \"string\"}, "
	  "\"size\": {\"type\": \"integer\"}}, \"required\": [\"name\", \"type\"]}}, \"truncated\": {\"type\": "
	  "\"boolean\"}}, \"required\": [\"entries\"]}",
	  R_LIST, true },
	{ "grep", "Search files",
	  "Search files under the project root for a POSIX extended regular expression.",
	  "{\"type\": \"object\", \"properties\": {\"pattern\": {\"type\": \"string\"}, \"path\": {\"type\": "
	  "\"string\", \"description\": \"file or directory to search (default: the working directory)\"}, "
	  "\"glob\": {\"type\": \"string\", \"description\": \"only files whose base name matches\"}, "
	  "\"ignore_case\": {\"type\": \"boolean\"}}, \"required\": [\"pattern\"], \"additionalProperties\": false}",
	  "{\"type\": \"object\", \"properties\": {\"matches\": {\"type\": \"array\", \"items\": {\"type\": "
	  "\"object\", \"properties\": {\"path\": {\"type\": \"string\"}, \"line\": {\"type\": \"integer\"}, "
	  "\"text\": {\"type\": \"string\"}}, \"required\": [\"path\", \"line\", \"text\"]}}, \"truncated\": "
	  "{\"type\": \"boolean\"}}, \"required\": [\"matches\"]}",
	  R_GREP, true },
	{ "job_output", "Read a background job's output",
	  "Output a background job wrote since the last read, and whether it still runs.",
	  ID_INPUT("the job id a background bash or exec call answered"),
	  "{\"type\": \"object\", \"properties\": {\"job\": {\"type\": [\"integer\", \"string\"]}, \"stdout\": "
	  "{\"type\": \"string\"}, \"stderr\": {\"type\": \"string\"}, \"running\": {\"type\": \"boolean\"}}, "
	  "\"required\": [\"stdout\", \"stderr\", \"running\"]}",
	  R_JOB_OUTPUT, true },
	{ "job_kill", "End a background job",
	  "Kill a background job and everything it started; answers its final result.",
	  ID_INPUT("the job id a background bash or exec call answered"), RUN_OUTPUT, R_RUN, false },
	{ "status", "Session status",
	  "The session's working directory, running calls and background jobs.",
	  "{\"type\": \"object\", \"properties\": {}, \"additionalProperties\": false}",
	  "{\"type\": \"object\", \"properties\": {\"cwd\": {\"type\": \"string\"}, \"running\": {\"type\": "
	  "\"array\"}, \"jobs\": {\"type\": \"array\"}, \"calls\": {\"type\": \"integer\"}, \"errors\": {\"type\": "
	  "\"integer\"}, \"session_id\": {\"type\": \"string\"}, \"root\": {\"type\": \"string\"}}, \"required\": "
	  "[\"cwd\"]}",
	  R_STATUS, true },
};

#define N_TOOLS (sizeof(tools) / sizeof(tools[0]))

/* A tools/call submitted to the session and not answered yet. */
struct pending {
	struct pending *next;
	json_int_t sid;  /* the session request's id */
	json_t *rpc_id;  /* the client's JSON-RPC id */
	const struct tool *tool;
	bool cancelled;  /* notifications/cancelled: no answer is sent */
};

struct corral_mcp {
	struct corral_mcp_ops ops;
	void *ud;
	char *instructions;
	json_t *tool_list; /* the tools/list result's array, built once */
	pthread_mutex_t lock;
	struct pending *pending;
	unsigned n_pending;
	json_int_t next_sid;
};

static void logf_(struct corral_mcp *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void logf_(struct corral_mcp *m, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!m->ops.log)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	m->ops.log(m->ud, buf);
}

static void send_json(struct corral_mcp *m, json_t *msg)
{
	char *s;

	if (!msg)
		return;
	s = json_dumps(msg, JSON_COMPACT | JSON_REAL_PRECISION(15));
	json_decref(msg);
	if (!s) {
		logf_(m, "mcp: out of memory encoding a message");
		return;
	}
	m->ops.send(m->ud, s, strlen(s));
	free(s);
}

static json_t *response(json_t *id)
{
	return json_pack("{s:s, s:O}", "jsonrpc", "2.0", "id", id ? id : json_null());
}

static void send_result(struct corral_mcp *m, json_t *id, json_t *result)
{
	json_t *r = response(id);

	if (r && result)
		json_object_set_new(r, "result", result);
	else
		json_decref(result);
	send_json(m, r);
}

static void send_error(struct corral_mcp *m, json_t *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void send_error(struct corral_mcp *m, json_t *id, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	json_t *r = response(id);

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r)
		json_object_set_new(r, "error", json_pack("{s:i, s:s%}", "code", code, "message", msg, strlen(msg)));
	send_json(m, r);
}

/* ------------------------------------------------------------ rendering */

struct text {
	char *buf;
	size_t len;
	FILE *f;
};

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static void put_stream(FILE *f, json_t *ev, const char *name)
{
	json_t *v = json_object_get(ev, name);
	char key[32];
	json_t *total;

	if (!json_is_string(v))
		return;
	if (!json_string_length(v)) {
		fprintf(f, "%s: (empty)\n", name);
		return;
	}
	snprintf(key, sizeof(key), "%s_truncated", name);
	fprintf(f, "%s:\n", name);
	fwrite(json_string_value(v), 1, json_string_length(v), f);
	if (json_string_value(v)[json_string_length(v) - 1] != '\n')
		fputc('\n', f);
	if (json_is_true(json_object_get(ev, key))) {
		snprintf(key, sizeof(key), "%s_bytes", name);
		total = json_object_get(ev, key);
		if (json_is_integer(total))
			fprintf(f, "(%s truncated: %" JSON_INTEGER_FORMAT " bytes in all; pass a larger \"max_output\" "
				"or redirect to a file and read_file it)\n", name, json_integer_value(total));
		else
			fprintf(f, "(%s truncated; pass a larger \"max_output\" or redirect to a file and read_file it)\n",
				name);
	}
}

static void render_run(FILE *f, json_t *ev)
{
	const char *ended = str(ev, "ended_by");
	json_t *st = json_object_get(ev, "exit_status"), *sig = json_object_get(ev, "signal");
	json_t *den = json_object_get(ev, "denials"), *warn = json_object_get(ev, "warnings"), *v;
	size_t i;

	if (json_is_integer(st) && (!*ended || strcmp(ended, "exit") == 0))
		fprintf(f, "exit status %" JSON_INTEGER_FORMAT "\n", json_integer_value(st));
	else if (strcmp(ended, "timeout") == 0 || json_is_true(json_object_get(ev, "timed_out")))
		fputs("timed out: the command and everything it started were killed at the call's timeout; pass a "
		      "larger \"timeout\" (seconds) or run it with \"background\": true\n", f);
	else if (strcmp(ended, "cancelled") == 0)
		fputs("cancelled: the command and everything it started were killed\n", f);
	else if (strcmp(ended, "memory") == 0)
		fputs("ended by the policy's memory limit (limits.memory): use less memory or ask for a larger limit\n", f);
	else if (strcmp(ended, "cpu") == 0)
		fputs("ended by the policy's CPU-time limit (limits.cpu)\n", f);
	else if (strcmp(ended, "file_size") == 0)
		fputs("ended by the policy's file-size limit (limits.file_size): a file grew too large\n", f);
	else if (json_is_integer(sig))
		fprintf(f, "killed by signal %" JSON_INTEGER_FORMAT "\n", json_integer_value(sig));
	else if (json_is_integer(st))
		fprintf(f, "exit status %" JSON_INTEGER_FORMAT "\n", json_integer_value(st));
	else
		fprintf(f, "ended (%s)\n", *ended ? ended : "unknown");
	if (json_is_string(json_object_get(ev, "cwd")))
		fprintf(f, "cwd: %s\n", str(ev, "cwd"));
	put_stream(f, ev, "stdout");
	put_stream(f, ev, "stderr");
	if (json_array_size(den)) {
		fputs("denied by the sandbox policy:\n", f);
		json_array_foreach(den, i, v) {
			json_int_t n = json_integer_value(json_object_get(v, "count"));

			fprintf(f, "- %s: %s", str(v, "kind"), str(v, "what"));
			if (n > 1)
				fprintf(f, " (%" JSON_INTEGER_FORMAT " times)", n);
			if (*str(v, "hint"))
				fprintf(f, "; %s", str(v, "hint"));
			fputc('\n', f);
		}
	}
	if (json_array_size(warn)) {
		fputs("warnings:\n", f);
		json_array_foreach(warn, i, v) {
			if (json_is_string(v)) {
				fprintf(f, "- %s\n", json_string_value(v));
			} else {
				char *s = json_dumps(v, JSON_COMPACT);

				fprintf(f, "- %s\n", s ? s : "?");
				free(s);
			}
		}
	}
	v = json_object_get(ev, "leftovers_killed");
	if (json_integer_value(v) > 0)
		fprintf(f, "%" JSON_INTEGER_FORMAT " process(es) still running when the command exited were killed "
			"(start servers with \"background\": true)\n", json_integer_value(v));
}

static void render(FILE *f, const struct tool *t, json_t *ev)
{
	json_t *v, *arr;
	size_t i;

	switch (t->render) {
	case R_RUN:
		render_run(f, ev);
		break;
	case R_READ:
		v = json_object_get(ev, "content");
		fwrite(json_string_value(v) ? json_string_value(v) : "", 1, json_string_length(v), f);
		if (json_is_true(json_object_get(ev, "truncated")))
			fprintf(f, "%s[truncated after %" JSON_INTEGER_FORMAT " lines: more follow; call read_file "
				"again with \"offset\"]\n",
				json_string_length(v) && json_string_value(v)[json_string_length(v) - 1] != '\n' ? "\n" : "",
				json_integer_value(json_object_get(ev, "lines")));
		break;
	case R_WRITE:
		fprintf(f, "wrote %" JSON_INTEGER_FORMAT " bytes to %s\n", json_integer_value(json_object_get(ev, "bytes")),
			str(ev, "path"));
		break;
	case R_EDIT:
		fprintf(f, "replaced %" JSON_INTEGER_FORMAT " occurrence(s) in %s\n",
			json_integer_value(json_object_get(ev, "replacements")), str(ev, "path"));
		break;
	case R_LIST:
		arr = json_object_get(ev, "entries");
		if (!json_array_size(arr))
			fputs("(empty directory)\n", f);
		json_array_foreach(arr, i, v) {
			const char *ty = str(v, "type");

			if (strcmp(ty, "dir") == 0)
				fprintf(f, "%s/\n", str(v, "name"));
			else if (strcmp(ty, "file") == 0)
				fprintf(f, "%s  (%" JSON_INTEGER_FORMAT " bytes)\n", str(v, "name"),
					json_integer_value(json_object_get(v, "size")));
			else
				fprintf(f, "%s  (%s)\n", str(v, "name"), ty);
		}
		if (json_is_true(json_object_get(ev, "truncated")))
			fputs("[truncated: list a subdirectory or a smaller depth]\n", f);
		break;
	case R_GREP:
		arr = json_object_get(ev, "matches");
		if (!json_array_size(arr))
			fputs("no matches\n", f);
		json_array_foreach(arr, i, v)
			fprintf(f, "%s:%" JSON_INTEGER_FORMAT ": %s\n", str(v, "path"),
				json_integer_value(json_object_get(v, "line")), str(v, "text"));
		if (json_is_true(json_object_get(ev, "truncated")))
			fputs("[truncated: narrow the pattern, path or glob]\n", f);
		break;
	case R_JOB_OUTPUT:
		fprintf(f, "%s\n", json_is_true(json_object_get(ev, "running")) ? "running" : "ended");
		put_stream(f, ev, "stdout");
		put_stream(f, ev, "stderr");
		break;
	case R_STATUS: {
		char *s;

		fprintf(f, "cwd: %s\n", str(ev, "cwd"));
		s = json_dumps(json_object_get(ev, "running"), JSON_COMPACT | JSON_ENCODE_ANY);
		fprintf(f, "running calls: %s\n", s ? s : "[]");
		free(s);
		s = json_dumps(json_object_get(ev, "jobs"), JSON_COMPACT | JSON_ENCODE_ANY);
		fprintf(f, "background jobs: %s\n", s ? s : "[]");
		free(s);
		break;
	}
	}
}

/* The tools/call result for a session event ("result", "started" or "error"). */
static json_t *call_result(const struct tool *t, json_int_t sid, json_t *ev)
{
	const char *kind = str(ev, "event");
	json_t *structured, *res;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool is_error = false;

	if (!f)
		return NULL;
	if (strcmp(kind, "error") == 0) {
		json_t *e = json_object_get(ev, "error");

		is_error = true;
		/*
		 * No structuredContent: clients check it against the outputSchema
		 * even on errors (the SDK does); the text carries code and message.
		 */
		fprintf(f, "error %s: %s\n", str(e, "code"), str(e, "message"));
		structured = NULL;
	} else if (strcmp(kind, "started") == 0) {
		fprintf(f, "started in the background as job %" JSON_INTEGER_FORMAT ": read its output with job_output "
			"{\"job\": %" JSON_INTEGER_FORMAT "}, end it with job_kill\n", sid, sid);
		structured = json_pack("{s:I, s:b, s:b}", "job", sid, "background", 1, "running", 1);
	} else {
		structured = json_copy(ev);
		json_object_del(structured, "id");
		json_object_del(structured, "event");
		render(f, t, ev);
	}
	if (fclose(f) != 0 || !buf) {
		free(buf);
		json_decref(structured);
		return NULL;
	}
	/* The text ends without a trailing newline. */
	while (len && buf[len - 1] == '\n')
		len--;
	res = json_pack("{s:[{s:s, s:s%}], s:b}", "content", "type", "text", "text", buf, len, "isError", is_error);
	if (res && structured)
		json_object_set_new(res, "structuredContent", structured);
	else
		json_decref(structured);
	free(buf);
	return res;
}

/* ------------------------------------------------------------ session events */

void corral_mcp_event(struct corral_mcp *m, const char *line, size_t len)
{
	json_t *ev = json_loadb(line, len, 0, NULL), *id;
	const char *kind;
	struct pending **pp, *p = NULL;

	if (!ev) {
		logf_(m, "mcp: the session sent a line that is not JSON");
		return;
	}
	id = json_object_get(ev, "id");
	kind = str(ev, "event");
	if (strcmp(kind, "output") == 0 || !json_is_integer(id)) {
		if (!json_is_integer(id))
			logf_(m, "mcp: a session event without a call's id: %.200s", line);
		json_decref(ev);
		return;
	}
	pthread_mutex_lock(&m->lock);
	for (pp = &m->pending; *pp; pp = &(*pp)->next)
		if ((*pp)->sid == json_integer_value(id)) {
			p = *pp;
			*pp = p->next;
			m->n_pending--;
			break;
		}
	pthread_mutex_unlock(&m->lock);
	if (!p) {
		/* A background job's own end (its call was answered when it started). */
		if (strcmp(kind, "result") == 0)
			logf_(m, "mcp: background job %" JSON_INTEGER_FORMAT " ended (%s)", json_integer_value(id),
			      str(ev, "ended_by"));
		json_decref(ev);
		return;
	}
	if (!p->cancelled)
		send_result(m, p->rpc_id, call_result(p->tool, p->sid, ev));
	json_decref(p->rpc_id);
	free(p);
	json_decref(ev);
}

/* ------------------------------------------------------------ client messages */

static void do_initialize(struct corral_mcp *m, json_t *id, json_t *params)
{
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));
	const char *ver = protocol_versions[0];

	for (size_t i = 0; want && i < sizeof(protocol_versions) / sizeof(protocol_versions[0]); i++)
		if (strcmp(want, protocol_versions[i]) == 0)
			ver = protocol_versions[i];
	send_result(m, id, json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", ver,
				     "capabilities", "tools", "listChanged", 0,
				     "serverInfo", "name", "corral", "title", "corral confined shell and files",
				     "version", corral_version(),
				     "instructions", m->instructions));
}

static void do_tools_call(struct corral_mcp *m, json_t *id, json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	const struct tool *t = NULL;
	struct pending *p, **pp;
	json_t *req;
	char *line;
	int r;

	for (size_t i = 0; name && i < N_TOOLS; i++)
		if (strcmp(tools[i].name, name) == 0)
			t = &tools[i];
	if (!t) {
		send_error(m, id, -32602, "Unknown tool: %.100s (tools/list names them: bash, exec, read_file, "
			   "write_file, edit_file, list_dir, grep, job_output, job_kill, status)", name ? name : "(no name)");
		return;
	}
	if (args && !json_is_object(args) && !json_is_null(args)) {
		send_error(m, id, -32602, "tools/call: \"arguments\" must be an object of %s's arguments", t->name);
		return;
	}
	req = json_is_object(args) ? json_copy(args) : json_object();
	p = calloc(1, sizeof(*p));
	if (!req || !p) {
		json_decref(req);
		free(p);
		send_error(m, id, -32603, "out of memory");
		return;
	}
	/* The session's own fields are ours; "stream" output events have no MCP use here. */
	json_object_del(req, "stream");
	pthread_mutex_lock(&m->lock);
	p->sid = ++m->next_sid;
	p->rpc_id = json_incref(id);
	p->tool = t;
	p->next = m->pending;
	m->pending = p;
	m->n_pending++;
	pthread_mutex_unlock(&m->lock);
	json_object_set_new(req, "id", json_integer(p->sid));
	json_object_set_new(req, "tool", json_string(t->name));
	line = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	/* |p| may be answered and freed inside submit already: only its sid is used after this. */
	{
		json_int_t sid = p->sid;

		r = line ? m->ops.submit(m->ud, line, strlen(line)) : -12;
		free(line);
		if (r >= 0)
			return;
		pthread_mutex_lock(&m->lock);
		for (pp = &m->pending, p = NULL; *pp; pp = &(*pp)->next)
			if ((*pp)->sid == sid) {
				p = *pp;
				*pp = p->next;
				m->n_pending--;
				break;
			}
		pthread_mutex_unlock(&m->lock);
	}
	if (p) {
		send_error(m, id, -32603, "the session could not take the call (%s): the server is shutting down",
			   strerror(-r));
		json_decref(p->rpc_id);
		free(p);
	}
}

static void do_cancelled(struct corral_mcp *m, json_t *params)
{
	json_t *rid = json_object_get(params, "requestId");
	json_int_t sid = 0;
	char buf[32];

	if (!rid)
		return;
	pthread_mutex_lock(&m->lock);
	for (struct pending *p = m->pending; p; p = p->next)
		if (!p->cancelled && json_equal(p->rpc_id, rid)) {
			p->cancelled = true;
			sid = p->sid;
			break;
		}
	pthread_mutex_unlock(&m->lock);
	if (!sid)
		return; /* answered already, or never ours: nothing to do (the spec allows the race) */
	snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, sid);
	m->ops.cancel(m->ud, buf);
}

void corral_mcp_input(struct corral_mcp *m, const char *msg, size_t len)
{
	json_error_t jerr;
	json_t *j, *id, *method, *params;
	const char *meth;

	if (len > CORRAL_MCP_MESSAGE_MAX) {
		send_error(m, NULL, -32600, "message of %zu bytes is larger than the %u-byte limit", len,
			   CORRAL_MCP_MESSAGE_MAX);
		return;
	}
	j = json_loadb(msg, len, 0, &jerr);
	if (!j) {
		send_error(m, NULL, -32700, "Parse error: %s (line %d, column %d)", jerr.text, jerr.line, jerr.column);
		return;
	}
	if (!json_is_object(j)) {
		send_error(m, NULL, -32600, "Invalid Request: %s", json_is_array(j) ? "JSON-RPC batches are not supported "
			   "(send one message per line)" : "a message is a JSON object");
		json_decref(j);
		return;
	}
	id = json_object_get(j, "id");
	method = json_object_get(j, "method");
	params = json_object_get(j, "params");
	if (!method) {
		/* A response to a request of ours: we send none, so there is nothing to match it with. */
		if (!json_object_get(j, "result") && !json_object_get(j, "error"))
			send_error(m, json_is_string(id) || json_is_integer(id) ? id : NULL, -32600,
				   "Invalid Request: no \"method\"");
		json_decref(j);
		return;
	}
	if (id && !json_is_string(id) && !json_is_integer(id)) {
		send_error(m, NULL, -32600, "Invalid Request: \"id\" must be a string or an integer");
		json_decref(j);
		return;
	}
	if (!json_is_string(method) || strcmp(str(j, "jsonrpc"), "2.0") != 0 ||
	    (params && !json_is_object(params) && !json_is_array(params))) {
		if (id)
			send_error(m, id, -32600, "Invalid Request: needs \"jsonrpc\": \"2.0\", a string \"method\" "
				   "and \"params\" an object");
		json_decref(j);
		return;
	}
	meth = json_string_value(method);
	if (!json_is_object(params))
		params = NULL;
	if (!id) {
		/* Notifications get no answer, whatever they are. */
		if (strcmp(meth, "notifications/cancelled") == 0)
			do_cancelled(m, params);
		json_decref(j);
		return;
	}
	if (strcmp(meth, "initialize") == 0)
		do_initialize(m, id, params);
	else if (strcmp(meth, "ping") == 0)
		send_result(m, id, json_object());
	else if (strcmp(meth, "tools/list") == 0)
		send_result(m, id, json_pack("{s:O}", "tools", m->tool_list));
	else if (strcmp(meth, "tools/call") == 0)
		do_tools_call(m, id, params);
	else
		send_error(m, id, -32601, "Method not found: %.100s (this server offers initialize, ping, tools/list, "
			   "tools/call)", meth);
	json_decref(j);
}

/* ------------------------------------------------------------ lifetime */

static json_t *build_tool_list(void)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < N_TOOLS; i++) {
		json_error_t e;
		json_t *in = json_loads(tools[i].input, 0, &e), *out = json_loads(tools[i].output, 0, &e);
		json_t *t = in && out ? json_pack("{s:s, s:s, s:s, s:o, s:o, s:{s:b, s:b}}", "name", tools[i].name,
						  "title", tools[i].title, "description", tools[i].description,
						  "inputSchema", in, "outputSchema", out, "annotations",
						  "readOnlyHint", tools[i].read_only, "openWorldHint", 0)
				    : NULL;

		if (!t) {
			if (!in || !out)
				fprintf(stderr, "corral mcp: tool %s: schema does not parse: %s\n", tools[i].name, e.text);
			json_decref(arr);
			return NULL;
		}
		json_array_append_new(arr, t);
	}
	return arr;
}

struct corral_mcp *corral_mcp_new(const struct corral_mcp_ops *ops, void *userdata, const char *instructions)
{
	struct corral_mcp *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->ops = *ops;
	m->ud = userdata;
	m->instructions = strdup(instructions ? instructions :
				 "Tools of a confined session: commands and file tools act only inside the project "
				 "root, under a sandbox policy. A refusal is reported with what was denied and a hint.");
	m->tool_list = build_tool_list();
	pthread_mutex_init(&m->lock, NULL);
	if (!m->instructions || !m->tool_list) {
		corral_mcp_free(m);
		return NULL;
	}
	return m;
}

unsigned corral_mcp_pending(struct corral_mcp *m)
{
	unsigned n;

	pthread_mutex_lock(&m->lock);
	n = m->n_pending;
	pthread_mutex_unlock(&m->lock);
	return n;
}

void corral_mcp_free(struct corral_mcp *m)
{
	if (!m)
		return;
	while (m->pending) {
		struct pending *p = m->pending;

		m->pending = p->next;
		json_decref(p->rpc_id);
		free(p);
	}
	pthread_mutex_destroy(&m->lock);
	json_decref(m->tool_list);
	free(m->instructions);
	free(m);
}
