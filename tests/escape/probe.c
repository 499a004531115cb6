/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The C technique of the escape suite: one attack per invocation,
 * `probe ACTION ARG...`. Prints "ok ..." and exits 0 when the action
 * worked, "denied ERRNO" and exits 1 when the kernel refused it. Compiled
 * at test time with cc into the sandbox root; it uses nothing of corral.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>
#include <stddef.h>

static int done(long r, const char *what)
{
	if (r < 0) {
		printf("denied %s: %s\n", what, strerrorname_np(errno) ?: "?");
		return 1;
	}
	printf("ok %s\n", what);
	return 0;
}

static long connect_to(int type, const char *host, const char *port)
{
	struct sockaddr_storage ss = {};
	socklen_t len;
	int fd, fam = strchr(host, ':') ? AF_INET6 : AF_INET;

	if (fam == AF_INET6) {
		struct sockaddr_in6 *a = (void *)&ss;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(atoi(port));
		inet_pton(AF_INET6, host, &a->sin6_addr);
		len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (void *)&ss;
		a->sin_family = AF_INET;
		a->sin_port = htons(atoi(port));
		inet_pton(AF_INET, host, &a->sin_addr);
		len = sizeof(*a);
	}
	fd = socket(fam, type, 0);
	if (fd < 0)
		return -1;
	if (type == SOCK_DGRAM)
		return sendto(fd, "probe", 5, 0, (struct sockaddr *)&ss, len);
	return connect(fd, (struct sockaddr *)&ss, len);
}

static long unix_connect(const char *name, int abstract)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	memcpy(a.sun_path + abstract, name, n);
	return connect(fd, (struct sockaddr *)&a, offsetof(struct sockaddr_un, sun_path) + abstract + n + 1);
}

#if defined(__x86_64__)
static long sys_x32(long nr)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(0x40000000L | nr) : "rcx", "r11", "memory");
	return ret;
}
static long int80(long nr, long a, long b, long c)
{
	long ret;
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
	return ret;
}
#endif

int main(int argc, char **argv)
{
	const char *a = argc > 1 ? argv[1] : "", *x = argc > 2 ? argv[2] : "", *y = argc > 3 ? argv[3] : "";
	long r;

	if (!strcmp(a, "write")) {
		int fd = open(x, O_CREAT | O_WRONLY | O_APPEND, 0600);
		return done(fd < 0 ? -1 : write(fd, "x", 1), a);
	}
	if (!strcmp(a, "read")) {
		char buf[64];
		int fd = open(x, O_RDONLY);
		return done(fd < 0 ? -1 : read(fd, buf, sizeof(buf)), a);
	}
	if (!strcmp(a, "rename"))
		return done(rename(x, y), a);
	if (!strcmp(a, "link"))
		return done(link(x, y), a);
	if (!strcmp(a, "truncate"))
		return done(truncate(x, 0), a);
	if (!strcmp(a, "symlink-write")) {
		int fd;
		if (symlink(x, y) < 0)
			return done(-1, "symlink");
		fd = open(y, O_WRONLY | O_APPEND);
		return done(fd < 0 ? -1 : write(fd, "x", 1), a);
	}
	if (!strcmp(a, "tcp"))
		return done(connect_to(SOCK_STREAM, x, y), a);
	if (!strcmp(a, "udp"))
		return done(connect_to(SOCK_DGRAM, x, y), a);
	if (!strcmp(a, "unix"))
		return done(unix_connect(x, 0), a);
	if (!strcmp(a, "abstract"))
		return done(unix_connect(x, 1), a);
	if (!strcmp(a, "socketpair")) {
		int sv[2];
		return done(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), a);
	}
	if (!strcmp(a, "netlink"))
		return done(socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE), a);
	if (!strcmp(a, "packet"))
		return done(socket(AF_PACKET, SOCK_DGRAM, htons(0x0003)), a);
	if (!strcmp(a, "vsock"))
		return done(socket(40, SOCK_STREAM, 0), a);
	if (!strcmp(a, "kill"))
		return done(kill(atoi(x), atoi(y)), a);
	if (!strcmp(a, "ptrace")) {
		r = ptrace(PTRACE_ATTACH, atoi(x), NULL, NULL);
		if (r == 0)
			ptrace(PTRACE_DETACH, atoi(x), NULL, NULL);
		return done(r, a);
	}
	if (!strcmp(a, "ptrace-child")) {
		pid_t c = fork();
		if (c == 0) {
			pause();
			_exit(0);
		}
		r = ptrace(PTRACE_ATTACH, c, NULL, NULL);
		kill(c, SIGKILL);
		return done(r, a);
	}
	if (!strcmp(a, "tiocsti")) {
		int fd = open(x, O_RDWR);
		char c = 'x';
		if (fd < 0)
			return done(-1, "open");
		if (!strcmp(y, "control"))
			return done(ioctl(fd, TCGETS, &(char[64]){ 0 }), "TCGETS");
		return done(ioctl(fd, TIOCSTI, &c), a);
	}
	if (!strcmp(a, "io_uring")) {
		char params[120] = { 0 };
		return done(syscall(425, 4, params), a);
	}
#if defined(__x86_64__)
	if (!strcmp(a, "x32")) {
		r = sys_x32(39);
		if (r < 0 && r > -4096) {
			errno = -r;
			r = -1;
		}
		return done(r, a);
	}
	if (!strcmp(a, "i386")) {
		r = int80(20, 0, 0, 0);
		if (r < 0 && r > -4096) {
			errno = -r;
			r = -1;
		}
		return done(r, a);
	}
#endif
	if (!strcmp(a, "fds")) {
		/* "ok" means something leaked in. */
		DIR *d = opendir("/proc/self/fd");
		struct dirent *de;
		int leaked = 0;
		while (d && (de = readdir(d)))
			if (de->d_name[0] >= '0' && de->d_name[0] <= '9' && atoi(de->d_name) > 2 &&
			    atoi(de->d_name) != dirfd(d)) {
				printf("fd %s\n", de->d_name);
				leaked++;
			}
		errno = EBADF;
		return done(leaked ? 0 : -1, a);
	}
	if (!strcmp(a, "mmap") || !strcmp(a, "mmap-touch")) {
		size_t len = strtoull(x, NULL, 10);
		void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		/* mmap-touch: use every page, as a memory cgroup counts (it bounds use, not address space). */
		if (m != MAP_FAILED && !strcmp(a, "mmap-touch"))
			memset(m, 1, len);
		return done(m == MAP_FAILED ? -1 : 0, a);
	}
	if (!strcmp(a, "fsize")) {
		int fd = open("fsize.out", O_CREAT | O_WRONLY | O_TRUNC, 0600);
		signal(SIGXFSZ, SIG_IGN);
		r = pwrite(fd, "x", 1, strtoll(x, NULL, 10));
		unlink("fsize.out");
		return done(r, a);
	}
	if (!strcmp(a, "nofile")) {
		long n = atol(x), i;
		for (i = 0; i < n; i++)
			if (open("/dev/null", O_RDONLY) < 0)
				break;
		printf("opened %ld\n", i);
		return done(i >= n ? 0 : -1, a);
	}
	if (!strcmp(a, "nproc")) {
		long n = atol(x), i;
		for (i = 0; i < n; i++) {
			pid_t p = fork();
			if (p < 0)
				break;
			if (p == 0) {
				pause();
				_exit(0);
			}
		}
		printf("forked %ld\n", i);
		return done(i >= n ? 0 : -1, a);
	}
	fprintf(stderr, "probe: unknown action %s\n", a);
	return 2;
}
