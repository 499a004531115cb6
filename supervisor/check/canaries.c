/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The canaries: run inside the sandbox as `EXE __canary NAME ARG...`
 * (supervisor/check/canary.h). Each tries its positive control first (the same
 * action aimed at an allowed target must work, or the result is
 * "inconclusive": a sandbox that blocks everything proves nothing), then
 * the attacks, and prints one line "RESULT OBSERVED".
 *
 * This is an ordinary process after execve, not the fork-restricted child
 * of the engine: plain libc is fine here. Attacks that may be killed by the
 * seccomp filter (foreign ABIs) run in a sub-child, where SIGSYS counts as
 * held.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/io_uring.h>
#include <linux/netlink.h>
#include <net/ethernet.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/msg.h>
#include <sys/shm.h>
#include <mqueue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "internal/procstat.h"
#include "internal/util.h"
#include "supervisor/check/canary.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* What the attacks did, as text: "create: EACCES, unlink: EACCES". */
struct obs {
	char text[1536];
	size_t len;
	int succeeded; /* attacks that worked */
	char first[256];
};

_printf_(2, 3) static void obs_add(struct obs *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->len >= sizeof(o->text) - 1)
		return;
	if (o->len) {
		n = snprintf(o->text + o->len, sizeof(o->text) - o->len, "; ");
		o->len += (size_t)n < sizeof(o->text) - o->len ? (size_t)n : sizeof(o->text) - o->len - 1;
	}
	va_start(ap, fmt);
	n = vsnprintf(o->text + o->len, sizeof(o->text) - o->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n < sizeof(o->text) - o->len ? (size_t)n : sizeof(o->text) - o->len - 1;
}

static const char *ename(int e)
{
	const char *s = corral_errno_name(e);

	return s ? s : "E?";
}

/*
 * Record one attack: |r| < 0 means refused (errno |e|). A success is
 * recorded first in |first| so a broken report names it.
 */
static void attack(struct obs *o, const char *what, long r, int e)
{
	if (r < 0) {
		obs_add(o, "%s: %s", what, ename(e));
		return;
	}
	obs_add(o, "%s: SUCCEEDED", what);
	if (!o->succeeded++)
		snprintf(o->first, sizeof(o->first), "%s succeeded", what);
}

/* Evaluate the attack, then read errno: argument order is unspecified. */
#define ATTACK(o, what, expr)                  \
	do {                                   \
		long _r = (long)(expr);        \
		int _e = errno;                \
		attack((o), (what), _r, _e);   \
	} while (0)

_printf_(2, 3) static int say(const char *result, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (char *p = buf; *p; p++)
		if (*p == '\n')
			*p = ' ';
	dprintf(STDOUT_FILENO, "%s %s\n", result, buf);
	return 0;
}

static int verdict(const struct obs *o)
{
	if (o->succeeded)
		return say(CANARY_BROKEN, "%s (%s)", o->first, o->text);
	return say(CANARY_HELD, "%s", o->text);
}

static int control_failed(const char *what, int e)
{
	return say(CANARY_INCONCLUSIVE, "control failed: %s: %s", what, ename(e));
}

static char *join(const char *dir, const char *name)
{
	static char bufs[4][PATH_MAX];
	static int next;
	char *b = bufs[next++ % 4];

	snprintf(b, PATH_MAX, "%s/%s", dir, name);
	return b;
}

/* Create |path| in the root with |data|; 0 or -errno. */
static int put_file(const char *path, const char *data)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, data, strlen(data));
	safe_close(fd);
	return n == (ssize_t)strlen(data) ? 0 : -EIO;
}

static long try_open(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0600);

	if (fd >= 0)
		close(fd);
	return fd;
}

/* ------------------------------------------------------------ filesystem */

static int c_write_outside(int argc, char **argv)
{
	const char *out = argv[0];
	struct obs o = {};
	int r;

	r = put_file("ctl-write", "x");
	if (r < 0)
		return control_failed("create a file in the root", -r);
	unlink("ctl-write");

	ATTACK(&o, "create outside", try_open(join(out, "planted-write"), O_CREAT | O_EXCL | O_WRONLY));
	ATTACK(&o, "open outside file for writing", try_open(join(out, "victim"), O_WRONLY | O_APPEND));
	ATTACK(&o, "mkdir outside", mkdir(join(out, "planted-dir"), 0700));
	ATTACK(&o, "mkfifo outside", mkfifo(join(out, "planted-fifo"), 0600));
	ATTACK(&o, "symlink outside", symlink("x", join(out, "planted-symlink")));
	ATTACK(&o, "unlink outside", unlink(join(out, "victim")));
	return verdict(&o);
}

static int c_traversal(int argc, char **argv)
{
	const char *rel = argv[0]; /* "../outside" */
	char path[PATH_MAX];
	struct obs o = {};

	if (mkdir("sub", 0700) < 0 && errno != EEXIST)
		return control_failed("mkdir in the root", errno);
	if (try_open("sub/../ctl-trav", O_CREAT | O_WRONLY) < 0)
		return control_failed("create sub/../ctl-trav", errno);
	unlink("ctl-trav");

	snprintf(path, sizeof(path), "%s/planted-trav", rel);
	ATTACK(&o, "create ../", try_open(path, O_CREAT | O_WRONLY));
	snprintf(path, sizeof(path), "sub/../../%s/planted-trav2", rel + 3);
	ATTACK(&o, "create sub/../../", try_open(path, O_CREAT | O_WRONLY));
	snprintf(path, sizeof(path), "/proc/self/cwd/%s/planted-proc", rel);
	ATTACK(&o, "create via /proc/self/cwd/../", try_open(path, O_CREAT | O_WRONLY));
	snprintf(path, sizeof(path), "%s/secret", rel);
	ATTACK(&o, "read ../", try_open(path, O_RDONLY));
	return verdict(&o);
}

static int c_symlink(int argc, char **argv)
{
	const char *out = argv[0];
	struct obs o = {};

	if (mkdir("sub", 0700) < 0 && errno != EEXIST)
		return control_failed("mkdir in the root", errno);
	unlink("lnk-in");
	if (symlink("sub", "lnk-in") < 0)
		return control_failed("symlink in the root", errno);
	if (try_open("lnk-in/ctl-sym", O_CREAT | O_WRONLY) < 0)
		return control_failed("create through a symlink inside the root", errno);
	unlink("sub/ctl-sym");
	unlink("lnk-in");

	unlink("lnk-out");
	unlink("lnk-secret");
	/* Making the links is allowed (they live in the root); following them must not be. */
	if (symlink(out, "lnk-out") < 0 || symlink(join(out, "secret"), "lnk-secret") < 0)
		return control_failed("symlink in the root", errno);
	ATTACK(&o, "create through a symlink to outside", try_open("lnk-out/planted-sym", O_CREAT | O_WRONLY));
	ATTACK(&o, "read through a symlink to outside", try_open("lnk-out/secret", O_RDONLY));
	ATTACK(&o, "read a symlink to an outside file", try_open("lnk-secret", O_RDONLY));
	ATTACK(&o, "write a symlink to an outside file", try_open("lnk-secret", O_WRONLY));
	unlink("lnk-out");
	unlink("lnk-secret");
	return verdict(&o);
}

/* Plant DIR/planted-root -> TARGET in the root: a later run's root, if corral followed it (check judges). */
static int c_plant_link(int argc, char **argv)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/planted-root", argv[1]);
	unlink(path);
	if (symlink(argv[0], path) < 0)
		return control_failed("symlink in the root", errno);
	return say(CANARY_HELD, "planted %s -> %s", path, argv[0]);
}

static int c_refer(int argc, char **argv)
{
	const char *out = argv[0];
	struct obs o = {};
	int r;

	if (mkdir("sub", 0700) < 0 && errno != EEXIST)
		return control_failed("mkdir in the root", errno);
	r = put_file("ref-a", "a");
	if (r < 0)
		return control_failed("create a file in the root", -r);
	if (rename("ref-a", "sub/ref-a") < 0)
		return control_failed("rename within the root", errno);
	unlink("ref-b");
	if (link("sub/ref-a", "ref-b") < 0)
		return control_failed("link within the root", errno);

	ATTACK(&o, "rename out", rename("ref-b", join(out, "planted-rename")));
	ATTACK(&o, "link out", link("sub/ref-a", join(out, "planted-link")));
	ATTACK(&o, "rename an outside file in", rename(join(out, "victim"), "stolen"));
	ATTACK(&o, "link an outside file in", link(join(out, "secret"), "stolen-link"));
	ATTACK(&o, "exchange with an outside file",
	       syscall(SYS_renameat2, AT_FDCWD, join(out, "victim"), AT_FDCWD, "sub/ref-a", RENAME_EXCHANGE));
	unlink("sub/ref-a");
	unlink("ref-b");
	return verdict(&o);
}

static int c_truncate(int argc, char **argv)
{
	const char *out = argv[0];
	struct obs o = {};
	int r;

	r = put_file("ctl-trunc", "abc");
	if (r < 0)
		return control_failed("create a file in the root", -r);
	if (truncate("ctl-trunc", 0) < 0)
		return control_failed("truncate a file in the root", errno);
	unlink("ctl-trunc");
	{
		/* The target must be there and not empty, or a refusal proves nothing (stat is not a Landlock right). */
		struct stat st;

		if (lstat(join(out, "victim"), &st) < 0)
			return control_failed("find the outside file to aim at", errno);
		if (!S_ISREG(st.st_mode) || st.st_size == 0)
			return control_failed("find the outside file to aim at, not empty", EINVAL);
	}

	ATTACK(&o, "truncate outside", truncate(join(out, "victim"), 0));
	ATTACK(&o, "open outside with O_TRUNC", try_open(join(out, "victim"), O_WRONLY | O_TRUNC));
	ATTACK(&o, "open outside with O_TRUNC|O_RDONLY", try_open(join(out, "victim"), O_RDONLY | O_TRUNC));
	return verdict(&o);
}

static int c_read_outside(int argc, char **argv)
{
	const char *out = argv[0];
	char buf[64];
	struct obs o = {};
	int fd, r;

	r = put_file("ctl-read", "x");
	if (r < 0)
		return control_failed("create a file in the root", -r);
	fd = open("ctl-read", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, buf, sizeof(buf)) != 1)
		return control_failed("read a file in the root", errno);
	close(fd);
	unlink("ctl-read");
	/* A read-only path: the canary's own executable. */
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, buf, 4) != 4)
		return control_failed("read a file in a read-only path", errno);
	close(fd);

	fd = open(join(out, "secret"), O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		close(fd);
		attack(&o, "read outside", 0, 0);
		obs_add(&o, "read %zd bytes of %s", n, join(out, "secret"));
	} else {
		ATTACK(&o, "read outside", -1);
	}
	fd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		DIR *d = fdopendir(fd);
		int names = 0;

		while (d && readdir(d))
			names++;
		if (d)
			closedir(d);
		else
			close(fd);
		attack(&o, "list outside directory", 0, 0);
		obs_add(&o, "listed %d names", names);
	} else {
		ATTACK(&o, "list outside directory", -1);
	}
	return verdict(&o);
}

/* --------------------------------------------------------------- network */

static int socketpair_control(void)
{
	int sv[2];
	char c = 0;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	if (write(sv[0], "k", 1) != 1 || read(sv[1], &c, 1) != 1 || c != 'k') {
		close(sv[0]);
		close(sv[1]);
		return -EIO;
	}
	close(sv[0]);
	close(sv[1]);
	return 0;
}

static int inet_addr_of(const char *fam, const char *port, struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (strcmp(fam, "6") == 0) {
		struct sockaddr_in6 *a = (void *)ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)atoi(port));
		a->sin6_addr = in6addr_loopback;
		*len = sizeof(*a);
		return AF_INET6;
	}
	struct sockaddr_in *a = (void *)ss;

	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)atoi(port));
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*len = sizeof(*a);
	return AF_INET;
}

/* tcp FAMILY(4|6) PORT: connect to check's listener on the host's loopback. */
static int c_tcp(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fam = inet_addr_of(argv[0], argv[1], &ss, &len), fd, r;

	r = socketpair_control();
	if (r < 0)
		return control_failed("socketpair(AF_UNIX)", -r);
	fd = socket(fam, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return say(CANARY_HELD, "socket(%s, SOCK_STREAM): %s", fam == AF_INET6 ? "AF_INET6" : "AF_INET",
			   ename(errno));
	r = connect(fd, (struct sockaddr *)&ss, len);
	if (r == 0) {
		close(fd);
		return say(CANARY_BROKEN, "connected to the host's %s port %s",
			   fam == AF_INET6 ? "[::1]" : "127.0.0.1", argv[1]);
	}
	r = errno;
	close(fd);
	return say(CANARY_HELD, "socket created; connect to the host's listener: %s", ename(r));
}

/* CONNECT 127.0.0.1:|port| through the proxy |ip|:|pport|: the status code it answers, or -errno. */
static int proxy_connect(const char *ip, int pport, const char *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)pport) };
	char req[96], buf[256];
	int fd, n, code = 0;
	size_t got = 0;

	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1)
		return -EINVAL;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	n = snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n\r\n", port, port);
	if (write(fd, req, (size_t)n) != n) {
		int e = errno;
		close(fd);
		return -e;
	}
	while (got < sizeof(buf) - 1 && !memchr(buf, '\n', got)) {
		ssize_t k = read(fd, buf + got, sizeof(buf) - 1 - got);

		if (k <= 0)
			break;
		got += (size_t)k;
	}
	buf[got] = '\0';
	close(fd);
	if (sscanf(buf, "HTTP/1.%*d %d", &code) != 1)
		return -EPROTO;
	return code;
}

/*
 * egress LISTED UNLISTED (network "allow"): through the proxy HTTP_PROXY
 * names, CONNECT to check's listener on 127.0.0.1:LISTED (listed: the
 * control, 200) and to 127.0.0.1:UNLISTED (not listed: must be refused).
 */
static int c_egress(int argc, char **argv)
{
	const char *proxy = getenv("HTTP_PROXY");
	char ip[32];
	int pport, r;

	if (!proxy || sscanf(proxy, "http://%31[0-9.]:%d", ip, &pport) != 2)
		return control_failed("HTTP_PROXY naming corral's egress proxy", ENOENT);
	r = proxy_connect(ip, pport, argv[0]);
	if (r != 200)
		return say(CANARY_INCONCLUSIVE, "control failed: CONNECT to the listed 127.0.0.1:%s answered %s%d",
			   argv[0], r < 0 ? "-" : "", r < 0 ? -r : r);
	r = proxy_connect(ip, pport, argv[1]);
	if (r == 200)
		return say(CANARY_BROKEN, "the proxy connected to the unlisted 127.0.0.1:%s", argv[1]);
	return say(CANARY_HELD, "listed 127.0.0.1:%s reached through the proxy; unlisted 127.0.0.1:%s refused (%d)",
		   argv[0], argv[1], r);
}

/*
 * udp FAMILY PORT: send one datagram to check's listener. Whether it
 * arrived is the parent's call ("sent" is not a verdict).
 */
static int c_udp(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fam = inet_addr_of(argv[0], argv[1], &ss, &len), fd, r;

	r = socketpair_control();
	if (r < 0)
		return control_failed("socketpair(AF_UNIX)", -r);
	fd = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return say(CANARY_HELD, "socket(%s, SOCK_DGRAM): %s", fam == AF_INET6 ? "AF_INET6" : "AF_INET",
			   ename(errno));
	if (sendto(fd, "corral-canary", 13, 0, (struct sockaddr *)&ss, len) < 0) {
		r = errno;
		close(fd);
		return say(CANARY_HELD, "socket created; sendto: %s", ename(r));
	}
	close(fd);
	return say("sent", "sendto the host's port %s returned success", argv[1]);
}

/* families netlink|other: sockets of families no network mode below "host" allows. */
static int c_families(int argc, char **argv)
{
	static const struct {
		const char *name;
		int domain, type, proto;
		bool netlink;
	} fams[] = {
		{ "AF_NETLINK(NETLINK_ROUTE)", AF_NETLINK, SOCK_RAW, NETLINK_ROUTE, true },
		{ "AF_NETLINK(NETLINK_AUDIT)", AF_NETLINK, SOCK_RAW, 9 /* NETLINK_AUDIT */, true },
		{ "AF_PACKET", AF_PACKET, SOCK_RAW, 0x0300 /* htons(ETH_P_ALL) */, false },
		{ "AF_PACKET(SOCK_DGRAM)", AF_PACKET, SOCK_DGRAM, 0x0300, false },
		{ "AF_VSOCK", AF_VSOCK, SOCK_STREAM, 0, false },
	};
	bool netlink = strcmp(argv[0], "netlink") == 0;
	struct obs o = {};
	int r = socketpair_control();

	if (r < 0)
		return control_failed("socketpair(AF_UNIX)", -r);
	for (size_t i = 0; i < ARRAY_SIZE(fams); i++) {
		int fd;

		if (fams[i].netlink != netlink)
			continue;
		fd = socket(fams[i].domain, fams[i].type | SOCK_CLOEXEC, fams[i].proto);
		ATTACK(&o, fams[i].name, fd);
		if (fd >= 0)
			close(fd);
	}
	return verdict(&o);
}

static socklen_t unix_addr(struct sockaddr_un *a, const char *path, bool abstract)
{
	size_t n = strlen(path);

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (n > sizeof(a->sun_path) - 2)
		n = sizeof(a->sun_path) - 2;
	memcpy(a->sun_path + (abstract ? 1 : 0), path, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (abstract ? 1 : 1));
}

/* unix path|abstract ADDRESS: connect to check's listener outside the sandbox. */
static int c_unix(int argc, char **argv)
{
	bool abstract = strcmp(argv[0], "abstract") == 0;
	struct sockaddr_un a, ctl;
	socklen_t len = unix_addr(&a, argv[1], abstract), clen;
	int fd, lfd, r;

	r = socketpair_control();
	if (r < 0)
		return control_failed("socketpair(AF_UNIX)", -r);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return say(CANARY_HELD, "socket(AF_UNIX): %s", ename(errno));
	/*
	 * socket() works here (network host, or Unix sockets mediated): a
	 * pathname listener of our own must be reachable. Pathname, also for
	 * the abstract canary: the supervisor's mediation refuses every
	 * abstract address, its own included.
	 */
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unlink("ctl-sock");
	clen = unix_addr(&ctl, "ctl-sock", false);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&ctl, clen) < 0 || listen(lfd, 1) < 0 ||
	    connect(fd, (struct sockaddr *)&ctl, clen) < 0) {
		r = errno;
		close(fd);
		safe_close(lfd);
		unlink("ctl-sock");
		return control_failed("connect to a Unix socket of our own", r);
	}
	close(fd);
	close(lfd);
	unlink("ctl-sock");

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return control_failed("socket(AF_UNIX)", errno);
	r = connect(fd, (struct sockaddr *)&a, len);
	if (r == 0) {
		close(fd);
		return say(CANARY_BROKEN, "connected to %s%s outside the sandbox", abstract ? "@" : "", argv[1]);
	}
	r = errno;
	close(fd);
	return say(CANARY_HELD, "connect to %s%s: %s", abstract ? "@" : "", argv[1], ename(r));
}

/* ------------------------------------------------------- syscall surfaces */

static int c_io_uring(int argc, char **argv)
{
	struct io_uring_params params = {};
	struct obs o = {};
	long fd;

	if (syscall(SYS_getpid) != getpid())
		return control_failed("getpid", errno);
	fd = syscall(__NR_io_uring_setup, 4, &params);
	ATTACK(&o, "io_uring_setup", fd);
	if (fd >= 0)
		close((int)fd);
	/* Without a ring these do nothing; the errno says whether the filter saw them (ENOSYS) or the kernel did (EBADF). */
	syscall(__NR_io_uring_enter, -1, 0, 0, 0, NULL, 0);
	obs_add(&o, "io_uring_enter(-1): %s", ename(errno));
	syscall(__NR_io_uring_register, -1, 0, NULL, 0);
	obs_add(&o, "io_uring_register(-1): %s", ename(errno));
	return verdict(&o);
}

#if defined(__x86_64__)
#define X32_BIT 0x40000000L

/*
 * Run |fn| in a sub-child: the filter may kill it with SIGSYS. Returns the
 * verdict text in |o|.
 */
static void foreign(struct obs *o, const char *what, long (*fn)(void))
{
	int pfd[2], st;
	long ret = 0;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0) {
		obs_add(o, "%s: pipe: %s", what, ename(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		long r = fn();
		ssize_t _unused_ n = write(pfd[1], &r, sizeof(r));
		_exit(0);
	}
	close(pfd[1]);
	if (pid < 0) {
		obs_add(o, "%s: fork: %s", what, ename(errno));
		close(pfd[0]);
		return;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (read(pfd[0], &ret, sizeof(ret)) != sizeof(ret))
		ret = LONG_MIN;
	close(pfd[0]);
	if (WIFSIGNALED(st)) {
		obs_add(o, "%s: killed by SIG%s", what, corral_signal_abbrev(WTERMSIG(st)) ?: "?");
		return;
	}
	if (ret == LONG_MIN) {
		obs_add(o, "%s: no answer", what);
		return;
	}
	if (ret < 0 && ret > -4096) {
		obs_add(o, "%s: %s", what, ename((int)-ret));
		return;
	}
	obs_add(o, "%s: SUCCEEDED (returned %ld)", what, ret);
	if (!o->succeeded++)
		snprintf(o->first, sizeof(o->first), "%s succeeded", what);
}

static long native_getpid(void)
{
	return syscall(SYS_getpid);
}

static long raw_syscall3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return ret;
}

static long x32_getpid(void)
{
	return raw_syscall3(X32_BIT | 39, 0, 0, 0);
}

static long x32_socket(void)
{
	return raw_syscall3(X32_BIT | 41, AF_INET, SOCK_STREAM, 0);
}

static long int80(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
	return ret;
}

static long i386_getpid(void)
{
	return int80(20, 0, 0, 0);
}

static long i386_socket(void)
{
	return int80(359, AF_INET, SOCK_STREAM, 0);
}

static long i386_socketcall(void)
{
	/* socketcall(SYS_SOCKET, args): the argument block must sit below 4 GiB for a 32-bit caller. */
	int32_t *args = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);

	if (args == MAP_FAILED)
		return -errno;
	args[0] = AF_INET;
	args[1] = SOCK_STREAM;
	args[2] = 0;
	return int80(102, 1, (long)(uintptr_t)args, 0);
}

static int c_foreign_abi(int argc, char **argv)
{
	struct obs ctl = {}, o = {};

	foreign(&ctl, "native getpid", native_getpid);
	if (ctl.succeeded != 1)
		return say(CANARY_INCONCLUSIVE, "control failed: a native syscall in a sub-child: %s", ctl.text);
	if (strcmp(argv[0], "x32") == 0) {
		foreign(&o, "x32 getpid", x32_getpid);
		foreign(&o, "x32 socket", x32_socket);
	} else {
		foreign(&o, "int 0x80 getpid", i386_getpid);
		foreign(&o, "int 0x80 socket", i386_socket);
		foreign(&o, "int 0x80 socketcall", i386_socketcall);
	}
	return verdict(&o);
}
#else
static int c_foreign_abi(int argc, char **argv)
{
	return say(CANARY_NA, "no foreign syscall ABI canary for this architecture");
}
#endif

/* -------------------------------------------------------------- processes */

static pid_t spawn_pauser(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
}

static int c_signal(int argc, char **argv)
{
	pid_t victim = (pid_t)atol(argv[0]), own;
	struct obs o = {};
	int pfd;

	own = spawn_pauser();
	if (own < 0)
		return control_failed("fork", errno);
	if (kill(own, 0) < 0 || kill(own, SIGTERM) < 0) {
		int e = errno;
		reap(own);
		return control_failed("signal our own child", e);
	}
	reap(own);

	ATTACK(&o, "kill(outside, 0)", kill(victim, 0));
	ATTACK(&o, "kill(outside, SIGTERM)", kill(victim, SIGTERM));
	ATTACK(&o, "sigqueue(outside, SIGUSR1)", sigqueue(victim, SIGUSR1, (union sigval){ 0 }));
	pfd = (int)syscall(__NR_pidfd_open, victim, 0);
	if (pfd >= 0) {
		ATTACK(&o, "pidfd_send_signal(outside, SIGTERM)", syscall(__NR_pidfd_send_signal, pfd, SIGTERM, NULL, 0));
		close(pfd);
	} else {
		obs_add(&o, "pidfd_open: %s", ename(errno));
	}
	return verdict(&o);
}

static int c_ptrace(int argc, char **argv)
{
	pid_t victim = (pid_t)atol(argv[0]), own;
	struct obs o = {};
	char buf[16], path[64];
	struct iovec local = { buf, sizeof(buf) }, remote = { (void *)0x400000, sizeof(buf) };
	long r;

	own = spawn_pauser();
	if (own < 0)
		return control_failed("fork", errno);
	if (ptrace(PTRACE_ATTACH, own, NULL, NULL) < 0) {
		int e = errno;
		reap(own);
		return control_failed("ptrace our own child", e);
	}
	waitpid(own, NULL, __WALL);
	ptrace(PTRACE_DETACH, own, NULL, NULL);
	reap(own);

	r = ptrace(PTRACE_ATTACH, victim, NULL, NULL);
	ATTACK(&o, "PTRACE_ATTACH outside", r);
	if (r == 0)
		ptrace(PTRACE_DETACH, victim, NULL, NULL);
	r = ptrace(PTRACE_SEIZE, victim, NULL, NULL);
	ATTACK(&o, "PTRACE_SEIZE outside", r);
	if (r == 0)
		ptrace(PTRACE_DETACH, victim, NULL, NULL);
	r = process_vm_readv(victim, &local, 1, &remote, 1, 0);
	/* EFAULT means the permission check passed and only the address was wrong. */
	ATTACK(&o, "process_vm_readv outside", r >= 0 || errno == EFAULT ? 0 : -1);
	snprintf(path, sizeof(path), "/proc/%d/mem", victim);
	ATTACK(&o, "open /proc/PID/mem", try_open(path, O_RDONLY));
	return verdict(&o);
}

/* Another process's resource limits: the kernel allows it for one of the same uid (the sleeper is). */
static int c_prlimit(int argc, char **argv)
{
	pid_t victim = (pid_t)atol(argv[0]);
	struct obs o = {};
	struct rlimit cur;

	if (prlimit(0, RLIMIT_CORE, NULL, &cur) < 0 || prlimit(0, RLIMIT_CORE, &cur, NULL) < 0)
		return control_failed("prlimit of itself (pid 0)", errno);
	if (prlimit(victim, RLIMIT_CORE, NULL, &cur) < 0)
		obs_add(&o, "reading its limits: %s", ename(errno));
	else
		/* Its own value back: harmless, should the filter let it through. */
		ATTACK(&o, "prlimit outside (set RLIMIT_CORE)", prlimit(victim, RLIMIT_CORE, &cur, NULL));
	return verdict(&o);
}

/*
 * Another process's scheduling (its nice value, its CPU affinity): the
 * kernel allows it for one of the same uid (the sleeper is). Its own
 * values are written back: harmless, should the filter let them through.
 */
static int c_sched(int argc, char **argv)
{
	pid_t victim = (pid_t)atol(argv[0]);
	struct obs o = {};
	cpu_set_t set;
	int prio;

	errno = 0;
	prio = getpriority(PRIO_PROCESS, 0);
	if ((prio == -1 && errno) || setpriority(PRIO_PROCESS, 0, prio) < 0 ||
	    sched_getaffinity(0, sizeof(set), &set) < 0 || sched_setaffinity(0, sizeof(set), &set) < 0)
		return control_failed("its own nice value and CPU affinity (pid 0)", errno);
	errno = 0;
	prio = getpriority(PRIO_PROCESS, victim);
	if (prio == -1 && errno)
		obs_add(&o, "reading its nice value: %s", ename(errno));
	else
		ATTACK(&o, "setpriority outside (its nice value)", setpriority(PRIO_PROCESS, victim, prio));
	if (sched_getaffinity(victim, sizeof(set), &set) < 0)
		obs_add(&o, "reading its CPU affinity: %s", ename(errno));
	else
		ATTACK(&o, "sched_setaffinity outside (its CPU mask)", sched_setaffinity(victim, sizeof(set), &set));
	return verdict(&o);
}

/* argv[0]: a System V segment (mode 0666) the check made outside. */
static int c_sysv(int argc, char **argv)
{
	int victim = atoi(argv[0]);
	struct obs o = {};
	struct shmid_ds ds;
	void *own = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	void *a;

	if (own == MAP_FAILED)
		return control_failed("shared anonymous memory of its own (mmap MAP_SHARED)", errno);
	munmap(own, 4096);
	/* Each of these works on an unconfined host (the victim is 0666); what succeeds is undone. */
	a = shmat(victim, NULL, SHM_RDONLY);
	ATTACK(&o, "shmat of an outside System V segment", a == (void *)-1 ? -1 : 0);
	if (a != (void *)-1)
		shmdt(a);
	ATTACK(&o, "shmctl(IPC_STAT) of the outside segment", shmctl(victim, IPC_STAT, &ds));
	{
		int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);

		ATTACK(&o, "shmget(IPC_PRIVATE) (outlives the run)", id);
		if (id >= 0)
			shmctl(id, IPC_RMID, NULL);
		id = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
		ATTACK(&o, "msgget(IPC_PRIVATE)", id);
		if (id >= 0)
			msgctl(id, IPC_RMID, NULL);
	}
	{
		char name[64];
		mqd_t q;

		snprintf(name, sizeof(name), "/corral-canary-%d", (int)getpid());
		q = mq_open(name, O_CREAT | O_EXCL | O_RDWR, 0600, NULL);
		ATTACK(&o, "mq_open(O_CREAT)", q == (mqd_t)-1 ? -1 : 0);
		if (q != (mqd_t)-1) {
			mq_close(q);
			mq_unlink(name);
		}
	}
	return verdict(&o);
}

static int c_proc(int argc, char **argv)
{
	pid_t victim = (pid_t)atol(argv[0]), own;
	char path[64], buf[4096];
	struct obs o = {};
	ssize_t n;
	int fd;

	own = spawn_pauser();
	if (own < 0)
		return control_failed("fork", errno);
	snprintf(path, sizeof(path), "/proc/%d/environ", own);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, buf, sizeof(buf)) < 0) {
		int e = errno;
		safe_close(fd);
		reap(own);
		return control_failed("read /proc/PID/environ of our own child", e);
	}
	close(fd);
	reap(own);

	snprintf(path, sizeof(path), "/proc/%d/environ", victim);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			for (ssize_t i = 0; i < n; i++)
				if (!buf[i])
					buf[i] = ' ';
		}
		ATTACK(&o, "read /proc/PID/environ", n);
		if (n > 0 && strstr(buf, CANARY_SECRET_VAR))
			obs_add(&o, "it holds %s", CANARY_SECRET_VAR);
	} else {
		ATTACK(&o, "open /proc/PID/environ", -1);
	}
	snprintf(path, sizeof(path), "/proc/%d/cwd", victim);
	ATTACK(&o, "readlink /proc/PID/cwd", readlink(path, buf, sizeof(buf)));
	snprintf(path, sizeof(path), "/proc/%d/root/", victim);
	ATTACK(&o, "open /proc/PID/root/", try_open(path, O_RDONLY | O_DIRECTORY));
	snprintf(path, sizeof(path), "/proc/%d/maps", victim);
	ATTACK(&o, "open /proc/PID/maps", try_open(path, O_RDONLY));
	return verdict(&o);
}

/*
 * proc "private": the outside process (argv[0]), a host process of the
 * command's own uid whose command line names the sleeper canary, is not
 * in this /proc at all. Control: this process's own command line reads.
 */
static int c_proc_private(int argc, char **argv)
{
	char path[300], buf[512];
	struct obs o = {};
	ssize_t n;
	int fd;
	DIR *d;

	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	if (n <= 0) {
		int e = n < 0 ? errno : EIO;

		safe_close(fd);
		return control_failed("read /proc/self/cmdline", e);
	}
	close(fd);
	snprintf(path, sizeof(path), "/proc/%s/cmdline", argv[0]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	ATTACK(&o, "read /proc/PID/cmdline of the outside process", fd >= 0 ? n : -1);
	safe_close(fd);
	/* Any process whose command line names the sleeper, under whatever pid. */
	d = opendir("/proc");
	if (!d)
		return control_failed("opendir /proc", errno);
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		safe_close(fd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		for (ssize_t i = 0; i < n; i++)
			if (!buf[i])
				buf[i] = ' ';
		if (strstr(buf, CANARY_VERB " sleeper")) {
			attack(&o, "find the outside process's command line in /proc", 0, 0);
			break;
		}
	}
	closedir(d);
	return verdict(&o);
}

static int c_tty(int argc, char **argv)
{
	struct termios t;
	struct obs o = {};
	char c = 'x';
	int fd;

	/* We lead a session without a terminal: opening the pty makes it ours, so TIOCSTI's own checks pass. */
	fd = open(argv[0], O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return control_failed("open the pty", errno);
	if (ioctl(fd, TCGETS, &t) < 0) {
		int e = errno;
		close(fd);
		return control_failed("TCGETS on the pty", e);
	}
	ATTACK(&o, "TIOCSTI", ioctl(fd, TIOCSTI, &c));
	/* The kernel reads the request as 32 bits: high bits must not slip past the filter (CVE-2019-10063). */
	ATTACK(&o, "TIOCSTI with high bits set", syscall(SYS_ioctl, fd, (unsigned long)TIOCSTI | (1UL << 32), &c));
	{
		char sub = 2; /* TIOCL_SETSEL: on a pty the kernel says ENOTTY/EINVAL when not filtered */
		long r = ioctl(fd, TIOCLINUX, &sub);

		if (r < 0 && (errno == ENOTTY || errno == EINVAL))
			obs_add(&o, "TIOCLINUX: %s (not a console; the filter did not refuse it)", ename(errno));
		else
			ATTACK(&o, "TIOCLINUX", r);
	}
	close(fd);
	return verdict(&o);
}

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

/*
 * A pty of the command's own works (the control: /dev/ptmx, unlock, its
 * peer through TIOCGPTPEER, as openpty does); the host's pty |argv[0]|,
 * owned by the command's uid, cannot be opened.
 */
static int c_pty(int argc, char **argv)
{
	struct obs o = {};
	int unlock = 0, m, s;

	m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0)
		return control_failed("open /dev/ptmx", errno);
	if (ioctl(m, TIOCSPTLCK, &unlock) < 0 || (s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
		int e = errno;

		close(m);
		return control_failed("the peer of its own pty (TIOCGPTPEER)", e);
	}
	close(s);
	close(m);
	ATTACK(&o, "open the host's pty", try_open(argv[0], O_RDWR | O_NOCTTY));
	ATTACK(&o, "open the host's pty read-only", try_open(argv[0], O_RDONLY | O_NOCTTY));
	return verdict(&o);
}

/* ---------------------------------------------------------- what leaks in */

static int c_fds(int argc, char **argv)
{
	int planted = atoi(argv[0]);
	struct obs o = {};
	struct dirent *de;
	DIR *d;

	for (int i = 0; i < 3; i++)
		if (fcntl(i, F_GETFD) < 0)
			return control_failed("stdio fd", errno);
	ATTACK(&o, "planted fd", fcntl(planted, F_GETFD));
	d = opendir("/proc/self/fd");
	if (!d)
		return control_failed("list /proc/self/fd", errno);
	while ((de = readdir(d))) {
		char path[64], target[256];
		int fd;
		ssize_t n;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		fd = atoi(de->d_name);
		if (fd <= 2 || fd == dirfd(d) || fd == planted)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		attack(&o, "an inherited fd", 0, 0);
		obs_add(&o, "fd %d -> %s", fd, target);
	}
	closedir(d);
	return verdict(&o);
}

static bool in_list(const char *list, const char *name, size_t n)
{
	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (l == n && strncmp(p, name, n) == 0)
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

/* env ALLOWED(names, comma-separated) REQUIRED(names): only allowed names; required ones present. */
static int c_env(int argc, char **argv)
{
	extern char **environ;
	const char *allowed = argv[0], *required = argv[1];
	struct obs o = {};

	for (const char *p = required; p && *p;) {
		const char *e = strchr(p, ',');
		char name[256];

		snprintf(name, sizeof(name), "%.*s", (int)(e ? e - p : (long)strlen(p)), p);
		if (!getenv(name))
			return say(CANARY_INCONCLUSIVE, "control failed: %s, which the policy sets, is missing", name);
		p = e ? e + 1 : NULL;
	}
	attack(&o, CANARY_SECRET_VAR, getenv(CANARY_SECRET_VAR) ? 0 : -1, ENOENT);
	if (!in_list(allowed, "LD_PRELOAD", 10))
		attack(&o, "LD_PRELOAD", getenv("LD_PRELOAD") ? 0 : -1, ENOENT);
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t n = eq ? (size_t)(eq - *e) : strlen(*e);

		if (n == strlen(CANARY_SECRET_VAR) && strncmp(*e, CANARY_SECRET_VAR, n) == 0)
			continue;
		if (n == 10 && strncmp(*e, "LD_PRELOAD", n) == 0)
			continue;
		if (!in_list(allowed, *e, n)) {
			attack(&o, "a variable the policy does not list", 0, 0);
			obs_add(&o, "%.*s is set", (int)(n > 64 ? 64 : n), *e);
		}
	}
	return verdict(&o);
}

/* ---------------------------------------------------------------- privilege */

static int c_privs(int argc, char **argv)
{
	bool want_nonroot = strcmp(argv[0], "1") == 0;
	/* The bounding set: only a privileged caller can clear it; with NoNewPrivs nothing enters it. */
	bool want_bnd_zero = strcmp(argv[1], "1") == 0;
	static const char *const caps[] = { "CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:" };
	char buf[8192], *p;
	struct obs o = {};
	ssize_t n;
	int fd, found = 0;

	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return control_failed("read /proc/self/status", errno);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return control_failed("read /proc/self/status", errno);
	buf[n] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(caps); i++) {
		p = strstr(buf, caps[i]);
		if (!p)
			continue;
		found++;
		unsigned long long v = strtoull(p + strlen(caps[i]), NULL, 16);
		if (v && i == 3 && !want_bnd_zero) {
			obs_add(&o, "CapBnd %llx (left to an unprivileged caller, which cannot clear it)", v);
		} else if (v) {
			attack(&o, caps[i], 0, 0);
			obs_add(&o, "%s %llx", caps[i], v);
		}
	}
	p = strstr(buf, "NoNewPrivs:");
	if (p) {
		found++;
		if (atoi(p + 11) != 1)
			attack(&o, "NoNewPrivs is 0", 0, 0);
	}
	p = strstr(buf, "\nUid:");
	if (p) {
		unsigned r, e, s, f;

		found++;
		if (sscanf(p + 5, "%u %u %u %u", &r, &e, &s, &f) == 4) {
			obs_add(&o, "uid %u", e);
			if (want_nonroot && (!r || !e || !s || !f))
				attack(&o, "uid 0", 0, 0);
		}
	}
	if (found != (int)ARRAY_SIZE(caps) + 2)
		return say(CANARY_INCONCLUSIVE, "control failed: /proc/self/status lacks capability, NoNewPrivs or Uid lines");
	if (!o.succeeded)
		return say(CANARY_HELD, "CapInh, CapPrm, CapEff, CapAmb%s 0, NoNewPrivs 1, %s",
			   want_bnd_zero ? ", CapBnd" : "", o.text);
	return verdict(&o);
}

/* ------------------------------------------------------------ the lifetime */

/*
 * daemon deadline|exit: leave a grandchild in a new session (setsid after
 * a double fork) that writes "PID STARTTIME" to daemon-MODE.pid in the
 * root. Then either wait for the deadline or exit. The parent judges.
 */
static int c_daemon(int argc, char **argv)
{
	char file[64], tmp[80];
	pid_t child;
	int st;

	snprintf(file, sizeof(file), "daemon-%s.pid", argv[0]);
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	unlink(file);
	child = fork();
	if (child < 0)
		return control_failed("fork", errno);
	if (child == 0) {
		setsid();
		if (fork() == 0) {
			char line[64];
			int fd;

			signal(SIGHUP, SIG_IGN);
			snprintf(line, sizeof(line), "%d %llu\n", getpid(),
				 corral_proc_starttime("/proc/self/stat", NULL));
			fd = open(tmp, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
			if (fd >= 0 && write(fd, line, strlen(line)) > 0)
				rename(tmp, file);
			safe_close(fd);
			for (;;)
				pause();
		}
		_exit(0);
	}
	waitpid(child, &st, 0);
	/* A busy host may take a while to run the grandchild. */
	for (int i = 0; i < 1600 && access(file, F_OK) < 0; i++)
		usleep(5000);
	if (access(file, F_OK) < 0)
		return control_failed("the daemon never wrote its pid file", errno);
	say("spawned", "a setsid daemon (double fork) is running");
	if (strcmp(argv[0], "deadline") == 0)
		for (;;)
			pause();
	return 0;
}

/* ------------------------------------------------------------------ limits */

static int c_rlimits(int argc, char **argv)
{
	static const struct {
		const char *name;
		int res;
	} lims[] = {
		{ "RLIMIT_AS", RLIMIT_AS },
		{ "RLIMIT_CPU", RLIMIT_CPU },
		{ "RLIMIT_FSIZE", RLIMIT_FSIZE },
		{ "RLIMIT_NOFILE", RLIMIT_NOFILE },
	};
	struct obs o = {};

	for (size_t i = 0; i < ARRAY_SIZE(lims) && (int)i < argc; i++) {
		unsigned long long want = strtoull(argv[i], NULL, 10);
		struct rlimit rl;

		if (!want)
			continue;
		if (getrlimit(lims[i].res, &rl) < 0)
			return control_failed("getrlimit", errno);
		if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > want) {
			attack(&o, lims[i].name, 0, 0);
			obs_add(&o, "%s soft %llu, the policy asks %llu", lims[i].name,
				(unsigned long long)rl.rlim_cur, want);
		} else {
			obs_add(&o, "%s %llu", lims[i].name, (unsigned long long)rl.rlim_cur);
		}
	}
	if (o.succeeded)
		return say(CANARY_BROKEN, "a limit above the policy's (%s)", o.text);
	return say(CANARY_HELD, "%s", o.text);
}

static int c_memory(int argc, char **argv)
{
	unsigned long long bytes = strtoull(argv[0], NULL, 10), touched = 0;
	void *m;

	m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return control_failed("map 1 MiB", errno);
	if (argc > 1 && strcmp(argv[1], "touch") == 0) {
		/* Under a memory cgroup: really use more than the limit, 1 MiB at a time (the mapping above: the control). */
		memset(m, 1, 1 << 20);
		while (touched <= bytes + (64ULL << 20)) {
			void *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED)
				return say(CANARY_HELD, "mapping after %llu bytes touched: %s", touched, ename(errno));
			memset(p, 1, 1 << 20);
			touched += 1 << 20;
		}
		return say(CANARY_BROKEN, "touched %llu bytes, past the limit of %llu", touched, bytes);
	}
	munmap(m, 1 << 20);
	m = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m != MAP_FAILED) {
		munmap(m, (size_t)bytes);
		return say(CANARY_BROKEN, "mapped %llu bytes, the whole limit, on top of the program", bytes);
	}
	return say(CANARY_HELD, "mapping %llu bytes: %s", bytes, ename(errno));
}

static int c_file_size(int argc, char **argv)
{
	unsigned long long bytes = strtoull(argv[0], NULL, 10);
	ssize_t n;
	int fd, e;

	signal(SIGXFSZ, SIG_IGN);
	fd = open("fsize", O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return control_failed("create a file in the root", errno);
	if (pwrite(fd, "x", 1, 0) != 1) {
		e = errno;
		close(fd);
		unlink("fsize");
		return control_failed("write at offset 0", e);
	}
	n = pwrite(fd, "x", 1, (off_t)bytes);
	e = errno;
	close(fd);
	unlink("fsize");
	if (n == 1)
		return say(CANARY_BROKEN, "wrote a byte at offset %llu (the limit)", bytes);
	return say(CANARY_HELD, "a byte at offset %llu: %s", bytes, ename(e));
}

static int c_open_files(int argc, char **argv)
{
	long limit = atol(argv[0]), count = 0;
	int e = 0, maxfd = 2;

	for (long i = 0; i < limit + 64; i++) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			e = errno;
			break;
		}
		count++;
		if (fd > maxfd)
			maxfd = fd;
	}
	if (count == 0)
		return control_failed("open /dev/null", e);
	if (!e || maxfd >= limit)
		return say(CANARY_BROKEN, "opened %ld files, highest fd %d, limit %ld", count, maxfd, limit);
	return say(CANARY_HELD, "open failed with %s at fd %d (limit %ld)", ename(e), maxfd + 1, limit);
}

/*
 * processes N exact|relative: fork until refused. "exact" (a pids cgroup):
 * at most N processes in the run. "relative": RLIMIT_NPROC counts every
 * task of the uid system-wide and corral sets it to N plus the uid's count
 * at the start, so the bound is that rlimit; other processes of the uid
 * that exit meanwhile leave room (docs/threat-model.md).
 */
static int c_processes(int argc, char **argv)
{
	long limit = atol(argv[0]), count = 0, bound = limit;
	bool relative = strcmp(argv[1], "relative") == 0;
	struct rlimit rl = {};
	int e = 0;

	if (relative) {
		if (getrlimit(RLIMIT_NPROC, &rl) < 0)
			return control_failed("getrlimit(RLIMIT_NPROC)", errno);
		if (rl.rlim_cur == RLIM_INFINITY)
			return say(CANARY_BROKEN, "RLIMIT_NPROC is unlimited");
		bound = (long)rl.rlim_cur;
	}
	for (long i = 0; i < bound + 16; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			e = errno;
			break;
		}
		if (pid == 0) {
			for (;;)
				pause();
		}
		count++;
	}
	/* Our children are in our process group: the run's end kills them. */
	if (count == 0)
		return control_failed("fork", e);
	if (!e || count >= bound)
		return say(CANARY_BROKEN, "forked %ld processes, limit %ld%s", count, limit,
			   relative ? " (RLIMIT_NPROC)" : "");
	if (relative)
		return say(CANARY_HELD,
			   "fork failed with %s after %ld more processes: RLIMIT_NPROC %ld = %ld plus the uid's tasks at the start",
			   ename(e), count, bound, limit);
	return say(CANARY_HELD, "fork failed with %s after %ld more processes (limit %ld)", ename(e), count, limit);
}

/*
 * cpu CPU_MS WALL_S: spin until CPU_MS of CPU time are used or WALL_S
 * seconds pass. The limit should kill it first; the parent judges (a busy
 * host may give it too little CPU to tell).
 */
static int c_cpu(int argc, char **argv)
{
	double want_ms = atof(argv[0]), wall = atof(argv[1]), used = 0;
	struct timespec t0, t, c;
	volatile unsigned long spin = 0;

	say("spinning", "burning up to %g ms of CPU within %g s", want_ms, wall);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		for (int i = 0; i < 1000000; i++)
			spin++;
		clock_gettime(CLOCK_MONOTONIC, &t);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
		used = (double)c.tv_sec * 1e3 + (double)c.tv_nsec / 1e6;
		if (used >= want_ms ||
		    (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 >= wall)
			break;
	}
	dprintf(STDOUT_FILENO, "spun %.0f\n", used);
	return 0;
}

static int c_output(int argc, char **argv)
{
	unsigned long long n = strtoull(argv[0], NULL, 10) + 128 * 1024, done = 0;
	char buf[65536];

	memset(buf, 'x', sizeof(buf));
	say("flooding", "%llu bytes on stdout and stderr", n);
	while (done < n) {
		size_t k = n - done < sizeof(buf) ? (size_t)(n - done) : sizeof(buf);
		ssize_t w1 = write(STDOUT_FILENO, buf, k), w2 = write(STDERR_FILENO, buf, k);

		if (w1 <= 0 || w2 <= 0)
			break;
		done += (unsigned long long)(w1 < w2 ? w1 : w2);
	}
	return 0;
}

/* ------------------------------------------------------------------ misc */

static int c_hello(int argc, char **argv)
{
	return say(CANARY_HELD, CANARY_HELLO " uid %u", (unsigned)getuid());
}

static int c_sleeper(int argc, char **argv)
{
	/* Outside the sandbox, started by check: a target. Dies with check (PDEATHSIG). */
	for (;;)
		pause();
	return 0;
}

static const struct {
	const char *name;
	int nargs;
	int (*fn)(int argc, char **argv);
} canaries[] = {
	{ "hello", 0, c_hello },
	{ "sleeper", 0, c_sleeper },
	{ "write-outside", 1, c_write_outside },
	{ "traversal", 1, c_traversal },
	{ "symlink", 1, c_symlink },
	{ "plant-link", 2, c_plant_link },
	{ "refer", 1, c_refer },
	{ "truncate", 1, c_truncate },
	{ "read-outside", 1, c_read_outside },
	{ "tcp", 2, c_tcp },
	{ "udp", 2, c_udp },
	{ "egress", 2, c_egress },
	{ "families", 1, c_families },
	{ "unix", 2, c_unix },
	{ "io-uring", 0, c_io_uring },
	{ "foreign-abi", 1, c_foreign_abi },
	{ "signal", 1, c_signal },
	{ "ptrace", 1, c_ptrace },
	{ "proc", 1, c_proc },
	{ "proc-private", 1, c_proc_private },
	{ "prlimit", 1, c_prlimit },
	{ "sched", 1, c_sched },
	{ "sysv", 1, c_sysv },
	{ "tty", 1, c_tty },
	{ "pty", 1, c_pty },
	{ "fds", 1, c_fds },
	{ "env", 2, c_env },
	{ "privs", 2, c_privs },
	{ "daemon", 1, c_daemon },
	{ "rlimits", 4, c_rlimits },
	{ "memory", 1, c_memory }, /* BYTES [touch] */
	{ "file-size", 1, c_file_size },
	{ "open-files", 1, c_open_files },
	{ "processes", 2, c_processes },
	{ "cpu", 2, c_cpu },
	{ "output", 1, c_output },
};

_public_ int corral_canary_main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[0], CANARY_VERB) != 0) {
		dprintf(STDERR_FILENO, "corral: %s NAME ARG...: internal to corral check\n", CANARY_VERB);
		return 125;
	}
	for (size_t i = 0; i < ARRAY_SIZE(canaries); i++) {
		if (strcmp(argv[1], canaries[i].name) != 0)
			continue;
		if (argc - 2 < canaries[i].nargs) {
			dprintf(STDERR_FILENO, "corral: canary %s: needs %d arguments\n", argv[1], canaries[i].nargs);
			return 125;
		}
		return canaries[i].fn(argc - 2, argv + 2);
	}
	dprintf(STDERR_FILENO, "corral: no canary named %s\n", argv[1]);
	return 125;
}
