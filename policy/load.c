/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Policy JSON → struct corral_policy. Keys not present keep their defaults;
 * every other deviation is an error whose message starts with the key path.
 */
#include <fcntl.h>
#include <jansson.h>

#include "internal/util.h"
#include "policy/policy-private.h"

#define PATH_BUF 256

typedef int (*key_fn)(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err);

struct key_handler {
	const char *key;
	key_fn fn;
};

static void key_path(char *buf, size_t len, const char *prefix, const char *key)
{
	char pr[PATH_BUF];

	int n;

	corral_printable(key, pr, sizeof(pr));
	n = prefix ? snprintf(buf, len, "%s.%s", prefix, pr) : snprintf(buf, len, "%s", pr);
	if (n < 0 || (size_t)n >= len) /* an absurdly long key: the message is cut, never the buffer */
		buf[len - 1] = 0;
}

static int type_error(const char *path, const char *what, struct corral_error *err)
{
	return corral_err(err, CORRAL_E_POLICY, 0, "%s: expected %s", path, what);
}

static int oom(const char *path, struct corral_error *err)
{
	return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "%s: out of memory", path);
}

static int walk_object(struct corral_policy *p, const char *prefix, json_t *obj,
		       const struct key_handler *table, struct corral_error *err)
{
	const char *key;
	json_t *v;

	if (!json_is_object(obj))
		return type_error(prefix ? prefix : "policy", "an object", err);
	json_object_foreach(obj, key, v) {
		char path[PATH_BUF];
		const struct key_handler *h;
		int r;

		key_path(path, sizeof(path), prefix, key);
		for (h = table; h->key; h++)
			if (strcmp(h->key, key) == 0)
				break;
		if (!h->key)
			return corral_err(err, CORRAL_E_POLICY, 0, "%s: unknown key", path);
		r = h->fn(p, path, v, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---------------------------------------------------------------- value kinds */

static int get_enum(const char *path, json_t *v, const struct corral_enum_name *t, int *out,
		    struct corral_error *err)
{
	if (!json_is_string(v))
		return type_error(path, "a string", err);
	return pv_enum(path, t, json_string_value(v), out, err);
}

static int get_path_or_null(const char *path, json_t *v, char **slot, struct corral_error *err)
{
	char *n = NULL;
	int r;

	if (json_is_null(v)) {
		free(*slot);
		*slot = NULL;
		return 0;
	}
	if (!json_is_string(v))
		return type_error(path, "an absolute path or null", err);
	r = pv_path(path, json_string_value(v), &n, err);
	if (r < 0)
		return r;
	free(*slot);
	*slot = n;
	return 0;
}

static int get_seconds(const char *path, json_t *v, double max, double *out, struct corral_error *err)
{
	double d;
	int r;

	if (json_is_string(v))
		return pv_seconds(path, json_string_value(v), max, out, err);
	if (!json_is_number(v))
		return type_error(path, "a number", err);
	d = json_number_value(v);
	r = pv_seconds_range(path, d, max, err);
	if (r < 0)
		return r;
	*out = d;
	return 0;
}

static int get_size(const char *path, json_t *v, uint64_t *out, struct corral_error *err)
{
	if (json_is_string(v))
		return pv_size(path, json_string_value(v), out, err);
	if (!json_is_integer(v))
		return type_error(path, "a size (a string like \"512M\" or an integer of bytes)", err);
	if (json_integer_value(v) <= 0)
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: must be greater than 0", path);
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int get_count(const char *path, json_t *v, uint64_t *out, struct corral_error *err)
{
	if (json_is_string(v))
		return pv_count(path, json_string_value(v), out, err);
	if (!json_is_integer(v))
		return type_error(path, "an integer", err);
	return pv_count_range(path, json_integer_value(v), out, err);
}

static int get_bool(const char *path, json_t *v, bool *out, struct corral_error *err)
{
	if (!json_is_boolean(v))
		return type_error(path, "true or false", err);
	*out = json_is_true(v);
	return 0;
}

/*
 * A list of absolute paths replaces the default list wholesale: a policy
 * that names fs.read_only says exactly what is readable.
 */
static int get_path_list(const char *path, json_t *v, struct corral_strv *l, struct corral_error *err)
{
	struct corral_strv fresh = {};
	size_t i;
	json_t *e;

	if (!json_is_array(v))
		return type_error(path, "an array of absolute paths", err);
	json_array_foreach(v, i, e) {
		char epath[PATH_BUF], *n = NULL;
		int r;

		snprintf(epath, sizeof(epath), "%s[%zu]", path, i);
		if (!json_is_string(e)) {
			r = type_error(epath, "an absolute path", err);
			goto fail;
		}
		r = pv_path(epath, json_string_value(e), &n, err);
		if (r < 0)
			goto fail;
		r = strv_add(&fresh, n);
		free(n);
		if (r < 0) {
			r = oom(path, err);
			goto fail;
		}
		continue;
	fail:
		strv_clear(&fresh);
		return r;
	}
	/* Repeats dropped, the first kept: a path listed twice is harmless. */
	if (strv_uniq(&fresh) < 0) {
		strv_clear(&fresh);
		return oom(path, err);
	}
	strv_clear(l);
	*l = fresh;
	return 0;
}

/* ---------------------------------------------------------------- keys */

static int k_provider(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	return get_enum(path, v, corral_provider_names, &p->provider, err);
}

static int k_root(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	return get_path_or_null(path, v, &p->root, err);
}

static int k_timeout(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	return get_seconds(path, v, CORRAL_TIMEOUT_MAX, &p->timeout, err);
}

static int k_network(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	return get_enum(path, v, corral_network_names, &p->network, err);
}

/* network "allow": the egress list (policy/allow.h), each entry kept in its canonical spelling. */
static int k_allow(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	struct corral_strv fresh = {};
	size_t i;
	json_t *e;

	if (!json_is_array(v))
		return type_error(path, "an array of hosts (\"pypi.org\", \"*.npmjs.org:443\", \"10.0.0.5:8080\")", err);
	json_array_foreach(v, i, e) {
		char epath[PATH_BUF];
		int r;

		snprintf(epath, sizeof(epath), "%s[%zu]", path, i);
		if (!json_is_string(e))
			r = type_error(epath, "a host: NAME, *.SUFFIX or an IP address, optionally :PORT", err);
		else
			r = corral_allow_add(&fresh, epath, json_string_value(e), err);
		if (r < 0) {
			strv_clear(&fresh);
			return r;
		}
	}
	strv_clear(&p->allow);
	p->allow = fresh;
	return 0;
}

static int k_proc(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	int r = get_enum(path, v, corral_proc_names, &p->proc, err);

	if (r == 0)
		p->proc_given = true;
	return r;
}

static int k_compat(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	return get_enum(path, v, corral_compat_names, &p->compat, err);
}

static int k_user(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	char *u;
	int r;

	if (json_is_null(v)) {
		free(p->user);
		p->user = NULL;
		return 0;
	}
	if (!json_is_string(v))
		return type_error(path, "a string or null", err);
	r = pv_user(path, json_string_value(v), err);
	if (r < 0)
		return r;
	u = strdup(json_string_value(v));
	if (!u)
		return oom(path, err);
	free(p->user);
	p->user = u;
	return 0;
}

static int k_shell(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	return get_path_or_null(path, v, &p->shell, err);
}

static int k_audit(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	return get_path_or_null(path, v, &p->audit, err);
}

static int k_approve(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	char *a;
	int r;

	if (json_is_null(v)) {
		free(p->approve);
		p->approve = NULL;
		return 0;
	}
	if (!json_is_string(v))
		return type_error(path, "a string (a shell command) or null", err);
	r = pv_approve(path, json_string_value(v), err);
	if (r < 0)
		return r;
	a = strdup(json_string_value(v));
	if (!a)
		return oom(path, err);
	free(p->approve);
	p->approve = a;
	return 0;
}

static int k_cwd(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	char *s;
	int r;

	if (json_is_null(v)) {
		free(p->cwd);
		p->cwd = NULL;
		return 0;
	}
	if (!json_is_string(v))
		return type_error(path, "a path relative to the root, or null", err);
	r = pv_cwd(path, json_string_value(v), err);
	if (r < 0)
		return r;
	s = strdup(json_string_value(v));
	if (!s)
		return oom(path, err);
	free(p->cwd);
	p->cwd = s;
	return 0;
}

static int k_fs_read_only(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	return get_path_list(path, v, &p->fs.read_only, err);
}

static int k_fs_read_write(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	return get_path_list(path, v, &p->fs.read_write, err);
}

static int k_fs_private_tmp(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	return get_bool(path, v, &p->fs.private_tmp, err);
}

static const struct key_handler fs_keys[] = {
	{ "read_only", k_fs_read_only },
	{ "read_write", k_fs_read_write },
	{ "private_tmp", k_fs_private_tmp },
	{},
};

static int k_fs(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	return walk_object(p, path, v, fs_keys, err);
}

#define SIZE_KEY(fn_, field)                                                                           \
	static int fn_(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err) \
	{                                                                                              \
		return get_size(path, v, &p->field, err);                                              \
	}
#define COUNT_KEY(fn_, field)                                                                          \
	static int fn_(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err) \
	{                                                                                              \
		return get_count(path, v, &p->field, err);                                             \
	}

SIZE_KEY(k_limits_memory, limits.memory)
COUNT_KEY(k_limits_cpu, limits.cpu)

static int k_limits_processes(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	if (json_is_string(v))
		return pv_processes(path, json_string_value(v), &p->limits.processes, err);
	if (!json_is_integer(v))
		return type_error(path, "an integer", err);
	return pv_processes_range(path, json_integer_value(v), &p->limits.processes, err);
}
SIZE_KEY(k_limits_file_size, limits.file_size)
COUNT_KEY(k_limits_open_files, limits.open_files)
SIZE_KEY(k_limits_output, limits.output)
SIZE_KEY(k_docker_memory, docker.memory)
COUNT_KEY(k_docker_pids, docker.pids)

static const struct key_handler limits_keys[] = {
	{ "memory", k_limits_memory },
	{ "cpu", k_limits_cpu },
	{ "processes", k_limits_processes },
	{ "file_size", k_limits_file_size },
	{ "open_files", k_limits_open_files },
	{ "output", k_limits_output },
	{},
};

static int k_limits(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	return walk_object(p, path, v, limits_keys, err);
}

static int k_env_pass(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	struct corral_strv fresh = {};
	size_t i;
	json_t *e;
	int r = 0;

	if (!json_is_array(v))
		return type_error(path, "an array of variable names", err);
	json_array_foreach(v, i, e) {
		char epath[PATH_BUF];

		snprintf(epath, sizeof(epath), "%s[%zu]", path, i);
		if (!json_is_string(e))
			r = type_error(epath, "a variable name", err);
		else if ((r = pv_env_name(epath, json_string_value(e), err)) < 0)
			;
		else if (strv_contains(&fresh, json_string_value(e)))
			r = corral_err(err, CORRAL_E_POLICY, 0, "%s: '%s' is listed twice", epath,
				       json_string_value(e));
		else if (strv_add(&fresh, json_string_value(e)) < 0)
			r = oom(path, err);
		if (r < 0) {
			strv_clear(&fresh);
			return r;
		}
	}
	strv_clear(&p->env.pass);
	p->env.pass = fresh;
	return 0;
}

static int k_env_set(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	const char *key;
	json_t *e;
	int r;

	if (!json_is_object(v))
		return type_error(path, "an object of NAME: value strings", err);
	/* The file's set replaces the defaults (PATH included). */
	while (p->env.n_set)
		env_set_remove(p, p->env.set[0].name);
	json_object_foreach(v, key, e) {
		char epath[PATH_BUF];

		key_path(epath, sizeof(epath), path, key);
		r = pv_env_name(epath, key, err);
		if (r < 0)
			return r;
		if (!json_is_string(e))
			return type_error(epath, "a string", err);
		if (env_set_put(p, key, json_string_value(e)) < 0)
			return oom(epath, err);
	}
	return 0;
}

static const struct key_handler env_keys[] = {
	{ "pass", k_env_pass },
	{ "set", k_env_set },
	{},
};

static int k_env(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	int r = walk_object(p, path, v, env_keys, err);

	if (r < 0)
		return r;
	/* A name both passed from the host and set would make the winner a guess. */
	for (size_t i = 0; i < p->env.pass.n; i++)
		if (env_set_get(p, p->env.pass.v[i]))
			return corral_err(err, CORRAL_E_POLICY, 0, "%s.pass: '%s' is also in %s.set", path,
					  p->env.pass.v[i], path);
	return 0;
}

static int k_docker_image(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	char *s;
	int r;

	if (!json_is_string(v))
		return type_error(path, "a string", err);
	r = pv_image(path, json_string_value(v), err);
	if (r < 0)
		return r;
	s = strdup(json_string_value(v));
	if (!s)
		return oom(path, err);
	free(p->docker.image);
	p->docker.image = s;
	return 0;
}

static int k_docker_cpus(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	return get_seconds(path, v, CORRAL_DOCKER_CPUS_MAX, &p->docker.cpus, err);
}

static int k_docker_pull(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	return get_bool(path, v, &p->docker.pull, err);
}

static const struct key_handler docker_keys[] = {
	{ "image", k_docker_image },
	{ "memory", k_docker_memory },
	{ "cpus", k_docker_cpus },
	{ "pids", k_docker_pids },
	{ "pull", k_docker_pull },
	{},
};

static int k_docker(struct corral_policy *p, const char *path, json_t *v, struct corral_error *err)
{
	return walk_object(p, path, v, docker_keys, err);
}

static const struct key_handler top_keys[] = {
	{ "provider", k_provider },
	{ "root", k_root },
	{ "timeout", k_timeout },
	{ "network", k_network },
	{ "proc", k_proc },
	{ "compat", k_compat },
	{ "user", k_user },
	{ "fs", k_fs },
	{ "limits", k_limits },
	{ "env", k_env },
	{ "docker", k_docker },
	{ "shell", k_shell },
	{ "cwd", k_cwd },
	{ "audit", k_audit },
	{ "allow", k_allow },
	{ "approve", k_approve },
	{},
};

/*
 * jansson refuses a number it cannot hold (an integer past 2^63 - 1, a real past DBL_MAX) while
 * it parses, so its error has a line and column but no key. Everything before the number parsed,
 * so a small scan of that prefix, keeping the stack of keys and indices, names the field the
 * number belongs to. Returns false if the offset is not at the end of a value of an object or
 * array (it then says nothing).
 */
#define LOC_DEPTH 32

static bool locate_value(const char *buf, size_t len, size_t end, char *out, size_t outlen)
{
	struct {
		bool object;
		size_t index;
		const char *key; /* raw bytes between the quotes */
		size_t keylen;
	} st[LOC_DEPTH];
	int depth = -1;
	bool want_key = false, want_value = true; /* what the grammar allows next */
	const char *pending = NULL;
	size_t pending_len = 0;
	size_t i = 0, o = 0;

	if (end > len)
		return false;
	while (i < end) {
		char c = buf[i];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			i++;
		} else if (c == ':') {
			if (depth < 0 || !st[depth].object || !st[depth].key)
				return false;
			want_value = true;
			i++;
		} else if (c == '{' || c == '[') {
			if (!want_value || ++depth >= LOC_DEPTH)
				return false;
			st[depth].object = c == '{';
			st[depth].index = 0;
			st[depth].key = NULL;
			st[depth].keylen = 0;
			want_key = c == '{';
			want_value = c == '[';
			i++;
		} else if (c == '}' || c == ']') {
			if (depth < 0)
				return false;
			depth--;
			want_value = false;
			want_key = false;
			i++;
		} else if (c == ',') {
			if (depth < 0 || want_value || want_key)
				return false;
			st[depth].index++;
			want_key = st[depth].object;
			want_value = !st[depth].object;
			i++;
		} else if (c == '"') {
			size_t start = ++i;

			while (i < end && buf[i] != '"')
				i += buf[i] == '\\' ? 2 : 1;
			if (i >= end)
				return false;
			if (want_key && depth >= 0) {
				pending = buf + start;
				pending_len = i - start;
				st[depth].key = pending;
				st[depth].keylen = pending_len;
				want_key = false;
			} else if (!want_value) {
				return false;
			}
			want_value = false;
			i++;
		} else {
			/* a number or a literal (at least one byte: a NUL is no delimiter): the one if it ends at the offset */
			if (!want_value)
				return false; /* where a key or a comma belongs: no path to name */
			want_value = false;
			do
				i++;
			while (i < end && buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\r' && buf[i] != '\n' &&
			       buf[i] != ',' && buf[i] != ':' && buf[i] != ']' && buf[i] != '}');
			if (i == end)
				break;
		}
	}
	if (i != end || depth < 0 || !st[0].object) /* a top-level array is "expected a JSON object" */
		return false;
	for (int d = 0; d <= depth; d++) {
		char piece[PATH_BUF];
		int n;

		if (st[d].object) {
			char raw[PATH_BUF], pr[PATH_BUF];
			size_t k = st[d].keylen < sizeof(raw) - 1 ? st[d].keylen : sizeof(raw) - 1;

			if (!st[d].key)
				return false;
			memcpy(raw, st[d].key, k);
			raw[k] = 0;
			corral_printable(raw, pr, sizeof(pr));
			n = snprintf(piece, sizeof(piece), "%s%s", d ? "." : "", pr);
		} else {
			n = snprintf(piece, sizeof(piece), "[%zu]", st[d].index);
		}
		if (n < 0 || o + (size_t)n >= outlen)
			return false;
		memcpy(out + o, piece, (size_t)n + 1);
		o += (size_t)n;
	}
	return o > 0;
}

/* ---------------------------------------------------------------- entry points */

int corral_policy_load_buffer(const char *buf, size_t len, const char *source,
			      struct corral_policy **out, struct corral_error *err)
{
	struct corral_policy *p = NULL;
	json_error_t jerr;
	json_t *root;
	int r;

	{
		size_t i = 0;

		while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r'))
			i++;
		if (i == len)
			return corral_err(err, CORRAL_E_POLICY, 0, "%s: empty; expected a JSON object", source);
	}
	/* Any value at the top, so a number or string is "expected a JSON object", not a syntax error. */
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!root) {
		char path[PATH_BUF];

		if ((strstr(jerr.text, "too big") || strstr(jerr.text, "overflow")) && jerr.position > 0 &&
		    locate_value(buf, len, (size_t)jerr.position, path, sizeof(path)))
			return corral_err(err, CORRAL_E_POLICY, 0, "%s: number out of range (%s:%d:%d)", path,
					  source, jerr.line, jerr.column);
		return corral_err(err, CORRAL_E_POLICY, 0, "%s:%d:%d: %s", source, jerr.line, jerr.column,
				  jerr.text);
	}
	if (!json_is_object(root)) {
		json_decref(root);
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: expected a JSON object", source);
	}
	r = corral_policy_new(&p);
	if (r < 0) {
		json_decref(root);
		return corral_err(err, CORRAL_E_INTERNAL, -r, "%s: out of memory", source);
	}
	r = walk_object(p, NULL, root, top_keys, err);
	json_decref(root);
	if (r < 0) {
		corral_policy_free(p);
		return r;
	}
	*out = p;
	return 0;
}

_public_ int corral_policy_load_string(const char *json, struct corral_policy **out,
				       struct corral_error *err)
{
	if (!json || !out)
		return corral_err(err, CORRAL_E_USAGE, EINVAL, "policy: no JSON text");
	return corral_policy_load_buffer(json, strlen(json), "policy", out, err);
}

_public_ int corral_policy_load_file(const char *path, struct corral_policy **out,
				     struct corral_error *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;

	if (!path || !out)
		return corral_err(err, CORRAL_E_USAGE, EINVAL, "policy: no file name");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int e = errno;

		return corral_err(err, e == ENOENT ? CORRAL_E_NOT_FOUND : CORRAL_E_POLICY, e, "%s: %s", path,
				  corral_strerror(e));
	}
	/* Read like a stream: /dev/stdin and pipes have no useful size. */
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *nb;

			if (cap > CORRAL_POLICY_FILE_MAX)
				return corral_err(err, CORRAL_E_POLICY, EFBIG, "%s: larger than %d bytes", path,
						  CORRAL_POLICY_FILE_MAX);
			cap = cap ? cap * 2 : 4096;
			nb = realloc(buf, cap + 1);
			if (!nb)
				return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "%s: out of memory", path);
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			return corral_err(err, CORRAL_E_POLICY, e, "%s: %s", path, corral_strerror(e));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > CORRAL_POLICY_FILE_MAX)
		return corral_err(err, CORRAL_E_POLICY, EFBIG, "%s: larger than %d bytes", path,
				  CORRAL_POLICY_FILE_MAX);
	return corral_policy_load_buffer(buf, len, path, out, err);
}
