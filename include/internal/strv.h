/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A growable NULL-terminated string list, written once (policy/strv.c,
 * pure): the policy's path and environment lists, the docker client's
 * argv and environment. Not installed.
 */
#ifndef CORRAL_INTERNAL_STRV_H
#define CORRAL_INTERNAL_STRV_H

#include <stdbool.h>
#include <stddef.h>

struct corral_strv {
	char **v;   /* NULL-terminated when n > 0; may be NULL when n == 0 */
	size_t n;
	size_t cap; /* slots allocated in v (0: unknown, grown on the next push) */
};

/* Append |s| (taken: freed on failure; NULL means ENOMEM). 0 or -ENOMEM. */
int strv_push(struct corral_strv *l, char *s);
/* Append a copy of |s|. 0 or -ENOMEM. */
int strv_add(struct corral_strv *l, const char *s);
/* Append a formatted string. 0 or -ENOMEM. */
__attribute__((format(printf, 2, 3))) int strv_addf(struct corral_strv *l, const char *fmt, ...);
bool strv_contains(const struct corral_strv *l, const char *s);
/* Drop every later copy of a string already in |l|, keeping the order. 0 or -ENOMEM (|l| unchanged). */
int strv_uniq(struct corral_strv *l);
/* Remove (and free) every copy of |s|. */
void strv_remove(struct corral_strv *l, const char *s);
/* Free every string and the list; |l| is empty afterwards. */
void strv_clear(struct corral_strv *l);

#endif
