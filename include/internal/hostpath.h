/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host side of the policy's paths (supervisor/local/hostpath.c; used
 * by landlock/ and supervisor/): what policy/ (pure) leaves to the
 * code that may look at the filesystem — the current directory, canonical
 * forms, and whether a root was reached through a symlink someone else
 * could have planted.
 */
#ifndef CORRAL_INTERNAL_HOSTPATH_H
#define CORRAL_INTERNAL_HOSTPATH_H

#include <stdbool.h>

#include "corral.h"

/*
 * Refuse (CORRAL_E_REFUSED, -ELOOP) a root whose spelling |path| (absolute)
 * reaches it through a symlink that a uid other than root or the caller's
 * euid could have made: one owned by another uid, or one in a directory
 * another uid may write (not sticky). A run confined to a root can plant a
 * link there to any directory its owner's uid cannot even read; a later
 * run of that link as its root would run as that directory's owner.
 * Every component is checked, each symlink followed by hand as the kernel
 * would. A component that does not exist ends the walk (0): the sandbox
 * reports it. |what| names the value in the message ("root"). When
 * |reached| is non-NULL it receives an O_PATH fd of the directory the walk
 * reached (-1 when it stopped early): the caller compares it with what it
 * opens, so nothing swapped in between is used.
 */
int corral_root_links_check(const char *what, const char *path, int *reached,
			    struct corral_error *err);

/*
 * The same for the current directory as the caller's shell reached it:
 * when $PWD is absolute and names the current directory, its spelling is
 * checked; a stale or absent $PWD says nothing and passes.
 */
int corral_cwd_links_check(struct corral_error *err);

/*
 * |value| made absolute against the current directory when relative (as
 * $PWD spells it where $PWD names it, else getcwd), for
 * the option |name| ("--root"); an absolute one is copied. Caller frees |*out|.
 */
int corral_path_absolute(const char *name, const char *value, char **out, struct corral_error *err);

/*
 * The system directories' canonical forms (index-parallel to
 * corral_system_dirs; NULL where absent here), resolved once per process.
 */
const char *const *corral_system_real(void);

/* corral_check_not_system with this host's canonical system directories. */
int corral_host_check_not_system(const char *what, const char *path, const char *canon,
				 struct corral_error *err);

#endif
