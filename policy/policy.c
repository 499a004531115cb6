/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The policy object: defaults, copy, free, accessors and shared validators. */
#include <limits.h>
#include <math.h>

#include "internal/util.h"
#include "policy/policy-private.h"

const struct corral_enum_name corral_provider_names[] = {
	{ "local", CORRAL_PROVIDER_LOCAL },
	{ "docker", CORRAL_PROVIDER_DOCKER },
	{ "auto", CORRAL_PROVIDER_AUTO },
	{},
};
const struct corral_enum_name corral_network_names[] = {
	{ "none", CORRAL_NET_NONE },
	{ "loopback", CORRAL_NET_LOOPBACK },
	{ "host", CORRAL_NET_HOST },
	{ "allow", CORRAL_NET_ALLOW },
	{},
};
const struct corral_enum_name corral_proc_names[] = {
	{ "host", CORRAL_PROC_HOST },
	{ "private", CORRAL_PROC_PRIVATE },
	{},
};
const struct corral_enum_name corral_compat_names[] = {
	{ "strict", CORRAL_COMPAT_STRICT },
	{ "best-effort", CORRAL_COMPAT_BEST_EFFORT },
	{},
};

const char *corral_enum_to_name(const struct corral_enum_name *t, int value)
{
	for (; t->name; t++)
		if (t->value == value)
			return t->name;
	return NULL;
}

const char *corral_printable(const char *s, char *buf, size_t len)
{
	size_t i = 0;

	if (!len)
		return "";
	for (; *s && i + 1 < len; s++, i++)
		buf[i] = ((unsigned char)*s < 0x20 || *s == 0x7f) ? '?' : *s;
	buf[i] = 0;
	return buf;
}


const char *env_set_get(const struct corral_policy *p, const char *name)
{
	for (size_t i = 0; i < p->env.n_set; i++)
		if (strcmp(p->env.set[i].name, name) == 0)
			return p->env.set[i].value;
	return NULL;
}

int env_set_put(struct corral_policy *p, const char *name, const char *value)
{
	struct corral_kv *set;
	char *v = strdup(value), *n;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < p->env.n_set; i++)
		if (strcmp(p->env.set[i].name, name) == 0) {
			free(p->env.set[i].value);
			p->env.set[i].value = v;
			return 0;
		}
	n = strdup(name);
	set = n ? realloc(p->env.set, (p->env.n_set + 1) * sizeof(*set)) : NULL;
	if (!set) {
		free(n);
		free(v);
		return -ENOMEM;
	}
	set[p->env.n_set++] = (struct corral_kv){ .name = n, .value = v };
	p->env.set = set;
	return 0;
}

void env_set_remove(struct corral_policy *p, const char *name)
{
	size_t j = 0;

	for (size_t i = 0; i < p->env.n_set; i++) {
		if (strcmp(p->env.set[i].name, name) == 0) {
			free(p->env.set[i].name);
			free(p->env.set[i].value);
		} else {
			p->env.set[j++] = p->env.set[i];
		}
	}
	p->env.n_set = j;
}

/* ---------------------------------------------------------------- validators */

int pv_enum(const char *name, const struct corral_enum_name *t, const char *s, int *out,
	    struct corral_error *err)
{
	char pr[64], choices[128] = "";
	size_t len = 0;

	for (const struct corral_enum_name *e = t; e->name; e++)
		if (strcmp(e->name, s) == 0) {
			*out = e->value;
			return 0;
		}
	for (const struct corral_enum_name *e = t; e->name && len < sizeof(choices); e++)
		len += snprintf(choices + len, sizeof(choices) - len, "%s%s", e == t ? "" : "|", e->name);
	return corral_err(err, CORRAL_E_POLICY, 0, "%s: unknown value '%s' (expected %s)", name,
			  corral_printable(s, pr, sizeof(pr)), choices);
}

int pv_size(const char *name, const char *s, uint64_t *out, struct corral_error *err)
{
	char pr[64];
	uint64_t v;
	int r = corral_parse_size(s, &v);

	if (r == -ERANGE)
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: size '%s' is too large", name,
				  corral_printable(s, pr, sizeof(pr)));
	if (r < 0)
		return corral_err(err, CORRAL_E_POLICY, 0,
				  "%s: bad size '%s' (expected an integer with an optional K/M/G/T suffix, e.g. 512M)",
				  name, corral_printable(s, pr, sizeof(pr)));
	if (v == 0)
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: must be greater than 0", name);
	*out = v;
	return 0;
}

int pv_count_range(const char *name, long long v, uint64_t *out, struct corral_error *err)
{
	if (v < 1)
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: must be at least 1", name);
	if ((unsigned long long)v > CORRAL_COUNT_MAX)
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: must be at most %llu", name,
				  (unsigned long long)CORRAL_COUNT_MAX);
	*out = (uint64_t)v;
	return 0;
}

int pv_count(const char *name, const char *s, uint64_t *out, struct corral_error *err)
{
	char pr[64];
	unsigned long long v = 0;
	const char *c = s;

	if (!*c)
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: expected an integer, got an empty string", name);
	for (; *c >= '0' && *c <= '9'; c++)
		if (v <= CORRAL_COUNT_MAX)
			v = v * 10 + (unsigned)(*c - '0');
	if (*c)
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: bad integer '%s'", name,
				  corral_printable(s, pr, sizeof(pr)));
	return pv_count_range(name, v > CORRAL_COUNT_MAX ? (long long)CORRAL_COUNT_MAX + 1 : (long long)v,
			      out, err);
}

int pv_processes_range(const char *name, long long v, uint64_t *out, struct corral_error *err)
{
	if (v == 0) {
		*out = 0;
		return 0;
	}
	if (v < 0)
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: must be 0 (no limit of corral's own) or more", name);
	return pv_count_range(name, v, out, err);
}

int pv_processes(const char *name, const char *s, uint64_t *out, struct corral_error *err)
{
	if (strcmp(s, "0") == 0) {
		*out = 0;
		return 0;
	}
	return pv_count(name, s, out, err);
}

int pv_seconds_range(const char *name, double v, double max, struct corral_error *err)
{
	if (isnan(v))
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: must be a finite number", name);
	if (v <= 0)
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: must be greater than 0", name);
	if (v > max) /* also +inf */
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: must be at most %g", name, max);
	return 0;
}

int pv_seconds(const char *name, const char *s, double max, double *out, struct corral_error *err)
{
	char pr[64];
	double v;
	int r = corral_parse_duration(s, &v);

	if (r == -EINVAL)
		return corral_err(err, CORRAL_E_POLICY, 0,
				  "%s: bad number '%s' (expected digits with an optional decimal point, e.g. 0.5)",
				  name, corral_printable(s, pr, sizeof(pr)));
	if (r < 0) {
		/* Out of the duration range: say which bound, from the value itself. */
		v = corral_strtod(s, NULL);
		r = pv_seconds_range(name, v, max, err);
		return r < 0 ? r : corral_err(err, CORRAL_E_POLICY, 0, "%s: out of range", name);
	}
	r = pv_seconds_range(name, v, max, err);
	if (r < 0)
		return r;
	*out = v;
	return 0;
}

int pv_path(const char *name, const char *s, char **out, struct corral_error *err)
{
	char pr[64];
	char *n;

	if (!*s)
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: empty path", name);
	if (s[0] != '/')
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: '%s' is not an absolute path", name,
				  corral_printable(s, pr, sizeof(pr)));
	if (strlen(s) >= PATH_MAX)
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: path too long", name);
	n = corral_path_normalised(s, 0);
	if (!n)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "%s: out of memory", name);
	*out = n;
	return 0;
}

int pv_cwd(const char *name, const char *s, struct corral_error *err)
{
	if (!*s)
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: empty path (use \".\" for the root)", name);
	if (strlen(s) >= PATH_MAX)
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: path too long", name);
	return 0;
}

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '-' || c == '.' || c == '$' || c == '@';
}

int pv_user(const char *name, const char *s, struct corral_error *err)
{
	char pr[64];
	const char *colon = strchr(s, ':');

	if (!*s)
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: empty user", name);
	for (const char *c = s; *c; c++)
		if (!is_name_char(*c) && c != colon)
			goto bad;
	if (colon == s || (colon && (!colon[1] || strchr(colon + 1, ':'))) || s[0] == '-' ||
	    (colon && colon[1] == '-'))
		goto bad;
	return 0;
bad:
	return corral_err(err, CORRAL_E_POLICY, 0, "%s: bad user '%s' (expected USER or USER:GROUP, names or numeric ids)",
			  name, corral_printable(s, pr, sizeof(pr)));
}

#define APPROVE_MAX 4096

int pv_approve(const char *name, const char *s, struct corral_error *err)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n && (s[i] == ' ' || s[i] == '\t'); i++)
		if (i + 1 == n)
			n = 0;
	if (!n)
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: empty command (a shell command run before each session "
				  "call, exit 0 approves; null for none)", name);
	if (n > APPROVE_MAX)
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: command of %zu bytes, at most %u (put it in a script "
				  "and name the script)", name, n, APPROVE_MAX);
	return 0;
}

int pv_image(const char *name, const char *s, struct corral_error *err)
{
	char pr[64];

	if (!*s)
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: empty image name", name);
	/* The image reaches docker's argv: a leading '-' would be read as an option. */
	if (s[0] == '-')
		goto bad;
	/* Image references are ASCII: no whitespace or control character, Unicode's included. */
	for (const char *c = s; *c; c++)
		if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 0x7f)
			goto bad;
	return 0;
bad:
	return corral_err(err, CORRAL_E_POLICY, 0, "%s: bad image name '%s'", name,
			  corral_printable(s, pr, sizeof(pr)));
}

int pv_env_name(const char *name, const char *s, struct corral_error *err)
{
	char pr[64];
	const char *c = s;

	if (!*c || (*c >= '0' && *c <= '9'))
		goto bad;
	for (; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
			goto bad;
	return 0;
bad:
	return corral_err(err, CORRAL_E_POLICY, 0,
			  "%s: bad variable name '%s' (letters, digits and '_', not starting with a digit)", name,
			  corral_printable(s, pr, sizeof(pr)));
}

/* ---------------------------------------------------------------- object */

_public_ int corral_policy_new(struct corral_policy **out)
{
	struct corral_policy *p = calloc(1, sizeof(*p));
	int r = 0;

	if (!p)
		return -ENOMEM;
	p->provider = CORRAL_PROVIDER_LOCAL;
	p->root = NULL;
	p->timeout = 30;
	p->network = CORRAL_NET_NONE;
	p->proc = CORRAL_PROC_HOST; /* docs/policy.md: what a private one costs a run */
	p->compat = CORRAL_COMPAT_STRICT;
	p->user = NULL;
	for (size_t i = 0; r == 0 && corral_default_read_only[i]; i++)
		r = strv_add(&p->fs.read_only, corral_default_read_only[i]);
	p->fs.private_tmp = true;
	p->limits.memory = UINT64_C(1) << 30;
	p->limits.cpu = 60;
	p->limits.processes = 256;
	p->limits.file_size = UINT64_C(1) << 30;
	p->limits.open_files = 1024;
	p->limits.output = UINT64_C(1) << 20;
	if (r == 0)
		r = strv_add(&p->env.pass, "LANG");
	if (r == 0)
		r = strv_add(&p->env.pass, "TERM");
	if (r == 0)
		r = env_set_put(p, "PATH", "/usr/local/bin:/usr/bin:/bin");
	p->docker.image = strdup("debian:bookworm-slim");
	if (!p->docker.image)
		r = -ENOMEM;
	p->docker.memory = UINT64_C(512) << 20;
	p->docker.cpus = 1.0;
	p->docker.pids = 256;
	p->docker.pull = false;
	if (r < 0) {
		corral_policy_free(p);
		return r;
	}
	*out = p;
	return 0;
}

static int strv_copy(struct corral_strv *dst, const struct corral_strv *src)
{
	for (size_t i = 0; i < src->n; i++)
		if (strv_add(dst, src->v[i]) < 0)
			return -ENOMEM;
	return 0;
}

static int strdup_or_null(char **dst, const char *src)
{
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -ENOMEM;
}

_public_ struct corral_policy *corral_policy_dup(const struct corral_policy *p)
{
	struct corral_policy *d;

	if (!p)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	/* Scalars first; every owned pointer is then replaced by a fresh copy. */
	*d = *p;
	d->root = d->user = d->shell = d->cwd = d->audit = d->approve = d->docker.image = NULL;
	d->fs.read_only = d->fs.read_write = d->env.pass = d->allow = (struct corral_strv){};
	d->env.set = NULL;
	d->env.n_set = 0;
	if (strdup_or_null(&d->root, p->root) < 0 || strdup_or_null(&d->user, p->user) < 0 ||
	    strdup_or_null(&d->shell, p->shell) < 0 || strdup_or_null(&d->cwd, p->cwd) < 0 ||
	    strdup_or_null(&d->audit, p->audit) < 0 || strdup_or_null(&d->approve, p->approve) < 0 ||
	    strdup_or_null(&d->docker.image, p->docker.image) < 0 ||
	    strv_copy(&d->fs.read_only, &p->fs.read_only) < 0 ||
	    strv_copy(&d->fs.read_write, &p->fs.read_write) < 0 ||
	    strv_copy(&d->env.pass, &p->env.pass) < 0 || strv_copy(&d->allow, &p->allow) < 0)
		goto fail;
	for (size_t i = 0; i < p->env.n_set; i++)
		if (env_set_put(d, p->env.set[i].name, p->env.set[i].value) < 0)
			goto fail;
	return d;
fail:
	corral_policy_free(d);
	return NULL;
}

_public_ void corral_policy_free(struct corral_policy *p)
{
	if (!p)
		return;
	free(p->root);
	free(p->user);
	free(p->shell);
	free(p->cwd);
	free(p->audit);
	free(p->approve);
	strv_clear(&p->fs.read_only);
	strv_clear(&p->fs.read_write);
	strv_clear(&p->env.pass);
	strv_clear(&p->allow);
	for (size_t i = 0; p->env.set && i < p->env.n_set; i++) {
		free(p->env.set[i].name);
		free(p->env.set[i].value);
	}
	free(p->env.set);
	free(p->docker.image);
	free(p);
}

_public_ int corral_policy_provider(const struct corral_policy *p)
{
	return p->provider;
}

_public_ int corral_policy_network(const struct corral_policy *p)
{
	return p->network;
}

_public_ const char *corral_policy_root(const struct corral_policy *p)
{
	return p->root;
}
