/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Landlock: the ABI probe, a plan built once from a policy (paths opened
 * O_PATH, rights decided for the running ABI, promises recorded), and a
 * fresh ruleset fd per run built from that plan.
 *
 * Reference: the kernel's Documentation/userspace-api/landlock.rst
 * ("Backward and forward compatibility", "Previous limitations").
 */
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

#include "internal/util.h"
#include "landlock/landlock.h"
#include "landlock/uapi.h"
#include "internal/hostpath.h"

/* Read, list and execute: what fs.read_only grants. */
#define LL_READ_EXEC (CORRAL_LL_FS_READ_FILE | CORRAL_LL_FS_READ_DIR | CORRAL_LL_FS_EXECUTE)
/* Everything: root, fs.read_write, the private tmp. Masked by the ABI. */
#define LL_ALL (~0ULL)
/* The default devices: read and write; TRUNCATE so `>/dev/null` never trips on it. */
#define LL_DEV_RW (CORRAL_LL_FS_READ_FILE | CORRAL_LL_FS_WRITE_FILE | CORRAL_LL_FS_TRUNCATE)
/* Terminals: read, write and device ioctls (job control, window size). */
#define LL_TTY (LL_DEV_RW | CORRAL_LL_FS_IOCTL_DEV)
#define LL_PROC (CORRAL_LL_FS_READ_FILE | CORRAL_LL_FS_READ_DIR)

struct ll_rule {
	int fd;          /* O_PATH|O_CLOEXEC */
	uint64_t access; /* already masked: handled, and file-only on non-directories */
};

struct corral_ll_plan {
	int abi;
	uint64_t handled_fs;
	uint64_t handled_net;
	uint64_t scoped;
	size_t attr_size;
	struct ll_rule *rules;
	size_t n_rules;
	size_t cap_rules;
};

static int ll_create_ruleset(const struct corral_ll_ruleset_attr *attr, size_t size, uint32_t flags)
{
	return (int)syscall(__NR_landlock_create_ruleset, attr, size, flags);
}

static int ll_kernel_abi(void)
{
	int r = ll_create_ruleset(NULL, 0, CORRAL_LL_CREATE_RULESET_VERSION);

	/* ENOSYS: not built in; EOPNOTSUPP: built in but not enabled at boot. */
	return r < 0 ? 0 : r;
}

_public_ int corral_landlock_abi(void)
{
	int abi = ll_kernel_abi();
	const char *env = getenv("CORRAL_TEST_LANDLOCK_ABI");

	if (env && *env) {
		char *end;
		long v;

		errno = 0;
		v = strtol(env, &end, 10);
		/* Only ever lower: the override cannot make the kernel enforce more. */
		if (errno == 0 && *end == '\0' && v >= 0 && v < abi)
			abi = (int)v;
	}
	return abi;
}

int corral_ll_errata(void)
{
	int r;

	if (ll_kernel_abi() < 1)
		return 0;
	r = ll_create_ruleset(NULL, 0, CORRAL_LL_CREATE_RULESET_ERRATA);
	/* Kernels before the errata interface answer EINVAL: nothing reported. */
	return r < 0 ? 0 : r;
}

uint64_t corral_ll_fs_rights(int abi)
{
	uint64_t m = 0;

	if (abi >= 1)
		m |= CORRAL_LL_FS_ABI1;
	if (abi >= 2)
		m |= CORRAL_LL_FS_REFER;
	if (abi >= 3)
		m |= CORRAL_LL_FS_TRUNCATE;
	if (abi >= 5)
		m |= CORRAL_LL_FS_IOCTL_DEV;
	if (abi >= 9)
		m |= CORRAL_LL_FS_RESOLVE_UNIX;
	return m;
}

static int plan_add(struct corral_ll_plan *plan, int *fd, uint64_t access)
{
	if (access == 0)
		return 0; /* the ABI handles none of these rights: nothing to grant */
	if (plan->n_rules == plan->cap_rules) {
		size_t cap = plan->cap_rules ? plan->cap_rules * 2 : 16;
		struct ll_rule *n = realloc(plan->rules, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		plan->rules = n;
		plan->cap_rules = cap;
	}
	plan->rules[plan->n_rules].fd = TAKE_FD(*fd);
	plan->rules[plan->n_rules].access = access;
	plan->n_rules++;
	return 0;
}

/*
 * The root and the read-write paths: what a run may write, so whatever lies
 * beneath them may have been planted by an earlier run. Policy paths are
 * walked with them in view (walk_user_path).
 */
struct plan_root {
	const char *path; /* canonical */
	int fd;           /* O_PATH|O_DIRECTORY */
	struct stat st;
	/* The root, then the read-write paths located so far (anc[i] is rw[i - 1]). */
	const struct stat *anc;
	size_t n_anc;
	char *const *rw;
	/* "/", opened once for every walk, or -1 (each walk opens its own). */
	int slash;
	struct stat slash_st;
};

/* The index of the entry of |anc| that |st| is, or -1. */
static int anc_index(const struct stat *st, const struct stat *anc, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (st->st_dev == anc[i].st_dev && st->st_ino == anc[i].st_ino)
			return (int)i;
	return -1;
}

/*
 * Is directory |fd| one of |anc| (n entries) or beneath one? Walks ".."
 * from the opened object itself, so what counts is where it really lies,
 * not how it was reached. Returns the index of the nearest, with *|levels|
 * (may be NULL) the steps up to it; or -1: none (reached "/"), or a
 * failure with *|e| set to its errno (*|e| is 0 otherwise).
 */
static int dir_within(int fd, const struct stat *anc, size_t n, unsigned *levels, int *e)
{
	_cleanup_close_ int cur = fcntl(fd, F_DUPFD_CLOEXEC, 3);

	*e = 0;
	if (cur < 0) {
		*e = errno;
		return -1;
	}
	for (unsigned up_count = 0; up_count < PATH_MAX / 2; up_count++) {
		_cleanup_close_ int up = -1;
		struct stat st, ust;
		int i;

		if (fstat(cur, &st) < 0) {
			*e = errno;
			return -1;
		}
		i = anc_index(&st, anc, n);
		if (i >= 0) {
			if (levels)
				*levels = up_count;
			return i;
		}
		up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (up < 0 || fstat(up, &ust) < 0) {
			*e = errno;
			return -1;
		}
		if (ust.st_dev == st.st_dev && ust.st_ino == st.st_ino)
			return -1; /* reached "/" */
		safe_close(cur);
		cur = TAKE_FD(up);
	}
	*e = ELOOP;
	return -1;
}

/* |rw|: the read-write path the path lies beneath, or NULL for the root. */
static int beneath_error(const char *field, const char *path, const char *rw, int e,
			 struct corral_error *err)
{
	switch (e) {
	case ELOOP:
		if (rw)
			return corral_err(err, CORRAL_E_ESCAPE, e,
					  "%s: %s: a symlink inside the read-write path %s is not followed (a run could have planted it); name its target instead",
					  field, path, rw);
		return corral_err(err, CORRAL_E_ESCAPE, e,
				  "%s: %s: a symlink inside the root is not followed (the sandboxed command could have planted it); name its target instead",
				  field, path);
	case ENOENT:
	case ENOTDIR:
		return corral_err(err, CORRAL_E_NOT_FOUND, e, "%s: %s: %s", field, path, corral_strerror(e));
	default:
		return corral_err(err, CORRAL_E_SETUP, e, "%s: %s: %s", field, path, corral_strerror(e));
	}
}

/* Symbolic links a policy path may pass through (the kernel's own limit). */
#define USER_PATH_MAX_LINKS 40

/* open_user_path's |within| for an object reached through a /proc magic link. */
#define WITHIN_MAGIC (-3)

/*
 * One walk of |cur| (|path| with the links met so far spliced in) from
 * "/": returns an fd, -errno (ENOENT/ENOTDIR without a message, anything
 * else with |err| set), or 1 with *|next| set to the path to walk instead
 * (a symlink outside the writable trees: its target took its place).
 *
 * |in| is the writable tree (index in root->anc) the walk is in, -1 for
 * none, and |depth| its levels below that tree's top. Outside, a plain
 * component is beneath a tree only if it is a tree's top itself, since
 * its parent is known to be outside: one openat and one fstat. Inside,
 * no symlink is followed; ".." is the physical parent, and leaving a
 * tree's top is confirmed by walking up from where it led.
 */
/* Where a walk stands: in tree |in| (-1: none), |depth| levels below its top. */
struct walk_at {
	int in;
	unsigned depth;
};

/* One walk in progress (walk_user_path). */
struct walk {
	const struct plan_root *root;
	const char *field, *path; /* for messages */
	struct corral_error *err;
	int prev; /* the directory walked so far; -1: "/" (root->slash, or the one opened) */
	/*
	 * |at[0..n_at-1]|: where each directory walked down through stands, the
	 * last the current one; a ".." must land where the one before stood
	 * (walk_dotdot). at[0] is "/", or what a magic link led to.
	 */
	struct walk_at *at;
	size_t n_at;
	int in;         /* the tree the walk is in (index in root->anc), -1: none */
	unsigned depth; /* levels below that tree's top */
	bool magic;     /* the last component was a /proc magic link */
};

static void walk_done(struct walk *w)
{
	safe_close(w->prev);
	free(w->at);
}

/* openat |name| beneath the directory walked so far, and fstat it: the fd, or -errno as walk_user_path returns it. */
static int walk_openat(struct walk *w, const char *name, int flags, struct stat *st)
{
	int fd = openat(w->prev >= 0 ? w->prev : w->root->slash, name, O_PATH | O_CLOEXEC | flags);

	if (fd < 0 || fstat(fd, st) < 0) {
		int r = -errno;

		safe_close(fd);
		if (r == -ENOENT || r == -ENOTDIR)
			return r;
		return corral_err(w->err, CORRAL_E_SETUP, -r, "%s: %s: %s", w->field, w->path, corral_strerror(-r));
	}
	return fd;
}

/*
 * A /proc magic link (/proc/PID/root, .../cwd, .../fd/N) names an object,
 * not a path: its text is no path to follow. The kernel follows it
 * (|*pfd| is reopened so), and where it led is found by walking up from
 * there. |comp| is the link's name, ending at cur[i].
 */
static int walk_magic(struct walk *w, char *cur, size_t i, const char *comp, int *pfd, struct stat *st)
{
	char c = cur[i];
	int e;

	safe_close(*pfd);
	cur[i] = '\0';
	*pfd = walk_openat(w, comp, 0, st);
	cur[i] = c;
	if (*pfd < 0)
		return *pfd;
	w->magic = true;
	if (S_ISDIR(st->st_mode)) {
		w->in = dir_within(*pfd, w->root->anc, w->root->n_anc, &w->depth, &e);
		if (e)
			return corral_err(w->err, CORRAL_E_SETUP, e, "%s: %s: %s", w->field, w->path, corral_strerror(e));
		/* A new starting point: where it came from says nothing of its parent. */
		w->n_at = 1;
		w->at[0] = (struct walk_at){ w->in, w->depth };
	}
	return 0;
}

/*
 * A symlink outside the writable trees, |pfd|, named by |comp| (ending at
 * cur[i]): followed by hand. Its target takes its place in *|next| and
 * the walk starts again, so a host link that leads into the root (or a
 * read-write path), even straight to a link planted there, meets the
 * tree's top as a directory and is walked beneath it; the kernel
 * following it would follow the planted link too. Returns 1.
 */
static int walk_link(struct walk *w, char *cur, size_t i, char *comp, int pfd, char **next)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(pfd, "", target, sizeof(target) - 1);

	if (n < 0)
		return corral_err(w->err, CORRAL_E_SETUP, errno, "%s: %s: %s", w->field, w->path, corral_strerror(errno));
	target[n] = '\0';
	comp[0] = '\0'; /* |cur| up to the link's directory, with its '/' */
	if (asprintf(next, "%s%s%s", target[0] == '/' ? "" : cur, target, cur + i) < 0)
		return corral_err(w->err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	return 1;
}

/*
 * "..", opened as |pfd|: where the parent really is, walking up from it:
 * a run of the same root may be moving directories right now, so a count
 * of levels is not enough. Inside a tree, one level up must still be in
 * that tree, one level nearer its top; anything else is refused, as
 * openat2's RESOLVE_BENEATH refuses a ".." it cannot prove.
 */
static int walk_dotdot(struct walk *w, int pfd)
{
	unsigned up;
	int e, in = dir_within(pfd, w->root->anc, w->root->n_anc, &up, &e);
	bool moved;

	if (e)
		return corral_err(w->err, CORRAL_E_SETUP, e, "%s: %s: %s", w->field, w->path, corral_strerror(e));
	if (w->n_at > 1) {
		/* Back where the walk stood one directory up, exactly. */
		w->n_at--;
		moved = in != w->at[w->n_at - 1].in || (in >= 0 && up != w->at[w->n_at - 1].depth);
	} else if (w->in >= 0) {
		/*
		 * No record (after a magic link): one level nearer the top
		 * of the same tree; or, from a tree's top, out of every
		 * tree (a top a run cannot move lies in no other tree).
		 */
		moved = w->depth == 0 ? in != -1 : in != w->in || up != w->depth - 1;
		w->at[0] = (struct walk_at){ in, up };
	} else {
		moved = false; /* outside every tree: nothing a run can move */
		w->at[0] = (struct walk_at){ in, up };
	}
	if (moved)
		return corral_err(w->err, CORRAL_E_SETUP, EAGAIN,
				  "%s: %s: a directory on the way moved while it was resolved, or '..' leaves a writable tree reached through /proc into another; try again or name the path plainly",
				  w->field, w->path);
	w->in = in;
	w->depth = up;
	return 0;
}

/* Down into directory |st|: a tree's top (nested read-write paths: the innermost is named), or one level deeper. */
static void walk_down(struct walk *w, const struct stat *st)
{
	int a = anc_index(st, w->root->anc, w->root->n_anc);

	if (a >= 0) {
		w->in = a;
		w->depth = 0;
	} else if (w->in >= 0) {
		w->depth++;
	}
	w->at[w->n_at++] = (struct walk_at){ w->in, w->depth };
}

/*
 * Component |comp| (ending at cur[i], which held |c|; |last|: nothing but
 * slashes follows), beneath the directory walked so far: 0 when it is a
 * directory to walk on (w->prev is it) or the object (its fd in *|obj|,
 * else -1), 1 with *|next| set (a link followed by hand), or -errno.
 */
static int walk_step(struct walk *w, char *cur, size_t i, char c, char *comp, bool last, int *within,
		     char **next, int *obj)
{
	_cleanup_close_ int pfd = -1;
	bool dotdot = strcmp(comp, "..") == 0;
	struct statfs sfs;
	struct stat st;
	int r = 0;

	pfd = walk_openat(w, dotdot ? ".." : comp, O_NOFOLLOW | (dotdot ? O_DIRECTORY : 0), &st);
	cur[i] = c;
	if (pfd < 0)
		return pfd;
	w->magic = false;
	if (S_ISLNK(st.st_mode) && w->in >= 0)
		/* Inside the root or a read-write path: it may have been planted. */
		return beneath_error(w->field, w->path, w->in > 0 ? w->root->rw[w->in - 1] : NULL, ELOOP, w->err);
	if (S_ISLNK(st.st_mode) && fstatfs(pfd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC)
		r = walk_magic(w, cur, i, comp, &pfd, &st);
	else if (S_ISLNK(st.st_mode))
		return walk_link(w, cur, i, comp, pfd, next);
	else if (dotdot)
		r = walk_dotdot(w, pfd);
	else if (S_ISDIR(st.st_mode))
		walk_down(w, &st);
	if (r < 0)
		return r;
	if (!S_ISDIR(st.st_mode)) {
		if (!last || c == '/')
			return -ENOTDIR; /* "file/more", or "file/" as the kernel reads it */
		/*
		 * The object: its parent is the directory walked so far, in
		 * tree |in|; what a magic link led to has no such parent (its
		 * directory is /proc's).
		 */
		if (within) {
			/* A file that is itself a read-write path is in it. */
			int a = anc_index(&st, w->root->anc, w->root->n_anc);

			*within = a >= 0 ? a : w->magic ? WITHIN_MAGIC : w->in;
		}
		*obj = TAKE_FD(pfd);
		return 0;
	}
	safe_close(w->prev);
	w->prev = TAKE_FD(pfd);
	return 0;
}

static int walk_user_path(const struct plan_root *root, const char *field, const char *path,
			  char *cur, int *within, char **next, struct corral_error *err)
{
	_cleanup_(walk_done) struct walk w = {
		.root = root, .field = field, .path = path, .err = err, .prev = -1, .n_at = 1,
		.at = calloc(strlen(cur) / 2 + 2, sizeof(struct walk_at)),
	};
	struct stat st;
	int fd;

	if (!w.at)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	if (root->slash >= 0) {
		st = root->slash_st;
	} else {
		w.prev = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (w.prev < 0 || fstat(w.prev, &st) < 0)
			return corral_err(err, CORRAL_E_SETUP, errno, "%s: /: %s", field, corral_strerror(errno));
	}
	w.in = anc_index(&st, root->anc, root->n_anc);
	w.at[0] = (struct walk_at){ w.in, 0 };
	for (size_t i = 1, start = 1, len = strlen(cur); i <= len; i++) {
		char c = cur[i], *comp = cur + start;
		bool last;
		int r, obj = -1;

		if (c != '/' && c != '\0')
			continue;
		if (cur[i - 1] == '/') {
			start = i + 1;
			continue;
		}
		last = cur[i + strspn(cur + i, "/")] == '\0';
		cur[i] = '\0';
		if (strcmp(comp, ".") == 0) {
			cur[i] = c;
			start = i + 1;
			if (last)
				break; /* the object is the directory walked so far */
			continue;
		}
		r = walk_step(&w, cur, i, c, comp, last, within, next, &obj);
		if (r != 0)
			return r;
		if (obj >= 0)
			return obj;
		start = i + 1;
		if (last)
			break;
	}
	/* A directory (or "/"): it is the object, in tree |in| (or its top). */
	if (within)
		*within = w.in;
	if (w.prev >= 0)
		return TAKE_FD(w.prev);
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? corral_err(err, CORRAL_E_SETUP, errno, "%s: /: %s", field, corral_strerror(errno)) : fd;
}

/*
 * Open a path the user named, as an O_PATH fd; or -errno with |err| set
 * (ENOENT/ENOTDIR without a message: the caller decides whether a missing
 * path is an error).
 *
 * Walked from "/" one component at a time without following anything
 * (walk_user_path). Beneath the root or a read-write path — however the
 * walk got there: as spelled, through a host symlink, "..", a bind mount
 * of the root or a /proc magic link — a symlink is refused, since a run
 * may have planted it. Elsewhere a symlink is followed by hand (at most
 * USER_PATH_MAX_LINKS), a magic link by the kernel. A bind mount of a
 * directory *inside* the root, elsewhere on the host, is not recognised
 * (".." from its top leaves the mount, so nothing meets the root):
 * docs/threat-model.md. The fd returned is the walk's own: the object
 * checked is the object opened.
 *
 * |within| (may be NULL) receives where the object lies: the index in
 * root->anc of the tree it is the top of or lies in (for a non-directory:
 * its parent's), -1 for none, or WITHIN_MAGIC for a non-directory reached
 * through a magic link (the caller finds out). (Walking every part of a
 * path up to "/" made a policy's paths cost O(depth²) calls each, and a
 * second walk up from the object for the read-only check ~40 calls more:
 * 60 us per read-only path before, 25 us now.)
 */
static int open_user_path(const struct plan_root *root, const char *field, const char *path,
			  int *within, struct corral_error *err)
{
	_cleanup_free_ char *cur = strdup(path);

	if (within)
		*within = -1;
	if (!cur)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	for (int hops = 0;; hops++) {
		char *next = NULL;
		int r = walk_user_path(root, field, path, cur, within, &next, err);

		if (r != 1)
			return r;
		free(cur);
		cur = next;
		if (hops == USER_PATH_MAX_LINKS)
			return corral_err(err, CORRAL_E_SETUP, ELOOP, "%s: %s: %s", field, path, corral_strerror(ELOOP));
	}
}

/* Locate the read-write paths into |anc| (root already in anc[0]). */
static int locate_rw(struct plan_root *root, struct stat *anc, char *const *rw, size_t n_rw,
		     struct corral_error *err)
{
	root->n_anc = 1; /* each located with only the root in view */
	for (size_t i = 0; i < n_rw; i++) {
		int fd = open_user_path(root, "fs.read_write", rw[i], NULL, err), r;

		if (fd == -ENOENT || fd == -ENOTDIR)
			return corral_err(err, CORRAL_E_NOT_FOUND, -fd, "fs.read_write: %s: %s", rw[i],
					  corral_strerror(-fd));
		if (fd < 0)
			return fd;
		r = fstat(fd, &anc[1 + i]) < 0 ? -errno : 0;
		safe_close(fd);
		if (r < 0)
			return corral_err(err, CORRAL_E_SETUP, -r, "fs.read_write: %s: %s", rw[i], corral_strerror(-r));
	}
	root->n_anc = 1 + n_rw;
	return 0;
}

int corral_policy_path_open(const char *root_abs, char *const *rw, size_t n_rw, const char *field,
			    const char *path, struct corral_error *err)
{
	struct plan_root root = { .path = root_abs, .slash = -1, .rw = rw };
	_cleanup_free_ struct stat *anc = calloc(n_rw + 1, sizeof(*anc));
	int fd;

	if (!anc)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	root.fd = open(root_abs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root.fd < 0 || fstat(root.fd, &root.st) < 0) {
		fd = -errno;
		safe_close(root.fd);
		return corral_err(err, fd == -ENOENT || fd == -ENOTDIR ? CORRAL_E_NOT_FOUND : CORRAL_E_SETUP,
				  -fd, "root %s: %s", root_abs, corral_strerror(-fd));
	}
	anc[0] = root.st;
	root.anc = anc;
	fd = locate_rw(&root, anc, rw, n_rw, err);
	if (fd >= 0)
		fd = open_user_path(&root, field, path, NULL, err);
	safe_close(root.fd);
	if (fd == -ENOENT || fd == -ENOTDIR)
		return corral_err(err, CORRAL_E_NOT_FOUND, -fd, "%s: %s: %s", field, path, corral_strerror(-fd));
	return fd;
}

enum path_kind {
	PATH_ROOT,     /* must exist and be a directory */
	PATH_USER,     /* asked for by the policy: must exist */
	PATH_OPTIONAL, /* a default: skipped when missing on this host */
};

/*
 * Open |path| O_PATH and add it with |want| masked to what the plan
 * handles and, for a non-directory, to the rights a file rule may carry
 * (any other right there makes landlock_add_rule fail with EINVAL).
 */
static int plan_path(struct corral_ll_plan *plan, const struct plan_root *root, const char *field,
		     const char *path, uint64_t want, enum path_kind kind, struct stat *st_out,
		     int *fd_out, int *within, struct corral_error *err)
{
	_cleanup_close_ int fd = -1;
	bool known_dir = false, known_file = false;
	struct stat st;
	uint64_t access;

	if (!path || path[0] != '/')
		return corral_err(err, CORRAL_E_POLICY, EINVAL, "%s: '%s' is not an absolute path",
				  field, path ? path : "(null)");
	if (kind == PATH_USER) {
		fd = open_user_path(root, field, path, within, err);
		if (fd < 0 && fd != -ENOENT && fd != -ENOTDIR)
			return fd;
	} else if (kind == PATH_OPTIONAL && !st_out) {
		/*
		 * The defaults (system directories, devices) are known by kind:
		 * O_DIRECTORY tells a directory without an fstat, and ENOTDIR
		 * on the last component tells a non-directory. Two dozen
		 * fewer calls per sandbox.
		 */
		fd = open(path, O_PATH | O_CLOEXEC | O_DIRECTORY);
		if (fd >= 0) {
			known_dir = true;
		} else if (errno == ENOTDIR) {
			fd = open(path, O_PATH | O_CLOEXEC);
			known_file = fd >= 0;
		}
		if (fd < 0)
			fd = -errno;
	} else {
		fd = open(path, O_PATH | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
	}
	if (fd < 0) {
		int e = -fd;

		if (kind == PATH_OPTIONAL && (e == ENOENT || e == ENOTDIR))
			return 0;
		return corral_err(err, e == ENOENT || e == ENOTDIR ? CORRAL_E_NOT_FOUND : CORRAL_E_SETUP,
				  e, "%s: %s: %s", field, path, corral_strerror(e));
	}
	if (known_dir || known_file)
		st.st_mode = known_dir ? S_IFDIR : S_IFREG; /* only the kind is read below */
	else if (fstat(fd, &st) < 0)
		return corral_err(err, CORRAL_E_SETUP, errno, "%s: %s: %s", field, path, corral_strerror(errno));
	if (kind == PATH_ROOT && !S_ISDIR(st.st_mode))
		return corral_err(err, CORRAL_E_SETUP, ENOTDIR, "%s: %s: %s", field, path,
				  corral_strerror(ENOTDIR));
	if (st_out)
		*st_out = st;
	if (fd_out) {
		*fd_out = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (*fd_out < 0)
			return corral_err(err, CORRAL_E_SETUP, errno, "%s: %s: %s", field, path,
					  corral_strerror(errno));
	}
	access = want & plan->handled_fs;
	if (!S_ISDIR(st.st_mode))
		access &= CORRAL_LL_FS_FILE_RIGHTS;
	if (plan_add(plan, &fd, access) < 0)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	return 0;
}

/*
 * Landlock rules only ever add rights: a read-only path beneath the root
 * or a read-write path would stay writable. Say so rather than promise a
 * read-only path the kernel will not enforce. Decided on where the path
 * really leads (|within|, from open_user_path's walk), not on its
 * spelling.
 */
static int check_not_beneath_writable(const struct corral_policy *p, const struct plan_root *root,
				      const char *ro, const struct stat *st, int within,
				      struct corral_error *err)
{
	int w = within;

	if (w == WITHIN_MAGIC) {
		/*
		 * A non-directory reached through a /proc magic link: its
		 * directory is whatever its real path names, and only while
		 * that path still leads to this very file; otherwise refused.
		 */
		_cleanup_free_ char *real = realpath(ro, NULL);
		_cleanup_close_ int dir = -1;
		char *slash = real ? strrchr(real, '/') : NULL;
		struct stat rst;

		if (!slash || stat(real, &rst) < 0 || rst.st_dev != st->st_dev || rst.st_ino != st->st_ino)
			return corral_err(err, CORRAL_E_POLICY, EINVAL,
					  "fs.read_only: %s: a file reached through /proc whose place cannot be told (removed, in another mount namespace, or too deep); name it by its path",
					  ro);
		if (slash == real)
			slash[1] = '\0';
		else
			*slash = '\0';
		dir = open_user_path(root, "fs.read_only", real, &w, err);
		if (dir < 0)
			return dir == -ENOENT || dir == -ENOTDIR ?
				       corral_err(err, CORRAL_E_NOT_FOUND, -dir, "fs.read_only: %s: %s", ro,
						  corral_strerror(-dir)) :
				       dir;
	}
	if (w >= 0)
		return corral_err(err, CORRAL_E_POLICY, EINVAL,
				  "fs.read_only: %s lies within the read-write %s %s; Landlock only adds rights, so it would stay writable",
				  ro, w == 0 ? "root" : "path", w == 0 ? root->path : p->fs.read_write.v[w - 1]);
	return 0;
}

static const char *const default_devices[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
};
/*
 * /dev/tty (the controlling terminal, an interactive run's own) and
 * /dev/ptmx. Not /dev/pts: it holds every terminal on the host, and those
 * of the command's uid (all of the user's, when corral runs unprivileged)
 * it could open, read the keystrokes meant for them and write on their
 * screens. The terminal the command inherits is granted per run
 * (corral_ll_ruleset). A new pty pair's other end lies in /dev/pts too:
 * the supervisor opens it for the command (TIOCGPTPEER, seccomp user
 * notification: supervisor/local/unotify/), docs/threat-model.md.
 */
static const char *const default_ttys[] = { "/dev/tty", "/dev/ptmx" };

/*
 * The promises this module keeps, in DESIGN.md's words. A dropped one's
 * |why| is a whole message naming the promise, its id and the ABI needed
 * ("truncate outside the root (fs.truncate): needs Landlock ABI 3, kernel
 * has 2"), so a caller can print it as it is. |abi| is the ABI
 * that introduced what enforces it. Under ABI 1 a cross-directory link or
 * rename is always denied (REFER is implicitly handled by every ruleset),
 * so fs.refer holds from ABI 1 — only more strictly.
 */
enum {
	P_ANY_NET = 0,
	P_NET_NONE = 1, /* only asked for under network "none" and "allow" */
};
static const struct ll_promise {
	enum corral_promise_id which;
	const char *what;
	int abi;
	int when;
} ll_promises[] = {
	{ CORRAL_P_FS_WRITE, "writes outside the root and fs.read_write", 1, P_ANY_NET },
	{ CORRAL_P_FS_READ, "reads outside the root, fs.read_write and fs.read_only", 1, P_ANY_NET },
	{ CORRAL_P_FS_REFER, "link or rename out of the root", 1, P_ANY_NET },
	{ CORRAL_P_SCOPE_PTRACE, "ptrace and /proc/PID of processes outside the sandbox", 1, P_ANY_NET },
	{ CORRAL_P_FS_TRUNCATE, "truncate outside the root", 3, P_ANY_NET },
	{ CORRAL_P_NET_TCP_LANDLOCK, "TCP bind and connect (Landlock, beside seccomp)", 4, P_NET_NONE },
	{ CORRAL_P_FS_IOCTL_DEV, "device ioctls outside /dev/tty, /dev/ptmx and the command's own terminal", 5, P_ANY_NET },
	{ CORRAL_P_SCOPE_SIGNAL, "signals to processes outside the sandbox", 6, P_ANY_NET },
	{ CORRAL_P_SCOPE_ABSTRACT_UNIX, "abstract Unix sockets outside the sandbox", 6, P_ANY_NET },
};

/*
 * Why there is no Landlock ABI, from the errno of the version query:
 * EPERM is no kernel's answer but a seccomp filter's (docker's default
 * profile before Landlock was added to it).
 */
static const char *ll_absent_why(void)
{
	if (ll_create_ruleset(NULL, 0, CORRAL_LL_CREATE_RULESET_VERSION) >= 0)
		return " (lowered by CORRAL_TEST_LANDLOCK_ABI)";
	if (errno == EPERM)
		return " (a seccomp filter corral runs under, a container's profile, refuses "
		       "landlock_create_ruleset: start the container with --security-opt "
		       "seccomp=docs/deploy/seccomp-corral.json, docs/deploy.md)";
	if (errno == EOPNOTSUPP)
		return " (Landlock is built in but not enabled: add landlock to the lsm= boot parameter)";
	return " (Landlock absent or disabled)";
}

static void plan_promises(const struct corral_policy *p, int abi, struct corral_posture *ps)
{
	const char *absent = abi == 0 ? ll_absent_why() : "";

	for (size_t i = 0; i < ARRAY_SIZE(ll_promises); i++) {
		const struct ll_promise *pr = &ll_promises[i];

		if (pr->when == P_NET_NONE && p->network != CORRAL_NET_NONE && p->network != CORRAL_NET_ALLOW)
			corral_posture_add(ps, pr->which, CORRAL_PROMISE_NA, "%s: not asked for under network %s",
					   pr->what, p->network == CORRAL_NET_HOST ? "host" : "loopback");
		else if (abi >= pr->abi)
			corral_posture_add(ps, pr->which, CORRAL_PROMISE_ENFORCED, "%s: denied by Landlock",
					   pr->what);
		else
			corral_posture_add(ps, pr->which, CORRAL_PROMISE_DROPPED,
					   "%s (%s): needs Landlock ABI %d, kernel has %d%s", pr->what,
					   corral_promises[pr->which].id, pr->abi, abi, absent);
	}
	/*
	 * connect() to a pathname Unix socket outside the allowed paths is
	 * only mediated from ABI 9; below it seccomp refuses socket(AF_UNIX)
	 * under network "none", so this is not a promise Landlock must keep.
	 */
	if (abi >= 9)
		corral_posture_add(ps, CORRAL_P_FS_RESOLVE_UNIX, CORRAL_PROMISE_ENFORCED,
				   "connect to pathname Unix sockets outside the allowed paths: denied by Landlock");
	else if (p->network == CORRAL_NET_HOST)
		corral_posture_add(ps, CORRAL_P_FS_RESOLVE_UNIX, CORRAL_PROMISE_NA,
				   "connect to pathname Unix sockets outside the allowed paths: needs Landlock ABI 9, kernel has %d; not confined under network \"host\"",
				   abi);
	else
		corral_posture_add(ps, CORRAL_P_FS_RESOLVE_UNIX, CORRAL_PROMISE_NA,
				   "connect to pathname Unix sockets outside the allowed paths: needs Landlock ABI 9, kernel has %d; left to the supervisor's mediation or seccomp",
				   abi);
}

/*
 * Paths are opened (and a missing one reported) even without Landlock: a
 * policy naming a missing path is wrong on any kernel.
 */
static int plan_paths(struct corral_ll_plan *plan, const struct corral_policy *p,
		      const char *root_abs, struct corral_error *err)
{
	struct plan_root root = { .path = root_abs, .fd = -1, .slash = -1 };
	_cleanup_free_ struct stat *anc = NULL;
	_cleanup_free_ char *canon = NULL;
	size_t n_anc = 0;
	int r;

	canon = realpath(root_abs, NULL);
	if (!canon)
		return corral_err(err, errno == ENOENT || errno == ENOTDIR ? CORRAL_E_NOT_FOUND : CORRAL_E_SETUP,
				  errno, "root %s: %s", root_abs, corral_strerror(errno));
	r = corral_host_check_not_system("root", root_abs, canon, err);
	if (r < 0)
		return r;
	anc = calloc(p->fs.read_write.n + 1, sizeof(*anc));
	if (!anc)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	r = plan_path(plan, &root, "root", root_abs, LL_ALL, PATH_ROOT, &anc[0], &root.fd, NULL, err);
	if (r < 0)
		goto out;
	root.st = anc[n_anc++];
	root.anc = anc;
	root.n_anc = n_anc;
	root.rw = p->fs.read_write.v;
	/* Shared by the walks of the policy's own paths (open_user_path). */
	if (p->fs.read_write.n || p->fs.read_only.n) {
		root.slash = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (root.slash < 0 || fstat(root.slash, &root.slash_st) < 0) {
			r = corral_err(err, CORRAL_E_SETUP, errno, "/: %s", corral_strerror(errno));
			goto out;
		}
	}
	/*
	 * The read-write paths, twice: first where each leads (beneath the
	 * root where it leads there), then each opened for good with all of
	 * them known, so one that leads into another (listed before or after
	 * it) is walked beneath that one and a link planted there is refused.
	 */
	r = locate_rw(&root, anc, p->fs.read_write.v, p->fs.read_write.n, err);
	if (r < 0)
		goto out;
	for (size_t i = 0; i < p->fs.read_write.n; i++) {
		const char *path = p->fs.read_write.v[i];
		_cleanup_free_ char *rw_canon = NULL;
		struct stat st;

		r = plan_path(plan, &root, "fs.read_write", path, LL_ALL, PATH_USER, &st, NULL, NULL, err);
		if (r < 0)
			goto out;
		if (st.st_dev != anc[1 + i].st_dev || st.st_ino != anc[1 + i].st_ino) {
			r = corral_err(err, CORRAL_E_SETUP, EAGAIN, "fs.read_write: %s: changed while being opened",
				       path);
			goto out;
		}
		n_anc++;
		/* Opened safely above: a symlink planted under the root was refused. */
		rw_canon = realpath(path, NULL);
		r = corral_host_check_not_system("fs.read_write", path, rw_canon, err);
		if (r < 0)
			goto out;
	}
	for (size_t i = 0; i < p->fs.read_only.n; i++) {
		const char *path = p->fs.read_only.v[i];
		bool dflt = path && corral_is_default_read_only(path);
		struct stat st;
		int within = -1;

		r = plan_path(plan, &root, "fs.read_only", path, LL_READ_EXEC,
			      dflt ? PATH_OPTIONAL : PATH_USER, dflt ? NULL : &st, NULL,
			      dflt ? NULL : &within, err);
		if (r < 0)
			goto out;
		/* Defaults beneath a writable path are subsumed, as the user asked. */
		if (!dflt) {
			r = check_not_beneath_writable(p, &root, path, &st, within, err);
			if (r < 0)
				goto out;
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(default_devices); i++) {
		r = plan_path(plan, &root, "device", default_devices[i], LL_DEV_RW, PATH_OPTIONAL, NULL,
			      NULL, NULL, err);
		if (r < 0)
			goto out;
	}
	for (size_t i = 0; i < ARRAY_SIZE(default_ttys); i++) {
		r = plan_path(plan, &root, "terminal", default_ttys[i], LL_TTY, PATH_OPTIONAL, NULL,
			      NULL, NULL, err);
		if (r < 0)
			goto out;
	}
	r = plan_path(plan, &root, "proc", "/proc", LL_PROC, PATH_OPTIONAL, NULL, NULL, NULL, err);
out:
	safe_close(root.slash);
	safe_close(root.fd);
	return r;
}

int corral_ll_plan_new(const struct corral_policy *p, const char *root_abs, struct corral_posture *ps,
		       struct corral_ll_plan **out, struct corral_error *err)
{
	struct corral_ll_plan *plan;
	int abi, r;

	if (!p || !root_abs || !out)
		return corral_err(err, CORRAL_E_INTERNAL, EINVAL, "landlock: bad arguments");
	plan = calloc(1, sizeof(*plan));
	if (!plan)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");

	abi = corral_landlock_abi();
	plan->abi = abi;
	plan->handled_fs = corral_ll_fs_rights(abi);
	/*
	 * "allow" too: the command itself connects nowhere by TCP; the
	 * supervisor's helper, outside this domain, makes the one connect
	 * it may (to the egress proxy).
	 */
	if ((p->network == CORRAL_NET_NONE || p->network == CORRAL_NET_ALLOW) && abi >= 4)
		plan->handled_net = CORRAL_LL_NET_BIND_TCP | CORRAL_LL_NET_CONNECT_TCP;
	if (abi >= 6)
		plan->scoped = CORRAL_LL_SCOPE_SIGNAL | CORRAL_LL_SCOPE_ABSTRACT_UNIX_SOCKET;
	plan->attr_size = abi >= 6 ? CORRAL_LL_ATTR_SIZE_V6 :
			  abi >= 4 ? CORRAL_LL_ATTR_SIZE_V4 : CORRAL_LL_ATTR_SIZE_V1;

	r = plan_paths(plan, p, root_abs, err);
	if (r < 0) {
		corral_ll_plan_free(plan);
		return r;
	}

	plan_promises(p, abi, ps);
	*out = plan;
	return 0;
}

void corral_ll_plan_free(struct corral_ll_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n_rules; i++)
		safe_close(plan->rules[i].fd);
	free(plan->rules);
	free(plan);
}

int corral_ll_plan_abi(const struct corral_ll_plan *plan)
{
	return plan ? plan->abi : 0;
}

static int add_path_rule(int ruleset_fd, int fd, uint64_t access)
{
	struct corral_ll_path_beneath_attr attr = {
		.allowed_access = access,
		.parent_fd = fd,
	};

	if (syscall(__NR_landlock_add_rule, ruleset_fd, CORRAL_LL_RULE_PATH_BENEATH, &attr, 0) < 0)
		return -errno;
	return 0;
}

int corral_ll_ruleset(const struct corral_ll_plan *plan, int extra_rw_fd,
		      const struct corral_ll_stdio *stdio, size_t n_stdio, struct corral_error *err)
{
	struct corral_ll_ruleset_attr attr = {};
	_cleanup_close_ int rfd = -1;
	int r;

	if (!plan)
		return corral_err(err, CORRAL_E_INTERNAL, EINVAL, "landlock: no plan");
	if (plan->abi < 1)
		return corral_err(err, CORRAL_E_UNSUPPORTED, EOPNOTSUPP,
				  "landlock: not available on this kernel");
	attr.handled_access_fs = plan->handled_fs;
	attr.handled_access_net = plan->handled_net;
	attr.scoped = plan->scoped;
	rfd = ll_create_ruleset(&attr, plan->attr_size, 0);
	if (rfd < 0)
		return corral_err(err, CORRAL_E_SETUP, errno, "landlock: create ruleset: %s",
				  corral_strerror(errno));
	/*
	 * Only reads of the plan follow: its fds stay open for the plan's
	 * life, so concurrent calls need no lock.
	 */
	for (size_t i = 0; i < plan->n_rules; i++) {
		r = add_path_rule(rfd, plan->rules[i].fd, plan->rules[i].access);
		if (r < 0)
			return corral_err(err, CORRAL_E_SETUP, -r, "landlock: add rule: %s",
					  corral_strerror(-r));
	}
	if (extra_rw_fd >= 0) {
		struct stat st;
		uint64_t access = plan->handled_fs;

		if (fstat(extra_rw_fd, &st) < 0)
			return corral_err(err, CORRAL_E_SETUP, errno, "landlock: private tmp: %s",
					  corral_strerror(errno));
		if (!S_ISDIR(st.st_mode))
			access &= CORRAL_LL_FS_FILE_RIGHTS;
		r = add_path_rule(rfd, extra_rw_fd, access);
		if (r < 0)
			return corral_err(err, CORRAL_E_SETUP, -r, "landlock: add private tmp rule: %s",
					  corral_strerror(-r));
	}
	/*
	 * A convenience: the command holds these open already. A file
	 * Landlock takes no rule for (EBADFD: an internal mount, a pipe's or
	 * a socket's) is skipped.
	 */
	for (size_t i = 0; i < n_stdio; i++) {
		uint64_t access = 0;

		if (stdio[i].access & CORRAL_LL_STDIO_READ)
			access |= CORRAL_LL_FS_READ_FILE;
		if (stdio[i].access & CORRAL_LL_STDIO_WRITE)
			access |= CORRAL_LL_FS_WRITE_FILE | CORRAL_LL_FS_TRUNCATE;
		if (access && (stdio[i].access & CORRAL_LL_STDIO_TTY))
			access |= CORRAL_LL_FS_IOCTL_DEV;

		access &= CORRAL_LL_FS_FILE_RIGHTS & plan->handled_fs;
		if (access)
			(void)add_path_rule(rfd, stdio[i].fd, access);
	}
	/* Network "none": TCP handled with no port rule, so every port is denied. */
	return TAKE_FD(rfd);
}

/* Runs in a forked child on its own stack: no sanitizer instrumentation (see supervisor/exec/child.c). */
__attribute__((no_sanitize("address", "undefined"))) int corral_ll_add_proc(const struct corral_ll_plan *plan,
									      int ruleset_fd)
{
	int fd, r;

	if (!plan || ruleset_fd < 0 || !(plan->handled_fs & LL_PROC))
		return 0;
	fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = add_path_rule(ruleset_fd, fd, LL_PROC & plan->handled_fs);
	close(fd);
	return r;
}

int corral_ll_restrict_self(int ruleset_fd)
{
	/*
	 * Flags 0: the default audit behaviour (ABI 7 logs denials until the
	 * next execve only). TSYNC (ABI 8) is not needed: the forked child
	 * is single-threaded when it restricts itself.
	 */
	if (syscall(__NR_landlock_restrict_self, ruleset_fd, 0U) < 0)
		return -errno;
	return 0;
}
