/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Network "loopback": a private network namespace with only lo (internal API). */
#ifndef CORRAL_NETNS_H
#define CORRAL_NETNS_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"
#include "policy/posture.h"

enum corral_netns_mode {
	CORRAL_NETNS_OFF = 0,    /* the host's network namespace */
	CORRAL_NETNS_DIRECT = 1, /* root with CAP_SYS_ADMIN: unshare(CLONE_NEWNET) */
	CORRAL_NETNS_USERNS = 2, /* unshare(CLONE_NEWUSER|CLONE_NEWNET), own ids mapped */
};

/* Prepared in the parent; read-only in the child. */
struct corral_netns_plan {
	int mode;            /* enum corral_netns_mode */
	char uid_map[32];    /* "UID UID 1\n" (userns mode) */
	char gid_map[32];
};

/*
 * Can this host give the command a private network namespace? Fills |plan|
 * and returns 0, or a negative errno with the reason in |why|. Cheap: no
 * fork (the sysctls that forbid user namespaces are read instead).
 */
int corral_netns_check(struct corral_netns_plan *plan, char *why, size_t why_len);

/*
 * Add the "net.loopback_namespace" promise for |p| to |ps| and fill |plan|
 * (mode OFF unless network is "loopback" and the host can do it). When it
 * cannot and |p| is best-effort, |p|->network becomes "none" (the posture
 * line says so): never "host".
 */
void corral_netns_posture(struct corral_policy *p, struct corral_netns_plan *plan,
			  struct corral_posture *ps);

/*
 * The part of that decision any namespace needs: root with CAP_SYS_ADMIN
 * makes them directly (mode DIRECT); otherwise a user namespace must be
 * allowed (mode USERNS, own uid and gid mapped). Same contract.
 */
int corral_userns_check(struct corral_netns_plan *plan, char *why, size_t why_len);

/*
 * In the forked child, before the identity switch (root needs
 * CAP_SYS_ADMIN) and before Landlock and seccomp: enter the namespace and
 * bring lo up. Async-signal-safe, no malloc. Returns 0 (mode OFF: nothing
 * done) or -errno with |*stage| set to the failing step.
 */
int corral_netns_enter(const struct corral_netns_plan *plan, int *stage);

#endif
