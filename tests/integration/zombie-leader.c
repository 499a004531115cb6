/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * zombie-leader FILE — a process whose main thread calls pthread_exit
 * while another thread runs on, touching FILE every 100 ms: /proc shows
 * the process as a zombie ('Z') though it is alive. Linked with the C
 * library only, so it runs inside a sandbox (tests/integration/threads.c
 * copies it into the root).
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void *beat(void *arg)
{
	const char *file = arg;

	for (;;) {
		FILE *f = fopen(file, "w");

		if (f) {
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
		}
		usleep(100 * 1000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc != 2 || pthread_create(&t, NULL, beat, argv[1]) != 0)
		return 2;
	pthread_exit(NULL);
}
