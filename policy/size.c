/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Sizes and durations: parsing and canonical text. */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal/util.h"
#include "policy/policy.h"

static const struct {
	char suffix;
	unsigned shift;
} size_units[] = {
	{ 'T', 40 },
	{ 'G', 30 },
	{ 'M', 20 },
	{ 'K', 10 },
};

int corral_parse_size(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	const char *c = s;
	unsigned shift = 0;

	if (!s || !*s)
		return -EINVAL;
	if (*c < '0' || *c > '9')
		return -EINVAL;
	for (; *c >= '0' && *c <= '9'; c++) {
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(*c - '0'), &v))
			return -ERANGE;
	}
	if (*c) {
		char u = *c & ~0x20; /* ASCII upper case */
		bool found = false;

		for (size_t i = 0; i < ARRAY_SIZE(size_units); i++)
			if (size_units[i].suffix == u) {
				shift = size_units[i].shift;
				found = true;
			}
		if (!found || c[1])
			return -EINVAL;
	}
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = v << shift;
	return 0;
}

void corral_format_size(uint64_t v, char *buf, size_t len)
{
	for (size_t i = 0; v && i < ARRAY_SIZE(size_units); i++) {
		uint64_t unit = UINT64_C(1) << size_units[i].shift;

		if (v % unit == 0) {
			snprintf(buf, len, "%llu%c", (unsigned long long)(v / unit), size_units[i].suffix);
			return;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
}

/*
 * The C locale object, made once: strtod and printf would otherwise read
 * the caller's LC_NUMERIC (a ',' decimal point in de_DE). glibc hands out a
 * static object for "C"; where a libc allocates, the loser of a race frees
 * its copy.
 */
static locale_t c_locale(void)
{
	static locale_t cached;
	locale_t l = __atomic_load_n(&cached, __ATOMIC_ACQUIRE), expected = (locale_t)0;

	if (l != (locale_t)0)
		return l;
	l = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	if (l == (locale_t)0)
		return l;
	if (!__atomic_compare_exchange_n(&cached, &expected, l, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		if (l != expected)
			freelocale(l);
		l = expected;
	}
	return l;
}

double corral_strtod(const char *s, char **end)
{
	locale_t l = c_locale();

	if (l == (locale_t)0)
		return strtod(s, end);
	return strtod_l(s, end, l);
}

int corral_parse_duration(const char *s, double *out)
{
	const char *c = s;
	size_t digits = 0, dots = 0;
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	for (; *c; c++) {
		if (*c >= '0' && *c <= '9')
			digits++;
		else if (*c == '.' && !dots)
			dots++;
		else
			return -EINVAL;
	}
	if (!digits)
		return -EINVAL;
	errno = 0;
	v = corral_strtod(s, &end);
	if (*end)
		return -EINVAL;
	if (!isfinite(v) || v <= 0 || v > CORRAL_TIMEOUT_MAX)
		return -ERANGE;
	*out = v;
	return 0;
}

void corral_format_seconds(double v, char *buf, size_t len)
{
	locale_t l = c_locale(), old = (locale_t)0;

	if (isfinite(v) && v == trunc(v) && fabs(v) < 9007199254740992.0) {
		snprintf(buf, len, "%.0f", v);
		return;
	}
	if (l != (locale_t)0)
		old = uselocale(l);
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (corral_strtod(buf, NULL) == v)
			break;
	}
	if (old != (locale_t)0)
		uselocale(old);
}
