/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who the command runs as. When corral runs as root the command never runs
 * as uid 0 unless asked: by default the owner of the root directory, or
 * nobody (65534) when root owns it. The identity must be able to write the
 * root, or corral refuses and says how to choose.
 */
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "supervisor/sandbox.h"

#define NOBODY 65534

static bool parse_id(const char *s, unsigned long *out)
{
	char *end;

	if (!*s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return !errno && !*end && *out < (unsigned long)UINT32_MAX;
}

static bool has_any_capability(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data) < 0)
		return true; /* unknown: drop anyway (the drops then tell) */
	for (int i = 0; i < 2; i++)
		if (data[i].effective || data[i].permitted || data[i].inheritable)
			return true;
	return false;
}

static int read_cap_last(void)
{
	char buf[32] = {};
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int v = 63;

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			v = atoi(buf);
		fclose(f);
	}
	return v > 0 && v < 64 ? v : 63;
}

/* Can |uid|:|gid| (no supplementary groups, no capabilities) write and enter |st|? */
static bool can_write(const struct stat *st, uid_t uid, gid_t gid)
{
	mode_t m = st->st_mode;

	if (uid == st->st_uid)
		return (m & S_IWUSR) && (m & S_IXUSR);
	if (gid == st->st_gid)
		return (m & S_IWGRP) && (m & S_IXGRP);
	return (m & S_IWOTH) && (m & S_IXOTH);
}

int corral_identity_decide(struct corral_sandbox *sb, struct corral_error *err)
{
	const char *user = sb->policy->user;
	char name[256] = "", group[256] = "", who[600];
	bool by_default = !user || !*user;
	unsigned long id;
	struct stat st;
	uid_t uid;
	gid_t gid;

	if (fstat(sb->root_fd, &st) < 0)
		return corral_err(err, CORRAL_E_SETUP, errno, "root %s: %s", sb->root, strerror(errno));

	sb->cap_last = read_cap_last();

	if (geteuid() != 0) {
		/* Unprivileged: the command runs as we do; --user can only name ourselves. */
		if (!by_default) {
			const char *colon = strchr(user, ':');
			size_t n = colon ? (size_t)(colon - user) : strlen(user);
			struct passwd *pw;

			snprintf(name, sizeof(name), "%.*s", (int)n, user);
			pw = parse_id(name, &id) ? getpwuid((uid_t)id) : getpwnam(name);
			if (!(parse_id(name, &id) && (uid_t)id == getuid()) && !(pw && pw->pw_uid == getuid()))
				return corral_err(err, CORRAL_E_UNSUPPORTED, EPERM,
						  "user %s: choosing the identity needs corral to run as root (it runs as uid %u)",
						  user, (unsigned)getuid());
		}
		sb->switch_identity = false;
		sb->drop_caps = has_any_capability();
		sb->uid = getuid();
		sb->gid = getgid();
		corral_posture_add(&sb->posture, "identity.non_root",
				   getuid() ? CORRAL_PROMISE_ENFORCED : CORRAL_PROMISE_NA,
				   "the command runs as corral's own uid %u", (unsigned)getuid());
		corral_posture_add(&sb->posture, "priv.no_capabilities", CORRAL_PROMISE_ENFORCED,
				   "every capability dropped, bounding and ambient sets included");
		return 0;
	}

	if (by_default) {
		/*
		 * No NSS lookup on the default path (it costs more than the rest
		 * of the setup): nobody is 65534:65534, and the owner runs with
		 * the directory's group.
		 */
		if (st.st_uid == 0) {
			uid = NOBODY;
			gid = NOBODY;
			snprintf(who, sizeof(who), "nobody (uid %u), the default when root owns the directory",
				 (unsigned)uid);
		} else {
			uid = st.st_uid;
			gid = st.st_gid;
			snprintf(who, sizeof(who), "uid %u, the directory's owner", (unsigned)uid);
		}
	} else {
		const char *colon = strchr(user, ':');
		size_t n = colon ? (size_t)(colon - user) : strlen(user);
		struct passwd *pw = NULL;

		if (n >= sizeof(name) || (colon && strlen(colon + 1) >= sizeof(group)))
			return corral_err(err, CORRAL_E_USAGE, EINVAL, "user %s: too long", user);
		memcpy(name, user, n);
		name[n] = '\0';
		if (colon)
			snprintf(group, sizeof(group), "%s", colon + 1);
		if (parse_id(name, &id)) {
			uid = (uid_t)id;
			pw = getpwuid(uid);
		} else {
			pw = getpwnam(name);
			if (!pw)
				return corral_err(err, CORRAL_E_NOT_FOUND, ENOENT, "user %s: no such user", name);
			uid = pw->pw_uid;
		}
		if (colon && *group) {
			if (parse_id(group, &id)) {
				gid = (gid_t)id;
			} else {
				struct group *gr = getgrnam(group);
				if (!gr)
					return corral_err(err, CORRAL_E_NOT_FOUND, ENOENT, "group %s: no such group",
							  group);
				gid = gr->gr_gid;
			}
		} else if (pw) {
			gid = pw->pw_gid;
		} else {
			gid = (gid_t)uid;
		}
		snprintf(who, sizeof(who), "%s (uid %u, gid %u)", user, (unsigned)uid, (unsigned)gid);
	}

	if (!can_write(&st, uid, gid))
		return corral_err(err, CORRAL_E_SETUP, EACCES,
				  "root %s is not writable by %s; choose who runs the command with --user USER[:GROUP] "
				  "(for example the directory's owner), make the directory writable for that user, "
				  "or pass --user root to keep uid 0 with every capability dropped",
				  sb->root, who);

	sb->switch_identity = true;
	sb->drop_caps = true;
	sb->uid = uid;
	sb->gid = gid;
	if (uid == 0)
		corral_posture_add(&sb->posture, "identity.non_root", CORRAL_PROMISE_NA,
				   "user root asked for: uid 0 kept with every capability dropped; it can still chmod "
				   "root-owned files outside the root, read root-owned files in read-only paths, "
				   "and needs a pids cgroup for process limits");
	else
		corral_posture_add(&sb->posture, "identity.non_root", CORRAL_PROMISE_ENFORCED,
				   "running as root: the command runs as uid %u gid %u", (unsigned)uid, (unsigned)gid);
	corral_posture_add(&sb->posture, "priv.no_capabilities", CORRAL_PROMISE_ENFORCED,
			   "every capability dropped, bounding and ambient sets included");
	return 0;
}
