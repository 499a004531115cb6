/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The library tests' fixture: a scratch root and a default sandbox on it. */
#ifndef CORRAL_TESTS_SANDBOX_FIXTURE_H
#define CORRAL_TESTS_SANDBOX_FIXTURE_H

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corral.h"
#include "tests/common.h"

/*
 * mkdtemp |root| (a "...XXXXXX" template), give it to nobody when we are
 * root (the identity a root-owned run picks), and build a default sandbox
 * on it into *|sb| with its policy in *|p|. Skips when the kernel cannot
 * enforce the defaults; 0, or -1 after printing why.
 */
static inline int fixture_sandbox(char *root, struct corral_policy **p, struct corral_sandbox **sb)
{
	struct corral_error err = {};

	if (!mkdtemp(root))
		return -1;
	chmod(root, 0755);
	if (geteuid() == 0 && chown(root, 65534, 65534) < 0)
		return -1;
	if (corral_policy_new(p) < 0 || corral_policy_set(*p, "root", root, &err) < 0) {
		printf("policy: %s\n", err.message);
		return -1;
	}
	if (corral_sandbox_new(*p, sb, &err) < 0) {
		printf("sandbox: %s\n", err.message);
		if (err.code == CORRAL_E_UNENFORCEABLE)
			skip_or_fail(err.message);
		return -1;
	}
	return 0;
}

#endif
