/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* corral run */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/cli.h"

int cli_run(int argc, char **argv)
{
	struct cli_common c;
	struct corral_error err = {};
	struct corral_sandbox *sb = NULL;
	struct corral_result res = {};
	const char *const *lines = NULL;
	int optind_, r, code;

	/*
	 * fds 0..2 must exist: otherwise the first pipe would take one of them
	 * and the command would find its output where its input should be.
	 */
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", fd ? O_WRONLY : O_RDONLY) < 0)
			return CLI_EXIT_ERROR;

	r = cli_parse_common(argc, argv, "run", true, &c, &optind_);
	if (r == -1)
		return 0;
	if (r)
		return r;
	if (!c.shell && optind_ >= argc) {
		code = cli_fail(c.json, CORRAL_E_USAGE, "run: missing command (give COMMAND or -c STRING)");
		goto out;
	}
	if (c.shell && optind_ < argc) {
		code = cli_fail(c.json, CORRAL_E_USAGE, "run: give either -c STRING or COMMAND, not both");
		goto out;
	}
	if (cli_default_root(c.policy, &err) < 0 || corral_sandbox_new(c.policy, &sb, &err) < 0) {
		code = cli_fail_err(c.json, &err);
		goto out;
	}
	for (size_t i = 0, n = corral_sandbox_dropped(sb, &lines); i < n; i++)
		fprintf(stderr, "corral: warning: best-effort: dropped %s\n", lines[i]);

	r = corral_sandbox_exec(sb,
				&CORRAL_EXEC_OPTS(.argv = c.shell ? NULL : (const char *const *)argv + optind_,
						  .shell = c.shell, .capture = c.json,
						  .stdin_passthrough = true),
				&res, &err);
	if (r < 0) {
		code = cli_fail_err(c.json, &err);
		goto out;
	}
	if (c.json) {
		char *s = corral_result_json(&res);
		if (!s) {
			code = cli_fail(true, CORRAL_E_INTERNAL, "out of memory");
			goto out;
		}
		fputs(s, stdout);
		fputc('\n', stdout);
		free(s);
		code = 0;
	} else {
		if (res.exec_errno)
			fprintf(stderr, "corral: %s: %s\n", c.shell ? "/bin/sh" : argv[optind_],
				res.exec_errno == ENOENT ? "command not found" : strerror(res.exec_errno));
		code = corral_result_exit_code(&res);
	}
out:
	corral_result_clear(&res);
	corral_sandbox_free(sb);
	cli_common_clear(&c);
	fflush(stdout);
	return code;
}
