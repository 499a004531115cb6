/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* corral check [--json] [--policy FILE] [OPTIONS] */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/cli/cli.h"

static const char usage_check[] =
	"Usage: corral check [--json] [--policy FILE] [OPTIONS]\n"
	"\n"
	"Prove on this host that the policy's promises hold: for each promise corral\n"
	"runs small attacks (canaries) inside a sandbox built from the policy, each\n"
	"paired with a positive control, and reports held, broken, inconclusive (a\n"
	"control failed) or not applicable (and why).\n"
	"\n"
	"The sandbox has the policy's network mode, compat, limits, read-only and\n"
	"read-write paths and environment, but NOT its root: check makes its own\n"
	"scratch directory (mkdtemp under /tmp), with a root and an \"outside\"\n"
	"directory beside it, so it never writes into your project. Everything it\n"
	"creates is removed before it exits. The canaries are corral itself, run\n"
	"as `corral __canary NAME`: this binary and its libraries are added to the\n"
	"check sandbox as read-only files. As root, the canaries run as the\n"
	"identity the policy would pick for a root-owned root (nobody unless --user).\n"
	"The CPU limit is proven at 1 s, process limits above 1024 at 64 and\n"
	"output caps above 8M at 1M; the configured values are read back as well.\n"
	"\n"
	"Exit status: 0 every promise the policy makes holds; 1 a promise is broken\n"
	"or inconclusive; 125 corral's own error (bad option, unenforceable policy).\n"
	"\n"
	"Options: --json, --policy FILE, and every `corral run` option (see\n"
	"`corral run --help`); --root is accepted and ignored (see above).\n";

static int print_text(const char *json)
{
	json_error_t jerr;
	json_t *o = json_loads(json, 0, &jerr), *promises, *pr, *cs, *cn, *dropped, *d;
	size_t i, j;

	if (!o)
		return -1;
	printf("corral check: network %s, compat %s, Landlock ABI %lld, canaries run as uid %lld\n\n",
	       json_string_value(json_object_get(o, "network")) ?: "?",
	       json_string_value(json_object_get(o, "compat")) ?: "?",
	       json_integer_value(json_object_get(o, "landlock_abi")),
	       json_integer_value(json_object_get(o, "uid")));
	promises = json_object_get(o, "promises");
	json_array_foreach(promises, i, pr) {
		const char *state = json_string_value(json_object_get(pr, "state")) ?: "?";
		const char *why = json_string_value(json_object_get(pr, "why"));

		printf("  %-15s %-18s %s\n", strcmp(state, "not_applicable") == 0 ? "not applicable" : state,
		       json_string_value(json_object_get(pr, "id")) ?: "?",
		       json_string_value(json_object_get(pr, "promise")) ?: "");
		if (strcmp(state, "not_applicable") == 0 && why && *why)
			printf("  %-15s %-18s   why: %s\n", "", "", why);
		if (strcmp(state, "broken") != 0 && strcmp(state, "inconclusive") != 0)
			continue;
		cs = json_object_get(pr, "canaries");
		json_array_foreach(cs, j, cn) {
			const char *res = json_string_value(json_object_get(cn, "result")) ?: "";

			if (strcmp(res, "broken") && strcmp(res, "inconclusive"))
				continue;
			printf("  %-15s %-18s   canary %s %s: %s\n", "", "",
			       json_string_value(json_object_get(cn, "name")) ?: "?", res,
			       json_string_value(json_object_get(cn, "observed")) ?: "");
		}
	}
	dropped = json_object_get(o, "dropped");
	if (json_array_size(dropped)) {
		printf("\ndropped under compat best-effort:\n");
		json_array_foreach(dropped, i, d)
			printf("  %s\n", json_string_value(d) ?: "?");
	}
	printf("\n%s\n", !json_is_true(json_object_get(o, "held")) ?
	       "NOT every promise holds on this host (see above; --json for every canary)" :
	       json_array_size(dropped) ?
	       "every promise kept under compat best-effort holds on this host; the dropped ones above do not" :
	       "every promise the policy makes holds on this host");
	json_decref(o);
	return 0;
}

int cli_check(int argc, char **argv)
{
	struct cli_common c;
	struct corral_error err = {};
	char *json = NULL;
	bool held = false;
	int optind_, r;

	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(usage_check, stdout);
			return 0;
		}
	r = cli_parse_common(argc, argv, "check", false, &c, &optind_);
	if (r == -1)
		return 0;
	if (r)
		return r;
	if (optind_ < argc) {
		r = cli_fail(c.json, CORRAL_E_USAGE, "check: unexpected argument '%s'", argv[optind_]);
		goto out;
	}
	{
		bool closed[3];

		/* The canaries are commands: see cli_hold_stdio. The report needs a stdout. */
		if (cli_hold_stdio(closed) < 0 || closed[1]) {
			r = cli_fail(false, CORRAL_E_USAGE, "check: standard output is %s, so the report could not be printed",
				     closed[1] ? "closed" : "unusable");
			goto out;
		}
	}
	if (corral_check(c.policy, &json, &held, &err) < 0) {
		r = cli_fail_err(c.json, &err);
		goto out;
	}
	if (c.json) {
		printf("%s\n", json);
	} else if (print_text(json) < 0) {
		r = cli_fail(false, CORRAL_E_INTERNAL, "check: unreadable report");
		goto out;
	}
	r = held ? 0 : 1;
out:
	free(json);
	cli_common_clear(&c);
	return r;
}
