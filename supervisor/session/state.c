/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The shell state a bash call leaves for the next: the text its EXIT trap
 * writes (the working directory, then `export -p`), decoded on the host.
 * The command controls that text: this parser is pure and fuzzed
 * (tests/fuzz/fuzz-session-state.c).
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "supervisor/session/state.h"

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* See state.h. Each `goto next` skips the line, leaving |out| as it was. */
size_t corral_state_decode_exports(const char *t, size_t len, char *out)
{
	const char *end = t + len;
	size_t o = 0;

	while (t < end) {
		const char *nl = memchr(t, '\n', (size_t)(end - t));
		size_t start = o;
		bool ok = false;

		if ((size_t)(end - t) > 9 && strncmp(t, "declare -", 9) == 0) {
			t += 9;
			while (t < end && ((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z')))
				t++;
		} else if ((size_t)(end - t) > 7 && strncmp(t, "export ", 7) == 0) {
			t += 6;
		} else {
			goto next;
		}
		if (t >= end || *t != ' ')
			goto next;
		t++;
		if (t >= end || !((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') || *t == '_'))
			goto next;
		while (t < end && ((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') || (*t >= '0' && *t <= '9') || *t == '_'))
			out[o++] = *t++;
		if (t >= end || *t != '=')
			goto next; /* exported without a value: not in the environment */
		out[o++] = *t++;
		if (t < end && *t == '"') {
			for (t++; t < end && *t != '"'; t++) {
				if (*t == '\\' && t + 1 < end && strchr("\\\"$`", t[1]))
					t++;
				out[o++] = *t;
			}
			ok = t < end;
			t++;
		} else if (t + 1 < end && t[0] == '$' && t[1] == '\'') {
			for (t += 2; t < end && *t != '\''; t++) {
				int v = 0, k;

				if (*t != '\\' || t + 1 >= end) {
					out[o++] = *t;
					continue;
				}
				t++;
				switch (*t) {
				case 'a': out[o++] = '\a'; break;
				case 'b': out[o++] = '\b'; break;
				case 'e': case 'E': out[o++] = 0x1b; break;
				case 'f': out[o++] = '\f'; break;
				case 'n': out[o++] = '\n'; break;
				case 'r': out[o++] = '\r'; break;
				case 't': out[o++] = '\t'; break;
				case 'v': out[o++] = '\v'; break;
				case 'c':
					if (t + 1 < end)
						out[o++] = (char)(*++t & 0x1f);
					break;
				case 'x':
					for (k = 0; k < 2 && t + 1 < end && hexval(t[1]) >= 0; k++)
						v = v * 16 + hexval(*++t);
					out[o++] = (char)v;
					break;
				case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7':
					v = *t - '0';
					for (k = 1; k < 3 && t + 1 < end && t[1] >= '0' && t[1] <= '7'; k++)
						v = v * 8 + (*++t - '0');
					out[o++] = (char)v;
					break;
				default: /* \\ \' \" \? and anything else: the character itself */
					out[o++] = *t;
				}
			}
			ok = t < end;
			t++;
		}
		/* A NUL in a value cannot be in an environment: the entry is dropped. */
		if (ok && t <= end && (t == end || *t == '\n') && !memchr(out + start, 0, o - start)) {
			out[o++] = 0;
			t = t < end ? t + 1 : t;
			continue;
		}
next:
		o = start;
		t = nl ? nl + 1 : end;
	}
	return o;
}
