/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A docker provider session (supervisor/docker/session.c): one long-lived
 * container per session, confined as `corral run --provider docker`
 * confines its throwaway ones, each call a `docker exec` in it through
 * the daemon's Engine API. The session engine (supervisor/session/) uses
 * it in place of the local template.
 */
#ifndef CORRAL_DOCKER_SESSION_H
#define CORRAL_DOCKER_SESSION_H

#include "corral.h"
#include "supervisor/docker/docker.h"
#include "supervisor/session/template.h"

struct corral_dsession;

/* Where the session's state directory is mounted inside the container. */
#define CORRAL_DOCKER_SESSION_DIR "/.corral-session"

/*
 * Start the session's container for |sb| (its docker plan: sb->docker)
 * and its guardian. Fills |t|'s run.tmp_fd and run.tmp_path with the
 * state directory (the host's fd; the path as the container sees it), so
 * the session's bash state files and long scripts go there, and sets
 * sb's identity (uid, gid, switch_identity) to the container's, so the
 * file tools create files as that user. 0 or -errno with |err|.
 */
int corral_dsession_start(struct corral_sandbox *sb, const char *session_id, struct corral_template *t,
			  struct corral_dsession **out, struct corral_error *err);

/* Run one call as `docker exec` in the container: as corral_template_exec. */
int corral_dsession_exec(struct corral_dsession *ds, struct corral_tcall *c, struct corral_result *res,
			 struct corral_error *err);

/* Remove the container (every call's processes with it), stop the guardian, remove the state directory. */
void corral_dsession_stop(struct corral_dsession *ds, struct corral_template *t);

/* The container's name (for status). */
const char *corral_dsession_container(const struct corral_dsession *ds);

#endif
