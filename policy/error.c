/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Error values shared by every part of libcorral. */
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "corral-config.h"
#include "internal/utf8.h"
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

_public_ char *corral_error_json(int code, const char *message)
{
	const unsigned char *in = (const unsigned char *)(message ? message : "");
	size_t avail = strlen((const char *)in), o = 0;
	char *text = malloc(3 * avail + 1), *s;
	json_t *obj;

	if (!text)
		return NULL;
	/* JSON text is UTF-8 (jansson refuses anything else); messages quote paths, which may hold any bytes. */
	while (avail) {
		size_t bad;
		int n = corral_utf8_seq(in, avail, &bad);
		const char *src = n > 0 ? (const char *)in : "\xEF\xBF\xBD";
		size_t len = n > 0 ? (size_t)n : 3, step = n > 0 ? (size_t)n : bad;

		memcpy(text + o, src, len);
		o += len;
		in += step;
		avail -= step;
	}
	text[o] = '\0';
	obj = json_pack("{s:{s:s,s:s}}", "error", "code", corral_error_code_name(code), "message", text);
	free(text);
	s = obj ? json_dumps(obj, 0) : NULL;
	json_decref(obj);
	return s;
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
