/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* corral_check — placeholder until issue 8 lands. */
#include "internal/util.h"

_public_ int corral_check(const struct corral_policy *p, char **json_out, bool *all_held,
			  struct corral_error *err)
{
	return corral_err(err, CORRAL_E_NOT_IMPLEMENTED, ENOSYS, "check: not implemented yet");
}
