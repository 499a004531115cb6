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
 *
 * In a session's long-lived container (supervisor/docker/session.c) it is
 * also the container's main process (`--corral-idle`: pid 1, reaping
 * orphans) and the parent of each call (`--corral-session SOCKET COMMAND...`,
 * run by `docker exec`): it connects to the call's SOCKET, forks the
 * command into a process group of its own, and reports on the socket
 * "W wait-status" and "L leftovers" (processes of the group still alive
 * when the command ended, then killed), or the exec failure as above.
 * Anything corral writes on the socket ("K"), or its closing, kills the
 * group: that is how a cancel or a deadline reaches the command.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
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

/* Connect to the status socket at |path|: the fd (close-on-exec), or -1 (said why). */
static int status_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		say("status socket path", ENAMETOOLONG);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		say("socket", errno);
		return -1;
	}
	while (connect(fd, (const struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (errno == EINTR)
			continue;
		say("connect status socket", errno);
		close(fd);
		return -1;
	}
	return fd;
}

/* What the failed exec of |cmd| (errno |e|) reports: "E errno" [ "I interp" ]; the exit code. */
static int report_exec_failure(int fd, const char *cmd, int e)
{
	char rep[400], interp[256] = "";
	/* ENOENT for a file that is there: its interpreter (or dynamic loader) is missing. */
	bool exists = e == ENOENT && strchr(cmd, '/') && access(cmd, F_OK) == 0;
	int n;

	if (exists)
		interpreter(cmd, interp, sizeof(interp));
	n = snprintf(rep, sizeof(rep), "E %d\n%s%s%s", e, exists ? "I " : "", interp, exists ? "\n" : "");
	if (n > 0)
		(void)!write(fd, rep, (size_t)n < sizeof(rep) ? (size_t)n : sizeof(rep) - 1);
	return e == ENOENT && !exists ? 127 : 126;
}

/* Processes of group |pgid| other than this one (/proc/N/stat's fifth field). */
static unsigned long group_count(pid_t pgid)
{
	unsigned long n = 0;
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char path[300], buf[512], *rp;
		long pg;
		ssize_t len;
		int fd;

		if (de->d_name[0] < '1' || de->d_name[0] > '9' || atoi(de->d_name) == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		rp = strrchr(buf, ')');
		/* ") S ppid pgrp" */
		if (rp && sscanf(rp + 1, " %*c %*d %ld", &pg) == 1 && pg == pgid)
			n++;
	}
	closedir(d);
	return n;
}

/*
 * One session call: the command in a process group of its own, watched
 * for its end (SIGCHLD) and for corral's kill (the status socket readable).
 */
static int session_call(const char *sock, char **cmd)
{
	sigset_t chld, old;
	struct sigaction ign = { .sa_handler = SIG_IGN };
	int fd, ep[2], sfd, e = 0, st = 0;
	bool killed = false;
	unsigned long left = 0;
	char rep[64];
	pid_t pid;
	ssize_t n;

	fd = status_connect(sock);
	if (fd < 0)
		return 125;
	(void)sigaction(SIGPIPE, &ign, NULL);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &chld, &old) < 0 || (sfd = signalfd(-1, &chld, SFD_CLOEXEC)) < 0 ||
	    pipe2(ep, O_CLOEXEC) < 0) {
		say("setup", errno);
		return 125;
	}
	pid = fork();
	if (pid < 0) {
		e = errno;
		n = snprintf(rep, sizeof(rep), "F %d\n", e);
		(void)!write(fd, rep, (size_t)n);
		say("fork", e);
		return 125;
	}
	if (pid == 0) {
		struct sigaction dfl = { .sa_handler = SIG_DFL };

		(void)setpgid(0, 0);
		(void)sigaction(SIGPIPE, &dfl, NULL);
		(void)sigprocmask(SIG_SETMASK, &old, NULL);
		execvp(cmd[0], cmd);
		e = errno;
		(void)!write(ep[1], &e, sizeof(e));
		_exit(127);
	}
	(void)setpgid(pid, pid);
	close(ep[1]);
	do
		n = read(ep[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(ep[0]);
	if (n == (ssize_t)sizeof(e)) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return report_exec_failure(fd, cmd[0], e);
	}
	for (;;) {
		struct pollfd pf[2] = { { .fd = sfd, .events = POLLIN }, { .fd = fd, .events = POLLIN } };
		pid_t w;

		if (poll(pf, killed ? 1 : 2, -1) < 0 && errno != EINTR)
			break;
		if (pf[0].revents) {
			struct signalfd_siginfo si;

			(void)!read(sfd, &si, sizeof(si));
		}
		w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (!killed && pf[1].revents) {
			/* corral's kill: "K", or its end of the socket closed */
			killed = true;
			(void)kill(-pid, SIGKILL);
		}
	}
	/* The command's own processes still running (a server started with &) end with it. */
	if (!killed)
		left = group_count(pid);
	(void)kill(-pid, SIGKILL);
	n = snprintf(rep, sizeof(rep), "W %d\nL %lu\n", st, left);
	(void)!write(fd, rep, (size_t)n);
	close(fd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
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
	/*
	 * A session's helpers share their uid and PID namespace with every
	 * call's processes: non-dumpable, none of them can ptrace this one
	 * or take its status connection. (A session runs an execute-only copy,
	 * non-dumpable from its exec on; this covers the readable one.)
	 */
	if (strcmp(argv[1], "--corral-idle") == 0 || strcmp(argv[1], "--corral-session") == 0)
		(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (strcmp(argv[1], "--corral-idle") == 0) {
		/*
		 * The session container's pid 1 (no tini): a namespace's init
		 * gets no signal it has no handler for from inside, so a call's
		 * `kill -9 -1` cannot end the session. It reaps the orphans.
		 */
		sigset_t chld;
		int sig;

		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		(void)sigprocmask(SIG_BLOCK, &chld, NULL);
		for (;;) {
			(void)sigwait(&chld, &sig);
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
		}
	}
	if (strcmp(argv[1], "--corral-session") == 0) {
		if (argc < 4) {
			say("usage: --corral-session SOCKET COMMAND...", EINVAL);
			return 125;
		}
		return session_call(argv[2], argv + 3);
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
