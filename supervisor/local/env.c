/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The command's environment, built from an allow-list: HOME and TMPDIR =
 * the run's private tmp (so npm's .npm or pip's .cache never land in the
 * root), then env.pass (host values; by default
 * LANG and TERM) and env.set (by default a minimal PATH), which win. Nothing else from
 * corral's environment gets in (tokens, SSH_AUTH_SOCK, LD_PRELOAD, BASH_ENV).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/exec/sandbox.h"

static bool valid_name(const char *n)
{
	if (!*n)
		return false;
	for (const char *p = n; *p; p++)
		if (*p == '=')
			return false;
	return true;
}

/* Add or replace NAME=VALUE. */
static int env_put(struct corral_sandbox *sb, size_t *alloc, const char *name, const char *value)
{
	size_t nl = strlen(name);
	char *s;

	if (!valid_name(name))
		return 0;
	if (asprintf(&s, "%s=%s", name, value) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < sb->n_envp; i++)
		if (strncmp(sb->envp[i], name, nl) == 0 && sb->envp[i][nl] == '=') {
			free(sb->envp[i]);
			sb->envp[i] = s;
			return 0;
		}
	if (sb->n_envp + 2 > *alloc) {
		size_t na = *alloc ? *alloc * 2 : 16;
		char **v = realloc(sb->envp, na * sizeof(*v));
		if (!v) {
			free(s);
			return -ENOMEM;
		}
		sb->envp = v;
		*alloc = na;
	}
	sb->envp[sb->n_envp++] = s;
	sb->envp[sb->n_envp] = NULL;
	return 0;
}

int corral_env_build(struct corral_sandbox *sb, struct corral_error *err)
{
	const struct corral_policy *p = sb->policy;
	size_t alloc = 0;
	int r = 0;

	/*
	 * PATH, LANG and TERM come from the policy, whose defaults hold them
	 * (env.set PATH, env.pass LANG and TERM): a policy that leaves them
	 * out gets none, as `policy show` says. HOME and TMPDIR are the run's
	 * (corral_env_for_run) unless the policy names them.
	 */
	sb->private_home = true;
	for (size_t i = 0; i < p->env.pass.n; i++)
		if (p->env.pass.v[i] && strcmp(p->env.pass.v[i], "HOME") == 0)
			sb->private_home = false;
	for (size_t i = 0; i < p->env.n_set; i++)
		if (p->env.set[i].name && strcmp(p->env.set[i].name, "HOME") == 0)
			sb->private_home = false;
	for (size_t i = 0; !r && i < p->env.pass.n; i++) {
		const char *v = p->env.pass.v[i] ? getenv(p->env.pass.v[i]) : NULL;
		if (v)
			r = env_put(sb, &alloc, p->env.pass.v[i], v);
	}
	for (size_t i = 0; !r && i < p->env.n_set; i++)
		if (p->env.set[i].name && p->env.set[i].value)
			r = env_put(sb, &alloc, p->env.set[i].name, p->env.set[i].value);
	/*
	 * Network "allow": the egress proxy, for every client that reads the
	 * usual variables (curl, pip, npm, git, Python, Go, ...). NO_PROXY
	 * empty: no destination goes around it (none could: only the proxy is
	 * reachable).
	 */
	if (sb->egress) {
		static const char *const vars[] = { "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy",
						    "https_proxy", "all_proxy" };

		for (size_t i = 0; !r && i < ARRAY_SIZE(vars); i++)
			r = env_put(sb, &alloc, vars[i], corral_egress_url(sb->egress));
		if (!r)
			r = env_put(sb, &alloc, "NO_PROXY", "");
		if (!r)
			r = env_put(sb, &alloc, "no_proxy", "");
	}
	if (r < 0)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	sb->path = NULL;
	for (size_t i = 0; i < sb->n_envp; i++)
		if (strncmp(sb->envp[i], "PATH=", 5) == 0)
			sb->path = sb->envp[i] + 5;
	return 0;
}

char **corral_env_for_run(const struct corral_sandbox *sb, const char *tmp, const char *home, char *bufs[2])
{
	char **v = calloc(sb->n_envp + 3, sizeof(*v));
	size_t n = 0;

	bufs[0] = bufs[1] = NULL;
	if (!v)
		return NULL;
	for (size_t i = 0; i < sb->n_envp; i++) {
		/* An explicit TMPDIR (env.set, env.pass) wins, as any of theirs; the private tmp stays writable. */
		if (tmp && strncmp(sb->envp[i], "TMPDIR=", 7) == 0)
			tmp = NULL;
		if (home && strncmp(sb->envp[i], "HOME=", 5) == 0)
			home = NULL;
		v[n++] = sb->envp[i];
	}
	if ((tmp && asprintf(&bufs[0], "TMPDIR=%s", tmp) < 0) || (home && asprintf(&bufs[1], "HOME=%s", home) < 0)) {
		free(bufs[0]);
		bufs[0] = bufs[1] = NULL;
		free(v);
		return NULL;
	}
	if (bufs[0])
		v[n++] = bufs[0];
	if (bufs[1])
		v[n++] = bufs[1];
	v[n] = NULL;
	return v;
}
