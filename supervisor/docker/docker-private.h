/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The docker provider's shared internals (supervisor/docker/):
 *
 *   plan.c      pure: policy -> `docker run` options, the client's environment, one run's argv
 *   result.c    pure: the client's status and the exec helper's report -> corral's result
 *   identity.c  who the container runs as (the local provider's decision)
 *   api.c       the daemon: its Engine API on the Unix socket, or the client for the same questions
 *   run.c       prepare/usable (once per sandbox) and one run's lifecycle: status socket,
 *               deadline kill, forced removal
 *   guardian.c  the process that removes the container if corral dies mid-run
 *   exec-helper.c  corral-docker-exec, run inside the container (a program of its own)
 */
#ifndef CORRAL_DOCKER_PRIVATE_H
#define CORRAL_DOCKER_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>

#include "corral-config.h"
#include "internal/clock.h"
#include "internal/strv.h"
#include "supervisor/docker/docker.h"

#define DEFAULT_SOCK "/var/run/docker.sock"
#define API_TIMEOUT_MS 5000
#define CLIENT_TIMEOUT_MS 10000
#define REMOVE_RETRY_MS 1500
#define REMOVE_WAIT_MS 10000

/* The same words from run (prepare) and probe (usable). */
#define DK_NO_CLIENT \
	"docker provider: no docker client on PATH (install it or add its directory to PATH; --provider local needs none)"


struct corral_docker {
	char *client;
	char *sock;          /* NULL: talk to the daemon only through the client */
	char *helper;        /* host path of corral-docker-exec (a session copies it into its state directory) */
	struct corral_strv opts; /* `docker run` options from --pull to the image, inclusive */
	struct corral_strv cenv; /* the client's environment */
	struct corral_strv warnings; /* what best-effort runs without, into every result's warnings */
};

/* One run's state, shared by the engine's hooks, the removal and the guardian. */
struct dk_run {
	const struct corral_docker *d;
	char name[32];
	char dir[96], sock[108]; /* the status socket's directory and path (sun_path: 108 bytes) */
	int status_fd;
	bool deadline;
	bool maybe_uncreated; /* the kill found no container: a create may still be in flight */
};

/* plan.c */
const char *dk_env_get(char *const *environ_, const char *name);
bool dk_valid_image(const char *s);
int dk_add_mount(struct corral_strv *s, const char *src, const char *dst, bool ro);
int dk_client_base_env(char *const *environ_, struct corral_strv *cenv);

/* api.c */
/* A connection to the Engine API's Unix socket with API_TIMEOUT_MS send/receive timeouts: the fd, or -errno. */
int dk_api_connect(const char *sock);
int dk_api_request(const char *sock, const char *method, const char *path, char *body, size_t body_len);
int dk_run_client(const struct corral_docker *d, const char *const *args, int timeout_ms, char *errbuf,
		  size_t errlen);
int dk_find_client(char *const *environ_, char **out);
int dk_check_daemon(const struct corral_docker *d, const char *image, bool pull, struct corral_error *err);
int dk_check_kernel(const struct corral_policy *p, struct corral_strv *warnings, struct corral_error *err);

/*
 * plan.c: the limits docker would discard on this kernel (|have|: the
 * memory, pids and cpu cgroup controllers present). Under compat strict
 * the first is a refusal naming the key; under best-effort each adds one
 * line to |warnings|, which every run's result carries.
 */
int corral_docker_kernel_gaps(const struct corral_policy *p, const bool have[3], struct corral_strv *warnings,
			      struct corral_error *err);

/* guardian.c */
struct dk_guardian {
	pid_t pid;
	int fd; /* write end: one byte means "done", EOF means corral died */
};
void dk_guardian_start(const struct dk_run *run, struct dk_guardian *g);
void dk_guardian_stop(struct dk_guardian *g);
/* Leave the removal to the guardian (as if corral had died) and wait for it. */
void dk_guardian_handoff(struct dk_guardian *g);
/* Remove |name| under |dir_fd| and all it holds, at any depth, never following a symlink (async-signal-safe). */
void dk_remove_tree(int dir_fd, const char *name);

#endif
