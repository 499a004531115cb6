/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Network "allow": the host-list parser and matcher (policy/allow.c) and
 * the egress proxy's request parser (supervisor/local/egress/request.c),
 * table-driven. Each refusal row has an allowed neighbour in the table.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/allow.h"
#include "supervisor/local/egress/request.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_parse(void **state)
{
	static const struct {
		const char *in;
		const char *canon; /* NULL: refused */
	} t[] = {
		{ "pypi.org", "pypi.org" },
		{ "PyPI.org.", "pypi.org" },
		{ "*.npmjs.org:443", "*.npmjs.org:443" },
		{ "10.0.0.5:8080", "10.0.0.5:8080" },
		{ "[::1]:8080", "[::1]:8080" },
		{ "2001:db8::1", "2001:db8::1" },
		{ "::ffff:127.0.0.1", "127.0.0.1" },
		{ "my_host-1.internal:1", "my_host-1.internal:1" },
		{ "*", NULL },
		{ "*.", NULL },
		{ "*:443", NULL },
		{ "a.*.org", NULL },
		{ "**.org", NULL },
		{ "pypi.org:0", NULL },
		{ "pypi.org:65536", NULL },
		{ "pypi.org:", NULL },
		{ "pypi.org:https", NULL },
		{ "0x7f.1", NULL },
		{ "2130706433", NULL },
		{ "127.1", NULL },
		{ "0177.0.0.1", NULL },
		{ "1.2.3", NULL },
		{ "[::1]x", NULL },
		{ "::1:80]", NULL },
		{ "-bad.org", NULL },
		{ "bad-.org", NULL },
		{ "a..b", NULL },
		{ "user@host.org", NULL },
		{ "host.org/path", NULL },
		{ "", NULL },
		{ "fe80::1%eth0", NULL },
	};

	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		struct corral_allow_entry e;
		char canon[300] = "", why[200] = "";
		int r = corral_allow_parse(t[i].in, &e, canon, sizeof(canon), why, sizeof(why));

		if (t[i].canon) {
			if (r != 0)
				fail_msg("'%s': refused: %s", t[i].in, why);
			assert_string_equal(canon, t[i].canon);
		} else if (r == 0) {
			fail_msg("'%s': accepted as '%s'", t[i].in, canon);
		} else {
			assert_true(why[0] != '\0');
		}
	}
}

static void test_match(void **state)
{
	static const char *const list[] = { "pypi.org", "*.npmjs.org:443", "10.0.0.5:8080", "[2001:db8::1]:443",
					    "files.example:8443" };
	static const struct {
		const char *host;
		unsigned port;
		bool allowed;
	} t[] = {
		{ "pypi.org", 443, true },
		{ "PYPI.ORG.", 80, true },
		{ "pypi.org", 8080, false },      /* default ports are 80 and 443 only */
		{ "www.pypi.org", 443, false },   /* a name is exact */
		{ "registry.npmjs.org", 443, true },
		{ "a.b.npmjs.org", 443, true },
		{ "registry.npmjs.org", 80, false }, /* the entry names 443 */
		{ "npmjs.org", 443, false },      /* the suffix itself is not a subdomain */
		{ "evil-npmjs.org", 443, false },
		{ "npmjs.org.evil.com", 443, false },
		{ "10.0.0.5", 8080, true },
		{ "10.0.0.5", 80, false },
		{ "167772165", 8080, true },      /* 10.0.0.5 in decimal: the same address, listed */
		{ "0xa.0.0.5", 8080, true },
		{ "::ffff:10.0.0.5", 8080, true },
		{ "10.0.0.6", 8080, false },
		{ "2001:db8::1", 443, true },
		{ "[2001:db8::1]", 443, true },
		{ "2001:db8::2", 443, false },
		{ "files.example", 8443, true },
		{ "files.example", 443, false },
		{ "127.0.0.1", 443, false },
		{ "localhost", 443, false },
	};
	struct corral_allow_entry v[N(list)];

	(void)state;
	for (size_t i = 0; i < N(list); i++) {
		char why[200];

		assert_int_equal(corral_allow_parse(list[i], &v[i], NULL, 0, why, sizeof(why)), 0);
	}
	for (size_t i = 0; i < N(t); i++) {
		char name[CORRAL_ALLOW_HOST_MAX + 1];
		uint8_t addr[16];
		int fam, m;

		assert_int_equal(corral_allow_classify(t[i].host, &fam, addr, name), 0);
		m = fam ? corral_allow_match_ip(v, N(v), fam, addr, t[i].port) :
			  corral_allow_match_name(v, N(v), name, t[i].port);
		if ((m >= 0) != t[i].allowed)
			fail_msg("%s:%u: %s, expected %s", t[i].host, t[i].port, m >= 0 ? "allowed" : "refused",
				 t[i].allowed ? "allowed" : "refused");
	}
}

static void test_internal(void **state)
{
	static const struct {
		const char *host;
		bool internal;
	} t[] = {
		{ "127.0.0.1", true }, { "127.9.9.9", true }, { "10.1.2.3", true }, { "172.16.0.1", true },
		{ "172.31.255.255", true }, { "172.32.0.1", false }, { "192.168.1.1", true },
		{ "169.254.169.254", true }, { "100.64.0.1", true }, { "100.128.0.1", false }, { "0.0.0.0", true },
		{ "224.0.0.1", true }, { "255.255.255.255", true }, { "8.8.8.8", false }, { "151.101.0.223", false },
		{ "::1", true }, { "::", true }, { "fe80::1", true }, { "fd00::1", true }, { "ff02::1", true },
		{ "::ffff:127.0.0.1", true }, { "64:ff9b::a00:1", true }, { "64:ff9b::808:808", false },
		{ "2a04:4e42::223", false },
		/* Not globally reachable either (IANA special-purpose registries). */
		{ "198.18.0.1", true }, { "198.19.255.255", true }, { "198.20.0.1", false }, { "198.17.255.255", false },
		{ "fec0::1", true }, { "64:ff9b:1::a00:1", true }, { "2002:a00:1::1", true }, { "2002:808:808::1", false },
	};

	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		char name[CORRAL_ALLOW_HOST_MAX + 1];
		uint8_t addr[16];
		int fam;

		assert_int_equal(corral_allow_classify(t[i].host, &fam, addr, name), 0);
		assert_true(fam != 0);
		if (corral_allow_internal(fam, addr) != t[i].internal)
			fail_msg("%s: internal should be %d", t[i].host, t[i].internal);
	}
}

static void test_request(void **state)
{
	static const struct {
		const char *in;
		int r;
		bool connect;
		const char *host;
		unsigned port;
		const char *path;
	} t[] = {
		{ "CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n", 0, true, "pypi.org", 443, NULL },
		{ "CONNECT [::1]:8443 HTTP/1.1\r\n\r\n", 0, true, "::1", 8443, NULL },
		{ "CONNECT pypi.org HTTP/1.1\r\n\r\n", -EINVAL, false, NULL, 0, NULL }, /* CONNECT needs a port */
		{ "CONNECT pypi.org:0 HTTP/1.1\r\n\r\n", -EINVAL, false, NULL, 0, NULL },
		{ "CONNECT pypi.org:99999 HTTP/1.1\r\n\r\n", -EINVAL, false, NULL, 0, NULL },
		{ "CONNECT user@pypi.org:443 HTTP/1.1\r\n\r\n", -EINVAL, false, NULL, 0, NULL },
		{ "CONNECT ::1:443 HTTP/1.1\r\n\r\n", -EINVAL, false, NULL, 0, NULL },
		{ "GET http://pypi.org/simple/x?y=1 HTTP/1.1\r\nHost: pypi.org\r\n\r\n", 0, false, "pypi.org", 80,
		  "/simple/x?y=1" },
		{ "GET http://pypi.org:8080 HTTP/1.0\n\n", 0, false, "pypi.org", 8080, "" },
		{ "GET HTTP://Pypi.org/ HTTP/1.1\r\n\r\n", 0, false, "Pypi.org", 80, "/" },
		{ "GET https://pypi.org/ HTTP/1.1\r\n\r\n", -EPROTONOSUPPORT, false, NULL, 0, NULL },
		{ "GET ftp://pypi.org/ HTTP/1.1\r\n\r\n", -EPROTONOSUPPORT, false, NULL, 0, NULL },
		{ "GET /simple HTTP/1.1\r\n\r\n", -EINVAL, false, NULL, 0, NULL },        /* origin form */
		{ "GET http://pypi.org/ HTTP/2.0\r\n\r\n", -EINVAL, false, NULL, 0, NULL },
		{ "GET http://pypi.org/ HTTP/1.1\r\n", -EAGAIN, false, NULL, 0, NULL },   /* head not complete */
		{ "get http://pypi.org/ HTTP/1.1\r\n\r\n", -EINVAL, false, NULL, 0, NULL },
		{ "GET  http://pypi.org/ HTTP/1.1\r\n\r\n", -EINVAL, false, NULL, 0, NULL },
		{ "GET http://pypi.org%2f@evil/ HTTP/1.1\r\n\r\n", -EINVAL, false, NULL, 0, NULL },
		{ "GET http://a@evil.com/ HTTP/1.1\r\n\r\n", -EINVAL, false, NULL, 0, NULL },
	};

	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		struct corral_egress_req rq;
		int r = corral_egress_parse(t[i].in, strlen(t[i].in), &rq);

		if (r != t[i].r)
			fail_msg("row %zu (%.40s): %d, expected %d", i, t[i].in, r, t[i].r);
		if (r != 0)
			continue;
		assert_int_equal(rq.connect, t[i].connect);
		assert_string_equal(rq.host, t[i].host);
		assert_int_equal(rq.port, t[i].port);
		if (t[i].path) {
			assert_int_equal(rq.path_len, strlen(t[i].path));
			assert_memory_equal(t[i].in + rq.path_off, t[i].path, rq.path_len);
		}
		assert_true(rq.head_len == strlen(t[i].in));
	}
	{
		/* A head that never ends is refused at the cap, not buffered for ever. */
		char *big = malloc(CORRAL_EGRESS_HEAD_MAX + 10);
		struct corral_egress_req rq;

		assert_non_null(big);
		memset(big, 'a', CORRAL_EGRESS_HEAD_MAX + 10);
		memcpy(big, "CONNECT a.org:443 HTTP/1.1\r\nX: ", 31);
		assert_int_equal(corral_egress_parse(big, CORRAL_EGRESS_HEAD_MAX + 10, &rq), -EINVAL);
		free(big);
	}
	assert_true(corral_egress_hop_header("Proxy-Authorization: x", 22));
	assert_true(corral_egress_hop_header("connection: keep-alive", 22));
	assert_false(corral_egress_hop_header("Host: pypi.org", 14));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_internal),
		cmocka_unit_test(test_request),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
