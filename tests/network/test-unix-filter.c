/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit: the Unix-mediation rules of the main filter (corral_seccomp_compile_unix
 * with a hand-over fd), run by a classic-BPF interpreter on synthetic
 * seccomp_data, for both network modes that mediate, both libseccomp
 * layouts' worth of arguments: which calls go to the supervisor, which are
 * refused, which pass; and that without mediation nothing is notified.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "policy/policy.h"
#include "seccomp/seccomp.h"
#include "tests/seccomp/bpf-interp.h"

#define ALLOW SECCOMP_RET_ALLOW
#define NOTIFY SECCOMP_RET_USER_NOTIF
#define ERR(e) (SECCOMP_RET_ERRNO | (uint32_t)(e))
#define K 1024 /* the hand-over fd */

static const struct {
	const char *what;
	const char *sc;
	uint64_t args[6];
	uint32_t want;      /* with mediation (hand-over fd K) */
	uint32_t want_off;  /* Unix allowed by Landlock ABI 9: no notify rules */
} cases[] = {
	{ "connect", "connect", { 3, 0x1000, 110 }, NOTIFY, ALLOW },
	{ "connect on fd K", "connect", { K, 0x1000, 110 }, NOTIFY, ALLOW },
	{ "sendto without an address", "sendto", { 3, 0x1000, 5, 0, 0, 0 }, ALLOW, ALLOW },
	{ "sendto with an address", "sendto", { 3, 0x1000, 5, 0, 0x2000, 110 }, NOTIFY, ALLOW },
	{ "sendto, address in the high half only", "sendto", { 3, 0x1000, 5, 0, 1ULL << 40, 110 }, NOTIFY, ALLOW },
	{ "sendmsg", "sendmsg", { 3, 0x1000, 0 }, NOTIFY, ALLOW },
	{ "sendmsg, MSG_DONTWAIT|MSG_NOSIGNAL", "sendmsg", { 3, 0x1000, MSG_DONTWAIT | MSG_NOSIGNAL }, NOTIFY, ALLOW },
	{ "sendmsg, flags 0xffffffff", "sendmsg", { 3, 0x1000, 0xffffffffULL }, NOTIFY, ALLOW },
	{ "sendmsg, hand-over bit on fd K", "sendmsg", { K, 0x1000, CORRAL_UNOTIFY_PASS_FLAGS }, ALLOW, ALLOW },
	{ "sendmsg, hand-over bit on another fd", "sendmsg", { 3, 0x1000, CORRAL_UNOTIFY_PASS_FLAGS }, ERR(EPERM), ALLOW },
	{ "sendmsg, sign-extended negative flags", "sendmsg", { 3, 0x1000, 0xffffffff80000000ULL }, ERR(EPERM), ALLOW },
	{ "sendmsg, hand-over bit on fd K + 2^32", "sendmsg", { K + (1ULL << 32), 0x1000, CORRAL_UNOTIFY_PASS_FLAGS }, ERR(EPERM), ALLOW },
	{ "sendmmsg", "sendmmsg", { 3, 0x1000, 2, 0 }, NOTIFY, ALLOW },
	{ "sendmmsg on fd K, hand-over bit", "sendmmsg", { K, 0x1000, 1, CORRAL_UNOTIFY_PASS_FLAGS }, NOTIFY, ALLOW },
	{ "socket(AF_UNIX)", "socket", { AF_UNIX, SOCK_STREAM, 0 }, ALLOW, ALLOW },
	/* A refused family goes to the supervisor when it listens: it counts it and answers EACCES. */
	{ "socket(AF_UNIX) | 1<<32", "socket", { (1ULL << 32) | AF_UNIX, SOCK_STREAM, 0 }, NOTIFY, ERR(EACCES) },
	{ "socket(AF_NETLINK)", "socket", { AF_NETLINK, SOCK_RAW, 0 }, NOTIFY, ERR(EACCES) },
	{ "socket(AF_PACKET)", "socket", { AF_PACKET, SOCK_RAW, 0 }, NOTIFY, ERR(EACCES) },
	{ "socketpair(AF_UNIX)", "socketpair", { AF_UNIX, SOCK_STREAM, 0, 0x1000 }, ALLOW, ALLOW },
	{ "write", "write", { 3, 0x1000, 5 }, ALLOW, ALLOW },
	{ "recvmsg", "recvmsg", { 3, 0x1000, 0 }, ALLOW, ALLOW },
	{ "bind", "bind", { 3, 0x1000, 110 }, ALLOW, ALLOW },
};

static int failures;

static uint32_t decide(const struct corral_bpf *b, uint32_t arch, int nr, const uint64_t *args)
{
	struct seccomp_data d = { .nr = nr, .arch = arch };

	memcpy(d.args, args, sizeof(d.args));
	return bpf_run(b, &d);
}

int main(void)
{
	static const int nets[] = { CORRAL_NET_NONE, CORRAL_NET_LOOPBACK };
	struct corral_policy *p = NULL;

	if (corral_policy_new(&p) < 0)
		return 1;
	for (size_t n = 0; n < sizeof(nets) / sizeof(nets[0]); n++) {
		struct corral_bpf med = {}, ll9 = {}, refused = {};
		struct corral_error err = {};

		p->network = nets[n];
		if (corral_seccomp_compile_unix(p, 7, true, K, NULL, &med, &err) < 0 ||
		    corral_seccomp_compile_unix(p, 9, true, -1, NULL, &ll9, &err) < 0 ||
		    corral_seccomp_compile_unix(p, 7, false, -1, NULL, &refused, &err) < 0) {
			fprintf(stderr, "compile: %s\n", err.message);
			return 1;
		}
		if (med.len == 0) {
			printf("# seccomp filters unavailable here: skipped\n");
			return getenv("CORRAL_MUST_WORK") && strcmp(getenv("CORRAL_MUST_WORK"), "1") == 0 ? 1 : 77;
		}
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			int nr = seccomp_syscall_resolve_name(cases[i].sc);
			uint32_t got = decide(&med, AUDIT_ARCH_X86_64, nr, cases[i].args);
			uint32_t got9 = decide(&ll9, AUDIT_ARCH_X86_64, nr, cases[i].args);
			uint32_t gotr = decide(&refused, AUDIT_ARCH_X86_64, nr, cases[i].args);
			bool sock_unix = strcmp(cases[i].sc, "socket") == 0 && cases[i].args[0] == AF_UNIX;

			if (got != cases[i].want || got9 != cases[i].want_off ||
			    gotr != (sock_unix ? ERR(EACCES) : cases[i].want_off)) {
				printf("not ok - net %d: %s: mediated %#x (want %#x), ABI 9 %#x (want %#x), refused %#x\n",
				       nets[n], cases[i].what, got, cases[i].want, got9, cases[i].want_off, gotr);
				failures++;
			} else {
				printf("ok - net %d: %s\n", nets[n], cases[i].what);
			}
		}
		/* x32 numbers and foreign architectures still die, mediated or not. */
		{
			uint64_t a[6] = { 3, 0x1000, 110 };
			int nr = seccomp_syscall_resolve_name("connect");

			if (decide(&med, AUDIT_ARCH_X86_64, nr | 0x40000000, a) != SECCOMP_RET_KILL_PROCESS ||
			    decide(&med, AUDIT_ARCH_I386, 362 /* i386 connect */, a) != SECCOMP_RET_KILL_PROCESS) {
				printf("not ok - net %d: x32/i386 connect not killed\n", nets[n]);
				failures++;
			}
		}
		corral_bpf_free(&med);
		corral_bpf_free(&ll9);
		corral_bpf_free(&refused);
	}
	corral_policy_free(p);
	printf("# %d failed\n", failures);
	return failures ? 1 : 0;
}
