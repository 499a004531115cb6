/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * corral_probe: what this host can enforce, and the posture of a policy on
 * it. Fast (a few milliseconds): one forked child for the user-namespace
 * test, one connect to the docker socket, no exec.
 */
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#include "internal/clock.h"
#include "internal/util.h"
#include "landlock/landlock.h"
#include "policy/policy.h"
#include "seccomp/seccomp.h"
#include "supervisor/docker/docker.h"
#include "supervisor/local/netns.h"
#include "supervisor/local/procns.h"
#include "policy/posture.h"
#include "supervisor/exec/sandbox.h"
#include "supervisor/local/unotify/unotify.h"

/* The docker daemon must answer /_ping within this; probe stays fast. */
#define DOCKER_PING_TIMEOUT_MS 150

/*
 * Whether this process may create a user namespace. Sysctls alone do not
 * tell (Ubuntu's AppArmor userns restriction, seccomp in a container), so
 * a forked child tries it; the child only calls unshare and _exit.
 */
static bool probe_user_namespaces(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return false;
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Wait for |events| on |fd| within what is left of the ping's budget. */
static bool wait_fd(int fd, short events, double start_ms)
{
	struct pollfd pfd = { .fd = fd, .events = events };

	for (;;) {
		long left = DOCKER_PING_TIMEOUT_MS - (long)(corral_now_ms() - start_ms);
		int r;

		if (left <= 0)
			return false;
		r = poll(&pfd, 1, (int)left);
		if (r > 0)
			return (pfd.revents & events) != 0;
		if (r == 0 || errno != EINTR)
			return false;
	}
}

/* The Unix socket of the docker daemon, as run finds it; NULL: reached otherwise, not probed. */
static const char *docker_socket_path(void)
{
	extern char **environ;

	return corral_docker_daemon_socket(environ);
}

/* The HTTP status of "GET |what|" to the docker daemon's socket, or -1 when none answers. */
static int docker_get(const char *what)
{
	char req[512];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;
	const char *path = docker_socket_path();
	double start = corral_now_ms();
	char buf[256];
	size_t got = 0, sent = 0, reqlen;
	int n0 = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: docker\r\n\r\n", what);

	if (n0 < 0 || (size_t)n0 >= sizeof(req) || !path || strlen(path) >= sizeof(sa.sun_path))
		return -1;
	reqlen = (size_t)n0;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (errno != EINPROGRESS && errno != EAGAIN)
			return -1;
		if (!wait_fd(fd, POLLOUT, start))
			return -1;
	}
	while (sent < reqlen) {
		ssize_t n = send(fd, req + sent, reqlen - sent, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN || !wait_fd(fd, POLLOUT, start))
				return -1;
			continue;
		}
		sent += (size_t)n;
	}
	while (got < sizeof(buf) - 1) {
		ssize_t n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);

		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN || !wait_fd(fd, POLLIN, start))
				break;
			continue;
		}
		got += (size_t)n;
		buf[got] = '\0';
		if (strstr(buf, "\r\n"))
			break; /* the status line is all we need */
	}
	buf[got] = '\0';
	if (strncmp(buf, "HTTP/1.", 7) != 0 || got < 12)
		return -1;
	return atoi(buf + 9);
}

/* Does a docker daemon answer "GET /_ping" with HTTP 200 on its socket? */
static bool probe_docker(void)
{
	return docker_get("/_ping") == 200;
}

/*
 * What the docker provider enforces: the container, not Landlock or corral's
 * seccomp filter (docs/providers.md, "Posture"). |uid| is the identity
 * decided for the container.
 */
static void docker_promises(const struct corral_policy *p, uid_t uid, struct corral_posture *ps)
{
	bool net_none = p->network != CORRAL_NET_HOST;

	corral_posture_add(ps, CORRAL_P_FS_WRITE, CORRAL_PROMISE_ENFORCED,
			   "writes outside the root and fs.read_write: the container's root filesystem is --read-only, /tmp a private tmpfs");
	corral_posture_add(ps, CORRAL_P_FS_READ, CORRAL_PROMISE_ENFORCED,
			   "reads of host files outside the root, fs.read_write and fs.read_only: the container sees only its image and those bind mounts");
	if (net_none)
		corral_posture_add(ps, CORRAL_P_NET_NONE, CORRAL_PROMISE_ENFORCED,
				   "no network: --network none (a private namespace with only lo)");
	else
		corral_posture_add(ps, CORRAL_P_NET_NONE, CORRAL_PROMISE_NA,
				   "network host asked for: --network host, the host's network namespace: its "
				   "abstract Unix sockets too (no Landlock scope in the container, unlike the local provider)");
	corral_posture_add(ps, CORRAL_P_NET_NO_IO_URING, CORRAL_PROMISE_NA,
			   "io_uring is not filtered: docker's default seccomp profile allows io_uring_setup on this docker version; it reaches nothing the container's namespaces do not already allow (no network under --network none)");
	corral_posture_add(ps, CORRAL_P_SCOPE_PROCESSES, CORRAL_PROMISE_ENFORCED,
			   "signals, ptrace and /proc of processes outside the container: its own pid namespace");
	corral_posture_add(ps, CORRAL_P_SECCOMP_DOCKER_DEFAULT, CORRAL_PROMISE_ENFORCED,
			   "docker's default seccomp profile (not corral's filter)");
	corral_posture_add(ps, CORRAL_P_PRIV_NO_NEW_PRIVS, CORRAL_PROMISE_ENFORCED,
			   "--security-opt no-new-privileges");
	corral_posture_add(ps, CORRAL_P_PRIV_NO_CAPABILITIES, CORRAL_PROMISE_ENFORCED, "--cap-drop ALL");
	if (uid == 0)
		corral_posture_add(ps, CORRAL_P_IDENTITY_NON_ROOT, CORRAL_PROMISE_NA,
				   "user root asked for: uid 0 in the container, every capability dropped");
	else
		corral_posture_add(ps, CORRAL_P_IDENTITY_NON_ROOT, CORRAL_PROMISE_ENFORCED,
				   "the container runs as uid %u (--user)", (unsigned)uid);
	corral_posture_add(ps, CORRAL_P_LIMITS_CGROUP, CORRAL_PROMISE_ENFORCED,
			   "memory and processes: the container's cgroup (--memory, --pids-limit); cpu, file size, open files: --ulimit");
	corral_posture_add(ps, CORRAL_P_LIFETIME, CORRAL_PROMISE_ENFORCED,
			   "the container is killed and removed at the deadline, at exit, or when corral dies");
}

static const char *state_name(int state)
{
	switch (state) {
	case CORRAL_PROMISE_ENFORCED:
		return "enforced";
	case CORRAL_PROMISE_DROPPED:
		return "dropped";
	default:
		return "not_applicable";
	}
}

static const char *network_name(int n)
{
	return corral_network_name(n) ? corral_network_name(n) : "none";
}

/*
 * Can the command reach a network? With "host", yes. Otherwise only the
 * socket filter keeps inet sockets from being created (Landlock's TCP rules
 * leave UDP and raw sockets open), so "no" needs an enforced seccomp
 * network promise and no dropped one.
 */
static bool posture_egress(const struct corral_policy *p, const struct corral_posture *ps,
			   bool seccomp_ok)
{
	bool socket_filter = false;

	/* "allow": the listed hosts, and only them (net.egress_allow says how). */
	if (p->network == CORRAL_NET_HOST || p->network == CORRAL_NET_ALLOW || !seccomp_ok)
		return true;
	for (size_t i = 0; i < ps->n; i++) {
		const struct corral_promise *pr = &ps->items[i];

		if (strncmp(pr->id, "net.", 4) != 0 || pr->which == CORRAL_P_NET_TCP_LANDLOCK)
			continue;
		if (pr->state == CORRAL_PROMISE_DROPPED)
			return true;
		if (pr->state == CORRAL_PROMISE_ENFORCED)
			socket_filter = true;
	}
	return !socket_filter;
}

/*
 * Does an extra read-only path (one the user added to the defaults) show
 * the host beyond the system runtime: "/", or a path that is, holds or
 * lies in a home directory (/home, /root, the caller's $HOME) or the
 * host's state and kernel interfaces (/proc, /sys, /dev, /run, /var,
 * /boot, /mnt, /media, /srv)? Judged as spelled and resolved; a path
 * that does not resolve counts as spelled. Conservative: "fs_confined"
 * promises a command that sees the workspace, not the host.
 */
static bool read_only_exposes_host(const struct corral_policy *p)
{
	static const char *const host[] = {
		"/home", "/root", "/proc", "/sys", "/dev", "/run", "/var", "/boot", "/mnt", "/media", "/srv",
	};
	_cleanup_free_ char *home = NULL;
	const char *h = getenv("HOME");

	if (h && h[0] == '/' && strcmp(h, "/") != 0)
		home = realpath(h, NULL);
	for (size_t i = 0; i < p->fs.read_only.n; i++) {
		const char *ro = p->fs.read_only.v[i];
		_cleanup_free_ char *canon = NULL;

		if (corral_is_default_read_only(ro))
			continue;
		canon = realpath(ro, NULL);
		for (int k = 0; k < 2; k++) {
			const char *path = k ? canon : ro;

			if (!path)
				continue;
			if (home && (corral_path_contains(path, home) || corral_path_contains(home, path)))
				return true;
			for (size_t j = 0; j < ARRAY_SIZE(host); j++)
				if (corral_path_contains(path, host[j]) || corral_path_contains(host[j], path))
					return true;
		}
	}
	return false;
}

static int root_absolute(const char *root, char **out, struct corral_error *err)
{
	char *r;

	if (root)
		r = realpath(root, NULL);
	else
		r = getcwd(NULL, 0);
	if (!r)
		return corral_err(err, errno == ENOENT ? CORRAL_E_NOT_FOUND : CORRAL_E_SETUP, errno,
				  "root %s: %s", root ? root : "(current directory)", corral_strerror(errno));
	*out = r;
	return 0;
}

/*
 * The root as run would take it: absolute, resolved, and valid UTF-8 (the
 * report is JSON). -1 with |ierr| set when run would refuse it.
 */
static int probe_root(const struct corral_policy *p, char **root, struct corral_error *ierr)
{
	json_t *t;

	if (root_absolute(p->root, root, ierr) < 0 || corral_policy_check_paths(p, ierr) < 0)
		return -1;
	t = json_string(*root);
	if (!t) {
		corral_err(ierr, CORRAL_E_POLICY, EINVAL, "root%s: not valid UTF-8",
			   p->root ? "" : " (the current directory)");
		free(*root);
		*root = NULL;
		return -1;
	}
	json_decref(t);
	return 0;
}

/*
 * The docker provider's promises, and what run would stop at: the
 * identity, an extra path that is not there, no daemon, or (never
 * pulling) no image. true when run would refuse (|ierr| says why).
 */
static bool probe_docker_refusal(const struct corral_policy *p, const char *root, struct corral_posture *ps,
				 struct corral_error *ierr)
{
	uid_t uid = 0;
	gid_t gid;
	bool refused = false;

	/* The same identity decision corral_docker_prepare makes. */
	if (corral_docker_identity(p, root, &uid, &gid, ierr) < 0)
		refused = true;
	docker_promises(p, uid, ps);
	for (int k = 0; k < 2 && !refused; k++) {
		const struct corral_strv *v = k ? &p->fs.read_only : &p->fs.read_write;

		for (size_t i = 0; i < v->n && !refused; i++) {
			struct stat st;

			if (k && corral_is_default_read_only(v->v[i]))
				continue; /* the image brings its own system */
			if (stat(v->v[i], &st) < 0) {
				corral_err(ierr, CORRAL_E_SETUP, errno, "%s: %s: %s",
					   k ? "fs.read_only" : "fs.read_write", v->v[i], corral_strerror(errno));
				refused = true;
			}
		}
	}
	/* The client on PATH, its daemon and the image, as run needs them (supervisor/docker/). */
	return refused || corral_docker_usable(p, ierr) < 0;
}

/*
 * The identity corral_sandbox_new would choose (the same refusal when
 * nobody can write the root), and its process and memory limits: uid 0
 * needs a pids cgroup, which only root can make. false when refused.
 */
static bool probe_identity(const struct corral_policy *p, const char *root, struct corral_posture *ps,
			   struct corral_error *ierr)
{
	struct corral_cgroup_parents cg = {};
	bool pids_cg = false, mem_cg = false;
	uid_t uid;
	gid_t gid;

	if (corral_identity_preview(p, root, &uid, &gid, ps, ierr) < 0)
		return false;
	if (geteuid() == 0) {
		corral_cgroup_detect(&cg);
		pids_cg = cg.dir[CORRAL_CG_PIDS] || (cg.dir[CORRAL_CG_UNIFIED] && cg.v2_pids);
		mem_cg = cg.dir[CORRAL_CG_MEMORY] || (cg.dir[CORRAL_CG_UNIFIED] && cg.v2_memory);
		corral_cgroup_parents_clear(&cg);
	}
	corral_processes_posture(p, uid == 0, pids_cg, ps);
	corral_memory_posture(p, mem_cg, ps);
	return true;
}

/*
 * The local provider's promises, step by step as corral_sandbox_new takes
 * them: network and PID namespaces, Landlock, seccomp, no_new_privs, the
 * identity. 0, 1 when run would refuse (|ierr| says why), or -errno with
 * |err| set when probe itself failed. |*seccomp_ok|: the filter compiles.
 */
static int probe_local(struct corral_policy *work, const char *root, struct corral_posture *ps,
		       struct corral_netns_plan *netns, bool *seccomp_ok, struct corral_error *ierr,
		       struct corral_error *err)
{
	struct corral_procns_plan procns;
	struct corral_ll_plan *plan = NULL;
	struct corral_bpf bpf = {};
	struct corral_error serr = {};
	int handover, um, r;

	corral_netns_posture(work, netns, ps);
	corral_egress_posture(work, ps);
	corral_procns_posture(work, &procns, ps);
	r = corral_ll_plan_new(work, root, ps, &plan, ierr);
	if (r < 0) {
		if (ierr->code == CORRAL_E_INTERNAL) {
			*err = *ierr;
			return r;
		}
		return 1;
	}
	corral_ll_plan_free(plan);

	um = corral_unix_mode(work, corral_landlock_abi(), &handover, ps);
	*seccomp_ok = corral_seccomp_compile_unix(work, corral_landlock_abi(),
						  um == CORRAL_UNIX_MEDIATED || um == CORRAL_UNIX_LANDLOCK, handover,
						  ps, &bpf, &serr) == 0;
	if (!*seccomp_ok)
		corral_posture_add(ps, CORRAL_P_SECCOMP_FILTER, CORRAL_PROMISE_DROPPED, "seccomp filter: %s",
				   serr.message[0] ? serr.message : "cannot be compiled");
	corral_bpf_free(&bpf);
	corral_posture_add(ps, CORRAL_P_PRIV_NO_NEW_PRIVS, CORRAL_PROMISE_ENFORCED,
			   "no_new_privs: setuid and file capabilities cannot raise privilege");
	return probe_identity(work, root, ps, ierr) ? 0 : 1;
}

/* What probe found, as the JSON report (docs/probe.md). 0 or -ENOMEM. */
static int probe_json(const struct corral_policy *p, const char *root, const struct corral_posture *ps,
		      struct corral_netns_plan *netns, bool seccomp_ok, bool refused, const struct corral_error *ierr,
		      char **json_out)
{
	struct corral_procns_plan procns_any; /* what --proc private would get here, whatever the policy */
	const struct corral_promise *dropped = corral_posture_first_dropped(ps);
	const struct corral_promise *w = corral_posture_get(ps, CORRAL_P_FS_WRITE);
	const struct corral_promise *rd = corral_posture_get(ps, CORRAL_P_FS_READ);
	bool fs_confined = w && rd && w->state == CORRAL_PROMISE_ENFORCED && rd->state == CORRAL_PROMISE_ENFORCED &&
			   !refused && !read_only_exposes_host(p);
	json_t *o = NULL, *promises = json_array(), *refusal;
	char netns_why[200];
	int r = -ENOMEM;

	if (!promises)
		return -ENOMEM;
	for (size_t i = 0; i < ps->n; i++) {
		const struct corral_promise *pr = &ps->items[i];

		if (json_array_append_new(promises, json_pack("{s:s,s:s,s:s}", "id", pr->id, "state",
							      state_name(pr->state), "why", pr->why)) < 0)
			goto out;
	}
	if (refused)
		refusal = json_string(ierr->message);
	else if (dropped && p->compat != CORRAL_COMPAT_BEST_EFFORT)
		refusal = json_string(dropped->why);
	else
		refusal = json_null();
	o = json_pack("{s:i,s:i,s:b,s:b,s:b,s:b,s:b,s:b,s:s?,s:s,s:s,s:s,s:b,s:b,s:b,s:o*,s:O}",
		      "landlock_abi", corral_landlock_abi(),
		      "landlock_errata", corral_ll_errata(),
		      "seccomp", corral_seccomp_available(),
		      "user_namespaces", probe_user_namespaces(),
		      "network_namespaces", corral_netns_check(netns, netns_why, sizeof(netns_why)) == 0,
		      "pid_namespaces", corral_procns_check(&procns_any, netns_why, sizeof(netns_why)) == 0,
		      "docker", probe_docker(),
		      "running_as_root", geteuid() == 0,
		      "root", root ? root : p->root,
		      "network", network_name(p->network),
		      "compat", p->compat == CORRAL_COMPAT_BEST_EFFORT ? "best-effort" : "strict",
		      "provider", p->provider == CORRAL_PROVIDER_DOCKER ? "docker" : "local",
		      "egress", posture_egress(p, ps, seccomp_ok),
		      "fs_confined", fs_confined,
		      "runnable", !json_is_string(refusal),
		      "refusal", refusal,
		      "promises", promises);
	if (!o)
		goto out;
	*json_out = json_dumps(o, JSON_PRESERVE_ORDER);
	if (*json_out)
		r = 0;
out:
	json_decref(o);
	json_decref(promises);
	return r;
}

static void policy_freep(struct corral_policy **p)
{
	corral_policy_free(*p);
}

_public_ int corral_probe(const struct corral_policy *p, char **json_out, struct corral_error *err)
{
	_cleanup_(policy_freep) struct corral_policy *defaults = NULL, *work = NULL;
	_cleanup_free_ struct corral_posture *ps = NULL;
	_cleanup_free_ char *root = NULL;
	struct corral_netns_plan netns = {};
	struct corral_error ierr = {};
	bool seccomp_ok = false, refused = false;
	int r;

	if (!json_out)
		return corral_err(err, CORRAL_E_INTERNAL, EINVAL, "probe: no output");
	if (!p) {
		r = corral_policy_new(&defaults);
		if (r < 0)
			return corral_err(err, CORRAL_E_INTERNAL, -r, "probe: default policy: %s",
					  corral_strerror(-r));
		p = defaults;
	}
	ps = calloc(1, sizeof(*ps));
	/* The network-namespace check may turn best-effort "loopback" into "none". */
	work = corral_policy_dup(p);
	if (!ps || !work)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	/* The choice corral_sandbox_new makes, reported as "provider". */
	if (work->provider == CORRAL_PROVIDER_AUTO)
		work->provider = corral_docker_usable(work, &ierr) == 0 ? CORRAL_PROVIDER_DOCKER : CORRAL_PROVIDER_LOCAL;
	ierr = (struct corral_error){};
	/*
	 * Every reason run would refuse is the report's "refusal", never
	 * probe's own error: it still says what the kernel can do.
	 */
	if (probe_root(work, &root, &ierr) < 0) {
		refused = true;
	} else if (work->provider == CORRAL_PROVIDER_DOCKER) {
		refused = probe_docker_refusal(work, root, ps, &ierr);
		seccomp_ok = true;
	} else {
		r = probe_local(work, root, ps, &netns, &seccomp_ok, &ierr, err);
		if (r < 0)
			return r;
		refused = r > 0;
	}
	r = probe_json(work, root, ps, &netns, seccomp_ok, refused, &ierr, json_out);
	if (r < 0)
		return corral_err(err, CORRAL_E_INTERNAL, -r, "out of memory");
	return 0;
}
