/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * interleave — the whole-command latency driver of bench/run.sh.
 *
 *   interleave [-n ROUNDS] [-w WARMUP] [-s SEED] [-e DIR] SPECFILE
 *       Round-robins the rows of SPECFILE and prints one CSV line per run:
 *       row,round,conc,wall_us,batch_us,status,maxrss_kb,cpu_us
 *       (cpu_us: user + system time of the child and every descendant it
 *       reaped, from wait4 — what the launch cost in CPU, which other load on
 *       the machine inflates far less than wall time)
 *   interleave --peak-rss COMMAND [ARG...]
 *       Runs COMMAND once and prints a JSON object with its wall time,
 *       wait4's ru_maxrss and the largest VmHWM sampled from
 *       /proc/PID/status while it ran (the process's own peak only).
 *
 * SPECFILE holds one row per line, tab-separated:
 *       NAME  EVERY  CONC  ARG0  [ARG...]
 * Round r runs, in a fresh random order, every row whose EVERY divides r,
 * so slow rows (docker) can take fewer samples without leaving the
 * rotation. A row with CONC > 1 starts CONC copies back to back and waits
 * for all of them: each copy's own latency is one sample, and batch_us is
 * the time from the first start to the last exit. Interleaving rows within
 * one run is the point: clock, thermal and page-cache drift hit every row
 * alike instead of whichever one hyperfine happened to run last.
 *
 * Children get /dev/null as stdin and stdout, and this process's
 * environment; stderr is /dev/null too, or with -e DIR appended to
 * DIR/NAME.stderr, so a failing run leaves its reason behind (the
 * launchers measured here print nothing on success). Rounds below WARMUP run but print nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct row {
	char *name;
	unsigned every;
	unsigned conc;
	char **argv;
	posix_spawn_file_actions_t fa;
};

_Noreturn __attribute__((format(printf, 1, 2))) static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "interleave: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p)
		die("%s", "out of memory");
	return p;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rng_next(void)
{
	/* xorshift64*: good enough to shuffle a dozen rows. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1du;
}

static int parse_spec(const char *path, struct row **rows_out, size_t *n_out)
{
	FILE *f = fopen(path, "re");
	struct row *rows = NULL;
	size_t n = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	if (!f)
		die("cannot open %s", path);
	while ((len = getline(&line, &cap, f)) >= 0) {
		char *fields[4096];
		size_t nf = 0;
		char *save = NULL;

		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len == 0 || line[0] == '#')
			continue;
		for (char *t = strtok_r(line, "\t", &save); t && nf < 4095; t = strtok_r(NULL, "\t", &save))
			fields[nf++] = t;
		if (nf < 4)
			die("spec line needs NAME EVERY CONC ARG0: %s", line);
		rows = realloc(rows, (n + 1) * sizeof(*rows));
		if (!rows)
			die("%s", "out of memory");
		rows[n].name = strdup(fields[0]);
		rows[n].every = (unsigned)strtoul(fields[1], NULL, 10);
		rows[n].conc = (unsigned)strtoul(fields[2], NULL, 10);
		if (rows[n].every == 0 || rows[n].conc == 0)
			die("EVERY and CONC must be positive: %s", fields[0]);
		rows[n].argv = xmalloc((nf - 3 + 1) * sizeof(char *));
		for (size_t i = 3; i < nf; i++)
			rows[n].argv[i - 3] = strdup(fields[i]);
		n++;
	}
	free(line);
	fclose(f);
	*rows_out = rows;
	*n_out = n;
	return 0;
}

static void devnull_actions(posix_spawn_file_actions_t *fa, const char *err_path)
{
	posix_spawn_file_actions_init(fa);
	for (int fd = 0; fd <= 1; fd++)
		posix_spawn_file_actions_addopen(fa, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
	if (err_path)
		posix_spawn_file_actions_addopen(fa, 2, err_path, O_WRONLY | O_APPEND | O_CREAT, 0644);
	else
		posix_spawn_file_actions_addopen(fa, 2, "/dev/null", O_WRONLY, 0);
}

static int exit_code(int status)
{
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static void run_row(const struct row *r, unsigned round, bool print)
{
	pid_t *pids = xmalloc(r->conc * sizeof(pid_t));
	uint64_t *start = xmalloc(r->conc * sizeof(uint64_t));
	uint64_t *end = xmalloc(r->conc * sizeof(uint64_t));
	int *status = xmalloc(r->conc * sizeof(int));
	long *rss = xmalloc(r->conc * sizeof(long));
	double *cpu = xmalloc(r->conc * sizeof(double));
	uint64_t t0 = now_ns(), last = t0;
	unsigned started = 0;

	for (unsigned i = 0; i < r->conc; i++) {
		start[i] = now_ns();
		int e = posix_spawnp(&pids[i], r->argv[0], &r->fa, NULL, r->argv, environ);
		if (e != 0) {
			fprintf(stderr, "interleave: %s: spawn %s: %s\n", r->name, r->argv[0], strerror(e));
			pids[i] = -1;
			status[i] = 127;
			end[i] = start[i];
			rss[i] = 0;
			cpu[i] = 0;
			continue;
		}
		started++;
	}
	while (started > 0) {
		struct rusage ru;
		int st;
		pid_t p = wait4(-1, &st, 0, &ru);
		uint64_t t = now_ns();

		if (p < 0) {
			if (errno == EINTR)
				continue;
			die("wait4: %s", strerror(errno));
		}
		for (unsigned i = 0; i < r->conc; i++)
			if (pids[i] == p) {
				end[i] = t;
				status[i] = exit_code(st);
				rss[i] = ru.ru_maxrss;
				cpu[i] = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
					 (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
				started--;
				break;
			}
		if (t > last)
			last = t;
	}
	if (print)
		for (unsigned i = 0; i < r->conc; i++)
			printf("%s,%u,%u,%.3f,%.3f,%d,%ld,%.0f\n", r->name, round, r->conc,
			       (double)(end[i] - start[i]) / 1e3, (double)(last - t0) / 1e3,
			       status[i], rss[i], cpu[i]);
	free(pids);
	free(start);
	free(end);
	free(status);
	free(rss);
	free(cpu);
}

static long read_vmhwm(pid_t pid)
{
	char path[64], buf[4096];
	long kb = -1;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *p = strstr(buf, "\nVmHWM:");
	if (p)
		kb = strtol(p + 7, NULL, 10);
	return kb;
}

/*
 * wait4's ru_maxrss for a child that reaped children of its own is the
 * largest of its own and theirs, so it can name the wrong process; VmHWM
 * read while the child lives is the child's alone. Sampled every 2 ms: the
 * high-water mark only grows, so the last sample before exit is within
 * 2 ms of the true peak.
 */
static int peak_rss(char **argv)
{
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	struct timespec tick = { 0, 2000000 };
	long hwm = -1, samples = 0;
	uint64_t t0;
	pid_t pid;
	int st, e;

	devnull_actions(&fa, NULL);
	t0 = now_ns();
	e = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	if (e != 0)
		die("spawn: %s", strerror(e));
	for (;;) {
		pid_t p = wait4(pid, &st, WNOHANG, &ru);

		if (p == pid)
			break;
		if (p < 0 && errno != EINTR)
			die("wait4: %s", strerror(errno));
		long v = read_vmhwm(pid);
		if (v > hwm)
			hwm = v;
		samples++;
		nanosleep(&tick, NULL);
	}
	printf("{\"wall_ms\": %.3f, \"status\": %d, \"wait4_maxrss_kb\": %ld, \"vmhwm_kb\": %ld, \"samples\": %ld}\n",
	       (double)(now_ns() - t0) / 1e6, exit_code(st), ru.ru_maxrss, hwm, samples);
	posix_spawn_file_actions_destroy(&fa);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned rounds = 100, warmup = 3;
	const char *err_dir = NULL;
	struct row *rows;
	size_t n;
	int opt;

	if (argc > 2 && strcmp(argv[1], "--peak-rss") == 0)
		return peak_rss(argv + 2);
	while ((opt = getopt(argc, argv, "+n:w:s:e:")) != -1) {
		switch (opt) {
		case 'n':
			rounds = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'w':
			warmup = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 's':
			rng_state = strtoull(optarg, NULL, 10) | 1;
			break;
		case 'e':
			err_dir = optarg;
			break;
		default:
			die("%s", "usage: interleave [-n ROUNDS] [-w WARMUP] [-s SEED] [-e DIR] SPECFILE | --peak-rss CMD...");
		}
	}
	if (optind != argc - 1)
		die("%s", "usage: interleave [-n ROUNDS] [-w WARMUP] [-s SEED] [-e DIR] SPECFILE | --peak-rss CMD...");
	parse_spec(argv[optind], &rows, &n);
	if (n == 0)
		die("%s: no rows", argv[optind]);

	for (size_t i = 0; i < n; i++) {
		char *path = NULL;

		if (err_dir && asprintf(&path, "%s/%s.stderr", err_dir, rows[i].name) < 0)
			die("%s", "out of memory");
		devnull_actions(&rows[i].fa, path);
		free(path);
	}
	size_t *order = xmalloc(n * sizeof(size_t));
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	printf("row,round,conc,wall_us,batch_us,status,maxrss_kb,cpu_us\n");
	for (unsigned round = 0; round < warmup + rounds; round++) {
		unsigned r = round < warmup ? 0 : round - warmup;

		for (size_t i = 0; i < n; i++)
			order[i] = i;
		for (size_t i = n - 1; i > 0; i--) {
			size_t j = (size_t)(rng_next() % (i + 1));
			size_t t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		for (size_t i = 0; i < n; i++) {
			const struct row *row = &rows[order[i]];

			/* Warm-up rounds visit every row once, however slow. */
			if (round >= warmup && r % row->every != 0)
				continue;
			if (round < warmup && round > 0 && row->every > 1)
				continue;
			run_row(row, r, round >= warmup);
		}
		fflush(stdout);
	}
	for (size_t i = 0; i < n; i++)
		posix_spawn_file_actions_destroy(&rows[i].fa);
	return 0;
}
