/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Built-in defaults that more than one module needs. */
#include <errno.h>
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
const char *const corral_system_dirs[] = {
	"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot",
	"/home", "/root", "/var", "/proc", "/sys", "/dev", "/run", "/opt", NULL,
};

static bool covers_dir(const char *canon, const char *const *system_real, size_t i)
{
	if (corral_path_contains(canon, corral_system_dirs[i]))
		return true;
	/* Merged /usr: "/lib" is "/usr/lib"; a root of "/usr/lib" holds it too. */
	return system_real && system_real[i] && corral_path_contains(canon, system_real[i]);
}

int corral_check_not_system(const char *what, const char *path, const char *canon,
			    const char *const *system_real, struct corral_error *err)
{
	char list[256] = "";
	size_t len = 0, shown = 0;
	bool more = false;

	if (!canon || canon[0] != '/')
		return 0;
	for (size_t i = 0; corral_system_dirs[i]; i++) {
		if (!covers_dir(canon, system_real, i))
			continue;
		if (shown == 4) {
			more = true;
			break;
		}
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", shown ? ", " : "",
					corral_system_dirs[i]);
		shown++;
	}
	if (!shown)
		return 0;
	return corral_err(err, CORRAL_E_POLICY, EINVAL,
			  "%s %s: refusing a %s that contains system directories (%s%s)", what, path,
			  strcmp(what, "root") == 0 ? "root" : "read-write path", list,
			  more ? ", ..." : "");
}
