/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A captured stream's head + tail clipping (supervisor/exec/stream.c),
 * in-process: what is kept, the marker and its count, whole UTF-8
 * characters at both cuts, the total, and memory bounded by the cap
 * however much is written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "supervisor/exec/stream.h"

/* Feed |in| in pieces of |chunk| bytes through span/commit, as read(2) would. */
static void feed(struct corral_stream *s, const char *in, size_t len, size_t chunk)
{
	while (len) {
		size_t n = len < chunk ? len : chunk;
		char *p = corral_stream_span(s, &n);

		if (p) {
			memcpy(p, in, n);
			corral_stream_commit(s, n);
		} else {
			corral_stream_skip(s, n);
		}
		in += n;
		len -= n;
	}
}

static void test_table(void **state)
{
	static const struct {
		const char *name;
		const char *in;
		size_t cap;
		const char *want;
		bool clipped;
	} cases[] = {
		{ "empty", "", 10, "", false },
		{ "fits", "hello", 10, "hello", false },
		{ "exactly the cap", "0123456789", 10, "0123456789", false },
		{ "one over: head 5, tail 5", "0123456789X", 10, "01234\n[\xE2\x80\xA6 1 bytes omitted \xE2\x80\xA6]\n6789X", true },
		{ "head ends a line: no extra newline", "ab\ncdefghij\nkl", 6, "ab\n[\xE2\x80\xA6 8 bytes omitted \xE2\x80\xA6]\n\nkl", true },
		{ "odd cap: tail gets the extra byte", "abcdefghij", 5, "ab\n[\xE2\x80\xA6 5 bytes omitted \xE2\x80\xA6]\nhij", true },
		/* é is 2 bytes: the head would end inside it, the tail start inside another. */
		{ "no character cut at the head", "a\xC3\xA9" "xxxxxxxx" "\xC3\xA9z", 4, "a\n[\xE2\x80\xA6 12 bytes omitted \xE2\x80\xA6]\nz", true },
		{ "whole characters kept", "\xC3\xA9\xC3\xA9" "xxxxxx" "\xC3\xA9\xC3\xA9", 8,
		  "\xC3\xA9\xC3\xA9\n[\xE2\x80\xA6 6 bytes omitted \xE2\x80\xA6]\n\xC3\xA9\xC3\xA9", true },
		/* A 4-byte character (U+1F600) cut at 3 bytes in the head. */
		{ "4-byte character", "ab\xF0\x9F\x98\x80" "cdefgh", 10, "ab\n[\xE2\x80\xA6 5 bytes omitted \xE2\x80\xA6]\ndefgh", true },
		/* Invalid bytes are the command's: kept as they are (the JSON replaces them). */
		{ "invalid byte at the cut kept", "ab\xFF" "cdefgh", 6, "ab\xFF\n[\xE2\x80\xA6 3 bytes omitted \xE2\x80\xA6]\nfgh", true },
		{ "cap 1: tail only", "abc", 1, "[\xE2\x80\xA6 2 bytes omitted \xE2\x80\xA6]\nc", true },
		{ "cap 0: all omitted", "abc", 0, "[\xE2\x80\xA6 3 bytes omitted \xE2\x80\xA6]\n", true },
	};
	static const size_t chunks[] = { 1, 2, 3, 7, 65536 };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			struct corral_stream s;
			char *buf = NULL;
			size_t len = 0;
			bool clipped = !cases[i].clipped;
			uint64_t total = 0;

			corral_stream_init(&s, -1, cases[i].cap);
			feed(&s, cases[i].in, strlen(cases[i].in), chunks[c]);
			corral_stream_finish(&s, &buf, &len, &clipped, &total);
			if (!buf || strcmp(buf, cases[i].want) != 0 || len != strlen(buf) ||
			    clipped != cases[i].clipped || total != strlen(cases[i].in))
				fail_msg("%s (chunk %zu): got [%s] len %zu clipped %d total %llu, want [%s] clipped %d",
					 cases[i].name, chunks[c], buf ? buf : "(null)", len, clipped,
					 (unsigned long long)total, cases[i].want, cases[i].clipped);
			free(buf);
			corral_stream_free(&s);
		}
}

/* 64 MiB of numbered lines through a 64 KiB cap: the first and last lines, exact count, bounded memory. */
static void test_large(void **state)
{
	struct corral_stream s;
	char line[32], *buf = NULL, want_tail[64];
	size_t len, cap = 65536, peak = 0;
	uint64_t total = 0, written = 0;
	unsigned long last = 0;
	bool clipped = false;

	(void)state;
	corral_stream_init(&s, -1, cap);
	for (unsigned long i = 0; written < 64ull << 20; i++) {
		int n = snprintf(line, sizeof(line), "line %08lu\n", i);

		feed(&s, line, (size_t)n, 4096);
		written += (uint64_t)n;
		last = i;
		if (s.head_alloc + s.tail_alloc > peak)
			peak = s.head_alloc + s.tail_alloc;
	}
	assert_true(peak <= cap + 1);
	corral_stream_finish(&s, &buf, &len, &clipped, &total);
	assert_non_null(buf);
	assert_true(clipped);
	assert_int_equal(total, written);
	assert_memory_equal(buf, "line 00000000\nline 00000001\n", 28);
	snprintf(want_tail, sizeof(want_tail), "line %08lu\n", last);
	assert_true(len > strlen(want_tail));
	assert_string_equal(buf + len - strlen(want_tail), want_tail);
	assert_non_null(strstr(buf, " bytes omitted \xE2\x80\xA6]\n"));
	/* head + tail = the cap; the marker comes on top. */
	assert_true(len > cap && len < cap + 64);
	free(buf);
	corral_stream_free(&s);
}

/* No cap (SIZE_MAX): everything kept, never clipped. */
static void test_no_cap(void **state)
{
	struct corral_stream s;
	static char in[300000];
	char *buf = NULL;
	size_t len = 0;
	uint64_t total = 0;
	bool clipped = true;

	(void)state;
	memset(in, 'a', sizeof(in));
	corral_stream_init(&s, -1, SIZE_MAX);
	feed(&s, in, sizeof(in), 65536);
	corral_stream_finish(&s, &buf, &len, &clipped, &total);
	assert_non_null(buf);
	assert_false(clipped);
	assert_int_equal(len, sizeof(in));
	assert_int_equal(total, sizeof(in));
	assert_memory_equal(buf, in, sizeof(in));
	free(buf);
	corral_stream_free(&s);
}

/* A message that stands for the stream (the command could not be executed). */
static void test_set(void **state)
{
	struct corral_stream s;
	char *buf = NULL;
	size_t len = 0;
	uint64_t total = 0;
	bool clipped = true;

	(void)state;
	corral_stream_init(&s, -1, 4);
	corral_stream_set(&s, "corral: x: command not found\n", 29);
	corral_stream_finish(&s, &buf, &len, &clipped, &total);
	assert_string_equal(buf, "corral: x: command not found\n");
	assert_false(clipped);
	assert_int_equal(total, 29);
	free(buf);
	corral_stream_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_large),
		cmocka_unit_test(test_no_cap),
		cmocka_unit_test(test_set),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
