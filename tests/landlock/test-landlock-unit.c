/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Landlock, pure (suite "unit"): the rights each ABI knows. No syscalls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "landlock/landlock.h"
#include "landlock/uapi.h"

static void test_fs_rights_per_abi(void **state)
{
	static const struct {
		int abi;
		uint64_t want;
	} cases[] = {
		{ 0, 0 },
		{ 1, CORRAL_LL_FS_ABI1 },
		{ 2, CORRAL_LL_FS_ABI1 | CORRAL_LL_FS_REFER },
		{ 3, CORRAL_LL_FS_ABI1 | CORRAL_LL_FS_REFER | CORRAL_LL_FS_TRUNCATE },
		{ 4, CORRAL_LL_FS_ABI1 | CORRAL_LL_FS_REFER | CORRAL_LL_FS_TRUNCATE },
		{ 5, CORRAL_LL_FS_ABI1 | CORRAL_LL_FS_REFER | CORRAL_LL_FS_TRUNCATE | CORRAL_LL_FS_IOCTL_DEV },
		{ 8, CORRAL_LL_FS_ABI1 | CORRAL_LL_FS_REFER | CORRAL_LL_FS_TRUNCATE | CORRAL_LL_FS_IOCTL_DEV },
		{ 9, (1ULL << 17) - 1 },
		{ 12, (1ULL << 17) - 1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("ABI %d\n", cases[i].abi);
		assert_int_equal(corral_ll_fs_rights(cases[i].abi), cases[i].want);
	}
}

static void test_file_rights(void **state)
{
	/* Rights a rule on a non-directory may carry: never a directory right. */
	assert_int_equal(CORRAL_LL_FS_FILE_RIGHTS &
				 (CORRAL_LL_FS_READ_DIR | CORRAL_LL_FS_REMOVE_DIR | CORRAL_LL_FS_REMOVE_FILE |
				  CORRAL_LL_FS_MAKE_REG | CORRAL_LL_FS_MAKE_DIR | CORRAL_LL_FS_REFER),
			 0);
	assert_true(CORRAL_LL_FS_FILE_RIGHTS & CORRAL_LL_FS_IOCTL_DEV);
	assert_true(CORRAL_LL_FS_FILE_RIGHTS & CORRAL_LL_FS_RESOLVE_UNIX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fs_rights_per_abi),
		cmocka_unit_test(test_file_rights),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
