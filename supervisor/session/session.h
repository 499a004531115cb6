/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Agent sessions: internal pieces shared by session.c and tools.c. */
#ifndef CORRAL_SESSION_H
#define CORRAL_SESSION_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "corral.h"
#include "internal/json-text.h"

/* Longest request line accepted (write_file content travels in it). */
#define CORRAL_SESSION_LINE_MAX (16u << 20)

/* What the file tools need of the session. */
struct corral_tools_ctx {
	int root_fd;
	const char *root;       /* realpath of the root */
	const char *cwd;        /* the session's working directory, relative to the root ("." for it) */
	bool chown_files;       /* corral runs as root: created files go to uid/gid */
	uid_t uid;
	gid_t gid;
	const volatile bool *cancelled;
};

/*
 * Each tool fills |out| (the result event's fields) and returns 0, or
 * returns -1 with |code| (a static string) and |msg| set.
 */
struct corral_tool_err {
	const char *code;
	char msg[512];
};

/* Fill |e| with |code| and the formatted message; returns -1. */
int corral_tool_fail(struct corral_tool_err *e, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

int corral_tool_read_file(const struct corral_tools_ctx *c, json_t *req, json_t *out, struct corral_tool_err *e);
int corral_tool_write_file(const struct corral_tools_ctx *c, json_t *req, json_t *out, struct corral_tool_err *e);
int corral_tool_edit_file(const struct corral_tools_ctx *c, json_t *req, json_t *out, struct corral_tool_err *e);
int corral_tool_list_dir(const struct corral_tools_ctx *c, json_t *req, json_t *out, struct corral_tool_err *e);
int corral_tool_grep(const struct corral_tools_ctx *c, json_t *req, json_t *out, struct corral_tool_err *e);

enum corral_argtype { A_STR, A_INT, A_NUM, A_BOOL, A_ENV, A_ARGV, A_ID };

struct argspec {
	const char *name;
	enum corral_argtype type;
	bool required;
};

struct corral_tool_spec {
	const char *name;
	bool command;  /* runs in the sandbox */
	bool threaded; /* its own thread (else answered at once) */
	struct argspec args[10];
};

extern const struct corral_tool_spec corral_tools[];
extern const size_t corral_n_tools;

/* A validated request: |id| and |tag| point into |req| (NULL when absent or, for id, unusable). */
struct corral_request {
	json_t *req;
	json_t *id;
	json_t *tag;
	const struct corral_tool_spec *tool;
};

/*
 * Parse and validate one request line (request.c, pure). 0, or -1 with
 * |e| (code "too_large", "bad_json", "bad_request", "unknown_tool") and
 * whatever id and tag could be read. Clear |r| either way.
 */
int corral_request_parse(const char *line, size_t len, struct corral_request *r, struct corral_tool_err *e);
void corral_request_clear(struct corral_request *r);


#endif
