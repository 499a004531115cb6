/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* policy/posture.c: the promise vocabulary is one well-formed table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "policy/posture.h"

static void test_table(void **state)
{
	(void)state;
	for (int i = 0; i < CORRAL_P__COUNT; i++) {
		const struct corral_promise_info *p = &corral_promises[i];

		assert_non_null(p->id);
		assert_non_null(p->text);
		assert_non_null(p->mechanism);
		assert_true(p->text[0] && p->mechanism[0]);
		assert_true(p->kinds & (CORRAL_PK_POSTURE | CORRAL_PK_CHECK));
		/* ids are unique, and name their own entry */
		assert_int_equal(corral_promise_by_name(p->id), i);
		for (const char *c = p->id; *c; c++)
			assert_true((*c >= 'a' && *c <= 'z') || *c == '.' || *c == '_');
	}
	assert_int_equal(corral_promise_by_name("fs.wirte"), -1);
	assert_int_equal(corral_promise_by_name(NULL), -1);
	assert_string_equal(corral_promises[CORRAL_P_FS_WRITE].id, "fs.write");
	assert_string_equal(corral_promises[CORRAL_P_NET_TCP_LANDLOCK].id, "net.tcp_landlock");
}

/* corral check's groups, in the order of its report (DESIGN.md's list). */
static void test_check_groups(void **state)
{
	static const char *const want[] = {
		"fs.write", "fs.read", "net.no_inet", "net.families", "net.unix", "net.egress_allow", "syscall.bypass",
		"proc.isolation", "proc.private", "tty.no_injection", "priv.none", "lifetime", "leak.fds", "leak.env",
		"limits.memory", "limits.cpu", "limits.processes", "limits.file_size", "limits.open_files",
		"limits.output",
	};
	size_t n = 0;

	(void)state;
	for (int i = 0; i < CORRAL_P__COUNT; i++) {
		if (!(corral_promises[i].kinds & CORRAL_PK_CHECK))
			continue;
		assert_true(n < sizeof(want) / sizeof(want[0]));
		assert_string_equal(corral_promises[i].id, want[n]);
		n++;
	}
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
}

static void test_posture(void **state)
{
	struct corral_posture ps = {};

	(void)state;
	corral_posture_add(&ps, CORRAL_P_FS_TRUNCATE, CORRAL_PROMISE_DROPPED, "needs ABI %d", 3);
	corral_posture_add(&ps, CORRAL_P_FS_WRITE, CORRAL_PROMISE_ENFORCED, NULL);
	assert_int_equal(ps.n, 2);
	assert_string_equal(ps.items[0].id, "fs.truncate");
	assert_string_equal(ps.items[0].why, "needs ABI 3");
	assert_ptr_equal(corral_posture_get(&ps, CORRAL_P_FS_WRITE), &ps.items[1]);
	assert_null(corral_posture_get(&ps, CORRAL_P_FS_READ));
	assert_ptr_equal(corral_posture_first_dropped(&ps), &ps.items[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_check_groups),
		cmocka_unit_test(test_posture),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
