/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* seccomp filter — placeholder until issue 4 lands. */
#include "seccomp/seccomp.h"

int corral_seccomp_compile(const struct corral_policy *p, struct corral_posture *ps,
			   struct corral_bpf *out, struct corral_error *err)
{
	return corral_err(err, CORRAL_E_NOT_IMPLEMENTED, ENOSYS, "seccomp: not implemented yet");
}

void corral_bpf_free(struct corral_bpf *prog)
{
}

int corral_seccomp_install(const struct corral_bpf *prog)
{
	return -ENOSYS;
}

bool corral_seccomp_available(void)
{
	return false;
}
