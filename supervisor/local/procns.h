/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Policy key "proc": the command's own PID namespace and /proc (internal API). */
#ifndef CORRAL_PROCNS_H
#define CORRAL_PROCNS_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"
#include "policy/posture.h"

enum corral_procns_mode {
	CORRAL_PROCNS_OFF = 0,    /* the host's PID namespace and /proc */
	CORRAL_PROCNS_DIRECT = 1, /* root with CAP_SYS_ADMIN: CLONE_NEWPID|CLONE_NEWNS */
	CORRAL_PROCNS_USERNS = 2, /* ... with CLONE_NEWUSER, corral's own uid and gid mapped */
};

/* Prepared in the parent; read-only in the child. */
struct corral_procns_plan {
	int mode;         /* enum corral_procns_mode */
	char uid_map[32]; /* "UID UID 1\n" (userns mode) */
	char gid_map[32];
};

/*
 * Can this host give the command a PID namespace and a /proc of its own?
 * Fills |plan| and returns 0, or a negative errno with the reason in
 * |why|. Cheap: no fork (the sysctls that forbid user namespaces are read
 * instead); a refusal the kernel makes anyway (e.g. a /proc with masked
 * paths in a container) is reported by the run as a setup error naming
 * the step.
 */
int corral_procns_check(struct corral_procns_plan *plan, char *why, size_t why_len);

/*
 * Add the "proc.private" promise for |p| to |ps| and fill |plan| (mode
 * OFF unless proc is "private" and the host can do it). Dropped when the
 * host cannot: strict then refuses; best-effort runs with the host's /proc
 * and says so.
 */
void corral_procns_posture(const struct corral_policy *p, struct corral_procns_plan *plan,
			   struct corral_posture *ps);

/* The clone flags that make the namespaces of |plan| (0 for mode OFF). */
int corral_procns_clone_flags(const struct corral_procns_plan *plan);

#endif
