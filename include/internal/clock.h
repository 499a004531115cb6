/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The monotonic clock in milliseconds, written once. Not installed. */
#ifndef CORRAL_INTERNAL_CLOCK_H
#define CORRAL_INTERNAL_CLOCK_H

#include <time.h>

/* CLOCK_MONOTONIC in milliseconds, fractional (the result's wall_ms keeps sub-ms). */
static inline double corral_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#endif
