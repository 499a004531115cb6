/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef CORRAL_SUPERVISOR_RESULT_H
#define CORRAL_SUPERVISOR_RESULT_H

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "corral.h"
#include "internal/errtext.h"

/*
 * The smallest |sz| a caller's struct corral_result may have: this
 * version's fields, up to n_warnings. Fields added later are written only
 * where |sz| covers them (CORRAL_RESULT_HAS).
 */
#define CORRAL_RESULT_SZ_MIN (offsetof(struct corral_result, n_warnings) + sizeof(size_t))
#define CORRAL_RESULT_HAS(res, field) \
	((res)->sz >= offsetof(struct corral_result, field) + sizeof((res)->field))

/* Zero every field of |res| the caller's |sz| covers, but |sz|. */
void corral_result_reset(struct corral_result *res);
/* corral_result_json's object with no space after its separators, as a session's events are written. */
char *corral_result_json_compact(const struct corral_result *res);

/*
 * The one stderr line (with its newline) for a command that could not be
 * executed (res->exec_errno set), as a shell words it: "corral: NAME:
 * command not found", the missing interpreter named, or strerror.
 * Returns its length, as snprintf. Inline: the engine (in libcorral) and
 * the CLI (which may link libcorral.so, where this is not exported) both
 * print it.
 */
static inline int corral_exec_error_line(const struct corral_result *res, const char *name, char *buf,
					 size_t len)
{
	size_t il = res->exec_interp ? strlen(res->exec_interp) : 0;

	if (il && res->exec_interp[il - 1] == '\r')
		return snprintf(buf, len,
				"corral: %s: cannot execute: interpreter %.*s\\r not found: the script has "
				"Windows (CRLF) line endings\n", name, (int)(il - 1), res->exec_interp);
	if (res->exec_errno == EACCES && il)
		return snprintf(buf, len, "corral: %s: cannot execute: interpreter %s: Permission denied\n",
				name, res->exec_interp);
	if (res->exec_errno == ENOENT && il)
		return snprintf(buf, len, "corral: %s: cannot execute: interpreter %s not found\n", name,
				res->exec_interp);
	if (res->exec_errno == ENOENT && res->exec_interp)
		return snprintf(buf, len,
				"corral: %s: cannot execute: a file it needs (its interpreter or dynamic loader) "
				"was not found\n", name);
	return snprintf(buf, len, "corral: %s: %s\n", name,
			res->exec_errno == ENOENT ? "command not found" : corral_strerror(res->exec_errno));
}

#endif
