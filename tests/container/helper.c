/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the in-container test needs beside busybox (tests/container/):
 *   helper listen PATH      a Unix stream listener at PATH (mode 0777) that
 *                           answers "pong" to every connection; forks into
 *                           the background once it listens, printing its pid.
 *   helper runas UID CMD... CMD as UID:UID with no supplementary groups
 *                           (busybox's setpriv cannot switch ids).
 * Compiled static at test time; it uses nothing of corral.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int listen_at(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	pid_t pid;
	int nul;

	if (fd < 0 || strlen(path) >= sizeof(a.sun_path)) {
		perror("listen: socket");
		return 1;
	}
	memcpy(a.sun_path, path, strlen(path) + 1);
	unlink(path);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || chmod(path, 0777) < 0 || listen(fd, 16) < 0) {
		perror("listen: bind");
		return 1;
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid > 0) {
		printf("%d\n", (int)pid);
		fflush(stdout);
		return 0;
	}
	/* Let go of the caller's pipes: $(helper listen ...) returns once the parent exits. */
	nul = open("/dev/null", O_RDWR);
	if (nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(nul, 2) < 0)
		_exit(1);
	signal(SIGPIPE, SIG_IGN);
	setsid();
	for (;;) {
		int c = accept(fd, NULL, NULL);

		if (c < 0)
			continue;
		if (write(c, "pong\n", 5) < 0)
			perror("listen: write");
		close(c);
	}
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "listen") == 0)
		return listen_at(argv[2]);
	if (argc >= 4 && strcmp(argv[1], "runas") == 0) {
		uid_t id = (uid_t)strtoul(argv[2], NULL, 10);

		if (setgroups(0, NULL) < 0 || setresgid(id, id, id) < 0 || setresuid(id, id, id) < 0) {
			perror("runas");
			return 126;
		}
		execvp(argv[3], argv + 3);
		perror("runas: exec");
		return 127;
	}
	fprintf(stderr, "usage: helper listen PATH | helper runas UID CMD...\n");
	return 2;
}
