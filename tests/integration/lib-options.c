/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The run options through the library (root and nobody), as a C caller or
 * a session uses them on one sandbox:
 *  - corral_exec_opts.cwd per call, over the policy's cwd; an escaping one
 *    fails that call (CORRAL_E_ESCAPE) and runs nothing, the next call runs;
 *  - -c through corral_sandbox_shell() (bash where present);
 *  - HOME the run's own, not the root;
 *  - the policy's audit: one line per call, its run_id the result's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corral.h"
#include "tests/common.h"

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

static char *slurp(const char *path)
{
	static char buf[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

int main(void)
{
	struct corral_policy *p = NULL;
	struct corral_sandbox *sb = NULL;
	struct corral_error err = {};
	struct corral_result res = CORRAL_RESULT_INIT;
	char root[] = "/tmp/corral-libopt.XXXXXX", logdir[] = "/tmp/corral-libopt-log.XXXXXX";
	char path[256], audit[256], want[512], id[2][33];
	const char *shell;
	int r;

	if (!mkdtemp(root) || !mkdtemp(logdir))
		return 1;
	chmod(root, 0755);
	snprintf(path, sizeof(path), "%s/src/a", root);
	snprintf(want, sizeof(want), "%s/src", root);
	if (mkdir(want, 0755) < 0 || mkdir(path, 0755) < 0)
		return 1;
	if (geteuid() == 0) {
		chown(root, 65534, 65534);
		chown(want, 65534, 65534);
		chown(path, 65534, 65534);
	}
	snprintf(audit, sizeof(audit), "%s/audit.jsonl", logdir);
	if (corral_policy_new(&p) < 0 || corral_policy_set(p, "root", root, &err) < 0 ||
	    corral_policy_set(p, "cwd", "src", &err) < 0 || corral_policy_set(p, "audit", audit, &err) < 0) {
		printf("policy: %s\n", err.message);
		return 1;
	}
	if (corral_sandbox_new(p, &sb, &err) < 0) {
		printf("sandbox: %s\n", err.message);
		if (err.code == CORRAL_E_UNENFORCEABLE)
			skip_or_fail(err.message);
		return 1;
	}

	/* The policy's cwd, then a call's own. */
	r = corral_sandbox_exec(sb, &CORRAL_EXEC_OPTS(.argv = (const char *const[]){ "pwd", NULL }, .capture = true),
				&res, &err);
	snprintf(want, sizeof(want), "%s/src\n", root);
	CHECK(r == 0 && res.stdout_buf && strcmp(res.stdout_buf, want) == 0, "cwd: the policy's (src): %s",
	      res.stdout_buf ? res.stdout_buf : err.message);
	snprintf(id[0], sizeof(id[0]), "%s", res.run_id);
	corral_result_clear(&res);
	r = corral_sandbox_exec(sb, &CORRAL_EXEC_OPTS(.shell = "pwd", .capture = true, .cwd = "src/a"), &res, &err);
	snprintf(want, sizeof(want), "%s/src/a\n", root);
	CHECK(r == 0 && res.stdout_buf && strcmp(res.stdout_buf, want) == 0, "cwd: a call's own (src/a) wins: %s",
	      res.stdout_buf ? res.stdout_buf : err.message);
	snprintf(id[1], sizeof(id[1]), "%s", res.run_id);
	corral_result_clear(&res);

	/* An escaping cwd fails that call, runs nothing; the sandbox goes on. */
	snprintf(path, sizeof(path), "%s/escaped", root);
	memset(&err, 0, sizeof(err));
	r = corral_sandbox_exec(sb, &CORRAL_EXEC_OPTS(.argv = (const char *const[]){ "touch", path, NULL },
						      .capture = true, .cwd = "src/../.."),
				&res, &err);
	CHECK(r < 0 && err.code == CORRAL_E_ESCAPE && strncmp(err.message, "cwd ", 4) == 0,
	      "cwd: src/../.. is CORRAL_E_ESCAPE naming cwd (r %d: %s)", r, err.message);
	CHECK(access(path, F_OK) < 0, "cwd: ... and nothing ran");
	corral_result_clear(&res);

	/* -c: the shell corral_sandbox_shell names. */
	shell = corral_sandbox_shell(sb);
	r = corral_sandbox_exec(sb, &CORRAL_EXEC_OPTS(.shell = "echo $0", .capture = true), &res, &err);
	snprintf(want, sizeof(want), "%s\n", shell ? shell : "?");
	CHECK(r == 0 && res.stdout_buf && strcmp(res.stdout_buf, want) == 0, "shell: -c runs %s", shell);
	CHECK(access("/bin/bash", X_OK) < 0 || strcmp(shell, "/bin/bash") == 0, "shell: bash where it exists");
	corral_result_clear(&res);

	/* HOME: the run's own. */
	r = corral_sandbox_exec(sb, &CORRAL_EXEC_OPTS(.shell = "[ \"$HOME\" = \"$TMPDIR\" ] && touch ~/.h && echo ok",
						      .capture = true),
				&res, &err);
	snprintf(path, sizeof(path), "%s/.h", root);
	CHECK(r == 0 && res.stdout_buf && strcmp(res.stdout_buf, "ok\n") == 0 && access(path, F_OK) < 0,
	      "home: HOME is the run's tmp, and ~/.h is not in the root");
	corral_result_clear(&res);

	/* Audit: five calls, five lines; the first two carry the results' run ids. */
	{
		const char *log = slurp(audit);
		int lines = 0;

		for (const char *c = log; *c; c++)
			lines += *c == '\n';
		CHECK(lines == 5, "audit: one line per call, the refused one included (%d)", lines);
		snprintf(want, sizeof(want), "{\"run_id\": \"%s\", \"session_id\": null, \"tag\": null, \"tool\": \"run\", "
			 "\"argv\": [\"pwd\"], \"cwd\": \"src\"", id[0]);
		CHECK(strncmp(log, want, strlen(want)) == 0, "audit: the first line names the result's run_id and argv");
		snprintf(want, sizeof(want), "{\"run_id\": \"%s\", \"session_id\": null, \"tag\": null, \"tool\": \"run\", "
			 "\"command\": \"pwd\", \"cwd\": \"src/a\"", id[1]);
		CHECK(strstr(log, want) != NULL, "audit: the second names its -c command and its own cwd");
		CHECK(strstr(log, "\"cwd\": \"src/../..\"") && strstr(log, "\"error\": {\"code\": \"escape\""),
		      "audit: the refused call's line says escape");
	}

	corral_sandbox_free(sb);
	corral_policy_free(p);
	unlink(audit);
	rmdir(logdir);
	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	if (system(path) != 0)
		printf("# could not remove %s\n", root);
	printf("# %d failures\n", failures);
	return failures ? 1 : 0;
}
