/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * supervisor/local/, in process (suite "unit"): the private tmp's removal
 * (corral_tmp_remove) on trees a command could leave, and the per-run
 * cgroup naming (corral_cgroup_create) against a directory standing in for
 * a cgroup parent. Everything under a scratch directory in $TMPDIR.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/policy.h"
#include "supervisor/exec/sandbox.h"

static char base[PATH_MAX];

static void path_of(char *buf, size_t len, const char *rel)
{
	int n = snprintf(buf, len, "%s/%s", base, rel);

	assert_true(n > 0 && (size_t)n < len);
}

static void mkdir_p(const char *rel, mode_t mode)
{
	char p[PATH_MAX];

	path_of(p, sizeof(p), rel);
	assert_int_equal(mkdir(p, mode), 0);
	assert_int_equal(chmod(p, mode), 0); /* past the umask */
}

static void write_rel(const char *rel, const char *text)
{
	char p[PATH_MAX];
	FILE *f;

	path_of(p, sizeof(p), rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static bool exists(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	path_of(p, sizeof(p), rel);
	return lstat(p, &st) == 0;
}

static void rm_rf(const char *abs)
{
	char cmd[2 * PATH_MAX + 64];

	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", abs, abs);
	(void)system(cmd);
}

static int setup(void **state)
{
	const char *t = getenv("TMPDIR");

	snprintf(base, sizeof(base), "%s/corral-test-local.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(base))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	rm_rf(base);
	return 0;
}

/* ------------------------------------------------------------ tmp removal */

/* What a command leaves in its tmp ("tmp"), next to "outside" with its "keep". */
static void tree_empty(void) {}

static void tree_many_files(void)
{
	char rel[64];

	mkdir_p("tmp/many", 0755);
	for (int i = 0; i < 3000; i++) {
		snprintf(rel, sizeof(rel), "tmp/many/file-with-a-longer-name-%04d", i);
		write_rel(rel, "x");
	}
}

static void tree_deep(void)
{
	char rel[PATH_MAX] = "tmp";

	/* Deeper than the removal holds fds for (TMP_DEPTH, 16): it moves directories up. */
	for (int i = 0; i < 60; i++) {
		strcat(rel, "/d");
		mkdir_p(rel, 0755);
		if (i % 10 == 0) {
			char f[PATH_MAX];

			snprintf(f, sizeof(f), "%s/f", rel);
			write_rel(f, "x");
		}
	}
}

static void tree_links_out(void)
{
	char p[PATH_MAX], t[PATH_MAX];

	mkdir_p("tmp/sub", 0755);
	path_of(t, sizeof(t), "outside");
	path_of(p, sizeof(p), "tmp/to-outside");
	assert_int_equal(symlink(t, p), 0);
	path_of(p, sizeof(p), "tmp/sub/to-outside");
	assert_int_equal(symlink(t, p), 0);
	path_of(t, sizeof(t), "outside/keep");
	path_of(p, sizeof(p), "tmp/to-keep");
	assert_int_equal(symlink(t, p), 0);
	path_of(p, sizeof(p), "tmp/sub/hard-keep");
	assert_int_equal(link(t, p), 0);
	path_of(p, sizeof(p), "tmp/dangling");
	assert_int_equal(symlink("/nonexistent/corral", p), 0);
}

static void tree_modes(void)
{
	char p[PATH_MAX];

	mkdir_p("tmp/a", 0755);
	mkdir_p("tmp/a/b", 0755);
	write_rel("tmp/a/b/f", "x");
	write_rel("tmp/a/unreadable", "x");
	path_of(p, sizeof(p), "tmp/a/unreadable");
	assert_int_equal(chmod(p, 0), 0);
	path_of(p, sizeof(p), "tmp/a/b");
	assert_int_equal(chmod(p, 0), 0);
	path_of(p, sizeof(p), "tmp/a");
	assert_int_equal(chmod(p, 0), 0);
	path_of(p, sizeof(p), "tmp/fifo");
	assert_int_equal(mkfifo(p, 0600), 0);
}

static void test_tmp_remove(void **state)
{
	static const struct {
		const char *what;
		void (*build)(void);
	} cases[] = {
		{ "empty (rmdir alone)", tree_empty },
		{ "3000 files in one directory", tree_many_files },
		{ "60 levels deep", tree_deep },
		{ "symlinks and a hard link to outside", tree_links_out },
		{ "mode 000 directories and files, a FIFO", tree_modes },
	};
	struct corral_sandbox sb = {};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct corral_run run = { .ruleset_fd = -1, .tmp_fd = -1, .un_parent = -1, .un_child = -1 };
		char tmp[PATH_MAX], p[PATH_MAX];
		struct stat st;

		print_message("%s\n", cases[i].what);
		mkdir_p("outside", 0755);
		write_rel("outside/keep", "keep");
		mkdir_p("tmp", 0700);
		cases[i].build();

		path_of(tmp, sizeof(tmp), "tmp");
		run.tmp_path = strdup(tmp);
		assert_non_null(run.tmp_path);
		run.tmp_fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(run.tmp_fd >= 0);
		corral_tmp_remove(&sb, &run);

		if (exists("tmp"))
			fail_msg("%s: the tmp is still there", cases[i].what);
		assert_null(run.tmp_path);
		assert_int_equal(run.tmp_fd, -1);
		/* Nothing outside went, nor changed: the hard link's target kept its content. */
		path_of(p, sizeof(p), "outside/keep");
		assert_int_equal(stat(p, &st), 0);
		assert_int_equal(st.st_size, 4);
		assert_int_equal(st.st_nlink, 1);
		rm_rf(base);
		assert_int_equal(mkdir(base, 0700), 0);
	}
}

/* ------------------------------------------------------------ cgroup naming */

/*
 * A plain directory stands in for a cgroup parent: corral_cgroup_create
 * names and makes the run's directory, then fails at the membership file a
 * real cgroup would have. Per-run names are corral-PID-N, N from a counter
 * of the process starting at 0; a name that exists (left by an earlier
 * corral of the same pid, or one in another pid namespace) is never reused.
 */
static int cg_create(const char *parent_rel, struct corral_run *run, struct corral_error *err)
{
	struct corral_policy *p = NULL;
	struct corral_sandbox sb = {};
	char parent[PATH_MAX];
	int r;

	assert_int_equal(corral_policy_new(&p), 0);
	p->limits.processes = 0;
	p->limits.memory = 0;
	path_of(parent, sizeof(parent), parent_rel);
	sb.policy = p;
	sb.cg.dir[CORRAL_CG_PIDS] = parent;
	r = corral_cgroup_create(&sb, run, err);
	corral_policy_free(p);
	return r;
}

static void run_clear(struct corral_run *run)
{
	for (int i = 0; i < CORRAL_CG_MAX; i++) {
		if (run->cg_fd[i] >= 0)
			close(run->cg_fd[i]);
		free(run->cg_dir[i]);
		run->cg_dir[i] = NULL;
	}
}

static void test_cgroup_names(void **state)
{
	struct corral_run run = { .cg_fd = { -1, -1, -1 } };
	struct corral_error err = {};
	char rel[128], want[PATH_MAX];
	int pid = (int)getpid();

	/* Names 0..9 taken, each with a file that must survive: the run gets corral-PID-10. */
	mkdir_p("cg", 0755);
	for (int n = 0; n < 10; n++) {
		snprintf(rel, sizeof(rel), "cg/corral-%d-%d", pid, n);
		mkdir_p(rel, 0755);
		snprintf(rel, sizeof(rel), "cg/corral-%d-%d/mine", pid, n);
		write_rel(rel, "x");
	}
	assert_true(cg_create("cg", &run, &err) < 0);
	snprintf(rel, sizeof(rel), "cg/corral-%d-10", pid);
	path_of(want, sizeof(want), rel);
	assert_non_null(run.cg_dir[CORRAL_CG_PIDS]);
	assert_string_equal(run.cg_dir[CORRAL_CG_PIDS], want);
	assert_true(exists(rel));
	/* The failure names the file a real cgroup has (v1 pids: tasks). */
	if (!strstr(err.message, "/tasks"))
		fail_msg("error does not name the membership file: %s", err.message);
	for (int n = 0; n < 10; n++) {
		snprintf(rel, sizeof(rel), "cg/corral-%d-%d/mine", pid, n);
		assert_true(exists(rel));
	}
	run_clear(&run);

	/* The next run takes the next name: names are not reused within a process. */
	memset(&err, 0, sizeof(err));
	assert_true(cg_create("cg", &run, &err) < 0);
	snprintf(rel, sizeof(rel), "cg/corral-%d-11", pid);
	path_of(want, sizeof(want), rel);
	assert_string_equal(run.cg_dir[CORRAL_CG_PIDS], want);
	run_clear(&run);

	/* Every name it would try taken: refused, naming the parent, nothing touched. */
	for (int n = 12; n < 12 + 70; n++) {
		snprintf(rel, sizeof(rel), "cg/corral-%d-%d", pid, n);
		mkdir_p(rel, 0755);
	}
	memset(&err, 0, sizeof(err));
	assert_true(cg_create("cg", &run, &err) < 0);
	assert_null(run.cg_dir[CORRAL_CG_PIDS]);
	path_of(want, sizeof(want), "cg/corral-*: File exists");
	if (!strstr(err.message, want))
		fail_msg("expected [%s] in [%s]", want, err.message);
	run_clear(&run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tmp_remove, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cgroup_names, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
