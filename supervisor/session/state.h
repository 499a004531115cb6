/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The shell state a bash call leaves, decoded (pure: the session and its fuzzer link it). Not installed. */
#ifndef CORRAL_SESSION_STATE_H
#define CORRAL_SESSION_STATE_H

#include <stddef.h>

/*
 * Decode bash's `export -p` (lines `declare -FLAGS NAME="VALUE"`,
 * `declare -x NAME=$'ANSI-C'`, `declare -x NAME` without a value, or
 * `export NAME="VALUE"` in POSIX mode) into NAME=VALUE entries, each
 * NUL-terminated, in |out| (at least |len| + 1 bytes: decoding never
 * grows the text). A malformed line, and a value holding a NUL, is
 * skipped. Returns the bytes used.
 */
size_t corral_state_decode_exports(const char *t, size_t len, char *out);

#endif
