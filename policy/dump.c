/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The canonical JSON form of a policy. */
#include <jansson.h>

#include "internal/util.h"
#include "policy/policy-private.h"

static json_t *strv_json(const struct corral_strv *l)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < l->n; i++)
		if (json_array_append_new(a, json_string(l->v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *size_json(uint64_t v)
{
	char buf[32];

	corral_format_size(v, buf, sizeof(buf));
	return json_string(buf);
}

static json_t *string_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/*
 * jansson prints reals with "%.17g" (0.1 becomes 0.10000000000000001), so
 * the two non-integral numbers are dumped as a 0 placeholder and spliced in
 * as their shortest round-tripping text afterwards. The anchors are found
 * unambiguously: a raw newline never occurs inside a dumped string, and the
 * key sits at a fixed indentation.
 */
static char *splice_number(char *text, const char *anchor, double v)
{
	char num[64], *at, *rest, *out;
	size_t head, num_len;

	at = strstr(text, anchor);
	if (!at)
		return text; /* cannot happen: the anchors are ours */
	at += strlen(anchor);
	if (*at != '0')
		return text;
	rest = at + 1;
	corral_format_seconds(v, num, sizeof(num));
	head = (size_t)(at - text);
	num_len = strlen(num);
	out = malloc(head + num_len + strlen(rest) + 1);
	if (!out) {
		free(text);
		return NULL;
	}
	memcpy(out, text, head);
	memcpy(out + head, num, num_len);
	strcpy(out + head + num_len, rest);
	free(text);
	return out;
}

const char *corral_network_name(int network)
{
	return corral_enum_to_name(corral_network_names, network);
}

_public_ char *corral_policy_dump(const struct corral_policy *p)
{
	json_t *o = NULL, *env_set = NULL;
	char *text = NULL, *withnl;
	size_t len;

	if (!p)
		return NULL;
	env_set = json_object();
	for (size_t i = 0; env_set && i < p->env.n_set; i++)
		if (json_object_set_new(env_set, p->env.set[i].name, json_string(p->env.set[i].value)) < 0)
			goto out;
	if (!env_set)
		goto out;
	/* Keys in the DESIGN.md order; json_pack's "o" steals each reference, even on failure. */
	o = json_pack("{s:s?, s:o, s:i, s:s?, s:s?, s:s?, s:o,"
		      " s:{s:o, s:o, s:b},"
		      " s:{s:o, s:I, s:I, s:o, s:I, s:o},"
		      " s:{s:o, s:o},"
		      " s:{s:s?, s:o, s:i, s:I, s:b}}",
		      "provider", corral_enum_to_name(corral_provider_names, p->provider),
		      "root", string_or_null(p->root),
		      "timeout", 0,
		      "network", corral_enum_to_name(corral_network_names, p->network),
		      "proc", corral_enum_to_name(corral_proc_names, p->proc),
		      "compat", corral_enum_to_name(corral_compat_names, p->compat),
		      "user", string_or_null(p->user),
		      "fs",
		      "read_only", strv_json(&p->fs.read_only),
		      "read_write", strv_json(&p->fs.read_write),
		      "private_tmp", (int)p->fs.private_tmp,
		      "limits",
		      "memory", size_json(p->limits.memory),
		      "cpu", (json_int_t)p->limits.cpu,
		      "processes", (json_int_t)p->limits.processes,
		      "file_size", size_json(p->limits.file_size),
		      "open_files", (json_int_t)p->limits.open_files,
		      "output", size_json(p->limits.output),
		      "env",
		      "pass", strv_json(&p->env.pass),
		      "set", TAKE_PTR(env_set),
		      "docker",
		      "image", p->docker.image,
		      "memory", size_json(p->docker.memory),
		      "cpus", 0,
		      "pids", (json_int_t)p->docker.pids,
		      "pull", (int)p->docker.pull);
	if (!o)
		goto out;
	/* Keys added after the DESIGN.md block, in this order (JSON_PRESERVE_ORDER). */
	if (json_object_set_new(o, "shell", string_or_null(p->shell)) < 0 ||
	    json_object_set_new(o, "cwd", string_or_null(p->cwd)) < 0 ||
	    json_object_set_new(o, "audit", string_or_null(p->audit)) < 0 ||
	    json_object_set_new(o, "allow", strv_json(&p->allow)) < 0 ||
	    json_object_set_new(o, "approve", string_or_null(p->approve)) < 0)
		goto out;
	text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (text)
		text = splice_number(text, "\n  \"timeout\": ", p->timeout);
	if (text)
		text = splice_number(text, "\n    \"cpus\": ", p->docker.cpus);
	if (!text)
		goto out;
	len = strlen(text);
	withnl = realloc(text, len + 2);
	if (!withnl) {
		free(text);
		text = NULL;
		goto out;
	}
	text = withnl;
	text[len] = '\n';
	text[len + 1] = 0;
out:
	json_decref(env_set);
	json_decref(o);
	return text;
}
