/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The exec engine shared by the providers: fork one process (confined by
 * the sandbox's child steps for the local provider, plain for the docker
 * client), run the parent's event loop over its output pipes, a pidfd and
 * the deadline, kill the whole tree, reap, and fill a corral_result.
 */
#ifndef CORRAL_ENGINE_H
#define CORRAL_ENGINE_H

#include <stdbool.h>
#include <sys/resource.h>

#include "internal/util.h"

struct corral_sandbox;
struct corral_run;
struct corral_spawn_rlimits;

struct corral_spawn {
	/* Executable and arguments; argv[0] is looked up in |envp|'s PATH when it has no '/'. */
	char *const *argv;
	char *const *envp;
	/*
	 * When non-NULL, the child runs the local provider's confinement steps
	 * of |sb| (DESIGN.md "The life of one command") before execve. NULL:
	 * a plain child (own process group, PDEATHSIG, fds closed) — the docker
	 * client, whose confinement is the container.
	 */
	const struct corral_sandbox *confine;
	/* Working directory for a plain child (NULL: inherit). */
	const char *cwd;
	/*
	 * Called in the parent once the deadline passes, before the process
	 * tree is killed (docker: `docker kill` the named container). May be NULL.
	 */
	void (*on_deadline)(void *arg);
	/* Called after the tree is reaped, whatever happened (docker: `docker rm -f`). */
	void (*on_finish)(void *arg);
	void *hook_arg;
	const char *provider; /* static string copied into the result */
	/*
	 * The local provider's per-run state (ruleset fd, cgroups, private
	 * tmp) prepared by corral_sandbox_exec; NULL for a plain child. Its
	 * cgroups are used to kill the tree.
	 */
	const struct corral_run *run;
	/* Resource limits for the child (rlimit resource numbers); may be NULL. */
	const struct corral_spawn_rlimits *rlimits;
};

struct corral_spawn_rlimits {
	struct rlimit rl[RLIM_NLIMITS];
	bool set[RLIM_NLIMITS];
};

/*
 * Run |sp| with the per-call |opts| (capture, stdin, cap, timeout — already
 * defaulted from the policy by the caller: opts->timeout > 0 and
 * opts->max_output > 0). Returns 0 when the process ran (see |res|), or a
 * negative errno with |err| naming the failing stage.
 */
int corral_engine_run(const struct corral_spawn *sp, const struct corral_exec_opts *opts,
		      struct corral_result *res, struct corral_error *err);

/*
 * Docker provider entry points (supervisor/docker/run.c). prepare runs once in
 * corral_sandbox_new (client present, daemon answers, image present or
 * pull allowed, every policy key honourable); exec builds the `docker run`
 * argv for one command and runs it through corral_engine_run.
 */
struct corral_docker;
struct corral_policy;
int corral_docker_prepare(const struct corral_policy *p, const char *root_abs,
			  struct corral_docker **out, struct corral_error *err);
void corral_docker_free(struct corral_docker *d);
int corral_docker_exec(struct corral_docker *d, const struct corral_exec_opts *opts,
		       struct corral_result *res, struct corral_error *err);

#endif
