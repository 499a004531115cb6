/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* corral probe [--json] [--policy FILE] [OPTIONS] */
#include <stdio.h>
#include <stdlib.h>

#include "supervisor/cli.h"

int cli_probe(int argc, char **argv)
{
	struct cli_common c;
	struct corral_error err = {};
	char *json = NULL;
	int optind_, r;

	r = cli_parse_common(argc, argv, "probe", false, &c, &optind_);
	if (r == -1)
		return 0;
	if (r)
		return r;
	if (optind_ < argc) {
		r = cli_fail(c.json, CORRAL_E_USAGE, "probe: unexpected argument '%s'", argv[optind_]);
		goto out;
	}
	if (cli_default_root(c.policy, &err) < 0 || corral_probe(c.policy, &json, &err) < 0) {
		r = cli_fail_err(c.json, &err);
		goto out;
	}
	/* TODO(issue 3): a plain-text rendering for people. */
	printf("%s\n", json);
	r = 0;
out:
	free(json);
	cli_common_clear(&c);
	return r;
}
