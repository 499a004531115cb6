/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A session's template process: one process confined once (identity,
 * no_new_privs, Landlock, seccomp, cgroups, private tmp, network
 * namespace) that forks every call (supervisor/session/template.c).
 */
#ifndef CORRAL_SESSION_TEMPLATE_H
#define CORRAL_SESSION_TEMPLATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "corral.h"
#include "supervisor/exec/sandbox.h"

#define CORRAL_TEMPLATE_POOL 2

struct corral_template {
	struct corral_sandbox *sb;
	struct corral_run run;      /* the session's cgroups, private tmp, Landlock ruleset */
	pid_t pid;                  /* the template process */
	bool pidns;                 /* in a PID namespace of its own (proc "private"), as its pid 1 */
	int pidfd;
	int ctl;                    /* SOCK_SEQPACKET to the template */
	int devnull;                /* O_RDONLY, a call's stdin when it has none */
	char *home;                 /* the session's private HOME (in the tmp) */
	struct corral_unotify *un;  /* Unix-socket mediation, served by |un_thread| */
	pthread_t un_thread;
	bool un_running;
	int un_stop;                /* eventfd that stops |un_thread| */
	struct corral_spawn_rlimits rl;
	/*
	 * Set by the caller before corral_template_start (which keeps them):
	 * the Unix-socket mediation's denials, each with the host pid of the
	 * task refused (corral_unotify_route); corral_template_call_of tells
	 * whose call it is.
	 */
	void (*route)(void *arg, pid_t pid, struct corral_denials *d);
	void *route_arg;
	/*
	 * Which spare ("corral-s<n>") took which call, as the spares' C write
	 * it before their execve (non-blocking: read by corral_template_call_of
	 * and at each call's end, which forgets the call's own).
	 */
	int took_r;
	/* Calls sent and not yet reported; a call sent while others are, a byte on |hint_w| (call.c). */
	_Atomic unsigned inflight;
	int hint_w;
	/*
	 * Pipe sets made ahead of the calls (each call's stdout, stderr,
	 * report and kill pipes: 8 fds), so none is made on a call's path;
	 * refilled by corral_template_release. Under took_lock.
	 */
	int pool[CORRAL_TEMPLATE_POOL][8];
	unsigned n_pool;
	pthread_mutex_t took_lock;
	struct corral_took { uint64_t spare, seq; } *took;
	size_t n_took, took_alloc;
};

/* Build |sb|'s session objects and start the template. 0 or -errno with |err|. */
int corral_template_start(struct corral_template *t, struct corral_sandbox *sb, struct corral_error *err);
/* Kill every process of the session, reap the template, remove tmp and cgroups. */
void corral_template_stop(struct corral_template *t);

/*
 * The |seq| of the call (corral_tcall.seq) whose tree the host's |pid|
 * belongs to, read from /proc (its keeper's name, or the spare's number
 * and what its C wrote to the took pipe); 0 when none.
 */
unsigned long corral_template_call_of(struct corral_template *t, pid_t pid);

/* One command of a call. */
struct corral_tcall {
	unsigned long seq;          /* the caller's number for the call, > 0 (corral_template_call_of) */
	char *const *argv;
	char *const *envp;
	const char *cwd;            /* relative to the root; NULL or "." for the root */
	const void *stdin_data;     /* NULL: /dev/null */
	size_t stdin_len;
	double timeout;             /* seconds, > 0 */
	size_t max_output;          /* per stream */
	int cancel_fd;              /* readable: cancel (an eventfd) */
	/* Called (from the calling thread) with each chunk as it arrives; may be NULL. */
	void (*on_output)(void *arg, int stream, const char *data, size_t len);
	void *arg;
	bool cancelled;             /* out: cancel_fd fired */
	bool cwd_failed;            /* out: the cwd was gone: the command ran in the root */
	unsigned long leftovers;    /* out: processes still alive when the main one ended, killed */
	void *x;                    /* between corral_template_send and _wait: the call in flight */
};

/*
 * Run one command through the template and wait for its whole tree to end.
 * 0 with |res| filled (the command ran, or could not be executed: exec_errno),
 * or -errno with |err| (the template could not start it).
 */
int corral_template_exec(struct corral_template *t, struct corral_tcall *c, struct corral_result *res,
			 struct corral_error *err);

/*
 * The two halves of corral_template_exec: hand the command to the template
 * (0, or -errno with |err|: nothing was started), then, from any thread,
 * wait for its whole tree to end (as corral_template_exec). A sent call
 * must be waited for. The deadline counts from the send.
 */
int corral_template_send(struct corral_template *t, struct corral_tcall *c, struct corral_error *err);
int corral_template_wait(struct corral_tcall *c, struct corral_result *res, struct corral_error *err);
/*
 * After corral_template_wait (and whatever the caller does with the result
 * first, such as answering it): close the call's pipes and make the next
 * call's ahead of it. Nothing for a call never sent.
 */
void corral_template_release(struct corral_template *t, struct corral_tcall *c);

/* What ended a call, from its result: cancelled, timeout, cpu, file_size, signal or exit. */
const char *corral_template_ended_by(const struct corral_result *r, bool cancelled);

#endif
