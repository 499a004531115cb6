/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A classic-BPF interpreter for the unit tests that check our seccomp
 * programs on synthetic seccomp_data, without a kernel.
 */
#ifndef CORRAL_TESTS_BPF_INTERP_H
#define CORRAL_TESTS_BPF_INTERP_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seccomp/seccomp.h"

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

#endif
