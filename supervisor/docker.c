/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* docker provider — placeholder until issue 7 lands. */
#include "supervisor/engine.h"

int corral_docker_prepare(const struct corral_policy *p, const char *root_abs, struct corral_docker **out,
			  struct corral_error *err)
{
	return corral_err(err, CORRAL_E_NOT_IMPLEMENTED, ENOSYS, "docker provider: not implemented yet");
}

void corral_docker_free(struct corral_docker *d)
{
}

int corral_docker_exec(struct corral_docker *d, const struct corral_exec_opts *opts, struct corral_result *res,
		       struct corral_error *err)
{
	return corral_err(err, CORRAL_E_NOT_IMPLEMENTED, ENOSYS, "docker provider: not implemented yet");
}
