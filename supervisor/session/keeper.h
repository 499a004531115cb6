/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A session's keepers (K) and commands (C), started by the template T
 * (keeper.c; T itself is template.c).
 */
#ifndef CORRAL_SESSION_KEEPER_H
#define CORRAL_SESSION_KEEPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "supervisor/session/wire.h"

/* What the template was started with (read-only once it runs: its keepers read it in its memory). */
struct t_args {
	int ctl, scope_fd, root_fd;
	int took_w; /* to the supervisor: which spare took which call (struct t_took) */
	int hint_r; /* from the supervisor: a byte for each call sent while others were in flight */
	pid_t parent;
};

#define K_EXTRA 4
#define K_SCRATCH (64 * 1024)

/*
 * One keeper's memory, in the template's: the head of a mapping that also
 * holds K's stack and C's (each below a guard page). T takes an arena for
 * each K it starts and gets it back when it reaps that K (by then C has
 * exec'd or ended too); K and C allocate from |scratch| and, past it,
 * from mmap into |extra|, which T unmaps. Reused arenas keep their pages:
 * a call's keeper takes no page fault for its stacks or its data.
 */
struct k_arena {
	struct k_arena *next; /* T's lists */
	pid_t pid;            /* K, from its start to its reaping */
	_Atomic int idle;     /* K is a spare waiting for a call (counted in corral_keeper_idle) */
	/* What K starts with (set by T): */
	const struct t_args *a;
	pid_t template_pid;
	uint64_t spare;       /* a spare's number ("corral-s<n>"); 0: K takes the call in |kf| */
	int taken_w;          /* a spare's: where it tells T that T must start another (keeper.c idle_take) */
	int kf[T_NFDS];       /* 0 == spare: the call T received (memfd or -1, stdin, stdout, stderr, report, kill) */
	size_t inline_len;    /* ... and its data in |inline_buf| */
	/* K's and C's allocations (k_alloc): */
	size_t used;
	void *extra[K_EXTRA];
	size_t extra_len[K_EXTRA];
	char inline_buf[T_INLINE_MAX];
	_Alignas(16) char scratch[K_SCRATCH];
};

/* K's and C's Landlock restrict_self flags (set once by T). */
void corral_keeper_init(int ll_flags);
/* An arena (zeroed but for its buffers), or NULL. */
struct k_arena *corral_arena_get(void);
/*
 * Back to the pool (|reuse|), or unmapped: a K killed by a signal may
 * have left a C still to exit, and its kernel-written CLONE_CHILD_CLEARTID
 * word must not land in a new K's stack. Its extras unmapped either way.
 */
void corral_arena_put(struct k_arena *ar, bool reuse);
/* Start K on |ar| (its start fields set; a spare counted idle). K's pid (also in ar->pid), or -errno. */
pid_t corral_keeper_start(struct k_arena *ar);
/* T reaped the K of |ar|: no longer counted idle. */
void corral_keeper_gone(struct k_arena *ar);
/* How many spares wait for a call now (T starts one when none does and a call waits). */
int corral_keeper_idle(void);
/* A new spare's number ("corral-s<n>"). */
uint64_t corral_keeper_spare_no(void);
/*
 * Receive one call from |ctl| into |kf| (kf[0] the memfd, or -1 with the
 * data in |buf|, T_INLINE_MAX bytes, *|inline_len| of them). 1: a call;
 * 0: nothing (EAGAIN, EINTR, or a malformed message, dropped); -1: EOF or
 * a broken socket. No errno is written.
 */
int corral_keeper_receive(int ctl, int flags, int kf[T_NFDS], char *buf, size_t *inline_len);
/* A report saying the command could not be started (|err|). */
void corral_keeper_report_error(int fd, int err);
/*
 * Kill every process the caller may signal (its Landlock domain and
 * below), until none is left, and reap them all. Returns how many were
 * reaped besides |main| (whose status lands in *|status|, *|main_done| set).
 */
unsigned long corral_kill_all_and_reap(pid_t main, int *status, bool *main_done);

#endif
