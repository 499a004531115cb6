/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* seccomp: the filter compiled to BPF in the parent (internal API). */
#ifndef CORRAL_SECCOMP_H
#define CORRAL_SECCOMP_H

#include <stdint.h>
#include <linux/filter.h>

#include "policy/policy.h"
#include "policy/posture.h"

struct corral_bpf {
	struct sock_filter *filter; /* malloc'd; NULL when len == 0 */
	unsigned short len;
};

/*
 * Compile the filter for |p| with libseccomp and export it to BPF (native
 * ABI only, bad arch kills; deny table; socket rules for the network mode).
 * Adds this module's promises to |ps| (may be NULL). No libseccomp call is
 * needed after this. The result is plain data: keep it for many runs.
 *
 * ptrace and process_vm_readv/writev (and pidfd_getfd, process_madvise,
 * kcmp) are left to Landlock, which confines them to the sandbox's own
 * domain; when Landlock is unavailable (corral_landlock_abi() == 0) they are
 * denied here instead (see docs/threat-model.md).
 *
 * When this host cannot install seccomp filters at all, every promise is
 * added as dropped, |out| is left empty (len 0) and 0 is returned: refusing
 * is the posture's job (compat "strict"). Returns -errno with |err| set when
 * building the filter fails.
 */
int corral_seccomp_compile(const struct corral_policy *p, struct corral_posture *ps,
			   struct corral_bpf *out, struct corral_error *err);

/*
 * The same with the Landlock ABI the run will actually apply (0: no
 * Landlock; ptrace-class calls are then denied by the filter).
 */
int corral_seccomp_compile_abi(const struct corral_policy *p, int landlock_abi,
			       struct corral_posture *ps, struct corral_bpf *out,
			       struct corral_error *err);

/* Free the program; accepts NULL and empty programs. Leaves |prog| empty. */
void corral_bpf_free(struct corral_bpf *prog);

/*
 * In the forked child, after no_new_privs: install |prog| with one
 * seccomp(2) call. Returns 0 or -errno. Async-signal-safe. An empty program
 * (the host has no seccomp; the posture says so) installs nothing and
 * returns 0.
 */
int corral_seccomp_install(const struct corral_bpf *prog);

/* Whether seccomp filters work here (for probe). Cheap: one syscall. */
bool corral_seccomp_available(void);

/* ---------------------------------------------------------------- the table */

/* How a rule's argument is compared (libseccomp compares all 64 bits). */
enum corral_sc_cond {
	CORRAL_SC_ANY = 0,      /* whatever the arguments */
	CORRAL_SC_ANY_BIT,      /* (arg & value[0]) != 0 — one rule per bit */
	CORRAL_SC_LOW32_EQ,     /* (arg & 0xffffffff) == value[0]: high bits ignored, as the kernel does */
	CORRAL_SC_NOT_IN,       /* arg (all 64 bits) is none of value[0..n_values) */
	CORRAL_SC_NOT_ZERO_OR_QUERY, /* arg is neither 0 nor 0xffffffff (personality) */
	CORRAL_SC_BOTH_NONZERO, /* arg and argument number value[0] are both != 0 (all 64 bits) */
	CORRAL_SC_NONZERO,      /* arg != 0 (all 64 bits) */
};

/* When a rule applies (bit set). */
enum {
	CORRAL_SC_NET_NONE = 1 << 0,
	CORRAL_SC_NET_LOOPBACK = 1 << 1,
	CORRAL_SC_NET_HOST = 1 << 2,
	CORRAL_SC_NO_LANDLOCK = 1 << 3, /* only when Landlock is not applied */
	CORRAL_SC_UNIX_REFUSED = 1 << 4, /* only when socket(AF_UNIX) is refused (no Unix mediation) */
	CORRAL_SC_UNIX_ALLOWED = 1 << 5, /* only when pathname Unix sockets are mediated
					  * (supervisor/local/unotify/unotify.c, or Landlock ABI 9) */
	CORRAL_SC_NET_ALLOW = 1 << 6, /* network "allow": inet connects mediated (egress proxy only) */
	CORRAL_SC_NET_ALL = CORRAL_SC_NET_NONE | CORRAL_SC_NET_LOOPBACK | CORRAL_SC_NET_HOST | CORRAL_SC_NET_ALLOW,
};

#define CORRAL_SC_MAX_VALUES 4

struct corral_sc_rule {
	const char *syscall;    /* libseccomp's name; rows unknown on this arch are skipped */
	int cond;               /* enum corral_sc_cond */
	unsigned arg;           /* argument index for cond != ANY */
	uint64_t value[CORRAL_SC_MAX_VALUES];
	unsigned n_values;
	int err;                /* errno the call fails with */
	unsigned when;          /* CORRAL_SC_* bits */
	enum corral_promise_id promise; /* the posture entry this row serves */
	const char *reason;     /* one line, for docs and tests */
	int fallback_nr;        /* > 0: the number to use when libseccomp does not know the name
				 * (numbers from 424 on are the same on every architecture but alpha) */
};

/*
 * The newest syscall number this table was reviewed against (Linux 6.18:
 * file_setattr, 469; numbers from 424 on are shared by every architecture
 * but alpha and mips). Anything above answers ENOSYS, as on a kernel
 * without it: a syscall added later is not allowed by default.
 */
#define CORRAL_SC_NEWEST_NR 469

/* Every rule, in filter order. */
extern const struct corral_sc_rule corral_sc_rules[];
extern const size_t corral_sc_rules_len;

/* Whether |r| is part of the filter for |network| (enum corral_network) and |landlock_abi|. */
bool corral_sc_rule_applies(const struct corral_sc_rule *r, int network, int landlock_abi);
/* The same, saying whether socket(AF_UNIX) is allowed (Unix sockets mediated). */
bool corral_sc_rule_applies_unix(const struct corral_sc_rule *r, int network, int landlock_abi,
				 bool unix_allowed);

/*
 * corral_seccomp_compile_abi, with socket(AF_UNIX) allowed under network
 * "none" and "loopback" when |unix_allowed|: only for a caller that
 * mediates pathname Unix sockets (Landlock ABI 9's RESOLVE_UNIX, or the
 * supervisor). |handover_fd| >= 0 adds the supervisor's mediation to the
 * same filter (install it with corral_unotify_install):
 *  - connect, sendto with a destination, sendmsg and sendmmsg go to the
 *    supervisor (SECCOMP_RET_USER_NOTIF): the address is behind a pointer
 *    the filter cannot read;
 *  - sendmsg whose flags argument has any of its upper 32 bits set (the
 *    kernel ignores them: flags is an unsigned int) is not notified when
 *    its fd is |handover_fd| — how the child hands the listener to the
 *    parent once the filter is live — and refused (EPERM) on every other
 *    fd. |handover_fd| must be a number the command cannot allocate (at or
 *    above its RLIMIT_NOFILE hard limit) and closed at execve;
 *  - socket() of a family the network mode refuses goes to the supervisor
 *    too, which counts it (the result's denials) and answers EACCES.
 */
int corral_seccomp_compile_unix(const struct corral_policy *p, int landlock_abi, bool unix_allowed,
				int handover_fd, struct corral_posture *ps, struct corral_bpf *out,
				struct corral_error *err);

/* The sendmsg flags bit of the listener hand-over (see above). */
#define CORRAL_UNOTIFY_PASS_FLAGS (1ULL << 40)
/* Does this host have what the mediation needs? |why| says what is missing. */
bool corral_unotify_available(char *why, size_t why_len);
/* In the child: install |prog| with SECCOMP_FILTER_FLAG_NEW_LISTENER; the listener fd or -errno. */
int corral_unotify_install(const struct corral_bpf *prog);

/*
 * Build options, for benchmarks and tests: libseccomp's optimize level
 * (1: priority-ordered, 2: binary tree). corral_seccomp_compile uses
 * CORRAL_SC_DEFAULT_OPTIMIZE.
 */
#define CORRAL_SC_DEFAULT_OPTIMIZE 2
int corral_seccomp_compile_opt(const struct corral_policy *p, int landlock_abi, int optimize,
			       struct corral_posture *ps, struct corral_bpf *out,
			       struct corral_error *err);

#endif
