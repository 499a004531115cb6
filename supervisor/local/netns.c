/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Network "loopback": the command gets a network namespace of its own with
 * only `lo` up. As root (with CAP_SYS_ADMIN) the child unshares the network
 * namespace directly, before it drops privileges; otherwise it unshares a
 * user namespace with it, maps corral's uid and gid to themselves (files
 * keep their owners) and, holding every capability inside that fresh user
 * namespace until execve, brings `lo` up. Both happen before Landlock and
 * seccomp, which stay exactly as they are for every other mode, and the
 * seccomp deny table keeps unshare/setns/clone-namespace flags away from the
 * command itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal/fileio.h"
#include "supervisor/local/netns.h"
#include "supervisor/exec/sandbox.h"

#ifndef CAP_SYS_ADMIN
#define CAP_SYS_ADMIN 21
#endif

static bool has_cap_sys_admin(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data) < 0)
		return false;
	return (data[CAP_SYS_ADMIN / 32].effective >> (CAP_SYS_ADMIN % 32)) & 1;
}

/* First integer of a small /proc file, or |dflt| when it cannot be read. */
static long read_long(const char *path, long dflt)
{
	char buf[32];
	char *end;
	long v;

	if (corral_read_file_at(AT_FDCWD, path, 0, buf, sizeof(buf)) <= 0)
		return dflt;
	v = strtol(buf, &end, 10);
	return end == buf ? dflt : v;
}

int corral_netns_check(struct corral_netns_plan *plan, char *why, size_t why_len)
{
	struct stat st;

	memset(plan, 0, sizeof(*plan));
	if (stat("/proc/self/ns/net", &st) < 0) {
		snprintf(why, why_len, "this kernel has no network namespaces (/proc/self/ns/net: %s)",
			 corral_strerror(errno));
		return -EOPNOTSUPP;
	}
	return corral_userns_check(plan, why, why_len);
}

/*
 * Under a seccomp filter (a container runtime's profile) the sysctls do
 * not tell whether a user namespace can be made: a forked child tries,
 * and only then (a fork costs a run that asks for a namespace ~0.1 ms).
 * The errno it was refused with, or 0.
 */
static int userns_refused_by_filter(void)
{
	int status;
	pid_t pid;

	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 2)
		return 0;
	pid = fork();
	if (pid < 0)
		return 0; /* the run itself reports what fails */
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER) == 0 ? 0 : (errno & 0xff) ?: 1);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 0;
}

int corral_userns_check(struct corral_netns_plan *plan, char *why, size_t why_len)
{
	const char *who = geteuid() == 0 ? "corral lacks CAP_SYS_ADMIN" : "corral is not root";
	const char *no_userns = secure_getenv("CORRAL_TEST_NO_USERNS");
	struct stat st;
	int r;

	memset(plan, 0, sizeof(*plan));
	if (geteuid() == 0 && has_cap_sys_admin()) {
		plan->mode = CORRAL_NETNS_DIRECT;
		return 0;
	}
	/*
	 * Unprivileged: a user namespace is needed. These sysctls are the
	 * known ways a host forbids them; the child still reports any other
	 * refusal as a setup error naming the step.
	 */
	/* Tests: behave as a host that forbids them (it can only ever refuse more). */
	if (no_userns && strcmp(no_userns, "1") == 0) {
		snprintf(why, why_len, "user namespaces are treated as forbidden (CORRAL_TEST_NO_USERNS=1), "
			 "and %s", who);
		return -EPERM;
	}
	if (stat("/proc/self/ns/user", &st) < 0) {
		snprintf(why, why_len, "this kernel has no user namespaces, and %s", who);
		return -EOPNOTSUPP;
	}
	if (read_long("/proc/sys/user/max_user_namespaces", 1) == 0) {
		snprintf(why, why_len, "user namespaces are disabled (user.max_user_namespaces = 0), "
			 "and corral is not root");
		return -EPERM;
	}
	if (read_long("/proc/sys/kernel/unprivileged_userns_clone", 1) == 0) {
		snprintf(why, why_len, "unprivileged user namespaces are disabled "
			 "(kernel.unprivileged_userns_clone = 0), and %s", who);
		return -EPERM;
	}
	if (read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", 0) == 1) {
		snprintf(why, why_len, "AppArmor restricts unprivileged user namespaces "
			 "(kernel.apparmor_restrict_unprivileged_userns = 1), and %s", who);
		return -EPERM;
	}
	r = userns_refused_by_filter();
	if (r > 0) {
		snprintf(why, why_len, "a seccomp filter (a container's profile) refuses "
			 "unshare(CLONE_NEWUSER): %s, and %s (docs/deploy.md)", corral_strerror(r), who);
		return -EPERM;
	}
	plan->mode = CORRAL_NETNS_USERNS;
	snprintf(plan->uid_map, sizeof(plan->uid_map), "%u %u 1\n", (unsigned)geteuid(),
		 (unsigned)geteuid());
	snprintf(plan->gid_map, sizeof(plan->gid_map), "%u %u 1\n", (unsigned)getegid(),
		 (unsigned)getegid());
	return 0;
}

int corral_netns_enter(const struct corral_netns_plan *plan, int *stage)
{
	struct ifreq ifr;
	int fd, r;

	switch (plan->mode) {
	case CORRAL_NETNS_DIRECT:
		*stage = STAGE_NETNS;
		if (unshare(CLONE_NEWNET) < 0)
			return -errno;
		break;
	case CORRAL_NETNS_USERNS:
		*stage = STAGE_NETNS;
		if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
			return -errno;
		/*
		 * An unprivileged process may map only its own ids, and
		 * gid_map only once setgroups is denied in the namespace.
		 */
		*stage = STAGE_USERNS_MAP;
		r = corral_write_file_at(AT_FDCWD, "/proc/self/setgroups", "deny", 0, 0);
		if (r < 0 && r != -ENOENT)
			return r;
		r = corral_write_file_at(AT_FDCWD, "/proc/self/uid_map", plan->uid_map, 0, 0);
		if (r < 0)
			return r;
		r = corral_write_file_at(AT_FDCWD, "/proc/self/gid_map", plan->gid_map, 0, 0);
		if (r < 0)
			return r;
		break;
	default:
		return 0;
	}

	/* `lo` starts down in a new namespace; no `ip` binary needed. */
	*stage = STAGE_LOOPBACK_UP;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		goto fail;
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		goto fail;
	close(fd);
	return 0;
fail:
	r = -errno;
	close(fd);
	return r;
}

void corral_netns_posture(struct corral_policy *p, struct corral_netns_plan *plan,
			  struct corral_posture *ps)
{
	char why[200];

	memset(plan, 0, sizeof(*plan));
	if (p->network != CORRAL_NET_LOOPBACK) {
		corral_posture_add(ps, CORRAL_P_NET_LOOPBACK_NAMESPACE, CORRAL_PROMISE_NA,
				   "network \"%s\": no private network namespace asked for",
				   corral_network_name(p->network));
		return;
	}
	if (corral_netns_check(plan, why, sizeof(why)) == 0) {
		corral_posture_add(ps, CORRAL_P_NET_LOOPBACK_NAMESPACE, CORRAL_PROMISE_ENFORCED,
				   "a private network namespace with only lo up (%s)",
				   plan->mode == CORRAL_NETNS_DIRECT ? "as root, directly" :
				   "through a user namespace mapping the caller's uid and gid to themselves");
		return;
	}
	corral_posture_add(ps, CORRAL_P_NET_LOOPBACK_NAMESPACE, CORRAL_PROMISE_DROPPED,
			   "network \"loopback\" needs a network namespace: %s%s", why,
			   p->compat == CORRAL_COMPAT_BEST_EFFORT ? "; falling back to network \"none\"" : "");
	/* best-effort: "none" is the stricter neighbour, never "host". */
	if (p->compat == CORRAL_COMPAT_BEST_EFFORT)
		p->network = CORRAL_NET_NONE;
}
