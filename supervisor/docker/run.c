/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The docker provider: the same policy in a throwaway container.
 *
 * prepare (once per sandbox): find the client, ask the daemon over its Unix
 * socket whether it answers and has the image (two raw HTTP/1.0 requests,
 * under a millisecond, where merely starting the client costs ~10 ms), and
 * build the `docker run` options from the policy. exec (per command): a
 * fresh container name, the argv, and the shared engine, which runs the
 * client as a plain child. The container is the confinement; the client
 * itself is not confined.
 *
 * No container may outlive a run: at the deadline the container is killed
 * through the daemon before the engine kills the client (killing only the
 * client leaves the container running); whenever the client did not exit
 * on its own the container is force-removed, retrying briefly because a
 * create request may still be in flight in the daemon; and a guardian
 * process removes it if corral itself dies mid-run.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "policy/policy.h"
#include "supervisor/docker/docker-private.h"
#include "supervisor/exec/sandbox.h"

/*
 * The exec helper: next to the running program (corral in its build tree
 * or installed beside it), else where `meson install` put it.
 */
char *corral_docker_find_helper(void)
{
	char self[PATH_MAX], *slash, *path = NULL;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash && asprintf(&path, "%.*s/" CORRAL_DOCKER_HELPER_NAME, (int)(slash - self), self) > 0 &&
		    access(path, X_OK) == 0)
			return path;
		free(path);
	}
	if (access(CORRAL_LIBEXECDIR "/" CORRAL_DOCKER_HELPER_NAME, X_OK) == 0)
		return strdup(CORRAL_LIBEXECDIR "/" CORRAL_DOCKER_HELPER_NAME);
	return NULL;
}

int corral_docker_prepare(const struct corral_policy *p, const char *root_abs, struct corral_docker **out,
			  struct corral_error *err)
{
	extern char **environ;
	_cleanup_free_ char *client = NULL, *helper = NULL;
	_cleanup_(strv_clear) struct corral_strv warnings = {};
	struct corral_docker_host h = { .environ = environ };
	struct corral_docker *d = NULL;
	int r;

	/*
	 * Network "allow" needs corral's egress proxy and connect mediation,
	 * which a container does not get: strict refuses; best-effort runs
	 * with --network none (stricter, never the host's) and says so.
	 */
	if (p->network == CORRAL_NET_ALLOW) {
		if (p->compat != CORRAL_COMPAT_BEST_EFFORT)
			return corral_err(err, CORRAL_E_UNENFORCEABLE, 0,
					  "network \"allow\" is not enforced by the docker provider: use --provider "
					  "local (its egress proxy keeps --allow), or --compat best-effort to run in "
					  "docker with network \"none\"");
		if (strv_add(&warnings, "network \"allow\" dropped: the docker provider does not enforce --allow; "
			     "ran with --network none (no host reachable); --provider local enforces the list") < 0)
			return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	}
	r = dk_find_client(environ, &client);
	if (r == -ENOMEM)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	if (r < 0)
		return corral_err(err, CORRAL_E_PROVIDER, ENOENT, DK_NO_CLIENT);
	h.client = client;
	h.helper = helper = corral_docker_find_helper();
	h.sock = corral_docker_daemon_socket(environ);
	/* A root holding /etc or /home would be bind-mounted writable: refused as for local. */
	r = corral_policy_check_paths(p, err);
	if (r < 0)
		return r;
	r = corral_docker_identity(p, root_abs, &h.uid, &h.gid, err);
	if (r < 0)
		return r;
	if (h.sock) {
		r = dk_check_kernel(p, &warnings, err);
		if (r < 0)
			return r;
	}
	r = corral_docker_plan(p, root_abs, &h, &d, err);
	if (r < 0)
		return r;
	d->warnings = warnings;
	warnings = (struct corral_strv){};
	r = dk_check_daemon(d, p->docker.image, p->docker.pull, err);
	if (r < 0) {
		corral_docker_free(d);
		return r;
	}
	*out = d;
	return 0;
}

/*
 * Can the docker provider run here, as far as the environment goes: a
 * client on PATH, the exec helper, a daemon that answers, the policy's
 * image present (or pull allowed)? The reason in |err| when not, naming
 * what to change. Policy refusals (paths, limits) are run's to give.
 */
int corral_docker_usable(const struct corral_policy *p, struct corral_error *err)
{
	extern char **environ;
	_cleanup_free_ char *helper = NULL;
	struct corral_docker d = {};
	const char *sock;
	int r;

	r = dk_find_client(environ, &d.client);
	if (r == -ENOMEM)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	if (r < 0)
		return corral_err(err, CORRAL_E_PROVIDER, ENOENT, DK_NO_CLIENT);
	helper = corral_docker_find_helper();
	if (!helper)
		r = corral_err(err, CORRAL_E_PROVIDER, ENOENT,
			       "docker provider: its exec helper " CORRAL_DOCKER_HELPER_NAME
			       " was not found next to corral or in " CORRAL_LIBEXECDIR "; install corral completely");
	else if (!dk_valid_image(p->docker.image))
		r = corral_err(err, CORRAL_E_POLICY, EINVAL,
			       p->docker.image && *p->docker.image ? "docker.image: '%s' is not an image reference"
								   : "docker.image: no image given%s (set docker.image or --image)",
			       p->docker.image ? p->docker.image : "");
	else if ((sock = corral_docker_daemon_socket(environ)) && !(d.sock = strdup(sock)))
		r = corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	else if (dk_client_base_env(environ, &d.cenv) < 0)
		r = corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	else
		r = dk_check_daemon(&d, p->docker.image, p->docker.pull, err);
	free(d.client);
	free(d.sock);
	strv_clear(&d.cenv);
	return r;
}

static void docker_on_deadline(void *arg)
{
	struct dk_run *run = arg;
	char path[128];

	run->deadline = true;
	run->maybe_uncreated = false;
	if (run->d->sock) {
		snprintf(path, sizeof(path), "/containers/%s/kill", run->name);
		run->maybe_uncreated = dk_api_request(run->d->sock, "POST", path, NULL, 0) == 404;
	} else {
		const char *args[] = { "kill", run->name, NULL };
		char msg[256];
		int s = dk_run_client(run->d, args, CLIENT_TIMEOUT_MS, msg, sizeof(msg));
		run->maybe_uncreated = s > 0 && strstr(msg, "No such container");
	}
}

/* One removal attempt, as an HTTP status (the client's answer mapped onto one), or -errno. */
static int remove_once(const struct dk_run *run)
{
	char path[128], msg[256];
	int s;

	if (run->d->sock) {
		snprintf(path, sizeof(path), "/containers/%s?force=1&v=1", run->name);
		return dk_api_request(run->d->sock, "DELETE", path, NULL, 0);
	}
	const char *args[] = { "rm", "-f", "-v", run->name, NULL };
	s = dk_run_client(run->d, args, CLIENT_TIMEOUT_MS, msg, sizeof(msg));
	if (s < 0)
		return s;
	if (s == 0)
		return 204;
	if (strstr(msg, "No such container"))
		return 404;
	if (strstr(msg, "in progress"))
		return 409;
	return 500;
}

/*
 * Force-remove the container. When it was never seen, a 404 right after
 * the client was killed may mean its create request is still in the
 * daemon, so look again briefly before believing it; 409 is a removal
 * (--rm) already under way, and the container is listed until it ends:
 * wait for it.
 */
static void remove_container(const struct dk_run *run)
{
	long long start = (long long)corral_now_ms();

	for (;;) {
		int s = remove_once(run);
		long long t = (long long)corral_now_ms() - start;

		if (s == 204 || s < 0)
			return;
		if (s == 404 && (!run->maybe_uncreated || t >= REMOVE_RETRY_MS))
			return;
		if (t >= REMOVE_WAIT_MS)
			return;
		nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
	}
}

/*
 * The run's status socket (exec-helper.c): a listening Unix socket in a
 * fresh 0700 directory of the host's, only its mount reaching the
 * container. The helper's connection is the first queued one; the
 * command, started after it, can connect too but never write into it.
 */
static int status_open(struct dk_run *run, struct corral_error *err)
{
	const char *base = getenv("XDG_RUNTIME_DIR");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (!base || base[0] != '/' || strlen(base) > 64 || access(base, W_OK | X_OK) < 0)
		base = "/tmp";
	snprintf(run->dir, sizeof(run->dir), "%s/corral-docker.XXXXXX", base);
	if (!mkdtemp(run->dir)) {
		run->dir[0] = '\0';
		return corral_err(err, CORRAL_E_SETUP, errno, "docker provider: status directory in %s: %s", base,
				  corral_strerror(errno));
	}
	snprintf(run->sock, sizeof(run->sock), "%s/status", run->dir);
	memcpy(sa.sun_path, run->sock, strlen(run->sock) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    /* whoever the container runs as connects; the 0700 directory keeps everyone else out */
	    chmod(run->sock, 0777) < 0 || listen(fd, 8) < 0) {
		int e = errno;

		safe_close(fd);
		return corral_err(err, CORRAL_E_SETUP, e, "docker provider: status socket %s: %s", run->sock,
				  corral_strerror(e));
	}
	run->status_fd = fd;
	return 0;
}

/* What the helper reported: its connection is the first queued one, or there is none. */
static void status_read(struct dk_run *run, struct corral_docker_status *st)
{
	_cleanup_close_ int c = -1;
	char buf[512];
	size_t got = 0;
	long long end = (long long)corral_now_ms() + 1000;

	memset(st, 0, sizeof(*st));
	if (run->status_fd < 0)
		return;
	c = accept4(run->status_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (c < 0)
		return;
	st->started = true;
	/* The container has exited, so the helper's end is closed: EOF comes at once. */
	while (got < sizeof(buf)) {
		struct pollfd pf = { .fd = c, .events = POLLIN };
		long long left = end - (long long)corral_now_ms();
		ssize_t n;

		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			break;
		n = read(c, buf + got, sizeof(buf) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	corral_docker_status_parse(buf, got, st);
}

static void status_close(struct dk_run *run)
{
	run->status_fd = safe_close(run->status_fd);
	if (run->sock[0])
		(void)unlink(run->sock);
	if (run->dir[0])
		(void)rmdir(run->dir);
}

static void docker_on_finish(void *arg)
{
	struct dk_run *run = arg;

	if (run->deadline)
		remove_container(run);
}

int corral_docker_add_warning(struct corral_result *res, const char *line, struct corral_error *err)
{
	char **v = realloc(res->warnings, (res->n_warnings + 1) * sizeof(*v));

	if (!v)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	res->warnings = v;
	v[res->n_warnings] = strdup(line);
	if (!v[res->n_warnings])
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	res->n_warnings++;
	return 0;
}

/* What this sandbox runs without (best-effort), appended to the result's warnings. */
static int add_warnings(struct corral_result *res, const struct corral_strv *w, struct corral_error *err)
{
	for (size_t i = 0; i < w->n; i++) {
		int r = corral_docker_add_warning(res, w->v[i], err);

		if (r < 0)
			return r;
	}
	return 0;
}

int corral_docker_exec(struct corral_docker *d, const struct corral_exec_opts *opts, struct corral_result *res,
		       struct corral_error *err)
{
	struct dk_run run = { .d = d, .maybe_uncreated = true, .status_fd = -1 };
	struct corral_docker_status st;
	char **argv = NULL;
	uint8_t rnd[8];
	int r;

	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return corral_err(err, CORRAL_E_SETUP, errno, "docker provider: getrandom: %s", corral_strerror(errno));
	snprintf(run.name, sizeof(run.name), "corral-%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2],
		 rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	r = status_open(&run, err);
	if (r == 0)
		r = corral_docker_argv(d, opts, run.name, run.sock, &argv, err);
	if (r < 0) {
		status_close(&run);
		return r;
	}

	struct corral_spawn sp = {
		.argv = argv,
		.envp = d->cenv.v,
		.confine = NULL,
		.cwd = "/",
		.on_deadline = docker_on_deadline,
		.on_finish = docker_on_finish,
		.hook_arg = &run,
		.provider = "docker",
	};
	struct dk_guardian g;

	dk_guardian_start(&run, &g);
	r = corral_engine_run(&sp, opts, res, err);
	corral_docker_strv_free(argv);
	/* The client did not exit by itself (deadline, killed, engine failure): the container may live on. */
	if (!run.deadline && (r < 0 || (!res->exited && !res->exec_errno)))
		remove_container(&run);
	dk_guardian_stop(&g);
	memset(&st, 0, sizeof(st));
	if (r >= 0 && res->exited && !res->timed_out)
		status_read(&run, &st);
	status_close(&run);
	if (r < 0)
		return r;
	if (res->exec_errno) {
		int e = res->exec_errno;
		corral_result_clear(res);
		return corral_err(err, CORRAL_E_PROVIDER, e, "docker provider: cannot execute %s: %s", d->client,
				  corral_strerror(e));
	}
	r = corral_docker_map_result(res, opts->capture, opts->shell ? "/bin/sh" : opts->argv[0], &st, err);
	if (r == 0)
		r = add_warnings(res, &d->warnings, err);
	if (r < 0)
		corral_result_clear(res);
	return r;
}
