/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* corral_probe — placeholder until issue 3 lands. */
#include "internal/util.h"

_public_ int corral_probe(const struct corral_policy *p, char **json_out, struct corral_error *err)
{
	return corral_err(err, CORRAL_E_NOT_IMPLEMENTED, ENOSYS, "probe: not implemented yet");
}
