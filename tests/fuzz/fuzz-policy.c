/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Policy parser fuzzer: load the bytes as a policy; when it loads, dump,
 * reload, dump again, and abort unless both dumps are identical. Errors
 * must always carry a message. ASan's leak checker covers the rest.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct corral_error err = {};
	struct corral_policy *p = NULL, *q = NULL;
	char *a, *b;

	if (corral_policy_load_buffer((const char *)data, size, "fuzz", &p, &err) < 0) {
		if (!err.message[0] || err.code != CORRAL_E_POLICY)
			abort();
		return 0;
	}
	a = corral_policy_dump(p);
	if (!a)
		abort();
	if (corral_policy_load_string(a, &q, &err) < 0) {
		fprintf(stderr, "dump does not reload: %s\n%s", err.message, a);
		abort();
	}
	b = corral_policy_dump(q);
	if (!b || strcmp(a, b) != 0) {
		fprintf(stderr, "dumps differ:\n%s\n---\n%s", a, b ? b : "(null)");
		abort();
	}
	free(a);
	free(b);
	corral_policy_free(p);
	corral_policy_free(q);
	return 0;
}
