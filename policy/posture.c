/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <stdarg.h>
#include <string.h>
#include <stdio.h>

#include "policy/posture.h"

const struct corral_promise_info corral_promises[CORRAL_P__COUNT] = {
#define CORRAL_PROMISE_INFO(e, id_, kinds_, text_, mech_) \
	[CORRAL_P_##e] = { .id = id_, .kinds = kinds_, .text = text_, .mechanism = mech_ },
	CORRAL_PROMISE_LIST(CORRAL_PROMISE_INFO)
#undef CORRAL_PROMISE_INFO
};

int corral_promise_by_name(const char *name)
{
	for (int i = 0; name && i < CORRAL_P__COUNT; i++)
		if (strcmp(corral_promises[i].id, name) == 0)
			return i;
	return -1;
}

const struct corral_promise *corral_posture_get(const struct corral_posture *ps, enum corral_promise_id which)
{
	for (size_t i = 0; ps && i < ps->n; i++)
		if (ps->items[i].which == which)
			return &ps->items[i];
	return NULL;
}

void corral_posture_add(struct corral_posture *ps, enum corral_promise_id which, int state, const char *fmt, ...)
{
	struct corral_promise *pr;
	va_list ap;

	assert((unsigned)which < CORRAL_P__COUNT);
	if (!ps || ps->n >= CORRAL_POSTURE_MAX)
		return;
	pr = &ps->items[ps->n++];
	pr->which = which;
	pr->id = corral_promises[which].id;
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
