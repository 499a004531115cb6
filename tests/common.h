/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers shared by the C test programs. */
#ifndef CORRAL_TESTS_COMMON_H
#define CORRAL_TESTS_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exit code meson reads as "skipped". */
#define EXIT_SKIP 77

/*
 * Skip with a reason — unless CORRAL_MUST_WORK=1 (set by CI), which turns
 * the skip into a failure so kernel-dependent tests cannot silently vanish.
 */
_Noreturn static inline void skip_or_fail(const char *why)
{
	const char *must = getenv("CORRAL_MUST_WORK");

	if (must && strcmp(must, "1") == 0) {
		fprintf(stderr, "FAIL (CORRAL_MUST_WORK=1 forbids skipping): %s\n", why);
		exit(1);
	}
	fprintf(stderr, "SKIP: %s\n", why);
	exit(EXIT_SKIP);
}

#endif
