/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Policy key "proc": "private" gives the command a PID namespace and a
 * /proc of its own, so host processes (and their command lines: API keys
 * passed as arguments) are out of sight. The run's first process is a
 * small init (supervisor/exec/child.c, corral_pidns_init_main) cloned
 * straight into new PID and mount namespaces (and, unprivileged, a user
 * namespace mapping corral's own uid and gid to themselves, as network
 * "loopback" does); it mounts a fresh proc on /proc, starts the command
 * and reaps everything in the namespace. See docs/policy.md for the cost
 * per run, which decides the default.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "supervisor/local/netns.h"
#include "supervisor/local/procns.h"

int corral_procns_check(struct corral_procns_plan *plan, char *why, size_t why_len)
{
	struct corral_netns_plan user;
	struct stat st;
	int r;

	memset(plan, 0, sizeof(*plan));
	if (stat("/proc/self/ns/pid", &st) < 0 || stat("/proc/self/ns/mnt", &st) < 0) {
		snprintf(why, why_len, "this kernel has no PID or mount namespaces (/proc/self/ns: %s)",
			 corral_strerror(errno));
		return -EOPNOTSUPP;
	}
	/* The same decision as network "loopback": root directly, else a user namespace. */
	r = corral_userns_check(&user, why, why_len);
	if (r < 0)
		return r;
	plan->mode = user.mode == CORRAL_NETNS_DIRECT ? CORRAL_PROCNS_DIRECT : CORRAL_PROCNS_USERNS;
	memcpy(plan->uid_map, user.uid_map, sizeof(plan->uid_map));
	memcpy(plan->gid_map, user.gid_map, sizeof(plan->gid_map));
	return 0;
}

void corral_procns_posture(const struct corral_policy *p, struct corral_procns_plan *plan,
			   struct corral_posture *ps)
{
	char why[200];

	memset(plan, 0, sizeof(*plan));
	if (p->proc != CORRAL_PROC_PRIVATE) {
		corral_posture_add(ps, CORRAL_P_PROC_PRIVATE, CORRAL_PROMISE_NA,
				   "proc \"host\": the command sees the host's processes and their command "
				   "lines in /proc (--proc private hides them)");
		return;
	}
	if (corral_procns_check(plan, why, sizeof(why)) == 0) {
		corral_posture_add(ps, CORRAL_P_PROC_PRIVATE, CORRAL_PROMISE_ENFORCED,
				   "a PID namespace and /proc of the run's own: no host process is visible (%s)",
				   plan->mode == CORRAL_PROCNS_DIRECT ? "as root, directly" :
				   "through a user namespace mapping the caller's uid and gid to themselves");
		return;
	}
	corral_posture_add(ps, CORRAL_P_PROC_PRIVATE, CORRAL_PROMISE_DROPPED,
			   "proc \"private\" needs a PID and mount namespace: %s%s", why,
			   p->compat == CORRAL_COMPAT_BEST_EFFORT ?
			   "; running with the host's /proc, where host processes' command lines are readable" :
			   "; run as root, allow user namespaces, or pass --proc host");
}

int corral_procns_clone_flags(const struct corral_procns_plan *plan)
{
	switch (plan->mode) {
	case CORRAL_PROCNS_DIRECT:
		return CLONE_NEWPID | CLONE_NEWNS;
	case CORRAL_PROCNS_USERNS:
		return CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS;
	default:
		return 0;
	}
}
