/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * peak-rss COMMAND [ARG...]: run COMMAND (stdout to /dev/null) and print
 * its peak RSS in KB from wait4. Small on purpose: an exec'd child's peak
 * starts at its parent's, so measuring from Python would report Python.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	int status;
	pid_t pid;

	if (argc < 2)
		return 2;
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return 2;
	printf("%ld %d\n", ru.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return 0;
}
