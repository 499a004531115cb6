/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host-side boundary resolver: table-driven cases over a temporary
 * root this test builds (and removes), the FIFO/device/mount cases, the
 * openat2-missing refusal, and a rename-exchange race.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <seccomp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "corral.h"

static char root[PATH_MAX];
static char evil[PATH_MAX + 8];
static int root_fd = -1;

static void xwrite_file(const char *rel, const char *content)
{
	char p[PATH_MAX * 2];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
}

static void xmkdir(const char *rel)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static void xsymlink(const char *target, const char *rel)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	assert_int_equal(symlink(target, p), 0);
}

static void rm_rf(const char *dir)
{
	char cmd[PATH_MAX * 2 + 32];

	if (!dir[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "warning: could not remove %s\n", dir);
}

static int setup(void **state)
{
	char p[PATH_MAX * 2];
	const char *tmp = getenv("TMPDIR");

	snprintf(root, sizeof(root), "%s/corral-resolve-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root))
		return -1;
	/* The sibling a prefix trick would reach: <root>-evil. */
	snprintf(evil, sizeof(evil), "%s-evil", root);
	if (mkdir(evil, 0755) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/x", evil);
	close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));

	xwrite_file("ok.txt", "ok");
	xmkdir("sub");
	xwrite_file("sub/inner.txt", "inner");
	xsymlink("/", "out_link");
	xsymlink("/etc/passwd", "out_file_link");
	xsymlink("ok.txt", "in_link");
	xsymlink("does-not-exist", "broken");
	xsymlink("sub", "dirlink");
	xsymlink("/proc/self/root", "proclink");
	xsymlink(evil, "evil_link");
	xwrite_file("new\nline", "nl");
	xwrite_file("bad\xff\xfe", "bad");
	snprintf(p, sizeof(p), "%s/fifo", root);
	if (mkfifo(p, 0644) < 0)
		return -1;
	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return root_fd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	if (root_fd >= 0)
		close(root_fd);
	rm_rf(root);
	rm_rf(evil);
	return 0;
}

/* "%R" at the start of a table path stands for the root. */
static void expand(char *buf, size_t sz, const char *tpl)
{
	if (strncmp(tpl, "%R", 2) == 0)
		snprintf(buf, sz, "%s%s", root, tpl + 2);
	else if (strncmp(tpl, "%E", 2) == 0)
		snprintf(buf, sz, "%s%s", evil, tpl + 2);
	else if (strncmp(tpl, "%P", 2) == 0)
		snprintf(buf, sz, "/proc/self/root%s%s", root, tpl + 2);
	else
		snprintf(buf, sz, "%s", tpl);
}

/* cmocka skip(), or a failure under CORRAL_MUST_WORK=1 (CI). */
static void skip_or_fail_test(const char *why)
{
	const char *must = getenv("CORRAL_MUST_WORK");

	if (must && strcmp(must, "1") == 0)
		fail_msg("CORRAL_MUST_WORK=1 forbids skipping: %s", why);
	fprintf(stderr, "SKIP: %s\n", why);
	skip();
}

static void check_inside(int fd)
{
	char link[64], target[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = '\0';
	if (strncmp(target, root, strlen(root)) != 0 ||
	    (target[strlen(root)] != '/' && target[strlen(root)] != '\0'))
		fail_msg("fd %d is %s, outside %s", fd, target, root);
}

static const struct open_case {
	const char *path;
	int flags;
	int code;           /* 0: success */
	const char *reason; /* substring of the message, or the file's content on success */
} open_cases[] = {
	{ "ok.txt", CORRAL_RESOLVE_FILE, 0, "ok" },
	{ "sub/../ok.txt", CORRAL_RESOLVE_FILE, 0, "ok" },
	{ "./ok.txt", CORRAL_RESOLVE_FILE, 0, "ok" },
	{ "sub//inner.txt", CORRAL_RESOLVE_FILE, 0, "inner" },
	{ "sub/./../sub/inner.txt", 0, 0, "inner" },
	{ "..", CORRAL_RESOLVE_DIRECTORY, CORRAL_E_ESCAPE, "escapes the root" },
	{ "../x", CORRAL_RESOLVE_FILE, CORRAL_E_ESCAPE, "escapes the root" },
	{ "a/../../x", CORRAL_RESOLVE_FILE, CORRAL_E_ESCAPE, "escapes the root" },
	{ "sub/../../x", CORRAL_RESOLVE_FILE, CORRAL_E_ESCAPE, "escapes the root" },
	{ "sub/../..", CORRAL_RESOLVE_ANY, CORRAL_E_ESCAPE, "escapes the root" },
	{ "%R/ok.txt", CORRAL_RESOLVE_FILE, 0, "ok" },
	{ "%R//sub/inner.txt", CORRAL_RESOLVE_FILE, 0, "inner" },
	{ "%R", CORRAL_RESOLVE_DIRECTORY, 0, NULL },
	{ "%R/", CORRAL_RESOLVE_DIRECTORY, 0, NULL },
	{ "%R/..", CORRAL_RESOLVE_DIRECTORY, CORRAL_E_ESCAPE, "escapes the root" },
	{ "%R/../x", CORRAL_RESOLVE_FILE, CORRAL_E_ESCAPE, "escapes the root" },
	{ "/etc/passwd", CORRAL_RESOLVE_FILE, CORRAL_E_ESCAPE, "escapes the root" },
	{ "/", CORRAL_RESOLVE_DIRECTORY, CORRAL_E_ESCAPE, "escapes the root" },
	{ "%E/x", CORRAL_RESOLVE_FILE, CORRAL_E_ESCAPE, "escapes the root" },
	{ "%P/ok.txt", CORRAL_RESOLVE_FILE, CORRAL_E_ESCAPE, "escapes the root" },
	{ "/proc/self/root/etc/passwd", CORRAL_RESOLVE_FILE, CORRAL_E_ESCAPE, "escapes the root" },
	{ "out_link", CORRAL_RESOLVE_ANY, CORRAL_E_REFUSED, "symlink" },
	{ "out_link/etc/passwd", CORRAL_RESOLVE_FILE, CORRAL_E_REFUSED, "symlink (at out_link)" },
	{ "out_file_link", CORRAL_RESOLVE_FILE, CORRAL_E_REFUSED, "symlink" },
	{ "in_link", CORRAL_RESOLVE_FILE, CORRAL_E_REFUSED, "symlink" },
	{ "broken", CORRAL_RESOLVE_FILE, CORRAL_E_REFUSED, "symlink" },
	{ "dirlink/inner.txt", CORRAL_RESOLVE_FILE, CORRAL_E_REFUSED, "symlink (at dirlink)" },
	{ "sub/../dirlink/inner.txt", CORRAL_RESOLVE_FILE, CORRAL_E_REFUSED, "symlink" },
	{ "proclink/etc/passwd", CORRAL_RESOLVE_FILE, CORRAL_E_REFUSED, "symlink (at proclink)" },
	{ "evil_link/x", CORRAL_RESOLVE_FILE, CORRAL_E_REFUSED, "symlink" },
	{ "", CORRAL_RESOLVE_FILE, CORRAL_E_REFUSED, "empty path" },
	{ ".", CORRAL_RESOLVE_DIRECTORY, 0, NULL },
	{ ".", CORRAL_RESOLVE_FILE, CORRAL_E_REFUSED, "is a directory" },
	{ "sub", CORRAL_RESOLVE_FILE, CORRAL_E_REFUSED, "is a directory" },
	{ "sub/", CORRAL_RESOLVE_DIRECTORY, 0, NULL },
	{ "sub", CORRAL_RESOLVE_ANY, 0, NULL },
	{ "sub", CORRAL_RESOLVE_ANY | CORRAL_RESOLVE_WRITE, CORRAL_E_REFUSED, "is a directory" },
	{ "ok.txt", CORRAL_RESOLVE_DIRECTORY, CORRAL_E_REFUSED, "not a directory" },
	{ "ok.txt/", CORRAL_RESOLVE_FILE, CORRAL_E_REFUSED, "not a directory" },
	{ "ok.txt/x", CORRAL_RESOLVE_FILE, CORRAL_E_REFUSED, "not a directory" },
	{ "ok.txt", CORRAL_RESOLVE_FILE | CORRAL_RESOLVE_WRITE, 0, NULL },
	{ "missing", CORRAL_RESOLVE_FILE, CORRAL_E_NOT_FOUND, "does not exist" },
	{ "missing/x", CORRAL_RESOLVE_FILE, CORRAL_E_NOT_FOUND, "does not exist" },
	{ "new\nline", CORRAL_RESOLVE_FILE, 0, "nl" },
	{ "bad\xff\xfe", CORRAL_RESOLVE_FILE, 0, "bad" },
	{ "fifo", CORRAL_RESOLVE_FILE, CORRAL_E_REFUSED, "not a regular file (FIFO)" },
	{ "fifo", CORRAL_RESOLVE_DIRECTORY, CORRAL_E_REFUSED, "not a directory" },
	{ "fifo", CORRAL_RESOLVE_ANY, 0, NULL },
	{ "fifo", CORRAL_RESOLVE_ANY | CORRAL_RESOLVE_WRITE, CORRAL_E_REFUSED, NULL },
	{ "ok.txt", CORRAL_RESOLVE_FILE | CORRAL_RESOLVE_DIRECTORY, CORRAL_E_USAGE, NULL },
	{ "sub", CORRAL_RESOLVE_DIRECTORY | CORRAL_RESOLVE_WRITE, CORRAL_E_USAGE, NULL },
	{ "ok.txt", 1 << 12, CORRAL_E_USAGE, NULL },
};

static void check_open_case(int fd_root, const char *root_path, const struct open_case *c,
			    const char *path)
{
	struct corral_error err = {};
	int fd;

	fd = corral_resolve_open(fd_root, root_path, path, c->flags, &err);
	if (c->code == 0) {
		if (fd < 0)
			fail_msg("'%s' (flags %#x): expected success, got %d: %s", path, c->flags, fd,
				 err.message);
		check_inside(fd);
		assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
		if (c->reason) {
			char buf[64] = "";

			assert_true(read(fd, buf, sizeof(buf) - 1) >= 0);
			assert_string_equal(buf, c->reason);
		}
		assert_int_equal(err.code, 0); /* untouched on success */
		close(fd);
		return;
	}
	if (fd >= 0)
		fail_msg("'%s' (flags %#x): expected refusal %d, got fd", path, c->flags, c->code);
	if (err.code != c->code)
		fail_msg("'%s' (flags %#x): expected code %s, got %s: %s", path, c->flags,
			 corral_error_code_name(c->code), corral_error_code_name(err.code),
			 err.message);
	assert_true(err.message[0] != '\0');
	assert_null(strchr(err.message, '\n'));
	if (c->reason && !strstr(err.message, c->reason))
		fail_msg("'%s': message '%s' lacks '%s'", path, err.message, c->reason);
}

static void test_open_table(void **state)
{
	/* A FIFO opened by mistake would block forever: the alarm makes that a failure. */
	alarm(30);
	for (size_t i = 0; i < sizeof(open_cases) / sizeof(open_cases[0]); i++) {
		char path[PATH_MAX * 2];

		expand(path, sizeof(path), open_cases[i].path);
		check_open_case(root_fd, root, &open_cases[i], path);
	}
	alarm(0);
}

/* The same table with the root path given with a trailing slash. */
static void test_open_table_root_slash(void **state)
{
	char rs[PATH_MAX + 2];

	snprintf(rs, sizeof(rs), "%s/", root);
	alarm(30);
	for (size_t i = 0; i < sizeof(open_cases) / sizeof(open_cases[0]); i++) {
		char path[PATH_MAX * 2];

		expand(path, sizeof(path), open_cases[i].path);
		check_open_case(root_fd, rs, &open_cases[i], path);
	}
	alarm(0);
}

static void test_absolute_without_root_path(void **state)
{
	struct corral_error err = {};
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/ok.txt", root);
	assert_true(corral_resolve_open(root_fd, NULL, path, CORRAL_RESOLVE_FILE, &err) < 0);
	assert_int_equal(err.code, CORRAL_E_ESCAPE);
	/* NULL err is allowed. */
	assert_true(corral_resolve_open(root_fd, NULL, "../x", CORRAL_RESOLVE_FILE, NULL) < 0);
	assert_int_equal(corral_resolve_open(-1, NULL, "ok.txt", 0, &err), -EBADF);
	assert_true(corral_resolve_open(root_fd, NULL, NULL, 0, &err) < 0);
}

static void test_long_paths(void **state)
{
	struct corral_error err = {};
	size_t n = PATH_MAX + 100;
	char *p = malloc(n * 2 + 16);
	int fd;

	assert_non_null(p);
	/* Just under PATH_MAX: "./" repeated, then the file — accepted. */
	p[0] = '\0';
	while (strlen(p) + 2 + strlen("ok.txt") < PATH_MAX - 1)
		strcat(p, "./");
	strcat(p, "ok.txt");
	fd = corral_resolve_open(root_fd, root, p, CORRAL_RESOLVE_FILE, &err);
	if (fd < 0)
		fail_msg("path of %zu bytes: %s", strlen(p), err.message);
	close(fd);

	/* PATH_MAX bytes and beyond: a refusal, not a crash. */
	for (size_t len = PATH_MAX; len <= n * 2; len += PATH_MAX) {
		memset(p, 'a', len);
		for (size_t i = 100; i < len; i += 101)
			p[i] = '/';
		p[len] = '\0';
		memset(&err, 0, sizeof(err));
		assert_true(corral_resolve_open(root_fd, root, p, CORRAL_RESOLVE_FILE, &err) < 0);
		assert_int_equal(err.code, CORRAL_E_REFUSED);
		assert_non_null(strstr(err.message, "name too long"));
		assert_true(strlen(err.message) < sizeof(err.message));
		assert_true(corral_resolve_create(root_fd, root, p, 0644, &err) < 0);
	}
	/* One component longer than NAME_MAX. */
	memset(p, 'b', 300);
	p[300] = '\0';
	assert_true(corral_resolve_open(root_fd, root, p, CORRAL_RESOLVE_FILE, &err) < 0);
	assert_int_equal(err.code, CORRAL_E_REFUSED);
	assert_true(corral_resolve_create(root_fd, root, p, 0644, &err) < 0);
	assert_true(corral_resolve_path(root, p, false, &(char *){ NULL }, &err) < 0);
	free(p);
}

/* Magic links: a root whose children are /proc magic links, and a root reached through /proc. */
static void test_magic_links(void **state)
{
	struct corral_error err = {};
	char proot[PATH_MAX + 32];
	int pfd, fd;

	pfd = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		skip_or_fail_test("magic links: /proc/self cannot be opened (no /proc mounted)");
	for (const char *const *p = (const char *const[]){ "root/etc/passwd", "cwd", "exe", "root",
							   NULL };
	     *p; p++) {
		memset(&err, 0, sizeof(err));
		fd = corral_resolve_open(pfd, NULL, *p, CORRAL_RESOLVE_ANY, &err);
		if (fd >= 0)
			fail_msg("/proc/self/%s: opened through a magic link", *p);
		assert_int_equal(err.code, CORRAL_E_REFUSED);
		if (!strstr(err.message, "magic link"))
			fail_msg("/proc/self/%s: '%s' lacks 'magic link'", *p, err.message);
	}
	close(pfd);

	/* The root itself given as a /proc path: trusted, and paths beneath it still proven. */
	snprintf(proot, sizeof(proot), "/proc/self/root%s", root);
	pfd = open(proot, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(pfd >= 0);
	fd = corral_resolve_open(pfd, proot, "ok.txt", CORRAL_RESOLVE_FILE, &err);
	assert_true(fd >= 0);
	check_inside(fd);
	close(fd);
	assert_true(corral_resolve_open(pfd, proot, "../../ok.txt", 0, &err) < 0);
	assert_int_equal(err.code, CORRAL_E_ESCAPE);
	assert_true(corral_resolve_open(pfd, proot, "proclink/etc", CORRAL_RESOLVE_ANY, &err) < 0);
	assert_int_equal(err.code, CORRAL_E_REFUSED);
	close(pfd);
}

static const struct path_case {
	const char *path;
	bool must_exist;
	int code;
	const char *suffix; /* expected output minus the root */
} path_cases[] = {
	{ "sub/../ok.txt", true, 0, "/ok.txt" },
	{ "ok.txt", true, 0, "/ok.txt" },
	{ ".", true, 0, "" },
	{ "sub/..", true, 0, "" },
	{ "%R", true, 0, "" },
	{ "%R/", true, 0, "" },
	{ "%R/sub/", true, 0, "/sub" },
	{ "sub/./inner.txt", true, 0, "/sub/inner.txt" },
	{ "sub//inner.txt", true, 0, "/sub/inner.txt" },
	{ "new.txt", false, 0, "/new.txt" },
	{ "new.txt", true, CORRAL_E_NOT_FOUND, NULL },
	{ "sub/new.txt", false, 0, "/sub/new.txt" },
	{ "sub/../new.txt", false, 0, "/new.txt" },
	{ "%R/sub/new.txt", false, 0, "/sub/new.txt" },
	{ "newdir/", false, 0, "/newdir" },
	{ "missing/new.txt", false, CORRAL_E_NOT_FOUND, NULL },
	{ "missing/../new.txt", false, CORRAL_E_NOT_FOUND, NULL },
	{ "out_link/new", false, CORRAL_E_REFUSED, "symlink" },
	{ "dirlink/new", false, CORRAL_E_REFUSED, "symlink" },
	{ "broken", false, CORRAL_E_REFUSED, "symlink" },
	{ "in_link", true, CORRAL_E_REFUSED, "symlink" },
	{ "fifo", false, CORRAL_E_REFUSED, "FIFO" },
	{ "../new", false, CORRAL_E_ESCAPE, "escapes the root" },
	{ "..", false, CORRAL_E_ESCAPE, "escapes the root" },
	{ "%E/new", false, CORRAL_E_ESCAPE, "escapes the root" },
	{ "%E/x", true, CORRAL_E_ESCAPE, "escapes the root" },
	{ "/etc/passwd", true, CORRAL_E_ESCAPE, "escapes the root" },
	{ "", false, CORRAL_E_REFUSED, "empty path" },
	{ "ok.txt/new", false, CORRAL_E_REFUSED, "not a directory" },
};

static void test_path_table(void **state)
{
	alarm(30);
	for (size_t i = 0; i < sizeof(path_cases) / sizeof(path_cases[0]); i++) {
		const struct path_case *c = &path_cases[i];
		struct corral_error err = {};
		char path[PATH_MAX * 2], want[PATH_MAX * 2];
		char *out = NULL;
		int r;

		expand(path, sizeof(path), c->path);
		r = corral_resolve_path(root, path, c->must_exist, &out, &err);
		if (c->code == 0) {
			if (r < 0)
				fail_msg("'%s': expected success, got %s", path, err.message);
			snprintf(want, sizeof(want), "%s%s", root, c->suffix);
			assert_string_equal(out, want);
			free(out);
			continue;
		}
		if (r >= 0)
			fail_msg("'%s': expected refusal, got %s", path, out);
		assert_null(out);
		if (err.code != c->code)
			fail_msg("'%s': expected %s, got %s: %s", path, corral_error_code_name(c->code),
				 corral_error_code_name(err.code), err.message);
		if (c->suffix && !strstr(err.message, c->suffix))
			fail_msg("'%s': message '%s' lacks '%s'", path, err.message, c->suffix);
	}
	alarm(0);
}

static void test_path_roots(void **state)
{
	struct corral_error err = {};
	char r2[PATH_MAX + 32], want[PATH_MAX + 32], cwd[PATH_MAX];
	char *out = NULL;

	/* Trailing slash on the root: no double slash in the output. */
	snprintf(r2, sizeof(r2), "%s///", root);
	assert_int_equal(corral_resolve_path(r2, "ok.txt", true, &out, &err), 0);
	snprintf(want, sizeof(want), "%s/ok.txt", root);
	assert_string_equal(out, want);
	free(out);

	/* A root reached through /proc: shown as given, paths beneath still proven. */
	snprintf(r2, sizeof(r2), "/proc/self/root%s", root);
	assert_int_equal(corral_resolve_path(r2, "sub/../ok.txt", true, &out, &err), 0);
	snprintf(want, sizeof(want), "/proc/self/root%s/ok.txt", root);
	assert_string_equal(out, want);
	free(out);
	/* ...and absolute paths under its canonical form are accepted too. */
	snprintf(want, sizeof(want), "%s/ok.txt", root);
	assert_int_equal(corral_resolve_path(r2, want, true, &out, &err), 0);
	free(out);

	/* A relative root is shown canonical. */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(root), 0);
	assert_int_equal(corral_resolve_path(".", "sub", true, &out, &err), 0);
	snprintf(want, sizeof(want), "%s/sub", root);
	assert_string_equal(out, want);
	free(out);
	assert_int_equal(chdir(cwd), 0);

	/* The root "/" itself. */
	assert_int_equal(corral_resolve_path("/", "/etc/../etc", true, &out, &err), 0);
	assert_string_equal(out, "/etc");
	free(out);

	/* A bad root: an error value. */
	assert_true(corral_resolve_path("/nonexistent-corral-root", "x", false, &out, &err) < 0);
	assert_int_equal(err.code, CORRAL_E_NOT_FOUND);
	snprintf(r2, sizeof(r2), "%s/ok.txt", root);
	assert_true(corral_resolve_path(r2, "x", false, &out, &err) < 0);
	assert_true(corral_resolve_path(NULL, "x", false, &out, &err) < 0);
	assert_true(corral_resolve_path(root, "x", false, NULL, &err) < 0);
}

static const struct create_case {
	const char *path;
	int code;
	const char *reason;
	const char *check; /* relative path that must exist afterwards (inside) */
} create_cases[] = {
	{ "created.txt", 0, NULL, "created.txt" },
	{ "sub/created.txt", 0, NULL, "sub/created.txt" },
	{ "%R/sub/abs.txt", 0, NULL, "sub/abs.txt" },
	{ "sub/../up.txt", 0, NULL, "up.txt" },
	{ "new\nline2", 0, NULL, "new\nline2" },
	{ "ok.txt", CORRAL_E_REFUSED, "already exists", NULL },
	{ "created.txt", CORRAL_E_REFUSED, "already exists", NULL },
	{ "in_link", CORRAL_E_REFUSED, "already exists", NULL },
	{ "broken", CORRAL_E_REFUSED, "already exists", NULL },
	{ "fifo", CORRAL_E_REFUSED, "already exists", NULL },
	{ "sub", CORRAL_E_REFUSED, "already exists", NULL },
	{ "dirlink/new.txt", CORRAL_E_REFUSED, "symlink", NULL },
	{ "out_link/tmp/corral-x", CORRAL_E_REFUSED, "symlink", NULL },
	{ "evil_link/y", CORRAL_E_REFUSED, "symlink", NULL },
	{ "..", CORRAL_E_ESCAPE, "escapes the root", NULL },
	{ "sub/..", CORRAL_E_REFUSED, "not a file name", NULL },
	{ ".", CORRAL_E_REFUSED, "not a file name", NULL },
	{ "%R", CORRAL_E_REFUSED, "not a file name", NULL },
	{ "", CORRAL_E_REFUSED, "empty path", NULL },
	{ "newdir/", CORRAL_E_REFUSED, "ends with '/'", NULL },
	{ "../escape.txt", CORRAL_E_ESCAPE, "escapes the root", NULL },
	{ "%E/z", CORRAL_E_ESCAPE, "escapes the root", NULL },
	{ "missing/x", CORRAL_E_NOT_FOUND, "does not exist", NULL },
	{ "ok.txt/x", CORRAL_E_REFUSED, "not a directory", NULL },
};

static void test_create_table(void **state)
{
	for (size_t i = 0; i < sizeof(create_cases) / sizeof(create_cases[0]); i++) {
		const struct create_case *c = &create_cases[i];
		struct corral_error err = {};
		char path[PATH_MAX * 2];
		struct stat st;
		int fd;

		expand(path, sizeof(path), c->path);
		fd = corral_resolve_create(root_fd, root, path, 0600, &err);
		if (c->code == 0) {
			if (fd < 0)
				fail_msg("create '%s': %s", path, err.message);
			check_inside(fd);
			assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
			assert_int_equal(write(fd, "w", 1), 1);
			assert_int_equal(fstat(fd, &st), 0);
			assert_true(S_ISREG(st.st_mode));
			assert_int_equal(st.st_mode & 0777, 0600);
			close(fd);
			assert_int_equal(fstatat(root_fd, c->check, &st, AT_SYMLINK_NOFOLLOW), 0);
			continue;
		}
		if (fd >= 0)
			fail_msg("create '%s': expected refusal", path);
		if (err.code != c->code)
			fail_msg("create '%s': expected %s, got %s: %s", path,
				 corral_error_code_name(c->code), corral_error_code_name(err.code),
				 err.message);
		if (c->reason && !strstr(err.message, c->reason))
			fail_msg("create '%s': '%s' lacks '%s'", path, err.message, c->reason);
	}
	/* Nothing landed outside. */
	{
		char p[PATH_MAX * 2];
		struct stat st;

		snprintf(p, sizeof(p), "%s/y", evil);
		assert_true(stat(p, &st) < 0);
		snprintf(p, sizeof(p), "%s/../escape.txt", root);
		assert_true(stat(p, &st) < 0);
		assert_true(stat("/tmp/corral-x", &st) < 0);
	}
}

static void test_device(void **state)
{
	struct corral_error err = {};
	char p[PATH_MAX * 2];
	char *out = NULL;
	int fd;

	if (geteuid() != 0)
		skip_or_fail_test("device: making a device node needs root");
	snprintf(p, sizeof(p), "%s/null", root);
	if (mknod(p, S_IFCHR | 0666, makedev(1, 3)) < 0) {
		char why[128];

		snprintf(why, sizeof(why), "device: mknod: %s", strerror(errno));
		skip_or_fail_test(why);
	}
	alarm(10);
	assert_true(corral_resolve_open(root_fd, root, "null", CORRAL_RESOLVE_FILE, &err) < 0);
	assert_int_equal(err.code, CORRAL_E_REFUSED);
	assert_non_null(strstr(err.message, "character device"));
	assert_true(corral_resolve_path(root, "null", true, &out, &err) < 0);
	assert_int_equal(err.code, CORRAL_E_REFUSED);
	fd = corral_resolve_open(root_fd, root, "null", CORRAL_RESOLVE_ANY, &err);
	if (fd >= 0)
		close(fd);
	else /* nodev mounts refuse the open itself: still an error value */
		assert_int_equal(err.code, CORRAL_E_REFUSED);
	alarm(0);
	unlink(p);
}

static int write_file_at(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* In a child: a tmpfs mounted inside the root must be refused as a mount crossing. */
static int mount_child(void)
{
	char mnt[PATH_MAX + 16], f[PATH_MAX + 32], m[64];
	struct corral_error err = {};
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int fd;

	if (uid == 0) {
		if (unshare(CLONE_NEWNS) < 0)
			return 77;
	} else {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			return 77;
		write_file_at("/proc/self/setgroups", "deny");
		snprintf(m, sizeof(m), "0 %u 1", (unsigned)uid);
		if (write_file_at("/proc/self/uid_map", m) < 0)
			return 77;
		snprintf(m, sizeof(m), "0 %u 1", (unsigned)gid);
		if (write_file_at("/proc/self/gid_map", m) < 0)
			return 77;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 77;
	snprintf(mnt, sizeof(mnt), "%s/mnt", root);
	if (mkdir(mnt, 0755) < 0 && errno != EEXIST)
		return 77;
	if (mount("corral-test", mnt, "tmpfs", 0, NULL) < 0)
		return 77;
	snprintf(f, sizeof(f), "%s/f", mnt);
	close(open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	/* The inherited root fd still walks the parent's mount namespace: reopen. */
	close(root_fd);
	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return 1;

	fd = corral_resolve_open(root_fd, root, "mnt/f", CORRAL_RESOLVE_FILE, &err);
	if (fd >= 0 || err.code != CORRAL_E_REFUSED || !strstr(err.message, "crosses a mount")) {
		fprintf(stderr, "mnt/f: fd %d, %s\n", fd, err.message);
		return 1;
	}
	fd = corral_resolve_open(root_fd, root, "sub/../mnt", CORRAL_RESOLVE_DIRECTORY, &err);
	if (fd >= 0 || !strstr(err.message, "crosses a mount")) {
		fprintf(stderr, "mnt: fd %d, %s\n", fd, err.message);
		return 1;
	}
	fd = corral_resolve_create(root_fd, root, "mnt/g", 0644, &err);
	if (fd >= 0 || !strstr(err.message, "crosses a mount")) {
		fprintf(stderr, "create mnt/g: fd %d, %s\n", fd, err.message);
		return 1;
	}
	/* Positive control: the same root, no mount on the way. */
	fd = corral_resolve_open(root_fd, root, "sub/inner.txt", CORRAL_RESOLVE_FILE, &err);
	if (fd < 0) {
		fprintf(stderr, "control: %s\n", err.message);
		return 1;
	}
	close(fd);
	return 0;
}

static void test_mount_crossing(void **state)
{
	char mnt[PATH_MAX * 2];
	pid_t pid;
	int status;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(mount_child());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	snprintf(mnt, sizeof(mnt), "%s/mnt", root);
	rmdir(mnt);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		skip_or_fail_test("mount crossing: no mount namespace for this user");
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* In a child: openat2 made to fail with ENOSYS, as on a kernel < 5.6. */
static void test_no_openat2(void **state)
{
	pid_t pid;
	int status;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct corral_error err = {};
		scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
		char *out = NULL;
		int nr = seccomp_syscall_resolve_name("openat2");

		if (!ctx || nr < 0 || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0) < 0 ||
		    seccomp_load(ctx) < 0)
			_exit(77);
		if (corral_resolve_open(root_fd, root, "ok.txt", 0, &err) != -ENOSYS ||
		    err.code != CORRAL_E_UNSUPPORTED || !strstr(err.message, "openat2 unavailable"))
			_exit(1);
		if (corral_resolve_create(root_fd, root, "nc.txt", 0644, &err) >= 0 ||
		    err.code != CORRAL_E_UNSUPPORTED)
			_exit(2);
		if (corral_resolve_path(root, "ok.txt", true, &out, &err) >= 0 ||
		    err.code != CORRAL_E_UNSUPPORTED)
			_exit(3);
		if (corral_resolve_path(root, "nothere", false, &out, &err) >= 0 ||
		    err.code != CORRAL_E_UNSUPPORTED)
			_exit(4);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		skip_or_fail_test("cannot install a seccomp filter to hide openat2");
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * The TOCTOU attack: a second process keeps exchanging race/d (a real
 * directory) with race/l (a symlink to "/", or to a sibling outside the
 * root) while we resolve race/d/... — nothing outside may ever come back.
 */
#define RACE_ITERATIONS 20000

static void test_rename_race(void **state)
{
	char d[PATH_MAX * 2], l[PATH_MAX * 2], d2[PATH_MAX * 2], l2[PATH_MAX * 2], p[PATH_MAX * 2];
	struct stat inside, outside_passwd;
	unsigned long ok = 0, refused = 0, created = 0, naive = 0;
	struct timespec t0, t1;
	pid_t pid;

	xmkdir("race");
	xmkdir("race/d");
	xmkdir("race/d/etc");
	xwrite_file("race/d/etc/passwd", "inside");
	xsymlink("/", "race/l");
	xmkdir("race/d2");
	snprintf(p, sizeof(p), "%s", evil);
	xsymlink(p, "race/l2");
	snprintf(d, sizeof(d), "%s/race/d", root);
	snprintf(l, sizeof(l), "%s/race/l", root);
	snprintf(d2, sizeof(d2), "%s/race/d2", root);
	snprintf(l2, sizeof(l2), "%s/race/l2", root);
	assert_int_equal(fstatat(root_fd, "race/d/etc/passwd", &inside, 0), 0);
	assert_int_equal(stat("/etc/passwd", &outside_passwd), 0);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		for (;;) {
			if (renameat2(AT_FDCWD, d, AT_FDCWD, l, RENAME_EXCHANGE) < 0 ||
			    renameat2(AT_FDCWD, d2, AT_FDCWD, l2, RENAME_EXCHANGE) < 0)
				_exit(errno == EINVAL ? 77 : 1);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < RACE_ITERATIONS; i++) {
		static const char *const paths[] = { "race/d/etc/passwd", "race/d/../d/etc/passwd",
						     "race/../race/d/etc/passwd" };
		struct corral_error err = {};
		struct stat st;
		char *out = NULL;
		int fd;

		fd = corral_resolve_open(root_fd, root, paths[i % 3], CORRAL_RESOLVE_FILE, &err);
		if (fd >= 0) {
			assert_int_equal(fstat(fd, &st), 0);
			if (st.st_dev == outside_passwd.st_dev && st.st_ino == outside_passwd.st_ino)
				fail_msg("iteration %d: resolved to the host's /etc/passwd", i);
			assert_int_equal(st.st_ino, inside.st_ino);
			check_inside(fd);
			close(fd);
			ok++;
		} else {
			assert_true(err.code == CORRAL_E_REFUSED || err.code == CORRAL_E_NOT_FOUND);
			refused++;
		}
		if (i % 10 == 0) {
			/* The attack is live: a plain open() by name does land outside. */
			snprintf(p, sizeof(p), "%s/%s", root, paths[0]);
			fd = open(p, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				if (fstat(fd, &st) == 0 && st.st_ino == outside_passwd.st_ino &&
				    st.st_dev == outside_passwd.st_dev)
					naive++;
				close(fd);
			}
			if (corral_resolve_path(root, paths[i % 3], true, &out, &err) == 0) {
				snprintf(p, sizeof(p), "%s/race/d/etc/passwd", root);
				assert_string_equal(out, p);
				free(out);
			}
			snprintf(p, sizeof(p), "race/d2/n%d", i);
			fd = corral_resolve_create(root_fd, root, p, 0644, &err);
			if (fd >= 0) {
				check_inside(fd);
				close(fd);
				created++;
			}
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	kill(pid, SIGKILL);
	{
		int status;

		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
			skip_or_fail_test("no RENAME_EXCHANGE on this filesystem");
		assert_true(WIFSIGNALED(status));
	}
	/* Nothing was created through the symlink into the sibling outside. */
	snprintf(p, sizeof(p), "ls -A '%s' | grep -q '^n'", evil);
	assert_int_not_equal(system(p), 0);
	fprintf(stderr,
		"race: %d opens in %.0f ms: %lu inside, %lu refused, %lu created, 0 outside; "
		"plain open() escaped %lu/%d times\n",
		RACE_ITERATIONS, (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6, ok,
		refused, created, naive, RACE_ITERATIONS / 10);
	/* Controls: the resolver did succeed while racing, and the race was real. */
	assert_true(ok > 0);
	assert_true(naive > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_table),
		cmocka_unit_test(test_open_table_root_slash),
		cmocka_unit_test(test_absolute_without_root_path),
		cmocka_unit_test(test_long_paths),
		cmocka_unit_test(test_magic_links),
		cmocka_unit_test(test_path_table),
		cmocka_unit_test(test_path_roots),
		cmocka_unit_test(test_create_table),
		cmocka_unit_test(test_device),
		cmocka_unit_test(test_mount_crossing),
		cmocka_unit_test(test_no_openat2),
		cmocka_unit_test(test_rename_race),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
