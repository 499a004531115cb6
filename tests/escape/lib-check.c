/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * corral_check() from a library caller: the program dispatches `__canary`
 * to corral_canary_main() as corral.h asks, runs the check under the
 * defaults, and wants every promise held; then a policy whose provider is
 * docker must be refused as unsupported.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral.h"
#include "../common.h"

int main(int argc, char **argv)
{
	struct corral_policy *p = NULL;
	struct corral_error err = {};
	char *json = NULL;
	bool held = false;
	json_t *o, *pr;
	size_t i, n_held = 0;
	int r;

	if (argc > 1 && strcmp(argv[1], "__canary") == 0)
		return corral_canary_main(argc - 1, argv + 1);

	if (chdir("/tmp") < 0 || corral_policy_new(&p) < 0)
		return 1;
	r = corral_check(p, &json, &held, &err);
	if (r < 0) {
		if (err.code == CORRAL_E_UNENFORCEABLE)
			skip_or_fail(err.message);
		fprintf(stderr, "corral_check: %s (%s)\n", err.message, corral_error_code_name(err.code));
		return 1;
	}
	o = json_loads(json, 0, NULL);
	if (!o || json_is_true(json_object_get(o, "held")) != held) {
		fprintf(stderr, "report and *all_held disagree: %s\n", json);
		return 1;
	}
	json_array_foreach(json_object_get(o, "promises"), i, pr)
		if (strcmp(json_string_value(json_object_get(pr, "state")), "held") == 0)
			n_held++;
	if (!held || n_held < 15) {
		fprintf(stderr, "not every promise held (%zu held): %s\n", n_held, json);
		return 1;
	}
	printf("ok - corral_check from a library caller: %zu promises held\n", n_held);
	json_decref(o);
	free(json);

	memset(&err, 0, sizeof(err));
	json = NULL;
	if (corral_policy_set(p, "provider", "docker", &err) < 0)
		return 1;
	r = corral_check(p, &json, &held, &err);
	if (r >= 0 || err.code != CORRAL_E_UNSUPPORTED || json) {
		fprintf(stderr, "docker provider: expected unsupported, got %d (%s)\n", r, err.message);
		return 1;
	}
	printf("ok - docker provider refused: %s\n", err.message);
	corral_policy_free(p);
	return 0;
}
