/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The session's file tools, host-side. Every path goes through the
 * boundary resolver (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS on the
 * root fd); below a resolved directory, only single names are opened
 * with O_NOFOLLOW relative to it, so nothing outside the root is ever
 * read or written and no symlink is followed, whatever the command does
 * to the tree meanwhile. Files are read and written through the fd the
 * resolver returned, never reopened by name.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <jansson.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal/openat2.h"
#include "internal/util.h"
#include "supervisor/session/session.h"

#define FILE_MAX (8u << 20)       /* largest file read_file, edit_file and grep read */
#define CONTENT_MAX (1u << 20)    /* largest content read_file returns */
#define DEFAULT_LINES 2000
#define LIST_MAX 10000
#define LIST_DEPTH_MAX 16
#define GREP_MATCHES_MAX 1000
#define GREP_FILES_MAX 100000
#define GREP_DEPTH_MAX 64
#define GREP_TEXT_MAX 400

#define fail corral_tool_fail

/*
 * |path| (relative to the session's cwd, or absolute under the root) as a
 * normalised path relative to the root ("." for the root). Lexical only:
 * the resolver does the proof. Returns NULL (and fills |e|) when it
 * lexically leaves the root.
 */
static char *rel_path(const struct corral_tools_ctx *c, const char *path, struct corral_tool_err *e)
{
	size_t rl = strlen(c->root);
	_cleanup_free_ char *joined = NULL;
	char *out, *save = NULL, *tok;
	size_t o = 0;

	if (!*path)
		path = ".";
	if (path[0] == '/') {
		if (strncmp(path, c->root, rl) == 0 && (path[rl] == '/' || path[rl] == '\0'))
			joined = strdup(path + rl);
		else {
			fail(e, "escape", "%s: outside the root %s (paths are relative to the session's directory, "
			     "or absolute under the root)", path, c->root);
			return NULL;
		}
	} else if (asprintf(&joined, "%s/%s", c->cwd, path) < 0) {
		joined = NULL;
	}
	out = joined ? malloc(strlen(joined) + 2) : NULL;
	if (!out) {
		fail(e, "internal", "out of memory");
		return NULL;
	}
	for (tok = strtok_r(joined, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (strcmp(tok, ".") == 0)
			continue;
		if (strcmp(tok, "..") == 0) {
			if (o == 0) {
				free(out);
				fail(e, "escape", "%s: leaves the root through \"..\"", path);
				return NULL;
			}
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
			continue;
		}
		if (o)
			out[o++] = '/';
		memcpy(out + o, tok, strlen(tok));
		o += strlen(tok);
	}
	if (o == 0)
		out[o++] = '.';
	out[o] = 0;
	return out;
}

static int resolve(const struct corral_tools_ctx *c, const char *rel, int flags, struct corral_tool_err *e)
{
	struct corral_error err = {};
	int fd;

	if (strcmp(rel, ".") == 0 && (flags & CORRAL_RESOLVE_DIRECTORY))
		fd = corral_openat2(c->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0,
				    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
	else
		fd = corral_resolve_open(c->root_fd, NULL, rel, flags, &err);
	if (fd < 0) {
		if (err.code)
			fail(e, corral_error_code_name(err.code), "%s", err.message);
		else
			fail(e, "not_found", "%s: %s", rel, corral_strerror(-fd));
	}
	return fd;
}

static int read_all(int fd, char **out, size_t *len, bool *cut, struct corral_tool_err *e, const char *rel)
{
	struct stat st;
	size_t cap, got = 0;
	char *b;

	if (fstat(fd, &st) < 0)
		return fail(e, "internal", "%s: %s", rel, corral_strerror(errno));
	cap = (size_t)st.st_size < FILE_MAX ? (size_t)st.st_size : FILE_MAX;
	*cut = (size_t)st.st_size > FILE_MAX;
	b = malloc(cap + 1);
	if (!b)
		return fail(e, "internal", "out of memory");
	while (got < cap) {
		ssize_t n = pread(fd, b + got, cap - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	b[got] = 0;
	*out = b;
	*len = got;
	return 0;
}

int corral_tool_read_file(const struct corral_tools_ctx *c, json_t *req, json_t *out, struct corral_tool_err *e)
{
	_cleanup_free_ char *rel = rel_path(c, json_string_value(json_object_get(req, "path")), e);
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -1;
	json_int_t offset = 1, limit = DEFAULT_LINES;
	size_t len, start = 0, end, lines = 0, line = 1;
	bool cut, truncated = false;

	if (!rel)
		return -1;
	if (json_object_get(req, "offset"))
		offset = json_integer_value(json_object_get(req, "offset"));
	if (json_object_get(req, "limit"))
		limit = json_integer_value(json_object_get(req, "limit"));
	if (offset < 1)
		offset = 1;
	fd = resolve(c, rel, CORRAL_RESOLVE_FILE, e);
	if (fd < 0 || read_all(fd, &buf, &len, &cut, e, rel) < 0)
		return -1;
	/* Skip to line |offset|. */
	while (line < (size_t)offset && start < len) {
		char *nl = memchr(buf + start, '\n', len - start);

		if (!nl) {
			start = len;
			break;
		}
		start = (size_t)(nl - buf) + 1;
		line++;
	}
	end = start;
	while (end < len && lines < (size_t)limit) {
		char *nl = memchr(buf + end, '\n', len - end);
		size_t next = nl ? (size_t)(nl - buf) + 1 : len;

		if (next - start > CONTENT_MAX) {
			truncated = true;
			break;
		}
		end = next;
		lines++;
	}
	if (end < len || cut)
		truncated = true;
	json_object_set_new(out, "path", json_string(rel));
	json_object_set_new(out, "content", corral_json_text(buf + start, end - start));
	json_object_set_new(out, "lines", json_integer((json_int_t)lines));
	json_object_set_new(out, "truncated", json_boolean(truncated));
	return 0;
}

/*
 * As root the tools act for the identity the commands run as: they create
 * and write only where that uid/gid could (its permission bits; it has no
 * supplementary groups and no capabilities), so a write_file cannot reach
 * a file in the root the command itself may not change.
 */
static bool identity_may(const struct corral_tools_ctx *c, const struct stat *st, mode_t need_usr)
{
	mode_t m = st->st_mode;

	if (!c->chown_files)
		return true;
	if (c->uid == st->st_uid)
		return (m & need_usr) == need_usr;
	if (c->gid == st->st_gid)
		return (m & (need_usr >> 3)) == (need_usr >> 3);
	return (m & (need_usr >> 6)) == (need_usr >> 6);
}

static int check_dir_writable(const struct corral_tools_ctx *c, int dfd, const char *rel, struct corral_tool_err *e)
{
	struct stat st;

	if (fstat(dfd, &st) < 0)
		return fail(e, "internal", "%s: %s", rel, corral_strerror(errno));
	if (!identity_may(c, &st, S_IWUSR | S_IXUSR))
		return fail(e, "refused", "%s: its directory is not writable by uid %u, whom the commands run as",
			    rel, (unsigned)c->uid);
	return 0;
}

/* The parent directory of |rel| (created, with its missing parents, as the command's identity); an fd. */
static int make_parents(const struct corral_tools_ctx *c, const char *rel, const char **name,
			struct corral_tool_err *e)
{
	_cleanup_free_ char *dup = strdup(rel);
	char *slash, *p, *save = NULL;
	int dfd;

	if (!dup)
		return fail(e, "internal", "out of memory");
	slash = strrchr(rel, '/');
	*name = slash ? slash + 1 : rel;
	dfd = corral_openat2(c->root_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE_BENEATH);
	if (dfd < 0)
		return fail(e, "internal", "the root: %s", corral_strerror(-dfd));
	if (!slash)
		return dfd;
	dup[slash - rel] = 0;
	for (p = strtok_r(dup, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
		struct stat pst;
		int nfd;

		if (fstatat(dfd, p, &pst, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT &&
		    check_dir_writable(c, dfd, rel, e) < 0) {
			close(dfd);
			return -1;
		}
		if (mkdirat(dfd, p, 0755) == 0) {
			if (c->chown_files && fchownat(dfd, p, c->uid, c->gid, AT_SYMLINK_NOFOLLOW) < 0) {
				close(dfd);
				return fail(e, "internal", "%s: chown: %s", rel, corral_strerror(errno));
			}
		} else if (errno != EEXIST) {
			int er = errno;

			close(dfd);
			return fail(e, er == EACCES || er == EPERM ? "refused" : "not_found", "%s: creating %s: %s", rel,
				    p, corral_strerror(er));
		}
		nfd = corral_openat2(dfd, p, O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
				     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV);
		close(dfd);
		if (nfd < 0)
			return fail(e, nfd == -ELOOP ? "refused" : "not_found", "%s: %s: %s", rel, p,
				    nfd == -ELOOP ? "a symlink (the file tools never follow one)" :
				    nfd == -ENOTDIR ? "not a directory" : corral_strerror(-nfd));
		dfd = nfd;
	}
	return dfd;
}

/* Open |rel| for writing, truncated: the existing file, or a new one owned by the command's identity. */
static int open_for_write(const struct corral_tools_ctx *c, const char *rel, bool must_exist, struct corral_tool_err *e)
{
	const char *name = NULL;
	_cleanup_close_ int dfd = -1;
	int fd;
	struct stat st;

	if (strcmp(rel, ".") == 0)
		return fail(e, "bad_request", "the root is a directory, not a file");
	dfd = make_parents(c, rel, &name, e);
	if (dfd < 0)
		return -1;
	if (!must_exist && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT &&
	    check_dir_writable(c, dfd, rel, e) < 0)
		return -1;
	fd = must_exist ? -ENOENT : openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
	if (fd >= 0) {
		if (c->chown_files && fchown(fd, c->uid, c->gid) < 0) {
			close(fd);
			return fail(e, "internal", "%s: chown: %s", rel, corral_strerror(errno));
		}
		return fd;
	}
	if (!must_exist && errno != EEXIST)
		return fail(e, errno == EACCES ? "refused" : "not_found", "%s: %s", rel, corral_strerror(errno));
	fd = resolve(c, rel, CORRAL_RESOLVE_FILE | CORRAL_RESOLVE_WRITE, e);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && !identity_may(c, &st, S_IWUSR)) {
		close(fd);
		return fail(e, "refused", "%s: not writable by uid %u, whom the commands run as", rel, (unsigned)c->uid);
	}
	/* A hard link would let a write land in a file that also lives outside the root. */
	if (fstat(fd, &st) < 0 || st.st_nlink > 1) {
		close(fd);
		return fail(e, "refused", "%s: has %lu hard links; the file tools write only files with one "
			    "(copy it first)", rel, (unsigned long)st.st_nlink);
	}
	if (ftruncate(fd, 0) < 0) {
		close(fd);
		return fail(e, "refused", "%s: %s", rel, corral_strerror(errno));
	}
	return fd;
}

static int write_all(int fd, const char *d, size_t n, const char *rel, struct corral_tool_err *e)
{
	while (n) {
		ssize_t w = write(fd, d, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return fail(e, "refused", "%s: write: %s", rel, corral_strerror(w < 0 ? errno : EIO));
		d += w;
		n -= (size_t)w;
	}
	return 0;
}

int corral_tool_write_file(const struct corral_tools_ctx *c, json_t *req, json_t *out, struct corral_tool_err *e)
{
	_cleanup_free_ char *rel = rel_path(c, json_string_value(json_object_get(req, "path")), e);
	json_t *content = json_object_get(req, "content");
	_cleanup_close_ int fd = -1;

	if (!rel)
		return -1;
	fd = open_for_write(c, rel, false, e);
	if (fd < 0 || write_all(fd, json_string_value(content), json_string_length(content), rel, e) < 0)
		return -1;
	json_object_set_new(out, "path", json_string(rel));
	json_object_set_new(out, "bytes", json_integer((json_int_t)json_string_length(content)));
	return 0;
}

int corral_tool_edit_file(const struct corral_tools_ctx *c, json_t *req, json_t *out, struct corral_tool_err *e)
{
	_cleanup_free_ char *rel = rel_path(c, json_string_value(json_object_get(req, "path")), e);
	_cleanup_free_ char *buf = NULL, *nb = NULL;
	_cleanup_close_ int fd = -1, wfd = -1;
	json_t *jold = json_object_get(req, "old"), *jnew = json_object_get(req, "new");
	const char *old = json_string_value(jold), *nw = json_string_value(jnew);
	size_t ol = json_string_length(jold), nl = json_string_length(jnew), len, count = 0, o = 0;
	bool all = json_is_true(json_object_get(req, "all")), cut;

	if (!rel)
		return -1;
	if (ol == 0)
		return fail(e, "bad_request", "edit_file: \"old\" must not be empty (use write_file for a new file)");
	fd = resolve(c, rel, CORRAL_RESOLVE_FILE, e);
	if (fd < 0 || read_all(fd, &buf, &len, &cut, e, rel) < 0)
		return -1;
	if (cut)
		return fail(e, "too_large", "%s: larger than %u bytes: edit it with a command", rel, FILE_MAX);
	for (const char *p = buf; (p = memmem(p, len - (size_t)(p - buf), old, ol)); p += ol)
		count++;
	if (count == 0)
		return fail(e, "not_found", "%s: \"old\" does not occur in the file (it must match exactly, "
			    "whitespace included; read_file shows the current text)", rel);
	if (count > 1 && !all)
		return fail(e, "ambiguous", "%s: \"old\" occurs %zu times: add surrounding lines to make it unique, "
			    "or pass \"all\": true", rel, count);
	nb = malloc(len + count * nl + 1);
	if (!nb)
		return fail(e, "internal", "out of memory");
	for (const char *p = buf, *q; p < buf + len; p = q + ol) {
		q = memmem(p, len - (size_t)(p - buf), old, ol);
		if (!q) {
			memcpy(nb + o, p, len - (size_t)(p - buf));
			o += len - (size_t)(p - buf);
			break;
		}
		memcpy(nb + o, p, (size_t)(q - p));
		o += (size_t)(q - p);
		memcpy(nb + o, nw, nl);
		o += nl;
		if (q + ol == buf + len)
			break;
	}
	wfd = open_for_write(c, rel, true, e);
	if (wfd < 0 || write_all(wfd, nb, o, rel, e) < 0)
		return -1;
	json_object_set_new(out, "path", json_string(rel));
	json_object_set_new(out, "replacements", json_integer((json_int_t)count));
	return 0;
}

static const char *type_of(mode_t m)
{
	return S_ISREG(m) ? "file" : S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "symlink" : "other";
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in |dfd|, sorted (caller frees each and the vector). */
static char **dir_names(int dfd, size_t *n)
{
	int fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
	DIR *d;
	struct dirent *de;
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	if (fd < 0)
		return NULL;
	lseek(fd, 0, SEEK_SET);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return NULL;
	}
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (*n == cap) {
			char **nv = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*v));

			if (!nv)
				break;
			v = nv;
		}
		if (!(v[*n] = strdup(de->d_name)))
			break;
		(*n)++;
	}
	closedir(d);
	if (v)
		qsort(v, *n, sizeof(*v), name_cmp);
	return v;
}

static void names_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void list_walk(int dfd, const char *prefix, int depth, json_t *entries, bool *truncated)
{
	size_t n;
	char **names = dir_names(dfd, &n);

	for (size_t i = 0; i < n; i++) {
		struct stat st;
		json_t *ent;
		char *name;

		if (json_array_size(entries) >= LIST_MAX) {
			*truncated = true;
			break;
		}
		if (fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (asprintf(&name, "%s%s", prefix, names[i]) < 0)
			break;
		ent = json_object();
		json_object_set_new(ent, "name", corral_json_text(name, strlen(name)));
		json_object_set_new(ent, "type", json_string(type_of(st.st_mode)));
		json_object_set_new(ent, "size", json_integer((json_int_t)st.st_size));
		json_array_append_new(entries, ent);
		if (S_ISDIR(st.st_mode) && depth > 1) {
			int sub = openat(dfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0) {
				char *np;

				if (asprintf(&np, "%s/", name) >= 0) {
					list_walk(sub, np, depth - 1, entries, truncated);
					free(np);
				}
				close(sub);
			}
		}
		free(name);
	}
	names_free(names, n);
}

int corral_tool_list_dir(const struct corral_tools_ctx *c, json_t *req, json_t *out, struct corral_tool_err *e)
{
	json_t *jp = json_object_get(req, "path");
	_cleanup_free_ char *rel = rel_path(c, jp ? json_string_value(jp) : ".", e);
	_cleanup_close_ int fd = -1;
	json_int_t depth = 1;
	json_t *entries;
	bool truncated = false;

	if (!rel)
		return -1;
	if (json_object_get(req, "depth"))
		depth = json_integer_value(json_object_get(req, "depth"));
	if (depth < 1)
		depth = 1;
	if (depth > LIST_DEPTH_MAX)
		depth = LIST_DEPTH_MAX;
	fd = resolve(c, rel, CORRAL_RESOLVE_DIRECTORY, e);
	if (fd < 0)
		return -1;
	entries = json_array();
	list_walk(fd, "", (int)depth, entries, &truncated);
	json_object_set_new(out, "path", json_string(rel));
	json_object_set_new(out, "entries", entries);
	json_object_set_new(out, "truncated", json_boolean(truncated));
	return 0;
}

struct grep {
	const struct corral_tools_ctx *c;
	regex_t re;
	const char *glob;
	json_t *matches;
	size_t files;
	bool truncated;
};

static void grep_file(struct grep *g, int fd, const char *rel)
{
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t len = 0, line = 1;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > FILE_MAX)
		return;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return;
	while (len < (size_t)st.st_size) {
		ssize_t n = pread(fd, buf + len, (size_t)st.st_size - len, (off_t)len);

		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	if (memchr(buf, 0, len < 8192 ? len : 8192))
		return; /* binary */
	for (char *p = buf; p < buf + len; line++) {
		char *nl = memchr(p, '\n', (size_t)(buf + len - p));
		char save;

		if (!nl)
			nl = buf + len;
		save = *nl;
		*nl = 0;
		if (!memchr(p, 0, (size_t)(nl - p)) && regexec(&g->re, p, 0, NULL, 0) == 0) {
			json_t *m = json_object();
			size_t tl = (size_t)(nl - p) < GREP_TEXT_MAX ? (size_t)(nl - p) : GREP_TEXT_MAX;

			if (json_array_size(g->matches) >= GREP_MATCHES_MAX) {
				g->truncated = true;
				json_decref(m);
				*nl = save;
				return;
			}
			json_object_set_new(m, "path", corral_json_text(rel, strlen(rel)));
			json_object_set_new(m, "line", json_integer((json_int_t)line));
			json_object_set_new(m, "text", corral_json_text(p, tl));
			json_array_append_new(g->matches, m);
		}
		*nl = save;
		p = nl + 1;
	}
}

static void grep_walk(struct grep *g, int dfd, const char *prefix, int depth)
{
	size_t n;
	char **names;

	if (depth > GREP_DEPTH_MAX || g->truncated || (g->c->cancelled && *g->c->cancelled))
		return;
	names = dir_names(dfd, &n);
	for (size_t i = 0; i < n && !g->truncated; i++) {
		struct stat st;
		char *rel;
		int fd;

		if (fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISLNK(st.st_mode))
			continue;
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
			continue;
		if (++g->files > GREP_FILES_MAX) {
			g->truncated = true;
			break;
		}
		if (asprintf(&rel, "%s%s%s", prefix, *prefix ? "/" : "", names[i]) < 0)
			break;
		if (S_ISDIR(st.st_mode)) {
			fd = openat(dfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0) {
				grep_walk(g, fd, rel, depth + 1);
				close(fd);
			}
		} else if (!g->glob || fnmatch(g->glob, names[i], 0) == 0) {
			fd = openat(dfd, names[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
			if (fd >= 0) {
				grep_file(g, fd, rel);
				close(fd);
			}
		}
		free(rel);
	}
	names_free(names, n);
}

int corral_tool_grep(const struct corral_tools_ctx *c, json_t *req, json_t *out, struct corral_tool_err *e)
{
	json_t *jp = json_object_get(req, "path");
	_cleanup_free_ char *rel = rel_path(c, jp ? json_string_value(jp) : ".", e);
	struct grep g = { .c = c, .glob = json_string_value(json_object_get(req, "glob")) };
	int fl = REG_EXTENDED | REG_NOSUB | (json_is_true(json_object_get(req, "ignore_case")) ? REG_ICASE : 0);
	int r;
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (!rel)
		return -1;
	r = regcomp(&g.re, json_string_value(json_object_get(req, "pattern")), fl);
	if (r != 0) {
		char m[200];

		regerror(r, &g.re, m, sizeof(m));
		return fail(e, "bad_request", "grep: bad pattern (POSIX extended regular expression): %s", m);
	}
	fd = resolve(c, rel, strcmp(rel, ".") == 0 ? CORRAL_RESOLVE_DIRECTORY : CORRAL_RESOLVE_ANY, e);
	if (fd < 0 || fstat(fd, &st) < 0) {
		regfree(&g.re);
		return -1;
	}
	g.matches = json_array();
	if (S_ISDIR(st.st_mode))
		grep_walk(&g, fd, strcmp(rel, ".") == 0 ? "" : rel, 0);
	else if (S_ISREG(st.st_mode))
		grep_file(&g, fd, rel);
	regfree(&g.re);
	json_object_set_new(out, "matches", g.matches);
	json_object_set_new(out, "truncated", json_boolean(g.truncated));
	return 0;
}
