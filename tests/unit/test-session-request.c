/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The session request parser (supervisor/session/request.c): one table of lines and verdicts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "supervisor/session/session.h"

static const struct {
	const char *line;
	const char *code;  /* NULL: accepted */
	const char *tool;  /* accepted: the tool */
	const char *id;    /* the id read (its JSON), or NULL */
} cases[] = {
	{ "{\"id\": 1, \"tool\": \"status\"}", NULL, "status", "1" },
	{ "{\"id\": \"a\", \"tool\": \"bash\", \"command\": \"ls\", \"timeout\": 2.5, \"env\": {\"A\": \"b\"}, "
	  "\"stdin\": \"x\", \"max_output\": 10, \"background\": true, \"stream\": false, \"tag\": [1]}", NULL, "bash", "\"a\"" },
	{ "{\"id\": 2, \"tool\": \"exec\", \"argv\": [\"ls\", \"-l\"]}", NULL, "exec", "2" },
	{ "{\"id\": 3, \"tool\": \"edit_file\", \"path\": \"a\", \"old\": \"x\", \"new\": \"y\", \"all\": true}", NULL, "edit_file", "3" },
	{ "{\"id\": 4, \"tool\": \"list_dir\"}", NULL, "list_dir", "4" },
	{ "{\"id\": 5, \"tool\": \"job_output\", \"job\": \"x\"}", NULL, "job_output", "5" },
	{ "{\"id\": 6, \"tool\": \"cancel\", \"target\": 9}", NULL, "cancel", "6" },
	{ "", "bad_json", NULL, NULL },
	{ "{", "bad_json", NULL, NULL },
	{ "{\"id\": 1, \"id\": 2, \"tool\": \"status\"}", "bad_json", NULL, NULL },
	{ "[]", "bad_request", NULL, NULL },
	{ "{\"tool\": \"status\"}", "bad_request", NULL, NULL },
	{ "{\"id\": null, \"tool\": \"status\"}", "bad_request", NULL, NULL },
	{ "{\"id\": 1.5, \"tool\": \"status\"}", "bad_request", NULL, NULL },
	{ "{\"id\": {}, \"tool\": \"status\"}", "bad_request", NULL, NULL },
	{ "{\"id\": 7}", "bad_request", NULL, "7" },
	{ "{\"id\": 7, \"tool\": null}", "bad_request", NULL, "7" },
	{ "{\"id\": 7, \"tool\": \"nope\"}", "unknown_tool", NULL, "7" },
	{ "{\"id\": 8, \"tool\": \"bash\"}", "bad_request", NULL, "8" },
	{ "{\"id\": 8, \"tool\": \"bash\", \"command\": 1}", "bad_request", NULL, "8" },
	{ "{\"id\": 8, \"tool\": \"bash\", \"command\": \"a\\u0000b\"}", "bad_request", NULL, "8" },
	{ "{\"id\": 8, \"tool\": \"bash\", \"command\": \"x\", \"timeout\": 0}", "bad_request", NULL, "8" },
	{ "{\"id\": 8, \"tool\": \"bash\", \"command\": \"x\", \"timeout\": 1e300}", "bad_request", NULL, "8" },
	{ "{\"id\": 8, \"tool\": \"bash\", \"command\": \"x\", \"max_output\": -1}", "bad_request", NULL, "8" },
	{ "{\"id\": 8, \"tool\": \"bash\", \"command\": \"x\", \"env\": {\"A=B\": \"c\"}}", "bad_request", NULL, "8" },
	{ "{\"id\": 8, \"tool\": \"bash\", \"command\": \"x\", \"env\": []}", "bad_request", NULL, "8" },
	{ "{\"id\": 8, \"tool\": \"bash\", \"command\": \"x\", \"bogus\": 1}", "bad_request", NULL, "8" },
	{ "{\"id\": 9, \"tool\": \"exec\", \"argv\": []}", "bad_request", NULL, "9" },
	{ "{\"id\": 9, \"tool\": \"exec\", \"argv\": [1]}", "bad_request", NULL, "9" },
	{ "{\"id\": 9, \"tool\": \"read_file\", \"path\": \"a\\u0000b\"}", "bad_request", NULL, "9" },
	{ "{\"id\": 9, \"tool\": \"cancel\", \"target\": true}", "bad_request", NULL, "9" },
};

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct corral_request r;
		struct corral_tool_err e = {};
		int rc = corral_request_parse(cases[i].line, strlen(cases[i].line), &r, &e);

		if (cases[i].code) {
			if (rc != -1 || !e.code || strcmp(e.code, cases[i].code) != 0 || !e.msg[0])
				fail_msg("case %zu (%s): want %s, got %d %s", i, cases[i].line, cases[i].code, rc,
					 e.code ? e.code : "(none)");
		} else if (rc != 0 || !r.tool || strcmp(r.tool->name, cases[i].tool) != 0) {
			fail_msg("case %zu (%s): want %s accepted, got %d %s: %s", i, cases[i].line, cases[i].tool, rc,
				 e.code ? e.code : "", e.msg);
		}
		if (cases[i].id) {
			char *t = r.id ? json_dumps(r.id, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;

			if (!t || strcmp(t, cases[i].id) != 0)
				fail_msg("case %zu: id %s, want %s", i, t ? t : "(none)", cases[i].id);
			free(t);
		} else if (r.id) {
			fail_msg("case %zu: an id was read from %s", i, cases[i].line);
		}
		corral_request_clear(&r);
	}
}

static void test_too_large(void **state)
{
	struct corral_request r;
	struct corral_tool_err e = {};

	(void)state;
	assert_int_equal(corral_request_parse("{}", (size_t)CORRAL_SESSION_LINE_MAX + 1, &r, &e), -1);
	assert_string_equal(e.code, "too_large");
	assert_null(r.req);
	corral_request_clear(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_too_large),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
