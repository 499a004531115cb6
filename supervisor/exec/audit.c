/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The audit log's line: built with jansson, appended with one write(2). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal/json-text.h"
#include "internal/sha256.h"
#include "internal/timefmt.h"
#include "internal/utf8.h"
#include "internal/util.h"
#include "supervisor/exec/audit.h"

/* Is |child| |parent| itself or beneath it (separator boundary)? Both canonical. */
static bool covers(const char *parent, const char *child)
{
	size_t n = strlen(parent);

	while (n > 0 && parent[n - 1] == '/')
		n--;
	return strncmp(child, parent, n) == 0 && (child[n] == '\0' || child[n] == '/');
}

int corral_audit_open(const char *path, const char *key, const char *root, char *const *rw, size_t n_rw,
		      struct corral_error *err)
{
	_cleanup_free_ char *dir = NULL, *canon = NULL;
	_cleanup_close_ int dfd = -1;
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	struct stat st;
	int fd;

	if (!slash || !*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return corral_err(err, CORRAL_E_POLICY, EINVAL, "%s %s: expected an absolute path naming a file", key, path);
	dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	if (!dir)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	canon = realpath(dir, NULL);
	if (!canon)
		return corral_err(err, CORRAL_E_SETUP, errno, "%s %s: %s: %s", key, path, dir, corral_strerror(errno));
	for (size_t i = 0; i <= n_rw; i++) {
		_cleanup_free_ char *real = NULL;
		const char *p = i < n_rw ? rw[i] : root;

		if (!p)
			continue;
		real = realpath(p, NULL);
		if (covers(p, canon) || (real && covers(real, canon)))
			return corral_err(err, CORRAL_E_POLICY, EPERM,
					  "%s %s: lies in %s, which the command may write (it could tamper with the log or "
					  "plant a symlink there); put the audit log outside the root and the read_write paths",
					  key, path, p);
	}
	dfd = open(canon, O_PATH | O_DIRECTORY | O_CLOEXEC);
	fd = dfd < 0 ? -1 : openat(dfd, base, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, 0600);
	if (fd < 0)
		return corral_err(err, CORRAL_E_SETUP, errno, "%s %s: %s (the audit log must be a file corral may append to)",
				  key, path, errno == ELOOP ? "a symlink (not followed)" : corral_strerror(errno));
	/* A FIFO or a terminal would not keep lines whole, nor be a log. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		safe_close(fd);
		return corral_err(err, CORRAL_E_SETUP, EINVAL, "%s %s: not a regular file", key, path);
	}
	return fd;
}

int corral_audit_policy_sha256(const struct corral_policy *p, char hex[65])
{
	char *text = corral_policy_dump(p);

	if (!text)
		return -ENOMEM;
	corral_sha256_hex(text, strlen(text), hex);
	free(text);
	return 0;
}

/* |s| as a JSON string (null for NULL), invalid UTF-8 replaced by U+FFFD. */
static json_t *text(const char *s)
{
	return s ? corral_json_text(s, strlen(s)) : json_null();
}

/* Milliseconds rounded to microseconds, printed without binary noise (JSON_REAL_PRECISION). */
static json_t *ms(double v)
{
	if (!(v >= 0) || v > 1e15)
		v = 0;
	return json_real(round(v * 1000) / 1000);
}

static json_t *denials(const struct corral_result *res)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < res->n_denials; i++) {
		const struct corral_denial *d = &res->denials[i];

		if (json_array_append_new(a, json_pack("{s:o, s:o, s:I, s:o, s:o}", "kind", text(d->kind),
						       "what", text(d->what), "count", (json_int_t)d->count,
						       "source", text(d->source), "hint", text(d->hint))) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* The call's command: "argv", "command" or (a file tool) "path", as |key|. */
static json_t *command_of(const struct corral_audit_call *call, const char **key)
{
	json_t *cmd;

	if (call->argv) {
		*key = "argv";
		cmd = json_array();
		for (const char *const *a = call->argv; cmd && *a; a++)
			if (json_array_append_new(cmd, text(*a)) < 0) {
				json_decref(cmd);
				return NULL;
			}
		return cmd;
	}
	if (!call->command && call->path) {
		*key = "path";
		return text(call->path);
	}
	*key = "command";
	return text(call->command ? call->command : "");
}

/* The result's fields: from |res| when it ran, else null (|host_tool|: ended_by "exit"). */
static int result_fields(json_t *o, const struct corral_result *res, bool host_tool)
{
	static const char *const nulls[] = { "exit_status", "signal", "ended_by", "cpu_ms", "max_rss_kb", "denials",
					     "leftovers_killed" };

	if (res)
		return json_object_set_new(o, "exit_status",
					   res->exited && !res->timed_out ? json_integer(res->exit_status)
									  : json_null()) < 0 ||
		       json_object_set_new(o, "signal", res->signal > 0 ? json_integer(res->signal) : json_null()) < 0 ||
		       json_object_set_new(o, "ended_by", text(res->ended_by)) < 0 ||
		       json_object_set_new(o, "cpu_ms", ms(res->cpu_ms)) < 0 ||
		       json_object_set_new(o, "max_rss_kb", json_integer(res->max_rss_kb)) < 0 ||
		       json_object_set_new(o, "denials", denials(res)) < 0 ||
		       json_object_set_new(o, "leftovers_killed", json_integer((json_int_t)res->leftovers_killed)) < 0
		       ? -ENOMEM : 0;
	/* Nothing ran: the result's fields are null (an error says why). */
	for (size_t i = 0; i < ARRAY_SIZE(nulls); i++)
		if (json_object_set_new(o, nulls[i], host_tool && i == 2 ? json_string("exit") : json_null()) < 0)
			return -ENOMEM;
	return 0;
}

static int error_field(json_t *o, const struct corral_audit_call *call, const struct corral_error *cerr)
{
	const char *code = call->error_code ? call->error_code
			   : corral_error_code_name(cerr && cerr->code ? cerr->code : CORRAL_E_INTERNAL);
	const char *msg = call->error_code ? call->error_message
			  : cerr && cerr->message[0] ? cerr->message : NULL;

	return json_object_set_new(o, "error", json_pack("{s:s, s:o}", "code", code, "message",
							 text(msg ? msg : "unknown error")));
}

/*
 * A session's id or tag, given as JSON text: the value itself. The request
 * was read with JSON_ALLOW_NUL, so its strings may hold "\u0000"; a text
 * that does not load again is kept as a string: the line is never lost.
 */
static json_t *json_value(const char *json)
{
	json_t *v = json_loads(json, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);

	return v ? v : text(json);
}

int corral_audit_write(int fd, const char *policy_sha256, const char *provider, const char *network,
		       const struct corral_audit_call *call, const struct corral_result *res, int rc,
		       const struct corral_error *cerr)
{
	struct timespec now, start;
	char ended_at[32], started_at[32] = "";
	bool ran = rc == 0 && res, failed = rc != 0 || call->error_code;
	int64_t start_ms = call->started_at_ms ? call->started_at_ms : ran ? res->started_at_ms : 0;
	const char *run_id = call->run_id ? call->run_id : ran && res->run_id[0] ? res->run_id : NULL;
	const char *cmd_key;
	json_t *o, *cmd;
	char *line;
	size_t len;
	ssize_t w;

	clock_gettime(CLOCK_REALTIME, &now);
	corral_format_rfc3339(&now, ended_at, sizeof(ended_at));
	if (start_ms) {
		start.tv_sec = (time_t)(start_ms / 1000);
		start.tv_nsec = (long)(start_ms % 1000) * 1000000;
		corral_format_rfc3339(&start, started_at, sizeof(started_at));
	}
	cmd = command_of(call, &cmd_key);
	/* "o" steals every reference, also when the pack fails. */
	o = json_pack("{s:o, s:o, s:o, s:s, s:o, s:o, s:s, s:s, s:s, s:o, s:s}",
		      "run_id", text(run_id),
		      "session_id", text(call->session_id),
		      "tag", call->tag_json ? json_value(call->tag_json) : text(call->tag),
		      "tool", call->tool ? call->tool : "run",
		      cmd_key, cmd,
		      "cwd", text(call->cwd ? call->cwd : "."),
		      "policy_sha256", policy_sha256,
		      "provider", provider ? provider : "local",
		      "network", network ? network : "none",
		      "started_at", started_at[0] ? text(started_at) : json_null(),
		      "ended_at", ended_at);
	if (!o)
		return -ENOMEM;
	if ((call->id_json && json_object_set_new(o, "id", json_value(call->id_json)) < 0) ||
	    result_fields(o, ran ? res : NULL, !failed) < 0 || (failed && error_field(o, call, cerr) < 0)) {
		json_decref(o);
		return -ENOMEM;
	}
	line = json_dumps(o, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	json_decref(o);
	if (!line)
		return -ENOMEM;
	len = strlen(line);
	line[len++] = '\n'; /* json_dumps' NUL becomes the newline: the line goes out in one write */
	do
		w = write(fd, line, len);
	while (w < 0 && errno == EINTR);
	free(line);
	if (w < 0)
		return -errno;
	return (size_t)w == len ? 0 : -EIO;
}
