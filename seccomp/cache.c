/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The seccomp filters of the standard policies, compiled at build time by
 * corral-seccomp-gen with the same code (seccomp/gen.c). The
 * filter depends on the network mode, the Landlock ABI, whether
 * socket(AF_UNIX) is allowed and the mediation hand-over fd (the
 * arguments of corral_seccomp_compile_unix); policies whose values the
 * table lacks (a non-default open_files moves the hand-over fd) are
 * compiled at run time. A unit test
 * (tests/integration/seccomp-cache.c) proves every entry equals a fresh
 * compile, so a change to the deny table cannot leave a stale copy here.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "seccomp/seccomp.h"
#include "supervisor/exec/sandbox.h"

struct sc_pre_promise {
	const char *id;
	int state;
	const char *why;
};

struct sc_pre {
	int network;
	int abi;
	int unix_allowed;
	int handover;
	const struct sock_filter *filter;
	size_t len;
	const struct sc_pre_promise *promises;
	size_t n_promises;
};

#include "seccomp-precompiled.h"
#ifdef CORRAL_SC_NO_PRECOMPILED
static const struct sc_pre sc_pre_table[] = { { -1, -1, 0, -1, NULL, 0, NULL, 0 } };
#endif

int corral_seccomp_compile_cached(const struct corral_policy *p, int landlock_abi, bool unix_allowed,
				  int handover_fd, struct corral_posture *ps, struct corral_bpf *out,
				  struct corral_error *err)
{
	for (const struct sc_pre *e = sc_pre_table; e->filter; e++) {
		if (e->network != p->network || e->abi != landlock_abi || e->unix_allowed != (int)unix_allowed ||
		    e->handover != handover_fd)
			continue;
		/* The kernel may still lack what the filter needs: the full path says so. */
		if (!corral_seccomp_available())
			break;
		out->filter = malloc(e->len * sizeof(*out->filter));
		if (!out->filter)
			return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
		memcpy(out->filter, e->filter, e->len * sizeof(*out->filter));
		out->len = (unsigned short)e->len;
		for (size_t i = 0; i < e->n_promises; i++)
		{
			/* The generator wrote the ids from the same table (seccomp/gen.c): never unknown. */
			int which = corral_promise_by_name(e->promises[i].id);

			assert(which >= 0);
			if (which >= 0)
				corral_posture_add(ps, (enum corral_promise_id)which, e->promises[i].state, "%s",
						   e->promises[i].why);
		}
		return 0;
	}
	return corral_seccomp_compile_unix(p, landlock_abi, unix_allowed, handover_fd, ps, out, err);
}
