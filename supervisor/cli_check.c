/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* corral check [--json] [--policy FILE] [OPTIONS] */
#include "supervisor/cli.h"

int cli_check(int argc, char **argv)
{
	return cli_fail(false, CORRAL_E_NOT_IMPLEMENTED, "check: not implemented yet");
}
