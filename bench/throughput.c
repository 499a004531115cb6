/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * throughput — in-process execs per second of /bin/true.
 *
 *   throughput [-d SECONDS] [-r ROOT] [-p POLICY]
 *
 * For each launcher (a cached corral sandbox — corral_sandbox_new once,
 * corral_sandbox_exec per command —, posix_spawn, fork+execve) and each of
 * 1 and 2 threads, runs /bin/true back to back for SECONDS in total (default
 * 2; in ten slices taking turns with the other launchers) and prints CSV: mode,threads,execs,seconds,execs_per_s,status. Threads share
 * one sandbox object (corral_sandbox_exec is thread-safe on one sandbox).
 * A launcher that cannot run prints one line with execs 0 and status
 * "unavailable: <why>" instead of a number.
 *
 * ROOT is the confinement root (default: a fresh directory under /tmp,
 * handed to nobody when running as root, since corral then runs commands
 * as nobody and needs the root writable by them).
 */
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "corral.h"

extern char **environ;

enum mode { MODE_CORRAL, MODE_SPAWN, MODE_FORK };
static const char *const mode_name[] = { "corral_sandbox_exec", "posix_spawn", "fork_execve" };

#define SLICES 10

static char *const true_argv[] = { (char *)"/bin/true", NULL };

struct worker {
	pthread_t thread;
	enum mode mode;
	struct corral_sandbox *sb;
	double seconds;
	uint64_t execs;
	int error;
	char why[600];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int wait_ok(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -ECHILD;
}

static int one_exec(struct worker *w, const posix_spawn_file_actions_t *fa)
{
	pid_t pid;
	int r;

	switch (w->mode) {
	case MODE_CORRAL: {
		static const char *const argv[] = { "/bin/true", NULL };
		struct corral_exec_opts o = CORRAL_EXEC_OPTS(.argv = argv);
		struct corral_result res = CORRAL_RESULT_INIT;
		struct corral_error err = { 0 };

		r = corral_sandbox_exec(w->sb, &o, &res, &err);
		if (r < 0) {
			snprintf(w->why, sizeof(w->why), "corral_sandbox_exec: %s", err.message);
			return r;
		}
		r = corral_result_exit_code(&res);
		corral_result_clear(&res);
		if (r != 0) {
			snprintf(w->why, sizeof(w->why), "/bin/true exited %d in the sandbox", r);
			return -ECHILD;
		}
		return 0;
	}
	case MODE_SPAWN:
		r = posix_spawn(&pid, true_argv[0], fa, NULL, true_argv, environ);
		if (r != 0) {
			snprintf(w->why, sizeof(w->why), "posix_spawn: %s", strerror(r));
			return -r;
		}
		return wait_ok(pid);
	case MODE_FORK:
		pid = fork();
		if (pid < 0) {
			snprintf(w->why, sizeof(w->why), "fork: %s", strerror(errno));
			return -errno;
		}
		if (pid == 0) {
			execve(true_argv[0], true_argv, environ);
			_exit(127);
		}
		return wait_ok(pid);
	}
	return -EINVAL;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	posix_spawn_file_actions_t fa;
	double end = now_s() + w->seconds;

	posix_spawn_file_actions_init(&fa);
	do {
		int r = one_exec(w, &fa);
		if (r < 0) {
			w->error = r;
			if (!w->why[0])
				snprintf(w->why, sizeof(w->why), "%s", strerror(-r));
			break;
		}
		w->execs++;
	} while (now_s() < end);
	posix_spawn_file_actions_destroy(&fa);
	return NULL;
}

struct tally {
	uint64_t execs;
	double seconds;
	bool failed;
	char why[600];
};

static void measure(enum mode mode, int threads, double seconds, struct corral_sandbox *sb,
		    struct tally *tl)
{
	struct worker w[2];
	double t0;

	if (tl->failed)
		return;
	memset(w, 0, sizeof(w));
	t0 = now_s();
	for (int i = 0; i < threads; i++) {
		w[i].mode = mode;
		w[i].sb = sb;
		w[i].seconds = seconds;
		if (pthread_create(&w[i].thread, NULL, work, &w[i]) != 0) {
			fprintf(stderr, "throughput: pthread_create failed\n");
			exit(2);
		}
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(w[i].thread, NULL);
		tl->execs += w[i].execs;
	}
	tl->seconds += now_s() - t0;
	for (int i = 0; i < threads; i++)
		if (w[i].error) {
			tl->failed = true;
			snprintf(tl->why, sizeof(tl->why), "%s", w[i].why);
		}
}

int main(int argc, char **argv)
{
	double seconds = 2;
	const char *root = NULL, *policy_file = NULL;
	char tmp[] = "/tmp/corral-bench-XXXXXX";
	struct corral_policy *p = NULL;
	struct corral_sandbox *sb = NULL;
	struct corral_error err = { 0 };
	char sb_why[600] = "";
	int opt, r;

	while ((opt = getopt(argc, argv, "d:r:p:")) != -1) {
		switch (opt) {
		case 'd':
			seconds = strtod(optarg, NULL);
			break;
		case 'r':
			root = optarg;
			break;
		case 'p':
			policy_file = optarg;
			break;
		default:
			fprintf(stderr, "usage: throughput [-d SECONDS] [-r ROOT] [-p POLICY]\n");
			return 2;
		}
	}
	if (!root) {
		if (!mkdtemp(tmp)) {
			perror("throughput: mkdtemp");
			return 2;
		}
		if (geteuid() == 0 && chown(tmp, 65534, 65534) < 0) {
			perror("throughput: chown");
			return 2;
		}
		root = tmp;
	}

	r = policy_file ? corral_policy_load_file(policy_file, &p, &err) : corral_policy_new(&p);
	if (r >= 0)
		r = corral_policy_set(p, "root", root, &err);
	if (r >= 0)
		r = corral_sandbox_new(p, &sb, &err);
	if (r < 0)
		snprintf(sb_why, sizeof(sb_why), "corral_sandbox_new: %s",
			 err.message[0] ? err.message : strerror(-r));

	/*
	 * The launchers take turns in short slices, so drift over the run
	 * spreads evenly over all of them, as in the latency driver.
	 */
	printf("mode,threads,execs,seconds,execs_per_s,status\n");
	for (int threads = 1; threads <= 2; threads++) {
		struct tally tl[3];

		memset(tl, 0, sizeof(tl));
		if (!sb) {
			tl[MODE_CORRAL].failed = true;
			snprintf(tl[MODE_CORRAL].why, sizeof(tl[MODE_CORRAL].why), "%s", sb_why);
		}
		for (int s = 0; s < SLICES; s++)
			for (int m = 0; m < 3; m++)
				measure((enum mode)m, threads, seconds / SLICES, sb, &tl[m]);
		for (int m = 0; m < 3; m++) {
			if (tl[m].failed)
				printf("%s,%d,0,%.3f,0,\"unavailable: %s\"\n", mode_name[m], threads,
				       tl[m].seconds, tl[m].why);
			else
				printf("%s,%d,%llu,%.3f,%.1f,ok\n", mode_name[m], threads,
				       (unsigned long long)tl[m].execs, tl[m].seconds,
				       (double)tl[m].execs / tl[m].seconds);
		}
		fflush(stdout);
	}
	corral_sandbox_free(sb);
	corral_policy_free(p);
	if (root == tmp)
		rmdir(tmp);
	return 0;
}
