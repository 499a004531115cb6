/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The docker provider's pure half: policy -> `docker run` argv and client
 * environment, the refusals, and the mapping of the client's exit status.
 * No daemon needed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "policy/policy.h"
#include "supervisor/docker/docker-private.h"

/* Under $TMPDIR when set, so the suite also runs inside corral (TMPDIR is its private tmp). */
static char tmpdir[200];

static char *pass_v[] = { "LANG", "SECRET_TOKEN", "NOT_SET_ANYWHERE", "GOOGLE_API_KEY", "GODEBUG", NULL };
static struct corral_kv set_v[] = { { "PATH", "/usr/bin:/bin" }, { "LANG", "C.UTF-8" } };

static void base_policy(struct corral_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->provider = CORRAL_PROVIDER_DOCKER;
	p->timeout = 30;
	p->network = CORRAL_NET_NONE;
	p->limits.memory = 1ull << 30;
	p->limits.cpu = 60;
	p->limits.processes = 256;
	p->limits.file_size = 1ull << 30;
	p->limits.open_files = 1024;
	p->limits.output = 1 << 20;
	p->env.pass.v = pass_v;
	p->env.pass.n = 5;
	p->env.set = set_v;
	p->env.n_set = 2;
	p->docker.image = "corral-test-busybox";
	p->docker.memory = 512ull << 20;
	p->docker.cpus = 1.0;
	p->docker.pids = 128;
}

static char *host_env[] = {
	"PATH=/usr/sbin:/usr/bin", "HOME=/root", "LANG=en_US.UTF-8", "SECRET_TOKEN=hunter2",
	"DOCKER_HOST=unix:///var/run/docker.sock", "AWS_SECRET=leak", "GOOGLE_API_KEY=AIzaSECRET",
	"GODEBUG=madvdontneed=1", NULL,
};

static struct corral_docker_host host = {
	.uid = 1000, .gid = 1001, .environ = host_env, .client = "/usr/bin/docker", .sock = NULL,
	.helper = "/usr/libexec/corral/corral-docker-exec",
};

static char *joined(char **v)
{
	size_t n = 1;
	char *s, *w;

	for (char **i = v; *i; i++)
		n += strlen(*i) + 3;
	s = w = malloc(n);
	assert_non_null(s);
	*w = 0;
	for (char **i = v; *i; i++)
		w += sprintf(w, "%s|", *i);
	return s;
}

static char *plan_argv(const struct corral_policy *p, const struct corral_exec_opts *o)
{
	struct corral_docker *d = NULL;
	struct corral_error err = {};
	char **argv = NULL, *s;

	assert_int_equal(corral_docker_plan(p, tmpdir, &host, &d, &err), 0);
	assert_int_equal(corral_docker_argv(d, o, "corral-0123", "/tmp/corral-docker.x/status", &argv, &err), 0);
	s = joined(argv);
	corral_docker_strv_free(argv);
	corral_docker_free(d);
	return s;
}

static void test_argv_defaults(void **state)
{
	struct corral_policy p;
	char *s, mnt[256];

	base_policy(&p);
	s = plan_argv(&p, &CORRAL_EXEC_OPTS(.argv = (const char *const[]){ "id", "-u", NULL }, .capture = true));
	snprintf(mnt, sizeof(mnt), "|--mount|type=bind,src=%s,dst=/workspace|", tmpdir);
	assert_non_null(strstr(s, "|--label|io.corral.run=1|"));
	assert_non_null(strstr(s, "|--label|io.corral.pid="));
	static const char *const want[] = {
		"/usr/bin/docker|run|--rm|--name|corral-0123|", "|--pull|never|",
		"|--init|", "|--log-driver|none|", "|--network|none|", "|--user|1000:1001|",
		"|--cap-drop|ALL|", "|--security-opt|no-new-privileges|", "|--read-only|",
		"|--tmpfs|/tmp:rw,exec,nosuid,nodev,size=536870912,mode=1777|", "|-w|/workspace|",
		"|--memory|536870912|--memory-swap|536870912|", "|--cpus|1|", "|--pids-limit|128|",
		"|--ulimit|cpu=60:61|", "|--ulimit|fsize=1073741824:1073741824|", "|--ulimit|nofile=1024:1024|",
		"|-e|HOME=/tmp|", "|-e|TMPDIR=/tmp|", "|-e|PATH=/usr/bin:/bin|", "|-e|SECRET_TOKEN|",
		"|-e|LANG|", "|corral-test-busybox|/.corral-exec|id|-u|",
		"|--mount|type=bind,src=/usr/libexec/corral/corral-docker-exec,dst=/.corral-exec,readonly|",
		"|--mount|type=bind,src=/tmp/corral-docker.x/status,dst=/.corral-status|",
	};
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		if (!strstr(s, want[i]))
			fail_msg("missing %s in %s", want[i], s);
	assert_non_null(strstr(s, mnt));
	/* no stdin given in capture mode: no -i; nothing passed that the policy did not list */
	assert_null(strstr(s, "|-i|"));
	assert_null(strstr(s, "AWS_SECRET"));
	assert_null(strstr(s, "NOT_SET_ANYWHERE"));
	assert_null(strstr(s, "hunter2"));
	/* A name that merely starts with GO is a secret like any other; the Go runtime's own go in argv. */
	assert_null(strstr(s, "AIzaSECRET"));
	assert_non_null(strstr(s, "|-e|GOOGLE_API_KEY|"));
	assert_non_null(strstr(s, "|-e|GODEBUG=madvdontneed=1|"));
	assert_null(strstr(s, "docker.sock"));
	/* LANG appears once: env.set wins over env.pass */
	assert_null(strstr(strstr(s, "|LANG|") + 1, "|LANG|"));
	assert_null(strstr(s, "LANG="));
	free(s);
}

static void test_client_env(void **state)
{
	struct corral_policy p;
	struct corral_docker *d = NULL;
	struct corral_error err = {};
	char *s;

	base_policy(&p);
	assert_int_equal(corral_docker_plan(&p, tmpdir, &host, &d, &err), 0);
	s = joined((char **)corral_docker_client_env(d));
	/* the client keeps its own PATH/HOME/DOCKER_HOST; values of by-name variables ride here */
	assert_non_null(strstr(s, "PATH=/usr/sbin:/usr/bin|"));
	assert_non_null(strstr(s, "HOME=/root|"));
	assert_non_null(strstr(s, "DOCKER_HOST=unix:///var/run/docker.sock|"));
	assert_non_null(strstr(s, "SECRET_TOKEN=hunter2|"));
	assert_non_null(strstr(s, "LANG=C.UTF-8|"));
	assert_non_null(strstr(s, "DOCKER_CLI_HINTS=false|"));
	assert_null(strstr(s, "AWS_SECRET"));
	free(s);
	corral_docker_free(d);
}

static void test_argv_variants(void **state)
{
	static const struct {
		int network;
		const char *shell;
		bool capture, stdin_given, passthrough, pull;
		uint64_t limits_memory, procs;
		const char *want, *not_want;
	} cases[] = {
		{ CORRAL_NET_LOOPBACK, "echo hi", true, false, false, false, 1ull << 30, 256,
		  "|--network|none|", "|-i|" },
		{ CORRAL_NET_HOST, "echo hi", true, false, false, false, 1ull << 30, 256, "|--network|host|", NULL },
		{ CORRAL_NET_NONE, "echo hi", true, false, false, false, 1ull << 30, 256,
		  "|corral-test-busybox|/.corral-exec|/bin/sh|-c|echo hi|", NULL },
		{ CORRAL_NET_NONE, "cat", true, true, false, false, 1ull << 30, 256, "|--name|corral-0123|-i|--label|", NULL },
		{ CORRAL_NET_NONE, "cat", false, false, true, false, 1ull << 30, 256, "|--name|corral-0123|-i|--label|", NULL },
		/* captured (--json) with stdin passed through: -i, as the local provider passes it */
		{ CORRAL_NET_NONE, "cat", true, false, true, false, 1ull << 30, 256, "|--name|corral-0123|-i|--label|", NULL },
		{ CORRAL_NET_NONE, "cat", false, false, false, true, 1ull << 30, 256, "|--pull|missing|", "|-i|" },
		/* the tighter of limits.memory and docker.memory; of limits.processes and docker.pids */
		{ CORRAL_NET_NONE, "x", true, false, false, false, 100ull << 20, 64,
		  "|--memory|104857600|--memory-swap|104857600|", "|--pids-limit|128|" },
		{ CORRAL_NET_NONE, "x", true, false, false, false, 100ull << 20, 64, "|--pids-limit|64|", NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct corral_policy p;
		char *s;

		base_policy(&p);
		p.network = cases[i].network;
		p.docker.pull = cases[i].pull;
		p.limits.memory = cases[i].limits_memory;
		p.limits.processes = cases[i].procs;
		s = plan_argv(&p, &CORRAL_EXEC_OPTS(.shell = cases[i].shell, .capture = cases[i].capture,
						     .stdin_data = cases[i].stdin_given ? "x" : NULL,
						     .stdin_len = cases[i].stdin_given,
						     .stdin_passthrough = cases[i].passthrough));
		if (!strstr(s, cases[i].want))
			fail_msg("case %zu: missing %s in %s", i, cases[i].want, s);
		if (cases[i].not_want && strstr(s, cases[i].not_want))
			fail_msg("case %zu: unexpected %s in %s", i, cases[i].not_want, s);
		free(s);
	}
}

static void test_extra_paths(void **state)
{
	char rw[300], ro[300], odd[300], *s, want[700];
	char *rwv[] = { rw, NULL }, *rov[] = { "/usr", "/etc", ro, odd, NULL };
	struct corral_policy p;

	snprintf(rw, sizeof(rw), "%s/rw", tmpdir);
	snprintf(ro, sizeof(ro), "%s/ro", tmpdir);
	snprintf(odd, sizeof(odd), "%s/a,\"b", tmpdir);
	assert_int_equal(mkdir(rw, 0755), 0);
	assert_int_equal(mkdir(ro, 0755), 0);
	assert_int_equal(mkdir(odd, 0755), 0);
	base_policy(&p);
	p.fs.read_write.v = rwv;
	p.fs.read_write.n = 1;
	p.fs.read_only.v = rov;
	p.fs.read_only.n = 4;
	s = plan_argv(&p, &CORRAL_EXEC_OPTS(.shell = "true", .capture = true));
	snprintf(want, sizeof(want), "|--mount|type=bind,src=%s,dst=%s|", rw, rw);
	assert_non_null(strstr(s, want));
	snprintf(want, sizeof(want), "|--mount|type=bind,src=%s,dst=%s,readonly|", ro, ro);
	assert_non_null(strstr(s, want));
	/* CSV quoting: a comma or quote in a path cannot inject mount options */
	snprintf(want, sizeof(want), "|--mount|type=bind,\"src=%s/a,\"\"b\",\"dst=%s/a,\"\"b\",readonly|", tmpdir,
		 tmpdir);
	if (!strstr(s, want))
		fail_msg("missing %s in %s", want, s);
	/* the default system list is the image's own business */
	assert_null(strstr(s, "src=/usr,"));
	assert_null(strstr(s, "src=/etc"));
	free(s);
	rmdir(rw);
	rmdir(ro);
	rmdir(odd);
}

/* A symlink planted in the root by an earlier run: the daemon would mount its target. */
static void test_planted_symlink(void **state)
{
	char link[300], real[300], nested[300];
	char *rwv[] = { link, NULL }, *rov[] = { nested, NULL };
	struct corral_policy p;
	struct corral_docker *d = NULL;
	struct corral_error err = {};

	snprintf(link, sizeof(link), "%s/cachelink", tmpdir);
	snprintf(real, sizeof(real), "%s/real", tmpdir);
	snprintf(nested, sizeof(nested), "%s/cachelink/x", tmpdir);
	assert_int_equal(symlink("/etc", link), 0);
	assert_int_equal(mkdir(real, 0755), 0);
	base_policy(&p);
	p.fs.read_write.v = rwv;
	p.fs.read_write.n = 1;
	assert_true(corral_docker_plan(&p, tmpdir, &host, &d, &err) < 0);
	if (!strstr(err.message, "symlink inside the root"))
		fail_msg("%s", err.message);
	p.fs.read_write.n = 0;
	p.fs.read_only.v = rov;
	p.fs.read_only.n = 1;
	assert_true(corral_docker_plan(&p, tmpdir, &host, &d, &err) < 0);
	assert_non_null(strstr(err.message, "fs.read_only"));
	/* control: a real directory under the root is mounted */
	snprintf(link, sizeof(link), "%s", real);
	p.fs.read_only.n = 0;
	p.fs.read_write.n = 1;
	assert_int_equal(corral_docker_plan(&p, tmpdir, &host, &d, &err), 0);
	corral_docker_free(d);
	snprintf(link, sizeof(link), "%s/cachelink", tmpdir);
	unlink(link);
	rmdir(real);
}

static void test_refusals(void **state)
{
	char sockdir[300], sockpath[400], missing[300];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	snprintf(sockdir, sizeof(sockdir), "%s/run", tmpdir);
	snprintf(sockpath, sizeof(sockpath), "%s/docker.sock", sockdir);
	snprintf(missing, sizeof(missing), "%s/missing", tmpdir);
	assert_int_equal(mkdir(sockdir, 0755), 0);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(strlen(sockpath) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, sockpath, strlen(sockpath) + 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);

	static char *v_root[] = { "/", NULL }, *v_run[] = { "/run", NULL }, *v_varrun[] = { "/var/run", NULL },
		    *v_sock[] = { "/var/run/docker.sock", NULL }, *v_rel[] = { "relative", NULL };
	char *v_sockdir[] = { sockdir, NULL }, *v_missing[] = { missing, NULL };
	static char *v_sys[] = { "/sys/kernel", NULL };
	char proclink[300], *v_proclink[] = { proclink, NULL };

	/*
	 * A symlink to the host's /proc, outside the root (one inside is never
	 * followed): a bind of it would hand the container every host process.
	 */
	snprintf(proclink, sizeof(proclink), "%s-proclink", tmpdir);
	assert_int_equal(symlink("/proc", proclink), 0);
	const struct {
		const char *image;
		char **rw, **ro;
		const char *sock;
		double cpus;
		uint64_t dmem;
		int code;
		const char *msg;
	} cases[] = {
		{ NULL, NULL, NULL, NULL, 1, 0, CORRAL_E_POLICY, "docker.image: no image given" },
		{ "", NULL, NULL, NULL, 1, 0, CORRAL_E_POLICY, "docker.image: no image given" },
		{ "--privileged", NULL, NULL, NULL, 1, 0, CORRAL_E_POLICY, "not an image reference" },
		{ "a b", NULL, NULL, NULL, 1, 0, CORRAL_E_POLICY, "not an image reference" },
		{ "img", v_root, NULL, NULL, 1, 0, CORRAL_E_POLICY, "fs.read_write: / is or contains the container daemon socket" },
		{ "img", v_run, NULL, NULL, 1, 0, CORRAL_E_POLICY, "fs.read_write: /run is or contains the container daemon socket" },
		{ "img", NULL, v_varrun, NULL, 1, 0, CORRAL_E_POLICY, "fs.read_only: /var/run is or contains" },
		{ "img", NULL, v_sock, NULL, 1, 0, CORRAL_E_POLICY, "daemon socket" },
		{ "img", v_sockdir, NULL, sockpath, 1, 0, CORRAL_E_POLICY, "is or contains the container daemon socket" },
		{ "img", NULL, v_missing, NULL, 1, 0, CORRAL_E_NOT_FOUND, "fs.read_only: " },
		{ "img", NULL, v_rel, NULL, 1, 0, CORRAL_E_POLICY, "needs an absolute path" },
		{ "img", NULL, v_proclink, NULL, 1, 0, CORRAL_E_POLICY, "is on the host's procfs" },
		{ "img", NULL, v_sys, NULL, 1, 0, CORRAL_E_POLICY, "is on the host's sysfs" },
		{ "img", NULL, NULL, "/nonexistent.sock", 100000, 0, CORRAL_E_POLICY, "docker.cpus: 100000 exceeds" },
		{ "img", NULL, NULL, NULL, 1, 1 << 20, CORRAL_E_POLICY, "docker.memory: docker needs at least 6M" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct corral_policy p;
		struct corral_docker *d = NULL;
		struct corral_error err = {};
		struct corral_docker_host h = host;

		base_policy(&p);
		p.docker.image = (char *)cases[i].image;
		p.docker.cpus = cases[i].cpus;
		if (cases[i].dmem) {
			p.docker.memory = cases[i].dmem;
			p.limits.memory = cases[i].dmem;
		}
		if (cases[i].rw) {
			p.fs.read_write.v = cases[i].rw;
			p.fs.read_write.n = 1;
		}
		if (cases[i].ro) {
			p.fs.read_only.v = cases[i].ro;
			p.fs.read_only.n = 1;
		}
		h.sock = cases[i].sock;
		assert_true(corral_docker_plan(&p, tmpdir, &h, &d, &err) < 0);
		assert_null(d);
		if (err.code != cases[i].code || !strstr(err.message, cases[i].msg))
			fail_msg("case %zu: got code %d '%s', want %d '%s'", i, err.code, err.message, cases[i].code,
				 cases[i].msg);
	}
	close(fd);
	unlink(sockpath);
	unlink(proclink);
	rmdir(sockdir);
}

/*
 * Exec failures come from the helper's report alone: a command's own
 * "docker: " or "[FATAL tini" line and 126/127 stay its result (found in
 * review: such a line made corral replace the command's output).
 */
static void test_map_result(void **state)
{
	static const char forged_tini[] = "hi\n[FATAL tini (7)] exec nope failed: No such file or directory\n";
	static const char forged_docker[] = "docker: Error response from daemon: exec: \"nope\": not found\n";
	static const struct {
		int status;
		const char *err_text;
		bool captured, started;
		const char *report; /* what the helper wrote on the status socket */
		int rc;
		bool want_exited;
		int want_status, want_signal, want_errno;
		const char *want_stderr, *want_interp, *want_err;
	} cases[] = {
		{ 0, "", true, true, "", 0, true, 0, 0, 0, "" },
		{ 3, "oops\n", true, true, "", 0, true, 3, 0, 0, "oops\n" },
		{ 137, "", true, true, "", 0, false, 0, 9, 0, "" },
		{ 143, "", false, true, "", 0, false, 0, 15, 0, "" },
		/* the command's own lines and statuses stay its own, whatever they say */
		{ 127, forged_tini, true, true, "", 0, true, 127, 0, 0, forged_tini },
		{ 126, forged_tini, true, true, "", 0, true, 126, 0, 0, forged_tini },
		{ 127, forged_docker, true, true, "", 0, true, 127, 0, 0, forged_docker },
		{ 125, forged_docker, true, true, "", 0, true, 125, 0, 0, forged_docker },
		{ 127, NULL, false, true, "", 0, true, 127, 0, 0, NULL },
		/* the helper's report: the exec failed */
		{ 127, "", true, true, "E 2\n", 0, true, 127, 0, ENOENT, "corral: nope: command not found\n" },
		{ 127, NULL, false, true, "E 2\n", 0, true, 127, 0, ENOENT, NULL },
		{ 126, "", true, true, "E 13\n", 0, true, 126, 0, EACCES, "corral: nope: Permission denied\n" },
		{ 126, "", true, true, "E 2\nI /no/interp\n", 0, true, 126, 0, ENOENT,
		  "corral: nope: cannot execute: interpreter /no/interp not found\n", "/no/interp" },
		/* a malformed report is no exec failure */
		{ 127, "x\n", true, true, "E abc\n", 0, true, 127, 0, 0, "x\n" },
		/* the helper never ran: docker's own failure, whatever the status */
		{ 125, "x\ndocker: Error response from daemon: boom.\n\nRun 'docker run --help'\n", true, false, NULL,
		  -EIO, false, 0, 0, 0, NULL, NULL, "(docker exited 125): Error response from daemon: boom." },
		{ 127, "[FATAL tini (7)] exec /.corral-exec failed: No such file or directory\n", true, false, NULL,
		  -EIO, false, 0, 0, 0, NULL, NULL, "(docker exited 127): [FATAL tini (7)] exec /.corral-exec failed" },
		{ 125, NULL, false, false, NULL, -EIO, false, 0, 0, 0, NULL, NULL, "docker's message is above" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct corral_result res = { .sz = sizeof(res), .exited = true, .exit_status = cases[i].status };
		struct corral_docker_status st = { .started = cases[i].started };
		struct corral_error err = {};
		int rc;

		if (cases[i].report)
			corral_docker_status_parse(cases[i].report, strlen(cases[i].report), &st);
		if (cases[i].err_text) {
			res.stderr_buf = strdup(cases[i].err_text);
			res.stderr_len = strlen(cases[i].err_text);
		}
		rc = corral_docker_map_result(&res, cases[i].captured, "nope", &st, &err);
		if (rc != cases[i].rc)
			fail_msg("case %zu: rc %d (%s)", i, rc, err.message);
		if (rc < 0) {
			assert_int_equal(err.code, CORRAL_E_PROVIDER);
			if (!strstr(err.message, cases[i].want_err))
				fail_msg("case %zu: %s", i, err.message);
		} else {
			if (res.exited != cases[i].want_exited || res.exit_status != cases[i].want_status ||
			    res.signal != cases[i].want_signal || res.exec_errno != cases[i].want_errno)
				fail_msg("case %zu: exited %d status %d signal %d errno %d", i, res.exited,
					 res.exit_status, res.signal, res.exec_errno);
			assert_string_equal(res.provider, "docker");
			if (cases[i].want_stderr) {
				assert_string_equal(res.stderr_buf, cases[i].want_stderr);
				assert_int_equal(res.stderr_len, strlen(cases[i].want_stderr));
			}
			if (cases[i].want_interp)
				assert_string_equal(res.exec_interp, cases[i].want_interp);
			else
				assert_null(res.exec_interp);
		}
		corral_result_clear(&res);
	}
}

/* A limit the kernel cannot enforce: strict refuses naming the key; best-effort runs and says so. */
static void test_kernel_gaps(void **state)
{
	static const struct {
		int compat;
		bool have_mem, have_pids, have_cpu;
		int rc;
		const char *want; /* the refusal, or the first warning */
		size_t n_warnings;
	} cases[] = {
		{ CORRAL_COMPAT_STRICT, true, true, true, 0, NULL, 0 },
		{ CORRAL_COMPAT_BEST_EFFORT, true, true, true, 0, NULL, 0 },
		{ CORRAL_COMPAT_STRICT, true, false, true, -EOPNOTSUPP,
		  "docker.pids: this kernel has no pids cgroup, docker would discard the limit", 0 },
		{ CORRAL_COMPAT_BEST_EFFORT, true, false, true, 0,
		  "docker.pids: this kernel has no pids cgroup, so docker ran the container without that limit", 1 },
		{ CORRAL_COMPAT_BEST_EFFORT, false, false, false, 0, "docker.memory: this kernel has no memory cgroup", 3 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct corral_policy p;
		struct corral_strv w = {};
		struct corral_error err = {};
		const bool have[3] = { cases[i].have_mem, cases[i].have_pids, cases[i].have_cpu };
		int rc;

		base_policy(&p);
		p.compat = cases[i].compat;
		rc = corral_docker_kernel_gaps(&p, have, &w, &err);
		assert_int_equal(rc, cases[i].rc);
		assert_int_equal(w.n, cases[i].n_warnings);
		if (rc < 0) {
			assert_int_equal(err.code, CORRAL_E_UNENFORCEABLE);
			assert_non_null(strstr(err.message, cases[i].want));
		} else if (cases[i].want) {
			assert_non_null(strstr(w.v[0], cases[i].want));
		}
		strv_clear(&w);
	}
	{
		/* a limit not asked for is no gap */
		struct corral_policy p;
		struct corral_strv w = {};
		const bool none[3] = { false, false, false };

		base_policy(&p);
		p.docker.memory = p.limits.memory = 0;
		p.docker.pids = p.limits.processes = 0;
		p.docker.cpus = 0;
		assert_int_equal(corral_docker_kernel_gaps(&p, none, &w, NULL), 0);
		assert_int_equal(w.n, 0);
	}
}

static void test_identity(void **state)
{
	struct corral_policy p;
	struct corral_error err = {};
	uid_t uid;
	gid_t gid;

	base_policy(&p);
	/* An explicit user must be able to write the root, as for local. */
	assert_int_equal(chmod(tmpdir, 0700), 0);
	p.user = "1234:99";
	assert_true(corral_docker_identity(&p, tmpdir, &uid, &gid, &err) < 0);
	assert_non_null(strstr(err.message, "is not writable by 1234"));
	assert_int_equal(chmod(tmpdir, 0777), 0);
	assert_int_equal(corral_docker_identity(&p, tmpdir, &uid, &gid, &err), 0);
	assert_int_equal(uid, 1234);
	assert_int_equal(gid, 99);
	p.user = "root";
	if (getuid() == 0) { /* owner root: uid 0 without capabilities may write it */
		assert_int_equal(corral_docker_identity(&p, tmpdir, &uid, &gid, &err), 0);
		assert_int_equal(uid, 0);
		assert_int_equal(gid, 0);
	}
	assert_int_equal(chmod(tmpdir, 0700), 0);
	p.user = "no-such-user-corral";
	assert_true(corral_docker_identity(&p, tmpdir, &uid, &gid, &err) < 0);
	assert_non_null(strstr(err.message, "user: no such user"));
	p.user = NULL;
	assert_int_equal(corral_docker_identity(&p, tmpdir, &uid, &gid, &err), getuid() == 0 ? -EACCES : 0);
	if (getuid() != 0) {
		assert_int_equal(uid, getuid());
		assert_int_equal(gid, getgid());
	} else {
		/* root-owned root: nobody, who cannot write a 0700 directory -> refused with advice */
		assert_non_null(strstr(err.message, "--user"));
		assert_int_equal(chown(tmpdir, 4321, 4322), 0);
		assert_int_equal(corral_docker_identity(&p, tmpdir, &uid, &gid, &err), 0);
		assert_int_equal(uid, 4321);
		assert_int_equal(gid, 4322);
		/* Owned by nobody, group root: nobody's own group, as the local provider (never gid 0). */
		assert_int_equal(chown(tmpdir, 65534, 0), 0);
		assert_int_equal(corral_docker_identity(&p, tmpdir, &uid, &gid, &err), 0);
		assert_int_equal(uid, 65534);
		assert_int_equal(gid, 65534);
		assert_int_equal(chown(tmpdir, 0, 0), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_argv_defaults), cmocka_unit_test(test_client_env),
		cmocka_unit_test(test_argv_variants), cmocka_unit_test(test_extra_paths),
		cmocka_unit_test(test_refusals),      cmocka_unit_test(test_map_result),
		cmocka_unit_test(test_identity),      cmocka_unit_test(test_kernel_gaps),      cmocka_unit_test(test_planted_symlink),
	};
	int r;

	snprintf(tmpdir, sizeof(tmpdir), "%s/corral-docker-plan.XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir))
		return 1;
	r = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(tmpdir);
	return r;
}
