/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Landlock ruleset — placeholder until issue 3 lands. */
#include "landlock/landlock.h"

_public_ int corral_landlock_abi(void)
{
	return 0;
}

int corral_ll_plan_new(const struct corral_policy *p, const char *root_abs, struct corral_posture *ps,
		       struct corral_ll_plan **out, struct corral_error *err)
{
	return corral_err(err, CORRAL_E_NOT_IMPLEMENTED, ENOSYS, "landlock: not implemented yet");
}

void corral_ll_plan_free(struct corral_ll_plan *plan)
{
}

int corral_ll_plan_abi(const struct corral_ll_plan *plan)
{
	return 0;
}

int corral_ll_ruleset(const struct corral_ll_plan *plan, int extra_rw_fd, struct corral_error *err)
{
	return corral_err(err, CORRAL_E_NOT_IMPLEMENTED, ENOSYS, "landlock: not implemented yet");
}

int corral_ll_restrict_self(int ruleset_fd)
{
	return -ENOSYS;
}
