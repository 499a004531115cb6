/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the policy refused during one run, for the result's "denials".
 *
 * Two sources: the supervisor, which sees refusals exactly (a socket()
 * family refused under network "none" or "loopback", a Unix-socket address
 * outside the allowed paths; supervisor/local/unotify/ records them as they
 * happen), and inference at collect time: absolute paths named on the
 * command's "Permission denied" / "Read-only file system" lines that the
 * policy really denies (never a path it allows, never a guess beyond it).
 *
 * A run that is refused nothing pays nothing: the accumulator is a zeroed
 * struct on the caller's stack, and collecting scans the captured stderr
 * for two phrases only.
 */
#ifndef CORRAL_DENIALS_H
#define CORRAL_DENIALS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "corral.h"

struct corral_sandbox;
struct corral_run;

/*
 * Entries kept. The last one is the overflow: once CORRAL_DENIALS_MAX - 1
 * distinct targets are listed, every refusal of a new target is counted in
 * one entry whose what is CORRAL_DENIALS_MORE, so the result says how many
 * went unlisted instead of dropping them unseen.
 */
#define CORRAL_DENIALS_MAX 32
#define CORRAL_DENIALS_MORE "more refused targets, not listed one by one"

struct corral_denials {
	struct corral_denial *v;
	size_t n, cap;
};

/*
 * Count one refusal of |what| (kind and source: static strings; what and
 * hint are copied). An entry of the same kind and what is counted again.
 * Allocation failures lose the entry, nothing else.
 */
void corral_denials_add(struct corral_denials *d, const char *kind, const char *what,
			const char *source, const char *hint);

/* The socket() family refused under |network| (enum corral_network): one counted entry. */
void corral_denials_socket(struct corral_denials *d, int network, const char *call, int family);

/* A Unix-socket address |path| (absolute, normalised) that mediation refused. */
void corral_denials_unix(struct corral_denials *d, const char *path, bool abstract);

/*
 * At collect time, after the engine filled |res|: add the fs denials
 * inferred from |res|'s captured stderr against |sb|'s policy and |run|'s
 * private tmp, then move every entry into |res| (d is left empty).
 */
void corral_denials_collect(struct corral_denials *d, const struct corral_sandbox *sb,
			    const struct corral_run *run, struct corral_result *res);

void corral_denials_clear(struct corral_denials *d);

/*
 * The inference's pure part (tests): the absolute paths named on |line|
 * (|len| bytes), when it is a refusal line; calls |fn| for each.
 * Returns how many.
 */
size_t corral_denials_line_paths(const char *line, size_t len,
				 void (*fn)(const char *path, void *arg), void *arg);

#endif
