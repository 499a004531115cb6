/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* corral probe [--json] [--policy FILE] [OPTIONS] */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/cli/cli.h"

static const char *yes_no(json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key)) ? "yes" : "no";
}

/* The probe's JSON, for people: the host first, then the policy's posture. */
static int print_text(const char *json)
{
	json_error_t jerr;
	json_t *o = json_loads(json, 0, &jerr), *promises, *pr, *refusal;
	size_t i, width = 0;
	long long errata;

	if (!o)
		return -1;
	printf("landlock ABI: %lld", json_integer_value(json_object_get(o, "landlock_abi")));
	errata = json_integer_value(json_object_get(o, "landlock_errata"));
	if (errata)
		printf(" (errata fixed: 0x%llx)", errata);
	printf("\n");
	printf("seccomp: %s\n", yes_no(o, "seccomp"));
	printf("user namespaces: %s\n", yes_no(o, "user_namespaces"));
	printf("network namespaces (network \"loopback\"): %s\n", yes_no(o, "network_namespaces"));
	printf("PID namespaces (proc \"private\"): %s\n", yes_no(o, "pid_namespaces"));
	printf("docker: %s\n", json_is_true(json_object_get(o, "docker")) ? "daemon answers" : "no");
	printf("running as root: %s\n", yes_no(o, "running_as_root"));
	printf("\npolicy: root %s, network %s, compat %s, provider %s\n",
	       json_string_value(json_object_get(o, "root")) ?: "?",
	       json_string_value(json_object_get(o, "network")) ?: "?",
	       json_string_value(json_object_get(o, "compat")) ?: "?",
	       json_string_value(json_object_get(o, "provider")) ?: "?");
	printf("egress (can reach a network): %s\n", yes_no(o, "egress"));
	printf("filesystem confined: %s\n", yes_no(o, "fs_confined"));

	promises = json_object_get(o, "promises");
	json_array_foreach(promises, i, pr) {
		size_t l = strlen(json_string_value(json_object_get(pr, "id")) ?: "");
		if (l > width)
			width = l;
	}
	printf("\npromises:\n");
	json_array_foreach(promises, i, pr) {
		const char *why = json_string_value(json_object_get(pr, "why"));

		if (why && *why)
			printf("  %-14s %-*s  %s\n", json_string_value(json_object_get(pr, "state")) ?: "?",
			       (int)width, json_string_value(json_object_get(pr, "id")) ?: "?", why);
		else
			printf("  %-14s %s\n", json_string_value(json_object_get(pr, "state")) ?: "?",
			       json_string_value(json_object_get(pr, "id")) ?: "?");
	}
	refusal = json_object_get(o, "refusal");
	if (json_is_string(refusal))
		printf("\ncorral run would refuse: %s\n", json_string_value(refusal));
	else if (!json_is_true(json_object_get(o, "runnable")))
		printf("\ncorral run would refuse\n");
	json_decref(o);
	return 0;
}

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
	/* No cli_default_root: corral_probe judges the current directory itself ($PWD included). */
	if (corral_probe(c.policy, &json, &err) < 0) {
		r = cli_fail_err(c.json, &err);
		goto out;
	}
	if (c.json) {
		printf("%s\n", json);
	} else if (print_text(json) < 0) {
		r = cli_fail(false, CORRAL_E_INTERNAL, "probe: unreadable report");
		goto out;
	}
	r = 0;
out:
	free(json);
	cli_common_clear(&c);
	return r;
}
