/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* SHA-256 (the audit log's policy_sha256) against the FIPS 180-4 / NIST vectors, fed whole and in pieces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal/sha256.h"

static const struct {
	const char *text;
	size_t repeat;
	const char *hex;
} cases[] = {
	{ "", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
	{ "abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
	  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
	  "mnopqrstnopqrstu", 1, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
	{ "a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0" },
};

static void test_vectors(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i].text), total = n * cases[i].repeat;
		char *buf = malloc(total + 1), hex[65];

		assert_non_null(buf);
		for (size_t r = 0; r < cases[i].repeat; r++)
			memcpy(buf + r * n, cases[i].text, n);
		corral_sha256_hex(buf, total, hex);
		assert_string_equal(hex, cases[i].hex);
		/* In pieces of every size up to 130 bytes: the buffering must not change the digest. */
		for (size_t piece = 1; total && piece <= 130 && total <= 1000; piece++) {
			struct corral_sha256 c;

			corral_sha256_init(&c);
			for (size_t off = 0; off < total; off += piece)
				corral_sha256_update(&c, buf + off, total - off < piece ? total - off : piece);
			corral_sha256_final_hex(&c, hex);
			assert_string_equal(hex, cases[i].hex);
		}
		free(buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
