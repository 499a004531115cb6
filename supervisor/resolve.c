/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Host-side boundary resolver — placeholder until issue 6 lands. */
#include "internal/util.h"

_public_ int corral_resolve_open(int root_fd, const char *root_path, const char *path, int flags,
				 struct corral_error *err)
{
	return corral_err(err, CORRAL_E_NOT_IMPLEMENTED, ENOSYS, "resolve: not implemented yet");
}
_public_ int corral_resolve_create(int root_fd, const char *root_path, const char *path, mode_t mode,
				   struct corral_error *err)
{
	return corral_err(err, CORRAL_E_NOT_IMPLEMENTED, ENOSYS, "resolve: not implemented yet");
}
_public_ int corral_resolve_path(const char *root, const char *path, bool must_exist, char **out,
				 struct corral_error *err)
{
	return corral_err(err, CORRAL_E_NOT_IMPLEMENTED, ENOSYS, "resolve: not implemented yet");
}
