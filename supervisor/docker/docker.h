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

struct corral_docker_host {
	uid_t uid, gid;              /* identity the container runs as */
	char *const *environ;        /* corral's environment: env.pass values, the client's own variables */
	const char *client;          /* absolute path of the docker client */
	const char *sock;            /* the daemon's Unix socket, or NULL (then only the client is used) */
};

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
 * one command run in a container called |name|. opts->cwd, when set, is a
 * normalised path relative to the root that the caller proved beneath it
 * (corral_sandbox_exec): the container starts in that directory of the workdir.
 */
int corral_docker_argv(const struct corral_docker *d, const struct corral_exec_opts *opts,
		       const char *name, char ***out, struct corral_error *err);

/* The docker client's environment (NULL-terminated; owned by |d|). */
char *const *corral_docker_client_env(const struct corral_docker *d);

/*
 * Turn the docker client's result into the command's: 129..192 -> signal;
 * an exec failure of |cmd| (tini's or runc's 126/127) -> exec_errno with
 * the engine's "corral: CMD: ..." stderr line; docker's own 125 -> a
 * negative errno with |err| set. Only a captured stderr can tell docker's
 * own failures from the command's; and when |started| says the daemon
 * started the container, a 125 is the command's own, whatever it printed
 * (a command can write "docker: ..." and exit 125 itself).
 */
/*
 * The daemon's Unix socket as the client would reach it (DOCKER_HOST
 * unix://, a "default" context), or NULL for a daemon reached another way
 * (tcp://, ssh://, another context): then only the client can ask it.
 */
const char *corral_docker_daemon_socket(char *const *environ_);
int corral_docker_map_result(struct corral_result *res, bool captured, const char *cmd, bool started,
			     struct corral_error *err);

/* The identity for the container (DESIGN.md --user rules, see docker.c). */
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

#endif
