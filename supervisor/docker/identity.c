/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Who the container runs as: the --user rules of DESIGN.md, as the local provider decides them. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/policy.h"
#include "supervisor/docker/docker-private.h"
#include "supervisor/exec/sandbox.h"

static int lookup_group(const char *g, gid_t *gid)
{
	char *end;
	struct group *gr;
	unsigned long v;

	errno = 0;
	v = strtoul(g, &end, 10);
	if (*g && !*end && !errno && v < UINT32_MAX) {
		*gid = (gid_t)v;
		return 0;
	}
	gr = getgrnam(g);
	if (!gr)
		return -ENOENT;
	*gid = gr->gr_gid;
	return 0;
}

int corral_identity_preview(const struct corral_policy *p, const char *root_abs, uid_t *uid, gid_t *gid,
			    struct corral_posture *ps, struct corral_error *err)
{
	struct corral_sandbox *sb;
	int r;

	/* corral_identity_decide reads only these fields; the rest stays zero. */
	sb = calloc(1, sizeof(*sb));
	if (!sb)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	sb->policy = (struct corral_policy *)p;
	sb->root = (char *)root_abs;
	sb->root_fd = open(root_abs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (sb->root_fd < 0) {
		r = corral_err(err, errno == ENOENT || errno == ENOTDIR ? CORRAL_E_NOT_FOUND : CORRAL_E_SETUP,
			       errno, "root %s: %s", root_abs, corral_strerror(errno));
	} else {
		r = corral_identity_decide(sb, err);
		if (r == 0) {
			*uid = sb->uid;
			*gid = sb->gid;
			for (size_t i = 0; ps && i < sb->posture.n; i++)
				corral_posture_add(ps, sb->posture.items[i].which, sb->posture.items[i].state,
						   "%s", sb->posture.items[i].why);
		}
	}
	safe_close(sb->root_fd);
	free(sb);
	return r;
}

/*
 * The policy's user when given (USER[:GROUP], names resolved on the host:
 * the container's /etc/passwd is the image's, so numbers are what cross);
 * else the caller; else, when corral runs as root, the owner of the root
 * directory, or nobody when root owns it — as the local provider does, so
 * files written in the root belong to whoever owns it.
 */
int corral_docker_identity(const struct corral_policy *p, const char *root_abs, uid_t *uid, gid_t *gid,
			   struct corral_error *err)
{
	if (p->user && *p->user) {
		_cleanup_free_ char *u = strdup(p->user);
		char *g, *end;
		unsigned long v;
		struct passwd *pw;

		if (!u)
			return -ENOMEM;
		g = strchr(u, ':');
		if (g)
			*g++ = '\0';
		errno = 0;
		v = strtoul(u, &end, 10);
		if (*u && !*end && !errno && v < UINT32_MAX) {
			*uid = (uid_t)v;
			pw = getpwuid(*uid);
			*gid = pw ? pw->pw_gid : (gid_t)v;
		} else {
			pw = getpwnam(u);
			if (!pw)
				return corral_err(err, CORRAL_E_POLICY, ENOENT, "user: no such user '%s'", u);
			*uid = pw->pw_uid;
			*gid = pw->pw_gid;
		}
		if (g && lookup_group(g, gid) < 0)
			return corral_err(err, CORRAL_E_POLICY, ENOENT, "user: no such group '%s'", g);
		/*
		 * As the local provider: a root that identity cannot write is
		 * refused (the container has no capabilities either). Without
		 * this, --user root ran on any root, /proc/sys's bind mount
		 * included, writing there as the host's uid 0.
		 */
		{
			struct stat st;

			if (stat(root_abs, &st) < 0)
				return corral_err(err, CORRAL_E_SETUP, errno, "root %s: %s", root_abs, corral_strerror(errno));
			if (!corral_can_write(&st, *uid, *gid))
				return corral_err(err, CORRAL_E_SETUP, EACCES,
						  "root %s is not writable by %s (uid %u, gid %u)%s; choose who runs the "
						  "command with --user USER[:GROUP] (for example the directory's owner), "
						  "or make the directory writable for that user",
						  root_abs, u, (unsigned)*uid, (unsigned)*gid,
						  *uid == 0 ? " without capabilities" : "");
		}
		return 0;
	}
	/*
	 * By default exactly the local provider's decision, so both providers
	 * write the root's files as the same uid:gid (never gid 0 unasked).
	 */
	return corral_identity_preview(p, root_abs, uid, gid, NULL, err);
}
