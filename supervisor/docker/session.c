/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Docker provider sessions: one long-lived container per session.
 *
 * start: `docker run -d` once, with the provider's whole plan (the same
 * confinement as `corral run --provider docker`: read-only image, no
 * capabilities, no-new-privileges, the root at /workspace, the network,
 * limits and labels), plus the session's state directory mounted at
 * CORRAL_DOCKER_SESSION_DIR; its main process (pid 1) is the exec helper,
 * idling and reaping. A guardian (guardian.c) removes the container if corral
 * dies.
 *
 * exec (per call): the Engine API's exec create and start on the daemon's
 * Unix socket (no client process), the call's output demultiplexed from
 * the hijacked connection. The exec runs the helper in session mode
 * (exec-helper.c), which connects to a fresh status socket of the call's
 * in the state directory, forks the command into a process group of its
 * own and reports how it ended ("W status", "L leftovers", or the exec
 * failure). The report is believed only from the connection whose peer
 * is the exec's own process (SO_PEERCRED against the exec's Pid): the
 * command, or another call's, can connect to the socket too, never as
 * that process. Cancel and the deadline write "K" on that connection and
 * the helper kills the group.
 *
 * stop: the container is force-removed through the API (every call's
 * processes go with it), the guardian told, the state directory removed.
 *
 * The container's user may own the state directory (corral not root: the
 * container runs as corral's uid; --user root), so "st" (the status
 * sockets) is mounted read-only over it: a call can neither replace a
 * socket nor make "st" a symlink; corral makes, chmods and removes the
 * sockets beneath st's fd, never through the state directory's path. The helper that reports runs from a
 * copy in "st" that its user may execute but not read: the kernel makes
 * such a process non-dumpable from its exec on, so a process of another
 * call (same uid, same PID namespace) can neither ptrace it nor take its
 * status connection (pidfd_getfd) to forge that call's report.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "policy/policy.h"
#include "supervisor/docker/docker-private.h"
#include "supervisor/docker/session.h"
#include "supervisor/exec/result.h"
#include "supervisor/exec/sandbox.h"
#include "supervisor/exec/stream.h"

#define START_TIMEOUT_MS 60000
/* After the helper's report, the output still in flight through the daemon. */
#define DRAIN_MS 2000
/* After a kill, how long the call may take to end before it is given up on. */
#define KILL_WAIT_MS 5000
/* The exec helper's execute-only copy, as the container sees it (in the read-only "st"). */
#define SESSION_HELPER CORRAL_DOCKER_SESSION_DIR "/st/" CORRAL_DOCKER_HELPER_NAME

struct corral_dsession {
	struct corral_sandbox *sb;
	const struct corral_docker *d;
	struct dk_run run;        /* name and state directory, for the guardian */
	struct dk_guardian g;
	int dir_fd;               /* the state directory */
	int st_fd;                /* its "st": the status sockets are made, chmod'ed and removed beneath it */
	const char *helper;       /* the helper as the container runs it: SESSION_HELPER, or the readable one */
	const char *warning;      /* into every result (the readable helper's) */
	bool started;
};

const char *corral_dsession_container(const struct corral_dsession *ds)
{
	return ds ? ds->run.name : NULL;
}

static void random_hex(char *out, size_t nbytes)
{
	uint8_t b[32];

	if (nbytes > sizeof(b))
		nbytes = sizeof(b);
	if (getrandom(b, nbytes, 0) != (ssize_t)nbytes) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		for (size_t i = 0; i < nbytes; i++)
			b[i] = (uint8_t)((uint64_t)ts.tv_nsec >> (i % 4 * 8) ^ (uint64_t)getpid() >> (i % 2 * 8) ^ i);
	}
	for (size_t i = 0; i < nbytes; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* ------------------------------------------------------------ the Engine API */

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Send one request with a JSON |body| (or none); |upgrade|: ask to hijack the connection. */
static int api_send(int fd, const char *method, const char *path, const char *body, bool upgrade)
{
	size_t bl = body ? strlen(body) : 0;
	char head[768];
	int n, r;

	n = snprintf(head, sizeof(head),
		     "%s %s HTTP/1.%c\r\nHost: docker\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n%s\r\n",
		     method, path, upgrade ? '1' : '0', bl,
		     upgrade ? "Connection: Upgrade\r\nUpgrade: tcp\r\n" : "");
	if (n < 0 || (size_t)n >= sizeof(head))
		return -ENAMETOOLONG;
	r = send_all(fd, head, (size_t)n);
	return r < 0 ? r : bl ? send_all(fd, body, bl) : 0;
}

/*
 * Read a response's head into |buf| (NUL-terminated): the HTTP status,
 * with *|body_off| where the body starts and *|got| what was read, or -errno.
 */
static int api_head(int fd, char *buf, size_t cap, size_t *got, size_t *body_off)
{
	char *end;
	int status;

	*got = 0;
	for (;;) {
		ssize_t n = read(fd, buf + *got, cap - 1 - *got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (n == 0)
			return -EPROTO;
		*got += (size_t)n;
		buf[*got] = '\0';
		end = strstr(buf, "\r\n\r\n");
		if (end)
			break;
		if (*got >= cap - 1)
			return -EPROTO;
	}
	*body_off = (size_t)(end + 4 - buf);
	if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
		return -EPROTO;
	return status;
}

/* One HTTP/1.0 request; the response's body parsed as JSON into *|out| when it is JSON. The status or -errno. */
static int api_call(const char *sock, const char *method, const char *path, const char *body, json_t **out)
{
	_cleanup_close_ int fd = dk_api_connect(sock);
	_cleanup_free_ char *buf = NULL;
	size_t cap = 16384, got, off;
	int status, r;

	if (out)
		*out = NULL;
	if (fd < 0)
		return fd;
	r = api_send(fd, method, path, body, false);
	if (r < 0)
		return r;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	status = api_head(fd, buf, cap, &got, &off);
	if (status < 0)
		return status;
	/* HTTP/1.0: the body runs to the end of the connection. */
	while (got < cap - 1) {
		ssize_t n = read(fd, buf + got, cap - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	if (out)
		*out = json_loads(buf + off, JSON_DECODE_ANY, NULL);
	return status;
}

/* The "message" of an Engine API error body, or "" */
static const char *api_message(json_t *j)
{
	const char *m = json_string_value(json_object_get(j, "message"));

	return m ? m : "";
}

/* ------------------------------------------------------------ the state directory */

/*
 * The helper's copy in "st", mode 0111: the container's user executes it,
 * never reads it, so the kernel leaves the process non-dumpable. 0 or -errno.
 */
static int copy_helper(struct corral_dsession *ds)
{
	int st = ds->st_fd;
	_cleanup_close_ int in = open(ds->d->helper, O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int out = -1;
	struct stat s;

	if (st < 0 || in < 0 || fstat(in, &s) < 0)
		return -errno;
	out = openat(st, CORRAL_DOCKER_HELPER_NAME, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0100);
	if (out < 0)
		return -errno;
	for (off_t left = s.st_size; left > 0;) {
		ssize_t n = sendfile(out, in, NULL, (size_t)left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		left -= n;
	}
	return fchmod(out, 0111) < 0 ? -errno : 0;
}

/*
 * The state directory: 0711 (the container's user reaches into it, never
 * lists it), ".corral" of the container's user for the bash state files
 * and long scripts, "st" of corral's for the calls' status sockets and the
 * helper's copy (read-only in the container).
 */
static int state_dir(struct corral_dsession *ds, uid_t uid, gid_t gid, struct corral_error *err)
{
	const char *base = getenv("XDG_RUNTIME_DIR");
	struct dk_run *run = &ds->run;

	if (!base || base[0] != '/' || strlen(base) > 40 || access(base, W_OK | X_OK) < 0)
		base = "/tmp";
	snprintf(run->dir, sizeof(run->dir), "%s/corral-dsession.XXXXXX", base);
	if (!mkdtemp(run->dir)) {
		run->dir[0] = '\0';
		return corral_err(err, CORRAL_E_SETUP, errno, "docker session: state directory in %s: %s", base,
				  corral_strerror(errno));
	}
	ds->dir_fd = open(run->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ds->dir_fd < 0 || fchmod(ds->dir_fd, 0711) < 0 || mkdirat(ds->dir_fd, ".corral", 0700) < 0 ||
	    mkdirat(ds->dir_fd, "st", 0711) < 0 ||
	    (geteuid() == 0 && fchownat(ds->dir_fd, ".corral", uid, gid, AT_SYMLINK_NOFOLLOW) < 0) ||
	    (ds->st_fd = openat(ds->dir_fd, "st", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return corral_err(err, CORRAL_E_SETUP, errno, "docker session: state directory %s: %s", run->dir,
				  corral_strerror(errno));
	{
		struct statvfs vfs;
		int r;

		/* On a noexec filesystem the copy could not run: the readable helper, said in every result. */
		if (statvfs(run->dir, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC)) {
			ds->helper = CORRAL_DOCKER_HELPER;
			ds->warning = "docker session: the state directory is on a noexec filesystem, so calls run the "
				      "readable exec helper, which a process of another call can trace to forge that "
				      "call's result; set XDG_RUNTIME_DIR to a directory on an exec filesystem";
			return 0;
		}
		r = copy_helper(ds);
		if (r < 0)
			return corral_err(err, CORRAL_E_SETUP, -r, "docker session: copy of %s into %s/st: %s",
					  ds->d->helper, run->dir, corral_strerror(-r));
		ds->helper = SESSION_HELPER;
	}
	return 0;
}

/* ------------------------------------------------------------ start and stop */

static int run_container(struct corral_dsession *ds, const char *session_id, struct corral_error *err)
{
	const struct corral_docker *d = ds->d;
	_cleanup_(strv_clear) struct corral_strv a = {};
	char msg[1024], stdir[sizeof(ds->run.dir) + 4];
	int s;

	/* "st" read-only over the writable state directory: see the top of this file */
	snprintf(stdir, sizeof(stdir), "%s/st", ds->run.dir);

	if (strv_add(&a, "run") < 0 || strv_add(&a, "-d") < 0 || strv_add(&a, "--rm") < 0 ||
	    strv_add(&a, "--name") < 0 || strv_add(&a, ds->run.name) < 0 || strv_add(&a, "--label") < 0 ||
	    strv_addf(&a, "io.corral.session=%s", session_id) < 0 || strv_add(&a, "--label") < 0 ||
	    strv_addf(&a, "io.corral.pid=%d", (int)getpid()) < 0 ||
	    dk_add_mount(&a, ds->run.dir, CORRAL_DOCKER_SESSION_DIR, false) < 0 ||
	    dk_add_mount(&a, stdir, CORRAL_DOCKER_SESSION_DIR "/st", true) < 0 ||
	    strv_add(&a, "-w") < 0 ||
	    strv_add(&a, CORRAL_DOCKER_WORKDIR) < 0)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	/*
	 * The provider's plan, from --pull to the image (plan.c), then the
	 * idle helper as pid 1 in place of tini (--init): as the namespace's
	 * init it is immune to a call's `kill -9 -1`, which would end tini's
	 * only child and with it the container.
	 */
	for (size_t i = 0; i < d->opts.n; i++)
		if (strcmp(d->opts.v[i], "--init") != 0 && strv_add(&a, d->opts.v[i]) < 0)
			return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	if (strv_add(&a, ds->helper) < 0 || strv_add(&a, "--corral-idle") < 0)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	s = dk_run_client(d, (const char *const *)a.v, START_TIMEOUT_MS, msg, sizeof(msg));
	if (s == 0)
		return 0;
	if (s < 0)
		return corral_err(err, CORRAL_E_PROVIDER, -s, "docker session: `docker run -d` failed: %s",
				  corral_strerror(-s));
	return corral_err(err, CORRAL_E_PROVIDER, EIO,
			  "docker session: `docker run -d` exited %d: %s", s,
			  strncmp(msg, "docker: ", 8) == 0 ? msg + 8 : msg);
}

/* Force-remove the container: whether the daemon said it is gone (removed, or no such container). */
static bool remove_now(const struct corral_dsession *ds)
{
	char path[128];
	long long end = (long long)corral_now_ms() + REMOVE_WAIT_MS;

	snprintf(path, sizeof(path), "/containers/%s?force=1&v=1", ds->run.name);
	for (;;) {
		int s = api_call(ds->d->sock, "DELETE", path, NULL, NULL);

		/* 409: a removal (--rm) already under way; the container is listed until it ends */
		if (s != 409 || (long long)corral_now_ms() > end)
			return s / 100 == 2 || s == 404;
		nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000 * 1000 }, NULL);
	}
}

int corral_dsession_start(struct corral_sandbox *sb, const char *session_id, struct corral_template *t,
			  struct corral_dsession **out, struct corral_error *err)
{
	struct corral_dsession *ds;
	uid_t uid;
	gid_t gid;
	int r;

	/* Nothing of |t|'s is ours to close yet (the session's struct is zeroed: fd 0 is not the state). */
	t->run.tmp_fd = -1;
	t->run.tmp_path = NULL;
	if (!sb->docker)
		return corral_err(err, CORRAL_E_INTERNAL, EINVAL, "docker session: no docker plan");
	if (!sb->docker->sock)
		return corral_err(err, CORRAL_E_PROVIDER, EOPNOTSUPP,
				  "docker session: calls go through the daemon's Engine API on its Unix socket, and "
				  "DOCKER_HOST or the docker context names another transport; set "
				  "DOCKER_HOST=unix:///var/run/docker.sock (or the daemon's socket), or use --provider local");
	r = corral_docker_identity(sb->policy, sb->root, &uid, &gid, err);
	if (r < 0)
		return r;
	ds = calloc(1, sizeof(*ds));
	if (!ds)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	ds->sb = sb;
	ds->d = sb->docker;
	ds->dir_fd = -1;
	ds->st_fd = -1;
	ds->run.d = sb->docker;
	ds->run.status_fd = -1;
	ds->g.pid = -1;
	ds->g.fd = -1;
	snprintf(ds->run.name, sizeof(ds->run.name), "corral-s-");
	random_hex(ds->run.name + strlen(ds->run.name), 8);
	r = state_dir(ds, uid, gid, err);
	if (r < 0)
		goto fail;
	/* Before the container exists: corral killed during `docker run` leaves nothing either. */
	dk_guardian_start(&ds->run, &ds->g);
	ds->started = true;
	r = run_container(ds, session_id, err);
	if (r < 0)
		goto fail;
	/* The file tools and long scripts create files as the container's user. */
	sb->uid = uid;
	sb->gid = gid;
	sb->switch_identity = geteuid() == 0;
	t->run.tmp_fd = fcntl(ds->dir_fd, F_DUPFD_CLOEXEC, 3);
	t->run.tmp_path = strdup(CORRAL_DOCKER_SESSION_DIR);
	if (t->run.tmp_fd < 0 || !t->run.tmp_path) {
		r = corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
		goto fail;
	}
	*out = ds;
	return 0;
fail:
	corral_dsession_stop(ds, t);
	return r;
}

void corral_dsession_stop(struct corral_dsession *ds, struct corral_template *t)
{
	if (t) {
		t->run.tmp_fd = safe_close(t->run.tmp_fd);
		free(t->run.tmp_path);
		t->run.tmp_path = NULL;
	}
	if (!ds)
		return;
	if (ds->started) {
		/* Not removed (the daemon restarting, an error): the guardian tries again rather than leave it running. */
		if (remove_now(ds))
			dk_guardian_stop(&ds->g);
		else
			dk_guardian_handoff(&ds->g);
	}
	safe_close(ds->st_fd);
	if (ds->dir_fd >= 0) {
		dk_remove_tree(ds->dir_fd, ".corral");
		dk_remove_tree(ds->dir_fd, "st");
		safe_close(ds->dir_fd);
	}
	if (ds->run.dir[0])
		(void)rmdir(ds->run.dir);
	free(ds);
}

/* ------------------------------------------------------------ one call */

struct dcall {
	struct corral_dsession *ds;
	struct corral_tcall *c;
	char exec_id[80];
	pid_t exec_pid;            /* the exec's process as the host sees it (0: not yet known) */
	int lsn, st;               /* the call's listening status socket; the helper's connection */
	int pending[8];            /* connections not yet matched against the exec's pid */
	pid_t pending_pid[8];
	size_t n_pending;
	char sock[33];             /* the status socket's name in "st" */
	char skipped_env[256];     /* variables left out (not UTF-8 text), comma-separated */
	bool wd_skipped;           /* the working directory was not UTF-8 text: the root instead */
	char rep[512];
	size_t rep_len;
	bool rep_eof;
	struct corral_stream cap[2];
	/* the multiplexed stream: an 8-byte header, then its payload */
	unsigned char hdr[8];
	size_t hdr_len, payload_left;
	int payload_stream;
};

/* The exec's host pid, asked of the daemon until it knows it. */
static pid_t exec_pid(struct dcall *x)
{
	char path[128];
	json_t *j = NULL;

	if (x->exec_pid > 0)
		return x->exec_pid;
	snprintf(path, sizeof(path), "/exec/%s/json", x->exec_id);
	if (api_call(x->ds->d->sock, "GET", path, NULL, &j) == 200)
		x->exec_pid = (pid_t)json_integer_value(json_object_get(j, "Pid"));
	json_decref(j);
	return x->exec_pid;
}

/* Keep the pending connection whose peer is the exec's process (its pid known), close the others. */
static void settle(struct dcall *x)
{
	for (size_t i = 0; i < x->n_pending; i++) {
		if (x->st < 0 && x->pending_pid[i] == x->exec_pid)
			x->st = x->pending[i];
		else
			safe_close(x->pending[i]);
	}
	x->n_pending = 0;
}

/*
 * Connections on the status socket, held until the daemon tells the
 * exec's pid (it may learn it a moment after the process runs): the one
 * whose peer is the exec's own process is kept, every other one closed.
 * None is closed unjudged: a process that knows the socket's name (the
 * container's user may own "st" and watch it) can connect first and
 * often, and a full list waits for the pid instead of dropping the next
 * connection, which may be the helper's.
 */
static void take_connections(struct dcall *x)
{
	for (;;) {
		int fd = accept4(x->lsn, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct ucred cr;
		socklen_t l = sizeof(cr);

		if (fd < 0)
			break;
		if (x->st >= 0 || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) < 0 || cr.pid <= 0) {
			safe_close(fd);
			continue;
		}
		for (int i = 0; x->n_pending == ARRAY_SIZE(x->pending) && exec_pid(x) <= 0 && i < 200; i++)
			nanosleep(&(struct timespec){ .tv_nsec = 5 * 1000 * 1000 }, NULL);
		if (x->exec_pid > 0)
			settle(x);
		if (x->exec_pid > 0 && x->st < 0 && cr.pid == x->exec_pid)
			x->st = fd;
		else if (x->exec_pid <= 0 && x->n_pending < ARRAY_SIZE(x->pending))
			x->pending[x->n_pending] = fd, x->pending_pid[x->n_pending++] = cr.pid;
		else
			safe_close(fd);
	}
	if (x->st < 0 && x->n_pending && exec_pid(x) > 0)
		settle(x);
}

/* Bytes from the hijacked connection: the exec's stdout and stderr in frames. */
static void demux(struct dcall *x, const char *buf, size_t n)
{
	while (n) {
		if (x->payload_left == 0) {
			size_t k = 8 - x->hdr_len < n ? 8 - x->hdr_len : n;

			memcpy(x->hdr + x->hdr_len, buf, k);
			x->hdr_len += k;
			buf += k;
			n -= k;
			if (x->hdr_len == 8) {
				x->payload_stream = x->hdr[0] == 2 ? 2 : 1;
				x->payload_left = (size_t)x->hdr[4] << 24 | (size_t)x->hdr[5] << 16 |
						  (size_t)x->hdr[6] << 8 | x->hdr[7];
				x->hdr_len = 0;
			}
			continue;
		}
		size_t k = x->payload_left < n ? x->payload_left : n;

		corral_stream_add(&x->cap[x->payload_stream - 1], buf, k);
		if (x->c->on_output)
			x->c->on_output(x->c->arg, x->payload_stream, buf, k);
		x->payload_left -= k;
		buf += k;
		n -= k;
	}
}

/*
 * The exec create request's body. JSON carries only UTF-8 text: a
 * variable whose value is not (a bash call's export) is left out and
 * named in |skipped|, a working directory that is not runs the command
 * in the root (*|wd_skipped|); either was a usage error for every later
 * call, and the session could not run the `unset` that would mend it.
 */
static char *exec_body(const struct dcall *x, const char *wd, char *skipped, size_t skipped_len, bool *wd_skipped)
{
	json_t *b = json_object(), *cmd = json_array(), *env = json_array(), *w = json_string(wd);
	char *text = NULL, ctr[160];
	bool ok = b && cmd && env;

	snprintf(ctr, sizeof(ctr), "%s/st/%s", CORRAL_DOCKER_SESSION_DIR, x->sock);
	ok = ok && json_array_append_new(cmd, json_string(x->ds->helper)) == 0 &&
	     json_array_append_new(cmd, json_string("--corral-session")) == 0 &&
	     json_array_append_new(cmd, json_string(ctr)) == 0;
	for (char *const *a = x->c->argv; ok && *a; a++)
		ok = json_array_append_new(cmd, json_string(*a)) == 0;
	for (char *const *e = x->c->envp; ok && e && *e; e++) {
		json_t *v = json_string(*e);
		size_t used = strlen(skipped);

		if (!v) {
			/* its name, shown as ASCII */
			snprintf(skipped + used, skipped_len - used, "%s%.*s", used ? ", " : "",
				 (int)strcspn(*e, "="), *e);
			for (char *p = skipped + used; *p; p++)
				if ((unsigned char)*p >= 0x7f || (unsigned char)*p < 0x20)
					*p = '?';
			continue;
		}
		ok = json_array_append_new(env, v) == 0;
	}
	*wd_skipped = !w;
	if (!w)
		w = json_string(CORRAL_DOCKER_WORKDIR);
	if (ok) {
		json_object_set_new(b, "AttachStdin", json_boolean(x->c->stdin_data != NULL));
		json_object_set_new(b, "AttachStdout", json_true());
		json_object_set_new(b, "AttachStderr", json_true());
		json_object_set_new(b, "Tty", json_false());
		json_object_set(b, "WorkingDir", w);
		json_object_set(b, "Env", env);
		json_object_set(b, "Cmd", cmd);
		text = json_dumps(b, JSON_COMPACT);
	}
	json_decref(w);
	json_decref(cmd);
	json_decref(env);
	json_decref(b);
	return text;
}

/*
 * The call's status socket in "st" of the state directory, bound, made
 * connectable for the container's user and later removed beneath the
 * directory's fd (through /proc/self/fd): never through the state
 * directory's path, which the owner of its parent (XDG_RUNTIME_DIR's
 * user, when not corral's) could swap for a directory of its own.
 */
static int call_socket(struct dcall *x, struct corral_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int st = x->ds->st_fd;

	random_hex(x->sock, 16);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", st, x->sock);
	x->lsn = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (x->lsn < 0 || bind(x->lsn, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		x->sock[0] = '\0'; /* nothing of ours to unlink */
		return corral_err(err, CORRAL_E_SETUP, e, "docker session: status socket in %s/st: %s%s",
				  x->ds->run.dir, corral_strerror(e), e == ENOENT ? " (is /proc mounted?)" : "");
	}
	if (fchmodat(st, x->sock, 0777, 0) < 0 || listen(x->lsn, 8) < 0)
		return corral_err(err, CORRAL_E_SETUP, errno, "docker session: status socket %s/st/%s: %s",
				  x->ds->run.dir, x->sock, corral_strerror(errno));
	return 0;
}

/* exec create and start: the hijacked connection (its first stream bytes fed to demux), or -errno with |err|. */
static int exec_start(struct dcall *x, const char *wd, struct corral_error *err)
{
	const struct corral_docker *d = x->ds->d;
	_cleanup_free_ char *body = exec_body(x, wd, x->skipped_env, sizeof(x->skipped_env), &x->wd_skipped);
	char path[160], head[4096];
	json_t *j = NULL;
	size_t got, off;
	int s, fd;

	if (!body)
		return corral_err(err, CORRAL_E_USAGE, EINVAL,
				  "docker session: the command or its environment is not valid UTF-8 text");
	snprintf(path, sizeof(path), "/containers/%s/exec", x->ds->run.name);
	s = api_call(d->sock, "POST", path, body, &j);
	if (s == 201 && json_is_string(json_object_get(j, "Id")))
		snprintf(x->exec_id, sizeof(x->exec_id), "%s", json_string_value(json_object_get(j, "Id")));
	if (!x->exec_id[0]) {
		int e = s < 0 ? -s : s == 404 ? ESRCH : EIO;

		s = corral_err(err, CORRAL_E_PROVIDER, e, "docker session: exec in %s: %s%s%s", x->ds->run.name,
			       s < 0 ? corral_strerror(-s) : api_message(j),
			       s == 404 || s == 409 ? " (the session's container is gone or stopped: start a new session)"
						    : "",
			       s > 0 && !*api_message(j) ? " (the daemon refused the request)" : "");
		json_decref(j);
		return s;
	}
	json_decref(j);
	fd = dk_api_connect(d->sock);
	if (fd < 0)
		return corral_err(err, CORRAL_E_PROVIDER, -fd, "docker session: daemon at unix://%s: %s", d->sock,
				  corral_strerror(-fd));
	snprintf(path, sizeof(path), "/exec/%s/start", x->exec_id);
	s = api_send(fd, "POST", path, "{\"Detach\":false,\"Tty\":false}", true);
	if (s == 0)
		s = api_head(fd, head, sizeof(head), &got, &off);
	if (s != 101 && s != 200) {
		safe_close(fd);
		return corral_err(err, CORRAL_E_PROVIDER, s < 0 ? -s : EIO, "docker session: exec start answered %s%d",
				  s < 0 ? "error -" : "", s < 0 ? -s : s);
	}
	/* The stream is ours to wait on: no read timeout from here on. */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){}, sizeof(struct timeval));
	if (got > off)
		demux(x, head + off, got - off);
	return fd;
}

/* Ask the helper to kill the command's group; without its connection, kill the exec's process from here. */
static void kill_call(struct dcall *x)
{
	if (x->st >= 0) {
		(void)!send(x->st, "K", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		return;
	}
	if (exec_pid(x) > 0)
		(void)kill(x->exec_pid, SIGKILL);
}

/* Parse the helper's report into |res| (and |st| for an exec failure): whether it told how the call ended. */
static bool take_report(struct dcall *x, struct corral_result *res, struct corral_docker_status *st)
{
	bool have_w = false;
	int w = 0;
	unsigned long left = 0;

	corral_docker_status_parse(x->rep, x->rep_len, st);
	st->started = x->st >= 0;
	for (char *l = x->rep; l && l < x->rep + x->rep_len; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (l[0] == 'W' && l[1] == ' ')
			have_w = sscanf(l + 2, "%d", &w) == 1;
		else if (l[0] == 'L' && l[1] == ' ')
			(void)sscanf(l + 2, "%lu", &left);
	}
	if (st->exec_errno)
		return true;
	if (!have_w)
		return false;
	if (WIFEXITED(w)) {
		res->exited = true;
		res->exit_status = WEXITSTATUS(w);
	} else if (WIFSIGNALED(w)) {
		res->signal = WTERMSIG(w);
	}
	x->c->leftovers = left;
	return true;
}

/* The call's loop: output, the helper's connection and report, stdin, the deadline and cancel. */
static void call_loop(struct dcall *x, int conn, struct corral_result *res, bool *killed)
{
	struct corral_tcall *c = x->c;
	double start = (double)corral_now_ms(), deadline = start + c->timeout * 1e3, quiet_since = 0, report_at = 0;
	size_t in_off = 0;
	bool in_open = c->stdin_data != NULL, conn_eof = false;
	char buf[65536];

	if (!in_open)
		(void)shutdown(conn, SHUT_WR);
	else
		(void)fcntl(conn, F_SETFL, fcntl(conn, F_GETFL) | O_NONBLOCK);
	while (!(conn_eof && (x->rep_eof || x->st < 0))) {
		struct pollfd pf[4];
		int np = 0, ic = -1, il = -1, is = -1, ik = -1, tmo;
		double now = (double)corral_now_ms();

		if (!*killed && now >= deadline) {
			res->timed_out = true;
			*killed = true;
			quiet_since = now;
			kill_call(x);
		}
		if (x->rep_eof && !report_at)
			report_at = now;
		/* The report is in; output still on its way is waited for, a stream held open by an escapee is not. */
		if (report_at && now - report_at > DRAIN_MS)
			break;
		if (*killed && now - quiet_since > KILL_WAIT_MS)
			break;
		if (!conn_eof)
			ic = np, pf[np++] = (struct pollfd){ .fd = conn, .events = (short)(POLLIN | (in_open ? POLLOUT : 0)) };
		if (x->st < 0)
			il = np, pf[np++] = (struct pollfd){ .fd = x->lsn, .events = POLLIN };
		else if (!x->rep_eof)
			is = np, pf[np++] = (struct pollfd){ .fd = x->st, .events = POLLIN };
		if (!*killed && c->cancel_fd >= 0)
			ik = np, pf[np++] = (struct pollfd){ .fd = c->cancel_fd, .events = POLLIN };
		tmo = *killed ? 200 : (int)(deadline - now) + 1;
		if (x->n_pending && tmo > 5)
			tmo = 5; /* the daemon may not know the exec's pid yet: ask again soon */
		if (report_at && tmo > DRAIN_MS)
			tmo = DRAIN_MS;
		if (poll(pf, (nfds_t)np, tmo) < 0 && errno != EINTR)
			break;
		if (ic >= 0 && (pf[ic].revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t n = read(conn, buf, sizeof(buf));

			if (n > 0)
				demux(x, buf, (size_t)n);
			else if (n == 0 || (errno != EINTR && errno != EAGAIN))
				conn_eof = true;
		}
		if (ic >= 0 && in_open && (pf[ic].revents & (POLLOUT | POLLERR))) {
			ssize_t n = in_off < c->stdin_len ?
					    send(conn, (const char *)c->stdin_data + in_off, c->stdin_len - in_off,
						 MSG_NOSIGNAL | MSG_DONTWAIT) : 0;

			if (n > 0)
				in_off += (size_t)n;
			if ((n < 0 && errno != EAGAIN && errno != EINTR) || in_off >= c->stdin_len) {
				in_open = false;
				(void)shutdown(conn, SHUT_WR);
			}
		}
		if ((il >= 0 && pf[il].revents) || x->n_pending) {
			take_connections(x);
			if (x->st >= 0 && *killed)
				kill_call(x);
		}
		if (is >= 0 && pf[is].revents) {
			ssize_t n = read(x->st, x->rep + x->rep_len, sizeof(x->rep) - 1 - x->rep_len);

			if (n > 0)
				x->rep_len += (size_t)n;
			else if (n == 0 || (errno != EINTR && errno != EAGAIN))
				x->rep_eof = true;
			if (x->rep_len >= sizeof(x->rep) - 1)
				x->rep_eof = true;
		}
		if (ik >= 0 && pf[ik].revents) {
			c->cancelled = true;
			*killed = true;
			quiet_since = (double)corral_now_ms();
			kill_call(x);
		}
	}
	res->wall_ms = (double)corral_now_ms() - start;
}

/*
 * No report and no kill of ours: the helper never ran (the container is
 * gone), or it ran and was killed (a call's `kill -9 -1` reaches every
 * call's processes): then the exec's own status stands, with a warning.
 */
static int unreported(struct dcall *x, struct corral_result *res, struct corral_error *err)
{
	char path[160];
	json_t *j = NULL;
	long code = -1;

	snprintf(path, sizeof(path), "/exec/%s/json", x->exec_id);
	if (api_call(x->ds->d->sock, "GET", path, NULL, &j) == 200)
		code = (long)json_integer_value(json_object_get(j, "ExitCode"));
	json_decref(j);
	if (x->st < 0 || code < 0)
		return corral_err(err, CORRAL_E_PROVIDER, EIO,
				  "docker session: the container did not run the command (exec exited %ld); "
				  "the session's container %s may be gone", code, x->ds->run.name);
	if (code > 128 && code <= 128 + 64) {
		res->signal = (int)(code - 128);
	} else {
		res->exited = true;
		res->exit_status = (int)code;
	}
	return corral_docker_add_warning(res, "the call's exec helper was killed before it reported (a process of "
					 "another call, kill -1?): the status is the helper's, and what the command "
					 "left running was not counted", err);
}

int corral_dsession_exec(struct corral_dsession *ds, struct corral_tcall *c, struct corral_result *res,
			 struct corral_error *err)
{
	struct dcall x = { .ds = ds, .c = c, .lsn = -1, .st = -1 };
	struct corral_docker_status st = {};
	_cleanup_close_ int conn = -1;
	char wd[PATH_MAX + 32];
	bool killed = false, reported;
	int r;

	memset(res, 0, sizeof(*res));
	res->sz = sizeof(*res);
	res->provider = "docker";
	corral_stream_init(&x.cap[0], -1, c->max_output);
	corral_stream_init(&x.cap[1], -1, c->max_output);
	/* The working directory, proven beneath the root here (the container sees the same tree). */
	snprintf(wd, sizeof(wd), "%s", CORRAL_DOCKER_WORKDIR);
	if (c->cwd && *c->cwd && strcmp(c->cwd, ".") != 0) {
		struct corral_error e = {};
		int fd = corral_resolve_open(ds->sb->root_fd, NULL, c->cwd, CORRAL_RESOLVE_DIRECTORY, &e);

		if (fd >= 0)
			snprintf(wd, sizeof(wd), "%s/%s", CORRAL_DOCKER_WORKDIR, c->cwd);
		else
			c->cwd_failed = true;
		safe_close(fd);
	}
	r = call_socket(&x, err);
	if (r == 0) {
		r = exec_start(&x, wd, err);
		conn = r;
	}
	if (r >= 0) {
		r = 0;
		call_loop(&x, conn, res, &killed);
		for (int i = 0; x.st < 0 && i < 100 && (i == 0 || x.n_pending); i++) {
			if (i)
				nanosleep(&(struct timespec){ .tv_nsec = 5 * 1000 * 1000 }, NULL);
			take_connections(&x);
		}
		/* The helper's report, when the loop ended before it was read (its connection matched late). */
		while (x.st >= 0 && !x.rep_eof && x.rep_len < sizeof(x.rep) - 1) {
			struct pollfd pf = { .fd = x.st, .events = POLLIN };
			ssize_t n;

			if (poll(&pf, 1, 1000) <= 0)
				break;
			n = read(x.st, x.rep + x.rep_len, sizeof(x.rep) - 1 - x.rep_len);
			if (n <= 0)
				break;
			x.rep_len += (size_t)n;
		}
		reported = take_report(&x, res, &st);
		if (!reported && !killed)
			r = unreported(&x, res, err);
	}
	if (r == 0) {
		/* A deadline or cancel that came after the command had ended on its own changed nothing. */
		if (killed && reported && !st.exec_errno && !(res->signal == SIGKILL && !res->exited)) {
			res->timed_out = false;
			c->cancelled = false;
		}
		if (res->timed_out || c->cancelled) {
			res->exited = false;
			res->exit_status = 0;
			res->signal = SIGKILL;
			c->leftovers = 0;
		}
		if (st.exec_errno && !res->timed_out && !c->cancelled) {
			char line[600];
			int n;

			res->exited = true;
			res->exec_errno = st.exec_errno;
			if (st.has_interp)
				res->exec_interp = strdup(st.interp);
			res->exit_status = st.exec_errno == ENOENT && !res->exec_interp ? 127 : 126;
			n = corral_exec_error_line(res, c->argv[0], line, sizeof(line));
			if (n > 0)
				corral_stream_add(&x.cap[1], line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
		}
		corral_stream_finish(&x.cap[0], &res->stdout_buf, &res->stdout_len, &res->stdout_truncated,
				     &res->stdout_bytes);
		corral_stream_finish(&x.cap[1], &res->stderr_buf, &res->stderr_len, &res->stderr_truncated,
				     &res->stderr_bytes);
		res->leftovers_killed = (unsigned)c->leftovers;
		res->ended_by = corral_template_ended_by(res, c->cancelled);
		for (size_t i = 0; r == 0 && i < ds->d->warnings.n; i++)
			r = corral_docker_add_warning(res, ds->d->warnings.v[i], err);
		if (r == 0 && ds->warning)
			r = corral_docker_add_warning(res, ds->warning, err);
		if (r == 0 && x.skipped_env[0]) {
			char w[400];

			snprintf(w, sizeof(w), "the environment's %s %s not valid UTF-8 text, which the daemon's API "
				 "cannot carry: the command ran without %s (unset it, or export UTF-8 text)",
				 x.skipped_env, strchr(x.skipped_env, ',') ? "are" : "is",
				 strchr(x.skipped_env, ',') ? "them" : "it");
			r = corral_docker_add_warning(res, w, err);
		}
		if (r == 0 && x.wd_skipped)
			r = corral_docker_add_warning(res, "the working directory's name is not valid UTF-8 text, which the "
						     "daemon's API cannot carry: the command ran in the root (cd to "
						     "another directory)", err);
		if (r < 0)
			corral_result_clear(res);
	}
	corral_stream_free(&x.cap[0]);
	corral_stream_free(&x.cap[1]);
	safe_close(x.st);
	safe_close(x.lsn);
	for (size_t i = 0; i < x.n_pending; i++)
		safe_close(x.pending[i]);
	if (x.sock[0])
		(void)unlinkat(ds->st_fd, x.sock, 0);
	return r;
}
