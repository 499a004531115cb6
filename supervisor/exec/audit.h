/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The audit log (DESIGN.md "Audit log"): one JSON line per run or session
 * call, appended whole (O_APPEND, one write), so concurrent runs and
 * processes may share one file.
 */
#ifndef CORRAL_AUDIT_H
#define CORRAL_AUDIT_H

#include <stdint.h>

#include "corral.h"

/* What was asked for: the call's side of the line. */
struct corral_audit_call {
	const char *session_id;     /* NULL: null (a plain run) */
	const char *tag;            /* the caller's correlation id, or NULL */
	const char *tool;           /* "run", or the session tool */
	const char *const *argv;    /* the command, or NULL ... */
	const char *command;        /* ... the -c string (then "command" instead of "argv") */
	const char *cwd;            /* as asked, relative to the root; NULL: "." */
	/* A session call's own (all optional; zero for a plain run): */
	const char *path;           /* a file tool's path (then "path" instead of argv/command) */
	const char *id_json;        /* the request's id as JSON text: the line's "id" */
	const char *tag_json;       /* the request's tag as JSON text (any JSON value), instead of |tag| */
	const char *run_id;         /* the call's run id, also when nothing ran (else the result's) */
	int64_t started_at_ms;      /* when the call began, also when nothing ran (else the result's) */
	const char *error_code;     /* a session error code ("denied", "escape"...), else |cerr|'s */
	const char *error_message;
};

/*
 * Open |path| for appending (created 0600): an O_CLOEXEC fd, or -errno
 * with |err| naming |key|. Its directory is resolved first (realpath) and
 * opened by that canonical name, the file itself then opened in it
 * without following a symlink; a directory that is, or lies under, |root|
 * or one of the |n_rw| paths |rw| (canonical when they resolve) is
 * refused: the command could plant a symlink there and have corral
 * append, with corral's rights, to a file of its choosing.
 */
int corral_audit_open(const char *path, const char *key, const char *root, char *const *rw, size_t n_rw,
		      struct corral_error *err);

/* SHA-256 of |p|'s canonical form (corral_policy_dump) as 64 hex digits; -ENOMEM. */
int corral_audit_policy_sha256(const struct corral_policy *p, char hex[65]);

/*
 * Append the line for one call: |res| when it ran (|rc| 0), else |cerr|
 * (corral's own error, or the call's error_code) with the result's fields
 * null. |rc| 0 without |res| is a host-side tool that started no process:
 * ended_by "exit", the other result fields null. Returns 0, or
 * -errno when the line could not be written whole (-EIO for a short write).
 */
int corral_audit_write(int fd, const char *policy_sha256, const char *provider, const char *network,
		       const struct corral_audit_call *call, const struct corral_result *res, int rc,
		       const struct corral_error *cerr);

#endif
