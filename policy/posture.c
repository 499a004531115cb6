/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>

#include "policy/posture.h"

void corral_posture_add(struct corral_posture *ps, const char *id, int state, const char *fmt, ...)
{
	struct corral_promise *pr;
	va_list ap;

	if (!ps || ps->n >= CORRAL_POSTURE_MAX)
		return;
	pr = &ps->items[ps->n++];
	pr->id = id;
	pr->state = state;
	pr->why[0] = '\0';
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(pr->why, sizeof(pr->why), fmt, ap);
		va_end(ap);
	}
}

const struct corral_promise *corral_posture_first_dropped(const struct corral_posture *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		if (ps->items[i].state == CORRAL_PROMISE_DROPPED)
			return &ps->items[i];
	return NULL;
}
