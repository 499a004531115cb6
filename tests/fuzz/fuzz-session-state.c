/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The session's decoder of the shell state a bash call leaves
 * (supervisor/session/state.c), whose text the confined command controls:
 * the output fits in len + 1 bytes, and is a run of NUL-terminated
 * NAME=VALUE entries, NAME a shell identifier. Never a crash, a read or
 * write out of bounds, or a hang (ASan).
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/session/state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int ident(char c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* exactly the room the contract promises, so ASan sees one byte too many */
	char *in = malloc(size ? size : 1), *out = malloc(size + 1);
	size_t n, i = 0;

	assert(in && out);
	memcpy(in, data, size);
	n = corral_state_decode_exports(in, size, out);
	assert(n <= size + 1);
	while (i < n) {
		size_t k = i;

		assert(ident(out[k], 1));
		while (k < n && out[k] != '=') {
			assert(ident(out[k], 0));
			k++;
		}
		assert(k < n && out[k] == '=');
		k = i + strnlen(out + i, n - i);
		assert(k < n); /* NUL-terminated inside what was used */
		i = k + 1;
	}
	free(in);
	free(out);
	return 0;
}
