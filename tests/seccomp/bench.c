/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cost of the filter per syscall: a tight loop of one syscall in a
 * forked child with no filter, with a one-instruction "allow" filter (the
 * fixed cost of being filtered at all), and with our filter built at
 * libseccomp optimize level 1 (priority-ordered list) and 2 (binary tree).
 * Rounds of the three modes are interleaved and the fastest round of each
 * kept: on a shared machine the minimum is the least noisy estimate.
 * Usage: seccomp-bench [ITERATIONS-PER-ROUND [ROUNDS]]   (default 200000 15)
 */
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/seccomp.h>
#include <time.h>

#define SECCOMP_RET_ALLOW_ SECCOMP_RET_ALLOW

#include "sc-test.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

enum call { GETPID, IOCTL_FIONREAD, PERSONALITY_QUERY, CLONE3 };
static const char *const call_names[] = { "getpid", "ioctl(FIONREAD)", "personality(query)",
					   "clone3 (ENOSYS)" };

static double loop(enum call c, long n, int fd)
{
	double t0 = now_ns();
	int v;

	for (long i = 0; i < n; i++) {
		switch (c) {
		case GETPID: syscall(SYS_getpid); break;
		case IOCTL_FIONREAD: syscall(SYS_ioctl, fd, FIONREAD, &v); break;
		case PERSONALITY_QUERY: syscall(SYS_personality, 0xffffffffUL); break;
		case CLONE3: syscall(SYS_clone3, NULL, 0); break;
		}
	}
	return (now_ns() - t0) / n;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	int rounds = argc > 2 ? atoi(argv[2]) : 15;
	struct corral_policy p = { .network = CORRAL_NET_NONE };
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW_);
	struct corral_bpf b[4] = { { 0 } };
	int pfd[2];

	sc_require_seccomp();
	for (int opt = 1; opt <= 2; opt++) {
		struct corral_error err = { 0 };

		if (corral_seccomp_compile_opt(&p, 1, opt, NULL, &b[opt], &err) < 0)
			return fprintf(stderr, "%s\n", err.message), 1;
	}
	b[3].filter = &allow;
	b[3].len = 1;
	if (pipe(pfd) < 0)
		return perror("pipe"), 1;
	printf("# ns per call, best of %d rounds of %ld, net none\n", rounds, n);
	printf("%-20s %12s %12s %12s %12s\n", "syscall", "no filter", "allow-only", "optimize=1", "optimize=2");
	printf("%-20s %12s %12u %12u %12u\n", "BPF instructions", "-", b[3].len, b[1].len, b[2].len);
	for (enum call c = GETPID; c <= CLONE3; c++) {
		double res[4] = { 1e18, 1e18, 1e18, 1e18 };

		for (int round = 0; round < rounds * 4; round++) {
			int mode = round % 4;
			double got;
			int rp[2];
			pid_t pid;

			if (pipe(rp) < 0)
				return perror("pipe"), 1;
			pid = fork();
			if (pid == 0) {
				double r;

				if (mode > 0)
					sc_child_enter(&b[mode]);
				loop(c, n / 10, pfd[0]); /* warm up */
				r = loop(c, n, pfd[0]);
				if (write(rp[1], &r, sizeof(r)) != sizeof(r))
					_exit(1);
				_exit(0);
			}
			sc_wait(pid);
			if (read(rp[0], &got, sizeof(got)) != sizeof(got))
				return fprintf(stderr, "child failed\n"), 1;
			if (got < res[mode])
				res[mode] = got;
			close(rp[0]);
			close(rp[1]);
		}
		printf("%-20s %12.1f %12.1f %12.1f %12.1f\n", call_names[c], res[0], res[3], res[1], res[2]);
	}
	corral_bpf_free(&b[1]);
	corral_bpf_free(&b[2]);
	return 0;
}
