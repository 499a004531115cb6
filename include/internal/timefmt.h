/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Wall-clock times as RFC 3339 text: started_at, ended_at. */
#ifndef CORRAL_INTERNAL_TIMEFMT_H
#define CORRAL_INTERNAL_TIMEFMT_H

#include <stdio.h>
#include <time.h>

/* |ts| (CLOCK_REALTIME) as "2026-12-03T09:00:00.123Z" (UTC, milliseconds); "" if it cannot be. */
static inline void corral_format_rfc3339(const struct timespec *ts, char *buf, size_t len)
{
	struct tm tm;
	time_t s = ts->tv_sec;
	char date[24];

	if (!len)
		return;
	buf[0] = '\0';
	if (!gmtime_r(&s, &tm) || !strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm))
		return;
	snprintf(buf, len, "%s.%03dZ", date, (int)(ts->tv_nsec / 1000000) % 1000);
}

#endif
