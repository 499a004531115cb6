/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Path math, written once: lexical normalisation and containment of
 * absolute paths. Pure (no syscalls): what a path names on the host is
 * the callers' business (realpath, the resolver, the Landlock walk).
 */
#ifndef CORRAL_POLICY_PATH_H
#define CORRAL_POLICY_PATH_H

#include <stdbool.h>

/* corral_path_normalise: also resolve ".." lexically ("a/b/.." is "a"). */
#define CORRAL_PATH_DOTDOT 1u

/*
 * Normalise the absolute path |p| in place: "//" collapsed, "." dropped,
 * no trailing '/' ("/" stays "/"). ".." is kept as a component unless
 * |flags| has CORRAL_PATH_DOTDOT, which removes it with the component
 * before it ("/.." is "/") — only right where symlinks cannot change what
 * ".." means (the kernel re-checks the result beneath a base). The result
 * is never longer than |p|. Returns 0, or -EINVAL when |p| is not absolute.
 */
int corral_path_normalise(char *p, unsigned flags);

/* The same into a new string (malloc'd); NULL on ENOMEM or a relative |p|. */
char *corral_path_normalised(const char *p, unsigned flags);

/*
 * Is |child| |parent| itself or beneath it, on a component boundary
 * ("/ws" contains "/ws" and "/ws/a", not "/ws-evil")? Both absolute;
 * "//", "." and trailing slashes are ignored; "/" contains every absolute
 * path. A ".." component in either makes the answer false: lexically it
 * cannot be told (normalise with CORRAL_PATH_DOTDOT first, or resolve).
 */
bool corral_path_contains(const char *parent, const char *child);

#endif
