/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Policy model — placeholder until the policy helper lands it. */
#include "internal/util.h"
#include "policy/policy.h"

_public_ int corral_policy_new(struct corral_policy **out)
{
	struct corral_policy *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	*out = p;
	return 0;
}
_public_ int corral_policy_load_file(const char *path, struct corral_policy **out, struct corral_error *err)
{
	return corral_err(err, CORRAL_E_NOT_IMPLEMENTED, ENOSYS, "policy: not implemented yet");
}
_public_ int corral_policy_load_string(const char *json, struct corral_policy **out, struct corral_error *err)
{
	return corral_err(err, CORRAL_E_NOT_IMPLEMENTED, ENOSYS, "policy: not implemented yet");
}
_public_ int corral_policy_set(struct corral_policy *p, const char *option, const char *value,
			       struct corral_error *err)
{
	return corral_err(err, CORRAL_E_NOT_IMPLEMENTED, ENOSYS, "policy: not implemented yet");
}
_public_ char *corral_policy_dump(const struct corral_policy *p)
{
	return NULL;
}
_public_ struct corral_policy *corral_policy_dup(const struct corral_policy *p)
{
	return NULL;
}
_public_ void corral_policy_free(struct corral_policy *p)
{
	free(p);
}
_public_ int corral_policy_provider(const struct corral_policy *p)
{
	return p->provider;
}
_public_ int corral_policy_network(const struct corral_policy *p)
{
	return p->network;
}
_public_ const char *corral_policy_root(const struct corral_policy *p)
{
	return p->root;
}
