/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * phases — what one uncached corral run costs, step by step, in-process.
 *
 *   phases [-n N] [-r ROOT] [NAME=POLICY.json ...]
 *
 * For the built-in default policy (NAME "default") and each given policy
 * file, N times (default 200): build the policy (load the file or take the
 * defaults, then set the root), corral_sandbox_new (open the paths, build
 * the Landlock ruleset, compile seccomp to BPF), one corral_sandbox_exec of
 * /bin/true, and corral_sandbox_free. Prints CSV:
 *   policy,phase,n,median_us,p90_us,status
 * The policies take turns, one iteration each, so drift is shared. A step
 * that fails prints one line with phase "unavailable" and the reason.
 * ROOT: as for throughput (default: a fresh directory under /tmp, owned by
 * nobody when running as root).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "corral.h"

enum { PH_POLICY, PH_SANDBOX_NEW, PH_EXEC, PH_FREE, PH_TOTAL, PH_COUNT };
static const char *const phase_name[PH_COUNT] = {
	"policy_build", "sandbox_new", "sandbox_exec", "sandbox_free", "total",
};

struct pol {
	const char *name;
	const char *file;
	double *t[PH_COUNT];
	char why[600];
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double pct(double *v, int n, double p)
{
	double k = (n - 1) * p / 100.0;
	int lo = (int)k, hi = lo + 1 < n ? lo + 1 : lo;

	return v[lo] + (v[hi] - v[lo]) * (k - lo);
}

static int one(struct pol *pl, const char *root, int i)
{
	static const char *const argv[] = { "/bin/true", NULL };
	struct corral_exec_opts o = CORRAL_EXEC_OPTS(.argv = argv);
	struct corral_result res = CORRAL_RESULT_INIT;
	struct corral_error err = { 0 };
	struct corral_policy *p = NULL;
	struct corral_sandbox *sb = NULL;
	double t[PH_COUNT + 1];
	int r;

	t[0] = now_us();
	r = pl->file ? corral_policy_load_file(pl->file, &p, &err) : corral_policy_new(&p);
	if (r >= 0)
		r = corral_policy_set(p, "root", root, &err);
	if (r < 0) {
		snprintf(pl->why, sizeof(pl->why), "policy: %s", err.message);
		corral_policy_free(p);
		return r;
	}
	t[1] = now_us();
	r = corral_sandbox_new(p, &sb, &err);
	if (r < 0) {
		snprintf(pl->why, sizeof(pl->why), "corral_sandbox_new: %s", err.message);
		corral_policy_free(p);
		return r;
	}
	t[2] = now_us();
	r = corral_sandbox_exec(sb, &o, &res, &err);
	t[3] = now_us();
	if (r < 0 || corral_result_exit_code(&res) != 0) {
		if (r < 0)
			snprintf(pl->why, sizeof(pl->why), "corral_sandbox_exec: %s", err.message);
		else
			snprintf(pl->why, sizeof(pl->why), "/bin/true exited %d", corral_result_exit_code(&res));
		corral_result_clear(&res);
		corral_sandbox_free(sb);
		corral_policy_free(p);
		return r < 0 ? r : -ECHILD;
	}
	corral_result_clear(&res);
	corral_sandbox_free(sb);
	corral_policy_free(p);
	t[4] = now_us();
	for (int k = 0; k < PH_TOTAL; k++)
		pl->t[k][i] = t[k + 1] - t[k];
	pl->t[PH_TOTAL][i] = t[4] - t[0];
	return 0;
}

int main(int argc, char **argv)
{
	char tmp[] = "/tmp/corral-bench-XXXXXX";
	const char *root = NULL;
	int n = 200, opt, npol;
	struct pol *pols;

	while ((opt = getopt(argc, argv, "n:r:")) != -1) {
		switch (opt) {
		case 'n':
			n = atoi(optarg);
			break;
		case 'r':
			root = optarg;
			break;
		default:
			fprintf(stderr, "usage: phases [-n N] [-r ROOT] [NAME=POLICY.json ...]\n");
			return 2;
		}
	}
	if (n < 1)
		n = 1;
	if (!root) {
		if (!mkdtemp(tmp) || (geteuid() == 0 && chown(tmp, 65534, 65534) < 0)) {
			perror("phases: scratch root");
			return 2;
		}
		root = tmp;
	}
	npol = 1 + argc - optind;
	pols = calloc((size_t)npol, sizeof(*pols));
	if (!pols)
		return 2;
	pols[0].name = "default";
	for (int k = 1; k < npol; k++) {
		char *a = argv[optind + k - 1], *eq = strchr(a, '=');

		if (!eq) {
			fprintf(stderr, "phases: expected NAME=FILE, got %s\n", a);
			return 2;
		}
		*eq = '\0';
		pols[k].name = a;
		pols[k].file = eq + 1;
	}
	for (int k = 0; k < npol; k++)
		for (int ph = 0; ph < PH_COUNT; ph++) {
			pols[k].t[ph] = calloc((size_t)n, sizeof(double));
			if (!pols[k].t[ph])
				return 2;
		}

	for (int i = 0; i < n; i++)
		for (int k = 0; k < npol; k++)
			if (!pols[k].why[0])
				one(&pols[k], root, i);

	printf("policy,phase,n,median_us,p90_us,status\n");
	for (int k = 0; k < npol; k++) {
		if (pols[k].why[0]) {
			printf("%s,unavailable,0,0,0,\"%s\"\n", pols[k].name, pols[k].why);
			continue;
		}
		for (int ph = 0; ph < PH_COUNT; ph++) {
			qsort(pols[k].t[ph], (size_t)n, sizeof(double), cmp_double);
			printf("%s,%s,%d,%.1f,%.1f,ok\n", pols[k].name, phase_name[ph], n,
			       pct(pols[k].t[ph], n, 50), pct(pols[k].t[ph], n, 90));
		}
	}
	if (root == tmp)
		rmdir(tmp);
	return 0;
}
