/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* corral run */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/cli.h"

/*
 * SIGTERM/SIGINT/SIGHUP/SIGQUIT to corral cancel the run: the handler
 * writes the signal number to a self-pipe the engine polls, the engine
 * kills and reaps the whole tree, then corral dies of the same signal.
 */
static int cancel_pipe[2] = { -1, -1 };
static volatile sig_atomic_t cancel_signo;
static const int cancel_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT };

static void on_cancel(int sig)
{
	int saved = errno;
	unsigned char b = (unsigned char)sig;
	ssize_t n __attribute__((unused));

	cancel_signo = sig;
	n = write(cancel_pipe[1], &b, 1);
	errno = saved;
}

static bool install_cancel(void)
{
	struct sigaction sa = { .sa_handler = on_cancel };

	if (pipe2(cancel_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return false;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(cancel_signals) / sizeof(cancel_signals[0]); i++)
		sigaction(cancel_signals[i], &sa, NULL);
	return true;
}

static void die_of_cancel_signal(void)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };
	int sig = cancel_signo;
	sigset_t set;

	if (!sig)
		return;
	fflush(stdout);
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	_exit(128 + sig);
}

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

	{
		bool cancellable = install_cancel();

		r = corral_sandbox_exec(sb,
					&CORRAL_EXEC_OPTS(.argv = c.shell ? NULL : (const char *const *)argv + optind_,
							  .shell = c.shell, .capture = c.json,
							  .stdin_passthrough = true,
							  .has_cancel_fd = cancellable,
							  .cancel_fd = cancel_pipe[0]),
					&res, &err);
	}
	if (cancel_signo) {
		corral_result_clear(&res);
		corral_sandbox_free(sb);
		cli_common_clear(&c);
		die_of_cancel_signal();
	}
	if (r < 0) {
		code = cli_fail_err(c.json, &err);
		goto out;
	}
	if (c.json) {
		/* Streamed: the text can be several times the captured bytes. */
		if (corral_result_json_fprint(&res, stdout) < 0 || fputc('\n', stdout) == EOF) {
			code = CLI_EXIT_ERROR;
			goto out;
		}
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
