/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Built-in defaults that more than one module needs. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal/util.h"

#include "policy/policy-private.h"

/*
 * The system runtime a command needs to run real programs, read-only
 * (read file, read dir, execute). A default path missing on this host is
 * skipped; never the host's home directories.
 */
const char *const corral_default_read_only[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", NULL,
};

/*
 * Named sets of limits (--preset). "standard" is the built-in defaults
 * (corral_policy_new), taken from there so the two never drift apart.
 */
static const struct {
	const char *name;
	double timeout;
	uint64_t memory, cpu, processes, file_size, open_files, output;
} presets[] = {
	{ "minimal", 10, UINT64_C(512) << 20, 10, 64, UINT64_C(64) << 20, 256, UINT64_C(256) << 10 },
	{ "standard", 0, 0, 0, 0, 0, 0, 0 },
};

int corral_preset_apply(struct corral_policy *p, const char *name, const char *value,
			struct corral_error *err)
{
	struct corral_policy *d = NULL;
	char pr[64];

	for (size_t i = 0; i < ARRAY_SIZE(presets); i++) {
		if (strcmp(value, presets[i].name) != 0)
			continue;
		if (presets[i].timeout == 0) {
			if (corral_policy_new(&d) < 0)
				return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "%s: out of memory", name);
			p->timeout = d->timeout;
			p->limits = d->limits;
			corral_policy_free(d);
			return 0;
		}
		p->timeout = presets[i].timeout;
		p->limits.memory = presets[i].memory;
		p->limits.cpu = presets[i].cpu;
		p->limits.processes = presets[i].processes;
		p->limits.file_size = presets[i].file_size;
		p->limits.open_files = presets[i].open_files;
		p->limits.output = presets[i].output;
		return 0;
	}
	return corral_err(err, CORRAL_E_POLICY, 0, "%s: unknown preset '%s' (expected minimal|standard)", name,
			  corral_printable(value, pr, sizeof(pr)));
}

bool corral_is_default_read_only(const char *path)
{
	for (size_t i = 0; corral_default_read_only[i]; i++)
		if (strcmp(path, corral_default_read_only[i]) == 0)
			return true;
	return false;
}

/*
 * Directories a root or read-write path must never contain: the system
 * runtime, the host's homes, the kernel's pseudo-filesystems and the
 * daemons' state. Landlock grants everything beneath a writable path, so a
 * root of "/" (or "/home") would confine nothing. $HOME itself is not
 * checked: harnesses often point it inside the root they use.
 */
static const char *const system_dirs[] = {
	"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot",
	"/home", "/root", "/var", "/proc", "/sys", "/dev", "/run", "/opt", NULL,
};

/* Is |child| |parent| itself or beneath it (separator boundary)? */
static bool path_covers(const char *parent, const char *child)
{
	size_t n = strlen(parent);

	while (n > 0 && parent[n - 1] == '/')
		n--;
	if (n == 0)
		return true; /* "/" covers everything */
	return strncmp(child, parent, n) == 0 && (child[n] == '\0' || child[n] == '/');
}

/*
 * The system directories' canonical paths, resolved once per process: a
 * run checks its root (and every read_write path) against all of them,
 * and the CLI and the Landlock plan both check, so resolving them each
 * time cost some thirty readlink calls per check. They name the host's
 * own layout, which does not move under a running corral.
 */
static char *system_real[ARRAY_SIZE(system_dirs)];
static pthread_once_t system_real_once = PTHREAD_ONCE_INIT;

static void system_real_init(void)
{
	for (size_t i = 0; system_dirs[i]; i++)
		system_real[i] = realpath(system_dirs[i], NULL); /* NULL: absent here */
}

static bool covers_dir(const char *canon, size_t i)
{
	if (path_covers(canon, system_dirs[i]))
		return true;
	/* Merged /usr: "/lib" is "/usr/lib"; a root of "/usr/lib" holds it too. */
	pthread_once(&system_real_once, system_real_init);
	return system_real[i] && path_covers(canon, system_real[i]);
}

int corral_check_not_system(const char *what, const char *path, const char *canon,
			    struct corral_error *err)
{
	char list[256] = "";
	size_t len = 0, shown = 0;
	bool more = false;

	if (!canon || canon[0] != '/')
		return 0;
	for (size_t i = 0; system_dirs[i]; i++) {
		if (!covers_dir(canon, i))
			continue;
		if (shown == 4) {
			more = true;
			break;
		}
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", shown ? ", " : "",
					system_dirs[i]);
		shown++;
	}
	if (!shown)
		return 0;
	return corral_err(err, CORRAL_E_POLICY, EINVAL,
			  "%s %s: refusing a %s that contains system directories (%s%s)", what, path,
			  strcmp(what, "root") == 0 ? "root" : "read-write path", list,
			  more ? ", ..." : "");
}

_public_ int corral_policy_check_paths(const struct corral_policy *p, struct corral_error *err)
{
	_cleanup_free_ char *canon = NULL;
	int r;

	if (!p)
		return corral_err(err, CORRAL_E_USAGE, EINVAL, "no policy");
	canon = p->root ? realpath(p->root, NULL) : getcwd(NULL, 0);
	if (canon) {
		r = corral_check_not_system("root", p->root ? p->root : canon, canon, err);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < p->fs.read_write.n; i++) {
		_cleanup_free_ char *rw = realpath(p->fs.read_write.v[i], NULL);

		r = corral_check_not_system("fs.read_write", p->fs.read_write.v[i], rw, err);
		if (r < 0)
			return r;
	}
	return 0;
}
