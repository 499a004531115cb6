/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * corral_check: prove on this host that a policy's promises hold. Not what
 * the code intends — what the kernel does: every canary (supervisor/
 * canaries.c) runs as a confined command through corral_sandbox_exec, the
 * path `corral run` takes, against targets check sets up outside the
 * sandbox (a scratch "outside" directory, loopback listeners, a Unix
 * socket, a pty, a sleeping process of the sandbox's own uid). Each canary
 * pairs its attack with a positive control; where the effect is visible
 * from outside (a connection accepted, a datagram received, a file
 * changed, a daemon alive after the run) check looks for it itself rather
 * than trust the canary's word.
 */
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "internal/fileio.h"
#include "internal/procstat.h"
#include "policy/policy.h"
#include "supervisor/check/canary.h"
#include "supervisor/exec/sandbox.h"

#define CANARY_TIMEOUT 10.0        /* seconds: a canary that hangs is a finding, not a stall */
#define DEADLINE_TIMEOUT 0.5       /* the deadline canary's own, short, timeout */
#define DEADLINE_RETRY 3.0         /* ... again, when a busy host did not start the daemon in time */
#define CPU_TEST_SECONDS 1         /* RLIMIT_CPU of the derived sandbox that proves the CPU limit */
#define CPU_SPIN_MS "3000"         /* CPU the CPU canary burns when nothing stops it (limit 1 s, hard 2 s) */
#define CPU_SPIN_WALL "8"          /* ... within this many seconds of wall time */
#define OUTPUT_TEST_MAX (8u << 20) /* larger output caps are proven at 1M instead */
#define PROCS_TEST_MAX 1024        /* larger process limits are proven at 64 instead */
#define VICTIM_TEXT "corral-check victim: must stay as it is\n"
#define SECRET_TEXT "corral-check secret: must not be read\n"

enum { R_HELD, R_BROKEN, R_INCONCLUSIVE, R_NA };
static const char *const result_names[] = { "held", "broken", "inconclusive", "not_applicable" };

/* The groups of the report: corral_promises[] entries of kind CORRAL_PK_CHECK, in table order. */
#define N_PROMISES CORRAL_P__COUNT
/* A canary whose verdict no posture entry adjusts. */
#define NO_POSTURE CORRAL_P__COUNT

struct promise_acc {
	json_t *canaries;
	int n[4];
	char why[512]; /* first not-applicable reason */
	int n_dropped; /* canaries that got through a mechanism compat best-effort dropped */
	char dropped_why[512];
};

struct check {
	struct corral_policy *pol;    /* the policy with check's root and the exe paths */
	struct corral_sandbox *sb;
	char *exe;
	char scratch[64];
	char root[128], outside[128];
	int scratch_fd;
	uid_t uid;
	gid_t gid;

	pid_t sleeper;
	int tcp[2], udp[2];          /* [0] IPv4, [1] IPv6; -1 when unavailable */
	int port_tcp[2], port_udp[2];
	int unix_fd, abstract_fd;
	char unix_path[160], abstract_name[64];
	int pty_master, pty_slave;
	int canary_stdin; /* >= 0: the canaries' stdin (exec_canary), else /dev/null */
	char pts[64];

	bool outside_covered;        /* a policy path covers the outside directory */

	struct promise_acc acc[N_PROMISES];
};

static struct promise_acc *acc_of(struct check *c, enum corral_promise_id id)
{
	/* A group of the report, never a posture-only id. */
	if ((unsigned)id >= N_PROMISES || !(corral_promises[id].kinds & CORRAL_PK_CHECK))
		abort();
	return &c->acc[id];
}

/* One canary's result; |dropped|: see record_dropped. */
_printf_(6, 0) static void vrecord(struct check *c, enum corral_promise_id promise, const char *name, int result,
				   bool dropped, const char *fmt, va_list ap)
{
	struct promise_acc *a = acc_of(c, promise);
	char obs[2048];

	vsnprintf(obs, sizeof(obs), fmt, ap);
	if (dropped && !a->n_dropped++)
		snprintf(a->dropped_why, sizeof(a->dropped_why), "%.500s", obs);
	a->n[result]++;
	if (result == R_NA && !a->why[0])
		snprintf(a->why, sizeof(a->why), "%.500s", obs);
	json_array_append_new(a->canaries, json_pack("{s:s,s:s,s:s}", "name", name, "result",
						      result_names[result], "observed", obs));
}

_printf_(5, 6) static void record(struct check *c, enum corral_promise_id promise, const char *name, int result,
				  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vrecord(c, promise, name, result, false, fmt, ap);
	va_end(ap);
}

/*
 * A canary that got through because what stops it is, as the posture says,
 * not there: dropped under compat best-effort, or not promised in this
 * network mode. Not applicable rather than broken (the user was told), and
 * the whole promise is then reported not applicable with this reason,
 * never held on the strength of its other canaries.
 */
_printf_(4, 5) static void record_dropped(struct check *c, enum corral_promise_id promise, const char *name, const char *fmt,
					  ...)
{
	va_list ap;

	va_start(ap, fmt);
	vrecord(c, promise, name, R_NA, true, fmt, ap);
	va_end(ap);
}

/* The posture entry |id| of the check sandbox, or NULL. */
static const struct corral_promise *posture(const struct check *c, enum corral_promise_id id)
{
	return corral_posture_get(&c->sb->posture, id);
}

/*
 * The canary's own verdict line, adjusted: a broken result under a promise
 * that compat best-effort dropped is what the user was told, so it is not
 * applicable rather than broken.
 */
static void record_line(struct check *c, enum corral_promise_id promise, const char *name, enum corral_promise_id posture_id,
			const char *line)
{
	const struct corral_promise *pp = posture(c, posture_id);
	char word[32] = "";
	const char *rest = "";
	int result = R_INCONCLUSIVE;

	if (line) {
		size_t n = strcspn(line, " \n");

		snprintf(word, sizeof(word), "%.*s", (int)(n < sizeof(word) ? n : sizeof(word) - 1), line);
		rest = line[n] ? line + n + 1 : "";
	}
	if (strcmp(word, CANARY_HELD) == 0)
		result = R_HELD;
	else if (strcmp(word, CANARY_BROKEN) == 0)
		result = R_BROKEN;
	else if (strcmp(word, CANARY_NA) == 0)
		result = R_NA;
	else if (strcmp(word, CANARY_INCONCLUSIVE) == 0)
		result = R_INCONCLUSIVE;
	else
		rest = line && *line ? line : "no verdict from the canary";

	if (result == R_BROKEN && pp && pp->state == CORRAL_PROMISE_DROPPED) {
		record_dropped(c, promise, name, "%s (expected: %s was dropped under compat best-effort: %s)", rest,
			       pp->id, pp->why);
		return;
	}
	record(c, promise, name, result, "%s", rest);
}

/* ---------------------------------------------------------------- running */

/* First line of the captured stdout, without the newline (in place). */
static char *first_line(struct corral_result *res)
{
	char *nl;

	if (!res->stdout_buf || !res->stdout_len)
		return NULL;
	nl = memchr(res->stdout_buf, '\n', res->stdout_len);
	if (nl)
		*nl = '\0';
	return res->stdout_buf;
}

static int exec_canary(struct check *c, struct corral_sandbox *sb, const char *const *args, double timeout,
		       size_t max_output, struct corral_result *res, struct corral_error *err)
{
	const char *argv[16] = { c->exe, CANARY_VERB };
	size_t n = 2;

	for (size_t i = 0; args[i] && n < ARRAY_SIZE(argv) - 1; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (c->canary_stdin >= 0) {
		/*
		 * The canary's stdin is this terminal, as a command inherits its
		 * user's: check is single-threaded, so fd 0 is lent for the run.
		 */
		int saved = fcntl(0, F_DUPFD_CLOEXEC, 3), r;

		if (saved < 0 || dup2(c->canary_stdin, 0) < 0) {
			r = corral_err(err, CORRAL_E_SETUP, errno, "lending the terminal as stdin: %s",
				       corral_strerror(errno));
			safe_close(saved);
			return r;
		}
		r = corral_sandbox_exec(sb,
					&CORRAL_EXEC_OPTS(.argv = argv, .capture = true, .stdin_passthrough = true,
							  .timeout = timeout, .max_output = max_output),
					res, err);
		dup2(saved, 0);
		safe_close(saved);
		return r;
	}
	return corral_sandbox_exec(sb,
				   &CORRAL_EXEC_OPTS(.argv = argv, .capture = true, .timeout = timeout,
						     .max_output = max_output),
				   res, err);
}

/* What a run that ended without a verdict line looks like, for a report. */
static void describe_end(const struct corral_result *res, char *buf, size_t len)
{
	if (res->timed_out)
		snprintf(buf, len, "timed out");
	else if (res->signal)
		snprintf(buf, len, "was killed by SIG%s", corral_signal_abbrev(res->signal) ?: "?");
	else if (res->exec_errno)
		snprintf(buf, len, "could not be executed: %s", corral_strerror(res->exec_errno));
	else
		snprintf(buf, len, "exited %d", res->exit_status);
}

/*
 * Run one canary whose verdict is its own line. A corral error while
 * running it (a setup stage failing) makes the canary inconclusive.
 */
static void simple(struct check *c, enum corral_promise_id promise, const char *name, enum corral_promise_id posture_id,
		   const char *const *args)
{
	struct corral_result res = CORRAL_RESULT_INIT;
	struct corral_error err = {};
	char end[128];
	char *line;

	if (exec_canary(c, c->sb, args, CANARY_TIMEOUT, 0, &res, &err) < 0) {
		record(c, promise, name, R_INCONCLUSIVE, "corral could not run the canary: %s", err.message);
		return;
	}
	line = first_line(&res);
	if (!line || !*line) {
		describe_end(&res, end, sizeof(end));
		record(c, promise, name, R_INCONCLUSIVE, "no verdict: the canary %s (stderr: %.200s)", end,
		       res.stderr_buf ? res.stderr_buf : "");
	} else {
		record_line(c, promise, name, posture_id, line);
	}
	corral_result_clear(&res);
}

/* -------------------------------------------------------------- the setup */

static bool strv_covers(const struct corral_strv *v, const char *path)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->v[i] && corral_path_contains(v->v[i], path))
			return true;
	return false;
}

static bool policy_covers(const struct corral_policy *p, const char *path)
{
	return strv_covers(&p->fs.read_only, path) || strv_covers(&p->fs.read_write, path);
}

/*
 * The program and every file it has mapped (libcorral, libc, ...) must be
 * readable and executable in the sandbox for the canary to start: add
 * those no policy path covers as read-only files (files, not their
 * directories, so no more of the host opens up than the canary needs).
 */
static int add_exe_paths(struct check *c, struct corral_error *err)
{
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	FILE *f;
	int r = 0;

	if (!policy_covers(c->pol, c->exe)) {
		r = corral_policy_set(c->pol, "ro", c->exe, err);
		if (r < 0)
			return r;
	}
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return corral_err(err, CORRAL_E_SETUP, errno, "check: /proc/self/maps: %s", corral_strerror(errno));
	while (getline(&line, &cap, f) > 0) {
		char *path = strchr(line, '/');
		size_t n;

		if (!path)
			continue;
		n = strcspn(path, "\n");
		path[n] = '\0';
		if (strstr(path, " (deleted)") || access(path, R_OK) < 0 || policy_covers(c->pol, path))
			continue;
		r = corral_policy_set(c->pol, "ro", path, err);
		if (r < 0)
			break;
	}
	fclose(f);
	return r;
}

/* Remove |name| in |dfd| and everything beneath, never following a symlink. */
static void rm_rf_at(int dfd, const char *name)
{
	struct stat st;
	int fd;
	DIR *d;
	struct dirent *de;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlinkat(dfd, name, 0);
		return;
	}
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		/* A canary may have left a directory mode 000. */
		fchmodat(dfd, name, 0700, 0);
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd >= 0) {
		d = fdopendir(fd);
		if (!d) {
			close(fd);
		} else {
			while ((de = readdir(d)))
				if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
					rm_rf_at(dirfd(d), de->d_name);
			closedir(d);
		}
	}
	unlinkat(dfd, name, AT_REMOVEDIR);
}

/* A new file of check's scratch (never through a link), given to the sandbox's uid when |chown_it|. */
static int write_file(const char *path, const char *text, uid_t uid, gid_t gid, bool chown_it)
{
	int r = corral_write_file_at(AT_FDCWD, path, text, O_CREAT | O_EXCL | O_NOFOLLOW, 0600);

	if (r == 0 && chown_it && lchown(path, uid, gid) < 0)
		r = -errno;
	return r;
}

/*
 * The scratch directory, in the first candidate no policy path covers (a
 * policy that grants /tmp would make "outside" inside). When every one is
 * covered, /tmp is used and the filesystem canaries are not applicable.
 */
static int make_scratch(struct check *c, bool *outside_covered, struct corral_error *err)
{
	static const char *const bases[] = { "/tmp", "/var/tmp", "/dev/shm" };
	const char *base = bases[0];

	*outside_covered = true;
	for (size_t i = 0; i < ARRAY_SIZE(bases); i++) {
		char probe[80];
		struct stat st;

		snprintf(probe, sizeof(probe), "%s/corral-check-x/outside", bases[i]);
		if (stat(bases[i], &st) == 0 && S_ISDIR(st.st_mode) && !policy_covers(c->pol, probe)) {
			base = bases[i];
			*outside_covered = false;
			break;
		}
	}
	snprintf(c->scratch, sizeof(c->scratch), "%s/corral-check-XXXXXX", base);
	if (!mkdtemp(c->scratch)) {
		int e = errno;
		c->scratch[0] = '\0';
		return corral_err(err, CORRAL_E_SETUP, e, "check: scratch directory in %s: %s", base, corral_strerror(e));
	}
	/* Traversable by the sandbox's identity, listable by nobody else. */
	if (chmod(c->scratch, 0711) < 0)
		return corral_err(err, CORRAL_E_SETUP, errno, "check: chmod %s: %s", c->scratch, corral_strerror(errno));
	c->scratch_fd = open(c->scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(c->root, sizeof(c->root), "%s/root", c->scratch);
	snprintf(c->outside, sizeof(c->outside), "%s/outside", c->scratch);
	if (c->scratch_fd < 0 || mkdir(c->root, 0700) < 0 || mkdir(c->outside, 0700) < 0)
		return corral_err(err, CORRAL_E_SETUP, errno, "check: scratch directory %s: %s", c->scratch,
				  corral_strerror(errno));
	return 0;
}

struct saved_env {
	char *secret, *preload;
	bool planted_preload;
};

static void plant_env(const struct corral_policy *p, struct saved_env *s)
{
	const char *v;

	v = getenv(CANARY_SECRET_VAR);
	s->secret = v ? strdup(v) : NULL;
	setenv(CANARY_SECRET_VAR, "corral-check-planted-secret", 1);
	/* A policy that passes LD_PRELOAD on purpose gets it; then there is nothing to prove. */
	for (size_t i = 0; i < p->env.pass.n; i++)
		if (strcmp(p->env.pass.v[i], "LD_PRELOAD") == 0)
			return;
	v = getenv("LD_PRELOAD");
	s->preload = v ? strdup(v) : NULL;
	s->planted_preload = true;
	setenv("LD_PRELOAD", "/nonexistent/corral-check-preload.so", 1);
}

static void restore_env(struct saved_env *s)
{
	if (s->secret)
		setenv(CANARY_SECRET_VAR, s->secret, 1);
	else
		unsetenv(CANARY_SECRET_VAR);
	if (s->planted_preload) {
		if (s->preload)
			setenv("LD_PRELOAD", s->preload, 1);
		else
			unsetenv("LD_PRELOAD");
	}
	free(s->secret);
	free(s->preload);
	memset(s, 0, sizeof(*s));
}

static int listen_inet(int family, int type, int *port)
{
	struct sockaddr_storage ss = {};
	socklen_t len;
	int fd = socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -1;
	if (family == AF_INET6) {
		struct sockaddr_in6 *a = (void *)&ss;
		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (void *)&ss;
		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*a);
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || (type == SOCK_STREAM && listen(fd, 8) < 0) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return safe_close(fd);
	*port = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port :
					   ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

static int listen_unix(const char *name, bool abstract)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	int fd;

	if (n + 2 > sizeof(a.sun_path))
		return -1;
	memcpy(a.sun_path + (abstract ? 1 : 0), name, n);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1)) < 0 ||
	    listen(fd, 8) < 0)
		return safe_close(fd);
	/* Reachable by the sandbox's uid as far as file modes go: only the sandbox may stop it. */
	if (!abstract)
		chmod(name, 0777);
	return fd;
}

/* A connection or datagram that reached a listener, drained; true when something came. */
static bool listener_hit(int fd, bool stream)
{
	char buf[64];
	bool hit = false;

	if (fd < 0)
		return false;
	for (;;) {
		int a;

		if (stream) {
			a = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
			if (a < 0)
				break;
			close(a);
		} else if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) < 0) {
			break;
		}
		hit = true;
	}
	return hit;
}

static int open_pty(struct check *c, bool chown_it)
{
	c->pty_master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (c->pty_master < 0 || grantpt(c->pty_master) < 0 || unlockpt(c->pty_master) < 0 ||
	    ptsname_r(c->pty_master, c->pts, sizeof(c->pts)) != 0)
		return -1;
	c->pty_slave = open(c->pts, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (c->pty_slave < 0)
		return -1;
	if (chown_it && fchown(c->pty_slave, c->uid, c->gid) < 0)
		return -1;
	return 0;
}

/*
 * The target of the process canaries: a process of the sandbox's own uid
 * outside the sandbox (so file-mode and uid checks would let the attack
 * through, and only the sandbox can stop it), with a secret in its
 * environment. It is the program itself, exec'd as the "sleeper" canary.
 */
static int start_sleeper(struct check *c, bool switch_id, struct corral_error *err)
{
	char secret[96];
	char *argv[] = { c->exe, (char *)CANARY_VERB, (char *)"sleeper", NULL };
	char *envp[] = { secret, NULL };
	int p[2];
	pid_t pid;
	char b;

	snprintf(secret, sizeof(secret), "%s=corral-check-sleeper-secret", CANARY_SECRET_VAR);
	if (pipe2(p, O_CLOEXEC) < 0)
		return corral_err(err, CORRAL_E_SETUP, errno, "check: pipe: %s", corral_strerror(errno));
	pid = fork();
	if (pid == 0) {
		/* Only async-signal-safe calls: the host may have threads. */
		if (switch_id) {
			gid_t g = c->gid;

			if (syscall(SYS_setgroups, 1, &g) < 0 || syscall(SYS_setresgid, g, g, g) < 0 ||
			    syscall(SYS_setresuid, c->uid, c->uid, c->uid) < 0)
				_exit(127);
		}
		/* After the uid change, which clears it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		execve(c->exe, argv, envp);
		_exit(127);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return corral_err(err, CORRAL_E_SETUP, errno, "check: fork: %s", corral_strerror(errno));
	}
	c->sleeper = pid;
	/* EOF once it has exec'd (the pipe is close-on-exec). */
	while (read(p[0], &b, 1) < 0 && errno == EINTR)
		;
	close(p[0]);
	if (waitpid(pid, NULL, WNOHANG) == pid) {
		c->sleeper = -1;
		return corral_err(err, CORRAL_E_SETUP, ECHILD, "check: the outside sleeper process died at start");
	}
	return 0;
}

/* Alive after |grace_ms| (a signal is delivered asynchronously: give its effect time to show). */
static bool sleeper_alive(const struct check *c, int grace_ms)
{
	int st;

	for (int i = 0;; i += 5) {
		if (c->sleeper <= 0 || waitpid(c->sleeper, &st, WNOHANG) != 0)
			return false;
		if (i >= grace_ms)
			return true;
		usleep(5000);
	}
}

/* ---------------------------------------------------------- the canaries */

static void fs_canaries(struct check *c, bool outside_covered)
{
	const char *out = c->outside;
	struct stat st;
	DIR *d;
	struct dirent *de;
	char names[512] = "";
	bool intact = true;

	if (outside_covered) {
		static const enum corral_promise_id ids[] = { CORRAL_P_FS_WRITE, CORRAL_P_FS_READ };

		for (size_t i = 0; i < ARRAY_SIZE(ids); i++)
			record(c, ids[i], "outside", R_NA,
			       "every scratch location (/tmp, /var/tmp, /dev/shm) is inside a policy path: "
			       "nothing outside the policy's paths to aim at");
		return;
	}
	simple(c, CORRAL_P_FS_WRITE, "write-outside", CORRAL_P_FS_WRITE, (const char *[]){ "write-outside", out, NULL });
	simple(c, CORRAL_P_FS_WRITE, "traversal", CORRAL_P_FS_WRITE, (const char *[]){ "traversal", "../outside", NULL });
	simple(c, CORRAL_P_FS_WRITE, "symlink", CORRAL_P_FS_WRITE, (const char *[]){ "symlink", out, NULL });
	simple(c, CORRAL_P_FS_WRITE, "refer", CORRAL_P_FS_REFER, (const char *[]){ "refer", out, NULL });
	simple(c, CORRAL_P_FS_WRITE, "truncate", CORRAL_P_FS_TRUNCATE, (const char *[]){ "truncate", out, NULL });
	simple(c, CORRAL_P_FS_READ, "read-outside", CORRAL_P_FS_READ, (const char *[]){ "read-outside", out, NULL });

	/* From outside: the outside directory holds what check put there, unchanged. */
	d = opendir(out);
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || !strcmp(de->d_name, "secret") ||
		    !strcmp(de->d_name, "victim") || !strcmp(de->d_name, "sock"))
			continue;
		intact = false;
		if (strlen(names) + strlen(de->d_name) + 3 < sizeof(names))
			strcat(strcat(names, " "), de->d_name);
	}
	if (d)
		closedir(d);
	{
		char buf[128] = "";
		int fd = open(c->outside, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		int vfd = fd >= 0 ? openat(fd, "victim", O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
		ssize_t n = vfd >= 0 ? read(vfd, buf, sizeof(buf) - 1) : -1;

		if (n >= 0)
			buf[n] = '\0';
		if (vfd < 0 || fstat(vfd, &st) < 0 || strcmp(buf, VICTIM_TEXT) != 0) {
			intact = false;
			strncat(names, " victim changed or gone", sizeof(names) - strlen(names) - 1);
		}
		safe_close(vfd);
		safe_close(fd);
	}
	if (intact) {
		record(c, CORRAL_P_FS_WRITE, "outside-intact", R_HELD,
		       "the outside directory holds only what check put there, unchanged");
	} else {
		static const enum corral_promise_id ids[] = { CORRAL_P_FS_WRITE, CORRAL_P_FS_REFER, CORRAL_P_FS_TRUNCATE };
		const struct corral_promise *pp = NULL;

		for (size_t i = 0; i < ARRAY_SIZE(ids) && !pp; i++) {
			pp = posture(c, ids[i]);
			if (pp && pp->state != CORRAL_PROMISE_DROPPED)
				pp = NULL;
		}
		if (pp)
			record_dropped(c, CORRAL_P_FS_WRITE, "outside-intact",
				       "the outside directory changed:%s (expected: %s was dropped under compat best-effort: %s)",
				       names, pp->id, pp->why);
		else
			record(c, CORRAL_P_FS_WRITE, "outside-intact", R_BROKEN, "the outside directory changed:%s", names);
	}
}

static void net_canaries(struct check *c)
{
	int net = c->pol->network;
	bool host = net == CORRAL_NET_HOST;
	const char *fam[2] = { "4", "6" };
	const char *mode = host ? "host" : net == CORRAL_NET_LOOPBACK ? "loopback" : "none";

	for (int v = 0; v < 2; v++) {
		char port[16], name[16];
		struct corral_result res = CORRAL_RESULT_INIT;
		struct corral_error err = {};
		char *line;

		/* TCP */
		snprintf(name, sizeof(name), "tcp%s", fam[v]);
		if (c->tcp[v] < 0) {
			record(c, CORRAL_P_NET_NO_INET, name, R_NA, "no %s loopback listener could be opened on this host",
			       v ? "IPv6" : "IPv4");
		} else {
			snprintf(port, sizeof(port), "%d", c->port_tcp[v]);
			if (exec_canary(c, c->sb, (const char *[]){ "tcp", fam[v], port, NULL }, CANARY_TIMEOUT, 0,
					&res, &err) < 0) {
				record(c, CORRAL_P_NET_NO_INET, name, R_INCONCLUSIVE, "corral could not run the canary: %s",
				       err.message);
			} else {
				bool hit = listener_hit(c->tcp[v], true);

				const char *said;

				line = first_line(&res);
				said = line && strchr(line, ' ') ? strchr(line, ' ') + 1 : line;
				if (host)
					record(c, CORRAL_P_NET_NO_INET, name, R_NA,
					       "network host allows egress by design; the canary observed: %s%s",
					       said ? said : "nothing", hit ? " (the listener accepted it)" : "");
				else if (hit)
					record(c, CORRAL_P_NET_NO_INET, name, R_BROKEN,
					       "the host's listener on port %s accepted a connection (%s)", port,
					       line ? line : "");
				else
					record_line(c, CORRAL_P_NET_NO_INET, name, CORRAL_P_NET_NO_SOCKETS, line);
			}
			corral_result_clear(&res);
		}

		/* UDP: the listener says whether anything arrived. */
		snprintf(name, sizeof(name), "udp%s", fam[v]);
		if (c->udp[v] < 0) {
			record(c, CORRAL_P_NET_NO_INET, name, R_NA, "no %s loopback socket could be bound on this host",
			       v ? "IPv6" : "IPv4");
			continue;
		}
		snprintf(port, sizeof(port), "%d", c->port_udp[v]);
		if (exec_canary(c, c->sb, (const char *[]){ "udp", fam[v], port, NULL }, CANARY_TIMEOUT, 0, &res,
				&err) < 0) {
			record(c, CORRAL_P_NET_NO_INET, name, R_INCONCLUSIVE, "corral could not run the canary: %s",
			       err.message);
			continue;
		}
		line = first_line(&res);
		{
			bool hit = listener_hit(c->udp[v], false);
			const char *said = line && strchr(line, ' ') ? strchr(line, ' ') + 1 : line;

			if (host)
				record(c, CORRAL_P_NET_NO_INET, name, R_NA,
				       "network host allows egress by design; the canary observed: %s%s",
				       said ? said : "nothing", hit ? " (the datagram arrived)" : "");
			else if (hit)
				record(c, CORRAL_P_NET_NO_INET, name, R_BROKEN,
				       "a datagram from the sandbox arrived on the host's port %s", port);
			else if (line && strncmp(line, "sent ", 5) == 0)
				record(c, CORRAL_P_NET_NO_INET, name, R_HELD,
				       "sendto succeeded inside the sandbox's own network; nothing arrived on the host's port %s",
				       port);
			else
				record_line(c, CORRAL_P_NET_NO_INET, name, CORRAL_P_NET_NO_SOCKETS, line);
		}
		corral_result_clear(&res);
	}

	if (host)
		record(c, CORRAL_P_NET_NO_INET, "netlink", R_NA, "network host allows netlink by design");
	else
		simple(c, CORRAL_P_NET_NO_INET, "netlink", CORRAL_P_NET_NO_SOCKETS, (const char *[]){ "families", "netlink", NULL });
	simple(c, CORRAL_P_NET_FAMILIES, "packet-vsock", CORRAL_P_NET_NO_SOCKETS, (const char *[]){ "families", "other", NULL });

	/* Pathname Unix sockets: refused with socket() under "none"; Landlock ABI 9 otherwise. */
	{
		const struct corral_promise *ru = posture(c, CORRAL_P_FS_RESOLVE_UNIX);
		const struct corral_promise *um = posture(c, CORRAL_P_NET_UNIX_MEDIATED);
		bool promised;
		struct corral_result res = CORRAL_RESULT_INIT;
		struct corral_error err = {};

		if (um && um->state == CORRAL_PROMISE_ENFORCED && net != CORRAL_NET_NONE)
			ru = um; /* the supervisor's mediation (seccomp user notification) */
		promised = net == CORRAL_NET_NONE || (ru && ru->state == CORRAL_PROMISE_ENFORCED);
		if (c->unix_fd < 0) {
			record(c, CORRAL_P_NET_UNIX, "unix-path", R_NA, "no Unix socket could be bound in the scratch directory");
		} else if (c->outside_covered) {
			record(c, CORRAL_P_NET_UNIX, "unix-path", R_NA,
			       "the outside directory lies in a policy path, where Unix sockets are allowed");
		} else if (exec_canary(c, c->sb, (const char *[]){ "unix", "path", c->unix_path, NULL }, CANARY_TIMEOUT,
				       0, &res, &err) < 0) {
			record(c, CORRAL_P_NET_UNIX, "unix-path", R_INCONCLUSIVE, "corral could not run the canary: %s", err.message);
		} else {
			char *line = first_line(&res);
			bool hit = listener_hit(c->unix_fd, true);

			if (!promised && (hit || (line && strncmp(line, CANARY_BROKEN " ", 7) == 0)))
				record_dropped(c, CORRAL_P_NET_UNIX, "unix-path",
				       "network %s: pathname Unix sockets outside the root stay reachable until Landlock ABI 9 "
				       "(kernel has %d); the canary observed: %s", mode, corral_landlock_abi(),
				       line ? line : "nothing");
			else if (hit)
				record(c, CORRAL_P_NET_UNIX, "unix-path", R_BROKEN,
				       "check's Unix socket outside the root accepted a connection (%s)", line ? line : "");
			else
				record_line(c, CORRAL_P_NET_UNIX, "unix-path",
					    net == CORRAL_NET_NONE ? CORRAL_P_NET_NO_SOCKETS : ru ? ru->which : CORRAL_P_FS_RESOLVE_UNIX, line);
		}
		corral_result_clear(&res);
	}
	if (c->abstract_fd < 0) {
		record(c, CORRAL_P_NET_UNIX, "unix-abstract", R_NA, "no abstract Unix socket could be bound");
	} else {
		simple(c, CORRAL_P_NET_UNIX, "unix-abstract", net == CORRAL_NET_NONE ? CORRAL_P_NET_NO_SOCKETS : CORRAL_P_SCOPE_ABSTRACT_UNIX,
		       (const char *[]){ "unix", "abstract", c->abstract_name, NULL });
		if (listener_hit(c->abstract_fd, true))
			record(c, CORRAL_P_NET_UNIX, "unix-abstract-listener", R_BROKEN,
			       "check's abstract Unix socket accepted a connection");
	}
}

/*
 * Network "allow": a sandbox whose list also holds check's IPv4 TCP
 * listener; through its proxy the listener is reached (the control) and a
 * second, unlisted listener is refused and never sees a connection.
 */
static int derived_sandbox(struct check *c, const char *option, const char *value, struct corral_sandbox **out,
			   struct corral_error *err);

static void egress_canaries(struct check *c)
{
	struct corral_sandbox *sb = NULL;
	struct corral_result res = CORRAL_RESULT_INIT;
	struct corral_error err = {};
	char listed[32], port[16], other[16];
	int ufd, uport = 0;

	if (c->pol->network != CORRAL_NET_ALLOW) {
		record(c, CORRAL_P_NET_EGRESS_ALLOW, "egress", R_NA, "network \"%s\": no allow list",
		       corral_network_name(c->pol->network) ?: "?");
		return;
	}
	ufd = listen_inet(AF_INET, SOCK_STREAM, &uport);
	if (c->tcp[0] < 0 || ufd < 0) {
		record(c, CORRAL_P_NET_EGRESS_ALLOW, "egress", R_INCONCLUSIVE, "no IPv4 loopback listener could be opened");
		safe_close(ufd);
		return;
	}
	snprintf(port, sizeof(port), "%d", c->port_tcp[0]);
	snprintf(other, sizeof(other), "%d", uport);
	snprintf(listed, sizeof(listed), "127.0.0.1:%d", c->port_tcp[0]);
	if (derived_sandbox(c, "allow", listed, &sb, &err) < 0) {
		record(c, CORRAL_P_NET_EGRESS_ALLOW, "egress", R_INCONCLUSIVE, "a sandbox listing %s: %s", listed,
		       err.message);
	} else if (exec_canary(c, sb, (const char *[]){ "egress", port, other, NULL }, CANARY_TIMEOUT, 0, &res,
			       &err) < 0) {
		record(c, CORRAL_P_NET_EGRESS_ALLOW, "egress", R_INCONCLUSIVE, "corral could not run the canary: %s",
		       err.message);
	} else {
		if (listener_hit(ufd, true))
			record(c, CORRAL_P_NET_EGRESS_ALLOW, "egress-unlisted", R_BROKEN,
			       "the unlisted listener on 127.0.0.1:%s accepted a connection", other);
		record_line(c, CORRAL_P_NET_EGRESS_ALLOW, "egress", CORRAL_P_NET_EGRESS_ALLOW, first_line(&res));
		listener_hit(c->tcp[0], true); /* drained: the tcp canaries count from zero */
		corral_result_clear(&res);
	}
	corral_sandbox_free(sb);
	safe_close(ufd);
}

static void syscall_canaries(struct check *c)
{
	simple(c, CORRAL_P_SYSCALL_BYPASS, "io_uring", CORRAL_P_NET_NO_IO_URING, (const char *[]){ "io-uring", NULL });
#if defined(__x86_64__)
	simple(c, CORRAL_P_SYSCALL_BYPASS, "x32", CORRAL_P_SECCOMP_FOREIGN_ABI, (const char *[]){ "foreign-abi", "x32", NULL });
	simple(c, CORRAL_P_SYSCALL_BYPASS, "i386", CORRAL_P_SECCOMP_FOREIGN_ABI, (const char *[]){ "foreign-abi", "i386", NULL });
#else
	record(c, CORRAL_P_SYSCALL_BYPASS, "foreign-abi", R_NA, "the foreign-ABI canaries are written for x86_64");
#endif
}

static void process_canaries(struct check *c)
{
	char pid[16];

	const struct corral_promise *sig = posture(c, CORRAL_P_SCOPE_SIGNAL);
	struct corral_error err = {};

	snprintf(pid, sizeof(pid), "%d", c->sleeper);
	simple(c, CORRAL_P_PROC_ISOLATION, "signal", CORRAL_P_SCOPE_SIGNAL, (const char *[]){ "signal", pid, NULL });
	if (!sleeper_alive(c, 50)) {
		if (sig && sig->state == CORRAL_PROMISE_DROPPED)
			record_dropped(c, CORRAL_P_PROC_ISOLATION, "signal-victim",
				       "the outside process (pid %s) was killed (expected: scope.signal was dropped "
				       "under compat best-effort: %s)", pid, sig->why);
		else
			record(c, CORRAL_P_PROC_ISOLATION, "signal-victim", R_BROKEN,
			       "the outside process (pid %s) died while the signal canary ran", pid);
		/* A dead target would make the next canaries pass for nothing. */
		waitpid(c->sleeper, NULL, 0);
		c->sleeper = -1;
		if (start_sleeper(c, geteuid() == 0, &err) < 0) {
			record(c, CORRAL_P_PROC_ISOLATION, "ptrace", R_INCONCLUSIVE, "control failed: %s", err.message);
			return;
		}
		snprintf(pid, sizeof(pid), "%d", c->sleeper);
	}
	for (size_t i = 0; i < 4; i++) {
		static const char *const names[] = { "ptrace", "proc-pid", "prlimit", "sched" };
		static const char *const verbs[] = { "ptrace", "proc", "prlimit", "sched" };
		static const enum corral_promise_id postures[] = { CORRAL_P_SCOPE_PTRACE, CORRAL_P_SCOPE_PTRACE,
								   CORRAL_P_SECCOMP_DENY_TABLE, CORRAL_P_SECCOMP_DENY_TABLE };
		const char *name = names[i];
		struct corral_result res = CORRAL_RESULT_INIT;
		char *line;

		if (exec_canary(c, c->sb, (const char *[]){ verbs[i], pid, NULL }, CANARY_TIMEOUT, 0, &res,
				&err) < 0) {
			record(c, CORRAL_P_PROC_ISOLATION, name, R_INCONCLUSIVE, "corral could not run the canary: %s",
			       err.message);
			continue;
		}
		line = first_line(&res);
		/* A dead target (a zombie's /proc entries are open to anyone) proves nothing either way. */
		if (!sleeper_alive(c, 0))
			record(c, CORRAL_P_PROC_ISOLATION, name, R_INCONCLUSIVE,
			       "control failed: the outside process (pid %s) died while the canary ran (%s)", pid,
			       line ? line : "no verdict");
		else
			record_line(c, CORRAL_P_PROC_ISOLATION, name, postures[i], line);
		corral_result_clear(&res);
	}
	{
		/* A System V segment outside, 0666 so any uid the command runs as could attach it. */
		int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0666);
		char sid[16];

		if (id < 0) {
			record(c, CORRAL_P_PROC_ISOLATION, "sysv", R_INCONCLUSIVE,
			       "control failed: no System V segment could be made outside: %s", corral_strerror(errno));
			return;
		}
		snprintf(sid, sizeof(sid), "%d", id);
		simple(c, CORRAL_P_PROC_ISOLATION, "sysv", CORRAL_P_SECCOMP_DENY_TABLE, (const char *[]){ "sysv", sid, NULL });
		shmctl(id, IPC_RMID, NULL);
	}
	{
		const struct corral_promise *pp = posture(c, CORRAL_P_PROC_PRIVATE);

		if (!pp || pp->state != CORRAL_PROMISE_ENFORCED)
			record_dropped(c, CORRAL_P_PROC_PRIVATE, "proc-private", "%s",
				       pp ? pp->why : "proc \"private\" is not part of this policy");
		else if (sleeper_alive(c, 0))
			simple(c, CORRAL_P_PROC_PRIVATE, "proc-private", CORRAL_P_PROC_PRIVATE,
			       (const char *[]){ "proc-private", pid, NULL });
		else
			record(c, CORRAL_P_PROC_PRIVATE, "proc-private", R_INCONCLUSIVE,
			       "control failed: the outside process (pid %s) is gone", pid);
	}
}

static void tty_canaries(struct check *c)
{
	int queued = 0;

	if (c->pty_slave < 0) {
		record(c, CORRAL_P_TTY_NO_INJECTION, "tiocsti", R_NA, "no pseudo-terminal could be opened on this host");
		return;
	}
	/*
	 * The terminal a command can reach is the one it inherits (no other
	 * is granted): the canary gets the pty as its stdin and opens it by
	 * name, which makes it its controlling terminal, so TIOCSTI's own
	 * checks pass and only the filter can refuse it.
	 */
	c->canary_stdin = c->pty_slave;
	simple(c, CORRAL_P_TTY_NO_INJECTION, "tiocsti", CORRAL_P_TTY_NO_INJECTION, (const char *[]){ "tty", c->pts, NULL });
	c->canary_stdin = -1;
	/* The same pty, not inherited this time: a pty of its own works, this one stays out of reach. */
	simple(c, CORRAL_P_FS_READ, "pty-host", CORRAL_P_FS_READ, (const char *[]){ "pty", c->pts, NULL });
	if (ioctl(c->pty_slave, FIONREAD, &queued) == 0 && queued > 0)
		record(c, CORRAL_P_TTY_NO_INJECTION, "tiocsti-input", R_BROKEN,
		       "%d bytes were injected into the terminal's input queue", queued);
}

static void leak_canaries(struct check *c)
{
	const struct corral_policy *p = c->pol;
	char *allowed = NULL, *required = NULL;
	size_t alen = 0, rlen = 0;
	FILE *fa = open_memstream(&allowed, &alen), *fr = open_memstream(&required, &rlen);
	char fdnum[16];
	int fd;

	/* A descriptor without O_CLOEXEC, exactly the kind a careless host leaks. */
	fd = open(c->outside, O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		record(c, CORRAL_P_LEAK_FDS, "fds", R_INCONCLUSIVE, "control failed: could not open a descriptor to plant: %s",
		       corral_strerror(errno));
	} else {
		snprintf(fdnum, sizeof(fdnum), "%d", fd);
		simple(c, CORRAL_P_LEAK_FDS, "fds", NO_POSTURE, (const char *[]){ "fds", fdnum, NULL });
		close(fd);
	}

	if (!fa || !fr) {
		if (fa)
			fclose(fa);
		if (fr)
			fclose(fr);
		free(allowed);
		free(required);
		record(c, CORRAL_P_LEAK_ENV, "env", R_INCONCLUSIVE, "out of memory");
		return;
	}
	/* What corral itself sets (supervisor/local/env.c) plus what the policy lists. */
	fputs("PATH,HOME,TMPDIR,LANG,TERM", fa);
	/* Network "allow": the egress proxy's variables (supervisor/local/env.c). */
	if (p->network == CORRAL_NET_ALLOW)
		fputs(",HTTP_PROXY,HTTPS_PROXY,ALL_PROXY,http_proxy,https_proxy,all_proxy,NO_PROXY,no_proxy", fa);
	for (size_t i = 0; i < p->env.pass.n; i++)
		fprintf(fa, ",%s", p->env.pass.v[i]);
	fputs("PATH,HOME", fr);
	for (size_t i = 0; i < p->env.n_set; i++) {
		fprintf(fa, ",%s", p->env.set[i].name);
		fprintf(fr, ",%s", p->env.set[i].name);
	}
	fclose(fa);
	fclose(fr);
	simple(c, CORRAL_P_LEAK_ENV, "env", NO_POSTURE, (const char *[]){ "env", allowed, required, NULL });
	free(allowed);
	free(required);
}

static void priv_canaries(struct check *c)
{
	const struct corral_promise *nr = posture(c, CORRAL_P_IDENTITY_NON_ROOT);
	bool want_nonroot = nr && nr->state == CORRAL_PROMISE_ENFORCED;

	simple(c, CORRAL_P_PRIV_NONE, "privs", CORRAL_P_PRIV_NO_CAPABILITIES,
	       (const char *[]){ "privs", want_nonroot ? "1" : "0", c->sb->drop_caps ? "1" : "0", NULL });
	/*
	 * Part of the promise is not made (--user root, or corral unprivileged):
	 * the whole promise is not applicable, with the reason, never "held"
	 * on the strength of the capability and no_new_privs canaries.
	 */
	if (!want_nonroot && nr)
		record_dropped(c, CORRAL_P_PRIV_NONE, "non-root", "%s", nr->why);
}

static unsigned long long proc_starttime(pid_t pid, char *state)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	return corral_proc_starttime(path, state);
}

/* The daemon a canary left: must be gone (or a zombie no one can use) after the run. */
static void judge_daemon(struct check *c, const char *name, const char *file, const struct corral_result *res)
{
	char path[256], buf[64] = "", state = '?';
	unsigned long long start = 0;
	int pid = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", c->root, file);
	n = corral_read_file_at(AT_FDCWD, path, O_NOFOLLOW, buf, sizeof(buf));
	if (n <= 0 || sscanf(buf, "%d %llu", &pid, &start) != 2 || pid <= 0) {
		char end[128];

		describe_end(res, end, sizeof(end));
		record(c, CORRAL_P_LIFETIME, name, R_INCONCLUSIVE,
		       "control failed: the daemon never wrote its pid (the canary %s, saying: %.*s)", end,
		       res->stdout_buf ? (int)strcspn(res->stdout_buf, "\n") : 0, res->stdout_buf ? res->stdout_buf : "");
		return;
	}
	if (proc_starttime(pid, &state) == start && start && state != 'Z' && state != 'X') {
		/* Broken: do not leave it running. */
		kill(pid, SIGKILL);
		record(c, CORRAL_P_LIFETIME, name, R_BROKEN, "the setsid daemon (pid %d) was still running after the run", pid);
		return;
	}
	record(c, CORRAL_P_LIFETIME, name, R_HELD, "the setsid daemon (pid %d) was gone when the run returned", pid);
}

static void lifetime_canaries(struct check *c)
{
	struct corral_result res = CORRAL_RESULT_INIT;
	struct corral_error err = {};

	for (int attempt = 0; attempt < 2; attempt++) {
		double timeout = attempt ? DEADLINE_RETRY : DEADLINE_TIMEOUT;
		char path[256];

		if (exec_canary(c, c->sb, (const char *[]){ "daemon", "deadline", NULL }, timeout, 0, &res, &err) < 0) {
			record(c, CORRAL_P_LIFETIME, "deadline-setsid", R_INCONCLUSIVE, "corral could not run the canary: %s",
			       err.message);
			break;
		}
		snprintf(path, sizeof(path), "%s/daemon-deadline.pid", c->root);
		if (attempt == 0 && res.timed_out && access(path, F_OK) < 0) {
			/* The deadline came before a busy host ran the daemon: once more, with time. */
			corral_result_clear(&res);
			continue;
		}
		if (!res.timed_out) {
			char end[128];

			describe_end(&res, end, sizeof(end));
			record(c, CORRAL_P_LIFETIME, "deadline-setsid", R_BROKEN,
			       "the deadline (%g s) did not end the run: the canary %s", timeout, end);
		} else {
			judge_daemon(c, "deadline-setsid", "daemon-deadline.pid", &res);
		}
		break;
	}
	corral_result_clear(&res);

	if (exec_canary(c, c->sb, (const char *[]){ "daemon", "exit", NULL }, CANARY_TIMEOUT, 0, &res, &err) < 0)
		record(c, CORRAL_P_LIFETIME, "exit-double-fork", R_INCONCLUSIVE, "corral could not run the canary: %s",
		       err.message);
	else
		judge_daemon(c, "exit-double-fork", "daemon-exit.pid", &res);
	corral_result_clear(&res);
}

/* A sandbox like the check sandbox with one limit changed, to prove a mechanism at a testable value. */
static int derived_sandbox(struct check *c, const char *option, const char *value, struct corral_sandbox **out,
			   struct corral_error *err)
{
	struct corral_policy *p = corral_policy_dup(c->pol);
	int r;

	if (!p)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	r = corral_policy_set(p, option, value, err);
	if (r == 0)
		r = corral_sandbox_new(p, out, err);
	corral_policy_free(p);
	return r;
}

/*
 * Under a memory cgroup (no RLIMIT_AS): touch more than the limit. Held
 * when the cgroup's OOM killer ends the canary (ended_by memory); the
 * canary itself says broken if it touched it all.
 */
static void memory_cgroup_canary(struct check *c, const char *bytes)
{
	struct corral_result res = CORRAL_RESULT_INIT;
	struct corral_error err = {};
	char end[128];
	char *line;

	if (exec_canary(c, c->sb, (const char *[]){ "memory", bytes, "touch", NULL }, CANARY_TIMEOUT, 0, &res,
			&err) < 0) {
		record(c, CORRAL_P_LIMITS_MEMORY, "touch-beyond", R_INCONCLUSIVE, "corral could not run the canary: %s",
		       err.message);
		return;
	}
	line = first_line(&res);
	if (res.ended_by && strcmp(res.ended_by, "memory") == 0) {
		record(c, CORRAL_P_LIMITS_MEMORY, "touch-beyond", R_HELD,
		       "touching %s bytes and more: the run's memory cgroup killed it (OOM, ended_by memory)", bytes);
	} else if (line && *line) {
		record_line(c, CORRAL_P_LIMITS_MEMORY, "touch-beyond", NO_POSTURE, line);
	} else {
		describe_end(&res, end, sizeof(end));
		record(c, CORRAL_P_LIMITS_MEMORY, "touch-beyond", R_INCONCLUSIVE, "no verdict: the canary %s", end);
	}
	corral_result_clear(&res);
}

/*
 * A link the command planted in its root, named as a later run's root,
 * would confine that run to the link's target and, as root, run it as
 * the target's owner: corral_sandbox_new must refuse it. As root the
 * command (another uid) plants it in the root; unprivileged its links are
 * the caller's own, so it plants one in a directory of the root any uid
 * may write (the other half of the rule). Control: the same target through
 * a link check itself made in its own scratch directory is accepted.
 */
static void root_link_canaries(struct check *c)
{
	struct corral_result res = CORRAL_RESULT_INIT;
	struct corral_error err = {};
	struct corral_sandbox *sb = NULL;
	char planted[256], own[256], dir[200], *line;
	bool as_root = geteuid() == 0;
	int r;

	if (c->uid == 0) {
		record(c, CORRAL_P_PRIV_NONE, "planted-root", R_NA,
		       "the command runs as root (--user root): a link it plants is root's, which corral cannot tell from the host's own");
		return;
	}
	snprintf(dir, sizeof(dir), "%s%s", c->root, as_root ? "" : "/open");
	if (!as_root && ((mkdir(dir, 0777) < 0 && errno != EEXIST) || chmod(dir, 0777) < 0)) {
		record(c, CORRAL_P_PRIV_NONE, "planted-root", R_INCONCLUSIVE, "control failed: mkdir %s: %s", dir,
		       corral_strerror(errno));
		return;
	}
	snprintf(planted, sizeof(planted), "%s/planted-root", dir);
	snprintf(own, sizeof(own), "%s/own-link", c->scratch);
	r = exec_canary(c, c->sb, (const char *[]){ "plant-link", c->outside, as_root ? "." : "open", NULL },
			CANARY_TIMEOUT, 0, &res, &err);
	line = r == 0 ? first_line(&res) : NULL;
	if (!line || strncmp(line, CANARY_HELD " ", strlen(CANARY_HELD) + 1) != 0) {
		record(c, CORRAL_P_PRIV_NONE, "planted-root", R_INCONCLUSIVE, "control failed: the canary planted no link (%s)",
		       r < 0 ? err.message : line ? line : "no output");
		corral_result_clear(&res);
		return;
	}
	corral_result_clear(&res);
	unlink(own);
	if (symlink(c->outside, own) < 0 || derived_sandbox(c, "root", own, &sb, &err) < 0) {
		record(c, CORRAL_P_PRIV_NONE, "planted-root", R_INCONCLUSIVE,
		       "control failed: a root reached through check's own link: %s", err.message[0] ? err.message : corral_strerror(errno));
		corral_sandbox_free(sb);
		unlink(own);
		return;
	}
	corral_sandbox_free(sb);
	sb = NULL;
	unlink(own);
	memset(&err, 0, sizeof(err));
	r = derived_sandbox(c, "root", planted, &sb, &err);
	if (r == 0)
		record(c, CORRAL_P_PRIV_NONE, "planted-root", R_BROKEN,
		       "a root reached through the link %s the command planted was accepted (running as uid %u)", planted,
		       (unsigned)sb->uid);
	else if (err.code == CORRAL_E_REFUSED)
		record(c, CORRAL_P_PRIV_NONE, "planted-root", R_HELD, "refused: %s", err.message);
	else
		record(c, CORRAL_P_PRIV_NONE, "planted-root", R_INCONCLUSIVE, "refused for another reason: %s", err.message);
	corral_sandbox_free(sb);
	unlink(planted);
}

static void limit_canaries(struct check *c)
{
	const struct corral_policy *p = c->pol;
	char a[4][32];
	struct corral_result res = CORRAL_RESULT_INIT;
	struct corral_error err = {};
	struct corral_sandbox *dsb = NULL;

	snprintf(a[0], sizeof(a[0]), "%llu", (unsigned long long)p->limits.memory);
	snprintf(a[1], sizeof(a[1]), "%llu", (unsigned long long)p->limits.cpu);
	snprintf(a[2], sizeof(a[2]), "%llu", (unsigned long long)p->limits.file_size);
	snprintf(a[3], sizeof(a[3]), "%llu", (unsigned long long)p->limits.open_files);

	if (p->limits.memory && corral_sandbox_memory_cgroup(c->sb)) {
		memory_cgroup_canary(c, a[0]);
	} else if (p->limits.memory) {
		simple(c, CORRAL_P_LIMITS_MEMORY, "rlimit", NO_POSTURE, (const char *[]){ "rlimits", a[0], "0", "0", "0", NULL });
		simple(c, CORRAL_P_LIMITS_MEMORY, "map-beyond", NO_POSTURE, (const char *[]){ "memory", a[0], NULL });
	} else {
		record(c, CORRAL_P_LIMITS_MEMORY, "map-beyond", R_NA, "the policy sets no memory limit");
	}
	if (p->limits.file_size) {
		simple(c, CORRAL_P_LIMITS_FILE_SIZE, "rlimit", NO_POSTURE, (const char *[]){ "rlimits", "0", "0", a[2], "0", NULL });
		simple(c, CORRAL_P_LIMITS_FILE_SIZE, "write-beyond", NO_POSTURE, (const char *[]){ "file-size", a[2], NULL });
	} else {
		record(c, CORRAL_P_LIMITS_FILE_SIZE, "write-beyond", R_NA, "the policy sets no file size limit");
	}
	if (p->limits.open_files) {
		simple(c, CORRAL_P_LIMITS_OPEN_FILES, "rlimit", NO_POSTURE, (const char *[]){ "rlimits", "0", "0", "0", a[3], NULL });
		simple(c, CORRAL_P_LIMITS_OPEN_FILES, "open-beyond", NO_POSTURE, (const char *[]){ "open-files", a[3], NULL });
	} else {
		record(c, CORRAL_P_LIMITS_OPEN_FILES, "open-beyond", R_NA, "the policy sets no open-files limit");
	}

	/* Processes: at the policy's value when it is small enough to fork that many. */
	if (!p->limits.processes) {
		record(c, CORRAL_P_LIMITS_PROCESSES, "fork-beyond", R_NA, "the policy sets no process limit");
	} else {
		const struct corral_promise *pp = posture(c, CORRAL_P_LIMITS_PROCESSES);
		char n[32];
		struct corral_sandbox *sb = c->sb;
		const char *name = "fork-beyond";

		snprintf(n, sizeof(n), "%llu", (unsigned long long)p->limits.processes);
		if (p->limits.processes > PROCS_TEST_MAX) {
			snprintf(n, sizeof(n), "64");
			name = "fork-beyond (proven at 64)";
			if (derived_sandbox(c, "procs", "64", &dsb, &err) < 0) {
				record(c, CORRAL_P_LIMITS_PROCESSES, name, R_INCONCLUSIVE, "derived sandbox: %s", err.message);
				sb = NULL;
			} else {
				sb = dsb;
			}
		}
		if (pp && pp->state == CORRAL_PROMISE_DROPPED) {
			record_dropped(c, CORRAL_P_LIMITS_PROCESSES, name, "dropped under compat best-effort: %s", pp->why);
		} else if (sb) {
			if (exec_canary(c, sb,
					(const char *[]){ "processes", n, sb->nproc_relative ? "relative" : "exact", NULL },
					CANARY_TIMEOUT, 0, &res, &err) < 0)
				record(c, CORRAL_P_LIMITS_PROCESSES, name, R_INCONCLUSIVE, "corral could not run the canary: %s",
				       err.message);
			else
				record_line(c, CORRAL_P_LIMITS_PROCESSES, name, CORRAL_P_LIMITS_PROCESSES, first_line(&res));
			corral_result_clear(&res);
		}
		corral_sandbox_free(dsb);
		dsb = NULL;
	}

	/* CPU: the configured value, then the mechanism at 1 s (nobody waits a minute for a check). */
	if (!p->limits.cpu) {
		record(c, CORRAL_P_LIMITS_CPU, "spin", R_NA, "the policy sets no CPU limit");
	} else {
		char one[16];

		simple(c, CORRAL_P_LIMITS_CPU, "rlimit", NO_POSTURE, (const char *[]){ "rlimits", "0", a[1], "0", "0", NULL });
		snprintf(one, sizeof(one), "%d", CPU_TEST_SECONDS);
		if (derived_sandbox(c, "cpu", one, &dsb, &err) < 0) {
			record(c, CORRAL_P_LIMITS_CPU, "spin (proven at 1 s)", R_INCONCLUSIVE, "derived sandbox: %s", err.message);
		} else if (exec_canary(c, dsb, (const char *[]){ "cpu", CPU_SPIN_MS, CPU_SPIN_WALL, NULL },
				       CANARY_TIMEOUT, 0, &res, &err) < 0) {
			record(c, CORRAL_P_LIMITS_CPU, "spin (proven at 1 s)", R_INCONCLUSIVE, "corral could not run the canary: %s",
			       err.message);
		} else {
			char *line = first_line(&res);

			if (!line || strncmp(line, "spinning", 8) != 0)
				record(c, CORRAL_P_LIMITS_CPU, "spin (proven at 1 s)", R_INCONCLUSIVE,
				       "control failed: the canary did not start spinning");
			else if (res.signal == SIGXCPU || res.signal == SIGKILL)
				record(c, CORRAL_P_LIMITS_CPU, "spin (proven at 1 s)", R_HELD,
				       "killed by SIG%s after %.0f ms of CPU", corral_signal_abbrev(res.signal) ?: "?", res.cpu_ms);
			else if (res.cpu_ms >= atof(CPU_SPIN_MS) - 100)
				record(c, CORRAL_P_LIMITS_CPU, "spin (proven at 1 s)", R_BROKEN,
				       "spun %.0f ms of CPU with a 1 s limit and was not stopped", res.cpu_ms);
			else
				record(c, CORRAL_P_LIMITS_CPU, "spin (proven at 1 s)", R_INCONCLUSIVE,
				       "control failed: the host gave the canary only %.0f ms of CPU in %s s", res.cpu_ms,
				       CPU_SPIN_WALL);
		}
		corral_result_clear(&res);
		corral_sandbox_free(dsb);
		dsb = NULL;
	}

	/* Output: the capture cap, with a flood twice the size. */
	{
		uint64_t cap = p->limits.output ? p->limits.output : 1024 * 1024;
		const char *name = "flood";
		char n[32];

		if (cap > OUTPUT_TEST_MAX) {
			cap = 1024 * 1024;
			name = "flood (proven at 1M)";
		}
		snprintf(n, sizeof(n), "%llu", (unsigned long long)cap);
		if (exec_canary(c, c->sb, (const char *[]){ "output", n, NULL }, CANARY_TIMEOUT, (size_t)cap, &res,
				&err) < 0) {
			record(c, CORRAL_P_LIMITS_OUTPUT, name, R_INCONCLUSIVE, "corral could not run the canary: %s", err.message);
		} else if (!res.exited || res.exit_status != 0) {
			char end[128];

			describe_end(&res, end, sizeof(end));
			record(c, CORRAL_P_LIMITS_OUTPUT, name, R_BROKEN, "the flooding canary did not finish cleanly: it %s", end);
		} else if (res.stdout_len > cap + 64 || res.stderr_len > cap + 64 || !res.stdout_truncated ||
			   !res.stderr_truncated || res.stdout_bytes < cap + 128 * 1024 ||
			   res.stderr_bytes < cap + 128 * 1024) {
			/* 64: room for the one "[… N bytes omitted …]" line, which does not count against the cap. */
			record(c, CORRAL_P_LIMITS_OUTPUT, name, R_BROKEN,
			       "kept %zu/%zu bytes of stdout/stderr (%llu/%llu written) with a cap of %llu (truncated: %s/%s)",
			       res.stdout_len, res.stderr_len, (unsigned long long)res.stdout_bytes,
			       (unsigned long long)res.stderr_bytes, (unsigned long long)cap,
			       res.stdout_truncated ? "yes" : "no", res.stderr_truncated ? "yes" : "no");
		} else {
			record(c, CORRAL_P_LIMITS_OUTPUT, name, R_HELD,
			       "kept %zu and %zu bytes (head and tail, with the omission line) of a %llu-byte flood per "
			       "stream, every byte counted", res.stdout_len, res.stderr_len,
			       (unsigned long long)cap + 128 * 1024);
		}
		corral_result_clear(&res);
	}
}

/* ---------------------------------------------------------------- report */

static char *build_report(struct check *c, bool *all_held)
{
	json_t *o = json_object(), *ps = json_array(), *dropped = json_array();
	bool held = true;
	char *s;

	for (size_t i = 0; i < N_PROMISES; i++) {
		struct promise_acc *a = &c->acc[i];
		int state;
		const char *why = "";

		if (!(corral_promises[i].kinds & CORRAL_PK_CHECK))
			continue;
		if (a->n[R_BROKEN])
			state = R_BROKEN;
		else if (a->n_dropped)
			state = R_NA; /* not kept here, as best-effort said: never "held" */
		else if (a->n[R_INCONCLUSIVE])
			state = R_INCONCLUSIVE;
		else if (a->n[R_HELD])
			state = R_HELD;
		else
			state = R_NA;
		if (state == R_NA)
			why = a->n_dropped ? a->dropped_why : a->why[0] ? a->why : "no canary applies";
		if (state == R_BROKEN || state == R_INCONCLUSIVE)
			held = false;
		json_array_append_new(ps, json_pack("{s:s,s:s,s:s,s:s,s:O}", "id", corral_promises[i].id, "promise",
						    corral_promises[i].text, "state", result_names[state], "why", why,
						    "canaries", a->canaries));
	}
	for (size_t i = 0; i < c->sb->n_dropped; i++)
		json_array_append_new(dropped, json_string(c->sb->dropped[i]));
	json_object_set_new(o, "held", json_boolean(held));
	json_object_set_new(o, "network", json_string(corral_network_name(c->pol->network) ?: "none"));
	json_object_set_new(o, "compat",
			    json_string(c->pol->compat == CORRAL_COMPAT_BEST_EFFORT ? "best-effort" : "strict"));
	json_object_set_new(o, "landlock_abi", json_integer(corral_landlock_abi()));
	json_object_set_new(o, "uid", json_integer(c->uid));
	json_object_set_new(o, "scratch", json_string(c->scratch));
	json_object_set_new(o, "dropped", dropped);
	json_object_set_new(o, "promises", ps);
	s = json_dumps(o, JSON_PRESERVE_ORDER);
	json_decref(o);
	*all_held = held;
	return s;
}

/* --------------------------------------------------------------- the entry */

static void check_clear(struct check *c)
{
	if (c->sleeper > 0) {
		kill(c->sleeper, SIGKILL);
		while (waitpid(c->sleeper, NULL, 0) < 0 && errno == EINTR)
			;
	}
	for (int i = 0; i < 2; i++) {
		safe_close(c->tcp[i]);
		safe_close(c->udp[i]);
	}
	safe_close(c->unix_fd);
	safe_close(c->abstract_fd);
	safe_close(c->pty_master);
	safe_close(c->pty_slave);
	if (c->scratch[0]) {
		char *slash = strrchr(c->scratch, '/');
		int base;

		*slash = '\0';
		base = open(c->scratch[0] ? c->scratch : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		*slash = '/';
		if (base >= 0) {
			rm_rf_at(base, slash + 1);
			close(base);
		}
	}
	safe_close(c->scratch_fd);
	corral_sandbox_free(c->sb);
	corral_policy_free(c->pol);
	free(c->exe);
	for (size_t i = 0; i < N_PROMISES; i++)
		json_decref(c->acc[i].canaries);
}

static int setup(struct check *c, const struct corral_policy *p, struct corral_error *err)
{
	bool outside_covered = false, as_root = geteuid() == 0;
	struct saved_env env = {};
	char path[256];
	int r;

	c->exe = realpath("/proc/self/exe", NULL);
	if (!c->exe)
		return corral_err(err, CORRAL_E_SETUP, errno, "check: /proc/self/exe: %s", corral_strerror(errno));
	c->pol = corral_policy_dup(p);
	if (!c->pol)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	r = make_scratch(c, &outside_covered, err);
	if (r < 0)
		return r;
	/*
	 * The scratch root has none of the policy's directories, and the
	 * canaries are no runs of the caller's to audit: both stay out.
	 */
	free(c->pol->cwd);
	free(c->pol->audit);
	c->pol->cwd = c->pol->audit = NULL;
	r = corral_policy_set(c->pol, "root", c->root, err);
	if (r == 0)
		r = add_exe_paths(c, err);
	if (r < 0)
		return r;

	/*
	 * As root the sandbox picks who runs the command from the root's
	 * owner (nobody for a root-owned root, or --user): open the root to
	 * anyone just while the sandbox decides, then hand root and outside
	 * to the identity it chose.
	 */
	if (as_root)
		chmod(c->root, 0777);
	plant_env(c->pol, &env);
	r = corral_sandbox_new(c->pol, &c->sb, err);
	restore_env(&env);
	if (as_root)
		chmod(c->root, 0700);
	if (r < 0)
		return r;
	c->uid = c->sb->uid;
	c->gid = c->sb->gid;
	if (as_root && (chown(c->root, c->uid, c->gid) < 0 || chown(c->outside, c->uid, c->gid) < 0))
		return corral_err(err, CORRAL_E_SETUP, errno, "check: chown scratch to uid %u: %s", (unsigned)c->uid,
				  corral_strerror(errno));

	/* The outside targets, all of the sandbox's own uid: only the sandbox stands in the way. */
	snprintf(path, sizeof(path), "%s/secret", c->outside);
	r = write_file(path, SECRET_TEXT, c->uid, c->gid, as_root);
	if (r == 0) {
		snprintf(path, sizeof(path), "%s/victim", c->outside);
		r = write_file(path, VICTIM_TEXT, c->uid, c->gid, as_root);
	}
	if (r < 0)
		return corral_err(err, CORRAL_E_SETUP, -r, "check: %s: %s", path, corral_strerror(-r));

	c->tcp[0] = listen_inet(AF_INET, SOCK_STREAM, &c->port_tcp[0]);
	c->tcp[1] = listen_inet(AF_INET6, SOCK_STREAM, &c->port_tcp[1]);
	c->udp[0] = listen_inet(AF_INET, SOCK_DGRAM, &c->port_udp[0]);
	c->udp[1] = listen_inet(AF_INET6, SOCK_DGRAM, &c->port_udp[1]);
	snprintf(c->unix_path, sizeof(c->unix_path), "%s/sock", c->outside);
	c->unix_fd = listen_unix(c->unix_path, false);
	if (c->unix_fd >= 0 && as_root)
		chown(c->unix_path, c->uid, c->gid);
	snprintf(c->abstract_name, sizeof(c->abstract_name), "corral-check-%d-%ld", getpid(), (long)time(NULL));
	c->abstract_fd = listen_unix(c->abstract_name, true);
	if (open_pty(c, as_root) < 0) {
		c->pty_slave = safe_close(c->pty_slave);
		c->pty_master = safe_close(c->pty_master);
	}
	return start_sleeper(c, as_root, err);
}

/* The canary program answers inside the sandbox, or check cannot work at all. */
static int preflight(struct check *c, struct corral_error *err)
{
	struct corral_result res = CORRAL_RESULT_INIT;
	char end[160];
	char *line;
	int r;

	r = exec_canary(c, c->sb, (const char *[]){ "hello", NULL }, CANARY_TIMEOUT, 0, &res, err);
	if (r < 0)
		return r;
	line = first_line(&res);
	if (line && strstr(line, CANARY_HELLO)) {
		corral_result_clear(&res);
		return 0;
	}
	describe_end(&res, end, sizeof(end));
	r = corral_err(err, CORRAL_E_UNSUPPORTED, ENOTSUP,
		       "check: %s does not run corral's canaries inside the sandbox as uid %u (the canary %s%s%.160s); "
		       "the program must be readable by that uid and hand `%s` to corral_canary_main()",
		       c->exe, (unsigned)c->uid, end, res.stderr_len ? ": " : "", res.stderr_buf ? res.stderr_buf : "",
		       CANARY_VERB);
	corral_result_clear(&res);
	return r;
}

_public_ int corral_check(const struct corral_policy *p, char **json_out, bool *all_held,
			  struct corral_error *err)
{
	struct check c = {
		.scratch_fd = -1,
		.sleeper = -1,
		.tcp = { -1, -1 },
		.udp = { -1, -1 },
		.unix_fd = -1,
		.abstract_fd = -1,
		.pty_master = -1,
		.pty_slave = -1,
		.canary_stdin = -1,
	};
	int r;

	if (!p || !json_out || !all_held)
		return corral_err(err, CORRAL_E_USAGE, EINVAL, "check: missing argument");
	*json_out = NULL;
	*all_held = false;
	if (p->provider != CORRAL_PROVIDER_LOCAL)
		return corral_err(err, CORRAL_E_UNSUPPORTED, ENOTSUP,
				  "check: only the local provider is checked; the docker provider's confinement is the "
				  "container's (see docs/threat-model.md)");
	for (size_t i = 0; i < N_PROMISES; i++) {
		c.acc[i].canaries = json_array();
		if (!c.acc[i].canaries) {
			r = corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
			goto out;
		}
	}

	r = setup(&c, p, err);
	if (r < 0)
		goto out;
	r = preflight(&c, err);
	if (r < 0)
		goto out;

	{
		char probe[200];

		snprintf(probe, sizeof(probe), "%s/x", c.outside);
		c.outside_covered = policy_covers(c.pol, probe);
	}
	fs_canaries(&c, c.outside_covered);
	net_canaries(&c);
	egress_canaries(&c);
	syscall_canaries(&c);
	process_canaries(&c);
	tty_canaries(&c);
	leak_canaries(&c);
	priv_canaries(&c);
	root_link_canaries(&c);
	lifetime_canaries(&c);
	limit_canaries(&c);

	*json_out = build_report(&c, all_held);
	if (!*json_out)
		r = corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
out:
	check_clear(&c);
	return r;
}
