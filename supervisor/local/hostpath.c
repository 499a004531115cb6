/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host side of the policy's paths (hostpath.h): the filesystem
 * lookups policy/ leaves out to stay pure.
 */
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal/util.h"
#include "policy/policy.h"
#include "supervisor/local/hostpath.h"

/* As the kernel's own limit on symlinks followed in one lookup. */
#define MAX_LINKS 40

static void owner_name(uid_t uid, char *buf, size_t size)
{
	struct passwd *pw = getpwuid(uid);

	if (pw && pw->pw_name)
		snprintf(buf, size, "uid %u (%s)", (unsigned)uid, pw->pw_name);
	else
		snprintf(buf, size, "uid %u", (unsigned)uid);
}

/*
 * May a uid other than root or |me| have put (or swapped) an entry in the
 * directory |d|? Its owner can; others through write permission, except
 * where the sticky bit keeps them to their own entries.
 */
static bool dir_open_to_others(const struct stat *d, uid_t me, uid_t *who)
{
	*who = d->st_uid;
	if (d->st_uid != 0 && d->st_uid != me)
		return true;
	if (d->st_mode & S_ISVTX)
		return false;
	if (d->st_mode & S_IWOTH) {
		*who = (uid_t)-1;
		return true;
	}
	if ((d->st_mode & S_IWGRP) && d->st_gid != 0) {
		*who = (uid_t)-1;
		return true;
	}
	return false;
}

static int refuse(struct corral_error *err, const char *what, const char *path, bool cwd,
		  const char *link, const char *why)
{
	return corral_err(err, CORRAL_E_REFUSED, ELOOP,
			  "%s %s: reached through the symlink %s, %s: a sandboxed run may have planted it; %s",
			  what, path, link, why,
			  cwd ? "cd to the directory itself (cd -P) or give it with --root if you trust it"
			      : "give the directory it leads to with --root if you trust it");
}

/*
 * Walk |path| from "/" with O_PATH|O_NOFOLLOW, one component at a time,
 * each symlink checked and followed by hand. On success |*out| is the
 * directory reached (or -1 when a component does not exist: the caller's
 * own lookup reports that).
 */
static int walk(const char *what, const char *path, bool cwd, int *out, struct corral_error *err)
{
	_cleanup_close_ int cur = -1;
	_cleanup_free_ char *rest = NULL;
	char shown[PATH_MAX];
	size_t shown_len = 0;
	uid_t me = geteuid();
	int links = 0;

	*out = -1;
	if (!path || path[0] != '/')
		return 0;
	rest = strdup(path);
	if (!rest)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return 0;
	shown[0] = '\0';

	for (char *p = rest; *p;) {
		char *name = p, *slash;
		struct stat st;
		int fd;

		while (*name == '/')
			name++;
		if (!*name)
			break;
		slash = strchr(name, '/');
		p = slash ? slash + 1 : name + strlen(name);
		if (slash)
			*slash = '\0';
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			char *up = strrchr(shown, '/');

			fd = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0)
				return 0;
			safe_close(cur);
			cur = fd;
			if (up) {
				*up = '\0';
				shown_len = (size_t)(up - shown);
			}
			continue;
		}
		fd = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0) {
			safe_close(fd);
			return 0;
		}
		if (shown_len + 1 + strlen(name) < sizeof(shown))
			shown_len += (size_t)snprintf(shown + shown_len, sizeof(shown) - shown_len, "/%s", name);
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX], who[300], why[400];
			struct stat dir;
			uid_t other;
			ssize_t n;
			char *joined;

			if (st.st_uid != 0 && st.st_uid != me) {
				owner_name(st.st_uid, who, sizeof(who));
				snprintf(why, sizeof(why), "owned by %s, neither root nor you (uid %u)", who,
					 (unsigned)me);
				safe_close(fd);
				return refuse(err, what, path, cwd, shown, why);
			}
			if (fstat(cur, &dir) == 0 && dir_open_to_others(&dir, me, &other)) {
				if (other == (uid_t)-1)
					snprintf(who, sizeof(who), "other uids");
				else
					owner_name(other, who, sizeof(who));
				snprintf(why, sizeof(why), "in a directory %s may write (mode %04o)", who,
					 (unsigned)(dir.st_mode & 07777));
				safe_close(fd);
				return refuse(err, what, path, cwd, shown, why);
			}
			n = readlinkat(fd, "", target, sizeof(target) - 1);
			safe_close(fd);
			if (n < 0 || ++links > MAX_LINKS)
				return 0;
			target[n] = '\0';
			/* The target's components come first, then what was left. */
			if (asprintf(&joined, "%s/%s", target, p) < 0)
				return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
			free(rest);
			rest = joined;
			p = rest;
			if (target[0] == '/') {
				fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
				if (fd < 0)
					return 0;
				safe_close(cur);
				cur = fd;
				shown[0] = '\0';
				shown_len = 0;
			} else {
				char *up = strrchr(shown, '/');

				if (up) {
					*up = '\0';
					shown_len = (size_t)(up - shown);
				}
			}
			continue;
		}
		safe_close(cur);
		cur = fd;
	}
	*out = TAKE_FD(cur);
	return 0;
}

int corral_root_links_check(const char *what, const char *path, int *reached, struct corral_error *err)
{
	int fd, r = walk(what, path, false, &fd, err);

	if (reached)
		*reached = fd;
	else
		safe_close(fd);
	return r;
}

int corral_cwd_links_check(struct corral_error *err)
{
	const char *pwd = getenv("PWD");
	struct stat a, b;
	int fd, r;

	if (!pwd || pwd[0] != '/' || stat(pwd, &a) < 0 || stat(".", &b) < 0 || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino)
		return 0; /* no spelling of the current directory to judge */
	r = walk("root (the current directory, $PWD)", pwd, true, &fd, err);
	safe_close(fd);
	return r;
}

_public_ int corral_policy_check_paths(const struct corral_policy *p, struct corral_error *err)
{
	_cleanup_free_ char *canon = NULL;
	const char *root = corral_policy_root(p);
	int r;

	if (!p)
		return corral_err(err, CORRAL_E_USAGE, EINVAL, "no policy");
	r = root ? corral_root_links_check("root", root, NULL, err) : corral_cwd_links_check(err);
	if (r < 0)
		return r;
	canon = root ? realpath(root, NULL) : getcwd(NULL, 0);
	if (canon) {
		r = corral_check_not_system("root", root ? root : canon, canon, err);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < p->fs.read_write.n; i++) {
		_cleanup_free_ char *rw = realpath(p->fs.read_write.v[i], NULL);

		r = corral_check_not_system("fs.read_write", p->fs.read_write.v[i], rw, err);
		if (r < 0)
			return r;
	}
	return 0;
}
