/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef CORRAL_INTERNAL_ERRTEXT_H
#define CORRAL_INTERNAL_ERRTEXT_H

/*
 * The words for an errno value, its name ("ENOENT") and a signal's
 * abbreviation ("KILL"), the same with every C library (policy/errtext.c).
 * Use these, not strerror(): corral's messages must not change with the
 * C library a binary was linked against. The names return NULL when unknown.
 */
const char *corral_strerror(int e);
const char *corral_errno_name(int e);
const char *corral_signal_abbrev(int sig);

#endif
