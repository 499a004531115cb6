/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unix-socket mediation in the supervisor (network "none" and "loopback",
 * Landlock ABI < 9): a seccomp user-notification filter sends connect,
 * addressed sendto, sendmsg and sendmmsg to the parent, which copies the
 * arguments once, resolves a pathname address beneath the root, the
 * private tmp or a read_write path (openat2 RESOLVE_BENEATH, O_PATH), takes
 * the caller's socket with pidfd_getfd, and has a helper process running
 * as the sandbox's uid/gid perform the call through /proc/self/fd/N of the
 * resolved file. The answer is the call's own result; the kernel never
 * re-reads the sandbox's memory (no SECCOMP_USER_NOTIF_FLAG_CONTINUE).
 */
#ifndef CORRAL_UNOTIFY_H
#define CORRAL_UNOTIFY_H

#include <poll.h>
#include <stdbool.h>
#include <sys/types.h>

#include "internal/util.h"
#include "policy/policy.h"
#include "seccomp/seccomp.h"
#include "policy/posture.h"

struct corral_sandbox;
struct corral_run;

enum corral_unix_mode {
	CORRAL_UNIX_REFUSED = 0,  /* socket(AF_UNIX) refused by seccomp (socketpair works) */
	CORRAL_UNIX_MEDIATED = 1, /* allowed; connect/send mediated by the supervisor */
	CORRAL_UNIX_LANDLOCK = 2, /* allowed; Landlock ABI 9 RESOLVE_UNIX confines them */
	CORRAL_UNIX_OPEN = 3,     /* network "host": unconfined */
};

/*
 * Decide how Unix sockets are handled for |p| with |landlock_abi| and add
 * "net.unix_mediated" or "net.unix_refused" to |ps|. Never drops a
 * promise: refusing socket(AF_UNIX) keeps it. For CORRAL_UNIX_MEDIATED,
 * and for CORRAL_UNIX_OPEN and _LANDLOCK where the host can have a
 * listener (it then serves only TIOCGPTPEER and counts refused socket()
 * families), |*handover_fd| is the fd number the child hands the listener over on:
 * the command's RLIMIT_NOFILE hard limit (limits.open_files), a number it
 * cannot allocate. CORRAL_TEST_UNIX_MEDIATION=0 forces the refusal (tests;
 * only ever stricter).
 */
int corral_unix_mode(const struct corral_policy *p, int landlock_abi, int *handover_fd,
		     struct corral_posture *ps);

/*
 * The hand-over fd of a supervisor listener for |p| on this host (seccomp
 * user notification, pidfd_getfd, Yama, limits.open_files), or -1 with
 * |why| saying what is missing.
 */
int corral_unotify_handover(const struct corral_policy *p, char *why, size_t why_len);

/* Sandbox side: the bases a pathname may resolve under, the identity, the hand-over fd. */
struct corral_unotify_plan;
int corral_unotify_plan_new(const struct corral_sandbox *sb, int handover_fd,
			    struct corral_unotify_plan **out, struct corral_error *err);
void corral_unotify_plan_free(struct corral_unotify_plan *plan);

/*
 * In the forked child, steps of their own (async-signal-safe):
 * _prepare, before the rlimits: put the run's child end |sock| at the
 * hand-over fd number (raising the soft RLIMIT_NOFILE to reach it). That
 * number is the command's open-files limit, so a small limit can put it
 * on an fd the child still needs: each of the |n_keep| fds in |keep| that
 * sits there is first moved above it (close-on-exec), and updated;
 * _install, last: install the main filter |prog| with a listener and hand
 * the listener to the parent. 0 or -errno.
 */
int corral_unotify_child_prepare(const struct corral_unotify_plan *plan, int sock, int *const *keep,
				  size_t n_keep);
int corral_unotify_child_install(const struct corral_unotify_plan *plan, const struct corral_bpf *prog);

/* Parent side, one per run. */
#define CORRAL_UNOTIFY_HELPERS_MAX 16
#define CORRAL_UNOTIFY_MAX_POLLFDS (1 + CORRAL_UNOTIFY_HELPERS_MAX)
struct corral_unotify;
/*
 * After the child exec'd: receive the listener from |sock| (the run's
 * parent end). NULL when the run has no mediation, or when the listener
 * did not arrive (the filter then answers ENOSYS: fails closed).
 */
struct corral_unotify *corral_unotify_start(const struct corral_sandbox *sb,
					    const struct corral_run *run, int sock);
/* Fill up to CORRAL_UNOTIFY_MAX_POLLFDS entries; returns how many. */
int corral_unotify_pollfds(struct corral_unotify *u, struct pollfd *pf);
/* Serve what |pf| (the entries filled above, after poll) says is ready. */
void corral_unotify_handle(struct corral_unotify *u, const struct pollfd *pf, int n);
/*
 * A session (one mediation for many calls): the denials of each
 * notification go to |fn| with the pid (in the caller's PID namespace) of
 * the task that made the call, once it is served; |fn| takes what it
 * wants of |d| and must leave it empty (corral_denials_clear).
 */
struct corral_denials;
void corral_unotify_route(struct corral_unotify *u, void (*fn)(void *arg, pid_t pid, struct corral_denials *d),
			  void *arg);
/* Kill and reap the helper; close everything. Accepts NULL. */
void corral_unotify_free(struct corral_unotify *u);

#endif
