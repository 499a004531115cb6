/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small helpers shared by every part of libcorral. Not installed. */
#ifndef CORRAL_INTERNAL_UTIL_H
#define CORRAL_INTERNAL_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral.h"
#include "internal/errtext.h"

#define _public_ __attribute__((visibility("default")))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define ARRAY_SIZE(x) (sizeof(x) / sizeof((x)[0]))

static inline void freep(void *p) { free(*(void **)p); }
static inline int safe_close(int fd)
{
	if (fd >= 0) {
		int saved = errno;
		close(fd); /* never retried on EINTR: the fd is gone either way on Linux */
		errno = saved;
	}
	return -1;
}
static inline void closep(int *fd) { safe_close(*fd); }
static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

#define TAKE_PTR(p) ({ __typeof__(p) _t = (p); (p) = NULL; _t; })
#define TAKE_FD(fd) ({ int _t = (fd); (fd) = -1; _t; })

/*
 * Fill |err| (when non-NULL) with |code|, |sys_errno| and a formatted
 * message. Returns -|sys_errno| (or -EINVAL when sys_errno is 0) so callers
 * can write `return corral_err(err, CORRAL_E_POLICY, 0, "...")`.
 */
_printf_(4, 5) int corral_err(struct corral_error *err, int code, int sys_errno,
			      const char *fmt, ...);

#endif
