/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Text from the command or the host as a JSON string (jansson takes only valid UTF-8). */
#ifndef CORRAL_INTERNAL_JSON_TEXT_H
#define CORRAL_INTERNAL_JSON_TEXT_H

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "internal/utf8.h"

/* |len| bytes of |s| (NULL: "") as a JSON string, invalid UTF-8 replaced by U+FFFD; NULL on ENOMEM. */
static inline json_t *corral_json_text(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	json_t *j;
	char *buf;
	size_t o = 0;

	j = json_stringn(s ? s : "", s ? len : 0);
	if (j || !s)
		return j;
	buf = malloc(len * 3 + 1);
	if (!buf)
		return NULL;
	for (size_t i = 0; i < len;) {
		size_t bad;
		int n = corral_utf8_seq(u + i, len - i, &bad);

		if (n > 0) {
			memcpy(buf + o, s + i, (size_t)n);
			o += (size_t)n;
			i += (size_t)n;
		} else {
			memcpy(buf + o, "\xEF\xBF\xBD", 3);
			o += 3;
			i += bad ? bad : 1;
		}
	}
	j = json_stringn(buf, o);
	free(buf);
	return j;
}

#endif
