/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library in a host of its own kind (root and nobody):
 *  - max_output SIZE_MAX ("no cap") captures everything, no overflow;
 *  - a host with no_new_privs (systemd NoNewPrivileges=, docker
 *    no-new-privileges) keeps its own children: the sweep that kills a
 *    run's leftovers must not take them, while it still takes the run's
 *    setsid'd daemon (the control);
 *  - a host whose SIGCHLD is SIG_IGN gets an error, never a made-up status;
 *  - the header's version macros are the library's version; a result
 *    whose sz is not set is refused, and the library writes nothing
 *    into it (control: the same result with sz set runs).
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "corral.h"
#include "tests/integration/sandbox-fixture.h"

static int failures;

#define CHECK(cond, ...)                          \
	do {                                      \
		if (cond) {                       \
			printf("ok - ");          \
		} else {                          \
			printf("FAIL - ");        \
			failures++;               \
		}                                 \
		printf(__VA_ARGS__);              \
		printf("\n");                     \
	} while (0)

static bool daemon_alive(const char *marker)
{
	char cmd[128], buf[64];
	FILE *f;
	bool alive;

	snprintf(cmd, sizeof(cmd), "pgrep -f '^sleep %s$'", marker);
	f = popen(cmd, "r");
	alive = f && fgets(buf, sizeof(buf), f);
	if (f)
		pclose(f);
	return alive;
}

int main(void)
{
	struct corral_policy *p = NULL;
	struct corral_sandbox *sb = NULL;
	struct corral_error err = {};
	struct corral_result res = CORRAL_RESULT_INIT;
	char root[] = "/tmp/corral-host.XXXXXX", marker[32], cmd[256];
	pid_t kid;
	int r;

	if (fixture_sandbox(root, &p, &sb) < 0)
		return 1;

	{
		char v[64];

		snprintf(v, sizeof(v), "%d.%d.%d", CORRAL_VERSION_MAJOR, CORRAL_VERSION_MINOR, CORRAL_VERSION_MICRO);
		CHECK(strcmp(v, corral_version()) == 0 && strcmp(CORRAL_VERSION_STRING, corral_version()) == 0 &&
		      CORRAL_VERSION_AT_LEAST(CORRAL_VERSION_MAJOR, CORRAL_VERSION_MINOR, 0) &&
		      !CORRAL_VERSION_AT_LEAST(CORRAL_VERSION_MAJOR + 1, 0, 0),
		      "header version %s (%s) is the library's %s", v, CORRAL_VERSION_STRING, corral_version());
	}
	{
		struct corral_result unsized;

		memset(&unsized, 0x5a, sizeof(unsized));
		unsized.sz = 0;
		r = corral_sandbox_exec(sb, &CORRAL_EXEC_OPTS(.shell = "echo ran", .capture = true), &unsized, &err);
		CHECK(r == -EINVAL && err.code == CORRAL_E_USAGE && strstr(err.message, "sizeof(struct corral_result)") &&
		      unsized.exit_status == 0x5a5a5a5a && unsized.sz == 0,
		      "result with sz 0: refused, untouched (r %d: %s)", r, err.message);
		corral_result_clear(&unsized); /* nothing to free: a no-op */
		unsized.sz = sizeof(unsized);
		r = corral_sandbox_exec(sb, &CORRAL_EXEC_OPTS(.shell = "echo ran", .capture = true), &unsized, &err);
		CHECK(r == 0 && unsized.exited && unsized.stdout_buf && strcmp(unsized.stdout_buf, "ran\n") == 0 &&
		      unsized.sz == sizeof(unsized), "control: the same result with sz set runs (r %d)", r);
		corral_result_clear(&unsized);
		CHECK(unsized.sz == sizeof(unsized) && !unsized.stdout_buf, "corral_result_clear keeps sz, frees the rest");
	}

	/* max_output SIZE_MAX: everything captured (under ASan, an overflow would abort). */
	r = corral_sandbox_exec(sb,
				&CORRAL_EXEC_OPTS(.shell = "head -c 200000 /dev/zero | tr '\\0' a", .capture = true,
						  .max_output = SIZE_MAX),
				&res, &err);
	CHECK(r == 0 && res.exited && res.exit_status == 0 && res.stdout_len == 200000 && !res.stdout_truncated,
	      "max_output SIZE_MAX: 200000 bytes captured whole (r %d, len %zu)", r, res.stdout_len);
	corral_result_clear(&res);

	/* A timeout that is no number is refused before anything runs. */
	r = corral_sandbox_exec(sb, &CORRAL_EXEC_OPTS(.shell = "true", .capture = true, .timeout = NAN), &res, &err);
	CHECK(r < 0 && err.code == CORRAL_E_USAGE, "timeout NaN: a usage error (r %d: %s)", r, err.message);
	corral_result_clear(&res);

	/* A host with no_new_privs and a child of its own. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		printf("PR_SET_NO_NEW_PRIVS: %s\n", strerror(errno));
		return 1;
	}
	kid = fork();
	if (kid == 0) {
		pause();
		_exit(0);
	}
	snprintf(marker, sizeof(marker), "30%d.5", (int)getpid() % 1000);
	snprintf(cmd, sizeof(cmd), "setsid sleep %s >/dev/null 2>&1 & (sleep %s.1 &); echo ran", marker, marker);
	r = corral_sandbox_exec(sb, &CORRAL_EXEC_OPTS(.shell = cmd, .capture = true, .timeout = 20), &res, &err);
	CHECK(r == 0 && res.exited && res.exit_status == 0 && res.stdout_buf && strcmp(res.stdout_buf, "ran\n") == 0,
	      "no_new_privs host: the run ran (r %d)", r);
	corral_result_clear(&res);
	CHECK(kill(kid, 0) == 0 && waitpid(kid, NULL, WNOHANG) == 0,
	      "no_new_privs host: its own child survived the run's sweep, and is still its to wait for");
	CHECK(!daemon_alive(marker), "control: the run's setsid'd daemon was killed");
	kill(kid, SIGKILL);
	CHECK(waitpid(kid, NULL, 0) == kid, "no_new_privs host: reaped its own child");

	/* SIGCHLD ignored: the kernel reaps the main process; an error, not a status. */
	signal(SIGCHLD, SIG_IGN);
	r = corral_sandbox_exec(sb, &CORRAL_EXEC_OPTS(.shell = "exit 3", .capture = true), &res, &err);
	CHECK(r < 0 && strstr(err.message, "another waiter"),
	      "SIGCHLD ignored: an error (r %d, exited %d, status %d: %s)", r, res.exited, res.exit_status,
	      r < 0 ? err.message : "");
	corral_result_clear(&res);
	signal(SIGCHLD, SIG_DFL);
	r = corral_sandbox_exec(sb, &CORRAL_EXEC_OPTS(.shell = "exit 3", .capture = true), &res, &err);
	CHECK(r == 0 && res.exited && res.exit_status == 3, "control: with SIGCHLD default, exit 3 is 3");
	corral_result_clear(&res);

	corral_sandbox_free(sb);
	corral_policy_free(p);
	rmdir(root);
	printf("# %d failures\n", failures);
	return failures ? 1 : 0;
}
