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

#include "supervisor/exec/sandbox.h"

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

/*
 * User and group lookups: /etc/passwd and /etc/group first, read directly;
 * then NSS, except in a static executable (the corral CLI is one where it
 * can be), where glibc's NSS modules (nss_systemd) crash. A name only a
 * directory service knows then needs its number.
 */
extern char _DYNAMIC[] __attribute__((weak));

static bool file_lookup(const char *file, const char *name, long id, unsigned long *id_out,
			unsigned long *gid_out)
{
	_cleanup_fclose_ FILE *f = fopen(file, "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	bool found = false;

	if (!f)
		return false;
	while (!found && getline(&line, &cap, f) > 0) {
		char *fields[4] = {}, *save = NULL, *tok;
		int n = 0;
		char *endp;
		unsigned long v;

		/* name:passwd:id:gid-or-members... (strsep keeps empty fields) */
		for (char *cur = line; n < 4 && (tok = strsep(&cur, ":\n")) != NULL;)
			fields[n++] = tok;
		(void)save;
		if (n < 3 || !*fields[2])
			continue;
		v = strtoul(fields[2], &endp, 10);
		if (*endp)
			continue;
		if ((name && strcmp(fields[0], name) == 0) || (!name && id >= 0 && (unsigned long)id == v)) {
			*id_out = v;
			if (gid_out)
				*gid_out = n >= 4 && *fields[3] ? strtoul(fields[3], NULL, 10) : v;
			found = true;
		}
	}
	return found;
}

static bool user_by_name(const char *name, uid_t *uid, gid_t *gid)
{
	unsigned long u, g;
	struct passwd *pw;

	if (file_lookup("/etc/passwd", name, -1, &u, &g)) {
		*uid = (uid_t)u;
		*gid = (gid_t)g;
		return true;
	}
	if (!_DYNAMIC || !(pw = getpwnam(name)))
		return false;
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return true;
}

static bool user_by_uid(uid_t uid, gid_t *gid)
{
	unsigned long u, g;
	struct passwd *pw;

	if (file_lookup("/etc/passwd", NULL, (long)uid, &u, &g)) {
		*gid = (gid_t)g;
		return true;
	}
	if (!_DYNAMIC || !(pw = getpwuid(uid)))
		return false;
	*gid = pw->pw_gid;
	return true;
}

static bool group_by_name(const char *name, gid_t *gid)
{
	unsigned long g;
	struct group *gr;

	if (file_lookup("/etc/group", name, -1, &g, NULL)) {
		*gid = (gid_t)g;
		return true;
	}
	if (!_DYNAMIC || !(gr = getgrnam(name)))
		return false;
	*gid = gr->gr_gid;
	return true;
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

/* Can |uid|:|gid| (no supplementary groups, no capabilities) write and enter |st|? */
bool corral_can_write(const struct stat *st, uid_t uid, gid_t gid)
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
		return corral_err(err, CORRAL_E_SETUP, errno, "root %s: %s", sb->root, corral_strerror(errno));

	if (geteuid() != 0) {
		/* Unprivileged: the command runs as we do; --user can only name ourselves. */
		if (!by_default) {
			const char *colon = strchr(user, ':');
			size_t n = colon ? (size_t)(colon - user) : strlen(user);

			uid_t u = (uid_t)-1;
			gid_t g;

			snprintf(name, sizeof(name), "%.*s", (int)n, user);
			if (parse_id(name, &id))
				u = (uid_t)id;
			else if (!user_by_name(name, &u, &g))
				u = (uid_t)-1;
			if (u != getuid())
				return corral_err(err, CORRAL_E_UNSUPPORTED, EPERM,
						  "user %s: choosing the identity needs corral to run as root (it runs as uid %u)",
						  user, (unsigned)getuid());
		}
		sb->switch_identity = false;
		sb->drop_caps = has_any_capability();
		sb->uid = getuid();
		sb->gid = getgid();
		corral_posture_add(&sb->posture, CORRAL_P_IDENTITY_NON_ROOT,
				   getuid() ? CORRAL_PROMISE_ENFORCED : CORRAL_PROMISE_NA,
				   "the command runs as corral's own uid %u", (unsigned)getuid());
		corral_posture_add(&sb->posture, CORRAL_P_PRIV_NO_CAPABILITIES, CORRAL_PROMISE_ENFORCED,
				   "every capability dropped, bounding and ambient sets included");
		return 0;
	}

	if (by_default) {
		/*
		 * nobody is 65534:65534 without an NSS lookup (which costs more
		 * than the rest of the setup); another owner runs with its
		 * primary group, or, without a passwd entry, the directory's
		 * group unless that is root's.
		 */
		if (st.st_uid == 0 || st.st_uid == NOBODY) {
			uid = NOBODY;
			gid = NOBODY;
			snprintf(who, sizeof(who), "nobody (uid %u)%s", (unsigned)uid,
				 st.st_uid == 0 ? ", the default when root owns the directory" : "");
		} else {
			uid = st.st_uid;
			/* Never root's group unless asked for (--user U:0). */
			if (!user_by_uid(uid, &gid) || gid == 0)
				gid = st.st_gid ? st.st_gid : NOBODY;
			snprintf(who, sizeof(who), "uid %u, the directory's owner", (unsigned)uid);
		}
	} else {
		const char *colon = strchr(user, ':');
		size_t n = colon ? (size_t)(colon - user) : strlen(user);
		bool known = false;
		gid_t user_gid = 0;

		if (n >= sizeof(name) || (colon && strlen(colon + 1) >= sizeof(group)))
			return corral_err(err, CORRAL_E_USAGE, EINVAL, "user %s: too long", user);
		memcpy(name, user, n);
		name[n] = '\0';
		if (colon)
			snprintf(group, sizeof(group), "%s", colon + 1);
		if (parse_id(name, &id)) {
			uid = (uid_t)id;
			known = user_by_uid(uid, &user_gid);
		} else {
			if (!user_by_name(name, &uid, &user_gid))
				return corral_err(err, CORRAL_E_NOT_FOUND, ENOENT, "user: no such user '%s'", name);
			known = true;
		}
		if (colon && *group) {
			if (parse_id(group, &id))
				gid = (gid_t)id;
			else if (!group_by_name(group, &gid))
				return corral_err(err, CORRAL_E_NOT_FOUND, ENOENT, "user: no such group '%s'", group);
		} else if (known) {
			gid = user_gid;
		} else {
			gid = (gid_t)uid;
		}
		snprintf(who, sizeof(who), "%s (uid %u, gid %u)", user, (unsigned)uid, (unsigned)gid);
	}

	if (!corral_can_write(&st, uid, gid))
		return corral_err(err, CORRAL_E_SETUP, EACCES,
				  "root %s is not writable by %s%s; choose who runs the command with --user USER[:GROUP] "
				  "(for example the directory's owner), make the directory writable for that user%s",
				  sb->root, who, uid == 0 ? " without capabilities" : "",
				  uid == 0 ? "" : ", or pass --user root to keep uid 0 with every capability dropped");

	sb->switch_identity = true;
	sb->drop_caps = true;
	sb->uid = uid;
	sb->gid = gid;
	if (uid == 0)
		corral_posture_add(&sb->posture, CORRAL_P_IDENTITY_NON_ROOT, CORRAL_PROMISE_NA,
				   "user root asked for: uid 0 kept with every capability dropped; it can still chmod "
				   "root-owned files outside the root, read root-owned files in read-only paths, "
				   "and needs a pids cgroup for process limits");
	else
		corral_posture_add(&sb->posture, CORRAL_P_IDENTITY_NON_ROOT, CORRAL_PROMISE_ENFORCED,
				   "running as root: the command runs as uid %u gid %u", (unsigned)uid, (unsigned)gid);
	corral_posture_add(&sb->posture, CORRAL_P_PRIV_NO_CAPABILITIES, CORRAL_PROMISE_ENFORCED,
			   "every capability dropped, bounding and ambient sets included");
	return 0;
}
