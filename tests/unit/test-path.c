/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* policy/path.c: lexical normalisation and containment, table-driven. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/path.h"
#include "policy/policy.h"

static void test_normalise(void **state)
{
	static const struct {
		const char *in;
		unsigned flags;
		const char *want; /* NULL: -EINVAL */
	} cases[] = {
		{ "/", 0, "/" },
		{ "//", 0, "/" },
		{ "/ws", 0, "/ws" },
		{ "/ws/", 0, "/ws" },
		{ "/ws//", 0, "/ws" },
		{ "//ws//a///b", 0, "/ws/a/b" },
		{ "/ws/./a/.", 0, "/ws/a" },
		{ "/./.", 0, "/" },
		{ "/ws/../etc", 0, "/ws/../etc" },
		{ "/ws/..", 0, "/ws/.." },
		{ "/ws/...", 0, "/ws/..." },
		{ "/ws/.hidden/..x", 0, "/ws/.hidden/..x" },
		{ "/ws/../etc", CORRAL_PATH_DOTDOT, "/etc" },
		{ "/ws/a/b/../../c", CORRAL_PATH_DOTDOT, "/ws/c" },
		{ "/..", CORRAL_PATH_DOTDOT, "/" },
		{ "/../../x", CORRAL_PATH_DOTDOT, "/x" },
		{ "/ws/..", CORRAL_PATH_DOTDOT, "/" },
		{ "/ws/...", CORRAL_PATH_DOTDOT, "/ws/..." },
		{ "/a/./../b/", CORRAL_PATH_DOTDOT, "/b" },
		{ "", 0, NULL },
		{ "ws", 0, NULL },
		{ "./ws", CORRAL_PATH_DOTDOT, NULL },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[64];
		char *dup;
		int r;

		snprintf(buf, sizeof(buf), "%s", cases[i].in);
		r = corral_path_normalise(buf, cases[i].flags);
		dup = corral_path_normalised(cases[i].in, cases[i].flags);
		if (!cases[i].want) {
			if (r != -EINVAL || dup)
				fail_msg("case %zu (%s): want -EINVAL, got %d", i, cases[i].in, r);
			continue;
		}
		if (r != 0 || strcmp(buf, cases[i].want) != 0 || !dup || strcmp(dup, cases[i].want) != 0)
			fail_msg("case %zu (%s, %u): got %d [%s] [%s], want [%s]", i, cases[i].in, cases[i].flags,
				 r, buf, dup ? dup : "(null)", cases[i].want);
		free(dup);
	}
}

static void test_contains(void **state)
{
	static const struct {
		const char *parent, *child;
		bool want;
	} cases[] = {
		{ "/ws", "/ws", true },
		{ "/ws", "/ws/a", true },
		{ "/ws", "/ws/a/b", true },
		{ "/ws", "/ws-evil", false },
		{ "/ws", "/ws-evil/a", false },
		{ "/ws", "/wsx", false },
		{ "/ws/a", "/ws", false },
		{ "/ws", "/w", false },
		{ "/ws/", "/ws", true },
		{ "/ws", "/ws/", true },
		{ "/ws//", "/ws/a", true },
		{ "/ws/", "/ws-evil", false },
		{ "//ws", "/ws/a", true },
		{ "/ws", "//ws//a", true },
		{ "/ws/.", "/ws/./a", true },
		{ "/ws", "/ws/../etc", false },
		{ "/ws", "/ws/a/..", false },
		{ "/ws/..", "/etc", false },
		{ "/ws", "/ws/..x", true },
		{ "/ws", "/ws/...", true },
		{ "/", "/", true },
		{ "/", "/anything/at/all", true },
		{ "//", "/etc", true },
		{ "/etc", "/", false },
		{ "/", "relative", false },
		{ "ws", "ws/a", false },
		{ "", "/ws", false },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (corral_path_contains(cases[i].parent, cases[i].child) != cases[i].want)
			fail_msg("case %zu: contains(%s, %s) should be %s", i, cases[i].parent, cases[i].child,
				 cases[i].want ? "true" : "false");
}

/* The pure overlay takes absolute paths only; the public one makes them so. */
static void test_overlay_absolute(void **state)
{
	struct corral_policy *p = NULL;
	struct corral_error err = {};

	(void)state;
	assert_int_equal(corral_policy_new(&p), 0);
	assert_int_equal(corral_policy_overlay(p, "root", "rel/dir", &err), -EINVAL);
	assert_int_equal(err.code, CORRAL_E_USAGE);
	assert_non_null(strstr(err.message, "--root: rel/dir: not an absolute path"));
	assert_int_equal(corral_policy_overlay(p, "root", "/ws//a/./", &err), 0);
	assert_string_equal(corral_policy_root(p), "/ws/a");
	corral_policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normalise),
		cmocka_unit_test(test_contains),
		cmocka_unit_test(test_overlay_absolute),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
