/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcorral — run untrusted commands confined to one directory.
 *
 * Life of a caller:
 *   1) Build a policy: corral_policy_new() (built-in defaults), or
 *      corral_policy_load_file()/corral_policy_load_string(); optionally
 *      overlay command-line style options with corral_policy_set().
 *   2) Build a sandbox from it once: corral_sandbox_new() opens the allowed
 *      paths, builds the Landlock ruleset and compiles the seccomp filter.
 *   3) Run any number of commands: corral_sandbox_exec() (thread-safe on one
 *      sandbox object), reading a struct corral_result each time.
 *   4) corral_result_clear(), corral_sandbox_free(), corral_policy_free().
 *
 * Conventions: functions return 0 or a negative errno value. Nothing in the
 * library prints, logs or exits. Where a message helps, an optional
 * struct corral_error out-parameter (may be NULL) receives a code and a text;
 * it is left untouched on success. Destructors accept NULL.
 */
#ifndef CORRAL_H
#define CORRAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "corral-version.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The library's version string, e.g. "0.2.0": the library this program
 * runs with. CORRAL_VERSION_STRING and CORRAL_VERSION_MAJOR/MINOR/MICRO
 * (corral-version.h) are the header's it was compiled with.
 */
const char *corral_version(void);

/* ---------------------------------------------------------------- errors */

/*
 * Error codes carried in struct corral_error.code. Stable API: values never
 * change meaning. The string form (corral_error_code_name()) is what the CLI
 * prints as "code" in its JSON error object.
 */
enum corral_error_code {
	CORRAL_OK = 0,
	CORRAL_E_USAGE = 1,        /* "usage": bad option or argument */
	CORRAL_E_POLICY = 2,       /* "policy": malformed policy; message names the key path */
	CORRAL_E_UNENFORCEABLE = 3,/* "unenforceable": the kernel cannot keep a promise (strict) */
	CORRAL_E_SETUP = 4,        /* "setup": a setup step failed (message names the stage) */
	CORRAL_E_NOT_FOUND = 5,    /* "not_found": root, path, image or command does not exist */
	CORRAL_E_ESCAPE = 6,       /* "escape": a path resolves outside the root */
	CORRAL_E_REFUSED = 7,      /* "refused": resolver refused (symlink, magic link, mount, type) */
	CORRAL_E_UNSUPPORTED = 8,  /* "unsupported": not available on this host/kernel */
	CORRAL_E_PROVIDER = 9,     /* "provider": the provider (e.g. docker daemon) failed */
	CORRAL_E_INTERNAL = 10,    /* "internal": out of memory or a bug */
	CORRAL_E_NOT_IMPLEMENTED = 11, /* "not_implemented" */
};

struct corral_error {
	int code;          /* enum corral_error_code */
	int sys_errno;     /* underlying errno, or 0 */
	char message[512]; /* one line, no trailing newline, no "corral: " prefix */
};

/* Short stable name of an error code ("policy", "unenforceable", ...). */
const char *corral_error_code_name(int code);

/*
 * The JSON error object of DESIGN.md, {"error": {"code": "policy",
 * "message": "..."}} (no trailing newline), for |code| and |message| (any
 * bytes: invalid UTF-8 becomes U+FFFD). Caller frees. NULL on ENOMEM.
 */
char *corral_error_json(int code, const char *message);

/* ---------------------------------------------------------------- policy */

struct corral_policy;

/* A policy holding every built-in default (docs/policy.md). */
int corral_policy_new(struct corral_policy **out);

/*
 * Load and validate a JSON policy; keys not present take their defaults.
 * On error returns -EINVAL (or -errno for I/O) and fills err->message with
 * the failing key path ("limits.memroy: unknown key") or, for JSON syntax,
 * the line and column.
 */
int corral_policy_load_file(const char *path, struct corral_policy **out,
			    struct corral_error *err);
int corral_policy_load_string(const char *json, struct corral_policy **out,
			      struct corral_error *err);

/*
 * Overlay one command-line option onto a policy; flags win over the file.
 * |option| is the long option name without dashes, as in corral(1):
 * "root", "ro", "rw", "net", "timeout", "memory", "cpu", "procs",
 * "file-size", "open-files", "max-output", "env", "user", "provider",
 * "image", "compat", "cwd", "audit", "preset", "proc", "allow", "approve". "ro", "rw",
 * "env" and "allow" append; the rest replace. "cwd" is kept as given: it is relative to the
 * root, not to getcwd; a relative "audit" is made absolute like "root".
 * "preset" overwrites timeout and every limits.* key with a named set
 * ("minimal", "standard": docs/policy.md): set it before the limits it
 * should not override.
 * Relative "root", "ro" and "rw" values are made absolute against the
 * current directory (as $PWD spells it when $PWD names it, so a symlink
 * the user came through stays visible to the root's check; else getcwd);
 * every path is normalised lexically. "env"
 * takes NAME (pass from the host) or NAME=VALUE (set); the later one for a
 * name wins. Returns -EINVAL with a message naming the option ("--memory:
 * bad size '12Q' ...") on a bad value, leaving |p| unchanged.
 */
int corral_policy_set(struct corral_policy *p, const char *option,
		      const char *value, struct corral_error *err);

/*
 * Canonical JSON of the complete policy (every default filled in, keys in
 * a fixed order, trailing newline). Loading the result and dumping it again
 * yields identical bytes. Caller frees with free(). NULL on ENOMEM.
 */
char *corral_policy_dump(const struct corral_policy *p);

struct corral_policy *corral_policy_dup(const struct corral_policy *p);
void corral_policy_free(struct corral_policy *p);

/* Accessors for callers that need to branch on a policy's values. */
/* AUTO: corral_sandbox_new picks docker where it is usable, else local (docs/providers.md). */
enum corral_provider { CORRAL_PROVIDER_LOCAL = 0, CORRAL_PROVIDER_DOCKER = 1, CORRAL_PROVIDER_AUTO = 2 };
/* ALLOW: egress only to the hosts of policy key "allow" (--allow), through corral's proxy. */
enum corral_network { CORRAL_NET_NONE = 0, CORRAL_NET_LOOPBACK = 1, CORRAL_NET_HOST = 2, CORRAL_NET_ALLOW = 3 };
enum corral_compat { CORRAL_COMPAT_STRICT = 0, CORRAL_COMPAT_BEST_EFFORT = 1 };
/* Policy key "proc": the host's PID namespace and /proc, or the command's own. */
enum corral_proc { CORRAL_PROC_HOST = 0, CORRAL_PROC_PRIVATE = 1 };

int corral_policy_provider(const struct corral_policy *p);
int corral_policy_network(const struct corral_policy *p);
/* The root as given (may be NULL: the current directory at run time). */
const char *corral_policy_root(const struct corral_policy *p);

/*
 * Refuse (CORRAL_E_POLICY, -EINVAL) a policy whose root (the current
 * directory when unset) or a read-write path is "/" or contains a system
 * directory (/etc, /usr, /home, /root, /var, /proc, /dev, ...):
 * "root /: refusing a root that contains system
 * directories (/etc, ...)". A path that does not resolve is left to the
 * sandbox to report. Also refuses (CORRAL_E_REFUSED, -ELOOP) a root reached
 * through a symlink a uid other than root or the caller could have made
 * (owned by another uid, or in a directory another uid may write, not
 * sticky): a run can plant one in its root, and the directory it leads to
 * would decide a later run's identity. With no root set, the current
 * directory is judged as $PWD spells it when $PWD names it. corral_sandbox_new
 * and corral_probe refuse the same.
 */
int corral_policy_check_paths(const struct corral_policy *p, struct corral_error *err);

/* ---------------------------------------------------------------- kernel */

/*
 * The Landlock ABI version of the running kernel (0 when Landlock is absent
 * or disabled). The environment variable CORRAL_TEST_LANDLOCK_ABI=N, read
 * only when set, pretends a lower ABI (never a higher one): a test hook for
 * strict/best-effort behaviour, documented in docs/threat-model.md.
 */
int corral_landlock_abi(void);

/*
 * What this host can enforce and, for |p| (may be NULL: defaults), the
 * posture: egress, fs_confined, and per promise enforced or dropped-and-why.
 * Returns a JSON object as text (caller frees) in *json_out.
 */
int corral_probe(const struct corral_policy *p, char **json_out,
		 struct corral_error *err);

/* ---------------------------------------------------------------- sandbox */

struct corral_sandbox;

/*
 * Build a sandbox from |p| (copied; the caller keeps ownership of |p|):
 * validates that the root and every asked-for path exist, decides the
 * identity when running as root, opens allowed paths O_PATH|O_CLOEXEC,
 * builds the Landlock ruleset and compiles the seccomp filter; opens the
 * policy's audit log for appending (created 0600). With
 * compat "strict", returns -EPERM and CORRAL_E_UNENFORCEABLE naming the
 * promise when the kernel cannot keep one.
 */
int corral_sandbox_new(const struct corral_policy *p, struct corral_sandbox **out,
		       struct corral_error *err);
void corral_sandbox_free(struct corral_sandbox *sb);

/*
 * Promises dropped under compat "best-effort" (one line each, e.g.
 * "truncate outside the root: needs Landlock ABI 3, kernel has 2"). Valid
 * while |sb| lives. Returns the count; *lines may be NULL when 0.
 */
size_t corral_sandbox_dropped(const struct corral_sandbox *sb, const char *const **lines);

/*
 * What `-c STRING` (corral_exec_opts.shell) runs: the policy's shell, or
 * the default chosen when |sb| was built: /bin/bash where it exists, else
 * /bin/sh (docker: the image's /bin/bash where it has one, else /bin/sh;
 * "/bin/sh" is returned). Valid while |sb| lives.
 */
const char *corral_sandbox_shell(const struct corral_sandbox *sb);
/* The provider |sb| runs commands with: LOCAL or DOCKER (what AUTO chose). */
int corral_sandbox_provider(const struct corral_sandbox *sb);

/* Per-call options. Initialise with CORRAL_EXEC_OPTS(...) or zero + sz. */
struct corral_exec_opts {
	size_t sz;                 /* sizeof(struct corral_exec_opts) */
	const char *const *argv;   /* command and arguments; argv[0] looked up in PATH */
	const char *shell;         /* instead of argv: run SHELL -c |shell| (corral_sandbox_shell) */
	bool capture;              /* capture stdout/stderr into the result */
	const void *stdin_data;    /* capture mode: bytes fed to stdin (NULL: /dev/null) */
	size_t stdin_len;
	/*
	 * Inherit the caller's stdin; false (the default): /dev/null, unless
	 * stdin_data. A captured run should leave it false: a pipe the caller
	 * keeps open would hold a command that reads stdin until the deadline
	 * (the CLI passes it without --json, and with --json only for --stdin
	 * pass). Without capture, when stdin
	 * is then a terminal whose foreground group is the caller's, the run is
	 * interactive: the command's process group gets the terminal; the
	 * terminal modes are restored when the run ends; when the command
	 * stops (Ctrl-Z), corral restores the modes, takes the terminal back
	 * and sends the stop signal to the caller's process group — the whole
	 * process stops, as a shell's job does — then continues the command
	 * when continued itself (docs/threat-model.md "Interactive runs").
	 */
	bool stdin_passthrough;
	size_t max_output;         /* per-stream cap; 0: the policy's limits.output; SIZE_MAX: none */
	double timeout;            /* seconds; 0: the policy's timeout; negative, NaN or infinite: EINVAL */
	/*
	 * With |has_cancel_fd|: the run is cancelled once |cancel_fd| becomes
	 * readable (e.g. a self-pipe a signal handler writes to): the whole
	 * tree is killed and reaped as at the deadline, and the result says
	 * signal 9 with timed_out false. Not read, not closed by corral.
	 */
	bool has_cancel_fd;
	int cancel_fd;
	/*
	 * Working directory, relative to the root (an absolute path must lie
	 * under it); NULL: the policy's cwd, and the root when that is null
	 * too. Resolved beneath the root's fd like corral_resolve_open (no
	 * "..", symlink or mount crossing out of it): a path that escapes or
	 * is not a directory fails the call with CORRAL_E_ESCAPE,
	 * CORRAL_E_REFUSED or CORRAL_E_NOT_FOUND naming "cwd".
	 */
	const char *cwd;
};
#define CORRAL_EXEC_OPTS(...) \
	((struct corral_exec_opts){ .sz = sizeof(struct corral_exec_opts), __VA_ARGS__ })

/*
 * One refusal the policy made during a run. |kind| and |source| are static
 * strings; |what| and |hint| are owned by the result.
 */
struct corral_denial {
	const char *kind;    /* "network", "fs", "syscall" or "unix_socket" */
	char *what;          /* what was refused: "socket(AF_INET)", "/etc/passwd" */
	unsigned long count; /* how many times */
	const char *source;  /* "kernel", "supervisor" (seen exactly) or "inferred" (from the output) */
	char *hint;          /* one line: what to change, naming the option or policy key */
};

/*
 * What one run did. The caller owns it and sets |sz| before the first
 * corral_sandbox_exec: CORRAL_RESULT_INIT, or sz = sizeof(struct
 * corral_result). The library writes no byte at or past |sz|, so later
 * versions can add fields at the end without a new symbol version; a
 * |sz| smaller than this version's first struct is refused (-EINVAL).
 * corral_result_clear keeps |sz|: a result can be reused.
 */
struct corral_result {
	size_t sz;                 /* sizeof(struct corral_result), set by the caller */
	char run_id[33];           /* this run: 128 random bits as 32 lowercase hex digits */
	int64_t started_at_ms;     /* when it started: milliseconds since the Unix epoch (UTC) */
	int exit_status;           /* valid when exited is true */
	bool exited;               /* the command exited normally */
	int signal;                /* the signal that ended it, or 0 */
	bool timed_out;            /* the deadline killed it (then exited is false) */
	/*
	 * Which limit, if any, ended the run (a static string): "exit" (it
	 * exited), "signal" (a signal no limit sent), "timeout" (the
	 * deadline), "memory" (the memory cgroup's OOM killer killed a
	 * process of the run, which did not then exit 0; only where a memory
	 * cgroup bounds the run: under RLIMIT_AS an allocation fails inside
	 * the program instead), "cpu" (SIGXCPU or SIGKILL after the main
	 * process used its RLIMIT_CPU), "file_size" (SIGXFSZ: a write past
	 * RLIMIT_FSIZE), "cancelled" (cancel_fd).
	 */
	const char *ended_by;
	int exec_errno;            /* execve failed in the child: ENOENT (127; 126 with exec_interp) / EACCES... (126); else 0 */
	/*
	 * Capture mode: what the stream wrote (NUL-terminated), else NULL.
	 * Longer than the cap (max_output): its head and its tail, half the
	 * cap each, neither cut inside a UTF-8 character, joined by one line
	 * "[… N bytes omitted …]" (N: every byte left out), and
	 * *_truncated true. *_len is the length of *_buf, marker included;
	 * *_bytes counts every byte the stream wrote.
	 */
	char *stdout_buf;
	size_t stdout_len;
	bool stdout_truncated;
	char *stderr_buf;
	size_t stderr_len;
	bool stderr_truncated;
	uint64_t stdout_bytes;
	uint64_t stderr_bytes;
	double wall_ms;
	double cpu_ms;             /* user + system of the whole reaped tree */
	/*
	 * Peak resident set of the largest process of the tree. The command
	 * is started sharing the caller's memory until execve, and the kernel
	 * counts that memory's size then into the peak: for a caller larger
	 * than the command, this is at least the caller's resident size (the
	 * corral CLI's supervisor is ~3 MiB, so its figure is the command's).
	 */
	long max_rss_kb;
	const char *provider;      /* "local" or "docker" (static string) */
	/*
	 * Processes of the run still alive when its main process exited by
	 * itself (a server started with &), which corral then killed; 0 when
	 * the deadline or a cancel ended the run (everything was killed then).
	 */
	unsigned leftovers_killed;
	/*
	 * exec_errno ENOENT for a file that is there: what is missing is its
	 * #! interpreter (this is its path; a trailing '\r' when the script
	 * has CRLF line endings) or, "" here, something further down (the ELF
	 * interpreter of a binary, an interpreter's own interpreter); the
	 * command exists, so its exit code is 126. exec_errno EACCES: the #!
	 * interpreter that exists but may not be opened (outside the
	 * sandbox's paths), when that is why. NULL otherwise. Freed by
	 * corral_result_clear.
	 */
	char *exec_interp;
	/*
	 * What the policy refused during the run, one entry per kind and
	 * target ("denials" in corral(1)), and what compat "best-effort"
	 * dropped, one line each ("best-effort: dropped ID: ...", as
	 * corral_sandbox_dropped). Freed by corral_result_clear.
	 */
	struct corral_denial *denials;
	size_t n_denials;
	char **warnings;
	size_t n_warnings;
	/* Fields added in later versions go here, at the end. */
};
#define CORRAL_RESULT_INIT { .sz = sizeof(struct corral_result) }

/*
 * Run one command in the sandbox and wait for it (and its whole process
 * tree) to end. Returns 0 when the command ran — whatever it did; look at
 * |res| (its |sz| set by the caller: -EINVAL otherwise). Returns a negative errno with |err| set when corral itself failed
 * (setup, a child setup stage). Not-found and not-executable commands are
 * reported through res->exec_errno with return 0 (exit codes 127/126).
 * For the first 5 ms of a run the calling thread is pinned to the CPU it
 * is on (its own mask is restored after, and the command always gets it):
 * see docs/threat-model.md.
 *
 * What it does to the calling process: from the first call on, the
 * process is a child subreaper (PR_SET_CHILD_SUBREAPER), so the runs'
 * orphaned descendants come to it and corral kills and reaps them; so do
 * the orphans of the caller's own children (a `system("cmd &")`), which
 * the caller must reap itself or they stay zombies. The caller must not
 * reap children it did not start (no SIGCHLD set to SIG_IGN, no
 * waitpid(-1)): the run then fails with an error rather than report a
 * status it never saw. The caller's own children are left alone, also
 * when it runs with no_new_privs. A fork of the caller may run commands
 * too (it becomes a subreaper at its own first run), also while other
 * threads of the parent run theirs. The caller's fds 0, 1 and 2 must be
 * open (open /dev/null on a closed one), and |cancel_fd|, when not -1, an
 * open fd: otherwise -EBADF, saying which. With several runs in flight in one
 * process, each run's cleanup tells its own processes by its cgroups
 * where it has them; without cgroups a setsid daemon of one run may be
 * killed when another run ends (docs/threat-model.md).
 */
int corral_sandbox_exec(struct corral_sandbox *sb, const struct corral_exec_opts *opts,
			struct corral_result *res, struct corral_error *err);

/* Free what a result holds and zero it, all but |sz|. Accepts NULL. */
void corral_result_clear(struct corral_result *res);

/*
 * The conventional exit code of a result: the command's status; 128+N for
 * signal N; 124 timed out; 126 not executable; 127 not found; 125 for a
 * result that holds none (|sz| too small).
 */
int corral_result_exit_code(const struct corral_result *res);

/*
 * The result as the JSON object `corral run --json` prints (corral(1); stdout/stderr as UTF-8 with
 * invalid bytes replaced by U+FFFD, without splitting a character at the
 * cap). Caller frees. NULL on ENOMEM, or when |res->sz| is too small.
 */
char *corral_result_json(const struct corral_result *res);

/*
 * The same JSON object written straight to |f| (no trailing newline),
 * without building it in memory first. Returns 0, -EIO when a write
 * failed, or -EINVAL when |res->sz| is too small.
 */
int corral_result_json_fprint(const struct corral_result *res, FILE *f);

/*
 * When the command could not be executed (res->exec_errno set): the line
 * the CLI prints and the JSON's stderr carries, "corral: NAME: command not
 * found\n" or what it is about the interpreter or loader, into |buf|.
 * |name| is the command as the user gave it. Returns snprintf's count.
 */
int corral_result_exec_error(const struct corral_result *res, const char *name, char *buf, size_t len);

/* ---------------------------------------------------------------- resolver */

enum corral_resolve_flags {
	CORRAL_RESOLVE_FILE = 1 << 0,      /* must be a regular file */
	CORRAL_RESOLVE_DIRECTORY = 1 << 1, /* must be a directory */
	CORRAL_RESOLVE_ANY = 1 << 2,       /* any type (FIFOs/devices opened O_NONBLOCK) */
	CORRAL_RESOLVE_WRITE = 1 << 3,     /* open for writing (files only) */
};

/*
 * Open |path| (relative to |root_fd|, or absolute under |root_path| on a
 * separator boundary) with openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV. Returns an O_CLOEXEC fd, or a
 * negative errno with err->code CORRAL_E_ESCAPE / CORRAL_E_REFUSED /
 * CORRAL_E_NOT_FOUND / CORRAL_E_UNSUPPORTED (no openat2) and a reason.
 * Does not take ownership of |root_fd|. |root_path| may be NULL (then
 * absolute paths are refused).
 * |flags|: at most one of FILE, DIRECTORY, ANY (none means FILE), plus
 * WRITE (O_WRONLY, never O_TRUNC; not with DIRECTORY). The path is first
 * opened O_PATH and its type checked, so a refused device is never opened
 * for real. FIFOs and devices (ANY) come back with O_NONBLOCK still set;
 * regular files and directories without it. err->message reads
 * "PATH: reason" (PATH shown with control bytes and invalid UTF-8 as \xNN).
 * A path the kernel could not prove safe against a concurrent rename is
 * retried a bounded number of times, then refused (-EAGAIN).
 */
int corral_resolve_open(int root_fd, const char *root_path, const char *path,
			int flags, struct corral_error *err);

/*
 * Create a new regular file |path| under the root: the parent resolved
 * beneath, the final component created O_CREAT|O_EXCL|O_NOFOLLOW with
 * |mode|. Returns a writable O_CLOEXEC fd or a negative errno.
 */
int corral_resolve_create(int root_fd, const char *root_path, const char *path,
			  mode_t mode, struct corral_error *err);

/*
 * The host path of |path| under |root| (an absolute directory path),
 * proven by opening it beneath the root as above. *out is malloc'd.
 * |must_exist| false allows a missing final component (its parent must
 * resolve beneath the root). What exists must be a regular file or a
 * directory. The result is |root| as given (canonical when relative) plus
 * the components the kernel accepted, with no "." or ".."; absolute paths
 * may name the root as given or canonically. It is for display: open it
 * again beneath the root rather than by name.
 */
int corral_resolve_path(const char *root, const char *path, bool must_exist,
			char **out, struct corral_error *err);

/* ---------------------------------------------------------------- sessions */

/*
 * A session (DESIGN.md "Agent sessions"): one warm sandbox for an agent's
 * conversation. The policy, the root, the identity, the Landlock domain,
 * the seccomp filter, cgroups and the private tmp and HOME are set up once,
 * in a template process that forks every call; the session keeps a shell's
 * state (working directory, exported variables) between bash calls. Needs
 * the local provider and Landlock ABI 6 (scoped signals), which keeps calls
 * apart from each other and from the session (docs/sessions.md).
 */
struct corral_session;

/*
 * Called for every event of every call, from any of the session's threads,
 * never concurrently for one session (the session serialises the calls):
 * |line| is one complete JSON object of DESIGN.md "Agent sessions" (no
 * newline), e.g. {"id": 7, "event": "result", ...}; valid only during
 * the call. Must not call back into the session except corral_session_call
 * and corral_session_cancel.
 */
typedef void (*corral_session_event_fn)(void *userdata, const char *line, size_t len);

struct corral_session_opts {
	size_t sz;               /* sizeof(struct corral_session_opts) */
	const char *audit_path;  /* append one JSON line per call (DESIGN.md "Audit log"); NULL: the policy's, or off */
	unsigned max_calls;      /* calls running at once (0: 16); more get error "busy" */
	/*
	 * A host command (run with /bin/sh -c, outside the sandbox, with the
	 * caller's environment plus CORRAL_SESSION_ID and CORRAL_TOOL) asked
	 * before each bash, exec and file-tool call, the request's JSON on its
	 * stdin: exit 0 approves; anything else (or no answer within 60 s) is
	 * error "denied", audited, with the first line of its output. NULL: the
	 * policy's (key "approve"), or none.
	 */
	const char *approve;
};
#define CORRAL_SESSION_OPTS(...) \
	((struct corral_session_opts){ .sz = sizeof(struct corral_session_opts), __VA_ARGS__ })

/*
 * Start a session: the sandbox set up once (template etc.; with the docker
 * provider one long-lived container and its guardian). |p| is copied.
 * Errors as corral_sandbox_new, plus CORRAL_E_UNSUPPORTED (Landlock ABI
 * below 6) and CORRAL_E_PROVIDER (docker: the container did not start, or
 * the daemon is not on a Unix socket). The calling process becomes the
 * parent of the template (or guardian); it must not reap children it did
 * not start (as for corral_sandbox_exec).
 */
int corral_session_new(const struct corral_policy *p, const struct corral_session_opts *opts,
		       corral_session_event_fn fn, void *userdata,
		       struct corral_session **out, struct corral_error *err);

/*
 * Submit one request: one JSON object of the session protocol
 * ({"id": 3, "tool": "read_file", "path": "src/a.c"}), |len| bytes, not
 * necessarily NUL-terminated. Returns at once (0) after starting the call
 * (quick tools may have completed and emitted their result by then); every
 * outcome, a malformed request included, arrives as events through |fn|
 * (a bad request: {"id": ..., "event": "error", "error": {"code", "message"}},
 * id null when none could be read). Returns a negative errno only when the
 * session itself is unusable (-ESHUTDOWN after free began, -ENOMEM).
 * Thread-safe.
 */
int corral_session_call(struct corral_session *s, const char *request, size_t len);

/*
 * Cancel the running call whose id is |id_json| (the id's JSON text: "7" or
 * "\"abc\""): its tree is killed, its result says ended_by "cancelled".
 * Returns 1 if it was running, 0 if not. Thread-safe. (The "cancel" tool
 * does the same from a request.)
 */
int corral_session_cancel(struct corral_session *s, const char *id_json);

/*
 * End the session: every running call killed (their result events are
 * still delivered before this returns), the template and every process
 * gone, the private tmp removed. Accepts NULL.
 */
void corral_session_free(struct corral_session *s);

/* ---------------------------------------------------------------- check */

/*
 * Run the conformance canaries for |p| on this host. Fills *json_out with a
 * report (caller frees). *all_held is true when every promise the policy
 * makes holds.
 *
 * The canaries are small attacks, each paired with a positive control, run
 * as confined commands through a sandbox built from |p| — with its network
 * mode, compat, limits, read-only and read-write paths and environment —
 * except the root: check creates a scratch directory (mkdtemp under /tmp,
 * or /var/tmp or /dev/shm when a policy path covers /tmp) holding its own
 * root and an "outside" directory beside it, so it never writes into the
 * policy's root; everything is removed before it returns. Each canary is
 * the host program itself, executed as `EXE __canary NAME ARG...`: EXE is
 * /proc/self/exe resolved before anything is confined, and EXE and the
 * libraries it has mapped are added to the check sandbox as read-only
 * paths. So the host program must hand that argv to corral_canary_main()
 * (the corral CLI does); when it does not, corral_check fails with
 * CORRAL_E_UNSUPPORTED. Runs as root: the scratch root is given to the
 * identity the sandbox picks (nobody by default). While it builds the
 * sandbox, check sets CORRAL_CHECK_SECRET and LD_PRELOAD in the process
 * environment (restored afterwards) to prove they do not leak in, and it
 * lends a pseudo-terminal as fd 0 to the terminal canary (fd 0 restored
 * afterwards): do not call it while other threads read the environment or
 * use fd 0. The docker provider is not checked (CORRAL_E_UNSUPPORTED).
 *
 * Report: {"held": bool, "network", "compat", "landlock_abi", "uid",
 * "dropped": [...], "promises": [{"id", "promise", "state", "why",
 * "canaries": [{"name", "result", "observed"}]}]} with state "held",
 * "broken", "inconclusive" (a control failed) or "not_applicable".
 */
int corral_check(const struct corral_policy *p, char **json_out, bool *all_held,
		 struct corral_error *err);

/*
 * The canary side of corral_check: a program that calls corral_check must,
 * when its argv[1] is "__canary", return corral_canary_main(argc - 1,
 * argv + 1) from main before doing anything else. Prints one result line
 * on stdout; returns the exit status.
 */
int corral_canary_main(int argc, char **argv);

/* ---------------------------------------------------------------- helpers */

/*
 * Words for the errno value |e| ("No such file or directory"), the same
 * with every C library (corral's own table, as its messages use). The
 * string is static, or thread-local for an unknown value.
 */
const char *corral_strerror(int e);

/*
 * Start counting |uid|'s tasks now, in a thread, for the first sandbox
 * built later in this process that needs the count (limits.processes
 * through RLIMIT_NPROC, i.e. without a pids cgroup: unprivileged). Once
 * per process; an unclaimed count is never read. Optional: it only moves
 * a /proc walk off the run's critical path.
 */
void corral_nproc_prefetch(uid_t uid);

#ifdef __cplusplus
}
#endif

#endif /* CORRAL_H */
