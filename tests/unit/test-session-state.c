/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The decoder of the shell state a bash call leaves (supervisor/session/
 * state.c): each line of bash's `export -p` as bash writes it, and the
 * malformed or hostile ones a command could write instead, skipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "supervisor/session/state.h"

static const struct {
	const char *in, *want; /* want: the entries joined by '|' */
} cases[] = {
	{ "declare -x A=\"b\"\n", "A=b" },
	{ "declare -x A=\"q\\\"d\\$x\\\\y\\`z\"\n", "A=q\"d$x\\y`z" },
	{ "declare -x N=$'l1\\nl2\\t\\x41\\101\\cA\\e'\n", "N=l1\nl2\tAA\x01\x1b" },
	{ "declare -rx RO=\"1\"\ndeclare -x NOVALUE\ndeclare -x E=\"\"\n", "RO=1|E=" },
	{ "export P=\"x\"\nexport Q\n", "P=x" },
	{ "garbage\ndeclare -x 1BAD=\"x\"\ndeclare -x OK=\"y\"\n", "OK=y" },
	{ "declare -x UNTERMINATED=\"abc\ndeclare -x AFTER=\"z\"\n", "AFTER=z" },
	{ "declare -x TRAIL=\"a\"junk\ndeclare -x GOOD=\"b\"", "GOOD=b" },
	{ "declare -x NUL=$'a\\0b'\ndeclare -x X=$'\\x00'\ndeclare -x KEPT=\"k\"\n", "KEPT=k" },
	{ "declare -x S=$'\\'quoted\\''\n", "S='quoted'" },
	{ "declare -x", "" },
	{ "", "" },
};

static void test_decode(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = strlen(cases[i].in), n, o = 0;
		char *out = malloc(len + 1), got[512] = "";

		assert_non_null(out);
		n = corral_state_decode_exports(cases[i].in, len, out);
		assert_true(n <= len + 1);
		for (size_t p = 0; p < n; p += strlen(out + p) + 1) {
			size_t l = strlen(out + p);

			if (o)
				got[o++] = '|';
			memcpy(got + o, out + p, l);
			o += l;
		}
		got[o] = 0;
		if (strcmp(got, cases[i].want) != 0)
			fail_msg("case %zu: got [%s], want [%s]", i, got, cases[i].want);
		free(out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
