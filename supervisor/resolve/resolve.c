/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host-side boundary resolver: open a path on the sandbox's behalf only
 * when the kernel proves it lies beneath the root.
 *
 * The proof is openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV) on the root directory fd: the
 * check and the open are one system call, so a sandbox that swaps a
 * directory for a symlink has no window to exploit. Nothing here
 * normalises a path lexically before the kernel sees it; lexical work is
 * done only to explain a refusal or to display a path the kernel has
 * already accepted (no symlinks were followed, so ".." meant the parent).
 * Where openat2 is missing we refuse; there is no weaker fallback.
 */
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include "internal/openat2.h"
#include "internal/util.h"
#include "policy/path.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

#define RESOLVE_STRICT (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)
#define KIND_MASK (CORRAL_RESOLVE_FILE | CORRAL_RESOLVE_DIRECTORY | CORRAL_RESOLVE_ANY)
#define SHOWN_MAX 240

static const char msg_no_openat2[] =
	"openat2 unavailable (kernel < 5.6): refusing to resolve without it";

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
static size_t utf8_seq(const unsigned char *s)
{
	size_t n;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

/*
 * The path as shown in a message: one line of valid UTF-8 (control bytes
 * and invalid sequences written as \xNN), clipped to SHOWN_MAX bytes.
 */
static void shown_path(char *buf, size_t sz, const char *path)
{
	const unsigned char *s = (const unsigned char *)path;
	size_t o = 0;

	while (*s && o + 8 < sz) {
		size_t n = utf8_seq(s);

		if (o >= SHOWN_MAX) {
			o += (size_t)snprintf(buf + o, sz - o, "...");
			break;
		}
		if (n == 0 || (n == 1 && (*s < 0x20 || *s == 0x7f))) {
			o += (size_t)snprintf(buf + o, sz - o, "\\x%02x", *s);
			s++;
			continue;
		}
		memcpy(buf + o, s, n);
		o += n;
		s += n;
	}
	buf[o] = '\0';
}

_printf_(5, 6) static int refuse(struct corral_error *err, int code, int sys_errno,
				 const char *path, const char *fmt, ...)
{
	char shown[SHOWN_MAX + 16], reason[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	shown_path(shown, sizeof(shown), path ? path : "");
	return corral_err(err, code, sys_errno, "%s: %s", shown, reason);
}

/* Does |rel| climb above its start, counting components only? */
static bool lexically_escapes(const char *rel)
{
	long depth = 0;

	for (const char *p = rel; *p;) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (--depth < 0)
				return true;
		} else if (n > 0 && !(n == 1 && p[0] == '.')) {
			depth++;
		}
		p += n;
		p += strspn(p, "/");
	}
	return false;
}

static const char *type_name(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return "regular file";
	case S_IFDIR: return "directory";
	case S_IFIFO: return "FIFO";
	case S_IFCHR: return "character device";
	case S_IFBLK: return "block device";
	case S_IFSOCK: return "socket";
	case S_IFLNK: return "symlink";
	default: return "unknown file type";
	}
}

/*
 * Find the first prefix of |rel| whose strict open fails with |e| and
 * store it in |where| (may be empty when the first component fails).
 * Used only to explain a refusal; never to decide one.
 */
static void locate(int root_fd, const char *rel, int e, char *where, size_t sz, bool *magic)
{
	_cleanup_free_ char *buf = strdup(rel);
	size_t len, i = 0;

	where[0] = '\0';
	*magic = false;
	if (!buf)
		return;
	len = strlen(buf);
	while (i < len) {
		size_t start, end;
		char saved;
		int fd;

		i += strspn(buf + i, "/");
		start = i;
		i += strcspn(buf + i, "/");
		end = i;
		if (end == start)
			break;
		saved = buf[end];
		buf[end] = '\0';
		fd = corral_openat2(root_fd, buf, O_PATH | O_CLOEXEC, 0, RESOLVE_STRICT);
		if (fd >= 0) {
			safe_close(fd);
			buf[end] = saved;
			continue;
		}
		if (fd != -e) {
			buf[end] = saved;
			continue;
		}
		snprintf(where, sz, "%s", buf);
		if (e == ELOOP) {
			/* Classify the link: magic links live on procfs and do not name a path. */
			_cleanup_close_ int pfd = -1;
			char target[256];
			struct statfs sfs;
			ssize_t n;

			buf[start] = '\0';
			pfd = corral_openat2(root_fd, start ? buf : ".", O_PATH | O_DIRECTORY | O_CLOEXEC,
					     0, RESOLVE_STRICT);
			buf[start] = where[start];
			if (pfd < 0 || fstatfs(pfd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC)
				return;
			n = readlinkat(pfd, where + start, target, sizeof(target) - 1);
			if (n < 0)
				return;
			target[n] = '\0';
			*magic = target[0] == '/' || strstr(target, ":[") != NULL;
		}
		return;
	}
}

/* Turn a failed strict open of |rel| (errno |e|) into a refusal for |path|. */
static int explain(int root_fd, const char *rel, int e, const char *path, struct corral_error *err)
{
	char where[PATH_MAX];
	bool magic;
	int fd;

	switch (e) {
	case ENOSYS:
	case E2BIG:
		return corral_err(err, CORRAL_E_UNSUPPORTED, e, "%s", msg_no_openat2);
	case EXDEV:
		/*
		 * EXDEV is both "escapes the root" (RESOLVE_BENEATH) and
		 * "crosses a mount" (RESOLVE_NO_XDEV): ask again without
		 * NO_XDEV to tell which. That second open only classifies.
		 */
		if (lexically_escapes(rel))
			return refuse(err, CORRAL_E_ESCAPE, EXDEV, path, "escapes the root");
		fd = corral_openat2(root_fd, rel, O_PATH | O_CLOEXEC, 0,
				    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
		if (fd == -EXDEV)
			return refuse(err, CORRAL_E_ESCAPE, EXDEV, path, "escapes the root");
		safe_close(fd);
		locate(root_fd, rel, EXDEV, where, sizeof(where), &magic);
		if (where[0])
			return refuse(err, CORRAL_E_REFUSED, EXDEV, path, "crosses a mount (at %s)", where);
		return refuse(err, CORRAL_E_REFUSED, EXDEV, path, "crosses a mount");
	case ELOOP:
		locate(root_fd, rel, ELOOP, where, sizeof(where), &magic);
		if (where[0])
			return refuse(err, CORRAL_E_REFUSED, ELOOP, path, "%s (at %s)",
				      magic ? "magic link" : "symlink", where);
		return refuse(err, CORRAL_E_REFUSED, ELOOP, path, "symlink or magic link");
	case ENOENT:
		return refuse(err, CORRAL_E_NOT_FOUND, ENOENT, path, "does not exist");
	case ENOTDIR:
		return refuse(err, CORRAL_E_REFUSED, ENOTDIR, path, "not a directory");
	case EISDIR:
		return refuse(err, CORRAL_E_REFUSED, EISDIR, path, "is a directory");
	case ENAMETOOLONG:
		return refuse(err, CORRAL_E_REFUSED, ENAMETOOLONG, path, "name too long");
	case EACCES:
	case EPERM:
		return refuse(err, CORRAL_E_REFUSED, e, path, "permission denied");
	case EAGAIN:
		return refuse(err, CORRAL_E_REFUSED, EAGAIN, path,
			      "kept changing during resolution (concurrent rename); try again");
	case ENOMEM:
		return refuse(err, CORRAL_E_INTERNAL, ENOMEM, path, "out of memory");
	default:
		return refuse(err, CORRAL_E_REFUSED, e, path, "%s", corral_strerror(e));
	}
}

/*
 * The part of |path| to resolve beneath the root. Relative paths as they
 * are; absolute paths only when they lie under |root_a| or |root_b| on a
 * separator boundary ("/ws/a" under "/ws", never "/ws-evil/a"), with that
 * prefix and the following slashes stripped ("/ws" itself is ".").
 */
static int relative_part(const char *path, const char *root_a, const char *root_b,
			 const char **rel, struct corral_error *err)
{
	const char *roots[] = { root_a, root_b };

	if (!path || !*path)
		return refuse(err, CORRAL_E_REFUSED, EINVAL, "", "empty path");
	if (path[0] != '/') {
		*rel = path;
		goto check;
	}
	for (size_t i = 0; i < ARRAY_SIZE(roots); i++) {
		const char *r = roots[i];
		size_t n;

		if (!r || r[0] != '/')
			continue;
		n = strlen(r);
		while (n > 0 && r[n - 1] == '/')
			n--;
		if (strncmp(path, r, n) != 0 || (path[n] != '/' && path[n] != '\0'))
			continue;
		n += strspn(path + n, "/");
		*rel = path[n] ? path + n : ".";
		goto check;
	}
	if (!root_a && !root_b)
		return refuse(err, CORRAL_E_ESCAPE, EXDEV, path,
			      "absolute path, and no root path to match it against");
	return refuse(err, CORRAL_E_ESCAPE, EXDEV, path, "escapes the root (absolute path outside it)");
check:
	/*
	 * Refuse a lexical climb above the root before the kernel reports
	 * a missing component on the way ("a/../../x"): with no symlink
	 * followed, ".." can only mean the lexical parent, so this refuses
	 * nothing the kernel would accept.
	 */
	if (lexically_escapes(*rel))
		return refuse(err, CORRAL_E_ESCAPE, EXDEV, path, "escapes the root");
	return 0;
}

static int check_type(const struct stat *st, int kind, bool write, const char *path,
		      struct corral_error *err)
{
	if (kind == CORRAL_RESOLVE_DIRECTORY) {
		if (!S_ISDIR(st->st_mode))
			return refuse(err, CORRAL_E_REFUSED, ENOTDIR, path, "not a directory (%s)",
				      type_name(st->st_mode));
		return 0;
	}
	if (S_ISDIR(st->st_mode)) {
		if (kind == CORRAL_RESOLVE_FILE || write)
			return refuse(err, CORRAL_E_REFUSED, EISDIR, path, "is a directory");
		return 0;
	}
	if (kind == CORRAL_RESOLVE_FILE && !S_ISREG(st->st_mode))
		return refuse(err, CORRAL_E_REFUSED, EPERM, path, "not a regular file (%s)",
			      type_name(st->st_mode));
	if (S_ISLNK(st->st_mode) || S_ISSOCK(st->st_mode))
		return refuse(err, CORRAL_E_REFUSED, EPERM, path, "cannot be opened (%s)",
			      type_name(st->st_mode));
	return 0;
}

_public_ int corral_resolve_open(int root_fd, const char *root_path, const char *path, int flags,
				 struct corral_error *err)
{
	_cleanup_close_ int pfd = -1, fd = -1;
	bool write = flags & CORRAL_RESOLVE_WRITE;
	int kind = flags & KIND_MASK;
	struct stat st, st2;
	const char *rel;
	int r;

	if (flags & ~(KIND_MASK | CORRAL_RESOLVE_WRITE))
		return corral_err(err, CORRAL_E_USAGE, EINVAL, "resolve: unknown flags 0x%x", flags);
	if (kind == 0)
		kind = CORRAL_RESOLVE_FILE;
	if (kind & (kind - 1))
		return corral_err(err, CORRAL_E_USAGE, EINVAL,
				  "resolve: FILE, DIRECTORY and ANY are exclusive");
	if (write && kind == CORRAL_RESOLVE_DIRECTORY)
		return corral_err(err, CORRAL_E_USAGE, EINVAL,
				  "resolve: a directory cannot be opened for writing");
	if (root_fd < 0)
		return corral_err(err, CORRAL_E_USAGE, EBADF, "resolve: invalid root fd");
	r = relative_part(path, root_path, NULL, &rel, err);
	if (r < 0)
		return r;

	/*
	 * First an O_PATH open: it proves the path and shows its type
	 * without any side effect, so a device the caller did not ask for
	 * is never opened for real.
	 */
	pfd = corral_openat2(root_fd, rel, O_PATH | O_CLOEXEC, 0, RESOLVE_STRICT);
	if (pfd < 0)
		return explain(root_fd, rel, -pfd, path, err);
	if (fstat(pfd, &st) < 0)
		return refuse(err, CORRAL_E_INTERNAL, errno, path, "fstat: %s", corral_strerror(errno));
	r = check_type(&st, kind, write, path, err);
	if (r < 0)
		return r;

	/*
	 * The real open, proven again. O_NONBLOCK so a FIFO swapped in
	 * between the two opens cannot hang the host; the identity check
	 * refuses any such swap.
	 */
	fd = corral_openat2(root_fd, rel,
			    (write ? O_WRONLY : O_RDONLY) | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
				    (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0),
			    0, RESOLVE_STRICT);
	if (fd < 0)
		return explain(root_fd, rel, -fd, path, err);
	if (fstat(fd, &st2) < 0)
		return refuse(err, CORRAL_E_INTERNAL, errno, path, "fstat: %s", corral_strerror(errno));
	if (st2.st_dev != st.st_dev || st2.st_ino != st.st_ino)
		return refuse(err, CORRAL_E_REFUSED, EAGAIN, path,
			      "changed during resolution (replaced concurrently); try again");
	if (S_ISREG(st2.st_mode) || S_ISDIR(st2.st_mode)) {
		int fl = fcntl(fd, F_GETFL);

		if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
			return refuse(err, CORRAL_E_INTERNAL, errno, path, "fcntl: %s", corral_strerror(errno));
	}
	return TAKE_FD(fd);
}

/*
 * Split |rel| into its parent (a malloc'd string, "." when none) and final
 * component (pointing into |rel|). Trailing slashes are kept off the name
 * and reported through |trailing|.
 */
static int split_last(const char *rel, char **parent, const char **name, size_t *name_len,
		      bool *trailing)
{
	size_t n = strlen(rel), end, start;

	end = n;
	while (end > 0 && rel[end - 1] == '/')
		end--;
	*trailing = end < n;
	start = end;
	while (start > 0 && rel[start - 1] != '/')
		start--;
	*name = rel + start;
	*name_len = end - start;
	if (start == 0)
		*parent = strdup(".");
	else
		*parent = strndup(rel, start);
	return *parent ? 0 : -ENOMEM;
}

static bool bad_name(const char *name, size_t len)
{
	return len == 0 || (len == 1 && name[0] == '.') ||
	       (len == 2 && name[0] == '.' && name[1] == '.');
}

_public_ int corral_resolve_create(int root_fd, const char *root_path, const char *path, mode_t mode,
				   struct corral_error *err)
{
	_cleanup_close_ int dfd = -1, fd = -1;
	_cleanup_free_ char *parent = NULL, *name = NULL;
	const char *rel, *n;
	size_t nlen;
	bool trailing;
	struct stat st;
	int r;

	if (root_fd < 0)
		return corral_err(err, CORRAL_E_USAGE, EBADF, "resolve: invalid root fd");
	r = relative_part(path, root_path, NULL, &rel, err);
	if (r < 0)
		return r;
	if (split_last(rel, &parent, &n, &nlen, &trailing) < 0)
		return refuse(err, CORRAL_E_INTERNAL, ENOMEM, path, "out of memory");
	if (bad_name(n, nlen))
		return refuse(err, CORRAL_E_REFUSED, EINVAL, path, "not a file name to create");
	if (trailing)
		return refuse(err, CORRAL_E_REFUSED, EISDIR, path,
			      "ends with '/': not a file name to create");
	name = strndup(n, nlen);
	if (!name)
		return refuse(err, CORRAL_E_INTERNAL, ENOMEM, path, "out of memory");

	dfd = corral_openat2(root_fd, parent, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE_STRICT);
	if (dfd < 0)
		return explain(root_fd, parent, -dfd, path, err);

	/* One component, O_EXCL and O_NOFOLLOW: nothing there to follow, nothing to reuse. */
	fd = openat(dfd, name, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC | O_NOCTTY, mode);
	if (fd < 0) {
		if (errno == EEXIST)
			return refuse(err, CORRAL_E_REFUSED, EEXIST, path, "already exists");
		return explain(dfd, name, errno, path, err);
	}
	if (fstat(fd, &st) < 0)
		return refuse(err, CORRAL_E_INTERNAL, errno, path, "fstat: %s", corral_strerror(errno));
	if (!S_ISREG(st.st_mode))
		return refuse(err, CORRAL_E_REFUSED, EPERM, path, "not a regular file (%s)",
			      type_name(st.st_mode));
	return TAKE_FD(fd);
}

/*
 * |rel| with ".", empty components and "dir/.." removed. Only called on
 * paths the kernel resolved beneath the root with no symlinks, where ".."
 * can only have meant the lexical parent.
 */
static char *normalise(const char *rel)
{
	char *abs;

	if (asprintf(&abs, "/%s", rel) < 0)
		return NULL;
	corral_path_normalise(abs, CORRAL_PATH_DOTDOT);
	memmove(abs, abs + 1, strlen(abs)); /* relative again: "/" is "" */
	return abs;
}

_public_ int corral_resolve_path(const char *root, const char *path, bool must_exist, char **out,
				 struct corral_error *err)
{
	_cleanup_close_ int root_fd = -1, fd = -1;
	_cleanup_free_ char *canon = NULL, *shown_root = NULL, *norm = NULL, *parent = NULL,
			    *name = NULL;
	const char *rel, *n;
	size_t rlen, nlen;
	bool trailing;
	struct stat st;
	int r;

	if (!out)
		return corral_err(err, CORRAL_E_USAGE, EINVAL, "resolve: no output pointer");
	if (!root || !*root)
		return corral_err(err, CORRAL_E_USAGE, EINVAL, "resolve: empty root");
	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return refuse(err, errno == ENOENT ? CORRAL_E_NOT_FOUND : CORRAL_E_USAGE, errno, root,
			      "root: %s", corral_strerror(errno));
	/* Absolute paths may name the root as given or as the kernel sees it. */
	canon = realpath(root, NULL);
	shown_root = strdup(root[0] == '/' || !canon ? root : canon);
	if (!shown_root)
		return refuse(err, CORRAL_E_INTERNAL, ENOMEM, path, "out of memory");
	rlen = strlen(shown_root);
	while (rlen > 1 && shown_root[rlen - 1] == '/')
		shown_root[--rlen] = '\0';

	r = relative_part(path, shown_root, canon, &rel, err);
	if (r < 0)
		return r;

	fd = corral_openat2(root_fd, rel, O_PATH | O_CLOEXEC, 0, RESOLVE_STRICT);
	if (fd >= 0) {
		if (fstat(fd, &st) < 0)
			return refuse(err, CORRAL_E_INTERNAL, errno, path, "fstat: %s", corral_strerror(errno));
		if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
			return refuse(err, CORRAL_E_REFUSED, EPERM, path,
				      "not a regular file or directory (%s)", type_name(st.st_mode));
	} else if (fd != -ENOENT || must_exist) {
		return explain(root_fd, rel, -fd, path, err);
	} else {
		/* A missing final component: its parent must resolve beneath the root. */
		_cleanup_close_ int dfd = -1;

		if (split_last(rel, &parent, &n, &nlen, &trailing) < 0)
			return refuse(err, CORRAL_E_INTERNAL, ENOMEM, path, "out of memory");
		if (bad_name(n, nlen))
			return explain(root_fd, rel, ENOENT, path, err);
		name = strndup(n, nlen);
		if (!name)
			return refuse(err, CORRAL_E_INTERNAL, ENOMEM, path, "out of memory");
		dfd = corral_openat2(root_fd, parent, O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
				     RESOLVE_STRICT);
		if (dfd < 0)
			return explain(root_fd, parent, -dfd, path, err);
		/* It may have appeared since: then it passes the same checks. */
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (S_ISLNK(st.st_mode))
				return refuse(err, CORRAL_E_REFUSED, ELOOP, path, "symlink");
			if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
				return refuse(err, CORRAL_E_REFUSED, EPERM, path,
					      "not a regular file or directory (%s)",
					      type_name(st.st_mode));
		} else if (errno != ENOENT) {
			return explain(dfd, name, errno, path, err);
		}
	}

	norm = normalise(rel);
	if (!norm)
		return refuse(err, CORRAL_E_INTERNAL, ENOMEM, path, "out of memory");
	if (!*norm)
		*out = TAKE_PTR(shown_root);
	else if (asprintf(out, "%s%s%s", shown_root, strcmp(shown_root, "/") == 0 ? "" : "/",
			  norm) < 0)
		return refuse(err, CORRAL_E_INTERNAL, ENOMEM, path, "out of memory");
	return 0;
}
