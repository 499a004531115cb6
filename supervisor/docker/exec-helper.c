/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * corral-docker-exec: the docker provider's exec step, run inside the
 * container by tini (--init) as `corral-docker-exec COMMAND [ARG...]`.
 * Linked statically: it runs in any image, with or without a C library.
 *
 * It tells corral, on a channel the command can never write, whether the
 * command was executed: before exec it connects to the run's status
 * socket (a host socket corral listens on, bind-mounted at
 * CORRAL_DOCKER_STATUS), close-on-exec. Corral accepts the first queued
 * connection after the run, and it is this one, made before the command
 * existed. A successful exec closes it with nothing written; a failed one
 * writes "E errno" (and "I interpreter" when the file exists but its #!
 * interpreter does not) and exits 127 or 126. No connection at all means
 * the command never ran. The command's own output and exit status decide
 * nothing about exec failures: it may print anything and exit 127.
 *
 * Without the channel it does not run the command (exit 125).
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define CORRAL_DOCKER_STATUS "/.corral-status"

static void say(const char *what, int e)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg), "corral-docker-exec: %s: %s\n", what, strerror(e));

	if (n > 0)
		(void)!write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
}

/* The #! interpreter of |path| when it has one, else "" ("/usr/bin/env python3" -> "/usr/bin/env"). */
static void interpreter(const char *path, char *out, size_t len)
{
	char buf[256];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	out[0] = '\0';
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 3 || buf[0] != '#' || buf[1] != '!')
		return;
	buf[n] = '\0';
	char *s = buf + 2;
	s += strspn(s, " \t");
	s[strcspn(s, " \t\n")] = '\0';
	snprintf(out, len, "%s", s);
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = CORRAL_DOCKER_STATUS };
	char rep[400], interp[256] = "";
	bool exists;
	int fd, e, n;

	if (argc < 2) {
		say("usage", EINVAL);
		return 125;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		say("socket", errno);
		return 125;
	}
	while (connect(fd, (const struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (errno == EINTR)
			continue;
		say("connect " CORRAL_DOCKER_STATUS, errno);
		return 125;
	}
	execvp(argv[1], argv + 1);
	e = errno;
	/* ENOENT for a file that is there: its interpreter (or dynamic loader) is missing. */
	exists = e == ENOENT && strchr(argv[1], '/') && access(argv[1], F_OK) == 0;
	if (exists)
		interpreter(argv[1], interp, sizeof(interp));
	n = snprintf(rep, sizeof(rep), "E %d\n%s%s%s", e, exists ? "I " : "", interp, exists ? "\n" : "");
	if (n > 0)
		(void)!write(fd, rep, (size_t)n < sizeof(rep) ? (size_t)n : sizeof(rep) - 1);
	return e == ENOENT && !exists ? 127 : 126;
}
