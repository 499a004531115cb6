/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef CORRAL_SUPERVISOR_RESULT_H
#define CORRAL_SUPERVISOR_RESULT_H

#include <stddef.h>

#include "corral.h"

/*
 * The one stderr line (with its newline) for a command that could not be
 * executed (res->exec_errno set), as a shell words it: "corral: NAME:
 * command not found", the missing interpreter named, or strerror.
 * Returns its length, as snprintf.
 */
int corral_exec_error_line(const struct corral_result *res, const char *name, char *buf, size_t len);

#endif
