/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* seccomp: the filter compiled to BPF in the parent (internal API). */
#ifndef CORRAL_SECCOMP_H
#define CORRAL_SECCOMP_H

#include <linux/filter.h>

#include "policy/policy.h"
#include "supervisor/posture.h"

struct corral_bpf {
	struct sock_filter *filter;
	unsigned short len;
};

/*
 * Compile the filter for |p| with libseccomp and export it to BPF (native
 * ABI only, bad arch kills; deny table; socket rules for the network mode).
 * Adds this module's promises to |ps| (may be NULL). No libseccomp call is
 * needed after this.
 */
int corral_seccomp_compile(const struct corral_policy *p, struct corral_posture *ps,
			   struct corral_bpf *out, struct corral_error *err);
void corral_bpf_free(struct corral_bpf *prog);

/*
 * In the forked child, after no_new_privs: install |prog| with one
 * seccomp(2) call. Returns 0 or -errno. Async-signal-safe.
 */
int corral_seccomp_install(const struct corral_bpf *prog);

/* Whether seccomp filters work here (for probe). */
bool corral_seccomp_available(void);

#endif
