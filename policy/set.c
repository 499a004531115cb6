/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The command-line overlay (DESIGN.md's `run` table): one option at a time,
 * flags win over the file. Pure: relative --root/--ro/--rw values are made
 * absolute against the current directory by the public corral_policy_set
 * (supervisor/local/hostpath.c) before they get here.
 */
#include <jansson.h>

#include "internal/util.h"
#include "policy/policy-private.h"

static int check_utf8(const char *name, const char *s, struct corral_error *err)
{
	/* A policy must be printable as JSON (policy show, probe): UTF-8 only. */
	json_t *t = json_string(s);

	if (!t)
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: not valid UTF-8", name);
	json_decref(t);
	return 0;
}

static int absolute_path(const char *name, const char *value, char **out, struct corral_error *err)
{
	/* The host side (corral_policy_set) made a relative value absolute. */
	if (*value && value[0] != '/')
		return corral_err(err, CORRAL_E_USAGE, EINVAL, "%s: %s: not an absolute path", name, value);
	return pv_path(name, value, out, err);
}

static int set_string(const char *name, const char *value, char **slot,
		      int (*validate)(const char *, const char *, struct corral_error *), struct corral_error *err)
{
	char *s;
	int r = validate(name, value, err);

	if (r < 0)
		return r;
	s = strdup(value);
	if (!s)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "%s: out of memory", name);
	free(*slot);
	*slot = s;
	return 0;
}

static int set_env(struct corral_policy *p, const char *name, const char *value, struct corral_error *err)
{
	_cleanup_free_ char *var = NULL;
	const char *eq = strchr(value, '=');

	var = eq ? strndup(value, (size_t)(eq - value)) : strdup(value);
	if (!var)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "%s: out of memory", name);
	if (pv_env_name(name, var, err) < 0)
		return -EINVAL;
	/* Later wins: a name lives in exactly one of pass and set. */
	if (eq) {
		if (env_set_put(p, var, eq + 1) < 0)
			return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "%s: out of memory", name);
		strv_remove(&p->env.pass, var);
	} else {
		if (!strv_contains(&p->env.pass, var) && strv_add(&p->env.pass, var) < 0)
			return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "%s: out of memory", name);
		env_set_remove(p, var);
	}
	return 0;
}

int corral_policy_overlay(struct corral_policy *p, const char *option, const char *value,
			  struct corral_error *err)
{
	char name[64];
	uint64_t u;
	double d;
	int r;

	if (!p || !option || !value)
		return corral_err(err, CORRAL_E_USAGE, EINVAL, "policy: missing option or value");
	snprintf(name, sizeof(name), "--%s", option);
	r = check_utf8(name, value, err);
	if (r < 0)
		return r;

	if (strcmp(option, "approve") == 0) {
		char *a;

		r = pv_approve(name, value, err);
		if (r < 0)
			return r;
		a = strdup(value);
		if (!a)
			return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "%s: out of memory", name);
		free(p->approve);
		p->approve = a;
		return 0;
	}
	if (strcmp(option, "audit") == 0) {
		_cleanup_free_ char *path = NULL;

		r = absolute_path(name, value, &path, err);
		if (r < 0)
			return r;
		free(p->audit);
		p->audit = TAKE_PTR(path);
		return 0;
	}
	if (strcmp(option, "root") == 0 || strcmp(option, "ro") == 0 || strcmp(option, "rw") == 0) {
		_cleanup_free_ char *path = NULL;
		struct corral_strv *l;

		r = absolute_path(name, value, &path, err);
		if (r < 0)
			return r;
		if (strcmp(option, "root") == 0) {
			free(p->root);
			p->root = TAKE_PTR(path);
			return 0;
		}
		l = strcmp(option, "ro") == 0 ? &p->fs.read_only : &p->fs.read_write;
		if (!strv_contains(l, path) && strv_add(l, path) < 0)
			return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "%s: out of memory", name);
		return 0;
	}
	if (strcmp(option, "allow") == 0)
		return corral_allow_add(&p->allow, name, value, err);
	if (strcmp(option, "net") == 0)
		return pv_enum(name, corral_network_names, value, &p->network, err);
	if (strcmp(option, "proc") == 0) {
		int pr = pv_enum(name, corral_proc_names, value, &p->proc, err);

		if (pr == 0)
			p->proc_given = true;
		return pr;
	}
	if (strcmp(option, "provider") == 0)
		return pv_enum(name, corral_provider_names, value, &p->provider, err);
	if (strcmp(option, "compat") == 0)
		return pv_enum(name, corral_compat_names, value, &p->compat, err);
	if (strcmp(option, "timeout") == 0) {
		r = pv_seconds(name, value, CORRAL_TIMEOUT_MAX, &d, err);
		if (r == 0)
			p->timeout = d;
		return r;
	}
	if (strcmp(option, "user") == 0)
		return set_string(name, value, &p->user, pv_user, err);
	if (strcmp(option, "image") == 0)
		return set_string(name, value, &p->docker.image, pv_image, err);
	if (strcmp(option, "env") == 0)
		return set_env(p, name, value, err);
	if (strcmp(option, "cwd") == 0)
		return set_string(name, value, &p->cwd, pv_cwd, err);
	if (strcmp(option, "preset") == 0)
		return corral_preset_apply(p, name, value, err);

	static const struct {
		const char *option;
		bool size;
		size_t offset;
	} numeric[] = {
		{ "memory", true, offsetof(struct corral_policy, limits.memory) },
		{ "cpu", false, offsetof(struct corral_policy, limits.cpu) },
		{ "procs", false, offsetof(struct corral_policy, limits.processes) },
		{ "file-size", true, offsetof(struct corral_policy, limits.file_size) },
		{ "open-files", false, offsetof(struct corral_policy, limits.open_files) },
		{ "max-output", true, offsetof(struct corral_policy, limits.output) },
	};
	for (size_t i = 0; i < ARRAY_SIZE(numeric); i++) {
		if (strcmp(option, numeric[i].option) != 0)
			continue;
		r = numeric[i].size ? pv_size(name, value, &u, err) :
		    strcmp(option, "procs") == 0 ? pv_processes(name, value, &u, err) : pv_count(name, value, &u, err);
		if (r == 0)
			*(uint64_t *)((char *)p + numeric[i].offset) = u;
		return r;
	}
	return corral_err(err, CORRAL_E_USAGE, EINVAL, "%s: unknown option", name);
}
