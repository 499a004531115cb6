/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * corral_sandbox_exec from several threads on one sandbox object: every
 * run gets its own output and status, a run that leaves a daemon behind
 * does not disturb the others (each run's sweep kills only its own), and
 * nothing is left when all are done. Runs as root (root dir handed to
 * nobody) and as nobody.
 */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corral.h"
#include "tests/integration/sandbox-fixture.h"

#define THREADS 4
#define RUNS 15

static struct corral_sandbox *sb;
static int failures;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((format(printf, 1, 2))) static void failf(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&lock);
	printf("FAIL ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failures++;
	pthread_mutex_unlock(&lock);
}

static void *worker(void *arg)
{
	long id = (long)arg;

	for (int i = 0; i < RUNS; i++) {
		struct corral_result res = CORRAL_RESULT_INIT;
		struct corral_error err = {};
		char cmd[256], want[64];
		int code = (int)(id * 10 + i % 7);

		/* Odd runs leave a daemon that would hold the pipes and outlive the run. */
		snprintf(cmd, sizeof(cmd), "%s echo t%ld-r%d; sleep 0.01; exit %d",
			 i % 2 ? "setsid sleep 30 >/dev/null 2>&1 & (sleep 31 &);" : "", id, i, code);
		snprintf(want, sizeof(want), "t%ld-r%d\n", id, i);
		if (corral_sandbox_exec(sb, &CORRAL_EXEC_OPTS(.shell = cmd, .capture = true, .timeout = 20), &res,
					&err) < 0) {
			failf("exec: %s (%ld)", err.message, id);
			continue;
		}
		if (!res.exited || res.exit_status != code)
			failf("run %s: exit status %d", want, res.exited ? res.exit_status : -1);
		if (!res.stdout_buf || strcmp(res.stdout_buf, want) != 0)
			failf("stdout %s (thread %ld)", res.stdout_buf ? res.stdout_buf : "(null)", id);
		if (res.wall_ms > 5000)
			failf("run %s took %ld ms (a leftover held it)", want, (long)res.wall_ms);
		corral_result_clear(&res);
	}
	return NULL;
}

/*
 * A run whose setsid daemon must survive the other threads' runs ending
 * meanwhile (their sweeps): where the run has cgroups, each sweep tells
 * its own processes by them. Without cgroups another run's sweep may take
 * it (docs/threat-model.md), so it is only reported then.
 */
static void *keeper(void *arg)
{
	struct corral_result res = CORRAL_RESULT_INIT;
	struct corral_error err = {};
	/*
	 * The subshell exits at once: the daemon is re-parented to this
	 * process, an orphan to sweep. With a zombie-leader helper, a second
	 * daemon whose main thread has exited (/proc says 'Z') while another
	 * thread rewrites zl.beat: alive is alive, not a zombie to take.
	 */
	const char *cmd = arg ?
		"(setsid sleep 7.25 >/dev/null 2>&1 & echo $! > keeper.pid); "
		"(setsid ./zombie-leader zl.beat >/dev/null 2>&1 &); sleep 2; "
		"kill -0 $(cat keeper.pid) && echo alive || echo killed; rm -f keeper.pid zl.beat; sleep 0.35; "
		"[ -e zl.beat ] && echo alive || echo killed; rm -f zl.beat zombie-leader; "
		"grep -q /corral- /proc/self/cgroup && echo cgroup || echo none" :
		"(setsid sleep 7.25 >/dev/null 2>&1 & echo $! > keeper.pid); sleep 2; "
		"kill -0 $(cat keeper.pid) && echo alive || echo killed; rm -f keeper.pid; echo alive; "
		"grep -q /corral- /proc/self/cgroup && echo cgroup || echo none";

	if (corral_sandbox_exec(sb, &CORRAL_EXEC_OPTS(.shell = cmd, .capture = true, .timeout = 20), &res, &err) < 0) {
		failf("keeper exec: %s", err.message);
		return NULL;
	}
	if (!res.stdout_buf || (strcmp(res.stdout_buf, "alive\nalive\ncgroup\n") != 0 &&
				strncmp(res.stdout_buf, "alive\nalive\nnone", 17) != 0 &&
				!strstr(res.stdout_buf, "none")))
		failf("keeper: its daemon was killed by another run's sweep: %s",
		      res.stdout_buf ? res.stdout_buf : "(null)");
	else
		printf("keeper: %s", res.stdout_buf);
	corral_result_clear(&res);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t k;
	const char *zl = argc > 1 ? argv[1] : NULL;
	struct corral_policy *p = NULL;
	char root[] = "/tmp/corral-threads.XXXXXX";
	pthread_t t[THREADS];

	if (fixture_sandbox(root, &p, &sb) < 0)
		return 1;
	if (zl) {
		char cmd[4096];

		/* In the root, for the keeper's run: the sandbox does not read the build directory. */
		snprintf(cmd, sizeof(cmd), "cp '%s' '%s/zombie-leader' && chmod 755 '%s/zombie-leader'", zl, root, root);
		if (system(cmd) != 0)
			zl = NULL;
	}
	pthread_create(&k, NULL, keeper, (void *)zl);
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_join(k, NULL);
	corral_sandbox_free(sb);
	corral_policy_free(p);
	rmdir(root);

	/* No daemon of any run is left: none of our processes is still running. */
	{
		char buf[256];
		FILE *f = popen("pgrep -f '^(sleep (3[01]|7\\.25)|\\./zombie-leader zl\\.beat)$' -u 65534,$(id -u) -P 1,$PPID,$$ 2>/dev/null | head -3", "r");
		if (f && fgets(buf, sizeof(buf), f)) {
			printf("FAIL a daemon survived: pid %s", buf);
			failures++;
		}
		if (f)
			pclose(f);
	}
	printf("%d threads x %d runs, %d failures\n", THREADS, RUNS, failures);
	return failures ? 1 : 0;
}
