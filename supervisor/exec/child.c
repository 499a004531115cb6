/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The child side of one run: the confinement steps of DESIGN.md "The life
 * of one command", in that order, then execve.
 *
 * This code runs in a clone(CLONE_VM|CLONE_VFORK) child: it shares the
 * parent's memory while the parent thread is suspended. So, beyond
 * async-signal-safety, it must not write anything the parent owns, must not
 * call malloc, and must not call glibc's set*id() wrappers (they broadcast
 * the change to every thread of what glibc believes is its own process —
 * the parent's threads): every credential change is a raw syscall. Errors
 * go to the parent as (stage, errno) through a close-on-exec pipe.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "internal/syscalls.h"
#include "landlock/landlock.h"
#include "seccomp/seccomp.h"
#include "supervisor/exec/sandbox.h"

/*
 * Sanitizer instrumentation has no place here: it would run on the
 * borrowed stack, under the command's rlimits, and allocate.
 */
#define _child_ __attribute__((no_sanitize("address", "undefined")))

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

const char *corral_child_stage_name(int stage)
{
	static const char *const names[] = {
		[STAGE_SIGNALS] = "signal dispositions",
		[STAGE_SESSION] = "setsid",
		[STAGE_TTY] = "terminal foreground group",
		[STAGE_PDEATHSIG] = "PR_SET_PDEATHSIG",
		[STAGE_PARENT] = "parent exited",
		[STAGE_CGROUP] = "joining the run's cgroup",
		[STAGE_SETGROUPS] = "setgroups",
		[STAGE_SETRESGID] = "setresgid",
		[STAGE_CAPBSET] = "dropping the capability bounding set",
		[STAGE_AMBIENT] = "clearing ambient capabilities",
		[STAGE_SETRESUID] = "setresuid",
		[STAGE_CAPSET] = "capset",
		[STAGE_RLIMIT] = "setrlimit",
		[STAGE_STDIO] = "stdio",
		[STAGE_CLOSE_FDS] = "closing inherited fds",
		[STAGE_CHDIR] = "chdir to the root (or cwd)",
		[STAGE_NO_NEW_PRIVS] = "no_new_privs",
		[STAGE_LANDLOCK] = "landlock_restrict_self",
		[STAGE_SECCOMP] = "seccomp",
		[STAGE_EXEC] = "execve",
		[STAGE_NETNS] = "creating the network namespace (network \"loopback\")",
		[STAGE_USERNS_MAP] = "writing the user namespace's uid/gid maps (network \"loopback\")",
		[STAGE_LOOPBACK_UP] = "bringing lo up (network \"loopback\")",
		[STAGE_UNOTIFY] = "installing the Unix-socket mediation filter",
		[STAGE_PIDNS_PARENT] = "parent exited (proc \"private\")",
		[STAGE_PIDNS_MAP] = "writing the user namespace's uid/gid maps (proc \"private\"; --proc host runs without)",
		[STAGE_PIDNS_MOUNTS] = "making the mount namespace's mounts private (proc \"private\"; --proc host runs without)",
		[STAGE_PIDNS_PROC] = "mounting the PID namespace's /proc (proc \"private\"; a /proc with masked paths, as in a container, cannot be mounted again: --proc host runs without)",
		[STAGE_PIDNS_LANDLOCK] = "granting the private /proc in the Landlock ruleset (proc \"private\")",
		[STAGE_PIDNS_ROOT] = "finding the root in the run's mount namespace (proc \"private\"; EAGAIN: it moved while the run started)",
		[STAGE_PIDNS_SPAWN] = "starting the command inside the PID namespace (proc \"private\")",
	};
	if (stage > 0 && (size_t)stage < ARRAY_SIZE(names) && names[stage])
		return names[stage];
	return "child setup";
}

static _child_ _Noreturn void fail_report(int err_w, const struct corral_child_report *rep)
{
	ssize_t _unused_ n;

	n = write(err_w, rep, sizeof(*rep)); /* < PIPE_BUF: atomic */
	_exit(127);
}

static _child_ _Noreturn void fail(int err_w, int stage, int e)
{
	struct corral_child_report rep = { .stage = stage, .err = e ? e : EIO };

	fail_report(err_w, &rep);
}

/* Raw syscalls: see the header comment (no glibc setxid broadcast). */
static _child_ long sys3(long nr, long a, long b, long c)
{
	return syscall(nr, a, b, c);
}

static _child_ int mark_cloexec_from(int lowfd)
{
	char buf[4096];
	int dfd, r = 0;

	/* Linux 5.11+: one call. */
	if (syscall(SYS_close_range, (unsigned)lowfd, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
		return 0;
	/* Fallback without malloc: walk /proc/self/fd with getdents64. */
	dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	for (;;) {
		long n = syscall(SYS_getdents64, dfd, buf, sizeof(buf));
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		for (long off = 0; off < n;) {
			struct corral_dirent64 *d = (void *)(buf + off);
			int fd = 0;
			bool num = d->name[0] != '\0';

			for (const char *p = d->name; *p; p++) {
				if (*p < '0' || *p > '9') {
					num = false;
					break;
				}
				fd = fd * 10 + (*p - '0');
			}
			if (num && fd >= lowfd && fd != dfd)
				fcntl(fd, F_SETFD, FD_CLOEXEC);
			off += d->reclen;
		}
	}
	close(dfd);
	return r;
}

/* dup2 that also clears FD_CLOEXEC when src == dst. */
static _child_ int move_fd(int src, int dst)
{
	if (src < 0)
		return 0;
	if (src == dst) {
		int fl = fcntl(src, F_GETFD);
		if (fl < 0 || fcntl(src, F_SETFD, fl & ~FD_CLOEXEC) < 0)
			return -errno;
		return 0;
	}
	if (dup2(src, dst) < 0)
		return -errno;
	return 0;
}

static _child_ size_t str_len(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

/*
 * execve |file|; on ENOEXEC, a text file without a #! line runs as a /bin/sh
 * script, as execvp and shells do (a binary for another system does not).
 * Returns the errno of |file|'s execve.
 */
/* Text, not a binary for another system (as bash decides): no ELF magic, no NUL in the first line. */
static _child_ bool looks_like_script(const char *file)
{
	char b[80];
	ssize_t n;
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return false;
	n = read(fd, b, sizeof(b));
	close(fd);
	if (n <= 0)
		return n == 0; /* an empty file: sh runs nothing, as execvp does */
	if (n >= 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F')
		return false;
	for (ssize_t i = 0; i < n && b[i] != '\n'; i++)
		if (b[i] == '\0')
			return false;
	return true;
}

/*
 * execve said ENOENT (|e|): if |file| is there after all (readable or
 * not), what is missing is its #! interpreter (named in |rep| when that is
 * what is absent) or something further down: an ELF interpreter, or the
 * interpreter's own interpreter (""). execve said EACCES: when |file| is a
 * script whose interpreter exists but cannot be opened (outside the
 * sandbox's paths), that interpreter is named. A CR before the newline
 * stays at the end of the name (CRLF line endings), for the message to
 * say so.
 */
static _child_ void note_interp(const char *file, int e, struct corral_child_report *rep)
{
	char b[sizeof(rep->interp) + 2], name[sizeof(rep->interp)];
	ssize_t n = -1;
	size_t i = 2, o = 0;
	bool crlf = false;
	int fd;

	if (rep->has_interp) /* the first such candidate on PATH is the one named */
		return;
	fd = open(file, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return;
	close(fd);
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd >= 0) {
		n = read(fd, b, sizeof(b));
		close(fd);
	}
	name[0] = 0;
	if (n >= 2 && b[0] == '#' && b[1] == '!') {
		while (i < (size_t)n && (b[i] == ' ' || b[i] == '\t'))
			i++;
		/* Printed on the host's terminal: anything but printable ASCII becomes '?'. */
		while (i < (size_t)n && o + 2 < sizeof(name) && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' &&
		       b[i] != '\0') {
			if (b[i] == '\r' && (i + 1 == (size_t)n || b[i + 1] == '\n')) {
				crlf = true; /* the kernel looks for "NAME\r" */
				break;
			}
			name[o++] = b[i] > ' ' && b[i] < 0x7f ? b[i] : '?';
			i++;
		}
		name[o] = 0;
	}
	if (e == EACCES) {
		/* Only an executable script whose interpreter is there and cannot be opened. */
		if (!name[0] || faccessat(AT_FDCWD, file, X_OK, AT_EACCESS) < 0 ||
		    (fd = open(name, O_PATH | O_CLOEXEC)) < 0)
			return;
		close(fd);
		fd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd >= 0 || errno != EACCES) {
			if (fd >= 0)
				close(fd);
			return;
		}
	} else if (name[0] && !crlf && (fd = open(name, O_PATH | O_CLOEXEC)) >= 0) {
		/* The interpreter is there: what is missing lies beyond it (its own #!, its loader). */
		close(fd);
		name[0] = 0;
		o = 0;
	}
	rep->has_interp = true;
	rep->interp_err = e;
	memcpy(rep->interp, name, o + 1);
	if (o && crlf && e == ENOENT) {
		rep->interp[o] = '\r';
		rep->interp[o + 1] = 0;
	}
}

static _child_ int exec_one(const char *file, char *const *argv, char *const *envp, char **sh_argv,
			    struct corral_child_report *rep)
{
	int e;

	execve(file, argv, envp);
	e = errno;
	if (e == ENOEXEC && sh_argv && looks_like_script(file)) {
		sh_argv[1] = (char *)file;
		execve(sh_argv[0], sh_argv, envp);
	}
	if (e == ENOENT || e == EACCES)
		note_interp(file, e, rep);
	return e;
}

/*
 * execve |file|, searching |path| like execvp (with its /bin/sh fallback
 * for ENOEXEC, without malloc: |sh_argv| comes from the parent). Returns
 * the errno to report: EACCES if any candidate was found but not
 * executable, else the last meaningful error, else ENOENT.
 */
static _child_ int exec_search(const char *file, char *const *argv, char *const *envp, const char *path,
			       char **sh_argv, struct corral_child_report *rep)
{
	char buf[4096];
	bool eacces = false;
	size_t flen;
	int e;

	for (const char *p = file; *p; p++)
		if (*p == '/')
			return exec_one(file, argv, envp, sh_argv, rep);
	if (!*file)
		return ENOENT;
	flen = str_len(file);
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;;) {
		const char *end = p;
		size_t dlen;

		while (*end && *end != ':')
			end++;
		dlen = (size_t)(end - p);
		if (dlen + 1 + flen + 1 <= sizeof(buf)) {
			size_t n = 0;

			if (dlen == 0) {
				buf[n++] = '.';
			} else {
				memcpy(buf, p, dlen);
				n = dlen;
			}
			buf[n++] = '/';
			memcpy(buf + n, file, flen + 1);
			e = exec_one(buf, argv, envp, sh_argv, rep);
			switch (e) {
			case EACCES:
				eacces = true;
				break;
			case ENOENT:
			case ENOTDIR:
			case ESTALE:
			case ENODEV:
			case ETIMEDOUT:
			case ELOOP:
			case ENAMETOOLONG:
				break;
			default:
				/* Found but unusable (ETXTBSY, E2BIG, ENOEXEC with no /bin/sh...): stop like execvp. */
				return e;
			}
		}
		if (!*end)
			break;
		p = end + 1;
	}
	return eacces ? EACCES : ENOENT;
}

/*
 * Handlers installed by the host would run on this borrowed stack and on
 * the parent's memory: reset every handled signal to its default while
 * every signal is still blocked (the parent blocked them around clone).
 * Ignored signals are reset too: the command starts clean.
 */
static _child_ void child_reset_signals(void)
{
	for (int s = 1; s <= 64; s++) {
		/*
		 * The kernel's struct sigaction (handler, flags, restorer, mask),
		 * through the raw call: the C libraries' wrappers refuse the
		 * signals they keep for themselves (glibc 32-33, musl 32-34), and
		 * an ignored one of those would reach the command.
		 */
		struct {
			void (*handler)(int);
			unsigned long flags;
			void (*restorer)(void);
			uint64_t mask;
		} ksa = { .handler = SIG_DFL };

		if (s == SIGKILL || s == SIGSTOP)
			continue;
		syscall(SYS_rt_sigaction, (long)s, &ksa, NULL, (long)sizeof(ksa.mask));
	}
}

/* Own process group (and session, or the terminal); die with the parent. */
static _child_ void child_session(const struct corral_child *c, int err_w)
{
	/* Own process group; a new session (no controlling terminal) unless interactive. */
	if (c->interactive) {
		if (setpgid(0, 0) < 0)
			fail(err_w, STAGE_SESSION, errno);
		/* SIGTTOU is blocked here, so a background group may take the terminal. */
		if (tcsetpgrp(0, getpid()) < 0)
			fail(err_w, STAGE_TTY, errno);
	} else if (setsid() < 0) {
		fail(err_w, STAGE_SESSION, errno);
	}

	/* Die with the parent; then make sure it did not die already. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		fail(err_w, STAGE_PDEATHSIG, errno);
	if (getppid() != c->parent)
		fail(err_w, STAGE_PARENT, ESRCH);
}

/* The run's cgroups and network namespace: joined while still privileged. */
static _child_ void child_join(const struct corral_child *c, int err_w)
{
	const struct corral_sandbox *sb = c->sb;
	const struct corral_run *run = c->run;

	if (run) {
		/* "0" is the writer itself (v1 and v2); done before dropping privileges. */
		for (int i = 0; i < CORRAL_CG_MAX; i++)
			if (run->cg_fd[i] >= 0 && write(run->cg_fd[i], "0", 1) != 1)
				fail(err_w, STAGE_CGROUP, errno);
	}

	/* Before the identity switch: as root, unshare needs CAP_SYS_ADMIN. */
	if (sb && sb->netns.mode) {
		int stage = STAGE_NETNS, r = corral_netns_enter(&sb->netns, &stage);

		if (r < 0)
			fail(err_w, stage, -r);
	}
}

/* The command's identity: groups, gid, capabilities, uid. */
static _child_ void child_identity(const struct corral_child *c, int err_w)
{
	const struct corral_sandbox *sb = c->sb;

	if (!sb)
		return;
	if (sb->switch_identity) {
		gid_t gid = sb->gid;

		if (sys3(SYS_setgroups, 1, (long)&gid, 0) < 0)
			fail(err_w, STAGE_SETGROUPS, errno);
		if (sys3(SYS_setresgid, gid, gid, gid) < 0)
			fail(err_w, STAGE_SETRESGID, errno);
	}
	if (sb->drop_caps) {
		struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
		struct __user_cap_data_struct data[2] = {};

		/*
		 * The bounding set needs CAP_SETPCAP, so it goes before the uid
		 * switch; setresuid to a non-zero uid then clears the permitted,
		 * effective and ambient sets, and capset clears what uid 0 keeps.
		 */
		/* Up to the kernel's last capability: EINVAL names the first one past it. */
		for (int cap = 0; cap < 64; cap++)
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
				if (errno == EINVAL)
					break;
				fail(err_w, STAGE_CAPBSET, errno);
			}
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
			fail(err_w, STAGE_AMBIENT, errno);
		if (sb->switch_identity && sys3(SYS_setresuid, sb->uid, sb->uid, sb->uid) < 0)
			fail(err_w, STAGE_SETRESUID, errno);
		if (syscall(SYS_capset, &hdr, data) < 0)
			fail(err_w, STAGE_CAPSET, errno);
	}
	if (sb->switch_identity) {
		/*
		 * The kernel clears the parent-death signal when the euid/egid
		 * change: set it again, then check the parent once more.
		 */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
			fail(err_w, STAGE_PDEATHSIG, errno);
		if (getppid() != c->parent)
			fail(err_w, STAGE_PARENT, ESRCH);
	}
}

/*
 * The rlimits, fds 0..2 from |src|, every other fd close-on-exec, the
 * working directory (the root for a confined child). |mediated|: the
 * Unix-socket mediation's RLIMIT_NOFILE waits for its listener (child_confine).
 */
static _child_ void child_process_state(const struct corral_child *c, int src[3], int root_fd, bool mediated,
					int err_w)
{
	/*
	 * With the mediation, RLIMIT_NOFILE waits until its listener fd
	 * exists: every inherited fd is still open here (close-on-exec, not
	 * closed), so a low limit would leave no number free for it.
	 */
	for (int i = 0; c->rlimits && i < RLIM_NLIMITS; i++)
		if (c->rlimits->set[i] && !(i == RLIMIT_NOFILE && mediated) &&
		    setrlimit(i, &c->rlimits->rl[i]) < 0)
			fail(err_w, STAGE_RLIMIT, errno);

	/* stdio: first lift any source out of 0..2 so one dup2 cannot clobber another. */
	for (int i = 0; i < 3; i++)
		if (src[i] >= 0 && src[i] <= 2 && src[i] != i) {
			src[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 3);
			if (src[i] < 0)
				fail(err_w, STAGE_STDIO, errno);
		}
	for (int i = 0; i < 3; i++)
		if (move_fd(src[i], i) < 0)
			fail(err_w, STAGE_STDIO, errno);

	/*
	 * Every other fd is closed at execve: marked close-on-exec rather than
	 * closed now, because the error pipe and the ruleset are still needed.
	 */
	if (mark_cloexec_from(3) < 0)
		fail(err_w, STAGE_CLOSE_FDS, errno);

	if (c->sb) {
		if (fchdir(root_fd) < 0)
			fail(err_w, STAGE_CHDIR, errno);
	} else if (c->cwd && chdir(c->cwd) < 0) {
		fail(err_w, STAGE_CHDIR, errno);
	}
}

/* no_new_privs, Landlock, seccomp: the confinement itself, last before execve. */
static _child_ void child_confine(const struct corral_child *c, int ruleset_fd, bool mediated, int err_w)
{
	const struct corral_sandbox *sb = c->sb;
	int r;

	if (!sb)
		return;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		fail(err_w, STAGE_NO_NEW_PRIVS, errno);
	if (ruleset_fd >= 0) {
		r = corral_ll_restrict_self(ruleset_fd);
		if (r < 0)
			fail(err_w, STAGE_LANDLOCK, -r);
	}
	/* Last, so nothing after it needs a denied call. */
	if (mediated) {
		/* The same filter, with a listener handed to the parent. */
		r = corral_unotify_child_install(sb->unotify, &sb->bpf);
		if (r < 0)
			fail(err_w, STAGE_UNOTIFY, -r);
		if (c->rlimits && c->rlimits->set[RLIMIT_NOFILE] &&
		    setrlimit(RLIMIT_NOFILE, &c->rlimits->rl[RLIMIT_NOFILE]) < 0)
			fail(err_w, STAGE_RLIMIT, errno);
	} else if (sb->have_bpf) {
		r = corral_seccomp_install(&sb->bpf);
		if (r < 0)
			fail(err_w, STAGE_SECCOMP, -r);
	}
}

_child_ int corral_child_main(void *arg)
{
	const struct corral_child *c = arg;
	const struct corral_sandbox *sb = c->sb;
	const struct corral_run *run = c->run;
	const bool mediated = sb && sb->unotify && run && run->un_child >= 0;
	/* Fds this child uses to the end: its own copies, which the hand-over may move. */
	/* Where the command starts: the root, or the cwd resolved beneath it (--cwd). */
	int root_fd = sb ? (run && run->cwd_fd >= 0 ? run->cwd_fd : sb->root_fd) : -1;
	int ruleset_fd = run ? run->ruleset_fd : -1;
	int src[3] = { c->fd_in, c->fd_out, c->fd_err }, err_w = c->err_w;
	sigset_t empty;

	child_reset_signals();
	child_session(c, err_w);
	child_join(c, err_w);
	child_identity(c, err_w);

	/* Before the rlimits: the hand-over fd lies above the command's RLIMIT_NOFILE. */
	if (mediated) {
		int *const keep[] = { &err_w, &root_fd, &ruleset_fd, &src[0], &src[1], &src[2] };
		int r = corral_unotify_child_prepare(sb->unotify, run->un_child, keep, ARRAY_SIZE(keep));

		if (r < 0)
			fail(err_w, STAGE_UNOTIFY, -r);
	}
	child_process_state(c, src, root_fd, mediated, err_w);

	/* The command starts with an empty signal mask. */
	sigemptyset(&empty);
	if (c->reset_mask && sigprocmask(SIG_SETMASK, &empty, NULL) < 0)
		fail(err_w, STAGE_SIGNALS, errno);

	/* Started pinned to the parent's CPU (engine.c): the command gets the parent's own mask. */
	if (c->cpus)
		(void)sched_setaffinity(0, sizeof(*c->cpus), c->cpus);

	child_confine(c, ruleset_fd, mediated, err_w);

	if (c->after_confine)
		_exit(c->after_confine(c, c->after_arg));
	((struct corral_child *)c)->reached_exec = true;
	{
		struct corral_child_report rep = { .stage = STAGE_EXEC };

		rep.err = exec_search(c->argv[0], c->argv, c->envp, c->path, c->sh_argv, &rep);
		if (!rep.err)
			rep.err = EIO;
		if (rep.err != rep.interp_err)
			rep.has_interp = false;
		fail_report(err_w, &rep);
	}
}

/* ------------------------------------------------------------------ proc "private" */

/*
 * The rest of this file is the init of a run's PID namespace. It runs in a
 * clone without CLONE_VM: a copy of the host process, alone in it (the host
 * may be multithreaded), so it still makes async-signal-safe calls only,
 * but it owns its memory and outlives the command's execve.
 */

/* Fields 4 (ppid), 48 and 49 (arg_start, arg_end) of /proc/self/stat; false if unreadable. */
static _child_ bool self_stat(long *ppid, unsigned long *arg_start, unsigned long *arg_end)
{
	char b[1024];
	ssize_t n;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC), field = 3;
	char *p = NULL;

	if (fd < 0)
		return false;
	n = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (n <= 0)
		return false;
	b[n] = 0;
	for (ssize_t i = 0; i < n; i++) /* the comm may hold ')': the last one ends it */
		if (b[i] == ')')
			p = b + i + 1;
	if (!p)
		return false;
	*ppid = -1;
	*arg_start = *arg_end = 0;
	while (*p) {
		unsigned long v = 0;

		while (*p == ' ')
			p++;
		while (*p >= '0' && *p <= '9')
			v = v * 10 + (unsigned long)(*p++ - '0');
		if (field == 4)
			*ppid = (long)v;
		else if (field == 48)
			*arg_start = v;
		else if (field == 49)
			*arg_end = v;
		while (*p && *p != ' ')
			p++;
		field++;
	}
	return *ppid >= 0;
}

static _child_ int write_all(const char *path, const char *s)
{
	size_t len = str_len(s);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n != (ssize_t)len) {
		int e = n < 0 ? errno : EIO;

		close(fd);
		return -e;
	}
	close(fd);
	return 0;
}

/*
 * Close every fd but |keep| (and 0..2): the init is a copy of the host,
 * fds and all, and never execs, so a pipe end it kept open would keep the
 * host's readers from their EOF (the run's own stdin among them) for the
 * whole run.
 */
static _child_ void close_all_but(int *keep, size_t n)
{
	unsigned lo = 3;

	/* Insertion sort: a dozen numbers at most. */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];

			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (size_t i = 0; i <= n; i++) {
		unsigned hi = i < n ? (unsigned)keep[i] : ~0U;

		if (i < n && keep[i] < (int)lo)
			continue;
		if (hi > lo && syscall(SYS_close_range, lo, hi - 1, 0) < 0) {
			/* Before Linux 5.9: one by one, up to the fd limit. */
			struct rlimit rl;
			unsigned end = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ?
				       (unsigned)rl.rlim_cur : 65536;

			for (unsigned fd = lo; fd < hi && fd < end; fd++)
				close((int)fd);
		}
		if (i < n)
			lo = (unsigned)keep[i] + 1;
	}
}

/* |*p| pointing into [lo, hi): moved by |delta|. */
static _child_ void rebase(char **p, unsigned long lo, unsigned long hi, long delta)
{
	if (*p && (unsigned long)*p >= lo && (unsigned long)*p < hi)
		*p += delta;
}

/*
 * Blank [lo, hi), the host's argv strings, in this copy of the host; the
 * pointers the command still uses into it (argv, the sh fallback's argv,
 * envp, PATH) go to a copy of the strings first. Only this process's
 * memory changes (no CLONE_VM). Without room for the copy, nothing is
 * blanked: the command must still run.
 */
static _child_ void blank_host_args(struct corral_child *c, unsigned long lo, unsigned long hi)
{
	static const char name[] = "corral-init";
	size_t len = hi - lo;
	char *copy = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long delta;

	if (copy == MAP_FAILED)
		return;
	memcpy(copy, (void *)lo, len);
	delta = (long)((unsigned long)copy - lo);
	for (char **a = (char **)c->argv; a && *a; a++)
		rebase(a, lo, hi, delta);
	for (char **a = c->sh_argv ? c->sh_argv + 1 : NULL; a && (a == c->sh_argv + 1 || *a); a++)
		rebase(a, lo, hi, delta);
	for (char **e = (char **)c->envp; e && *e; e++)
		rebase(e, lo, hi, delta);
	rebase((char **)&c->path, lo, hi, delta);
	memset((void *)lo, 0, len);
	memcpy((void *)lo, name, len > sizeof(name) ? sizeof(name) : 0);
}

/* Close all but what the init and the command need: the report pipe, stdio, the root, the run's fds. */
static _child_ void pidns_close_fds(const struct corral_child *c)
{
	const struct corral_sandbox *sb = c->sb;
	const struct corral_run *run = c->run;
	int keep[16];
	size_t nk = 0;

	keep[nk++] = c->err_w;
	keep[nk++] = c->fd_in;
	keep[nk++] = c->fd_out;
	keep[nk++] = c->fd_err;
	if (sb)
		keep[nk++] = sb->root_fd;
	if (c->after_confine) {
		for (int i = 0; i < 4; i++)
			keep[nk++] = c->after_fds[i];
	}
	if (run) {
		keep[nk++] = run->ruleset_fd;
		keep[nk++] = run->un_child;
		for (int i = 0; i < CORRAL_CG_MAX; i++)
			keep[nk++] = run->cg_fd[i];
	}
	close_all_but(keep, nk);
}

/*
 * The namespace's setup, as its init: into the run's cgroups, the id
 * maps of a user namespace, a private /proc of this namespace, the root
 * fd renumbered to this mount namespace's view, /proc added to the
 * Landlock ruleset, the CPU pinning. A failure is reported on err_w and
 * ends the init.
 */
static _child_ void pidns_setup(const struct corral_child *c)
{
	const struct corral_sandbox *sb = c->sb;
	const struct corral_run *run = c->run;
	int err_w = c->err_w;
	int r;

	/* The init too: the run's cgroups hold the whole namespace. */
	for (int i = 0; run && i < CORRAL_CG_MAX; i++)
		if (run->cg_fd[i] >= 0 && write(run->cg_fd[i], "0", 1) != 1)
			fail(err_w, STAGE_CGROUP, errno);

	if (sb && sb->procns.mode == CORRAL_PROCNS_USERNS) {
		/* An unprivileged process may map only its own ids, and gid_map only once setgroups is denied. */
		r = write_all("/proc/self/setgroups", "deny");
		if (r < 0 && r != -ENOENT)
			fail(err_w, STAGE_PIDNS_MAP, -r);
		r = write_all("/proc/self/uid_map", sb->procns.uid_map);
		if (r == 0)
			r = write_all("/proc/self/gid_map", sb->procns.gid_map);
		if (r < 0)
			fail(err_w, STAGE_PIDNS_MAP, -r);
	}
	/* A proc mounted on a shared "/" would propagate to the host: slave first. */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		fail(err_w, STAGE_PIDNS_MOUNTS, errno);
	/* This namespace's processes only; no hidepid needed. */
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		fail(err_w, STAGE_PIDNS_PROC, errno);
	/*
	 * The root fd names the directory in the host's mount namespace: a
	 * working directory there is unreachable from this one (getcwd fails,
	 * ".." climbs the other tree). The same directory here, by its path,
	 * proven the same by device and inode, takes its number.
	 */
	if (sb && sb->root_fd >= 0 && sb->root) {
		struct stat a, b;
		int fd = open(sb->root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (fd < 0)
			fail(err_w, STAGE_PIDNS_ROOT, errno);
		if (fstat(fd, &a) < 0 || fstat(sb->root_fd, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
			fail(err_w, STAGE_PIDNS_ROOT, EAGAIN);
		if (dup3(fd, sb->root_fd, O_CLOEXEC) < 0)
			fail(err_w, STAGE_PIDNS_ROOT, errno);
		close(fd);
	}
	if (sb && run && run->ruleset_fd >= 0) {
		r = corral_ll_add_proc(sb->ll, run->ruleset_fd);
		if (r < 0)
			fail(err_w, STAGE_PIDNS_LANDLOCK, -r);
	}
	if (c->cpus)
		(void)sched_setaffinity(0, sizeof(*c->cpus), c->cpus);
}

/*
 * Reap every process of the namespace (orphans come here, not to
 * corral's subreaper); when the command |cmd| ends, kill the rest:
 * kill(-1) from pid 1 reaches every other process of the namespace.
 * Every signal stays blocked (the parent blocked them around clone), so
 * no host handler runs and wait4 is never interrupted. The command's
 * stops and its end are reported on err_w.
 */
static _child_ void pidns_reap(const struct corral_child *c, pid_t cmd)
{
	struct corral_child_report rep, done = { .stage = STAGE_PIDNS_DONE };
	bool cmd_ended = false;
	ssize_t _unused_ wn;

	for (;;) {
		struct rusage ru = {};
		int st = 0;
		/* Interactive: the command's stops go to corral's job control (engine.c, tty_watch). */
		pid_t w = wait4(-1, &st, __WALL | (c->interactive ? WUNTRACED : 0), &ru);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			break; /* ECHILD: nothing left */
		}
		if (WIFSTOPPED(st)) {
			if (w == cmd) {
				rep = (struct corral_child_report){ .stage = STAGE_PIDNS_STOPPED,
								    .wstatus = WSTOPSIG(st) };
				wn = write(c->err_w, &rep, sizeof(rep));
			}
			continue;
		}
		if (ru.ru_maxrss > done.max_rss_kb)
			done.max_rss_kb = ru.ru_maxrss;
		if (w == cmd) {
			done.wstatus = st;
			cmd_ended = true;
			kill(-1, SIGKILL);
		} else if (cmd_ended && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) {
			done.leftovers++;
		}
	}
	if (cmd_ended)
		wn = write(c->err_w, &done, sizeof(done));
}

_child_ int corral_pidns_init_main(void *arg)
{
	struct corral_child *c = arg;
	struct corral_child_report rep;
	unsigned long arg_start, arg_end;
	ssize_t _unused_ wn;
	long ppid;
	pid_t cmd;

	/*
	 * Die with the parent; then make sure it did not die already. The
	 * parent lies outside this namespace (getppid() says 0): the host's
	 * /proc, still mounted here, names it.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		fail(c->err_w, STAGE_PDEATHSIG, errno);
	if (!self_stat(&ppid, &arg_start, &arg_end) || ppid != c->parent)
		fail(c->err_w, STAGE_PIDNS_PARENT, ESRCH);
	(void)prctl(PR_SET_NAME, "corral-init", 0, 0, 0);

	pidns_close_fds(c);
	pidns_setup(c);

	/*
	 * The command reads every process's command line in its /proc, this
	 * one's included: blank the host's arguments in this copy, before the
	 * command runs. What the command still needs of them (its argv is
	 * often a tail of corral's) moves to a copy first.
	 */
	if (arg_start && arg_end > arg_start)
		blank_host_args(c, arg_start, arg_end);

	/*
	 * A session's template (supervisor/session/template.c) is this init
	 * itself, confined in place: pid 1, the reaper of its calls. Its
	 * parent lies outside the namespace, so getppid() says 0 (the parent
	 * was checked above through the host's /proc).
	 */
	if (c->after_confine) {
		c->parent = 0;
		corral_child_main(c);
		_exit(127);
	}
	/* The command: its parent-death check looks for this init, pid 1. */
	c->parent = getpid();
	c->reached_exec = false;
	cmd = clone(corral_child_main, c->inner_stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD, c);
	if (cmd < 0)
		fail(c->err_w, STAGE_PIDNS_SPAWN, errno);
	/*
	 * It exec'd or ended. A setup failure it reported is in the pipe
	 * first; the parent takes the first report and ignores the rest.
	 */
	rep = (struct corral_child_report){ .stage = c->reached_exec ? STAGE_PIDNS_STARTED : STAGE_UNREPORTED,
					    .err = c->reached_exec ? 0 : EIO };
	wn = write(c->err_w, &rep, sizeof(rep));
	pidns_reap(c, cmd);
	_exit(0);
}
