/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sandbox object (internal view) and the pieces of the local provider:
 * identity, environment, cgroups, the child's confinement steps, the
 * private tmp. supervisor/exec/engine.h holds the engine every provider shares.
 */
#ifndef CORRAL_SANDBOX_H
#define CORRAL_SANDBOX_H

#include <stdbool.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "internal/util.h"
#include "landlock/landlock.h"
#include "policy/policy.h"
#include "seccomp/seccomp.h"
#include "supervisor/exec/engine.h"
#include "supervisor/local/netns.h"
#include "supervisor/exec/denials.h"
#include "supervisor/local/procns.h"
#include "supervisor/local/unotify/unotify.h"
#include "supervisor/local/egress/egress.h"
#include "policy/posture.h"

struct corral_docker;

/* Cgroup controllers/hierarchies a run may use (one directory each). */
enum {
	CORRAL_CG_PIDS = 0,   /* v1 pids, or v2 when it has the pids controller */
	CORRAL_CG_MEMORY = 1, /* v1 memory, or v2 when it has the memory controller */
	CORRAL_CG_UNIFIED = 2,/* v2 (membership and cgroup.kill; may hold the controllers) */
	CORRAL_CG_MAX = 3,
};

struct corral_cgroup_parents {
	/* Absolute directories under which a run's cgroup is created; NULL: unusable. */
	char *dir[CORRAL_CG_MAX];
	bool v2_pids;   /* the unified directory has the pids controller */
	bool v2_memory; /* ... and the memory controller */
	bool v2_kill;   /* cgroup.kill exists (5.14+) */
};

/*
 * A /proc walk (corral_count_uid_tasks) in a thread, and what its waiter
 * needs to know (supervisor/exec/sandbox.c, count_wait).
 */
struct corral_count_job {
	long count;
	int done;   /* a futex word: 1 once |count| is stored */
	int tid;    /* the thread's, stored first thing; 0 before it runs */
	pid_t tgid; /* the process that started it */
	unsigned generation; /* forks seen by then (sandbox.c) */
	uid_t uid;
};

struct corral_sandbox {
	struct corral_policy *policy;
	int provider;
	char *root;          /* realpath of the root */
	int root_fd;         /* O_PATH|O_DIRECTORY */

	/* Identity (decided when corral runs as root). */
	bool switch_identity; /* setgroups/setresgid/setresuid in the child */
	bool drop_caps;       /* drop every capability in the child */
	uid_t uid;
	gid_t gid;

	struct corral_ll_plan *ll;
	struct corral_bpf bpf;
	bool have_bpf;
	struct corral_posture posture;
	char **dropped;       /* best-effort: lines of dropped promises */
	size_t n_dropped;

	/*
	 * What runs `-c STRING` (policy key shell): the policy's, or the
	 * default decided when the sandbox is built: /bin/bash where it
	 * exists, else /bin/sh. NULL for docker with the default: the image's
	 * bash where it has one (sandbox.c, shell_argv).
	 */
	const char *shell;

	/*
	 * HOME is the run's own directory, its private tmp (made even when
	 * fs.private_tmp is false, without TMPDIR then): neither env.set nor
	 * env.pass names HOME. The tmp itself, not a directory in it: one
	 * more mkdir and rmdir per run cost ~3 ms of median latency on a
	 * loaded ext4 /var/tmp (the tmp base without a memory cgroup).
	 */
	bool private_home;

	int audit_fd;         /* the policy's audit log (O_APPEND), or -1 */
	char policy_sha256[65]; /* of the canonical policy, for the audit lines */

	char **envp;          /* base environment without TMPDIR and HOME; NULL-terminated */
	size_t n_envp;
	const char *path;     /* the PATH value inside envp (for the command lookup) */

	struct corral_cgroup_parents cg;
	bool use_cgroups;
	/*
	 * The command cannot write to cgroupfs (Landlock enforced, and neither
	 * the root nor a read_write path is /sys or beneath it), so no process
	 * of a run can move itself out of the run's cgroup: its pids count is
	 * the whole tree.
	 */
	bool cgroup_holds_tree;
	bool nproc_in_userns; /* proc "private" in a user namespace: RLIMIT_NPROC = procs + 1 (its init) */
	bool nproc_relative;  /* RLIMIT_NPROC = procs + the uid's task count ... */
	long nproc_base;      /* ... counted once, when the sandbox is built, */
	struct corral_count_job *nproc_job; /* ... by a thread, overlapping the rest of the setup */
	struct corral_count_job nproc_own_job; /* (nproc_job: this, or corral_nproc_prefetch's) */
	pthread_t nproc_thread;
	bool nproc_pending;   /* nproc_base not yet taken from the job */
	bool nproc_joinable;  /* nproc_thread is this sandbox's to join */
	uid_t nproc_uid;
	pid_t nproc_self;     /* the process the count left out */
	const char *tmp_base; /* where private tmps are made (static string) */

	struct corral_docker *docker;
	char *auto_why; /* provider auto chose local: why docker was not usable (into each result's warnings) */

	struct corral_netns_plan netns; /* network "loopback" (supervisor/local/netns.c) */
	struct corral_procns_plan procns; /* proc "private" (supervisor/local/procns.c) */
	int unix_mode;                  /* enum corral_unix_mode (supervisor/local/unotify/unotify.c) */
	struct corral_unotify_plan *unotify; /* CORRAL_UNIX_MEDIATED only */
	struct corral_egress *egress;   /* network "allow": the egress proxy (supervisor/local/egress/) */
};

/* One run's confinement state, prepared by the parent before fork. */
struct corral_run {
	int ruleset_fd;              /* Landlock ruleset for this run, or -1 */
	int cg_fd[CORRAL_CG_MAX];    /* O_WRONLY cgroup.procs of the run's cgroups, or -1 */
	char *cg_dir[CORRAL_CG_MAX]; /* the run's cgroup directories (rmdir after) */
	int tmp_fd;                  /* the private tmp directory, or -1 */
	char *tmp_path;
	int cwd_fd;                  /* the working directory (cwd, resolved beneath the root), or -1: the root */
	int un_parent, un_child;     /* Unix mediation: the listener's way to the parent, or -1 */
	struct corral_denials *denials; /* what the supervisor saw refused (supervisor/exec/denials.h) */
	unsigned extra_procs;        /* corral's own processes in the run's pids cgroup beyond the limit (a session's spare's) */
};

/* identity.c: decide uid/gid (euid 0) and add the identity promises. */
int corral_identity_decide(struct corral_sandbox *sb, struct corral_error *err);

/* env.c: the scrubbed base environment. */
int corral_env_build(struct corral_sandbox *sb, struct corral_error *err);
/*
 * envp for one run: the base plus TMPDIR=|tmp| and HOME=|home| (each when
 * non-NULL and the base has none). Free it and bufs[0..1] with free().
 */
char **corral_env_for_run(const struct corral_sandbox *sb, const char *tmp, const char *home, char *bufs[2]);

/*
 * Start counting |uid|'s tasks now, in a thread, for the first sandbox
 * built later that needs that count (RLIMIT_NPROC without a pids cgroup).
 * Once per process; an unclaimed count is simply never read.
 */
void corral_nproc_prefetch(uid_t uid);

/* cgroup.c */
void corral_cgroup_detect(struct corral_cgroup_parents *cg);

/*
 * The limits.processes promise for a command of uid 0 or not (|uid0|),
 * with or without a pids cgroup per run (|pids_cg|): the sandbox's and
 * probe's one decision.
 */
void corral_processes_posture(const struct corral_policy *p, bool uid0, bool pids_cg, struct corral_posture *ps);
/* limits.memory: what bounds memory, with a memory cgroup per run (|mem_cg|) or without. */
/* Can |uid|:|gid| (no supplementary groups, no capabilities) write and enter |st|? */
bool corral_can_write(const struct stat *st, uid_t uid, gid_t gid);
void corral_memory_posture(const struct corral_policy *p, bool mem_cg, struct corral_posture *ps);
/* Does a memory cgroup per run bound |sb|'s runs (then no RLIMIT_AS)? */
bool corral_sandbox_memory_cgroup(const struct corral_sandbox *sb);
void corral_cgroup_parents_clear(struct corral_cgroup_parents *cg);
int corral_cgroup_create(const struct corral_sandbox *sb, struct corral_run *run,
			 struct corral_error *err);
/* Kill every process in the run's cgroups. Returns true when a cgroup did it. */
bool corral_cgroup_kill(const struct corral_run *run);
/*
 * Tasks charged to the run's pids cgroup (zombies count until reaped), or
 * -1 when the run has none. Nothing of the run leaves it: moving out takes
 * write access to cgroupfs, which the command never has.
 */
long corral_cgroup_tasks(const struct corral_run *run);
void corral_cgroup_remove(struct corral_run *run);
long corral_cgroup_oom_kills(const struct corral_sandbox *sb, const struct corral_run *run);
void corral_cgroup_kill_and_remove(const struct corral_run *run);

/* tmp: the run's private tmp and its safe removal. */
int corral_tmp_create(const struct corral_sandbox *sb, struct corral_run *run,
		      struct corral_error *err);
void corral_tmp_remove(const struct corral_sandbox *sb, struct corral_run *run);

const char *corral_tmp_base(bool mem_cg);
/*
 * seccomp_cache.c: corral_seccomp_compile_unix, served from the filters
 * precompiled at build time when the policy is a standard one.
 */
int corral_seccomp_compile_cached(const struct corral_policy *p, int landlock_abi, bool unix_allowed,
				  int handover_fd, struct corral_posture *ps, struct corral_bpf *out,
				  struct corral_error *err);

/* The uid's current task count (threads included), not counting our own process nor |skip| (when > 0); or -1. */
long corral_count_uid_tasks(uid_t uid, pid_t skip);

/* The argument block of the child: everything prepared, read-only in the child. */
struct corral_child {
	const struct corral_sandbox *sb; /* NULL: a plain child */
	const struct corral_run *run;
	char *const *argv;
	char *const *envp;
	const char *path;   /* PATH to search when argv[0] has no '/' */
	const char *cwd;    /* plain child: working directory or NULL */
	int fd_in, fd_out, fd_err; /* -1: keep the inherited one */
	int err_w;
	bool interactive;
	bool reset_mask;    /* the parent blocked every signal around clone */
	pid_t parent;
	const struct corral_spawn_rlimits *rlimits; /* may be NULL */
	const cpu_set_t *cpus; /* the command's CPU mask, when the child starts pinned; or NULL */
	/*
	 * For a file without a #! line (ENOEXEC), run as execvp and shells do:
	 * { "/bin/sh", (the file, filled in by the child), argv[1..], NULL },
	 * allocated by the parent for the child's use only; or NULL.
	 */
	char **sh_argv;
	/*
	 * Set by the child just before execve. The child shares the parent's
	 * memory (CLONE_VM|CLONE_VFORK), so when it ends with neither a report
	 * nor this flag, a setup step failed and could not even report (e.g.
	 * a limit that makes the error-pipe write fail): a setup error, not
	 * the command's exit status.
	 */
	volatile bool reached_exec;
	/*
	 * proc "private": the stack the init (corral_pidns_init_main) starts
	 * the command on, in the init's own copy of this memory; NULL otherwise.
	 */
	char *inner_stack_top;
	/*
	 * When set, called once every confinement step is done, instead of
	 * execve: a session's template process (supervisor/session/) lives on
	 * confined. Its return value is the exit status. Only for a child that
	 * does not share the parent's memory (a fork).
	 */
	int (*after_confine)(const struct corral_child *c, void *arg);
	void *after_arg;
	/*
	 * With after_confine under corral_pidns_init_main: four more fds the
	 * init keeps open for it (-1: none). The init does not start the
	 * command as its child then: it runs corral_child_main itself, so
	 * the confined process (a session's template) is pid 1.
	 */
	int after_fds[4];
};

/* Stages the child reports through the error pipe. */
enum corral_child_stage {
	STAGE_UNREPORTED = -1, /* parent side: died before execve without a report */
	STAGE_SIGNALS = 1,
	STAGE_SESSION,
	STAGE_TTY,
	STAGE_PDEATHSIG,
	STAGE_PARENT,
	STAGE_CGROUP,
	STAGE_SETGROUPS,
	STAGE_SETRESGID,
	STAGE_CAPBSET,
	STAGE_AMBIENT,
	STAGE_SETRESUID,
	STAGE_CAPSET,
	STAGE_RLIMIT,
	STAGE_STDIO,
	STAGE_CLOSE_FDS,
	STAGE_CHDIR,
	STAGE_NO_NEW_PRIVS,
	STAGE_LANDLOCK,
	STAGE_SECCOMP,
	STAGE_EXEC,
	STAGE_NETNS,
	STAGE_USERNS_MAP,
	STAGE_LOOPBACK_UP,
	STAGE_UNOTIFY,
	STAGE_PIDNS_PARENT,  /* proc "private": the steps of the namespace's init */
	STAGE_PIDNS_MAP,
	STAGE_PIDNS_MOUNTS,
	STAGE_PIDNS_PROC,
	STAGE_PIDNS_LANDLOCK,
	STAGE_PIDNS_ROOT,
	STAGE_PIDNS_SPAWN,
	STAGE_PIDNS_STARTED, /* not an error: the command was exec'd (err 0) */
	STAGE_PIDNS_DONE,    /* not an error: the command ended (err 0, wstatus...) */
	STAGE_PIDNS_STOPPED, /* not an error: the command stopped (wstatus: the signal) */
};
const char *corral_child_stage_name(int stage);

struct corral_child_report {
	int stage;
	int err;
	/*
	 * STAGE_EXEC with ENOENT for a file that exists: its #! interpreter
	 * (cut to fit), or "" for a binary whose ELF interpreter is missing;
	 * has_interp false when the file itself was not found.
	 */
	bool has_interp;
	int interp_err; /* the execve errno has_interp describes: ENOENT, or EACCES (interpreter denied) */
	char interp[234];
	/*
	 * STAGE_PIDNS_DONE: the command's wait status, the largest ru_maxrss
	 * of the processes the init reaped, and how many of them were still
	 * alive when the command ended (killed then).
	 */
	int wstatus;
	long max_rss_kb;
	long leftovers;
};

/*
 * The rlimits of one run of |sb| (limits.*; RLIMIT_NPROC relative to the
 * uid's task count when there is no pids cgroup). |cancel_fd| may be -1.
 */
void corral_sandbox_rlimits(struct corral_sandbox *sb, struct corral_spawn_rlimits *rl, int cancel_fd);

/* The child entry point for clone(); never returns. */
int corral_child_main(void *arg);

/*
 * proc "private": the entry point of a clone (not CLONE_VM) made with
 * corral_procns_clone_flags(). It becomes pid 1 of the new namespace,
 * mounts its /proc, starts corral_child_main on |arg|'s inner_stack_top,
 * reports STAGE_PIDNS_STARTED (or a failure) on the error pipe, reaps
 * every process of the namespace, kills what is left when the command
 * ends, reports STAGE_PIDNS_DONE and exits 0. Never returns.
 */
int corral_pidns_init_main(void *arg);

#endif
