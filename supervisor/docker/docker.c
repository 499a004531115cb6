/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The docker provider: the same policy in a throwaway container.
 *
 * prepare (once per sandbox): find the client, ask the daemon over its Unix
 * socket whether it answers and has the image (two raw HTTP/1.0 requests,
 * under a millisecond, where merely starting the client costs ~10 ms), and
 * build the `docker run` options from the policy. exec (per command): a
 * fresh container name, the argv, and the shared engine, which runs the
 * client as a plain child. The container is the confinement; the client
 * itself is not confined.
 *
 * No container may outlive a run: at the deadline the container is killed
 * through the daemon before the engine kills the client (killing only the
 * client leaves the container running); whenever the client did not exit
 * on its own the container is force-removed, retrying briefly because a
 * create request may still be in flight in the daemon; and a guardian
 * process removes it if corral itself dies mid-run.
 */
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#include <jansson.h>

#include "corral-config.h"

#include "landlock/landlock.h"
#include "policy/policy.h"
#include "supervisor/docker/docker.h"
#include "supervisor/exec/result.h"
#include "supervisor/exec/sandbox.h"

#define DEFAULT_SOCK "/var/run/docker.sock"
#define API_TIMEOUT_MS 5000
#define CLIENT_TIMEOUT_MS 10000
#define REMOVE_RETRY_MS 1500
#define REMOVE_WAIT_MS 10000

struct strv {
	char **v;
	size_t n, cap;
};

struct corral_docker {
	char *client;
	char *sock;          /* NULL: talk to the daemon only through the client */
	struct strv opts;    /* `docker run` options from --pull to the image, inclusive */
	struct strv cenv;    /* the client's environment */
};

struct docker_run {
	const struct corral_docker *d;
	char name[32];
	char dir[96], sock[108]; /* the status socket's directory and path (sun_path: 108 bytes) */
	int status_fd;
	bool deadline;
	bool maybe_uncreated; /* the kill found no container: a create may still be in flight */
};

/* ------------------------------------------------------------ strv */

static int strv_push(struct strv *s, char *x)
{
	if (!x)
		return -ENOMEM;
	if (s->n + 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		char **v = realloc(s->v, cap * sizeof(*v));
		if (!v) {
			free(x);
			return -ENOMEM;
		}
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = x;
	s->v[s->n] = NULL;
	return 0;
}

static int strv_add(struct strv *s, const char *x)
{
	return strv_push(s, strdup(x));
}

_printf_(2, 3) static int strv_addf(struct strv *s, const char *fmt, ...)
{
	va_list ap;
	char *x;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&x, fmt, ap);
	va_end(ap);
	return strv_push(s, r < 0 ? NULL : x);
}

static void strv_clear(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

void corral_docker_strv_free(char **v)
{
	if (!v)
		return;
	for (char **i = v; *i; i++)
		free(*i);
	free(v);
}

static const char *env_get(char *const *environ_, const char *name)
{
	size_t l = strlen(name);

	for (char *const *e = environ_; e && *e; e++)
		if (strncmp(*e, name, l) == 0 && (*e)[l] == '=')
			return *e + l + 1;
	return NULL;
}

/* ------------------------------------------------------------ plan */

/*
 * docker's --mount value is one CSV record: a field holding a comma, a
 * quote or a line break must be quoted, quotes doubled.
 */
static int csv_field(const char *key, const char *val, char **field)
{
	size_t n = strlen(key) + strlen(val) * 2 + 4;
	char *f = malloc(n), *w = f;

	if (!f)
		return -ENOMEM;
	if (strpbrk(val, ",\"\r\n")) {
		*w++ = '"';
		w = stpcpy(w, key);
		*w++ = '=';
		for (const char *c = val; *c; c++) {
			if (*c == '"')
				*w++ = '"';
			*w++ = *c;
		}
		*w++ = '"';
		*w = 0;
	} else {
		stpcpy(stpcpy(stpcpy(w, key), "="), val);
	}
	*field = f;
	return 0;
}

static int add_mount(struct strv *s, const char *src, const char *dst, bool ro)
{
	_cleanup_free_ char *fs = NULL, *fd = NULL;

	if (csv_field("src", src, &fs) < 0 || csv_field("dst", dst, &fd) < 0)
		return -ENOMEM;
	if (strv_add(s, "--mount") < 0)
		return -ENOMEM;
	return strv_addf(s, "type=bind,%s,%s%s", fs, fd, ro ? ",readonly" : "");
}

static bool path_within(const char *inner, const char *outer)
{
	size_t l = strlen(outer);

	if (strcmp(outer, "/") == 0)
		return true;
	return strncmp(inner, outer, l) == 0 && (inner[l] == '\0' || inner[l] == '/');
}

/*
 * Refuse to mount anything that is, or contains, a container daemon's
 * socket (docker's, the one DOCKER_HOST names, podman's), or that is in or
 * contains a daemon's state directory: docker keeps its own containerd's
 * socket in /run/docker/containerd, and its other sockets beside it; every
 * one of them owns the host. Compared both as written and with symlinks
 * resolved (/var/run is usually a link to /run).
 */
static int refuse_socket(const char *key, const char *path, const char *sock, struct corral_error *err)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char xdg_docker[PATH_MAX] = "", xdg_dir[PATH_MAX] = "", xdg_podman[PATH_MAX] = "", xdg_ctd[PATH_MAX] = "";
	const char *socks[] = {
		"/var/run/docker.sock", "/run/docker.sock", "/run/podman/podman.sock", sock,
		xdg_docker[0] ? xdg_docker : NULL,
	};
	/* Directories: refused when the path covers one or lies inside one. */
	const char *dirs[] = {
		"/run/docker", "/var/run/docker", "/run/containerd", "/var/run/containerd", "/run/podman",
		"/var/run/podman", "/run/crio", "/var/run/crio", "/run/buildkit", "/var/lib/docker",
		"/var/lib/containerd", NULL, NULL, NULL,
	};
	char rp[PATH_MAX], rs[PATH_MAX];
	bool have_rp = realpath(path, rp) != NULL;

	if (xdg && xdg[0] == '/' && strlen(xdg) < PATH_MAX - 32) {
		snprintf(xdg_docker, sizeof(xdg_docker), "%s/docker.sock", xdg);
		snprintf(xdg_dir, sizeof(xdg_dir), "%s/docker", xdg);
		snprintf(xdg_podman, sizeof(xdg_podman), "%s/podman", xdg);
		snprintf(xdg_ctd, sizeof(xdg_ctd), "%s/containerd", xdg);
		dirs[ARRAY_SIZE(dirs) - 3] = xdg_dir;
		dirs[ARRAY_SIZE(dirs) - 2] = xdg_podman;
		dirs[ARRAY_SIZE(dirs) - 1] = xdg_ctd;
		socks[ARRAY_SIZE(socks) - 1] = xdg_docker;
	}
	for (size_t i = 0; i < ARRAY_SIZE(socks); i++) {
		if (!socks[i])
			continue;
		bool hit = path_within(socks[i], path) || (have_rp && path_within(socks[i], rp));
		if (!hit && realpath(socks[i], rs))
			hit = path_within(rs, path) || (have_rp && path_within(rs, rp));
		if (hit)
			return corral_err(err, CORRAL_E_POLICY, EPERM,
					  "%s: %s is or contains the container daemon socket %s; corral never "
					  "mounts it into a container", key, path, socks[i]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		bool hit;

		if (!dirs[i])
			continue;
		hit = path_within(dirs[i], path) || path_within(path, dirs[i]) ||
		      (have_rp && (path_within(dirs[i], rp) || path_within(rp, dirs[i])));
		if (!hit && realpath(dirs[i], rs))
			hit = path_within(rs, path) || path_within(path, rs) ||
			      (have_rp && (path_within(rs, rp) || path_within(rp, rs)));
		if (hit)
			return corral_err(err, CORRAL_E_POLICY, EPERM,
					  "%s: %s is in or contains %s, a container daemon's state and sockets; "
					  "corral never mounts it into a container", key, path, dirs[i]);
	}
	return 0;
}

/*
 * |root_abs| NULL: |path| is the root itself. Otherwise a path under the
 * root or one of the read-write paths |rw| must not go through a symlink
 * there (the daemon would follow one a previous run planted and mount its
 * target). The daemon resolves the path
 * again when it mounts: a run racing this one in the same root could still
 * swap a directory for a symlink in between (docs/providers.md).
 */
/*
 * The host kernel's own filesystems are never bind-mounted: the host's
 * /proc hands the container every host process (/proc/PID/root is that
 * process's whole filesystem, writable where the process's uid may
 * write), /sys and its relatives the host's kernel knobs. The container
 * has its own /proc and /sys. statfs follows symlinks, so a link to them
 * is caught too (found in review: --ro of a symlink to /proc let a
 * command write into a host process's root).
 */
static int refuse_kernel_fs(const char *key, const char *path, struct corral_error *err)
{
	static const struct {
		long magic;
		const char *name;
	} kernel_fs[] = {
		{ 0x9fa0, "procfs" },           { 0x62656572, "sysfs" },   { 0x27e0eb, "cgroup" },
		{ 0x63677270, "cgroup2" },      { 0x64626720, "debugfs" }, { 0x74726163, "tracefs" },
		{ 0x73636673, "securityfs" },   { (long)0xcafe4a11, "bpf" }, { 0x62656570, "configfs" },
		{ (long)0xde5e81e4, "efivarfs" }, { 0x42494e4d, "binfmt_misc" }, { 0x6e736673, "nsfs" },
	};
	struct statfs sf;

	if (statfs(path, &sf) < 0)
		return corral_err(err, CORRAL_E_NOT_FOUND, errno, "%s: %s: %s", key, path, corral_strerror(errno));
	for (size_t i = 0; i < ARRAY_SIZE(kernel_fs); i++)
		if ((long)sf.f_type == kernel_fs[i].magic)
			return corral_err(err, CORRAL_E_POLICY, EPERM,
					  "%s: %s is on the host's %s; the docker provider never mounts the "
					  "host kernel's own filesystems into a container (it has its own /proc and /sys)",
					  key, path, kernel_fs[i].name);
	return 0;
}

static int check_path(const char *key, const char *path, const char *root_abs,
		      const struct corral_strv *rw, const char *sock, struct corral_error *err)
{
	struct stat st;
	int r;

	if (path[0] != '/')
		return corral_err(err, CORRAL_E_POLICY, EINVAL, "%s: %s: the docker provider needs an absolute path",
				  key, path);
	if (root_abs) {
		int fd = corral_policy_path_open(root_abs, rw->v, rw->n, key, path, err);

		if (fd < 0)
			return fd;
		safe_close(fd);
	}
	if (stat(path, &st) < 0)
		return corral_err(err, CORRAL_E_NOT_FOUND, errno, "%s: %s: %s", key, path, corral_strerror(errno));
	r = refuse_kernel_fs(key, path, err);
	if (r < 0)
		return r;
	return refuse_socket(key, path, sock, err);
}

/*
 * Names whose value would change how the docker client itself behaves go
 * into argv as NAME=VALUE; every other container variable is handed over as
 * `-e NAME` with the value in the client's environment, so values (tokens
 * passed through env.pass) never show in the host's process list.
 */
static bool client_sensitive(const char *name)
{
	static const char *const exact[] = {
		"PATH", "HOME", "TMPDIR", "USER", "SHELL", "http_proxy", "https_proxy", "no_proxy",
		"all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "SSL_CERT_FILE",
		"SSL_CERT_DIR",
	};
	/* Exactly the Go runtime's own variables: a prefix "GO" took GOOGLE_API_KEY into argv. */
	static const char *const go_runtime[] = { "GODEBUG", "GOGC", "GOMAXPROCS", "GOMEMLIMIT", "GOTRACEBACK",
						  "GORACE" };
	static const char *const prefix[] = { "DOCKER_", "LD_", "XDG_" };

	for (size_t i = 0; i < ARRAY_SIZE(exact); i++)
		if (strcmp(name, exact[i]) == 0)
			return true;
	for (size_t i = 0; i < ARRAY_SIZE(go_runtime); i++)
		if (strcmp(name, go_runtime[i]) == 0)
			return true;
	for (size_t i = 0; i < ARRAY_SIZE(prefix); i++)
		if (strncmp(name, prefix[i], strlen(prefix[i])) == 0)
			return true;
	return false;
}

static bool valid_env_name(const char *n)
{
	if (!*n)
		return false;
	for (const char *c = n; *c; c++)
		if (*c == '=' || *c == '\n')
			return false;
	return true;
}

/* Image references: registry/name:tag@digest characters only, never an option. */
static bool valid_image(const char *s)
{
	if (!s || !*s || s[0] == '-' || strlen(s) > 512)
		return false;
	for (const char *c = s; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      strchr("._-/:@", *c)))
			return false;
	return true;
}

struct kv {
	const char *name, *value;
};

/* The client's own variables (where its daemon is, its config), from corral's environment. */
static int client_base_env(char *const *environ_, struct strv *cenv)
{
	static const char *const client_keep[] = {
		"PATH", "HOME", "DOCKER_HOST", "DOCKER_CONFIG", "DOCKER_CONTEXT", "DOCKER_CERT_PATH",
		"DOCKER_TLS_VERIFY", "DOCKER_API_VERSION", "XDG_RUNTIME_DIR",
	};

	for (size_t i = 0; i < ARRAY_SIZE(client_keep); i++) {
		const char *v = env_get(environ_, client_keep[i]);
		if (!v && strcmp(client_keep[i], "PATH") == 0)
			v = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
		if (v && strv_addf(cenv, "%s=%s", client_keep[i], v) < 0)
			return -ENOMEM;
	}
	/* The client's "What's next" hints would otherwise land in the command's stdout. */
	return strv_add(cenv, "DOCKER_CLI_HINTS=false");
}

static int build_env(const struct corral_policy *p, const struct corral_docker_host *h, struct strv *opts,
		     struct strv *cenv, struct corral_error *err)
{
	size_t cap = 2 + p->env.pass.n + p->env.n_set, n = 0;
	_cleanup_free_ struct kv *vars = calloc(cap ? cap : 1, sizeof(*vars));

	if (!vars)
		return -ENOMEM;
	/* Later entries win: the fixed ones, then env.pass, then env.set. */
	vars[n++] = (struct kv){ "HOME", CORRAL_DOCKER_WORKDIR };
	vars[n++] = (struct kv){ "TMPDIR", "/tmp" };
	for (size_t i = 0; i < p->env.pass.n; i++) {
		const char *v = env_get(h->environ, p->env.pass.v[i]);
		if (!valid_env_name(p->env.pass.v[i]))
			return corral_err(err, CORRAL_E_POLICY, EINVAL, "env.pass: invalid name '%s'",
					  p->env.pass.v[i]);
		if (v)
			vars[n++] = (struct kv){ p->env.pass.v[i], v };
	}
	for (size_t i = 0; i < p->env.n_set; i++) {
		if (!valid_env_name(p->env.set[i].name))
			return corral_err(err, CORRAL_E_POLICY, EINVAL, "env.set: invalid name '%s'",
					  p->env.set[i].name);
		vars[n++] = (struct kv){ p->env.set[i].name, p->env.set[i].value };
	}

	if (client_base_env(h->environ, cenv) < 0)
		return -ENOMEM;

	/*
	 * The client adds the proxies of its config.json (~/.docker, with
	 * credentials in them) to the container's environment, unless the
	 * variable is named with -e: named, without a value and not in the
	 * client's environment, it stays out.
	 */
	{
		static const char *const proxies[] = { "http_proxy", "https_proxy", "ftp_proxy", "no_proxy",
						       "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "FTP_PROXY",
						       "NO_PROXY", "ALL_PROXY" };

		for (size_t k = 0; k < ARRAY_SIZE(proxies); k++) {
			bool listed = false;

			for (size_t i = 0; i < n && !listed; i++)
				listed = strcmp(vars[i].name, proxies[k]) == 0;
			if (!listed && (strv_add(opts, "-e") < 0 || strv_add(opts, proxies[k]) < 0))
				return -ENOMEM;
		}
	}
	for (size_t i = 0; i < n; i++) {
		bool later = false;
		for (size_t j = i + 1; j < n && !later; j++)
			later = strcmp(vars[i].name, vars[j].name) == 0;
		if (later)
			continue;
		if (strv_add(opts, "-e") < 0)
			return -ENOMEM;
		if (client_sensitive(vars[i].name)) {
			if (strv_addf(opts, "%s=%s", vars[i].name, vars[i].value) < 0)
				return -ENOMEM;
		} else if (strv_add(opts, vars[i].name) < 0 ||
			   strv_addf(cenv, "%s=%s", vars[i].name, vars[i].value) < 0) {
			return -ENOMEM;
		}
	}
	return 0;
}
/*
 * The host's online CPUs, as dockerd counts them: /sys's list, not
 * sysconf(_SC_NPROCESSORS_ONLN), which some C libraries (musl) answer
 * with the CPUs this process may run on (taskset, cgroup cpusets).
 */
static long host_cpus(void)
{
	char buf[256];
	long n = 0;
	int fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	ssize_t len = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	safe_close(fd);
	if (len <= 0)
		return sysconf(_SC_NPROCESSORS_ONLN);
	buf[len] = '\0';
	/* "0-3,5,7-8\n" */
	for (char *p = buf; *p && *p != '\n';) {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		if (end == p)
			return sysconf(_SC_NPROCESSORS_ONLN);
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a)
				return sysconf(_SC_NPROCESSORS_ONLN);
		}
		n += b - a + 1;
		p = end;
		if (*p == ',')
			p++;
	}
	return n > 0 ? n : sysconf(_SC_NPROCESSORS_ONLN);
}


int corral_docker_plan(const struct corral_policy *p, const char *root_abs, const struct corral_docker_host *h,
		       struct corral_docker **out, struct corral_error *err)
{
	struct corral_docker *d;
	struct strv *o;
	uint64_t mem, pids;
	int r;

	if (!valid_image(p->docker.image))
		return corral_err(err, CORRAL_E_POLICY, EINVAL,
				  p->docker.image && *p->docker.image
					  ? "docker.image: '%s' is not an image reference"
					  : "docker.image: no image given%s (set docker.image or --image)",
				  p->docker.image ? p->docker.image : "");
	if (!root_abs || root_abs[0] != '/')
		return corral_err(err, CORRAL_E_POLICY, EINVAL, "root: the docker provider needs an absolute root");
	if (!h->helper || h->helper[0] != '/')
		return corral_err(err, CORRAL_E_PROVIDER, ENOENT,
				  "docker provider: its exec helper " CORRAL_DOCKER_HELPER_NAME
				  " was not found next to corral or in " CORRAL_LIBEXECDIR "; install corral completely");
	/*
	 * Memory: docker has no RLIMIT_AS (`--ulimit as` is refused), so the
	 * container's memory cgroup carries the tighter of docker.memory and
	 * limits.memory; swap equal, so it cannot spill to swap.
	 */
	mem = p->docker.memory;
	if (p->limits.memory && (!mem || p->limits.memory < mem))
		mem = p->limits.memory;
	if (mem && mem < 6 * 1024 * 1024)
		return corral_err(err, CORRAL_E_POLICY, EINVAL,
				  "docker.memory: docker needs at least 6M for a container (limits.memory applies too)");
	/* pids: RLIMIT_NPROC counts the host uid's processes; the pids cgroup counts the container's. */
	pids = p->docker.pids;
	if (p->limits.processes && (!pids || p->limits.processes < pids))
		pids = p->limits.processes;
	if (!(p->docker.cpus >= 0) || p->docker.cpus > 1e6)
		return corral_err(err, CORRAL_E_POLICY, EINVAL, "docker.cpus: must be a positive number");
	/* docker's own floor: below it every run would fail with docker's 125. */
	if (p->docker.cpus > 0 && p->docker.cpus < 0.01)
		return corral_err(err, CORRAL_E_POLICY, EINVAL, "docker.cpus: %g is below docker's minimum of 0.01",
				  p->docker.cpus);
	if (h->sock && p->docker.cpus > 0) {
		long ncpu = host_cpus();

		if (ncpu > 0 && p->docker.cpus > (double)ncpu)
			return corral_err(err, CORRAL_E_POLICY, EINVAL,
					  "docker.cpus: %g exceeds the %ld CPUs of this host", p->docker.cpus, ncpu);
	}

	r = check_path("root", root_abs, NULL, NULL, h->sock, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < p->fs.read_write.n; i++) {
		r = check_path("fs.read_write", p->fs.read_write.v[i], root_abs, &p->fs.read_write, h->sock,
			       err);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < p->fs.read_only.n; i++) {
		/* The image brings its own system; only the caller's extra paths are mounted. */
		if (corral_is_default_read_only(p->fs.read_only.v[i]))
			continue;
		r = check_path("fs.read_only", p->fs.read_only.v[i], root_abs, &p->fs.read_write, h->sock,
			       err);
		if (r < 0)
			return r;
	}

	d = calloc(1, sizeof(*d));
	if (!d)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	d->client = strdup(h->client ? h->client : "docker");
	d->sock = h->sock ? strdup(h->sock) : NULL;
	if (!d->client || (h->sock && !d->sock))
		goto oom;
	o = &d->opts;

	if (strv_add(o, "--pull") < 0 || strv_add(o, p->docker.pull ? "missing" : "never") < 0 ||
	    /* tini as pid 1: signals reach the command, kill -9 $$ works, zombies are reaped */
	    strv_add(o, "--init") < 0 ||
	    /* the command is what runs, not an ENTRYPOINT of the image's with the command as its arguments */
	    strv_add(o, "--entrypoint") < 0 || strv_add(o, "") < 0 ||
	    /* output is streamed through the attached client; no copy in the daemon's log */
	    strv_add(o, "--log-driver") < 0 || strv_add(o, "none") < 0 ||
	    strv_add(o, "--network") < 0 ||
	    /* "none" leaves exactly lo: that is "loopback" too */
	    strv_add(o, p->network == CORRAL_NET_HOST ? "host" : "none") < 0 ||
	    strv_add(o, "--user") < 0 || strv_addf(o, "%u:%u", (unsigned)h->uid, (unsigned)h->gid) < 0 ||
	    strv_add(o, "--cap-drop") < 0 || strv_add(o, "ALL") < 0 ||
	    strv_add(o, "--security-opt") < 0 || strv_add(o, "no-new-privileges") < 0 ||
	    strv_add(o, "--read-only") < 0 ||
	    strv_add(o, "--tmpfs") < 0 ||
	    strv_addf(o, "/tmp:rw,exec,nosuid,nodev,size=%llu,mode=1777",
		      (unsigned long long)(mem ? mem : 64ull << 20)) < 0)
		goto oom;
	if (add_mount(o, root_abs, CORRAL_DOCKER_WORKDIR, false) < 0 ||
	    add_mount(o, h->helper, CORRAL_DOCKER_HELPER, true) < 0)
		goto oom;
	for (size_t i = 0; i < p->fs.read_write.n; i++)
		if (add_mount(o, p->fs.read_write.v[i], p->fs.read_write.v[i], false) < 0)
			goto oom;
	for (size_t i = 0; i < p->fs.read_only.n; i++)
		if (!corral_is_default_read_only(p->fs.read_only.v[i]) &&
		    add_mount(o, p->fs.read_only.v[i], p->fs.read_only.v[i], true) < 0)
			goto oom;
	if (strv_add(o, "-w") < 0 || strv_add(o, CORRAL_DOCKER_WORKDIR) < 0)
		goto oom;
	if (mem && (strv_add(o, "--memory") < 0 || strv_addf(o, "%llu", (unsigned long long)mem) < 0 ||
		    strv_add(o, "--memory-swap") < 0 || strv_addf(o, "%llu", (unsigned long long)mem) < 0))
		goto oom;
	if (p->docker.cpus > 0 && (strv_add(o, "--cpus") < 0 || strv_addf(o, "%g", p->docker.cpus) < 0))
		goto oom;
	if (pids && (strv_add(o, "--pids-limit") < 0 || strv_addf(o, "%llu", (unsigned long long)pids) < 0))
		goto oom;
	/* CPU: the soft limit sends SIGXCPU, the hard one a second later SIGKILL. */
	if (p->limits.cpu && (strv_add(o, "--ulimit") < 0 ||
			      strv_addf(o, "cpu=%llu:%llu", (unsigned long long)p->limits.cpu,
					(unsigned long long)p->limits.cpu + 1) < 0))
		goto oom;
	/* At most 2^63-1, as the local provider (sandbox.c set_rl): docker's values are int64. */
	if (p->limits.file_size) {
		unsigned long long fsize = p->limits.file_size > (uint64_t)INT64_MAX ? (unsigned long long)INT64_MAX :
						       (unsigned long long)p->limits.file_size;

		if (strv_add(o, "--ulimit") < 0 || strv_addf(o, "fsize=%llu:%llu", fsize, fsize) < 0)
			goto oom;
	}
	if (p->limits.open_files && (strv_add(o, "--ulimit") < 0 ||
				     strv_addf(o, "nofile=%llu:%llu", (unsigned long long)p->limits.open_files,
					       (unsigned long long)p->limits.open_files) < 0))
		goto oom;
	/* Labels let an operator (and the tests) find a run's containers: by corral, by root. */
	if (strv_add(o, "--label") < 0 || strv_add(o, "io.corral.run=1") < 0 || strv_add(o, "--label") < 0 ||
	    strv_addf(o, "io.corral.root=%s", root_abs) < 0)
		goto oom;
	r = build_env(p, h, o, &d->cenv, err);
	if (r < 0) {
		corral_docker_free(d);
		return r == -ENOMEM ? corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory") : r;
	}
	if (strv_add(o, p->docker.image) < 0)
		goto oom;
	*out = d;
	return 0;
oom:
	corral_docker_free(d);
	return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
}

char *const *corral_docker_client_env(const struct corral_docker *d)
{
	return d->cenv.v;
}

int corral_docker_argv(const struct corral_docker *d, const struct corral_exec_opts *opts, const char *name,
		       const char *status_sock, char ***out, struct corral_error *err)
{
	struct strv a = {};
	/* As the engine: stdin bytes, else the caller's stdin when passed through (with --json too). */
	bool in = opts->stdin_data != NULL || opts->stdin_passthrough;

	if (!opts->shell && (!opts->argv || !opts->argv[0]))
		return corral_err(err, CORRAL_E_USAGE, EINVAL, "run: missing command");
	if (strv_add(&a, d->client) < 0 || strv_add(&a, "run") < 0 || strv_add(&a, "--rm") < 0 ||
	    strv_add(&a, "--name") < 0 || strv_add(&a, name) < 0 || (in && strv_add(&a, "-i") < 0) ||
	    strv_add(&a, "--label") < 0 || strv_addf(&a, "io.corral.pid=%d", (int)getpid()) < 0)
		goto oom;
	if (status_sock && add_mount(&a, status_sock, CORRAL_DOCKER_STATUS, false) < 0)
		goto oom;
	for (size_t i = 0; i < d->opts.n; i++)
		if (strv_add(&a, d->opts.v[i]) < 0)
			goto oom;
	/* tini runs the helper, the helper the command (exec-helper.c) */
	if (strv_add(&a, CORRAL_DOCKER_HELPER) < 0)
		goto oom;
	if (opts->shell) {
		if (strv_add(&a, "/bin/sh") < 0 || strv_add(&a, "-c") < 0 || strv_add(&a, opts->shell) < 0)
			goto oom;
	} else {
		for (const char *const *x = opts->argv; *x; x++)
			if (strv_add(&a, *x) < 0)
				goto oom;
	}
	*out = a.v;
	return 0;
oom:
	strv_clear(&a);
	return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
}

/* ------------------------------------------------------------ result */

void corral_docker_status_parse(const char *buf, size_t len, struct corral_docker_status *st)
{
	char line[300];

	st->exec_errno = 0;
	st->has_interp = false;
	st->interp[0] = '\0';
	for (size_t off = 0; off < len;) {
		const char *nl = memchr(buf + off, '\n', len - off);
		size_t l = nl ? (size_t)(nl - (buf + off)) : len - off;

		if (l < sizeof(line)) {
			memcpy(line, buf + off, l);
			line[l] = '\0';
			if (line[0] == 'E' && line[1] == ' ') {
				char *end;
				long e = strtol(line + 2, &end, 10);

				if (end != line + 2 && !*end && e > 0 && e < 4096)
					st->exec_errno = (int)e;
			} else if (line[0] == 'I' && line[1] == ' ') {
				size_t il = strnlen(line + 2, sizeof(st->interp) - 1);

				st->has_interp = true;
				memcpy(st->interp, line + 2, il);
				st->interp[il] = '\0';
			}
		}
		off += l + 1;
	}
	/* A report without an errno is no exec failure: the command ran. */
	if (!st->exec_errno)
		st->has_interp = false;
}

static char *find_line(char *buf, size_t len, const char *prefix)
{
	size_t pl = strlen(prefix);

	for (char *l = buf; l && l < buf + len;) {
		if ((size_t)(buf + len - l) >= pl && memcmp(l, prefix, pl) == 0)
			return l;
		l = memchr(l, '\n', (size_t)(buf + len - l));
		if (l)
			l++;
	}
	return NULL;
}

/* As the engine reports a local exec failure: exec_errno, exec_interp, 126/127 and its one stderr line. */
static int exec_failed(struct corral_result *res, bool captured, const char *cmd,
		       const struct corral_docker_status *st, struct corral_error *err)
{
	char msg[600];
	int n;

	res->exec_errno = st->exec_errno;
	if (st->has_interp && !(res->exec_interp = strdup(st->interp)))
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	res->exit_status = st->exec_errno == ENOENT && !res->exec_interp ? 127 : 126;
	if (!captured)
		return 0;
	/* The command never ran: what the client wrote (its warnings) stays, the line follows. */
	n = corral_exec_error_line(res, cmd, msg, sizeof(msg));
	if (n > 0) {
		size_t l = (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1;
		char *nb = realloc(res->stderr_buf, res->stderr_len + l + 1);

		if (!nb)
			return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
		memcpy(nb + res->stderr_len, msg, l);
		res->stderr_len += l;
		nb[res->stderr_len] = '\0';
		res->stderr_buf = nb;
	}
	return 0;
}

int corral_docker_map_result(struct corral_result *res, bool captured, const char *cmd,
			     const struct corral_docker_status *st, struct corral_error *err)
{
	int s = res->exit_status;

	res->provider = "docker";
	if (!res->exited || res->timed_out)
		return 0;
	if (st->started && st->exec_errno)
		return exec_failed(res, captured, cmd, st, err);
	if (!st->started) {
		/*
		 * The helper never ran, so neither did the command: whatever
		 * the client printed is docker's own (its "docker: " line for
		 * 125, tini's when it could not start the helper).
		 */
		const char *l = captured && res->stderr_buf ? find_line(res->stderr_buf, res->stderr_len, "docker: ")
							    : NULL;
		size_t n;

		if (!l && captured && res->stderr_buf)
			l = res->stderr_buf;
		if (l && !strncmp(l, "docker: ", 8))
			l += 8;
		n = l ? strcspn(l, "\n") : 0;
		if (n > 400)
			n = 400;
		return corral_err(err, CORRAL_E_PROVIDER, EIO,
				  "docker provider: the container did not run the command (docker exited %d)%s%.*s", s,
				  n ? ": " : captured ? "" : "; docker's message is above", (int)n, l ? l : "");
	}
	/*
	 * tini exits 128+N when the command died of signal N; docker reports
	 * nothing finer, so a command that itself exits 129..192 reads as a signal.
	 */
	if (s > 128 && s <= 128 + 64) {
		res->exited = false;
		res->exit_status = 0;
		res->signal = s - 128;
	}
	return 0;
}

/* ------------------------------------------------------------ identity */

static int lookup_group(const char *g, gid_t *gid)
{
	char *end;
	struct group *gr;
	unsigned long v;

	errno = 0;
	v = strtoul(g, &end, 10);
	if (*g && !*end && !errno && v < UINT32_MAX) {
		*gid = (gid_t)v;
		return 0;
	}
	gr = getgrnam(g);
	if (!gr)
		return -ENOENT;
	*gid = gr->gr_gid;
	return 0;
}

int corral_identity_preview(const struct corral_policy *p, const char *root_abs, uid_t *uid, gid_t *gid,
			    struct corral_posture *ps, struct corral_error *err)
{
	struct corral_sandbox *sb;
	int r;

	/* corral_identity_decide reads only these fields; the rest stays zero. */
	sb = calloc(1, sizeof(*sb));
	if (!sb)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	sb->policy = (struct corral_policy *)p;
	sb->root = (char *)root_abs;
	sb->root_fd = open(root_abs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (sb->root_fd < 0) {
		r = corral_err(err, errno == ENOENT || errno == ENOTDIR ? CORRAL_E_NOT_FOUND : CORRAL_E_SETUP,
			       errno, "root %s: %s", root_abs, corral_strerror(errno));
	} else {
		r = corral_identity_decide(sb, err);
		if (r == 0) {
			*uid = sb->uid;
			*gid = sb->gid;
			for (size_t i = 0; ps && i < sb->posture.n; i++)
				corral_posture_add(ps, sb->posture.items[i].id, sb->posture.items[i].state,
						   "%s", sb->posture.items[i].why);
		}
	}
	safe_close(sb->root_fd);
	free(sb);
	return r;
}

/*
 * The policy's user when given (USER[:GROUP], names resolved on the host:
 * the container's /etc/passwd is the image's, so numbers are what cross);
 * else the caller; else, when corral runs as root, the owner of the root
 * directory, or nobody when root owns it — as the local provider does, so
 * files written in the root belong to whoever owns it.
 */
int corral_docker_identity(const struct corral_policy *p, const char *root_abs, uid_t *uid, gid_t *gid,
			   struct corral_error *err)
{
	if (p->user && *p->user) {
		_cleanup_free_ char *u = strdup(p->user);
		char *g, *end;
		unsigned long v;
		struct passwd *pw;

		if (!u)
			return -ENOMEM;
		g = strchr(u, ':');
		if (g)
			*g++ = '\0';
		errno = 0;
		v = strtoul(u, &end, 10);
		if (*u && !*end && !errno && v < UINT32_MAX) {
			*uid = (uid_t)v;
			pw = getpwuid(*uid);
			*gid = pw ? pw->pw_gid : (gid_t)v;
		} else {
			pw = getpwnam(u);
			if (!pw)
				return corral_err(err, CORRAL_E_POLICY, ENOENT, "user: no such user '%s'", u);
			*uid = pw->pw_uid;
			*gid = pw->pw_gid;
		}
		if (g && lookup_group(g, gid) < 0)
			return corral_err(err, CORRAL_E_POLICY, ENOENT, "user: no such group '%s'", g);
		/*
		 * As the local provider: a root that identity cannot write is
		 * refused (the container has no capabilities either). Without
		 * this, --user root ran on any root, /proc/sys's bind mount
		 * included, writing there as the host's uid 0.
		 */
		{
			struct stat st;

			if (stat(root_abs, &st) < 0)
				return corral_err(err, CORRAL_E_SETUP, errno, "root %s: %s", root_abs, corral_strerror(errno));
			if (!corral_can_write(&st, *uid, *gid))
				return corral_err(err, CORRAL_E_SETUP, EACCES,
						  "root %s is not writable by %s (uid %u, gid %u)%s; choose who runs the "
						  "command with --user USER[:GROUP] (for example the directory's owner), "
						  "or make the directory writable for that user",
						  root_abs, u, (unsigned)*uid, (unsigned)*gid,
						  *uid == 0 ? " without capabilities" : "");
		}
		return 0;
	}
	/*
	 * By default exactly the local provider's decision, so both providers
	 * write the root's files as the same uid:gid (never gid 0 unasked).
	 */
	return corral_identity_preview(p, root_abs, uid, gid, NULL, err);
}

/* ------------------------------------------------------------ daemon */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * One HTTP/1.0 request to the Engine API on its Unix socket (the server
 * closes after the response). Returns the HTTP status, or a negative errno
 * when the daemon cannot be reached. |body| receives the start of the
 * response body, NUL-terminated.
 */
static int api_request(const char *sock, const char *method, const char *path, char *body, size_t body_len)
{
	_cleanup_close_ int fd = -1;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = API_TIMEOUT_MS / 1000 };
	char req[1024], resp[4096];
	size_t got = 0;
	int n, status;
	char *hdr_end;

	if (strlen(sock) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	n = snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\nHost: docker\r\nContent-Length: 0\r\n\r\n", method, path);
	if (n < 0 || (size_t)n >= sizeof(req))
		return -ENAMETOOLONG;
	for (int off = 0; off < n;) {
		ssize_t w = send(fd, req + off, (size_t)(n - off), MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		off += (int)w;
	}
	while (got < sizeof(resp) - 1) {
		ssize_t rd = read(fd, resp + got, sizeof(resp) - 1 - got);
		if (rd < 0 && errno == EINTR)
			continue;
		if (rd < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (rd == 0)
			break;
		got += (size_t)rd;
	}
	resp[got] = '\0';
	if (sscanf(resp, "HTTP/1.%*d %d", &status) != 1)
		return -EPROTO;
	if (body && body_len) {
		hdr_end = strstr(resp, "\r\n\r\n");
		snprintf(body, body_len, "%s", hdr_end ? hdr_end + 4 : "");
		body[strcspn(body, "\r\n")] = '\0';
	}
	return status;
}

/*
 * Run the docker client with |args| (after argv[0]), stdio on /dev/null
 * except stderr's first bytes into |errbuf|, killed after |timeout_ms|.
 * Returns its exit status, or a negative errno.
 */
static int run_client(const struct corral_docker *d, const char *const *args, int timeout_ms, char *errbuf,
		      size_t errlen)
{
	char *argv[16];
	int pfd[2], nul, st, n = 0;
	size_t got = 0;
	pid_t pid;
	long long end = now_ms() + timeout_ms;

	argv[n++] = d->client;
	for (; *args && n < (int)ARRAY_SIZE(argv) - 1; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul < 0) {
		int e = -errno;
		safe_close(pfd[0]);
		safe_close(pfd[1]);
		return e;
	}
	pid = fork();
	if (pid < 0) {
		int e = -errno;
		safe_close(pfd[0]);
		safe_close(pfd[1]);
		safe_close(nul);
		return e;
	}
	if (pid == 0) {
		/* async-signal-safe only: the caller may be threaded */
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(pfd[1], 2) < 0)
			_exit(127);
		execve(d->client, argv, d->cenv.v);
		_exit(127);
	}
	safe_close(pfd[1]);
	safe_close(nul);
	for (;;) {
		long long left = end - now_ms();
		struct pollfd pf = { .fd = pfd[0], .events = POLLIN };
		char tmp[512];
		ssize_t rd;

		if (left <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		if (poll(&pf, 1, (int)left) <= 0)
			continue;
		rd = read(pfd[0], tmp, sizeof(tmp));
		if (rd < 0 && errno == EINTR)
			continue;
		if (rd <= 0)
			break;
		if (errbuf && got < errlen - 1) {
			size_t c = (size_t)rd < errlen - 1 - got ? (size_t)rd : errlen - 1 - got;
			memcpy(errbuf + got, tmp, c);
			got += c;
			errbuf[got] = '\0';
		}
	}
	safe_close(pfd[0]);
	/* stderr closed: the client is exiting; a grandchild holding it is not waited for */
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -errno;
		if (now_ms() > end) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			return -ETIMEDOUT;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 2 * 1000 * 1000 }, NULL);
	}
	if (errbuf && got)
		errbuf[strcspn(errbuf, "\n")] = '\0';
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int find_client(char *const *environ_, char **out)
{
	const char *path = env_get(environ_, "PATH");
	_cleanup_free_ char *copy = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	char *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char *c;
		if (dir[0] != '/')
			continue;
		if (asprintf(&c, "%s/docker", dir) < 0)
			return -ENOMEM;
		if (access(c, X_OK) == 0) {
			*out = c;
			return 0;
		}
		free(c);
	}
	return -ENOENT;
}

/* The client's current context from its config file (DOCKER_CONFIG, else ~/.docker), or NULL. */
static char *config_context(char *const *environ_)
{
	const char *dir = env_get(environ_, "DOCKER_CONFIG"), *home = env_get(environ_, "HOME");
	_cleanup_free_ char *path = NULL;
	json_t *root, *ctx;
	char *out = NULL;

	if (dir && *dir ? asprintf(&path, "%s/config.json", dir) < 0
	    : !home || !*home || asprintf(&path, "%s/.docker/config.json", home) < 0) {
		path = NULL;
		return NULL;
	}
	root = json_load_file(path, 0, NULL);
	ctx = json_object_get(root, "currentContext");
	if (json_is_string(ctx))
		out = strdup(json_string_value(ctx));
	json_decref(root);
	return out;
}

/*
 * The daemon's Unix socket when corral can talk to it directly: DOCKER_HOST
 * unix://PATH, or the default when no context (DOCKER_CONTEXT, or the
 * config file's currentContext) points elsewhere. NULL: ask through the
 * client.
 */
const char *corral_docker_daemon_socket(char *const *environ_)
{
	const char *h = env_get(environ_, "DOCKER_HOST"), *c = env_get(environ_, "DOCKER_CONTEXT");
	_cleanup_free_ char *cfg = NULL;

	if (h && *h)
		return strncmp(h, "unix://", 7) == 0 && h[7] == '/' ? h + 7 : NULL;
	if (c && *c)
		return strcmp(c, "default") == 0 ? DEFAULT_SOCK : NULL;
	cfg = config_context(environ_);
	if (cfg && *cfg && strcmp(cfg, "default") != 0)
		return NULL;
	return DEFAULT_SOCK;
}

static int image_missing(const char *image, struct corral_error *err)
{
	return corral_err(err, CORRAL_E_NOT_FOUND, ENOENT,
			  "image '%s' is not present locally (corral never pulls unless \"docker\": {\"pull\": true})",
			  image);
}

static int check_daemon(const struct corral_docker *d, const char *image, bool pull, struct corral_error *err)
{
	char body[256], path[640];
	int s;

	if (!d->sock) {
		const char *args[] = { "image", "inspect", "--format", "{{.Id}}", image, NULL };
		s = run_client(d, args, CLIENT_TIMEOUT_MS, body, sizeof(body));
		if (s == 0)
			return 0;
		if (s < 0)
			return corral_err(err, CORRAL_E_PROVIDER, -s, "docker provider: `docker image inspect` failed: %s",
					  corral_strerror(-s));
		if (strstr(body, "No such image"))
			return pull ? 0 : image_missing(image, err);
		return corral_err(err, CORRAL_E_PROVIDER, EIO, "docker provider: daemon not reachable: %s", body);
	}

	s = api_request(d->sock, "GET", "/_ping", body, sizeof(body));
	if (s < 0)
		return corral_err(err, CORRAL_E_PROVIDER, -s,
				  "docker provider: daemon not reachable at unix://%s (%s)%s", d->sock, corral_strerror(-s),
				  s == -ENOENT || s == -ECONNREFUSED ? "; is dockerd running?"
				  : s == -EACCES ? "; the socket's group (usually docker) may use it"
						 : "");
	if (s != 200)
		return corral_err(err, CORRAL_E_PROVIDER, EIO, "docker provider: daemon at unix://%s answered %d: %s",
				  d->sock, s, body);
	snprintf(path, sizeof(path), "/images/%s/json", image);
	s = api_request(d->sock, "GET", path, body, sizeof(body));
	if (s == 200)
		return 0;
	if (s == 404)
		return pull ? 0 : image_missing(image, err);
	if (s < 0)
		return corral_err(err, CORRAL_E_PROVIDER, -s, "docker provider: image lookup failed: %s", corral_strerror(-s));
	return corral_err(err, CORRAL_E_PROVIDER, EIO, "docker provider: image lookup answered %d: %s", s, body);
}

/*
 * Docker discards a limit the kernel cannot enforce with only a warning on
 * the client's stderr ("PIDs limit discarded"). With the daemon on a local
 * socket it shares this kernel, so look for the cgroup controllers first:
 * under compat strict a missing one is a refusal naming the key.
 */
static bool cgroup_has(const char *v1_file, const char *v2_controller)
{
	char buf[512];
	ssize_t n;
	int fd = open("/sys/fs/cgroup/cgroup.controllers", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return access(v1_file, F_OK) == 0;
	n = read(fd, buf, sizeof(buf) - 1);
	safe_close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (char *save = NULL, *w = strtok_r(buf, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
		if (strcmp(w, v2_controller) == 0)
			return true;
	return false;
}

static int check_kernel(const struct corral_policy *p, struct corral_error *err)
{
	static const struct {
		const char *key, *v1, *v2;
	} need[] = {
		{ "docker.memory", "/sys/fs/cgroup/memory/memory.limit_in_bytes", "memory" },
		{ "docker.pids", "/sys/fs/cgroup/pids", "pids" },
		{ "docker.cpus", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "cpu" },
	};

	if (p->compat != CORRAL_COMPAT_STRICT)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(need); i++) {
		bool asked = i == 0   ? p->docker.memory || p->limits.memory
			     : i == 1 ? p->docker.pids || p->limits.processes
				      : p->docker.cpus > 0;
		if (!asked)
			continue;
		if (!cgroup_has(need[i].v1, need[i].v2))
			return corral_err(err, CORRAL_E_UNENFORCEABLE, EOPNOTSUPP,
					  "%s: this kernel has no %s cgroup, docker would discard the limit "
					  "(compat best-effort runs without it)",
					  need[i].key, need[i].v2);
	}
	return 0;
}

/*
 * The exec helper: next to the running program (corral in its build tree
 * or installed beside it), else where `meson install` put it.
 */
char *corral_docker_find_helper(void)
{
	char self[PATH_MAX], *slash, *path = NULL;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash && asprintf(&path, "%.*s/" CORRAL_DOCKER_HELPER_NAME, (int)(slash - self), self) > 0 &&
		    access(path, X_OK) == 0)
			return path;
		free(path);
	}
	if (access(CORRAL_LIBEXECDIR "/" CORRAL_DOCKER_HELPER_NAME, X_OK) == 0)
		return strdup(CORRAL_LIBEXECDIR "/" CORRAL_DOCKER_HELPER_NAME);
	return NULL;
}

int corral_docker_prepare(const struct corral_policy *p, const char *root_abs, struct corral_docker **out,
			  struct corral_error *err)
{
	extern char **environ;
	_cleanup_free_ char *client = NULL, *helper = NULL;
	struct corral_docker_host h = { .environ = environ };
	struct corral_docker *d = NULL;
	int r;

	r = find_client(environ, &client);
	if (r == -ENOMEM)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	if (r < 0)
		return corral_err(err, CORRAL_E_PROVIDER, ENOENT, "docker provider: no docker client on PATH");
	h.client = client;
	h.helper = helper = corral_docker_find_helper();
	h.sock = corral_docker_daemon_socket(environ);
	/* A root holding /etc or /home would be bind-mounted writable: refused as for local. */
	r = corral_policy_check_paths(p, err);
	if (r < 0)
		return r;
	r = corral_docker_identity(p, root_abs, &h.uid, &h.gid, err);
	if (r < 0)
		return r;
	if (h.sock) {
		r = check_kernel(p, err);
		if (r < 0)
			return r;
	}
	r = corral_docker_plan(p, root_abs, &h, &d, err);
	if (r < 0)
		return r;
	r = check_daemon(d, p->docker.image, p->docker.pull, err);
	if (r < 0) {
		corral_docker_free(d);
		return r;
	}
	*out = d;
	return 0;
}

/*
 * Can the docker provider run here, as far as the environment goes: a
 * client on PATH, the exec helper, a daemon that answers, the policy's
 * image present (or pull allowed)? The reason in |err| when not, naming
 * what to change. Policy refusals (paths, limits) are run's to give.
 */
int corral_docker_usable(const struct corral_policy *p, struct corral_error *err)
{
	extern char **environ;
	_cleanup_free_ char *helper = NULL;
	struct corral_docker d = {};
	const char *sock;
	int r;

	r = find_client(environ, &d.client);
	if (r == -ENOMEM)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	if (r < 0)
		return corral_err(err, CORRAL_E_PROVIDER, ENOENT,
				  "docker provider: no docker client on PATH (install it or add its directory to "
				  "PATH; --provider local needs none)");
	helper = corral_docker_find_helper();
	if (!helper)
		r = corral_err(err, CORRAL_E_PROVIDER, ENOENT,
			       "docker provider: its exec helper " CORRAL_DOCKER_HELPER_NAME
			       " was not found next to corral or in " CORRAL_LIBEXECDIR "; install corral completely");
	else if (!valid_image(p->docker.image))
		r = corral_err(err, CORRAL_E_POLICY, EINVAL,
			       p->docker.image && *p->docker.image ? "docker.image: '%s' is not an image reference"
								   : "docker.image: no image given%s (set docker.image or --image)",
			       p->docker.image ? p->docker.image : "");
	else if ((sock = corral_docker_daemon_socket(environ)) && !(d.sock = strdup(sock)))
		r = corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	else if (client_base_env(environ, &d.cenv) < 0)
		r = corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	else
		r = check_daemon(&d, p->docker.image, p->docker.pull, err);
	free(d.client);
	free(d.sock);
	strv_clear(&d.cenv);
	return r;
}

void corral_docker_free(struct corral_docker *d)
{
	if (!d)
		return;
	free(d->client);
	free(d->sock);
	strv_clear(&d->opts);
	strv_clear(&d->cenv);
	free(d);
}

/* ------------------------------------------------------------ exec */

static void docker_on_deadline(void *arg)
{
	struct docker_run *run = arg;
	char path[128];

	run->deadline = true;
	run->maybe_uncreated = false;
	if (run->d->sock) {
		snprintf(path, sizeof(path), "/containers/%s/kill", run->name);
		run->maybe_uncreated = api_request(run->d->sock, "POST", path, NULL, 0) == 404;
	} else {
		const char *args[] = { "kill", run->name, NULL };
		char msg[256];
		int s = run_client(run->d, args, CLIENT_TIMEOUT_MS, msg, sizeof(msg));
		run->maybe_uncreated = s > 0 && strstr(msg, "No such container");
	}
}

/* One removal attempt, as an HTTP status (the client's answer mapped onto one), or -errno. */
static int remove_once(const struct docker_run *run)
{
	char path[128], msg[256];
	int s;

	if (run->d->sock) {
		snprintf(path, sizeof(path), "/containers/%s?force=1&v=1", run->name);
		return api_request(run->d->sock, "DELETE", path, NULL, 0);
	}
	const char *args[] = { "rm", "-f", "-v", run->name, NULL };
	s = run_client(run->d, args, CLIENT_TIMEOUT_MS, msg, sizeof(msg));
	if (s < 0)
		return s;
	if (s == 0)
		return 204;
	if (strstr(msg, "No such container"))
		return 404;
	if (strstr(msg, "in progress"))
		return 409;
	return 500;
}

/*
 * Force-remove the container. When it was never seen, a 404 right after
 * the client was killed may mean its create request is still in the
 * daemon, so look again briefly before believing it; 409 is a removal
 * (--rm) already under way, and the container is listed until it ends:
 * wait for it.
 */
static void remove_container(const struct docker_run *run)
{
	long long start = now_ms();

	for (;;) {
		int s = remove_once(run);
		long long t = now_ms() - start;

		if (s == 204 || s < 0)
			return;
		if (s == 404 && (!run->maybe_uncreated || t >= REMOVE_RETRY_MS))
			return;
		if (t >= REMOVE_WAIT_MS)
			return;
		nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
	}
}

/*
 * The run's status socket (exec-helper.c): a listening Unix socket in a
 * fresh 0700 directory of the host's, only its mount reaching the
 * container. The helper's connection is the first queued one; the
 * command, started after it, can connect too but never write into it.
 */
static int status_open(struct docker_run *run, struct corral_error *err)
{
	const char *base = getenv("XDG_RUNTIME_DIR");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (!base || base[0] != '/' || strlen(base) > 64 || access(base, W_OK | X_OK) < 0)
		base = "/tmp";
	snprintf(run->dir, sizeof(run->dir), "%s/corral-docker.XXXXXX", base);
	if (!mkdtemp(run->dir)) {
		run->dir[0] = '\0';
		return corral_err(err, CORRAL_E_SETUP, errno, "docker provider: status directory in %s: %s", base,
				  corral_strerror(errno));
	}
	snprintf(run->sock, sizeof(run->sock), "%s/status", run->dir);
	memcpy(sa.sun_path, run->sock, strlen(run->sock) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    /* whoever the container runs as connects; the 0700 directory keeps everyone else out */
	    chmod(run->sock, 0777) < 0 || listen(fd, 8) < 0) {
		int e = errno;

		safe_close(fd);
		return corral_err(err, CORRAL_E_SETUP, e, "docker provider: status socket %s: %s", run->sock,
				  corral_strerror(e));
	}
	run->status_fd = fd;
	return 0;
}

/* What the helper reported: its connection is the first queued one, or there is none. */
static void status_read(struct docker_run *run, struct corral_docker_status *st)
{
	_cleanup_close_ int c = -1;
	char buf[512];
	size_t got = 0;
	long long end = now_ms() + 1000;

	memset(st, 0, sizeof(*st));
	if (run->status_fd < 0)
		return;
	c = accept4(run->status_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (c < 0)
		return;
	st->started = true;
	/* The container has exited, so the helper's end is closed: EOF comes at once. */
	while (got < sizeof(buf)) {
		struct pollfd pf = { .fd = c, .events = POLLIN };
		long long left = end - now_ms();
		ssize_t n;

		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			break;
		n = read(c, buf + got, sizeof(buf) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	corral_docker_status_parse(buf, got, st);
}

static void status_close(struct docker_run *run)
{
	run->status_fd = safe_close(run->status_fd);
	if (run->sock[0])
		(void)unlink(run->sock);
	if (run->dir[0])
		(void)rmdir(run->dir);
}

static void docker_on_finish(void *arg)
{
	struct docker_run *run = arg;

	if (run->deadline)
		remove_container(run);
}

/*
 * The guardian: a small child that outlives corral. If corral dies before
 * saying the run is over (SIGKILL, a crash: the client then dies of
 * PDEATHSIG but its container would run on), it force-removes the
 * container. Everything it needs is prepared before fork; after fork it
 * makes only async-signal-safe calls, since the host may be threaded.
 */
struct guardian {
	pid_t pid;
	int fd; /* write end: one byte means "done", EOF means corral died */
};

static void guardian_body(int rfd, const struct docker_run *run, const char *req, size_t req_len,
			  const struct sockaddr_un *sa, char *const *rm_argv)
{
	const struct corral_docker *d = run->d;
	struct sigaction ign = { .sa_handler = SIG_IGN };
	char c;
	ssize_t n;

	/* Survive what kills corral's process group or terminal; never the run's group. */
	(void)setsid();
	(void)sigaction(SIGINT, &ign, NULL);
	(void)sigaction(SIGTERM, &ign, NULL);
	(void)sigaction(SIGHUP, &ign, NULL);
	(void)sigaction(SIGPIPE, &ign, NULL);
	if (dup2(rfd, 3) < 0)
		_exit(1);
	if (syscall(SYS_close_range, 4U, ~0U, 0U) < 0)
		for (int fd = 4; fd < 1024; fd++)
			close(fd);
	rfd = 3;
	for (int fd = 0; fd < 3; fd++)
		close(fd);
	do
		n = read(rfd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		_exit(0);

	(void)unlink(run->sock);
	(void)rmdir(run->dir);
	if (!d->sock) {
		execve(d->client, rm_argv, d->cenv.v);
		_exit(1);
	}
	/* 404 may be a create still in flight in the daemon: retry for a while. */
	for (int i = 0; i < 30; i++) {
		char resp[16];
		size_t got = 0;
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd >= 0 && connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0 &&
		    write(fd, req, req_len) == (ssize_t)req_len) {
			while (got < sizeof(resp)) {
				n = read(fd, resp + got, sizeof(resp) - got);
				if (n <= 0)
					break;
				got += (size_t)n;
			}
		}
		if (fd >= 0)
			close(fd);
		/* "HTTP/1.x 204" removed; 409 a removal already under way (--rm) */
		if (got >= 12 && resp[9] == '2')
			_exit(0);
		struct timespec ts = { .tv_nsec = 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	_exit(1);
}

static void guardian_start(const struct docker_run *run, struct guardian *g)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char req[256], *rm_argv[] = { run->d->client, (char *)"rm", (char *)"-f", (char *)"-v", (char *)run->name, NULL };
	int p[2], n;

	g->pid = -1;
	g->fd = -1;
	/* v=1: an image's VOLUME lines leave anonymous volumes, which --rm would have removed */
	n = snprintf(req, sizeof(req), "DELETE /containers/%s?force=1&v=1 HTTP/1.0\r\nHost: docker\r\n"
		     "Content-Length: 0\r\n\r\n", run->name);
	if (run->d->sock) {
		if (strlen(run->d->sock) >= sizeof(sa.sun_path))
			return;
		memcpy(sa.sun_path, run->d->sock, strlen(run->d->sock) + 1);
	}
	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	g->pid = fork();
	if (g->pid == 0)
		guardian_body(p[0], run, req, (size_t)n, &sa, rm_argv);
	safe_close(p[0]);
	if (g->pid < 0) {
		safe_close(p[1]);
		return;
	}
	g->fd = p[1];
}

static void guardian_stop(struct guardian *g)
{
	if (g->fd >= 0) {
		(void)!write(g->fd, "x", 1);
		g->fd = safe_close(g->fd);
	}
	if (g->pid > 0)
		while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
			;
}

int corral_docker_exec(struct corral_docker *d, const struct corral_exec_opts *opts, struct corral_result *res,
		       struct corral_error *err)
{
	struct docker_run run = { .d = d, .maybe_uncreated = true, .status_fd = -1 };
	struct corral_docker_status st;
	char **argv = NULL;
	uint8_t rnd[8];
	int r;

	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return corral_err(err, CORRAL_E_SETUP, errno, "docker provider: getrandom: %s", corral_strerror(errno));
	snprintf(run.name, sizeof(run.name), "corral-%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2],
		 rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	r = status_open(&run, err);
	if (r == 0)
		r = corral_docker_argv(d, opts, run.name, run.sock, &argv, err);
	if (r < 0) {
		status_close(&run);
		return r;
	}

	struct corral_spawn sp = {
		.argv = argv,
		.envp = d->cenv.v,
		.confine = NULL,
		.cwd = "/",
		.on_deadline = docker_on_deadline,
		.on_finish = docker_on_finish,
		.hook_arg = &run,
		.provider = "docker",
	};
	struct guardian g;

	guardian_start(&run, &g);
	r = corral_engine_run(&sp, opts, res, err);
	corral_docker_strv_free(argv);
	/* The client did not exit by itself (deadline, killed, engine failure): the container may live on. */
	if (!run.deadline && (r < 0 || (!res->exited && !res->exec_errno)))
		remove_container(&run);
	guardian_stop(&g);
	memset(&st, 0, sizeof(st));
	if (r >= 0 && res->exited && !res->timed_out)
		status_read(&run, &st);
	status_close(&run);
	if (r < 0)
		return r;
	if (res->exec_errno) {
		int e = res->exec_errno;
		corral_result_clear(res);
		return corral_err(err, CORRAL_E_PROVIDER, e, "docker provider: cannot execute %s: %s", d->client,
				  corral_strerror(e));
	}
	r = corral_docker_map_result(res, opts->capture, opts->shell ? "/bin/sh" : opts->argv[0], &st, err);
	if (r < 0)
		corral_result_clear(res);
	return r;
}
