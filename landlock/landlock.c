/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Landlock: the ABI probe, a plan built once from a policy (paths opened
 * O_PATH, rights decided for the running ABI, promises recorded), and a
 * fresh ruleset fd per run built from that plan.
 *
 * Reference: the kernel's Documentation/userspace-api/landlock.rst
 * ("Backward and forward compatibility", "Previous limitations").
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "internal/util.h"
#include "landlock/landlock.h"
#include "landlock/uapi.h"

/* Read, list and execute: what fs.read_only grants. */
#define LL_READ_EXEC (CORRAL_LL_FS_READ_FILE | CORRAL_LL_FS_READ_DIR | CORRAL_LL_FS_EXECUTE)
/* Everything: root, fs.read_write, the private tmp. Masked by the ABI. */
#define LL_ALL (~0ULL)
/* The default devices: read and write; TRUNCATE so `>/dev/null` never trips on it. */
#define LL_DEV_RW (CORRAL_LL_FS_READ_FILE | CORRAL_LL_FS_WRITE_FILE | CORRAL_LL_FS_TRUNCATE)
/* Terminals: read, write and device ioctls (job control, window size). */
#define LL_TTY (LL_DEV_RW | CORRAL_LL_FS_IOCTL_DEV)
#define LL_PROC (CORRAL_LL_FS_READ_FILE | CORRAL_LL_FS_READ_DIR)

struct ll_rule {
	int fd;          /* O_PATH|O_CLOEXEC */
	uint64_t access; /* already masked: handled, and file-only on non-directories */
};

struct corral_ll_plan {
	int abi;
	uint64_t handled_fs;
	uint64_t handled_net;
	uint64_t scoped;
	size_t attr_size;
	struct ll_rule *rules;
	size_t n_rules;
	size_t cap_rules;
};

static int ll_create_ruleset(const struct corral_ll_ruleset_attr *attr, size_t size, uint32_t flags)
{
	return (int)syscall(__NR_landlock_create_ruleset, attr, size, flags);
}

static int ll_kernel_abi(void)
{
	int r = ll_create_ruleset(NULL, 0, CORRAL_LL_CREATE_RULESET_VERSION);

	/* ENOSYS: not built in; EOPNOTSUPP: built in but not enabled at boot. */
	return r < 0 ? 0 : r;
}

_public_ int corral_landlock_abi(void)
{
	int abi = ll_kernel_abi();
	const char *env = getenv("CORRAL_TEST_LANDLOCK_ABI");

	if (env && *env) {
		char *end;
		long v;

		errno = 0;
		v = strtol(env, &end, 10);
		/* Only ever lower: the override cannot make the kernel enforce more. */
		if (errno == 0 && *end == '\0' && v >= 0 && v < abi)
			abi = (int)v;
	}
	return abi;
}

int corral_ll_errata(void)
{
	int r;

	if (ll_kernel_abi() < 1)
		return 0;
	r = ll_create_ruleset(NULL, 0, CORRAL_LL_CREATE_RULESET_ERRATA);
	/* Kernels before the errata interface answer EINVAL: nothing reported. */
	return r < 0 ? 0 : r;
}

uint64_t corral_ll_fs_rights(int abi)
{
	uint64_t m = 0;

	if (abi >= 1)
		m |= CORRAL_LL_FS_ABI1;
	if (abi >= 2)
		m |= CORRAL_LL_FS_REFER;
	if (abi >= 3)
		m |= CORRAL_LL_FS_TRUNCATE;
	if (abi >= 5)
		m |= CORRAL_LL_FS_IOCTL_DEV;
	if (abi >= 9)
		m |= CORRAL_LL_FS_RESOLVE_UNIX;
	return m;
}

static int plan_add(struct corral_ll_plan *plan, int *fd, uint64_t access)
{
	if (access == 0)
		return 0; /* the ABI handles none of these rights: nothing to grant */
	if (plan->n_rules == plan->cap_rules) {
		size_t cap = plan->cap_rules ? plan->cap_rules * 2 : 16;
		struct ll_rule *n = realloc(plan->rules, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		plan->rules = n;
		plan->cap_rules = cap;
	}
	plan->rules[plan->n_rules].fd = TAKE_FD(*fd);
	plan->rules[plan->n_rules].access = access;
	plan->n_rules++;
	return 0;
}

enum path_kind {
	PATH_ROOT,     /* must exist and be a directory */
	PATH_USER,     /* asked for by the policy: must exist */
	PATH_OPTIONAL, /* a default: skipped when missing on this host */
};

/*
 * Open |path| O_PATH and add it with |want| masked to what the plan
 * handles and, for a non-directory, to the rights a file rule may carry
 * (any other right there makes landlock_add_rule fail with EINVAL).
 */
static int plan_path(struct corral_ll_plan *plan, const char *field, const char *path,
		     uint64_t want, enum path_kind kind, struct corral_error *err)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	uint64_t access;

	if (!path || path[0] != '/')
		return corral_err(err, CORRAL_E_POLICY, EINVAL, "%s: '%s' is not an absolute path",
				  field, path ? path : "(null)");
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		if (kind == PATH_OPTIONAL && (e == ENOENT || e == ENOTDIR))
			return 0;
		return corral_err(err, e == ENOENT || e == ENOTDIR ? CORRAL_E_NOT_FOUND : CORRAL_E_SETUP,
				  e, "%s: %s: %s", field, path, strerror(e));
	}
	if (fstat(fd, &st) < 0)
		return corral_err(err, CORRAL_E_SETUP, errno, "%s: %s: %s", field, path, strerror(errno));
	if (kind == PATH_ROOT && !S_ISDIR(st.st_mode))
		return corral_err(err, CORRAL_E_SETUP, ENOTDIR, "%s: %s: %s", field, path,
				  strerror(ENOTDIR));
	access = want & plan->handled_fs;
	if (!S_ISDIR(st.st_mode))
		access &= CORRAL_LL_FS_FILE_RIGHTS;
	if (plan_add(plan, &fd, access) < 0)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	return 0;
}

/* Is canonical |child| |parent| itself or beneath it? */
static bool path_within(const char *child, const char *parent)
{
	size_t n = strlen(parent);

	if (n == 1 && parent[0] == '/')
		return true;
	return strncmp(child, parent, n) == 0 && (child[n] == '\0' || child[n] == '/');
}

/*
 * Landlock rules only ever add rights: a read-only path beneath the root
 * or a read-write path would stay writable. Say so rather than promise a
 * read-only directory the kernel will not enforce. (Defaults beneath a
 * writable tree, e.g. with root "/", are subsumed, as the user asked.)
 */
static int check_not_beneath_writable(const struct corral_policy *p, const char *root_abs,
				      const char *ro, struct corral_error *err)
{
	_cleanup_free_ char *ro_real = realpath(ro, NULL);

	if (!ro_real)
		return corral_err(err, errno == ENOENT ? CORRAL_E_NOT_FOUND : CORRAL_E_SETUP, errno,
				  "fs.read_only: %s: %s", ro, strerror(errno));
	for (size_t i = 0; i <= p->fs.read_write.n; i++) {
		const char *w = i == 0 ? root_abs : p->fs.read_write.v[i - 1];
		_cleanup_free_ char *w_real = realpath(w, NULL);

		if (w_real && path_within(ro_real, w_real))
			return corral_err(err, CORRAL_E_POLICY, EINVAL,
					  "fs.read_only: %s lies within the read-write %s %s; Landlock only adds rights, so it would stay writable",
					  ro, i == 0 ? "root" : "path", w);
	}
	return 0;
}

static const char *const default_devices[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
};
static const char *const default_ttys[] = { "/dev/tty", "/dev/pts" };

/*
 * The promises this module keeps, in DESIGN.md's words. A dropped one's
 * |why| is a whole message naming the promise, its id and the ABI needed
 * ("truncate outside the root (fs.truncate): needs Landlock ABI 3, kernel
 * has 2"), so a caller can print it as it is. |abi| is the ABI
 * that introduced what enforces it. Under ABI 1 a cross-directory link or
 * rename is always denied (REFER is implicitly handled by every ruleset),
 * so fs.refer holds from ABI 1 — only more strictly.
 */
enum {
	P_ANY_NET = 0,
	P_NET_NONE = 1, /* only asked for under network "none" */
};
static const struct ll_promise {
	const char *id;
	const char *what;
	int abi;
	int when;
} ll_promises[] = {
	{ "fs.write", "writes outside the root and fs.read_write", 1, P_ANY_NET },
	{ "fs.read", "reads outside the root, fs.read_write and fs.read_only", 1, P_ANY_NET },
	{ "fs.refer", "link or rename out of the root", 1, P_ANY_NET },
	{ "scope.ptrace", "ptrace and /proc/PID of processes outside the sandbox", 1, P_ANY_NET },
	{ "fs.truncate", "truncate outside the root", 3, P_ANY_NET },
	{ "net.tcp_landlock", "TCP bind and connect (Landlock, beside seccomp)", 4, P_NET_NONE },
	{ "fs.ioctl_dev", "device ioctls outside /dev/tty and /dev/pts", 5, P_ANY_NET },
	{ "scope.signal", "signals to processes outside the sandbox", 6, P_ANY_NET },
	{ "scope.abstract_unix", "abstract Unix sockets outside the sandbox", 6, P_ANY_NET },
};

static void plan_promises(const struct corral_policy *p, int abi, struct corral_posture *ps)
{
	for (size_t i = 0; i < ARRAY_SIZE(ll_promises); i++) {
		const struct ll_promise *pr = &ll_promises[i];

		if (pr->when == P_NET_NONE && p->network != CORRAL_NET_NONE)
			corral_posture_add(ps, pr->id, CORRAL_PROMISE_NA, "%s: not asked for under network %s",
					   pr->what, p->network == CORRAL_NET_HOST ? "host" : "loopback");
		else if (abi >= pr->abi)
			corral_posture_add(ps, pr->id, CORRAL_PROMISE_ENFORCED, "%s: denied by Landlock",
					   pr->what);
		else
			corral_posture_add(ps, pr->id, CORRAL_PROMISE_DROPPED,
					   "%s (%s): needs Landlock ABI %d, kernel has %d%s", pr->what,
					   pr->id, pr->abi, abi,
					   abi == 0 ? " (Landlock absent or disabled)" : "");
	}
	/*
	 * connect() to a pathname Unix socket outside the allowed paths is
	 * only mediated from ABI 9; below it seccomp refuses socket(AF_UNIX)
	 * under network "none", so this is not a promise Landlock must keep.
	 */
	if (abi >= 9)
		corral_posture_add(ps, "fs.resolve_unix", CORRAL_PROMISE_ENFORCED,
				   "connect to pathname Unix sockets outside the allowed paths: denied by Landlock");
	else
		corral_posture_add(ps, "fs.resolve_unix", CORRAL_PROMISE_NA,
				   "connect to pathname Unix sockets outside the allowed paths: needs Landlock ABI 9, kernel has %d; left to seccomp",
				   abi);
}

int corral_ll_plan_new(const struct corral_policy *p, const char *root_abs, struct corral_posture *ps,
		       struct corral_ll_plan **out, struct corral_error *err)
{
	struct corral_ll_plan *plan;
	int abi, r;

	if (!p || !root_abs || !out)
		return corral_err(err, CORRAL_E_INTERNAL, EINVAL, "landlock: bad arguments");
	plan = calloc(1, sizeof(*plan));
	if (!plan)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");

	abi = corral_landlock_abi();
	plan->abi = abi;
	plan->handled_fs = corral_ll_fs_rights(abi);
	if (p->network == CORRAL_NET_NONE && abi >= 4)
		plan->handled_net = CORRAL_LL_NET_BIND_TCP | CORRAL_LL_NET_CONNECT_TCP;
	if (abi >= 6)
		plan->scoped = CORRAL_LL_SCOPE_SIGNAL | CORRAL_LL_SCOPE_ABSTRACT_UNIX_SOCKET;
	plan->attr_size = abi >= 6 ? CORRAL_LL_ATTR_SIZE_V6 :
			  abi >= 4 ? CORRAL_LL_ATTR_SIZE_V4 : CORRAL_LL_ATTR_SIZE_V1;

	/*
	 * Paths are opened (and a missing one reported) even without
	 * Landlock: a policy naming a missing path is wrong on any kernel.
	 */
	r = plan_path(plan, "root", root_abs, LL_ALL, PATH_ROOT, err);
	for (size_t i = 0; r == 0 && i < p->fs.read_write.n; i++)
		r = plan_path(plan, "fs.read_write", p->fs.read_write.v[i], LL_ALL, PATH_USER, err);
	for (size_t i = 0; r == 0 && i < p->fs.read_only.n; i++) {
		const char *path = p->fs.read_only.v[i];
		bool dflt = path && corral_is_default_read_only(path);

		r = plan_path(plan, "fs.read_only", path, LL_READ_EXEC,
			      dflt ? PATH_OPTIONAL : PATH_USER, err);
		if (r == 0 && !dflt)
			r = check_not_beneath_writable(p, root_abs, path, err);
	}
	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(default_devices); i++)
		r = plan_path(plan, "device", default_devices[i], LL_DEV_RW, PATH_OPTIONAL, err);
	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(default_ttys); i++)
		r = plan_path(plan, "terminal", default_ttys[i], LL_TTY, PATH_OPTIONAL, err);
	if (r == 0)
		r = plan_path(plan, "proc", "/proc", LL_PROC, PATH_OPTIONAL, err);
	if (r < 0) {
		corral_ll_plan_free(plan);
		return r;
	}

	plan_promises(p, abi, ps);
	*out = plan;
	return 0;
}

void corral_ll_plan_free(struct corral_ll_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n_rules; i++)
		safe_close(plan->rules[i].fd);
	free(plan->rules);
	free(plan);
}

int corral_ll_plan_abi(const struct corral_ll_plan *plan)
{
	return plan ? plan->abi : 0;
}

static int add_path_rule(int ruleset_fd, int fd, uint64_t access)
{
	struct corral_ll_path_beneath_attr attr = {
		.allowed_access = access,
		.parent_fd = fd,
	};

	if (syscall(__NR_landlock_add_rule, ruleset_fd, CORRAL_LL_RULE_PATH_BENEATH, &attr, 0) < 0)
		return -errno;
	return 0;
}

int corral_ll_ruleset(const struct corral_ll_plan *plan, int extra_rw_fd, struct corral_error *err)
{
	struct corral_ll_ruleset_attr attr = {};
	_cleanup_close_ int rfd = -1;
	int r;

	if (!plan)
		return corral_err(err, CORRAL_E_INTERNAL, EINVAL, "landlock: no plan");
	if (plan->abi < 1)
		return corral_err(err, CORRAL_E_UNSUPPORTED, EOPNOTSUPP,
				  "landlock: not available on this kernel");
	attr.handled_access_fs = plan->handled_fs;
	attr.handled_access_net = plan->handled_net;
	attr.scoped = plan->scoped;
	rfd = ll_create_ruleset(&attr, plan->attr_size, 0);
	if (rfd < 0)
		return corral_err(err, CORRAL_E_SETUP, errno, "landlock: create ruleset: %s",
				  strerror(errno));
	/*
	 * Only reads of the plan follow: its fds stay open for the plan's
	 * life, so concurrent calls need no lock.
	 */
	for (size_t i = 0; i < plan->n_rules; i++) {
		r = add_path_rule(rfd, plan->rules[i].fd, plan->rules[i].access);
		if (r < 0)
			return corral_err(err, CORRAL_E_SETUP, -r, "landlock: add rule: %s",
					  strerror(-r));
	}
	if (extra_rw_fd >= 0) {
		struct stat st;
		uint64_t access = plan->handled_fs;

		if (fstat(extra_rw_fd, &st) < 0)
			return corral_err(err, CORRAL_E_SETUP, errno, "landlock: private tmp: %s",
					  strerror(errno));
		if (!S_ISDIR(st.st_mode))
			access &= CORRAL_LL_FS_FILE_RIGHTS;
		r = add_path_rule(rfd, extra_rw_fd, access);
		if (r < 0)
			return corral_err(err, CORRAL_E_SETUP, -r, "landlock: add private tmp rule: %s",
					  strerror(-r));
	}
	/* Network "none": TCP handled with no port rule, so every port is denied. */
	return TAKE_FD(rfd);
}

int corral_ll_restrict_self(int ruleset_fd)
{
	/*
	 * Flags 0: the default audit behaviour (ABI 7 logs denials until the
	 * next execve only). TSYNC (ABI 8) is not needed: the forked child
	 * is single-threaded when it restricts itself.
	 */
	if (syscall(__NR_landlock_restrict_self, ruleset_fd, 0U) < 0)
		return -errno;
	return 0;
}
