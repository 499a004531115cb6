/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Error values shared by every part of libcorral. */
#include <stdarg.h>
#include <stdio.h>

#include "corral-config.h"
#include "internal/util.h"

_public_ const char *corral_version(void)
{
	return CORRAL_VERSION;
}

_public_ const char *corral_error_code_name(int code)
{
	static const char *const names[] = {
		[CORRAL_OK] = "ok",
		[CORRAL_E_USAGE] = "usage",
		[CORRAL_E_POLICY] = "policy",
		[CORRAL_E_UNENFORCEABLE] = "unenforceable",
		[CORRAL_E_SETUP] = "setup",
		[CORRAL_E_NOT_FOUND] = "not_found",
		[CORRAL_E_ESCAPE] = "escape",
		[CORRAL_E_REFUSED] = "refused",
		[CORRAL_E_UNSUPPORTED] = "unsupported",
		[CORRAL_E_PROVIDER] = "provider",
		[CORRAL_E_INTERNAL] = "internal",
		[CORRAL_E_NOT_IMPLEMENTED] = "not_implemented",
	};

	if (code < 0 || (size_t)code >= ARRAY_SIZE(names) || !names[code])
		return "internal";
	return names[code];
}

int corral_err(struct corral_error *err, int code, int sys_errno, const char *fmt, ...)
{
	if (err) {
		va_list ap;

		err->code = code;
		err->sys_errno = sys_errno;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof(err->message), fmt, ap);
		va_end(ap);
	}
	return sys_errno > 0 ? -sys_errno : -EINVAL;
}
