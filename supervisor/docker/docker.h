/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Docker provider internals exposed for the unit tests: the pure part
 * (policy -> `docker run` argv and the client's environment, and the
 * mapping of the client's exit status back onto corral's contract), kept
 * apart from the part that talks to the daemon.
 */
#ifndef CORRAL_DOCKER_H
#define CORRAL_DOCKER_H

#include <stdbool.h>
#include <sys/types.h>

#include "supervisor/exec/engine.h"

struct corral_policy;
struct corral_docker;

/* The fixed mount point of the root inside the container. */
#define CORRAL_DOCKER_WORKDIR "/workspace"
/* Where the exec helper (exec-helper.c) and the run's status socket are mounted. */
#define CORRAL_DOCKER_HELPER "/.corral-exec"
#define CORRAL_DOCKER_STATUS "/.corral-status"
/* The helper's file name, next to corral or in CORRAL_LIBEXECDIR. */
#define CORRAL_DOCKER_HELPER_NAME "corral-docker-exec"

struct corral_docker_host {
	uid_t uid, gid;              /* identity the container runs as */
	char *const *environ;        /* corral's environment: env.pass values, the client's own variables */
	const char *client;          /* absolute path of the docker client */
	const char *sock;            /* the daemon's Unix socket, or NULL (then only the client is used) */
	const char *helper;          /* host path of corral-docker-exec, bind-mounted at CORRAL_DOCKER_HELPER */
};

/*
 * What the exec helper reported on the run's status socket: a channel
 * only the helper can write (exec-helper.c). |started|: it connected, so
 * the container ran it and it tried the command; |exec_errno|: the exec
 * failed with that errno (0: the command ran); |interp|: with ENOENT, the
 * file exists and this #! interpreter (possibly "") is what is missing.
 */
struct corral_docker_status {
	bool started;
	int exec_errno;
	bool has_interp;
	char interp[256];
};

/* Parse the helper's report ("E errno\n" [ "I interp\n" ]) into |st| (started set by the caller). */
void corral_docker_status_parse(const char *buf, size_t len, struct corral_docker_status *st);

/*
 * Build the docker provider's plan from |p| without touching the daemon:
 * refuse what docker cannot honour (naming the key), then the `docker run`
 * options, the container environment and the client's environment.
 * Stats/realpaths the mounted paths (docker socket refusal).
 */
int corral_docker_plan(const struct corral_policy *p, const char *root_abs,
		       const struct corral_docker_host *h, struct corral_docker **out,
		       struct corral_error *err);

/*
 * The full argv (NULL-terminated, free with corral_docker_strv_free) for
 * one command run in a container called |name|, with the run's status
 * socket |status_sock| (a host path) mounted at CORRAL_DOCKER_STATUS. opts->cwd, when set, is a
 * normalised path relative to the root that the caller proved beneath it
 * (corral_sandbox_exec): the container starts in that directory of the workdir.
 */
int corral_docker_argv(const struct corral_docker *d, const struct corral_exec_opts *opts,
		       const char *name, const char *status_sock, char ***out, struct corral_error *err);

/* The docker client's environment (NULL-terminated; owned by |d|). */
char *const *corral_docker_client_env(const struct corral_docker *d);

/*
 * Turn the docker client's result into the command's, deciding exec
 * failures from |st| alone (never from text the command could write):
 * the helper's exec failure -> exec_errno, the local provider's status
 * and (captured) its "corral: CMD: ..." stderr line; a container that
 * never started the helper -> a negative errno with |err| set (docker's
 * own failure, its "docker: " line quoted: the command never ran, so the
 * text is docker's); otherwise the command's own status, 129..192 read
 * as a signal (tini reports a signal N as 128+N).
 */
int corral_docker_map_result(struct corral_result *res, bool captured, const char *cmd,
			     const struct corral_docker_status *st, struct corral_error *err);

/*
 * The daemon's Unix socket as the client would reach it (DOCKER_HOST
 * unix://, a "default" context), or NULL for a daemon reached another way
 * (tcp://, ssh://, another context): then only the client can ask it.
 */
const char *corral_docker_daemon_socket(char *const *environ_);

/* The identity for the container (DESIGN.md --user rules, see identity.c). */
int corral_docker_identity(const struct corral_policy *p, const char *root_abs, uid_t *uid,
			   gid_t *gid, struct corral_error *err);

/*
 * The local provider's identity decision (corral_identity_decide) for |p|
 * and the canonical |root_abs|, without a sandbox: who the command runs as,
 * or the same refusal sandbox_new gives. When |ps| is given, the identity
 * promises are added to it. probe and the docker provider use it.
 */
struct corral_posture;
int corral_identity_preview(const struct corral_policy *p, const char *root_abs, uid_t *uid,
			    gid_t *gid, struct corral_posture *ps, struct corral_error *err);

void corral_docker_strv_free(char **v);

/*
 * Whether the docker provider can run here (client on PATH, exec helper,
 * daemon answering, the policy's image present or pull allowed): 0, or a
 * negative errno with the reason in |err|. probe and --provider auto use it.
 */
int corral_docker_usable(const struct corral_policy *p, struct corral_error *err);

/* Append one line to |res|'s warnings (the docker provider's, and provider auto's choice of local). */
int corral_docker_add_warning(struct corral_result *res, const char *line, struct corral_error *err);

/* The exec helper's host path (malloc'd), or NULL when it is not installed. */
char *corral_docker_find_helper(void);

#endif
