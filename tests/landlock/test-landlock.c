/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Landlock, live (suite "kernel"). Usage: test-landlock CASE.
 *
 * Every case that restricts does it in a forked child (restriction is
 * irreversible) and pairs each attack with a positive control, so a
 * sandbox that denies everything fails as surely as one that denies
 * nothing. Only Landlock is applied here (no seccomp): these cases prove
 * what Landlock alone enforces. Runs as root and as nobody.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <termios.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cap-ng.h>
#include <jansson.h>

#include "landlock/landlock.h"
#include "landlock/uapi.h"
#include "policy/policy.h"
#include "seccomp/seccomp.h"
#include "policy/posture.h"
#include "tests/common.h"

#define FAILF(...)                                                                 \
	do {                                                                       \
		fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);               \
		fprintf(stderr, __VA_ARGS__);                                      \
		fputc('\n', stderr);                                               \
		return 1;                                                          \
	} while (0)

/* |expr| must return >= 0. */
#define EXPECT_OK(expr)                                                            \
	do {                                                                       \
		errno = 0;                                                         \
		if ((long)(expr) < 0)                                              \
			FAILF("%s: expected success, got %s", #expr, strerror(errno)); \
	} while (0)

/* |expr| must return -1 with errno |e|. */
#define EXPECT_ERRNO(expr, e)                                                      \
	do {                                                                       \
		long _r;                                                           \
		errno = 0;                                                         \
		_r = (long)(expr);                                                 \
		if (_r != -1 || errno != (e))                                      \
			FAILF("%s: expected %s, got %ld (%s)", #expr, strerror(e), _r, \
			      _r == -1 ? strerror(errno) : "success");             \
	} while (0)

#define EXPECT(cond, ...)                                                          \
	do {                                                                       \
		if (!(cond))                                                       \
			FAILF(__VA_ARGS__);                                        \
	} while (0)

static struct {
	char root[64];   /* the confinement root */
	char out[64];    /* a directory outside it, owned by the test's uid */
	int kernel_abi;
	uint16_t tcp_port;     /* a listener the parent started, outside the sandbox */
	char abstract[108];    /* an abstract socket the parent listens on (with leading NUL) */
	socklen_t abstract_len;
} fx;

static char pathbuf[8][256];

/* Paths: root/NAME or out/NAME, in one of a few rotating buffers. */
static const char *in_root(const char *name)
{
	static int slot;
	char *b = pathbuf[slot++ % 4];

	snprintf(b, 256, "%s/%s", fx.root, name);
	return b;
}

static const char *in_out(const char *name)
{
	static int slot;
	char *b = pathbuf[4 + slot++ % 4];

	snprintf(b, 256, "%s/%s", fx.out, name);
	return b;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		return -1;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* open() then close(): 0, or -1 with errno. */
static int try_open(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0600);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static void policy_init(struct corral_policy *p, int network)
{
	size_t n = 0;

	memset(p, 0, sizeof(*p));
	p->network = network;
	p->compat = CORRAL_COMPAT_STRICT;
	while (corral_default_read_only[n])
		n++;
	p->fs.read_only.v = (char **)corral_default_read_only;
	p->fs.read_only.n = n;
}

/*
 * Build the plan and a ruleset in the parent (as the supervisor does),
 * then in a forked child: no_new_privs, restrict, run |fn|. Returns fn's
 * exit status (0 pass), or 1.
 */
/* The terminals the confined child inherits (corral_ll_ruleset's stdio). */
static struct corral_ll_stdio confined_ttys[2];
static size_t n_confined_ttys;

static int run_confined_policy(const struct corral_policy *p, int (*fn)(void))
{
	struct corral_posture ps = {};
	struct corral_ll_plan *plan = NULL;
	struct corral_error err = {};
	int rfd, status;
	pid_t pid;

	if (corral_ll_plan_new(p, fx.root, &ps, &plan, &err) < 0)
		FAILF("plan: %s", err.message);
	rfd = corral_ll_ruleset(plan, -1, confined_ttys, n_confined_ttys, &err);
	corral_ll_plan_free(plan);
	if (rfd < 0)
		FAILF("ruleset: %s", err.message);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		FAILF("fork: %s", strerror(errno));
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(2);
		if (corral_ll_restrict_self(rfd) < 0)
			_exit(3);
		close(rfd);
		_exit(fn());
	}
	close(rfd);
	if (waitpid(pid, &status, 0) < 0)
		FAILF("waitpid: %s", strerror(errno));
	EXPECT(WIFEXITED(status), "confined child died of signal %d", WTERMSIG(status));
	EXPECT(WEXITSTATUS(status) != 2 && WEXITSTATUS(status) != 3, "confined child: setup stage %d failed",
	       WEXITSTATUS(status));
	return WEXITSTATUS(status);
}

static int run_confined(int network, int (*fn)(void))
{
	struct corral_policy p;

	policy_init(&p, network);
	return run_confined_policy(&p, fn);
}

static void need_abi(int abi, const char *what)
{
	char why[160];

	if (fx.kernel_abi >= abi)
		return;
	snprintf(why, sizeof(why), "%s needs Landlock ABI %d, kernel has %d", what, abi, fx.kernel_abi);
	skip_or_fail(why);
}

/* ------------------------------------------------------------ cases */

static int c_write(void)
{
	EXPECT_OK(write_file(in_root("new"), "x"));
	EXPECT_OK(mkdir(in_root("newdir"), 0700));
	EXPECT_OK(unlink(in_root("new")));
	EXPECT_ERRNO(try_open(in_out("new"), O_WRONLY | O_CREAT), EACCES);
	EXPECT_ERRNO(try_open(in_out("secret"), O_WRONLY), EACCES);
	EXPECT_ERRNO(mkdir(in_out("newdir"), 0700), EACCES);
	EXPECT_ERRNO(unlink(in_out("secret")), EACCES);
	/* Default devices are usable. */
	EXPECT_OK(try_open("/dev/null", O_WRONLY | O_TRUNC));
	EXPECT_OK(try_open("/dev/urandom", O_RDONLY));
	return 0;
}

static int c_read(void)
{
	char buf[64];
	int fd;

	fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	EXPECT(fd >= 0, "read /etc/passwd: %s", strerror(errno));
	EXPECT(read(fd, buf, sizeof(buf)) > 0, "read /etc/passwd: %s", strerror(errno));
	close(fd);
	EXPECT_OK(try_open("/proc/self/status", O_RDONLY));
	EXPECT_OK(try_open(in_root("inside"), O_RDONLY));
	EXPECT_ERRNO(try_open(in_out("secret"), O_RDONLY), EACCES);
	EXPECT_ERRNO(try_open(fx.out, O_RDONLY | O_DIRECTORY), EACCES);
	/* Read-only means no write, even where reading works. */
	EXPECT_ERRNO(try_open("/etc/passwd", O_WRONLY), EACCES);
	return 0;
}

/* A real program: exec /bin/sh, which reads /etc, /usr, /lib and writes the root. */
static int c_exec(void)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		char cmd[512];

		snprintf(cmd, sizeof(cmd),
			 "cat /etc/passwd >/dev/null && echo ok > '%s/from-sh' && ! cat '%s/secret' 2>/dev/null",
			 fx.root, fx.out);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	EXPECT(pid > 0, "fork: %s", strerror(errno));
	EXPECT(waitpid(pid, &status, 0) == pid, "waitpid");
	EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "sh in the sandbox: status %d", status);
	EXPECT_OK(try_open(in_root("from-sh"), O_RDONLY));
	return 0;
}

static int c_refer(void)
{
	/* Positive controls: reparenting within the root (REFER granted there, ABI >= 2). */
	EXPECT_OK(write_file(in_root("a"), "a"));
	EXPECT_OK(mkdir(in_root("sub"), 0700));
	EXPECT_OK(link(in_root("a"), in_root("sub/hard")));
	EXPECT_OK(rename(in_root("a"), in_root("sub/a")));
	EXPECT_OK(rename(in_root("sub/a"), in_root("a")));
	/*
	 * Pulling an outside file into the root would give it the root's
	 * rights: Landlock's REFER check refuses with EXDEV.
	 */
	EXPECT_ERRNO(link(in_out("secret"), in_root("stolen")), EXDEV);
	/*
	 * Out of the root: no right to create anything there, and Landlock
	 * reports EACCES before EXDEV.
	 */
	EXPECT_ERRNO(link(in_root("a"), in_out("a")), EACCES);
	EXPECT_ERRNO(rename(in_root("a"), in_out("a")), EACCES);
	EXPECT_ERRNO(rename(in_out("secret"), in_root("stolen")), EACCES);
	return 0;
}

static int c_truncate(void)
{
	struct stat st;

	EXPECT_OK(truncate(in_root("inside"), 0));
	EXPECT_OK(try_open(in_root("inside"), O_WRONLY | O_TRUNC));
	EXPECT_ERRNO(truncate(in_out("secret"), 0), EACCES);
	EXPECT(stat(in_out("secret"), &st) == 0 && st.st_size > 0, "the outside file was truncated");
	return 0;
}

static int tcp_connect(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(fx.tcp_port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return -1;
	r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (r < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return 0;
}

static int tcp_bind_any(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return -1;
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (r < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return 0;
}

static int c_tcp_none_inner(void)
{
	EXPECT_ERRNO(tcp_connect(), EACCES);
	EXPECT_ERRNO(tcp_bind_any(), EACCES);
	return 0;
}

static int c_tcp_host_inner(void)
{
	EXPECT_OK(tcp_connect());
	EXPECT_OK(tcp_bind_any());
	return 0;
}

static int c_tcp(void)
{
	if (run_confined(CORRAL_NET_NONE, c_tcp_none_inner) != 0)
		FAILF("network none");
	if (run_confined(CORRAL_NET_HOST, c_tcp_host_inner) != 0)
		FAILF("network host");
	return 0;
}

static int c_signal(void)
{
	pid_t sib;
	int status;

	/* The parent is outside the sandbox. */
	EXPECT_ERRNO(kill(getppid(), 0), EPERM);
	EXPECT_ERRNO(kill(getppid(), SIGCONT), EPERM);
	/* A process created inside is in the same domain. */
	sib = fork();
	if (sib == 0) {
		pause();
		_exit(0);
	}
	EXPECT(sib > 0, "fork: %s", strerror(errno));
	EXPECT_OK(kill(sib, 0));
	EXPECT_OK(kill(sib, SIGTERM));
	EXPECT(waitpid(sib, &status, 0) == sib && WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM,
	       "sibling not killed by SIGTERM");
	return 0;
}

/*
 * IOCTL_DEV: device ioctls only on terminals. Two ptys made by the parent:
 * the command inherits the first (its own terminal: reopened by path, as
 * a terminal program would, and ioctls work); the second is another
 * terminal of the same uid, which it cannot open at all.
 */
static char pts_path[64], other_pts_path[64];

static int c_ioctl_dev(void)
{
	struct termios t;
	int fd;

	fd = open(pts_path, O_RDWR | O_NOCTTY | O_CLOEXEC);
	EXPECT(fd >= 0, "open %s: %s", pts_path, strerror(errno));
	EXPECT_OK(ioctl(fd, TCGETS, &t));
	close(fd);
	EXPECT_ERRNO(open(other_pts_path, O_RDWR | O_NOCTTY | O_CLOEXEC), EACCES);
	EXPECT_ERRNO(open(other_pts_path, O_RDONLY | O_NOCTTY | O_CLOEXEC), EACCES);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	EXPECT(fd >= 0, "open /dev/null: %s", strerror(errno));
	/* Outside the sandbox this is ENOTTY; Landlock refuses before the driver sees it. */
	EXPECT_ERRNO(ioctl(fd, TCGETS, &t), EACCES);
	close(fd);
	return 0;
}

static int open_pty(char *name, size_t size, int *slave)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || ptsname_r(m, name, size) != 0)
		return -1;
	if (slave) {
		*slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (*slave < 0)
			return -1;
	}
	return m;
}

static int c_ioctl_dev_outer(void)
{
	int m, m2, s = -1, r;

	m = open_pty(pts_path, sizeof(pts_path), &s);
	m2 = open_pty(other_pts_path, sizeof(other_pts_path), NULL);
	if (m < 0 || m2 < 0)
		skip_or_fail("no pseudo-terminals here");
	confined_ttys[0] = (struct corral_ll_stdio){
		.fd = s, .access = CORRAL_LL_STDIO_READ | CORRAL_LL_STDIO_WRITE | CORRAL_LL_STDIO_TTY
	};
	n_confined_ttys = 1;
	r = run_confined(CORRAL_NET_NONE, c_ioctl_dev);
	n_confined_ttys = 0;
	close(s);
	close(m);
	close(m2);
	return r;
}

/* /proc/PID of a process outside the sandbox is closed (Landlock's ptrace rule). */
static int c_ptrace(void)
{
	char path[64];
	pid_t sib;
	int status;

	/*
	 * As the supervisor does: no capabilities. With CAP_SYS_ADMIN, uid 0
	 * could still read another domain's /proc/PID/environ on 6.18.
	 */
	capng_clear(CAPNG_SELECT_BOTH);
	EXPECT(capng_apply(CAPNG_SELECT_BOTH) == 0, "capng_apply");
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)getppid());
	EXPECT_ERRNO(try_open(path, O_RDONLY), EACCES);
	EXPECT_ERRNO(ptrace(PTRACE_ATTACH, getppid(), NULL, NULL), EPERM);
	/* Positive controls: its own /proc entries, and a process it created. */
	EXPECT_OK(try_open("/proc/self/environ", O_RDONLY));
	sib = fork();
	if (sib == 0) {
		pause();
		_exit(0);
	}
	EXPECT(sib > 0, "fork: %s", strerror(errno));
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)sib);
	EXPECT_OK(try_open(path, O_RDONLY));
	kill(sib, SIGKILL);
	waitpid(sib, &status, 0);
	return 0;
}

static int abstract_connect(const char *name, socklen_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return -1;
	memcpy(sa.sun_path, name, len);
	r = connect(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len));
	if (r < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return 0;
}

static int abstract_listen(const char *name, socklen_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	memcpy(sa.sun_path, name, len);
	if (bind(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) < 0 ||
	    listen(fd, 4) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int c_abstract_unix(void)
{
	char name[64];
	socklen_t len;
	int lfd, sv[2];

	EXPECT_ERRNO(abstract_connect(fx.abstract, fx.abstract_len), EPERM);
	/* Positive controls: an abstract socket created inside, and socketpair. */
	len = (socklen_t)snprintf(name, sizeof(name), "%ccorral-ll-inside-%d", 0, (int)getpid());
	lfd = abstract_listen(name, len);
	EXPECT(lfd >= 0, "listen inside: %s", strerror(errno));
	EXPECT_OK(abstract_connect(name, len));
	close(lfd);
	EXPECT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	close(sv[0]);
	close(sv[1]);
	return 0;
}

/* A rule on a non-directory carries file rights only, and grants just that file. */
static int c_file_rule_inner(void)
{
	EXPECT_OK(try_open("/etc/passwd", O_RDONLY));
	EXPECT_ERRNO(try_open("/etc/hostname", O_RDONLY), EACCES);
	EXPECT_ERRNO(try_open("/etc", O_RDONLY | O_DIRECTORY), EACCES);
	return 0;
}

static int c_file_rule(void)
{
	static char *ro[] = { "/usr", "/lib", "/lib64", "/bin", "/etc/passwd", NULL };
	struct corral_policy p;

	if (access("/etc/hostname", F_OK) < 0)
		skip_or_fail("/etc/hostname missing on this host");
	policy_init(&p, CORRAL_NET_NONE);
	p.fs.read_only.v = ro;
	p.fs.read_only.n = 5;
	return run_confined_policy(&p, c_file_rule_inner);
}

/* A path the user asked for that is missing is an error naming it; a missing default is skipped. */
static int c_missing_paths(void)
{
	static char *ro[] = { "/usr", "/libx32-corral-missing", NULL };
	static char *ro_default[] = { "/usr", "/libx32", "/lib32", NULL };
	struct corral_posture ps = {};
	struct corral_ll_plan *plan = NULL;
	struct corral_error err = {};
	struct corral_policy p;
	int r;

	policy_init(&p, CORRAL_NET_NONE);
	p.fs.read_only.v = ro;
	p.fs.read_only.n = 2;
	r = corral_ll_plan_new(&p, fx.root, &ps, &plan, &err);
	EXPECT(r == -ENOENT, "missing read_only path: r=%d", r);
	EXPECT(err.code == CORRAL_E_NOT_FOUND, "code %d", err.code);
	EXPECT(strstr(err.message, "/libx32-corral-missing") && strstr(err.message, "fs.read_only"),
	       "message does not name the path: %s", err.message);

	memset(&err, 0, sizeof(err));
	p.fs.read_only.v = ro_default;
	p.fs.read_only.n = 3;
	r = corral_ll_plan_new(&p, fx.root, &ps, &plan, &err);
	EXPECT(r == 0, "missing default path not skipped: %s", err.message);
	corral_ll_plan_free(plan);

	memset(&err, 0, sizeof(err));
	p.fs.read_only.n = 0;
	{
		char *rw[] = { (char *)in_out("no-such-dir"), NULL };
		p.fs.read_write.v = rw;
		p.fs.read_write.n = 1;
		r = corral_ll_plan_new(&p, fx.root, &ps, &plan, &err);
		EXPECT(r == -ENOENT && err.code == CORRAL_E_NOT_FOUND && strstr(err.message, "no-such-dir"),
		       "missing read_write path: r=%d %s", r, err.message);
	}
	/* A read-only path inside the writable root cannot be made read-only. */
	memset(&err, 0, sizeof(err));
	p.fs.read_write.n = 0;
	EXPECT_OK(mkdir(in_root("ro-sub"), 0700));
	{
		char *ro_in[] = { (char *)in_root("ro-sub"), NULL };

		p.fs.read_only.v = ro_in;
		p.fs.read_only.n = 1;
		r = corral_ll_plan_new(&p, fx.root, &ps, &plan, &err);
		EXPECT(r == -EINVAL && err.code == CORRAL_E_POLICY && strstr(err.message, "ro-sub") &&
		       strstr(err.message, "stay writable"), "read_only inside the root: r=%d %s", r,
		       err.message);
		p.fs.read_only.n = 0;
	}
	memset(&err, 0, sizeof(err));
	r = corral_ll_plan_new(&p, in_out("no-root"), &ps, &plan, &err);
	EXPECT(r < 0 && err.code == CORRAL_E_NOT_FOUND && strstr(err.message, "no-root"),
	       "missing root: r=%d %s", r, err.message);
	return 0;
}

/* The private tmp passed per run gets every right; without it, nothing. */
static int extra_fd = -1;
static char extra_dir[64];

static int c_private_tmp_inner(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/t", extra_dir);
	if (extra_fd >= 0) {
		EXPECT_OK(write_file(path, "t"));
		EXPECT_OK(unlink(path));
	} else {
		EXPECT_ERRNO(write_file(path, "t"), EACCES);
	}
	return 0;
}

static int c_private_tmp(void)
{
	struct corral_policy p;
	struct corral_posture ps = {};
	struct corral_ll_plan *plan = NULL;
	struct corral_error err = {};

	snprintf(extra_dir, sizeof(extra_dir), "%s", in_out("tmp"));
	EXPECT_OK(mkdir(extra_dir, 0700));
	policy_init(&p, CORRAL_NET_NONE);
	EXPECT(corral_ll_plan_new(&p, fx.root, &ps, &plan, &err) == 0, "plan: %s", err.message);
	for (int pass = 0; pass < 2; pass++) {
		int rfd, status;
		pid_t pid;

		extra_fd = pass == 0 ? open(extra_dir, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
		rfd = corral_ll_ruleset(plan, extra_fd, NULL, 0, &err);
		EXPECT(rfd >= 0, "ruleset: %s", err.message);
		pid = fork();
		if (pid == 0) {
			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || corral_ll_restrict_self(rfd) < 0)
				_exit(2);
			_exit(c_private_tmp_inner());
		}
		close(rfd);
		EXPECT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		       "pass %d failed", pass);
		if (extra_fd >= 0)
			close(extra_fd);
	}
	corral_ll_plan_free(plan);
	return 0;
}

/* corral_ll_ruleset from many threads at once, on one plan. */
static struct corral_ll_plan *shared_plan;

static void *ruleset_thread(void *arg)
{
	for (int i = 0; i < 50; i++) {
		int fd = corral_ll_ruleset(shared_plan, -1, NULL, 0, NULL);

		if (fd < 0)
			return (void *)1;
		close(fd);
	}
	return NULL;
}

static int c_threads(void)
{
	struct corral_policy p;
	struct corral_posture ps = {};
	struct corral_error err = {};
	pthread_t t[8];
	struct timespec a, b;
	int fd;
	double us;

	policy_init(&p, CORRAL_NET_NONE);
	EXPECT(corral_ll_plan_new(&p, fx.root, &ps, &shared_plan, &err) == 0, "plan: %s", err.message);
	for (size_t i = 0; i < 8; i++)
		EXPECT(pthread_create(&t[i], NULL, ruleset_thread, NULL) == 0, "pthread_create");
	for (size_t i = 0; i < 8; i++) {
		void *ret;
		pthread_join(t[i], &ret);
		EXPECT(ret == NULL, "a thread failed to build a ruleset");
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < 200; i++) {
		fd = corral_ll_ruleset(shared_plan, -1, NULL, 0, NULL);
		EXPECT(fd >= 0, "ruleset");
		close(fd);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	us = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / 200;
	fprintf(stderr, "corral_ll_ruleset: %.1f us per call\n", us);
	corral_ll_plan_free(shared_plan);
	return 0;
}

/* ---------------------------------------------- pretended lower ABIs */

static const struct corral_promise *find(const struct corral_posture *ps, const char *id)
{
	for (size_t i = 0; i < ps->n; i++)
		if (strcmp(ps->items[i].id, id) == 0)
			return &ps->items[i];
	return NULL;
}

static int posture_at(int abi, int network, struct corral_posture *ps)
{
	struct corral_policy p;
	struct corral_ll_plan *plan = NULL;
	struct corral_error err = {};
	char v[8];

	snprintf(v, sizeof(v), "%d", abi);
	setenv("CORRAL_TEST_LANDLOCK_ABI", v, 1);
	policy_init(&p, network);
	memset(ps, 0, sizeof(*ps));
	if (corral_ll_plan_new(&p, fx.root, ps, &plan, &err) < 0)
		FAILF("plan at ABI %d: %s", abi, err.message);
	if (corral_ll_plan_abi(plan) != abi)
		FAILF("plan ABI %d, wanted %d", corral_ll_plan_abi(plan), abi);
	corral_ll_plan_free(plan);
	unsetenv("CORRAL_TEST_LANDLOCK_ABI");
	return 0;
}

static int c_pretend_abi2(void)
{
	static const struct {
		const char *id;
		int state;
		const char *why;
	} want[] = {
		{ "fs.write", CORRAL_PROMISE_ENFORCED, NULL },
		{ "fs.read", CORRAL_PROMISE_ENFORCED, NULL },
		{ "fs.refer", CORRAL_PROMISE_ENFORCED, NULL },
		{ "scope.ptrace", CORRAL_PROMISE_ENFORCED, NULL },
		{ "fs.truncate", CORRAL_PROMISE_DROPPED,
		  "truncate outside the root (fs.truncate): needs Landlock ABI 3, kernel has 2" },
		{ "net.tcp_landlock", CORRAL_PROMISE_DROPPED, "needs Landlock ABI 4, kernel has 2" },
		{ "fs.ioctl_dev", CORRAL_PROMISE_DROPPED, "needs Landlock ABI 5, kernel has 2" },
		{ "scope.signal", CORRAL_PROMISE_DROPPED, "needs Landlock ABI 6, kernel has 2" },
		{ "scope.abstract_unix", CORRAL_PROMISE_DROPPED, "needs Landlock ABI 6, kernel has 2" },
	};
	struct corral_posture ps;

	need_abi(3, "pretending ABI 2");
	if (posture_at(2, CORRAL_NET_NONE, &ps))
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		const struct corral_promise *pr = find(&ps, want[i].id);

		EXPECT(pr, "%s missing from the posture", want[i].id);
		EXPECT(pr->state == want[i].state, "%s: state %d, wanted %d (%s)", want[i].id, pr->state,
		       want[i].state, pr->why);
		EXPECT(!want[i].why || strstr(pr->why, want[i].why), "%s: why '%s' lacks '%s'", want[i].id,
		       pr->why, want[i].why);
	}
	/* The first dropped promise is what strict mode refuses with. */
	EXPECT(strcmp(corral_posture_first_dropped(&ps)->why,
		      "truncate outside the root (fs.truncate): needs Landlock ABI 3, kernel has 2") == 0,
	       "first dropped: %s", corral_posture_first_dropped(&ps)->why);

	/* Network host: the TCP promise is not asked for, so not dropped. */
	if (posture_at(2, CORRAL_NET_HOST, &ps))
		return 1;
	EXPECT(find(&ps, "net.tcp_landlock")->state == CORRAL_PROMISE_NA, "tcp under host not n/a");
	return 0;
}

static int c_pretend_abi0(void)
{
	struct corral_posture ps;
	struct corral_policy p;
	struct corral_ll_plan *plan = NULL;
	struct corral_error err = {};
	const char *ids[] = { "fs.write", "fs.read", "fs.refer", "scope.ptrace", "fs.truncate",
			      "scope.signal" };

	need_abi(1, "pretending ABI 0");
	if (posture_at(0, CORRAL_NET_NONE, &ps))
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(ids); i++) {
		const struct corral_promise *pr = find(&ps, ids[i]);

		EXPECT(pr && pr->state == CORRAL_PROMISE_DROPPED, "%s not dropped at ABI 0", ids[i]);
		EXPECT(strstr(pr->why, "kernel has 0"), "%s: %s", ids[i], pr->why);
	}
	EXPECT(strstr(find(&ps, "fs.write")->why, "needs Landlock ABI 1, kernel has 0"), "%s",
	       find(&ps, "fs.write")->why);
	/* Nothing to apply: asking for a ruleset is a clear error, never an empty sandbox. */
	setenv("CORRAL_TEST_LANDLOCK_ABI", "0", 1);
	policy_init(&p, CORRAL_NET_NONE);
	EXPECT(corral_ll_plan_new(&p, fx.root, &ps, &plan, &err) == 0, "plan: %s", err.message);
	EXPECT(corral_ll_ruleset(plan, -1, NULL, 0, &err) < 0 && err.code == CORRAL_E_UNSUPPORTED,
	       "ruleset at ABI 0 did not fail");
	corral_ll_plan_free(plan);
	unsetenv("CORRAL_TEST_LANDLOCK_ABI");
	/* Never higher than the kernel: the override only lowers. */
	setenv("CORRAL_TEST_LANDLOCK_ABI", "99", 1);
	EXPECT(corral_landlock_abi() == fx.kernel_abi, "override raised the ABI");
	unsetenv("CORRAL_TEST_LANDLOCK_ABI");
	return 0;
}

/* Best-effort on a pretended ABI 2: the drop is real (truncate outside works). */
static int c_pretend_truncate_inner(void)
{
	EXPECT_OK(truncate(in_out("secret"), 1));
	EXPECT_ERRNO(try_open(in_out("secret"), O_WRONLY), EACCES);
	return 0;
}

/*
 * ABI 1 has no REFER right, and the kernel then denies every reparenting:
 * fs.refer holds, more strictly (even within the root).
 */
static int c_pretend_abi1_inner(void)
{
	EXPECT_OK(write_file(in_root("a"), "a"));
	EXPECT_OK(mkdir(in_root("sub"), 0700));
	EXPECT_OK(rename(in_root("a"), in_root("b")));
	EXPECT_OK(link(in_root("b"), in_root("c")));
	EXPECT_ERRNO(rename(in_root("b"), in_root("sub/b")), EXDEV);
	EXPECT_ERRNO(link(in_out("secret"), in_root("stolen")), EXDEV);
	EXPECT_ERRNO(try_open(in_out("secret"), O_RDONLY), EACCES);
	return 0;
}

static int c_pretend_abi1(void)
{
	struct corral_posture ps;
	int r;

	need_abi(2, "pretending ABI 1");
	if (posture_at(1, CORRAL_NET_NONE, &ps))
		return 1;
	EXPECT(find(&ps, "fs.refer")->state == CORRAL_PROMISE_ENFORCED, "fs.refer at ABI 1");
	setenv("CORRAL_TEST_LANDLOCK_ABI", "1", 1);
	r = run_confined(CORRAL_NET_NONE, c_pretend_abi1_inner);
	unsetenv("CORRAL_TEST_LANDLOCK_ABI");
	return r;
}

static int c_pretend_real(void)
{
	int r;

	need_abi(3, "pretending ABI 2");
	setenv("CORRAL_TEST_LANDLOCK_ABI", "2", 1);
	r = run_confined(CORRAL_NET_NONE, c_pretend_truncate_inner);
	unsetenv("CORRAL_TEST_LANDLOCK_ABI");
	return r;
}

/* corral_probe: the report's shape, and strict vs best-effort at a pretended ABI 2. */
static int c_probe(void)
{
	struct corral_policy p;
	struct corral_error err = {};
	char *json = NULL;
	json_t *o, *refusal;
	struct timespec a, b;
	double ms;

	need_abi(3, "pretending ABI 2");
	policy_init(&p, CORRAL_NET_NONE);
	p.root = fx.root;
	/* As root the default identity (nobody) cannot write the 0700 root: run and probe refuse that first. */
	if (geteuid() == 0)
		p.user = "root";
	clock_gettime(CLOCK_MONOTONIC, &a);
	EXPECT(corral_probe(&p, &json, &err) == 0, "probe: %s", err.message);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
	fprintf(stderr, "corral_probe: %.1f ms\n", ms);
	o = json_loads(json, 0, NULL);
	EXPECT(o, "probe output is not JSON: %s", json);
	EXPECT(json_integer_value(json_object_get(o, "landlock_abi")) == fx.kernel_abi, "landlock_abi");
	EXPECT(json_is_boolean(json_object_get(o, "seccomp")), "seccomp");
	EXPECT(json_is_boolean(json_object_get(o, "user_namespaces")), "user_namespaces");
	EXPECT(json_is_boolean(json_object_get(o, "docker")), "docker");
	EXPECT(json_is_boolean(json_object_get(o, "running_as_root")), "running_as_root");
	EXPECT(json_is_true(json_object_get(o, "fs_confined")), "fs_confined");
	EXPECT(json_is_boolean(json_object_get(o, "egress")), "egress");
	EXPECT(json_array_size(json_object_get(o, "promises")) > 8, "promises");
	/* Network none keeps the command off the network only with the socket filter. */
	EXPECT(json_is_true(json_object_get(o, "egress")) == !corral_seccomp_available(),
	       "egress under none with seccomp %s", corral_seccomp_available() ? "available" : "absent");
	json_decref(o);
	free(json);

	p.network = CORRAL_NET_HOST;
	EXPECT(corral_probe(&p, &json, &err) == 0, "probe: %s", err.message);
	o = json_loads(json, 0, NULL);
	EXPECT(json_is_true(json_object_get(o, "egress")), "network host without egress");
	json_decref(o);
	free(json);

	setenv("CORRAL_TEST_LANDLOCK_ABI", "2", 1);
	p.network = CORRAL_NET_NONE;
	EXPECT(corral_probe(&p, &json, &err) == 0, "probe: %s", err.message);
	o = json_loads(json, 0, NULL);
	EXPECT(json_integer_value(json_object_get(o, "landlock_abi")) == 2, "pretended ABI not reported");
	EXPECT(json_is_false(json_object_get(o, "runnable")), "strict at ABI 2 is runnable");
	refusal = json_object_get(o, "refusal");
	EXPECT(json_is_string(refusal) &&
	       strcmp(json_string_value(refusal),
		      "truncate outside the root (fs.truncate): needs Landlock ABI 3, kernel has 2") == 0,
	       "refusal: %s", json_string_value(refusal));
	json_decref(o);
	free(json);

	p.compat = CORRAL_COMPAT_BEST_EFFORT;
	EXPECT(corral_probe(&p, &json, &err) == 0, "probe: %s", err.message);
	o = json_loads(json, 0, NULL);
	EXPECT(json_is_true(json_object_get(o, "runnable")), "best-effort at ABI 2 not runnable");
	EXPECT(json_is_null(json_object_get(o, "refusal")) || !json_object_get(o, "refusal"),
	       "best-effort has a refusal");
	json_decref(o);
	free(json);
	unsetenv("CORRAL_TEST_LANDLOCK_ABI");
	return 0;
}

/* ------------------------------------------------------------ driver */

static int confined(int (*fn)(void))
{
	return run_confined(CORRAL_NET_NONE, fn);
}

static const struct {
	const char *name;
	int abi;                 /* kernel ABI needed */
	int (*fn)(void);         /* run in the sandbox (confined) or as is */
	bool sandboxed;
} cases[] = {
	{ "write", 1, c_write, true },
	{ "read", 1, c_read, true },
	{ "exec", 1, c_exec, true },
	{ "refer", 2, c_refer, true },
	{ "truncate", 3, c_truncate, true },
	{ "tcp", 4, c_tcp, false },
	{ "signal", 6, c_signal, true },
	{ "abstract-unix", 6, c_abstract_unix, true },
	{ "ptrace", 1, c_ptrace, true },
	{ "ioctl-dev", 5, c_ioctl_dev_outer, false },
	{ "file-rule", 1, c_file_rule, false },
	{ "missing-paths", 0, c_missing_paths, false },
	{ "private-tmp", 1, c_private_tmp, false },
	{ "threads", 1, c_threads, false },
	{ "pretend-abi2", 0, c_pretend_abi2, false },
	{ "pretend-abi0", 0, c_pretend_abi0, false },
	{ "pretend-abi1", 0, c_pretend_abi1, false },
	{ "pretend-real", 0, c_pretend_real, false },
	{ "probe", 0, c_probe, false },
};

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path);
	return 0;
}

static int setup(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t salen = sizeof(sa);
	int fd;

	strcpy(fx.root, "/tmp/corral-ll-root.XXXXXX");
	strcpy(fx.out, "/tmp/corral-ll-out.XXXXXX");
	if (!mkdtemp(fx.root) || !mkdtemp(fx.out))
		FAILF("mkdtemp: %s", strerror(errno));
	if (write_file(in_out("secret"), "secret\n") < 0 || write_file(in_root("inside"), "inside\n") < 0)
		FAILF("fixture files: %s", strerror(errno));

	/* Listeners outside the sandbox, kept open by the parent for every child. */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &salen) < 0)
		FAILF("tcp listener: %s", strerror(errno));
	fx.tcp_port = ntohs(sa.sin_port);
	fx.abstract_len = (socklen_t)snprintf(fx.abstract, sizeof(fx.abstract), "%ccorral-ll-outside-%d",
					      0, (int)getpid());
	if (abstract_listen(fx.abstract, fx.abstract_len) < 0)
		FAILF("abstract listener: %s", strerror(errno));
	return 0;
}

int main(int argc, char **argv)
{
	int r = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: %s CASE\n", argv[0]);
		for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
			fprintf(stderr, "  %s\n", cases[i].name);
		return 2;
	}
	unsetenv("CORRAL_TEST_LANDLOCK_ABI");
	fx.kernel_abi = corral_landlock_abi();
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		if (strcmp(cases[i].name, argv[1]) != 0)
			continue;
		need_abi(cases[i].abi, cases[i].name);
		if (setup() != 0)
			return 1;
		r = cases[i].sandboxed ? confined(cases[i].fn) : cases[i].fn();
		nftw(fx.root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		nftw(fx.out, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		if (r == 0)
			printf("ok %s (Landlock ABI %d, uid %u)\n", cases[i].name, fx.kernel_abi,
			       (unsigned)getuid());
		return r == 0 ? 0 : 1;
	}
	fprintf(stderr, "unknown case %s\n", argv[1]);
	return 2;
}
