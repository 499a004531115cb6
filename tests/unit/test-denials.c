/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The denials' pure parts: which paths a stderr line names when it is a
 * refusal (coreutils, dash, bash, python, npm wordings), and the counting
 * of supervisor entries per kind and target.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "policy/policy.h"
#include "supervisor/exec/denials.h"

static char got[512];

static void collect(const char *path, void *arg)
{
	(void)arg;
	if (got[0])
		strncat(got, "|", sizeof(got) - strlen(got) - 1);
	strncat(got, path, sizeof(got) - strlen(got) - 1);
}

static void test_line_paths(void **state)
{
	static const struct {
		const char *line, *want;
	} cases[] = {
		{ "sh: 1: cannot create /tmp/x: Permission denied", "/tmp/x" },
		{ "bash: /tmp/x: Permission denied", "/tmp/x" },
		{ "/bin/bash: line 2: /etc/foo: Permission denied", "/etc/foo" },
		{ "/bin/sh: 1: cannot create /etc/foo: Permission denied", "/etc/foo" },
		{ "/etc/foo: Permission denied", "/etc/foo" },
		{ "touch: cannot touch '/etc/foo': Permission denied", "/etc/foo" },
		{ "mkdir: cannot create directory \xe2\x80\x98/var/tmp/a b\xe2\x80\x99: Permission denied", "/var/tmp/a b" },
		{ "PermissionError: [Errno 13] Permission denied: '/tmp/y'", "/tmp/y" },
		{ "npm ERR! Error: EACCES: permission denied, mkdir '/usr/lib/node_modules/x'", "/usr/lib/node_modules/x" },
		{ "cp: cannot create regular file '/opt/a': Read-only file system", "/opt/a" },
		{ "mv: cannot move 'a' to '/etc/b': Permission denied", "/etc/b" },
		{ "open(/srv/x) failed: Permission denied.", "/srv/x" },
		{ "ls: cannot access '/sys/x': No such file or directory", "" },
		{ "cat: relative/path: Permission denied", "" },
		{ "https://example.com/a: Permission denied", "" },
		{ "Permission denied", "" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		got[0] = '\0';
		corral_denials_line_paths(cases[i].line, strlen(cases[i].line), collect, NULL);
		if (strcmp(got, cases[i].want) != 0)
			fail_msg("%s: got [%s], want [%s]", cases[i].line, got, cases[i].want);
	}
}

static void test_counting(void **state)
{
	struct corral_denials d = {};

	(void)state;
	corral_denials_socket(&d, CORRAL_NET_NONE, "socket", AF_INET);
	corral_denials_socket(&d, CORRAL_NET_NONE, "socket", AF_INET);
	corral_denials_socket(&d, CORRAL_NET_NONE, "socket", 99);
	corral_denials_unix(&d, "/run/x.sock", false);
	assert_int_equal(d.n, 3);
	assert_string_equal(d.v[0].what, "socket(AF_INET)");
	assert_int_equal(d.v[0].count, 2);
	assert_string_equal(d.v[0].source, "supervisor");
	assert_non_null(strstr(d.v[0].hint, "--net host"));
	assert_string_equal(d.v[1].what, "socket(family 99)");
	assert_string_equal(d.v[2].kind, "unix_socket");
	assert_non_null(strstr(d.v[2].hint, "--rw"));
	for (int i = 0; i < 100; i++) {
		char what[32];

		snprintf(what, sizeof(what), "/p%d", i);
		corral_denials_add(&d, "fs", what, "inferred", "h");
	}
	/* 3 + 28 listed, the 32nd counts the other 72 new targets */
	assert_int_equal(d.n, CORRAL_DENIALS_MAX);
	assert_string_equal(d.v[CORRAL_DENIALS_MAX - 2].what, "/p27");
	assert_string_equal(d.v[CORRAL_DENIALS_MAX - 1].what, CORRAL_DENIALS_MORE);
	assert_int_equal(d.v[CORRAL_DENIALS_MAX - 1].count, 72);
	corral_denials_add(&d, "fs", "/p3", "inferred", "h"); /* a listed one counts as itself */
	assert_int_equal(d.v[6].count, 2);
	assert_int_equal(d.v[CORRAL_DENIALS_MAX - 1].count, 72);
	corral_denials_add(&d, "network", "10.0.0.1:80", "supervisor", "h");
	assert_int_equal(d.v[CORRAL_DENIALS_MAX - 1].count, 73);
	corral_denials_clear(&d);
	assert_int_equal(d.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_paths),
		cmocka_unit_test(test_counting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
