/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Built-in defaults that more than one module needs. */
#include <string.h>

#include "policy/policy.h"

/*
 * The system runtime a command needs to run real programs, read-only
 * (read file, read dir, execute). A default path missing on this host is
 * skipped; never the host's home directories.
 */
const char *const corral_default_read_only[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", NULL,
};

bool corral_is_default_read_only(const char *path)
{
	for (size_t i = 0; corral_default_read_only[i]; i++)
		if (strcmp(path, corral_default_read_only[i]) == 0)
			return true;
	return false;
}
