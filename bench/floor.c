/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The floor: the least a launcher can cost. A statically linked program
 * (no dynamic loader, no libc start-up relocations) that posix_spawns its
 * arguments (default /bin/true) and waits. Whatever corral adds on top of
 * this is corral's own cost.
 *
 *   floor [PROGRAM [ARG...]]    exit status: the program's (128+N on signal N)
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	static char *const def[] = { (char *)"/bin/true", NULL };
	char *const *args = argc > 1 ? argv + 1 : def;
	pid_t pid;
	int status, r;

	r = posix_spawn(&pid, args[0], NULL, NULL, args, environ);
	if (r != 0) {
		fprintf(stderr, "floor: posix_spawn %s: %s\n", args[0], strerror(r));
		return 127;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 125;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
