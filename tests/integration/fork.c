/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library in a process that forks, or has stdio closed:
 *  - a fork of a process that already ran a command sweeps its own runs'
 *    orphans (the child subreaper flag is not inherited: it is set again);
 *  - forking while another thread runs commands never leaves the fork
 *    with corral's process-wide lock held (its run would hang for good);
 *  - a closed fd 0, 1 or 2 is an error that says so, not a run that
 *    fails as "chdir to the root: Not a directory" (reopened: the run
 *    works); a sandbox built while fd 0 was closed (its own fds take
 *    0..2) still enters its root;
 *  - a cancel fd that is not open is an error, not a cancelled run; so
 *    is a negative timeout (not the policy's, silently).
 * Runs as root (root dir handed to nobody) and as nobody.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "corral.h"
#include "tests/integration/sandbox-fixture.h"

static struct corral_sandbox *sb;
static int failures;
static volatile int stop;

__attribute__((format(printf, 1, 2))) static void failf(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failures++;
}

static int run(const char *cmd, struct corral_result *res, struct corral_error *err)
{
	*res = (struct corral_result)CORRAL_RESULT_INIT;
	return corral_sandbox_exec(sb, &CORRAL_EXEC_OPTS(.shell = cmd, .capture = true, .timeout = 20), res, err);
}

/* Wait up to |seconds| for |pid|; kill it and return -1 if it hangs. */
static int wait_bounded(pid_t pid, int seconds)
{
	int st;

	for (int i = 0; i < seconds * 20; i++) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		usleep(50 * 1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

/* In a fork: the daemon a run leaves is swept by the fork's own run. */
static void test_fork_sweeps(void)
{
	struct corral_result res = CORRAL_RESULT_INIT;
	struct corral_error err = {};
	pid_t pid;
	int code;

	if (run("true", &res, &err) < 0)
		failf("first run: %s", err.message);
	corral_result_clear(&res);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		long d = 0;

		if (run("(setsid sh -c 'echo $$ > fork-daemon.pid; exec sleep 30' >/dev/null 2>&1 &); sleep 0.3; "
			"cat fork-daemon.pid; rm -f fork-daemon.pid", &res, &err) < 0 ||
		    !res.stdout_buf || (d = strtol(res.stdout_buf, NULL, 10)) <= 0) {
			printf("FAIL fork: run: %s\n", err.message[0] ? err.message : "no daemon pid");
			_exit(1);
		}
		corral_result_clear(&res);
		if (kill((pid_t)d, 0) == 0 || errno != ESRCH) {
			printf("FAIL fork: the run's setsid daemon %ld outlived it (or is an unreaped zombie)\n", d);
			kill((pid_t)d, SIGKILL);
			_exit(1);
		}
		_exit(0);
	}
	code = wait_bounded(pid, 30);
	if (code != 0)
		failf("fork: a run in a fork of the caller (status %d)", code);
	else
		printf("ok - a fork's run sweeps its own orphans\n");
}

static void *spinner(void *arg)
{
	(void)arg;
	while (!stop) {
		struct corral_result res = CORRAL_RESULT_INIT;
		struct corral_error err = {};

		/* Leaves an orphan: each run sweeps (the lock held a while). */
		if (run("(true &); true", &res, &err) < 0)
			failf("spinner: %s", err.message);
		corral_result_clear(&res);
	}
	return NULL;
}

/* Forks while another thread runs and sweeps: every fork's run finishes. */
static void test_fork_while_running(void)
{
	pthread_t t;
	int hung = 0, failed = 0;

	stop = 0;
	pthread_create(&t, NULL, spinner, NULL);
	for (int i = 0; i < 20; i++) {
		pid_t pid;
		int code;

		usleep(7000 * (i % 5));
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			struct corral_result res = CORRAL_RESULT_INIT;
			struct corral_error err = {};

			if (run("echo forked", &res, &err) < 0 || !res.stdout_buf ||
			    strcmp(res.stdout_buf, "forked\n") != 0)
				_exit(1);
			_exit(0);
		}
		code = wait_bounded(pid, 20);
		hung += code < 0;
		failed += code > 0;
	}
	stop = 1;
	pthread_join(t, NULL);
	if (hung || failed)
		failf("fork while another thread runs: %d of 20 forks hung, %d failed", hung, failed);
	else
		printf("ok - 20 forks while another thread runs: every run finished\n");
}

/* Closed stdio: an error naming it, in a fork (the test's own stdio stays). */
static void test_closed_stdio(void)
{
	pid_t pid;
	int code;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct corral_result res = CORRAL_RESULT_INIT;
		struct corral_error err = {};
		int out = dup(1), r;

		close(0);
		r = run("true", &res, &err);
		if (r >= 0 || !strstr(err.message, "file descriptor 0")) {
			dprintf(out, "FAIL closed fd 0: rc %d, %s\n", r, err.message);
			_exit(1);
		}
		if (open("/dev/null", O_RDONLY) != 0)
			_exit(2);
		r = run("echo again", &res, &err);
		if (r < 0 || !res.stdout_buf || strcmp(res.stdout_buf, "again\n") != 0) {
			dprintf(out, "FAIL fd 0 reopened: %s\n", r < 0 ? err.message : "wrong output");
			_exit(1);
		}
		_exit(0);
	}
	code = wait_bounded(pid, 30);
	if (code != 0)
		failf("closed stdio (status %d)", code);
	else
		printf("ok - a closed fd 0 is an error naming it; reopened, the run works\n");
}

/* A sandbox built while fd 0 was closed keeps its root fd off 0..2. */
static void test_new_with_closed_stdin(const char *root)
{
	pid_t pid;
	int code;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct corral_policy *p = NULL;
		struct corral_sandbox *s2 = NULL;
		struct corral_result res = CORRAL_RESULT_INIT;
		struct corral_error err = {};
		int out = dup(1), r;

		close(0);
		if (corral_policy_new(&p) < 0 || corral_policy_set(p, "root", root, &err) < 0 ||
		    corral_sandbox_new(p, &s2, &err) < 0) {
			dprintf(out, "FAIL sandbox with fd 0 closed: %s\n", err.message);
			_exit(1);
		}
		/* fd 0 now holds one of the sandbox's own fds; the command's stdin is /dev/null. */
		r = corral_sandbox_exec(s2, &CORRAL_EXEC_OPTS(.shell = "pwd", .capture = true), &res, &err);
		if (r < 0 || !res.stdout_buf || strncmp(res.stdout_buf, root, strlen(root)) != 0) {
			dprintf(out, "FAIL run of a sandbox built with fd 0 closed: %s\n", r < 0 ? err.message : res.stdout_buf);
			_exit(1);
		}
		_exit(0);
	}
	code = wait_bounded(pid, 30);
	if (code != 0)
		failf("sandbox built with fd 0 closed (status %d)", code);
	else
		printf("ok - a sandbox built with fd 0 closed runs in its root\n");
}

static void test_bad_cancel_fd(void)
{
	struct corral_result res = CORRAL_RESULT_INIT;
	struct corral_error err = {};
	int r = corral_sandbox_exec(sb,
				    &CORRAL_EXEC_OPTS(.shell = "echo ran", .capture = true, .has_cancel_fd = true,
						      .cancel_fd = 987),
				    &res, &err);

	if (r != -EBADF || !strstr(err.message, "cancel_fd"))
		failf("a cancel fd that is not open: rc %d, signal %d, %s", r, res.signal, err.message);
	else
		printf("ok - a cancel fd that is not open is an error\n");
	corral_result_clear(&res);
	r = corral_sandbox_exec(sb, &CORRAL_EXEC_OPTS(.shell = "echo ran", .capture = true, .timeout = -1), &res, &err);
	if (r != -EINVAL || !strstr(err.message, "negative"))
		failf("a negative timeout: rc %d, %s", r, err.message);
	else
		printf("ok - a negative timeout is an error\n");
	corral_result_clear(&res);
}

int main(void)
{
	struct corral_policy *p = NULL;
	char root[] = "/tmp/corral-fork.XXXXXX";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (fixture_sandbox(root, &p, &sb) < 0)
		return 1;
	test_fork_sweeps();
	test_fork_while_running();
	test_closed_stdio();
	test_new_with_closed_stdin(root);
	test_bad_cancel_fd();
	corral_sandbox_free(sb);
	corral_policy_free(p);
	rmdir(root);
	printf("%d failures\n", failures);
	return failures ? 1 : 0;
}
