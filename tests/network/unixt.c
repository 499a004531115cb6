/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * unixt — Unix-socket probes for tests/integration/net-unix.sh, run inside
 * and outside the sandbox.
 *
 *   unixt listen PATH SECONDS     listen at PATH, accept for SECONDS (or until PATH.stop
 *                                 exists), print the number of connections accepted
 *   unixt connect PATH            print "ok" or the errno name of connect()
 *   unixt race INSIDE OUTSIDE N   one thread flips a shared sockaddr_un between INSIDE and
 *                                 OUTSIDE in a tight loop while this one connects N times
 *                                 with it; prints "ok=A denied=D other=O" (INSIDE must be
 *                                 listening)
 *   unixt magic K                 sendmsg on a socketpair with flags 0, then with bit 40 set
 *                                 (the listener hand-over's bit), then try to get fd K (the
 *                                 hand-over fd): prints "plain=ok magic=ERR dupK=ERR"
 *   unixt linger N                N times: a child fills a TCP connection to a listener of
 *                                 its own that never reads, sets SO_LINGER, and sendmsg's it
 *                                 with 240 copies of itself as SCM_RIGHTS plus a control
 *                                 message the mediation refuses, and is SIGKILLed 0-2 ms
 *                                 later; the mediation may then hold the last references.
 *                                 Prints "done"; the test is that the deadline still holds
 *   unixt inherit-connect PORT    connect fd 0 (an inherited socket) to 127.0.0.1:PORT
 *   unixt udp-cmsg                sendmsg on UDP to itself with an IP_TTL control message
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <signal.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ELOOP: return "ELOOP";
	case EXDEV: return "EXDEV";
	default: return strerror(e);
	}
}

static int set_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -1;
	strcpy(sa->sun_path, path);
	return 0;
}

static int do_listen(const char *path, double seconds)
{
	struct sockaddr_un sa;
	char stop[sizeof(sa.sun_path) + 8];
	struct timeval tv = { 0, 50000 };
	struct timespec t0, t;
	long n = 0;
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s < 0 || set_addr(&sa, path) < 0 || bind(s, (void *)&sa, sizeof(sa)) < 0 || listen(s, 128) < 0) {
		perror("listen");
		return 1;
	}
	chmod(path, 0777);
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	snprintf(stop, sizeof(stop), "%s.stop", path);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int c = accept(s, NULL, NULL);

		if (c >= 0) {
			n++;
			close(c);
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 > seconds || access(stop, F_OK) == 0)
			break;
	}
	printf("%ld\n", n);
	return 0;
}

static struct sockaddr_un shared;
static struct sockaddr_un in_addr, out_addr;
static atomic_bool stop_flip;

static void *flipper(void *arg)
{
	(void)arg;
	/* Half the time outside, half inside; volatile spins keep the two states apart. */
	while (!atomic_load_explicit(&stop_flip, memory_order_relaxed)) {
		/* The barriers keep the compiler from dropping the first copy as a dead store. */
		memcpy(shared.sun_path, out_addr.sun_path, sizeof(shared.sun_path));
		__asm__ volatile("" ::: "memory");
		for (volatile int i = 0; i < 2000; i++)
			;
		memcpy(shared.sun_path, in_addr.sun_path, sizeof(shared.sun_path));
		__asm__ volatile("" ::: "memory");
		for (volatile int i = 0; i < 2000; i++)
			;
	}
	return NULL;
}

static void *drain(void *arg)
{
	int s = *(int *)arg;

	for (;;) {
		int c = accept(s, NULL, NULL);
		if (c >= 0)
			close(c);
	}
	return NULL;
}

static int do_race(const char *inside, const char *outside, long iters)
{
	long ok = 0, denied = 0, other = 0;
	pthread_t th, dr;
	int ls;

	if (set_addr(&in_addr, inside) < 0 || set_addr(&out_addr, outside) < 0)
		return 1;
	ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unlink(inside);
	if (ls < 0 || bind(ls, (void *)&in_addr, sizeof(in_addr)) < 0 || listen(ls, 4096) < 0) {
		perror("inside listener");
		return 1;
	}
	pthread_create(&dr, NULL, drain, &ls);
	shared = in_addr;
	pthread_create(&th, NULL, flipper, NULL);
	for (long i = 0; i < iters; i++) {
		int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (s < 0) {
			other++;
			continue;
		}
		if (connect(s, (void *)&shared, sizeof(shared)) == 0)
			ok++;
		else if (errno == EACCES)
			denied++;
		else
			other++;
		close(s);
	}
	atomic_store(&stop_flip, true);
	pthread_join(th, NULL);
	printf("ok=%ld denied=%ld other=%ld\n", ok, denied, other);
	return 0;
}

static int do_linger(long attempts)
{
	struct sockaddr_in la = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t ll = sizeof(la);
	int one = 1, small = 2048, L = socket(AF_INET, SOCK_STREAM, 0);

	setsockopt(L, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(L, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	if (bind(L, (void *)&la, sizeof(la)) < 0 || listen(L, 1000) < 0 || getsockname(L, (void *)&la, &ll) < 0) {
		printf("listen:%s\n", ename(errno));
		return 0;
	}
	srand((unsigned)getpid());
	for (long n = 0; n < attempts; n++) {
		int pp[2];
		char ch;
		pid_t c;

		if (pipe(pp) < 0)
			return 1;
		c = fork();
		if (c == 0) {
			static char buf[65536];
			int s = socket(AF_INET, SOCK_STREAM, 0), sb = 4608, fds[240];
			struct linger lg = { 1, 100000 };
			union {
				char b[CMSG_SPACE(sizeof(fds)) + CMSG_SPACE(sizeof(int))];
				struct cmsghdr align;
			} cb;
			struct iovec io = { "x", 1 };
			struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = cb.b,
					    .msg_controllen = sizeof(cb.b) };
			struct cmsghdr *cm;

			setsockopt(s, SOL_SOCKET, SO_SNDBUF, &sb, sizeof(sb));
			if (connect(s, (void *)&la, sizeof(la)) < 0)
				_exit(1);
			fcntl(s, F_SETFL, O_NONBLOCK);
			memset(buf, 'A', sizeof(buf));
			while (write(s, buf, sizeof(buf)) > 0)
				;
			fcntl(s, F_SETFL, 0);
			setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
			for (int i = 0; i < 240; i++)
				fds[i] = dup(s);
			memset(cb.b, 0, sizeof(cb.b));
			cm = CMSG_FIRSTHDR(&m);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(fds));
			memcpy(CMSG_DATA(cm), fds, sizeof(fds));
			cm = CMSG_NXTHDR(&m, cm);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = 99; /* refused after every fd was taken */
			cm->cmsg_len = CMSG_LEN(sizeof(int));
			if (write(pp[1], "r", 1) != 1)
				_exit(1);
			sendmsg(s, &m, 0);
			pause();
			_exit(0);
		}
		close(pp[1]);
		{
			int a = accept(L, NULL, NULL); /* kept open, never read */

			if (read(pp[0], &ch, 1) == 1) {
				struct timespec t0, t;
				long d = rand() % 2000;

				clock_gettime(CLOCK_MONOTONIC, &t0);
				do
					clock_gettime(CLOCK_MONOTONIC, &t);
				while ((t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_nsec - t0.tv_nsec) / 1000 < d);
			}
			kill(c, SIGKILL);
			waitpid(c, NULL, 0);
			close(pp[0]);
			/* |a| stays open, unread: a closed peer would end the linger at once. */
			if (a < 0)
				break;
		}
	}
	printf("done\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "listen") == 0)
		return do_listen(argv[2], atof(argv[3]));
	if (argc == 3 && strcmp(argv[1], "connect") == 0) {
		struct sockaddr_un sa;
		int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (s < 0) {
			printf("socket:%s\n", ename(errno));
			return 0;
		}
		if (set_addr(&sa, argv[2]) < 0)
			return 1;
		if (connect(s, (void *)&sa, sizeof(sa)) == 0)
			printf("ok\n");
		else
			printf("%s\n", ename(errno));
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "magic") == 0) {
		int sv[2];
		char b = 'x';
		struct iovec iov = { &b, 1 };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
		long r1, r2;

		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
			return 1;
		r1 = syscall(SYS_sendmsg, sv[0], &m, 0L);
		printf("plain=%s ", r1 == 1 ? "ok" : ename(errno));
		r2 = syscall(SYS_sendmsg, sv[0], &m, (long)(1ULL << 40));
		printf("magic=%s ", r2 == 1 ? "ok" : ename(errno));
		printf("dupK=%s\n", dup2(sv[0], atoi(argv[2])) >= 0 ? "ok" :
		       errno == EBADF ? "EBADF" : ename(errno));
		return 0;
	}
	if (argc == 5 && strcmp(argv[1], "race") == 0)
		return do_race(argv[2], argv[3], atol(argv[4]));
	if (argc == 3 && strcmp(argv[1], "linger") == 0)
		return do_linger(atol(argv[2]));
	if (argc == 3 && strcmp(argv[1], "inherit-connect") == 0) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2])),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

		printf("%s\n", connect(0, (void *)&a, sizeof(a)) == 0 ? "ok" : ename(errno));
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "udp-cmsg") == 0) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t al = sizeof(a);
		int u = socket(AF_INET, SOCK_DGRAM, 0), ttl = 5;
		union {
			char b[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} cb = {};
		struct iovec io = { "hi", 2 };
		struct msghdr m = { .msg_name = &a, .msg_namelen = sizeof(a), .msg_iov = &io, .msg_iovlen = 1,
				    .msg_control = cb.b, .msg_controllen = sizeof(cb.b) };
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);

		if (u < 0 || bind(u, (void *)&a, sizeof(a)) < 0 || getsockname(u, (void *)&a, &al) < 0) {
			printf("socket:%s\n", ename(errno));
			return 0;
		}
		c->cmsg_level = IPPROTO_IP;
		c->cmsg_type = IP_TTL;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &ttl, sizeof(ttl));
		printf("%s\n", sendmsg(u, &m, 0) == 2 ? "ok" : ename(errno));
		return 0;
	}
	fprintf(stderr, "usage: unixt listen PATH SECONDS | connect PATH | race INSIDE OUTSIDE N\n");
	return 2;
}
