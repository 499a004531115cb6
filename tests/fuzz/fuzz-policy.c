/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Policy parser fuzzer: load the bytes as a policy; when it loads, dump,
 * reload, dump again, and abort unless both dumps are identical. Short
 * inputs are also fed as the value of every command-line option, after
 * which the policy must still round-trip. Errors must carry a message;
 * ASan's leak checker covers the rest.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const options[] = {
	"root", "ro", "rw", "net", "timeout", "memory", "cpu", "procs", "file-size",
	"open-files", "max-output", "env", "user", "provider", "image", "compat",
};

static void round_trip(const struct corral_policy *p)
{
	struct corral_error err = {};
	struct corral_policy *q = NULL;
	char *a, *b;

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
	corral_policy_free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct corral_error err = {};
	struct corral_policy *p = NULL;

	if (corral_policy_load_buffer((const char *)data, size, "fuzz", &p, &err) < 0) {
		if (!err.message[0] || err.code != CORRAL_E_POLICY)
			abort();
	} else {
		round_trip(p);
		corral_policy_free(p);
	}

	if (size < 256 && !memchr(data, 0, size)) {
		char *value = strndup((const char *)data, size);

		if (!value || corral_policy_new(&p) < 0)
			abort();
		for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
			err.message[0] = 0;
			if (corral_policy_overlay(p, options[i], value, &err) < 0 && !err.message[0])
				abort();
		}
		round_trip(p);
		corral_policy_free(p);
		free(value);
	}
	return 0;
}
