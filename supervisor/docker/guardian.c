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
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/docker/docker-private.h"

/* |fd|'s next batch of entries into |buf|: bytes read (0 at the end). */
static long entries(int fd, char *buf, size_t len)
{
	return syscall(SYS_getdents64, fd, buf, len);
}

struct dirent64_raw {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

static bool dot_or_dotdot(const char *n)
{
	return n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]));
}

/* Open directory |name| under |dir_fd|, making it readable first when its mode forbids (the owner may). */
static int open_dir(int dir_fd, const char *name)
{
	int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == EACCES && fchmodat(dir_fd, name, 0700, 0) == 0)
		fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd;
}

/* Move every entry of directory |name| under |top| up into |top| itself, under fresh names. */
static bool hoist(int top, const char *name, unsigned long *seq)
{
	char buf[4096] __attribute__((aligned(8)));
	bool moved = false;
	long n;
	int fd = open_dir(top, name);

	if (fd < 0)
		return false;
	while ((n = entries(fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64_raw *d = (struct dirent64_raw *)(buf + off);
			char fresh[32] = ".corral-rm-";
			size_t l = strlen(fresh);

			off += d->reclen;
			if (dot_or_dotdot(d->name))
				continue;
			/* a decimal name, async-signal-safe */
			for (unsigned long v = ++*seq, k = 1; ; k *= 10)
				if (v / k < 10) {
					for (; k; k /= 10)
						fresh[l++] = (char)('0' + v / k % 10);
					break;
				}
			fresh[l] = '\0';
			moved |= renameat(fd, d->name, top, fresh) == 0;
		}
	}
	close(fd);
	return moved;
}

/*
 * Remove |name| under |dir_fd| and everything it holds (the run's status
 * directory; a session's state directory, whose ".corral" the container's
 * user fills as it likes), with async-signal-safe calls only and two file
 * descriptors at any depth: a directory that is not empty has its entries
 * moved up into |name| and is removed on the next pass. Symlinks are
 * removed, never followed; a directory whose mode shuts its owner out is
 * opened after a chmod (corral may be that owner).
 */
void dk_remove_tree(int dir_fd, const char *name)
{
	char buf[4096] __attribute__((aligned(8)));
	unsigned long seq = 0, pass = 0;
	int top = open_dir(dir_fd, name);

	/* bounded: a container still running (its removal failed) could feed the directory forever */
	for (bool progress = top >= 0; progress && pass < (1UL << 22); pass++) {
		long n;

		progress = false;
		(void)lseek(top, 0, SEEK_SET);
		while ((n = entries(top, buf, sizeof(buf))) > 0) {
			for (long off = 0; off < n;) {
				struct dirent64_raw *d = (struct dirent64_raw *)(buf + off);

				off += d->reclen;
				if (dot_or_dotdot(d->name))
					continue;
				if (unlinkat(top, d->name, 0) == 0 || unlinkat(top, d->name, AT_REMOVEDIR) == 0 ||
				    hoist(top, d->name, &seq))
					progress = true;
			}
		}
	}
	if (top >= 0)
		close(top);
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

	if (!d->sock) {
		if (run->dir[0])
			dk_remove_tree(AT_FDCWD, run->dir);
		execve(d->client, rm_argv, d->cenv.v);
		_exit(1);
	}
	/* Once before (a directory removed is one the container can add nothing to), once after. */
	if (run->dir[0])
		dk_remove_tree(AT_FDCWD, run->dir);
	/* 404 may be a create still in flight in the daemon: retry for a while; after a 409, it is gone. */
	for (int i = 0, busy = 0; i < 30; i++) {
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
		/* "HTTP/1.x 204" removed; 409 a removal already under way (--rm), then 404 */
		if (got >= 12 && (resp[9] == '2' || (busy && memcmp(resp + 9, "404", 3) == 0)))
			break;
		busy |= got >= 12 && memcmp(resp + 9, "409", 3) == 0;
		struct timespec ts = { .tv_nsec = 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	/* After the container: nothing of it adds to the directory while it goes. */
	if (run->dir[0])
		dk_remove_tree(AT_FDCWD, run->dir);
	_exit(0);
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

void dk_guardian_handoff(struct dk_guardian *g)
{
	/* EOF without "done": the guardian removes the container (retrying) and the directory, then exits. */
	g->fd = safe_close(g->fd);
	if (g->pid > 0)
		while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
			;
}
