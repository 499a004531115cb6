/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The docker daemon: one HTTP/1.0 request at a time to its Engine API on
 * the Unix socket (under a millisecond, where starting the client costs
 * ~10 ms), or the client for the same questions when the daemon is reached
 * another way (tcp://, ssh://, a context); where the socket is; whether it
 * answers and has the image; what the kernel lets it enforce.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "internal/fileio.h"

#include "policy/policy.h"
#include "supervisor/docker/docker-private.h"

int dk_api_connect(const char *sock)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = API_TIMEOUT_MS / 1000 };
	int fd;

	if (strlen(sock) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = -errno;

		safe_close(fd);
		return e;
	}
	return fd;
}

/*
 * One HTTP/1.0 request to the Engine API on its Unix socket (the server
 * closes after the response). Returns the HTTP status, or a negative errno
 * when the daemon cannot be reached. |body| receives the start of the
 * response body, NUL-terminated.
 */
int dk_api_request(const char *sock, const char *method, const char *path, char *body, size_t body_len)
{
	_cleanup_close_ int fd = dk_api_connect(sock);
	char req[1024], resp[4096];
	size_t got = 0;
	int n, status;
	char *hdr_end;

	if (fd < 0)
		return fd;
	n = snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\nHost: docker\r\nContent-Length: 0\r\n\r\n", method, path);
	if (n < 0 || (size_t)n >= sizeof(req))
		return -ENAMETOOLONG;
	for (int off = 0; off < n;) {
		ssize_t w = send(fd, req + off, (size_t)(n - off), MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		off += (int)w;
	}
	while (got < sizeof(resp) - 1) {
		ssize_t rd = read(fd, resp + got, sizeof(resp) - 1 - got);
		if (rd < 0 && errno == EINTR)
			continue;
		if (rd < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (rd == 0)
			break;
		got += (size_t)rd;
	}
	resp[got] = '\0';
	if (sscanf(resp, "HTTP/1.%*d %d", &status) != 1)
		return -EPROTO;
	if (body && body_len) {
		hdr_end = strstr(resp, "\r\n\r\n");
		snprintf(body, body_len, "%s", hdr_end ? hdr_end + 4 : "");
		body[strcspn(body, "\r\n")] = '\0';
	}
	return status;
}

/*
 * Run the docker client with |args| (after argv[0]), stdio on /dev/null
 * except stderr's first bytes into |errbuf|, killed after |timeout_ms|.
 * Returns its exit status, or a negative errno.
 */
int dk_run_client(const struct corral_docker *d, const char *const *args, int timeout_ms, char *errbuf,
		      size_t errlen)
{
	_cleanup_free_ char **argv = NULL;
	int pfd[2], nul, st, n = 0;
	size_t got = 0, count = 0;
	pid_t pid;
	long long end = (long long)corral_now_ms() + timeout_ms;

	/* As many arguments as given: a session's `docker run -d` carries the whole plan. */
	while (args[count])
		count++;
	argv = calloc(count + 2, sizeof(*argv));
	if (!argv)
		return -ENOMEM;
	argv[n++] = d->client;
	for (; *args; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul < 0) {
		int e = -errno;
		safe_close(pfd[0]);
		safe_close(pfd[1]);
		return e;
	}
	pid = fork();
	if (pid < 0) {
		int e = -errno;
		safe_close(pfd[0]);
		safe_close(pfd[1]);
		safe_close(nul);
		return e;
	}
	if (pid == 0) {
		/* async-signal-safe only: the caller may be threaded */
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(pfd[1], 2) < 0)
			_exit(127);
		execve(d->client, argv, d->cenv.v);
		_exit(127);
	}
	safe_close(pfd[1]);
	safe_close(nul);
	for (;;) {
		long long left = end - (long long)corral_now_ms();
		struct pollfd pf = { .fd = pfd[0], .events = POLLIN };
		char tmp[512];
		ssize_t rd;

		if (left <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		if (poll(&pf, 1, (int)left) <= 0)
			continue;
		rd = read(pfd[0], tmp, sizeof(tmp));
		if (rd < 0 && errno == EINTR)
			continue;
		if (rd <= 0)
			break;
		if (errbuf && got < errlen - 1) {
			size_t c = (size_t)rd < errlen - 1 - got ? (size_t)rd : errlen - 1 - got;
			memcpy(errbuf + got, tmp, c);
			got += c;
			errbuf[got] = '\0';
		}
	}
	safe_close(pfd[0]);
	/* stderr closed: the client is exiting; a grandchild holding it is not waited for */
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -errno;
		if ((long long)corral_now_ms() > end) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			return -ETIMEDOUT;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 2 * 1000 * 1000 }, NULL);
	}
	if (errbuf && got)
		errbuf[strcspn(errbuf, "\n")] = '\0';
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int dk_find_client(char *const *environ_, char **out)
{
	const char *path = dk_env_get(environ_, "PATH");
	_cleanup_free_ char *copy = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	char *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char *c;
		if (dir[0] != '/')
			continue;
		if (asprintf(&c, "%s/docker", dir) < 0)
			return -ENOMEM;
		if (access(c, X_OK) == 0) {
			*out = c;
			return 0;
		}
		free(c);
	}
	return -ENOENT;
}

/* The client's current context from its config file (DOCKER_CONFIG, else ~/.docker), or NULL. */
static char *config_context(char *const *environ_)
{
	const char *dir = dk_env_get(environ_, "DOCKER_CONFIG"), *home = dk_env_get(environ_, "HOME");
	_cleanup_free_ char *path = NULL;
	json_t *root, *ctx;
	char *out = NULL;

	if (dir && *dir ? asprintf(&path, "%s/config.json", dir) < 0
	    : !home || !*home || asprintf(&path, "%s/.docker/config.json", home) < 0) {
		path = NULL;
		return NULL;
	}
	root = json_load_file(path, 0, NULL);
	ctx = json_object_get(root, "currentContext");
	if (json_is_string(ctx))
		out = strdup(json_string_value(ctx));
	json_decref(root);
	return out;
}

/*
 * The daemon's Unix socket when corral can talk to it directly: DOCKER_HOST
 * unix://PATH, or the default when no context (DOCKER_CONTEXT, or the
 * config file's currentContext) points elsewhere. NULL: ask through the
 * client.
 */
const char *corral_docker_daemon_socket(char *const *environ_)
{
	const char *h = dk_env_get(environ_, "DOCKER_HOST"), *c = dk_env_get(environ_, "DOCKER_CONTEXT");
	_cleanup_free_ char *cfg = NULL;

	if (h && *h)
		return strncmp(h, "unix://", 7) == 0 && h[7] == '/' ? h + 7 : NULL;
	if (c && *c)
		return strcmp(c, "default") == 0 ? DEFAULT_SOCK : NULL;
	cfg = config_context(environ_);
	if (cfg && *cfg && strcmp(cfg, "default") != 0)
		return NULL;
	return DEFAULT_SOCK;
}

static int image_missing(const char *image, struct corral_error *err)
{
	return corral_err(err, CORRAL_E_NOT_FOUND, ENOENT,
			  "image '%s' is not present locally (corral never pulls unless \"docker\": {\"pull\": true})",
			  image);
}

int dk_check_daemon(const struct corral_docker *d, const char *image, bool pull, struct corral_error *err)
{
	char body[256], path[640];
	int s;

	if (!d->sock) {
		const char *args[] = { "image", "inspect", "--format", "{{.Id}}", image, NULL };
		s = dk_run_client(d, args, CLIENT_TIMEOUT_MS, body, sizeof(body));
		if (s == 0)
			return 0;
		if (s < 0)
			return corral_err(err, CORRAL_E_PROVIDER, -s, "docker provider: `docker image inspect` failed: %s",
					  corral_strerror(-s));
		if (strstr(body, "No such image"))
			return pull ? 0 : image_missing(image, err);
		return corral_err(err, CORRAL_E_PROVIDER, EIO, "docker provider: daemon not reachable: %s", body);
	}

	s = dk_api_request(d->sock, "GET", "/_ping", body, sizeof(body));
	if (s < 0)
		return corral_err(err, CORRAL_E_PROVIDER, -s,
				  "docker provider: daemon not reachable at unix://%s (%s)%s", d->sock, corral_strerror(-s),
				  s == -ENOENT || s == -ECONNREFUSED ? "; is dockerd running?"
				  : s == -EACCES ? "; the socket's group (usually docker) may use it"
						 : "");
	if (s != 200)
		return corral_err(err, CORRAL_E_PROVIDER, EIO, "docker provider: daemon at unix://%s answered %d: %s",
				  d->sock, s, body);
	snprintf(path, sizeof(path), "/images/%s/json", image);
	s = dk_api_request(d->sock, "GET", path, body, sizeof(body));
	if (s == 200)
		return 0;
	if (s == 404)
		return pull ? 0 : image_missing(image, err);
	if (s < 0)
		return corral_err(err, CORRAL_E_PROVIDER, -s, "docker provider: image lookup failed: %s", corral_strerror(-s));
	return corral_err(err, CORRAL_E_PROVIDER, EIO, "docker provider: image lookup answered %d: %s", s, body);
}

/*
 * Docker discards a limit the kernel cannot enforce with only a warning on
 * the client's stderr ("PIDs limit discarded"). With the daemon on a local
 * socket it shares this kernel, so look for the cgroup controllers first:
 * under compat strict a missing one is a refusal naming the key, under
 * best-effort a warning in every result (corral_docker_kernel_gaps).
 */
static bool cgroup_has(const char *v1_file, const char *v2_controller)
{
	char buf[512];
	ssize_t n = corral_read_file_at(AT_FDCWD, "/sys/fs/cgroup/cgroup.controllers", 0, buf, sizeof(buf));

	if (n < 0)
		return access(v1_file, F_OK) == 0;
	if (n == 0)
		return false;
	for (char *save = NULL, *w = strtok_r(buf, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
		if (strcmp(w, v2_controller) == 0)
			return true;
	return false;
}

int dk_check_kernel(const struct corral_policy *p, struct corral_strv *warnings, struct corral_error *err)
{
	bool have[3] = {
		cgroup_has("/sys/fs/cgroup/memory/memory.limit_in_bytes", "memory"),
		cgroup_has("/sys/fs/cgroup/pids", "pids"),
		cgroup_has("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "cpu"),
	};

	return corral_docker_kernel_gaps(p, have, warnings, err);
}
