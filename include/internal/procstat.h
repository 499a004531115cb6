/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading a process's state and start time from /proc/PID/stat. */
#ifndef CORRAL_INTERNAL_PROCSTAT_H
#define CORRAL_INTERNAL_PROCSTAT_H

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "internal/fileio.h"

/*
 * The starttime (field 22) in the stat file at |path|, 0 when unreadable;
 * the state letter (field 3) into *state when |state| is not NULL and it
 * is there. The name (field 2) may hold spaces and ')', hence the last ')'.
 */
static inline unsigned long long corral_proc_starttime(const char *path, char *state)
{
	char buf[1024], *p;
	unsigned long long st = 0;

	if (corral_read_file_at(AT_FDCWD, path, 0, buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');
	if (state && p && p[1])
		*state = p[2];
	/* After ')' come fields 3..: skip 19 of them. */
	for (int i = 0; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (p)
		st = strtoull(p + 1, NULL, 10);
	return st;
}

#endif
