/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the supervisor and a session's template (its spares) pass each
 * other: a call's data, K's report, the took entries (template.c, call.c).
 */
#ifndef CORRAL_SESSION_WIRE_H
#define CORRAL_SESSION_WIRE_H

#include <stdint.h>
#include <sys/resource.h>

#include "supervisor/session/template.h"

#define T_MAGIC 0x636f7272u
#define T_DATA_MAX (64u << 20)
#define T_NFDS 6 /* memfd (or none: the data inline), stdin, stdout, stderr, report, kill */
#define T_INLINE_MAX (56u << 10) /* a call's data up to this size travels in the message itself */

struct t_data_hdr {
	uint32_t magic;
	uint32_t argc, envc, cwd_len;
	uint64_t seq; /* K's name: "corral-k" and it in hex (corral_template_call_of) */
	struct rlimit rl[RLIM_NLIMITS];
	uint8_t rl_set[RLIM_NLIMITS];
};

struct t_report {
	uint32_t magic;
	int32_t start_err;  /* the template or K could not start the command */
	int32_t status;     /* wait status of C */
	int32_t exec_err;   /* execve's errno, or 0 */
	int32_t chdir_err;  /* the cwd could not be entered (ran in the root) */
	uint32_t main_done; /* C was reaped */
	uint64_t leftovers; /* processes killed after C ended */
	uint64_t cpu_us;    /* user + system of the reaped tree */
	int64_t maxrss_kb;
};

/*
 * What a spare pair's C writes to the supervisor's "took" pipe before it
 * starts a call's command: spare |spare| (its K is named "corral-s" and
 * it in hex) runs call |seq|. Written before the execve, so it is in the
 * pipe before the command's first syscall can be mediated
 * (corral_template_call_of). 16 bytes: a pipe write of it is atomic.
 */
struct t_took {
	uint64_t spare, seq;
};

/* Fill t->pool (call.c): pipe sets for the next calls, made ahead of them. */
void corral_template_pool_fill(struct corral_template *t);
/* Call |seq| ended: its took entry goes (template.c). */
void corral_template_took_forget(struct corral_template *t, unsigned long seq);

#endif
