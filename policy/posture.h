/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The posture of a policy on this host: for each promise of DESIGN.md
 * ("What the local provider promises"), enforced, dropped (and why), or not
 * applicable. landlock/, seccomp/ and supervisor/ each add the promises they
 * enforce; corral_sandbox_new() refuses under compat "strict" when any is
 * dropped, and `corral probe` prints the list.
 */
#ifndef CORRAL_POSTURE_H
#define CORRAL_POSTURE_H

#include <stddef.h>

#include "internal/util.h"

enum corral_promise_state {
	CORRAL_PROMISE_ENFORCED = 0,
	CORRAL_PROMISE_DROPPED = 1,  /* the policy asks for it; this host cannot */
	CORRAL_PROMISE_NA = 2,       /* the policy does not ask for it (e.g. network "host") */
};

struct corral_promise {
	const char *id;   /* stable identifier, e.g. "fs.truncate", "net.no_inet" (static string) */
	int state;        /* enum corral_promise_state */
	char why[256];    /* for DROPPED/NA: the reason, naming what it needs ("needs Landlock ABI 3, kernel has 2") */
};

#define CORRAL_POSTURE_MAX 64
struct corral_posture {
	struct corral_promise items[CORRAL_POSTURE_MAX];
	size_t n;
};

_printf_(4, 5) void corral_posture_add(struct corral_posture *ps, const char *id, int state,
				       const char *fmt, ...);
/* First dropped promise, or NULL. */
const struct corral_promise *corral_posture_first_dropped(const struct corral_posture *ps);

#endif
