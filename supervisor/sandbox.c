/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The sandbox object and the exec engine — placeholder until issue 5 lands. */
#include "internal/util.h"
#include "policy/policy.h"

_public_ int corral_sandbox_new(const struct corral_policy *p, struct corral_sandbox **out,
				struct corral_error *err)
{
	return corral_err(err, CORRAL_E_NOT_IMPLEMENTED, ENOSYS, "run: not implemented yet");
}
_public_ void corral_sandbox_free(struct corral_sandbox *sb)
{
}
_public_ size_t corral_sandbox_dropped(const struct corral_sandbox *sb, const char *const **lines)
{
	return 0;
}
_public_ int corral_sandbox_exec(struct corral_sandbox *sb, const struct corral_exec_opts *opts,
				 struct corral_result *res, struct corral_error *err)
{
	return corral_err(err, CORRAL_E_NOT_IMPLEMENTED, ENOSYS, "run: not implemented yet");
}
_public_ void corral_result_clear(struct corral_result *res)
{
	free(res->stdout_buf);
	free(res->stderr_buf);
	memset(res, 0, sizeof(*res));
}
_public_ int corral_result_exit_code(const struct corral_result *res)
{
	return 125;
}
_public_ char *corral_result_json(const struct corral_result *res)
{
	return NULL;
}
