/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The docker provider's plan: the policy turned into `docker run` options
 * and the client's environment (once per sandbox), and one run's argv.
 * Pure but for the checks of the paths to mount (stat, realpath, statfs).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "internal/fileio.h"

#include "policy/path.h"
#include "policy/policy.h"
#include "supervisor/docker/docker-private.h"
#include "supervisor/exec/sandbox.h"

void corral_docker_strv_free(char **v)
{
	if (!v)
		return;
	for (char **i = v; *i; i++)
		free(*i);
	free(v);
}

const char *dk_env_get(char *const *environ_, const char *name)
{
	size_t l = strlen(name);

	for (char *const *e = environ_; e && *e; e++)
		if (strncmp(*e, name, l) == 0 && (*e)[l] == '=')
			return *e + l + 1;
	return NULL;
}

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

int dk_add_mount(struct corral_strv *s, const char *src, const char *dst, bool ro)
{
	_cleanup_free_ char *fs = NULL, *fd = NULL;

	if (csv_field("src", src, &fs) < 0 || csv_field("dst", dst, &fd) < 0)
		return -ENOMEM;
	if (strv_add(s, "--mount") < 0)
		return -ENOMEM;
	return strv_addf(s, "type=bind,%s,%s%s", fs, fd, ro ? ",readonly" : "");
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
		bool hit = corral_path_contains(path, socks[i]) || (have_rp && corral_path_contains(rp, socks[i]));
		if (!hit && realpath(socks[i], rs))
			hit = corral_path_contains(path, rs) || (have_rp && corral_path_contains(rp, rs));
		if (hit)
			return corral_err(err, CORRAL_E_POLICY, EPERM,
					  "%s: %s is or contains the container daemon socket %s; corral never "
					  "mounts it into a container", key, path, socks[i]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		bool hit;

		if (!dirs[i])
			continue;
		hit = corral_path_contains(path, dirs[i]) || corral_path_contains(dirs[i], path) ||
		      (have_rp && (corral_path_contains(rp, dirs[i]) || corral_path_contains(dirs[i], rp)));
		if (!hit && realpath(dirs[i], rs))
			hit = corral_path_contains(path, rs) || corral_path_contains(rs, path) ||
			      (have_rp && (corral_path_contains(rp, rs) || corral_path_contains(rs, rp)));
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
bool dk_valid_image(const char *s)
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
int dk_client_base_env(char *const *environ_, struct corral_strv *cenv)
{
	static const char *const client_keep[] = {
		"PATH", "HOME", "DOCKER_HOST", "DOCKER_CONFIG", "DOCKER_CONTEXT", "DOCKER_CERT_PATH",
		"DOCKER_TLS_VERIFY", "DOCKER_API_VERSION", "XDG_RUNTIME_DIR",
	};

	for (size_t i = 0; i < ARRAY_SIZE(client_keep); i++) {
		const char *v = dk_env_get(environ_, client_keep[i]);
		if (!v && strcmp(client_keep[i], "PATH") == 0)
			v = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
		if (v && strv_addf(cenv, "%s=%s", client_keep[i], v) < 0)
			return -ENOMEM;
	}
	/* The client's "What's next" hints would otherwise land in the command's stdout. */
	return strv_add(cenv, "DOCKER_CLI_HINTS=false");
}

static int build_env(const struct corral_policy *p, const struct corral_docker_host *h, struct corral_strv *opts,
		     struct corral_strv *cenv, struct corral_error *err)
{
	size_t cap = 2 + p->env.pass.n + p->env.n_set, n = 0;
	_cleanup_free_ struct kv *vars = calloc(cap ? cap : 1, sizeof(*vars));

	if (!vars)
		return -ENOMEM;
	/* Later entries win: the fixed ones, then env.pass, then env.set. */
	/* HOME: the container's own tmpfs, never the bind-mounted root (npm's .npm, pip's .cache). */
	vars[n++] = (struct kv){ "HOME", "/tmp" };
	vars[n++] = (struct kv){ "TMPDIR", "/tmp" };
	for (size_t i = 0; i < p->env.pass.n; i++) {
		const char *v = dk_env_get(h->environ, p->env.pass.v[i]);
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

	if (dk_client_base_env(h->environ, cenv) < 0)
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

	if (corral_read_file_at(AT_FDCWD, "/sys/devices/system/cpu/online", 0, buf, sizeof(buf)) <= 0)
		return sysconf(_SC_NPROCESSORS_ONLN);
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


/*
 * Refuse what docker cannot honour, naming the key; the memory and pids
 * limits the container gets (the tighter of the docker.* and limits.* keys).
 */
static int plan_values(const struct corral_policy *p, const char *root_abs, const struct corral_docker_host *h,
		       uint64_t *mem_out, uint64_t *pids_out, struct corral_error *err)
{
	uint64_t mem, pids;

	if (!dk_valid_image(p->docker.image))
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

	*mem_out = mem;
	*pids_out = pids;
	return 0;
}

/* The root and the extra paths: each there, never a symlink planted in the root, never a daemon's socket. */
static int plan_paths(const struct corral_policy *p, const char *root_abs, const struct corral_docker_host *h,
		      struct corral_error *err)
{
	int r;

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
	return 0;
}

/* The `docker run` options from --pull to the limits and labels (the environment and image follow). */
static int plan_options(struct corral_strv *o, const struct corral_policy *p, const char *root_abs,
			const struct corral_docker_host *h, uint64_t mem, uint64_t pids)
{
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
		return -ENOMEM;
	if (dk_add_mount(o, root_abs, CORRAL_DOCKER_WORKDIR, false) < 0 ||
	    dk_add_mount(o, h->helper, CORRAL_DOCKER_HELPER, true) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < p->fs.read_write.n; i++)
		if (dk_add_mount(o, p->fs.read_write.v[i], p->fs.read_write.v[i], false) < 0)
			return -ENOMEM;
	for (size_t i = 0; i < p->fs.read_only.n; i++)
		if (!corral_is_default_read_only(p->fs.read_only.v[i]) &&
		    dk_add_mount(o, p->fs.read_only.v[i], p->fs.read_only.v[i], true) < 0)
			return -ENOMEM;
	if (mem && (strv_add(o, "--memory") < 0 || strv_addf(o, "%llu", (unsigned long long)mem) < 0 ||
		    strv_add(o, "--memory-swap") < 0 || strv_addf(o, "%llu", (unsigned long long)mem) < 0))
		return -ENOMEM;
	if (p->docker.cpus > 0 && (strv_add(o, "--cpus") < 0 || strv_addf(o, "%g", p->docker.cpus) < 0))
		return -ENOMEM;
	if (pids && (strv_add(o, "--pids-limit") < 0 || strv_addf(o, "%llu", (unsigned long long)pids) < 0))
		return -ENOMEM;
	/* CPU: the soft limit sends SIGXCPU, the hard one a second later SIGKILL. */
	if (p->limits.cpu && (strv_add(o, "--ulimit") < 0 ||
			      strv_addf(o, "cpu=%llu:%llu", (unsigned long long)p->limits.cpu,
					(unsigned long long)p->limits.cpu + 1) < 0))
		return -ENOMEM;
	/* At most 2^63-1, as the local provider (sandbox.c set_rl): docker's values are int64. */
	if (p->limits.file_size) {
		unsigned long long fsize = p->limits.file_size > (uint64_t)INT64_MAX ? (unsigned long long)INT64_MAX :
						       (unsigned long long)p->limits.file_size;

		if (strv_add(o, "--ulimit") < 0 || strv_addf(o, "fsize=%llu:%llu", fsize, fsize) < 0)
			return -ENOMEM;
	}
	if (p->limits.open_files && (strv_add(o, "--ulimit") < 0 ||
				     strv_addf(o, "nofile=%llu:%llu", (unsigned long long)p->limits.open_files,
					       (unsigned long long)p->limits.open_files) < 0))
		return -ENOMEM;
	/* Labels let an operator (and the tests) find a run's containers: by corral, by root. */
	if (strv_add(o, "--label") < 0 || strv_add(o, "io.corral.run=1") < 0 || strv_add(o, "--label") < 0 ||
	    strv_addf(o, "io.corral.root=%s", root_abs) < 0)
		return -ENOMEM;
	return 0;
}

int corral_docker_kernel_gaps(const struct corral_policy *p, const bool have[3], struct corral_strv *warnings,
			      struct corral_error *err)
{
	static const char *const key[] = { "docker.memory", "docker.pids", "docker.cpus" };
	static const char *const ctl[] = { "memory", "pids", "cpu" };
	const bool asked[3] = {
		p->docker.memory || p->limits.memory,
		p->docker.pids || p->limits.processes,
		p->docker.cpus > 0,
	};

	for (size_t i = 0; i < 3; i++) {
		if (!asked[i] || have[i])
			continue;
		if (p->compat == CORRAL_COMPAT_STRICT)
			return corral_err(err, CORRAL_E_UNENFORCEABLE, EOPNOTSUPP,
					  "%s: this kernel has no %s cgroup, docker would discard the limit "
					  "(compat best-effort runs without it)",
					  key[i], ctl[i]);
		if (strv_addf(warnings,
				 "%s: this kernel has no %s cgroup, so docker ran the container without that limit "
				 "(compat best-effort; strict refuses)",
				 key[i], ctl[i]) < 0)
			return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	}
	return 0;
}

int corral_docker_plan(const struct corral_policy *p, const char *root_abs, const struct corral_docker_host *h,
		       struct corral_docker **out, struct corral_error *err)
{
	struct corral_docker *d;
	uint64_t mem = 0, pids = 0;
	int r;

	r = plan_values(p, root_abs, h, &mem, &pids, err);
	if (r < 0)
		return r;
	r = plan_paths(p, root_abs, h, err);
	if (r < 0)
		return r;
	d = calloc(1, sizeof(*d));
	if (!d)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	d->client = strdup(h->client ? h->client : "docker");
	d->sock = h->sock ? strdup(h->sock) : NULL;
	d->helper = strdup(h->helper);
	if (!d->client || (h->sock && !d->sock) || !d->helper || plan_options(&d->opts, p, root_abs, h, mem, pids) < 0)
		goto oom;
	r = build_env(p, h, &d->opts, &d->cenv, err);
	if (r < 0) {
		corral_docker_free(d);
		return r == -ENOMEM ? corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory") : r;
	}
	if (strv_add(&d->opts, p->docker.image) < 0)
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
	struct corral_strv a = {};
	/* As the engine: stdin bytes, else the caller's stdin when passed through (with --json too). */
	bool in = opts->stdin_data != NULL || opts->stdin_passthrough;

	if (!opts->shell && (!opts->argv || !opts->argv[0]))
		return corral_err(err, CORRAL_E_USAGE, EINVAL, "run: missing command");
	if (strv_add(&a, d->client) < 0 || strv_add(&a, "run") < 0 || strv_add(&a, "--rm") < 0 ||
	    strv_add(&a, "--name") < 0 || strv_add(&a, name) < 0 || (in && strv_add(&a, "-i") < 0) ||
	    strv_add(&a, "--label") < 0 || strv_addf(&a, "io.corral.pid=%d", (int)getpid()) < 0)
		goto oom;
	if (status_sock && dk_add_mount(&a, status_sock, CORRAL_DOCKER_STATUS, false) < 0)
		goto oom;
	/* The workdir, or opts->cwd beneath it (sandbox.c proved it on the host and normalised it). */
	if (strv_add(&a, "-w") < 0 ||
	    (opts->cwd && *opts->cwd ? strv_addf(&a, "%s/%s", CORRAL_DOCKER_WORKDIR, opts->cwd) :
				       strv_add(&a, CORRAL_DOCKER_WORKDIR)) < 0)
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

void corral_docker_free(struct corral_docker *d)
{
	if (!d)
		return;
	free(d->client);
	free(d->sock);
	free(d->helper);
	strv_clear(&d->opts);
	strv_clear(&d->cenv);
	strv_clear(&d->warnings);
	free(d);
}
