/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* corral policy check FILE | corral policy show [--policy FILE] [OPTIONS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/cli/cli.h"

static const char usage_policy[] =
	"Usage: corral policy check FILE\n"
	"       corral policy show [--policy FILE] [OPTIONS]\n";

int cli_policy(int argc, char **argv)
{
	struct corral_error err = {};
	int r;

	if (argc < 2) {
		fputs(usage_policy, stderr);
		return CLI_EXIT_ERROR;
	}
	if (strcmp(argv[1], "--help") == 0) {
		fputs(usage_policy, stdout);
		return 0;
	}
	if (strcmp(argv[1], "check") == 0) {
		struct corral_policy *p = NULL;
		bool json = false;
		const char *file = NULL;

		for (int i = 2; i < argc; i++) {
			if (strcmp(argv[i], "--help") == 0) {
				fputs(usage_policy, stdout);
				return 0;
			} else if (strcmp(argv[i], "--json") == 0) {
				json = true;
			} else if (argv[i][0] == '-' && argv[i][1] && !file) {
				return cli_fail(json, CORRAL_E_USAGE, "policy check: unknown option %s", argv[i]);
			} else if (!file) {
				file = argv[i];
			} else {
				return cli_fail(json, CORRAL_E_USAGE, "policy check: unexpected argument '%s'", argv[i]);
			}
		}
		if (!file)
			return cli_fail(json, CORRAL_E_USAGE, "policy check: missing FILE");
		r = corral_policy_load_file(file, &p, &err);
		if (r < 0)
			return cli_fail_err(json, &err);
		corral_policy_free(p);
		if (json)
			printf("{\"valid\": true}\n");
		return 0;
	}
	if (strcmp(argv[1], "show") == 0) {
		struct cli_common c;
		char *s;
		int optind_;

		r = cli_parse_common(argc - 1, argv + 1, "policy show", false, &c, &optind_);
		if (r == -1)
			return 0;
		if (r)
			return r;
		if (optind_ < argc - 1) {
			r = cli_fail(c.json, CORRAL_E_USAGE, "policy show: unexpected argument '%s'",
				     argv[1 + optind_]);
			cli_common_clear(&c);
			return r;
		}
		if (cli_default_root(c.policy, &err) < 0) {
			cli_common_clear(&c);
			return cli_fail_err(c.json, &err);
		}
		s = corral_policy_dump(c.policy);
		cli_common_clear(&c);
		if (!s)
			return cli_fail(false, CORRAL_E_INTERNAL, "out of memory");
		fputs(s, stdout);
		free(s);
		return 0;
	}
	return cli_fail(false, CORRAL_E_USAGE, "policy: unknown subcommand '%s' (check or show)", argv[1]);
}
