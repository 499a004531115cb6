/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host side of the policy's paths (hostpath.h): the filesystem
 * lookups policy/ leaves out to stay pure.
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal/util.h"
#include "policy/policy.h"
#include "internal/hostpath.h"

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

static const char *pwd_of_cwd(void);

int corral_cwd_links_check(struct corral_error *err)
{
	const char *pwd = pwd_of_cwd();
	int fd, r;

	if (!pwd)
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
		r = corral_host_check_not_system("root", root ? root : canon, canon, err);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < p->fs.read_write.n; i++) {
		_cleanup_free_ char *rw = realpath(p->fs.read_write.v[i], NULL);

		r = corral_host_check_not_system("fs.read_write", p->fs.read_write.v[i], rw, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * The system directories' canonical paths, resolved once per process: a
 * run checks its root (and every read_write path) against all of them,
 * and the CLI and the Landlock plan both check, so resolving them each
 * time cost some thirty readlink calls per check. They name the host's
 * own layout, which does not move under a running corral.
 */
static const char **system_real;
static pthread_once_t system_real_once = PTHREAD_ONCE_INIT;

static void system_real_init(void)
{
	size_t n = 0;

	while (corral_system_dirs[n])
		n++;
	system_real = calloc(n + 1, sizeof(*system_real));
	for (size_t i = 0; system_real && i < n; i++)
		system_real[i] = realpath(corral_system_dirs[i], NULL); /* NULL: absent here */
}

const char *const *corral_system_real(void)
{
	pthread_once(&system_real_once, system_real_init);
	return (const char *const *)system_real;
}

int corral_host_check_not_system(const char *what, const char *path, const char *canon,
				 struct corral_error *err)
{
	return corral_check_not_system(what, path, canon, corral_system_real(), err);
}

/* $PWD when it names the current directory (the spelling the user's shell reached it by), else NULL. */
static const char *pwd_of_cwd(void)
{
	const char *pwd = getenv("PWD");
	struct stat a, b;

	if (!pwd || pwd[0] != '/' || stat(pwd, &a) < 0 || stat(".", &b) < 0 || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino)
		return NULL;
	return pwd;
}

int corral_path_absolute(const char *name, const char *value, char **out, struct corral_error *err)
{
	_cleanup_free_ char *cwd = NULL;
	const char *pwd;

	if (!*value || value[0] == '/') {
		*out = strdup(value);
		return *out ? 0 : corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "%s: out of memory", name);
	}
	/*
	 * Joined to $PWD where it names the current directory: the same
	 * directory, spelled as the user reached it, so a symlink on the way
	 * stays visible to the root's check ("cd ROOT/planted && corral run
	 * --root ." is judged like "--root ROOT/planted"). ".." then still
	 * means the physical parent: the kernel resolves the joined path.
	 */
	pwd = pwd_of_cwd();
	cwd = pwd ? strdup(pwd) : getcwd(NULL, 0);
	if (!cwd) {
		int e = errno;

		return corral_err(err, CORRAL_E_SETUP, e, "%s: current directory: %s", name, corral_strerror(e));
	}
	if (asprintf(out, "%s/%s", cwd, value) < 0) {
		*out = NULL;
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "%s: out of memory", name);
	}
	return 0;
}

/*
 * The public overlay: the host part (a relative --root/--ro/--rw/--audit made
 * absolute against the current directory, as the user meant it from where
 * they typed it), then policy/'s pure corral_policy_overlay.
 */
_public_ int corral_policy_set(struct corral_policy *p, const char *option, const char *value,
			       struct corral_error *err)
{
	_cleanup_free_ char *abs = NULL;
	char name[64];
	int r;

	if (p && option && value && value[0] && value[0] != '/' &&
	    (strcmp(option, "root") == 0 || strcmp(option, "ro") == 0 || strcmp(option, "rw") == 0 ||
	     strcmp(option, "audit") == 0)) {
		snprintf(name, sizeof(name), "--%s", option);
		r = corral_path_absolute(name, value, &abs, err);
		if (r < 0)
			return r;
		value = abs;
	}
	return corral_policy_overlay(p, option, value, err);
}
