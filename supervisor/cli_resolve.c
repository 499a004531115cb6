/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* corral resolve --root DIR [--json] PATH */
#include "supervisor/cli.h"

int cli_resolve(int argc, char **argv)
{
	return cli_fail(false, CORRAL_E_NOT_IMPLEMENTED, "resolve: not implemented yet");
}
