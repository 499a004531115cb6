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

#define ALLOW SECCOMP_RET_ALLOW
#define NOTIFY SECCOMP_RET_USER_NOTIF
#define ERR(e) (SECCOMP_RET_ERRNO | (uint32_t)(e))
#define K 1024 /* the hand-over fd */

/* Classic BPF as the kernel's seccomp runs it. Aborts on anything malformed. */
static uint32_t bpf_run(const struct corral_bpf *b, const struct seccomp_data *d)
{
	uint32_t A = 0, X = 0, M[BPF_MEMWORDS] = { 0 };

	for (unsigned pc = 0; pc < b->len; pc++) {
		const struct sock_filter *f = &b->filter[pc];
		uint32_t src = BPF_SRC(f->code) == BPF_X ? X : f->k;

		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
			if (BPF_MODE(f->code) == BPF_ABS && BPF_SIZE(f->code) == BPF_W &&
			    f->k % 4 == 0 && f->k + 4 <= sizeof(*d))
				memcpy(&A, (const char *)d + f->k, 4);
			else if (BPF_MODE(f->code) == BPF_IMM)
				A = f->k;
			else if (BPF_MODE(f->code) == BPF_MEM && f->k < BPF_MEMWORDS)
				A = M[f->k];
			else if (BPF_MODE(f->code) == BPF_LEN)
				A = sizeof(*d);
			else
				goto bad;
			break;
		case BPF_LDX:
			if (BPF_MODE(f->code) == BPF_IMM)
				X = f->k;
			else if (BPF_MODE(f->code) == BPF_MEM && f->k < BPF_MEMWORDS)
				X = M[f->k];
			else if (BPF_MODE(f->code) == BPF_LEN)
				X = sizeof(*d);
			else
				goto bad;
			break;
		case BPF_ST:
		case BPF_STX:
			if (f->k >= BPF_MEMWORDS)
				goto bad;
			M[f->k] = BPF_CLASS(f->code) == BPF_ST ? A : X;
			break;
		case BPF_ALU:
			switch (BPF_OP(f->code)) {
			case BPF_ADD: A += src; break;
			case BPF_SUB: A -= src; break;
			case BPF_MUL: A *= src; break;
			case BPF_DIV: if (!src) return 0; A /= src; break;
			case BPF_MOD: if (!src) return 0; A %= src; break;
			case BPF_OR: A |= src; break;
			case BPF_AND: A &= src; break;
			case BPF_XOR: A ^= src; break;
			case BPF_LSH: A = src < 32 ? A << src : 0; break;
			case BPF_RSH: A = src < 32 ? A >> src : 0; break;
			case BPF_NEG: A = -A; break;
			default: goto bad;
			}
			break;
		case BPF_JMP: {
			bool c;

			if (BPF_OP(f->code) == BPF_JA) {
				pc += f->k;
				break;
			}
			switch (BPF_OP(f->code)) {
			case BPF_JEQ: c = A == src; break;
			case BPF_JGT: c = A > src; break;
			case BPF_JGE: c = A >= src; break;
			case BPF_JSET: c = (A & src) != 0; break;
			default: goto bad;
			}
			pc += c ? f->jt : f->jf;
			break;
		}
		case BPF_RET:
			return BPF_RVAL(f->code) == BPF_K ? f->k : A;
		case BPF_MISC:
			if (BPF_MISCOP(f->code) == BPF_TAX)
				X = A;
			else
				A = X;
			break;
		default:
			goto bad;
		}
	}
bad:
	fprintf(stderr, "malformed BPF or fell off the end\n");
	abort();
}

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
	{ "socket(AF_UNIX) | 1<<32", "socket", { (1ULL << 32) | AF_UNIX, SOCK_STREAM, 0 }, ERR(EACCES), ERR(EACCES) },
	{ "socket(AF_NETLINK)", "socket", { AF_NETLINK, SOCK_RAW, 0 }, ERR(EACCES), ERR(EACCES) },
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
