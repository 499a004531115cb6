/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers for the seccomp tests: compile the real filter for a network mode
 * in the parent, run a check in a forked child that sets no_new_privs and
 * installs it through corral_seccomp_install(), and read the verdict.
 */
#ifndef CORRAL_TESTS_SC_TEST_H
#define CORRAL_TESTS_SC_TEST_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seccomp/seccomp.h"
#include "tests/common.h"

static int sc_failures, sc_passes;

#define SC_UNUSED __attribute__((unused))

SC_UNUSED static const char *sc_net_name(int net)
{
	return net == CORRAL_NET_NONE ? "none" : net == CORRAL_NET_LOOPBACK ? "loopback" : "host";
}

SC_UNUSED static void sc_require_seccomp(void)
{
	if (!corral_seccomp_available())
		skip_or_fail("seccomp filters are not available on this host");
}

/* The filter for |net| (Landlock ABI |abi|), compiled once per pair. */
SC_UNUSED static const struct corral_bpf *sc_filter(int net, int abi)
{
	static struct corral_bpf cache[3][2];
	struct corral_bpf *b = &cache[net][abi > 0];
	struct corral_policy p = { .network = net };
	struct corral_error err = { 0 };
	int r;

	if (b->len)
		return b;
	r = corral_seccomp_compile_abi(&p, abi, NULL, b, &err);
	if (r < 0 || b->len == 0) {
		fprintf(stderr, "compile (net %s, landlock %d) failed: %d %s\n", sc_net_name(net), abi, r,
			err.message);
		exit(1);
	}
	return b;
}

/* In the child: no_new_privs, then the filter. Exits 90+ on failure. */
SC_UNUSED static void sc_child_enter(const struct corral_bpf *b)
{
	int r;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		fprintf(stderr, "PR_SET_NO_NEW_PRIVS: %m\n");
		_exit(90);
	}
	r = corral_seccomp_install(b);
	if (r < 0) {
		fprintf(stderr, "corral_seccomp_install: %s\n", strerror(-r));
		_exit(91);
	}
}

/* Wait for |pid|; returns its wait status. */
SC_UNUSED static int sc_wait(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			perror("waitpid");
			exit(1);
		}
	return st;
}

SC_UNUSED _printf_(2, 3) static void sc_report(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		sc_passes++;
	else
		sc_failures++;
}

/*
 * In the child: check that a call returned |expect_err| (0: success,
 * any non-negative result). Prints the mismatch to stderr; returns 0 or 1.
 */
SC_UNUSED static int sc_expect(const char *what, long ret, int saved_errno, int expect_err)
{
	if (expect_err == 0 && ret >= 0)
		return 0;
	if (expect_err != 0 && ret < 0 && saved_errno == expect_err)
		return 0;
	if (ret < 0)
		fprintf(stderr, "  %s: failed with %s, expected %s\n", what, strerrorname_np(saved_errno),
			expect_err ? strerrorname_np(expect_err) : "success");
	else
		fprintf(stderr, "  %s: returned %ld, expected %s\n", what, ret, strerrorname_np(expect_err));
	return 1;
}

SC_UNUSED static int sc_finish(const char *name)
{
	printf("# %s: %d passed, %d failed\n", name, sc_passes, sc_failures);
	return sc_failures ? 1 : 0;
}

#endif
