/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The guardian: a small child that outlives corral. If corral dies before
 * saying the run is over (SIGKILL, a crash: the client then dies of
 * PDEATHSIG but its container would run on), it force-removes the
 * container. Everything it needs is prepared before fork; after fork it
 * makes only async-signal-safe calls, since the host may be threaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/docker/docker-private.h"

/*
 * Remove |name| under |dir_fd| and what it holds, |depth| levels of
 * directories down (the run's status directory; a session's state
 * directory, with the container's bash state files), with
 * async-signal-safe calls only; symlinks are removed, never followed.
 */
static void remove_tree(int dir_fd, const char *name, int depth)
{
	struct dirent64_raw {
		uint64_t ino;
		int64_t off;
		unsigned short reclen;
		unsigned char type;
		char name[];
	};
	char buf[4096] __attribute__((aligned(8)));
	long n;
	int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0) {
		while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
			for (long off = 0; off < n;) {
				struct dirent64_raw *d = (struct dirent64_raw *)(buf + off);

				off += d->reclen;
				if (d->name[0] == '.' && (!d->name[1] || (d->name[1] == '.' && !d->name[2])))
					continue;
				if (unlinkat(fd, d->name, 0) < 0 && errno == EISDIR && depth > 0)
					remove_tree(fd, d->name, depth - 1);
			}
		}
		close(fd);
	}
	(void)unlinkat(dir_fd, name, AT_REMOVEDIR);
}

static void guardian_body(int rfd, const struct dk_run *run, const char *req, size_t req_len,
			  const struct sockaddr_un *sa, char *const *rm_argv)
{
	const struct corral_docker *d = run->d;
	struct sigaction ign = { .sa_handler = SIG_IGN };
	char c;
	ssize_t n;

	/* Survive what kills corral's process group or terminal; never the run's group. */
	(void)setsid();
	(void)sigaction(SIGINT, &ign, NULL);
	(void)sigaction(SIGTERM, &ign, NULL);
	(void)sigaction(SIGHUP, &ign, NULL);
	(void)sigaction(SIGPIPE, &ign, NULL);
	if (dup2(rfd, 3) < 0)
		_exit(1);
	if (syscall(SYS_close_range, 4U, ~0U, 0U) < 0)
		for (int fd = 4; fd < 1024; fd++)
			close(fd);
	rfd = 3;
	for (int fd = 0; fd < 3; fd++)
		close(fd);
	do
		n = read(rfd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		_exit(0);

	if (run->dir[0])
		remove_tree(AT_FDCWD, run->dir, 3);
	if (!d->sock) {
		execve(d->client, rm_argv, d->cenv.v);
		_exit(1);
	}
	/* 404 may be a create still in flight in the daemon: retry for a while. */
	for (int i = 0; i < 30; i++) {
		char resp[16];
		size_t got = 0;
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd >= 0 && connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0 &&
		    write(fd, req, req_len) == (ssize_t)req_len) {
			while (got < sizeof(resp)) {
				n = read(fd, resp + got, sizeof(resp) - got);
				if (n <= 0)
					break;
				got += (size_t)n;
			}
		}
		if (fd >= 0)
			close(fd);
		/* "HTTP/1.x 204" removed; 409 a removal already under way (--rm) */
		if (got >= 12 && resp[9] == '2')
			_exit(0);
		struct timespec ts = { .tv_nsec = 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	_exit(1);
}

void dk_guardian_start(const struct dk_run *run, struct dk_guardian *g)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char req[256], *rm_argv[] = { run->d->client, (char *)"rm", (char *)"-f", (char *)"-v", (char *)run->name, NULL };
	int p[2], n;

	g->pid = -1;
	g->fd = -1;
	/* v=1: an image's VOLUME lines leave anonymous volumes, which --rm would have removed */
	n = snprintf(req, sizeof(req), "DELETE /containers/%s?force=1&v=1 HTTP/1.0\r\nHost: docker\r\n"
		     "Content-Length: 0\r\n\r\n", run->name);
	if (run->d->sock) {
		if (strlen(run->d->sock) >= sizeof(sa.sun_path))
			return;
		memcpy(sa.sun_path, run->d->sock, strlen(run->d->sock) + 1);
	}
	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	g->pid = fork();
	if (g->pid == 0)
		guardian_body(p[0], run, req, (size_t)n, &sa, rm_argv);
	safe_close(p[0]);
	if (g->pid < 0) {
		safe_close(p[1]);
		return;
	}
	g->fd = p[1];
}

void dk_guardian_stop(struct dk_guardian *g)
{
	if (g->fd >= 0) {
		(void)!write(g->fd, "x", 1);
		g->fd = safe_close(g->fd);
	}
	if (g->pid > 0)
		while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
			;
}
