/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Landlock: ABI probe and a ruleset built from a policy (internal API).
 *
 * The ABI used everywhere is corral_landlock_abi() (corral.h): the running
 * kernel's, or lower when the test-only environment variable
 * CORRAL_TEST_LANDLOCK_ABI=N is set (N below the kernel's; a higher or
 * malformed value is ignored). A pretended ABI builds exactly the ruleset
 * that ABI would get — fewer handled rights — so tests can check both the
 * posture (what is dropped and why) and that the drop is real. See
 * docs/threat-model.md, "Landlock".
 */
#ifndef CORRAL_LANDLOCK_H
#define CORRAL_LANDLOCK_H

#include "policy/policy.h"
#include "policy/posture.h"

struct corral_ll_plan;

/*
 * Probe the ABI, open every allowed path O_PATH|O_CLOEXEC (root and
 * fs.read_write: every handled right; fs.read_only: read file, read dir,
 * execute; default devices; /proc read), decide the handled rights, and add
 * this module's promises to |ps| (enforced or dropped with the ABI needed).
 * |root_abs| is the absolute root directory. A path the user asked for that
 * is missing is an error naming it (CORRAL_E_NOT_FOUND); a default path
 * (corral_is_default_read_only) missing here is skipped.
 *
 * Promises added: fs.write, fs.read, fs.refer, scope.ptrace (ABI 1),
 * fs.truncate (3), net.tcp_landlock (4; network "none" only, else n/a),
 * fs.ioctl_dev (5), scope.signal, scope.abstract_unix (6), and
 * fs.resolve_unix (9; n/a below it: seccomp's job). A dropped promise's
 * |why| is a complete message, e.g. "truncate outside the root
 * (fs.truncate): needs Landlock ABI 3, kernel has 2". At ABI 0 the plan
 * still opens and checks every path; corral_ll_ruleset() then fails.
 */
int corral_ll_plan_new(const struct corral_policy *p, const char *root_abs,
		       struct corral_posture *ps, struct corral_ll_plan **out,
		       struct corral_error *err);
void corral_ll_plan_free(struct corral_ll_plan *plan);

/*
 * Open a path the policy names (fs.read_write, fs.read_only) as the plan
 * does: beneath the canonical |root_abs| or one of the |n_rw| read-write
 * paths |rw| — however the path leads there: as spelled, through a host
 * symlink, "..", a bind mount of the root or a /proc magic link — no
 * symlink is followed (an earlier run may have planted one); elsewhere
 * symlinks are followed. Returns an O_PATH|O_CLOEXEC fd, or -errno with
 * |err| naming |field| and |path|. The docker provider checks its bind
 * mounts with it.
 */
int corral_policy_path_open(const char *root_abs, char *const *rw, size_t n_rw, const char *field,
			    const char *path, struct corral_error *err);

/* The ABI the plan was built for (0: Landlock unavailable; nothing to apply). */
int corral_ll_plan_abi(const struct corral_ll_plan *plan);

/*
 * What the command already holds open from its caller (stdio passed
 * through), so that reopening it by name (/dev/stdout, /dev/stdin,
 * /proc/self/fd/N, the terminal's path) works as without corral, with
 * what the open fd already allows and no more: READ_FILE when it was
 * opened for reading, WRITE_FILE and TRUNCATE (write, ftruncate) when for
 * writing, and on a terminal IOCTL_DEV too. The caller derives |access|
 * from the fd's own access mode (never from its number), and passes no
 * O_PATH fd. Nothing of the file's directory is granted.
 */
enum {
	CORRAL_LL_STDIO_READ = 1 << 0,
	CORRAL_LL_STDIO_WRITE = 1 << 1,
	CORRAL_LL_STDIO_TTY = 1 << 2,
};
struct corral_ll_stdio {
	int fd;
	unsigned access; /* CORRAL_LL_STDIO_* bits */
};

/*
 * A ruleset fd for one run: the plan's rules plus, when |extra_rw_fd| >= 0,
 * every right beneath that directory (the run's private tmp), plus the
 * rights above on each of the |n_stdio| inherited files in |stdio| (one
 * Landlock cannot take a rule for, such as a pipe or socket, is skipped).
 * Returns a new O_CLOEXEC fd the caller closes, or -errno. Thread-safe.
 */
int corral_ll_ruleset(const struct corral_ll_plan *plan, int extra_rw_fd,
		      const struct corral_ll_stdio *stdio, size_t n_stdio, struct corral_error *err);

/*
 * The kernel's fixed-errata bitmask (LANDLOCK_CREATE_RULESET_ERRATA; bit
 * N-1 is erratum N), or 0 where the kernel has no errata interface. Never
 * affected by the ABI override.
 */
int corral_ll_errata(void);

/* Every filesystem access right ABI |abi| knows (0 for ABI 0). */
uint64_t corral_ll_fs_rights(int abi);

/* In the forked child: landlock_restrict_self(fd, flags). Async-signal-safe. */
int corral_ll_restrict_self(int ruleset_fd);

/*
 * Add to |ruleset_fd| the read rights the plan gives /proc, for the /proc
 * now mounted in this process's mount namespace (a fresh proc mount of a
 * PID namespace is another filesystem than the one the plan opened, and
 * Landlock rules follow inodes, not names). Async-signal-safe, no malloc.
 * Returns 0 or -errno.
 */
int corral_ll_add_proc(const struct corral_ll_plan *plan, int ruleset_fd);

#endif
