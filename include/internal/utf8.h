/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* UTF-8 validation for text that must be UTF-8: JSON results and messages. */
#ifndef CORRAL_INTERNAL_UTF8_H
#define CORRAL_INTERNAL_UTF8_H

#include <stddef.h>

/*
 * Length of the valid UTF-8 sequence at |s| (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF); 0 when invalid, with *|bad| the
 * bytes one U+FFFD stands for (the maximal subpart: the lead byte and the
 * continuation bytes that were still valid, Unicode 3.9 "U+FFFD
 * Substitution of Maximal Subparts", as Python and browsers decode); or -1
 * when |s| is a valid but incomplete prefix cut by the end of the buffer
 * (|avail| bytes), with *|bad| its length.
 */
static inline int corral_utf8_seq(const unsigned char *s, size_t avail, size_t *bad)
{
	unsigned char c = s[0];
	int need;
	unsigned char lo = 0x80, hi = 0xBF;

	*bad = 1;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		need = 1;
	else if (c >= 0xE0 && c <= 0xEF) {
		need = 2;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		need = 3;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else
		return 0;
	for (int i = 1; i <= need; i++) {
		*bad = (size_t)i;
		if ((size_t)i >= avail)
			return -1;
		if (s[i] < lo || s[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xBF;
	}
	return need + 1;
}

#endif
