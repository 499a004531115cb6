/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The policy model: defaults, load/validate, canonical dump, overlay, sizes. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/policy.h"

static const char default_dump[] =
	"{\n"
	"  \"provider\": \"local\",\n"
	"  \"root\": null,\n"
	"  \"timeout\": 30,\n"
	"  \"network\": \"none\",\n"
	"  \"proc\": \"host\",\n"
	"  \"compat\": \"strict\",\n"
	"  \"user\": null,\n"
	"  \"fs\": {\n"
	"    \"read_only\": [\n"
	"      \"/usr\",\n"
	"      \"/bin\",\n"
	"      \"/sbin\",\n"
	"      \"/lib\",\n"
	"      \"/lib32\",\n"
	"      \"/lib64\",\n"
	"      \"/libx32\",\n"
	"      \"/etc\",\n"
	"      \"/opt\"\n"
	"    ],\n"
	"    \"read_write\": [],\n"
	"    \"private_tmp\": true\n"
	"  },\n"
	"  \"limits\": {\n"
	"    \"memory\": \"1G\",\n"
	"    \"cpu\": 60,\n"
	"    \"processes\": 256,\n"
	"    \"file_size\": \"1G\",\n"
	"    \"open_files\": 1024,\n"
	"    \"output\": \"1M\"\n"
	"  },\n"
	"  \"env\": {\n"
	"    \"pass\": [\n"
	"      \"LANG\",\n"
	"      \"TERM\"\n"
	"    ],\n"
	"    \"set\": {\n"
	"      \"PATH\": \"/usr/local/bin:/usr/bin:/bin\"\n"
	"    }\n"
	"  },\n"
	"  \"docker\": {\n"
	"    \"image\": \"debian:bookworm-slim\",\n"
	"    \"memory\": \"512M\",\n"
	"    \"cpus\": 1,\n"
	"    \"pids\": 256,\n"
	"    \"pull\": false\n"
	"  },\n"
	"  \"shell\": null,\n"
	"  \"cwd\": null,\n"
	"  \"audit\": null,\n"
	"  \"allow\": [],\n"
	"  \"approve\": null\n"
	"}\n";

/* The value at a dotted key path of a policy's dump, as compact JSON. */
static char *dump_value(const struct corral_policy *p, const char *path)
{
	char *text = corral_policy_dump(p), *key, *save = NULL, *copy, *out;
	json_t *root, *v;

	assert_non_null(text);
	root = json_loads(text, 0, NULL);
	assert_non_null(root);
	copy = strdup(path);
	v = root;
	for (key = strtok_r(copy, ".", &save); key; key = strtok_r(NULL, ".", &save)) {
		v = json_object_get(v, key);
		if (!v)
			fail_msg("no key %s in dump:\n%s", path, text);
	}
	if (json_is_real(v)) {
		/* jansson would print %.17g; the dump has the shortest form. */
		char buf[64];

		corral_format_seconds(json_real_value(v), buf, sizeof(buf));
		out = strdup(buf);
	} else {
		out = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	}
	json_decref(root);
	free(copy);
	free(text);
	return out;
}

static void assert_value(const struct corral_policy *p, const char *path, const char *expect)
{
	char *got = dump_value(p, path);

	if (strcmp(got, expect) != 0)
		fail_msg("%s: expected %s, got %s", path, expect, got);
	free(got);
}

/* Dump, reload, dump: both dumps identical. */
static void assert_round_trip(const struct corral_policy *p)
{
	struct corral_error err = {};
	struct corral_policy *q = NULL;
	char *a = corral_policy_dump(p), *b;

	assert_non_null(a);
	if (corral_policy_load_string(a, &q, &err) < 0)
		fail_msg("reload failed: %s\n%s", err.message, a);
	b = corral_policy_dump(q);
	assert_non_null(b);
	assert_string_equal(a, b);
	assert_int_equal(a[strlen(a) - 1], '\n');
	free(a);
	free(b);
	corral_policy_free(q);
}

static void test_defaults(void **state)
{
	struct corral_policy *p = NULL;
	char *s;

	assert_int_equal(corral_policy_new(&p), 0);
	assert_int_equal(corral_policy_provider(p), CORRAL_PROVIDER_LOCAL);
	assert_int_equal(corral_policy_network(p), CORRAL_NET_NONE);
	assert_null(corral_policy_root(p));
	assert_true(p->timeout == 30);
	assert_int_equal(p->compat, CORRAL_COMPAT_STRICT);
	assert_null(p->user);
	for (size_t i = 0; corral_default_read_only[i]; i++) {
		assert_true(i < p->fs.read_only.n);
		assert_string_equal(p->fs.read_only.v[i], corral_default_read_only[i]);
	}
	assert_null(p->fs.read_only.v[p->fs.read_only.n]);
	assert_int_equal(p->fs.read_write.n, 0);
	assert_true(p->fs.private_tmp);
	assert_int_equal(p->limits.memory, 1ULL << 30);
	assert_int_equal(p->limits.cpu, 60);
	assert_int_equal(p->limits.processes, 256);
	assert_int_equal(p->limits.file_size, 1ULL << 30);
	assert_int_equal(p->limits.open_files, 1024);
	assert_int_equal(p->limits.output, 1ULL << 20);
	assert_int_equal(p->env.pass.n, 2);
	assert_int_equal(p->env.n_set, 1);
	assert_string_equal(p->env.set[0].name, "PATH");
	assert_string_equal(p->docker.image, "debian:bookworm-slim");
	assert_int_equal(p->docker.memory, 512ULL << 20);
	assert_true(p->docker.cpus == 1.0);
	assert_int_equal(p->docker.pids, 256);
	assert_false(p->docker.pull);
	s = corral_policy_dump(p);
	assert_string_equal(s, default_dump);
	free(s);
	corral_policy_free(p);

	/* An empty object is the defaults. */
	assert_int_equal(corral_policy_load_string("{}", &p, NULL), 0);
	s = corral_policy_dump(p);
	assert_string_equal(s, default_dump);
	free(s);
	corral_policy_free(p);
}

/* ------------------------------------------------------------ valid keys */

static const struct {
	const char *json;
	const char *path;   /* key path in the dump */
	const char *expect; /* compact JSON of the dumped value */
} valid_cases[] = {
	{ "{\"provider\": \"docker\"}", "provider", "\"docker\"" },
	{ "{\"provider\": \"local\"}", "provider", "\"local\"" },
	{ "{\"provider\": \"auto\"}", "provider", "\"auto\"" },
	{ "{\"root\": \"/srv/project\"}", "root", "\"/srv/project\"" },
	{ "{\"root\": \"//srv/./project/\"}", "root", "\"/srv/project\"" },
	{ "{\"root\": \"/\"}", "root", "\"/\"" },
	{ "{\"root\": null}", "root", "null" },
	{ "{\"timeout\": 5}", "timeout", "5" },
	{ "{\"timeout\": 0.5}", "timeout", "0.5" },
	{ "{\"timeout\": 0.1}", "timeout", "0.1" },
	{ "{\"timeout\": 30.0}", "timeout", "30" },
	{ "{\"timeout\": \"2.25\"}", "timeout", "2.25" },
	{ "{\"timeout\": \".5\"}", "timeout", "0.5" },
	{ "{\"timeout\": 604800}", "timeout", "604800" },
	{ "{\"timeout\": 1e-3}", "timeout", "0.001" },
	{ "{\"network\": \"none\"}", "network", "\"none\"" },
	{ "{\"network\": \"loopback\"}", "network", "\"loopback\"" },
	{ "{\"network\": \"host\"}", "network", "\"host\"" },
	{ "{\"proc\": \"private\"}", "proc", "\"private\"" },
	{ "{\"proc\": \"host\"}", "proc", "\"host\"" },
	{ "{\"compat\": \"best-effort\"}", "compat", "\"best-effort\"" },
	{ "{\"user\": \"nobody\"}", "user", "\"nobody\"" },
	{ "{\"user\": \"1000:1000\"}", "user", "\"1000:1000\"" },
	{ "{\"user\": null}", "user", "null" },
	{ "{\"fs\": {\"read_only\": [\"/usr\", \"/nix/store/\"]}}", "fs.read_only", "[\"/usr\",\"/nix/store\"]" },
	{ "{\"fs\": {\"read_only\": []}}", "fs.read_only", "[]" },
	{ "{\"fs\": {\"read_only\": [\"/a\", \"/a/\"]}}", "fs.read_only", "[\"/a\"]" },
	{ "{\"fs\": {\"read_write\": [\"/tmp/cache\"]}}", "fs.read_write", "[\"/tmp/cache\"]" },
	{ "{\"fs\": {\"private_tmp\": false}}", "fs.private_tmp", "false" },
	{ "{\"limits\": {\"memory\": \"2g\"}}", "limits.memory", "\"2G\"" },
	{ "{\"limits\": {\"memory\": 1048576}}", "limits.memory", "\"1M\"" },
	{ "{\"limits\": {\"memory\": \"1536K\"}}", "limits.memory", "\"1536K\"" },
	{ "{\"limits\": {\"memory\": \"1024M\"}}", "limits.memory", "\"1G\"" },
	{ "{\"limits\": {\"memory\": \"16t\"}}", "limits.memory", "\"16T\"" },
	{ "{\"limits\": {\"memory\": \"1000\"}}", "limits.memory", "\"1000\"" },
	{ "{\"limits\": {\"cpu\": 1}}", "limits.cpu", "1" },
	{ "{\"limits\": {\"cpu\": \"120\"}}", "limits.cpu", "120" },
	{ "{\"limits\": {\"processes\": 16}}", "limits.processes", "16" },
	{ "{\"limits\": {\"processes\": 0}}", "limits.processes", "0" },
	{ "{\"limits\": {\"processes\": \"0\"}}", "limits.processes", "0" },
	{ "{\"limits\": {\"file_size\": \"10m\"}}", "limits.file_size", "\"10M\"" },
	{ "{\"limits\": {\"open_files\": 64}}", "limits.open_files", "64" },
	{ "{\"limits\": {\"output\": \"64K\"}}", "limits.output", "\"64K\"" },
	{ "{\"limits\": {\"output\": 1}}", "limits.output", "\"1\"" },
	{ "{\"env\": {\"pass\": []}}", "env.pass", "[]" },
	{ "{\"env\": {\"pass\": [\"HOME\", \"_X1\"]}}", "env.pass", "[\"HOME\",\"_X1\"]" },
	{ "{\"env\": {\"set\": {}}}", "env.set", "{}" },
	{ "{\"env\": {\"set\": {\"A\": \"x=y\", \"EMPTY\": \"\"}}}", "env.set", "{\"A\":\"x=y\",\"EMPTY\":\"\"}" },
	{ "{\"docker\": {\"image\": \"alpine:3.20\"}}", "docker.image", "\"alpine:3.20\"" },
	{ "{\"docker\": {\"memory\": \"512m\"}}", "docker.memory", "\"512M\"" },
	{ "{\"docker\": {\"cpus\": \"1.0\"}}", "docker.cpus", "1" },
	{ "{\"docker\": {\"cpus\": 0.25}}", "docker.cpus", "0.25" },
	{ "{\"docker\": {\"cpus\": 2}}", "docker.cpus", "2" },
	{ "{\"docker\": {\"pids\": 64}}", "docker.pids", "64" },
	{ "{\"docker\": {\"pull\": true}}", "docker.pull", "true" },
	{ "{\"shell\": \"/bin/bash\"}", "shell", "\"/bin/bash\"" },
	{ "{\"shell\": \"//usr/bin/./zsh\"}", "shell", "\"/usr/bin/zsh\"" },
	{ "{\"shell\": null}", "shell", "null" },
	{ "{\"cwd\": \"src/a\"}", "cwd", "\"src/a\"" },
	{ "{\"cwd\": \"./x/../y/\"}", "cwd", "\"./x/../y/\"" },
	{ "{\"cwd\": \"/srv/p/src\"}", "cwd", "\"/srv/p/src\"" },
	{ "{\"cwd\": null}", "cwd", "null" },
	{ "{\"audit\": \"/var/log/corral//audit.jsonl\"}", "audit", "\"/var/log/corral/audit.jsonl\"" },
	{ "{\"audit\": null}", "audit", "null" },
	{ "{\"allow\": [\"PyPI.org.\", \"*.npmjs.org:443\", \"[::1]:8080\", \"pypi.org\"]}", "allow",
	  "[\"pypi.org\",\"*.npmjs.org:443\",\"[::1]:8080\"]" },
	{ "{\"approve\": \"/usr/local/bin/gate --strict\"}", "approve", "\"/usr/local/bin/gate --strict\"" },
	{ "{\"approve\": null}", "approve", "null" },
};

static void test_valid(void **state)
{
	for (size_t i = 0; i < sizeof(valid_cases) / sizeof(valid_cases[0]); i++) {
		struct corral_error err = {};
		struct corral_policy *p = NULL;

		if (corral_policy_load_string(valid_cases[i].json, &p, &err) < 0)
			fail_msg("case %zu %s: %s", i, valid_cases[i].json, err.message);
		assert_value(p, valid_cases[i].path, valid_cases[i].expect);
		assert_round_trip(p);
		corral_policy_free(p);
	}
}

/* ------------------------------------------------------------ invalid */

static const struct {
	const char *json;
	const char *message; /* the whole message */
} invalid_cases[] = {
	/* syntax: line and column */
	{ "{\n  \"timeout\": 1,\n    \"x\" 3}", "policy:3:9: ':' expected near '3'" },
	{ "", "policy: empty; expected a JSON object" },
	{ " \n", "policy: empty; expected a JSON object" },
	{ "{\"timeout\": 1, \"timeout\": 2}", "policy:1:24: duplicate object key near '\"timeout\"'" },
	{ "[]", "policy: expected a JSON object" },
	{ "null", "policy: expected a JSON object" },
	{ "42", "policy: expected a JSON object" },
	{ "\"x\"", "policy: expected a JSON object" },
	{ "{} {}", "policy:1:4: end of file expected near '{'" },
	/* unknown keys at every depth */
	{ "{\"provder\": \"local\"}", "provder: unknown key" },
	{ "{\"limits\": {\"memroy\": \"1G\"}}", "limits.memroy: unknown key" },
	{ "{\"fs\": {\"readonly\": []}}", "fs.readonly: unknown key" },
	{ "{\"env\": {\"unset\": []}}", "env.unset: unknown key" },
	{ "{\"docker\": {\"network\": \"none\"}}", "docker.network: unknown key" },
	{ "{\"x\\nweird\": 1}", "x?weird: unknown key" },
	/* provider, network, compat */
	{ "{\"provider\": \"podman\"}", "provider: unknown value 'podman' (expected local|docker|auto)" },
	{ "{\"provider\": 1}", "provider: expected a string" },
	{ "{\"network\": \"internet\"}", "network: unknown value 'internet' (expected none|loopback|host|allow)" },
	{ "{\"network\": null}", "network: expected a string" },
	{ "{\"proc\": \"hidden\"}", "proc: unknown value 'hidden' (expected host|private)" },
	{ "{\"compat\": \"lenient\"}", "compat: unknown value 'lenient' (expected strict|best-effort)" },
	/* shell */
	{ "{\"shell\": \"bash\"}", "shell: 'bash' is not an absolute path" },
	{ "{\"shell\": \"\"}", "shell: empty path" },
	{ "{\"shell\": [\"/bin/bash\"]}", "shell: expected an absolute path or null" },
	/* audit */
	{ "{\"audit\": \"audit.log\"}", "audit: 'audit.log' is not an absolute path" },
	{ "{\"approve\": \" \"}", "approve: empty command (a shell command run before each session call, exit 0 "
	  "approves; null for none)" },
	{ "{\"approve\": true}", "approve: expected a string (a shell command) or null" },
	{ "{\"audit\": true}", "audit: expected an absolute path or null" },
	{ "{\"allow\": [\"*\"]}", "allow[0]: '*': \"*\" would allow every host: list the hosts, or use network \"host\"" },
	{ "{\"allow\": \"pypi.org\"}", "allow: expected an array of hosts (\"pypi.org\", \"*.npmjs.org:443\", \"10.0.0.5:8080\")" },
	/* cwd */
	{ "{\"cwd\": \"\"}", "cwd: empty path (use \".\" for the root)" },
	{ "{\"cwd\": 3}", "cwd: expected a path relative to the root, or null" },
	/* root */
	{ "{\"root\": \"\"}", "root: empty path" },
	{ "{\"root\": \"srv\"}", "root: 'srv' is not an absolute path" },
	{ "{\"root\": 7}", "root: expected an absolute path or null" },
	/* timeout */
	{ "{\"timeout\": 0}", "timeout: must be greater than 0" },
	{ "{\"timeout\": -1}", "timeout: must be greater than 0" },
	{ "{\"timeout\": 604801}", "timeout: must be at most 604800" },
	/* a number past what jansson holds is named by its key path, with the position */
	{ "{\"timeout\": 1e999}", "timeout: number out of range (policy:1:17)" },
	{ "{\"limits\": {\"cpu\": 1, \"memory\": 99999999999999999999}}",
	  "limits.memory: number out of range (policy:1:52)" },
	{ "{\"fs\": {\"read_only\": [\"/a\", -99999999999999999999 ]}}",
	  "fs.read_only[1]: number out of range (policy:1:49)" },
	{ "[99999999999999999999]", "policy:1:21: too big integer near '99999999999999999999'" },
	{ "{\"env\": {}, \"timeout\": 1e999}", "timeout: number out of range (policy:1:28)" },
	/* where the grammar puts no value (a key, after a value): no path, jansson's words */
	{ "{\"timeout\": 5, 1e999: 2}", "policy:1:20: real number overflow near '1e999'" },
	{ "{\"limits\": {\"cpu\": [1 2e999]}}", "policy:1:27: real number overflow near '2e999'" },
	{ "{\"timeout\": true}", "timeout: expected a number" },
	{ "{\"timeout\": \"30s\"}", "timeout: bad number '30s' (expected digits with an optional decimal point, e.g. 0.5)" },
	{ "{\"timeout\": \"\"}", "timeout: bad number '' (expected digits with an optional decimal point, e.g. 0.5)" },
	{ "{\"timeout\": \"0\"}", "timeout: must be greater than 0" },
	{ "{\"timeout\": \"nan\"}", "timeout: bad number 'nan' (expected digits with an optional decimal point, e.g. 0.5)" },
	/* user */
	{ "{\"user\": \"\"}", "user: empty user" },
	{ "{\"user\": \"a:b:c\"}", "user: bad user 'a:b:c' (expected USER or USER:GROUP, names or numeric ids)" },
	{ "{\"user\": \"root:\"}", "user: bad user 'root:' (expected USER or USER:GROUP, names or numeric ids)" },
	{ "{\"user\": \"-u\"}", "user: bad user '-u' (expected USER or USER:GROUP, names or numeric ids)" },
	{ "{\"user\": 0}", "user: expected a string or null" },
	/* fs */
	{ "{\"fs\": []}", "fs: expected an object" },
	{ "{\"fs\": {\"read_only\": \"/usr\"}}", "fs.read_only: expected an array of absolute paths" },
	{ "{\"fs\": {\"read_only\": [\"/usr\", \"lib\"]}}", "fs.read_only[1]: 'lib' is not an absolute path" },
	{ "{\"fs\": {\"read_write\": [\"\"]}}", "fs.read_write[0]: empty path" },
	{ "{\"fs\": {\"read_write\": [null]}}", "fs.read_write[0]: expected an absolute path" },
	{ "{\"fs\": {\"private_tmp\": \"yes\"}}", "fs.private_tmp: expected true or false" },
	/* limits: sizes */
	{ "{\"limits\": {\"memory\": \"12Q\"}}",
	  "limits.memory: bad size '12Q' (expected an integer with an optional K/M/G/T suffix, e.g. 512M)" },
	{ "{\"limits\": {\"memory\": \"-1M\"}}",
	  "limits.memory: bad size '-1M' (expected an integer with an optional K/M/G/T suffix, e.g. 512M)" },
	{ "{\"limits\": {\"memory\": \"\"}}",
	  "limits.memory: bad size '' (expected an integer with an optional K/M/G/T suffix, e.g. 512M)" },
	{ "{\"limits\": {\"memory\": \"1.5G\"}}",
	  "limits.memory: bad size '1.5G' (expected an integer with an optional K/M/G/T suffix, e.g. 512M)" },
	{ "{\"limits\": {\"memory\": \"18446744073709551616\"}}",
	  "limits.memory: size '18446744073709551616' is too large" },
	{ "{\"limits\": {\"memory\": \"16777216T\"}}", "limits.memory: size '16777216T' is too large" },
	{ "{\"limits\": {\"memory\": \"0\"}}", "limits.memory: must be greater than 0" },
	{ "{\"limits\": {\"memory\": 0}}", "limits.memory: must be greater than 0" },
	{ "{\"limits\": {\"memory\": -5}}", "limits.memory: must be greater than 0" },
	{ "{\"limits\": {\"memory\": 1.5}}",
	  "limits.memory: expected a size (a string like \"512M\" or an integer of bytes)" },
	{ "{\"limits\": {\"file_size\": \"1 G\"}}",
	  "limits.file_size: bad size '1 G' (expected an integer with an optional K/M/G/T suffix, e.g. 512M)" },
	{ "{\"limits\": {\"output\": \"1MB\"}}",
	  "limits.output: bad size '1MB' (expected an integer with an optional K/M/G/T suffix, e.g. 512M)" },
	/* limits: counts */
	{ "{\"limits\": {\"cpu\": 0}}", "limits.cpu: must be at least 1" },
	{ "{\"limits\": {\"cpu\": 1.5}}", "limits.cpu: expected an integer" },
	{ "{\"limits\": {\"cpu\": \"1m\"}}", "limits.cpu: bad integer '1m'" },
	{ "{\"limits\": {\"processes\": -1}}", "limits.processes: must be 0 (no limit of corral's own) or more" },
	{ "{\"limits\": {\"processes\": \"-1\"}}", "limits.processes: bad integer '-1'" },
	{ "{\"limits\": {\"cpu\": 0}}", "limits.cpu: must be at least 1" },
	{ "{\"limits\": {\"processes\": 2147483648}}", "limits.processes: must be at most 2147483647" },
	{ "{\"limits\": {\"open_files\": \"\"}}", "limits.open_files: expected an integer, got an empty string" },
	{ "{\"limits\": {\"open_files\": null}}", "limits.open_files: expected an integer" },
	{ "{\"limits\": 5}", "limits: expected an object" },
	/* env */
	{ "{\"env\": {\"pass\": [\"A=B\"]}}",
	  "env.pass[0]: bad variable name 'A=B' (letters, digits and '_', not starting with a digit)" },
	{ "{\"env\": {\"pass\": [\"1X\"]}}",
	  "env.pass[0]: bad variable name '1X' (letters, digits and '_', not starting with a digit)" },
	{ "{\"env\": {\"pass\": [\"\"]}}",
	  "env.pass[0]: bad variable name '' (letters, digits and '_', not starting with a digit)" },
	{ "{\"env\": {\"pass\": [\"A\", \"A\"]}}", "env.pass[1]: 'A' is listed twice" },
	{ "{\"env\": {\"pass\": \"LANG\"}}", "env.pass: expected an array of variable names" },
	{ "{\"env\": {\"set\": {\"A=B\": \"x\"}}}",
	  "env.set.A=B: bad variable name 'A=B' (letters, digits and '_', not starting with a digit)" },
	{ "{\"env\": {\"set\": {\"1A\": \"x\"}}}",
	  "env.set.1A: bad variable name '1A' (letters, digits and '_', not starting with a digit)" },
	{ "{\"env\": {\"set\": {\"A\": 1}}}", "env.set.A: expected a string" },
	{ "{\"env\": {\"set\": []}}", "env.set: expected an object of NAME: value strings" },
	{ "{\"env\": {\"pass\": [\"PATH\"]}}", "env.pass: 'PATH' is also in env.set" },
	/* docker */
	{ "{\"docker\": {\"image\": \"\"}}", "docker.image: empty image name" },
	{ "{\"docker\": {\"image\": \"--privileged\"}}", "docker.image: bad image name '--privileged'" },
	{ "{\"docker\": {\"image\": \"a b\"}}", "docker.image: bad image name 'a b'" },
	{ "{\"docker\": {\"image\": \"a\\u00a0b\"}}", "docker.image: bad image name 'a\u00a0b'" },
	{ "{\"docker\": {\"memory\": \"lots\"}}",
	  "docker.memory: bad size 'lots' (expected an integer with an optional K/M/G/T suffix, e.g. 512M)" },
	{ "{\"docker\": {\"cpus\": 0}}", "docker.cpus: must be greater than 0" },
	{ "{\"docker\": {\"cpus\": 2048}}", "docker.cpus: must be at most 1024" },
	{ "{\"docker\": {\"cpus\": [1]}}", "docker.cpus: expected a number" },
	{ "{\"docker\": {\"pids\": 0}}", "docker.pids: must be at least 1" },
	{ "{\"docker\": {\"pull\": 1}}", "docker.pull: expected true or false" },
};

static void test_invalid(void **state)
{
	for (size_t i = 0; i < sizeof(invalid_cases) / sizeof(invalid_cases[0]); i++) {
		struct corral_error err = {};
		struct corral_policy *p = (struct corral_policy *)0x1;
		int r = corral_policy_load_string(invalid_cases[i].json, &p, &err);

		if (r >= 0)
			fail_msg("case %zu %s: accepted", i, invalid_cases[i].json);
		assert_int_equal(r, -EINVAL);
		assert_int_equal(err.code, CORRAL_E_POLICY);
		assert_ptr_equal(p, (struct corral_policy *)0x1); /* untouched on error */
		if (strcmp(err.message, invalid_cases[i].message) != 0)
			fail_msg("case %zu %s:\n  expected: %s\n  got:      %s", i, invalid_cases[i].json,
				 invalid_cases[i].message, err.message);
	}
}

/* ------------------------------------------------------------ round trip */

static const char *const round_trip_cases[] = {
	"{}",
	"{\"timeout\": 0.1, \"limits\": {\"memory\": \"1536K\"}}",
	"{\"timeout\": 0.3333333333333333, \"docker\": {\"cpus\": 0.1}}",
	"{\"timeout\": 1e-7}",
	"{\"timeout\": 604799.9999999999}",
	"{\"timeout\": 12345.678901234567}",
	"{\"limits\": {\"memory\": 9223372036854775807, \"file_size\": \"18446744073709551615\","
	" \"output\": \"16777215T\"}}",
	"{\"root\": \"/srv/\\u00e9t\\u00e9\", \"user\": \"n\", \"env\": {\"set\": {\"Q\": \"\\\"\\n\\u0001\\u2028\"},"
	" \"pass\": []}}",
	"{\"provider\": \"docker\", \"network\": \"host\", \"compat\": \"best-effort\","
	" \"fs\": {\"read_only\": [], \"read_write\": [\"/x\", \"/y\"], \"private_tmp\": false},"
	" \"docker\": {\"image\": \"x\", \"memory\": 7, \"cpus\": \"0.5\", \"pids\": 1, \"pull\": true}}",
};

static void test_round_trip(void **state)
{
	for (size_t i = 0; i < sizeof(round_trip_cases) / sizeof(round_trip_cases[0]); i++) {
		struct corral_error err = {};
		struct corral_policy *p = NULL;

		if (corral_policy_load_string(round_trip_cases[i], &p, &err) < 0)
			fail_msg("case %zu: %s", i, err.message);
		assert_round_trip(p);
		corral_policy_free(p);
	}
}

static void test_round_trip_odd_values(void **state)
{
	struct corral_policy *p = NULL;

	assert_int_equal(corral_policy_load_string("{\"timeout\": 0.1, \"limits\": {\"memory\": \"1536K\"},"
						   " \"docker\": {\"cpus\": 0.1}}",
						   &p, NULL),
			 0);
	assert_value(p, "timeout", "0.1");
	assert_value(p, "limits.memory", "\"1536K\"");
	assert_value(p, "docker.cpus", "0.1");
	assert_round_trip(p);
	corral_policy_free(p);

	/* The decimal point does not follow LC_NUMERIC. */
	if (setlocale(LC_NUMERIC, "de_DE.UTF-8") || setlocale(LC_NUMERIC, "fr_FR.UTF-8")) {
		char *s;

		assert_int_equal(corral_policy_new(&p), 0);
		assert_int_equal(corral_policy_set(p, "timeout", "2.5", NULL), 0);
		s = corral_policy_dump(p);
		assert_non_null(strstr(s, "\"timeout\": 2.5,"));
		free(s);
		corral_policy_free(p);
		setlocale(LC_NUMERIC, "C");
	}
}

/* ------------------------------------------------------------ overlay */

static const struct {
	const char *base;   /* policy JSON, NULL: defaults */
	const char *opts[6]; /* option, value pairs */
	const char *path;
	const char *expect;
} overlay_cases[] = {
	{ NULL, { "root", "/srv/p" }, "root", "\"/srv/p\"" },
	{ "{\"root\": \"/a\"}", { "root", "/b/" }, "root", "\"/b\"" },
	{ NULL, { "ro", "/data", "ro", "/data2", "ro", "/data" }, "fs.read_only",
	  "[\"/usr\",\"/bin\",\"/sbin\",\"/lib\",\"/lib32\",\"/lib64\",\"/libx32\",\"/etc\",\"/opt\",\"/data\",\"/data2\"]" },
	{ "{\"fs\": {\"read_write\": [\"/a\"]}}", { "rw", "/b" }, "fs.read_write", "[\"/a\",\"/b\"]" },
	{ "{\"network\": \"host\"}", { "net", "loopback" }, "network", "\"loopback\"" },
	{ "{}", { "proc", "private" }, "proc", "\"private\"" },
	{ "{\"timeout\": 5}", { "timeout", "0.25" }, "timeout", "0.25" },
	{ NULL, { "timeout", "1", "timeout", "2" }, "timeout", "2" },
	{ "{\"limits\": {\"memory\": \"2G\"}}", { "memory", "256m" }, "limits.memory", "\"256M\"" },
	{ NULL, { "memory", "1G" }, "docker.memory", "\"512M\"" },
	{ NULL, { "cpu", "5" }, "limits.cpu", "5" },
	{ NULL, { "procs", "10" }, "limits.processes", "10" },
	{ NULL, { "procs", "0" }, "limits.processes", "0" },
	/* --preset overwrites timeout and limits; what follows it wins */
	{ NULL, { "preset", "minimal" }, "limits", "{\"memory\":\"512M\",\"cpu\":10,\"processes\":64,"
	  "\"file_size\":\"64M\",\"open_files\":256,\"output\":\"256K\"}" },
	{ NULL, { "preset", "minimal" }, "timeout", "10" },
	{ NULL, { "preset", "minimal", "cpu", "7" }, "limits.cpu", "7" },
	{ "{\"timeout\": 2, \"limits\": {\"cpu\": 3}}", { "preset", "standard" }, "limits.cpu", "60" },
	{ "{\"timeout\": 2, \"limits\": {\"cpu\": 3}}", { "preset", "standard" }, "timeout", "30" },
	{ "{\"network\": \"host\"}", { "preset", "minimal" }, "network", "\"host\"" },
	{ NULL, { "file-size", "1k" }, "limits.file_size", "\"1K\"" },
	{ NULL, { "open-files", "32" }, "limits.open_files", "32" },
	{ NULL, { "max-output", "4096" }, "limits.output", "\"4K\"" },
	{ NULL, { "env", "HOME" }, "env.pass", "[\"LANG\",\"TERM\",\"HOME\"]" },
	{ NULL, { "env", "LANG" }, "env.pass", "[\"LANG\",\"TERM\"]" },
	{ NULL, { "env", "FOO=a=b" }, "env.set", "{\"PATH\":\"/usr/local/bin:/usr/bin:/bin\",\"FOO\":\"a=b\"}" },
	{ NULL, { "env", "PATH=/bin" }, "env.set", "{\"PATH\":\"/bin\"}" },
	/* later wins between pass and set */
	{ NULL, { "env", "LANG=C" }, "env.pass", "[\"TERM\"]" },
	{ NULL, { "env", "LANG=C", "env", "LANG" }, "env.set", "{\"PATH\":\"/usr/local/bin:/usr/bin:/bin\"}" },
	{ NULL, { "env", "LANG=C", "env", "LANG" }, "env.pass", "[\"TERM\",\"LANG\"]" },
	{ NULL, { "env", "X=" }, "env.set", "{\"PATH\":\"/usr/local/bin:/usr/bin:/bin\",\"X\":\"\"}" },
	{ NULL, { "user", "root" }, "user", "\"root\"" },
	{ "{\"user\": \"a\"}", { "user", "b:c" }, "user", "\"b:c\"" },
	{ NULL, { "provider", "docker" }, "provider", "\"docker\"" },
	{ NULL, { "image", "alpine" }, "docker.image", "\"alpine\"" },
	{ "{\"compat\": \"best-effort\"}", { "compat", "strict" }, "compat", "\"strict\"" },
	/* cwd is relative to the root: kept as given, never made absolute against getcwd */
	{ NULL, { "cwd", "src" }, "cwd", "\"src\"" },
	{ NULL, { "audit", "/var/log/a.jsonl" }, "audit", "\"/var/log/a.jsonl\"" },
	{ "{\"approve\": \"false\"}", { "approve", "true" }, "approve", "\"true\"" },
	{ "{\"cwd\": \"a\"}", { "cwd", "../b" }, "cwd", "\"../b\"" },
};

static void test_overlay(void **state)
{
	for (size_t i = 0; i < sizeof(overlay_cases) / sizeof(overlay_cases[0]); i++) {
		struct corral_error err = {};
		struct corral_policy *p = NULL;

		if (overlay_cases[i].base)
			assert_int_equal(corral_policy_load_string(overlay_cases[i].base, &p, NULL), 0);
		else
			assert_int_equal(corral_policy_new(&p), 0);
		for (size_t j = 0; j < 6 && overlay_cases[i].opts[j]; j += 2)
			if (corral_policy_set(p, overlay_cases[i].opts[j], overlay_cases[i].opts[j + 1], &err) < 0)
				fail_msg("case %zu: %s", i, err.message);
		assert_value(p, overlay_cases[i].path, overlay_cases[i].expect);
		assert_round_trip(p);
		corral_policy_free(p);
	}
}

static const struct {
	const char *option, *value, *message;
	int code;
} overlay_bad[] = {
	{ "memory", "12Q", "--memory: bad size '12Q' (expected an integer with an optional K/M/G/T suffix, e.g. 512M)",
	  CORRAL_E_POLICY },
	{ "memory", "0", "--memory: must be greater than 0", CORRAL_E_POLICY },
	{ "file-size", "-1M", "--file-size: bad size '-1M' (expected an integer with an optional K/M/G/T suffix, e.g. 512M)",
	  CORRAL_E_POLICY },
	{ "max-output", "", "--max-output: bad size '' (expected an integer with an optional K/M/G/T suffix, e.g. 512M)",
	  CORRAL_E_POLICY },
	{ "timeout", "0", "--timeout: must be greater than 0", CORRAL_E_POLICY },
	{ "timeout", "-1", "--timeout: bad number '-1' (expected digits with an optional decimal point, e.g. 0.5)",
	  CORRAL_E_POLICY },
	{ "timeout", "inf", "--timeout: bad number 'inf' (expected digits with an optional decimal point, e.g. 0.5)",
	  CORRAL_E_POLICY },
	{ "timeout", "1e3", "--timeout: bad number '1e3' (expected digits with an optional decimal point, e.g. 0.5)",
	  CORRAL_E_POLICY },
	{ "timeout", "999999999", "--timeout: must be at most 604800", CORRAL_E_POLICY },
	{ "cpu", "0", "--cpu: must be at least 1", CORRAL_E_POLICY },
	{ "cpu", "1.5", "--cpu: bad integer '1.5'", CORRAL_E_POLICY },
	{ "procs", "99999999999999999999999", "--procs: must be at most 2147483647", CORRAL_E_POLICY },
	{ "open-files", "-3", "--open-files: bad integer '-3'", CORRAL_E_POLICY },
	{ "net", "internet", "--net: unknown value 'internet' (expected none|loopback|host|allow)", CORRAL_E_POLICY },
	{ "provider", "vm", "--provider: unknown value 'vm' (expected local|docker|auto)", CORRAL_E_POLICY },
	{ "compat", "", "--compat: unknown value '' (expected strict|best-effort)", CORRAL_E_POLICY },
	{ "root", "", "--root: empty path", CORRAL_E_POLICY },
	{ "rw", "", "--rw: empty path", CORRAL_E_POLICY },
	{ "env", "=x", "--env: bad variable name '' (letters, digits and '_', not starting with a digit)",
	  CORRAL_E_POLICY },
	{ "env", "A-B=1", "--env: bad variable name 'A-B' (letters, digits and '_', not starting with a digit)",
	  CORRAL_E_POLICY },
	{ "user", "", "--user: empty user", CORRAL_E_POLICY },
	{ "image", "-v", "--image: bad image name '-v'", CORRAL_E_POLICY },
	{ "root", "/tmp/\xff", "--root: not valid UTF-8", CORRAL_E_POLICY },
	{ "cwd", "", "--cwd: empty path (use \".\" for the root)", CORRAL_E_POLICY },
	{ "audit", "", "--audit: empty path", CORRAL_E_POLICY },
	{ "approve", "", "--approve: empty command (a shell command run before each session call, exit 0 approves; "
	  "null for none)", CORRAL_E_POLICY },
	{ "preset", "huge", "--preset: unknown preset 'huge' (expected minimal|standard)", CORRAL_E_POLICY },
	{ "procs", "-1", "--procs: bad integer '-1'", CORRAL_E_POLICY },
	{ "bogus", "1", "--bogus: unknown option", CORRAL_E_USAGE },
};

static void test_overlay_bad(void **state)
{
	for (size_t i = 0; i < sizeof(overlay_bad) / sizeof(overlay_bad[0]); i++) {
		struct corral_error err = {};
		struct corral_policy *p = NULL;
		char *before, *after;

		assert_int_equal(corral_policy_new(&p), 0);
		before = corral_policy_dump(p);
		assert_int_equal(corral_policy_set(p, overlay_bad[i].option, overlay_bad[i].value, &err), -EINVAL);
		if (strcmp(err.message, overlay_bad[i].message) != 0)
			fail_msg("case %zu: expected '%s', got '%s'", i, overlay_bad[i].message, err.message);
		assert_int_equal(err.code, overlay_bad[i].code);
		/* A rejected value leaves the policy as it was. */
		after = corral_policy_dump(p);
		assert_string_equal(before, after);
		free(before);
		free(after);
		corral_policy_free(p);
	}
}

static void test_overlay_relative(void **state)
{
	struct corral_policy *p = NULL;
	char cwd[PATH_MAX], expect[PATH_MAX + 16];

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(corral_policy_new(&p), 0);
	assert_int_equal(corral_policy_set(p, "root", "./sub//dir/.", NULL), 0);
	snprintf(expect, sizeof(expect), "%s/sub/dir", strcmp(cwd, "/") == 0 ? "" : cwd);
	assert_string_equal(p->root, expect);
	assert_int_equal(corral_policy_set(p, "rw", ".", NULL), 0);
	assert_string_equal(p->fs.read_write.v[0], cwd);
	assert_int_equal(corral_policy_set(p, "ro", "..", NULL), 0);
	assert_non_null(strstr(p->fs.read_only.v[p->fs.read_only.n - 1], "/.."));
	/* --audit like --root; --cwd is relative to the root, so it stays as given. */
	assert_int_equal(corral_policy_set(p, "audit", "logs/a.jsonl", NULL), 0);
	snprintf(expect, sizeof(expect), "%s/logs/a.jsonl", strcmp(cwd, "/") == 0 ? "" : cwd);
	assert_string_equal(p->audit, expect);
	assert_int_equal(corral_policy_set(p, "cwd", "src/..//lib", NULL), 0);
	assert_string_equal(p->cwd, "src/..//lib");
	corral_policy_free(p);
}

/* ------------------------------------------------------------ sizes, durations */

static const struct {
	const char *s;
	int r;
	uint64_t v;
} size_cases[] = {
	{ "0", 0, 0 },
	{ "1", 0, 1 },
	{ "1024", 0, 1024 },
	{ "1k", 0, 1024 },
	{ "1K", 0, 1024 },
	{ "512m", 0, 512ULL << 20 },
	{ "1G", 0, 1ULL << 30 },
	{ "3t", 0, 3ULL << 40 },
	{ "007", 0, 7 },
	{ "18446744073709551615", 0, UINT64_MAX },
	{ "16777215T", 0, 16777215ULL << 40 },
	{ "18446744073709551616", -ERANGE, 0 },
	{ "16777216T", -ERANGE, 0 },
	{ "99999999999999999999999999", -ERANGE, 0 },
	{ "", -EINVAL, 0 },
	{ "K", -EINVAL, 0 },
	{ "-1", -EINVAL, 0 },
	{ "+1", -EINVAL, 0 },
	{ " 1", -EINVAL, 0 },
	{ "1 ", -EINVAL, 0 },
	{ "1.5G", -EINVAL, 0 },
	{ "12Q", -EINVAL, 0 },
	{ "1KB", -EINVAL, 0 },
	{ "1P", -EINVAL, 0 },
	{ "0x10", -EINVAL, 0 },
};

static void test_parse_size(void **state)
{
	for (size_t i = 0; i < sizeof(size_cases) / sizeof(size_cases[0]); i++) {
		uint64_t v = 12345;
		int r = corral_parse_size(size_cases[i].s, &v);

		if (r != size_cases[i].r)
			fail_msg("case '%s': r=%d, expected %d", size_cases[i].s, r, size_cases[i].r);
		if (r == 0)
			assert_int_equal(v, size_cases[i].v);
		else
			assert_int_equal(v, 12345);
	}
}

static const struct {
	uint64_t v;
	const char *s;
} format_size_cases[] = {
	{ 0, "0" },
	{ 7, "7" },
	{ 1023, "1023" },
	{ 1024, "1K" },
	{ 1536 * 1024, "1536K" },
	{ 1ULL << 20, "1M" },
	{ 3ULL << 30, "3G" },
	{ (1ULL << 30) + 1, "1073741825" },
	{ 5ULL << 40, "5T" },
	{ 1ULL << 50, "1024T" },
	{ UINT64_MAX, "18446744073709551615" },
};

static void test_format_size(void **state)
{
	for (size_t i = 0; i < sizeof(format_size_cases) / sizeof(format_size_cases[0]); i++) {
		char buf[32];
		uint64_t back;

		corral_format_size(format_size_cases[i].v, buf, sizeof(buf));
		assert_string_equal(buf, format_size_cases[i].s);
		assert_int_equal(corral_parse_size(buf, &back), 0);
		assert_int_equal(back, format_size_cases[i].v);
	}
}

static const struct {
	const char *s;
	int r;
	double v;
} duration_cases[] = {
	{ "30", 0, 30 },
	{ "0.5", 0, 0.5 },
	{ ".5", 0, 0.5 },
	{ "5.", 0, 5 },
	{ "0.001", 0, 0.001 },
	{ "604800", 0, 604800 },
	{ "604800.0", 0, 604800 },
	{ "604800.1", -ERANGE, 0 },
	{ "0", -ERANGE, 0 },
	{ "0.0", -ERANGE, 0 },
	{ "", -EINVAL, 0 },
	{ ".", -EINVAL, 0 },
	{ "1.2.3", -EINVAL, 0 },
	{ "-1", -EINVAL, 0 },
	{ "1e3", -EINVAL, 0 },
	{ "inf", -EINVAL, 0 },
	{ "nan", -EINVAL, 0 },
	{ "0x10", -EINVAL, 0 },
	{ " 1", -EINVAL, 0 },
	{ "30s", -EINVAL, 0 },
};

static void test_parse_duration(void **state)
{
	for (size_t i = 0; i < sizeof(duration_cases) / sizeof(duration_cases[0]); i++) {
		double v = -7;
		int r = corral_parse_duration(duration_cases[i].s, &v);

		if (r != duration_cases[i].r)
			fail_msg("case '%s': r=%d, expected %d", duration_cases[i].s, r, duration_cases[i].r);
		if (r == 0)
			assert_true(v == duration_cases[i].v);
		else
			assert_true(v == -7);
	}
}

static const struct {
	double v;
	const char *s;
} format_seconds_cases[] = {
	{ 30, "30" },
	{ 0.5, "0.5" },
	{ 0.1, "0.1" },
	{ 0.3, "0.3" },
	{ 1.0 / 3, "0.3333333333333333" },
	{ 2.0 / 3, "0.6666666666666666" },
	{ 604800, "604800" },
	{ 1e-5, "1e-05" },
	{ 123.456, "123.456" },
	{ 0.1 + 0.2, "0.30000000000000004" },
};

static void test_format_seconds(void **state)
{
	for (size_t i = 0; i < sizeof(format_seconds_cases) / sizeof(format_seconds_cases[0]); i++) {
		char buf[64];

		corral_format_seconds(format_seconds_cases[i].v, buf, sizeof(buf));
		assert_string_equal(buf, format_seconds_cases[i].s);
		assert_true(strtod(buf, NULL) == format_seconds_cases[i].v);
	}
}

/* ------------------------------------------------------------ object life, files */

static void test_dup_free(void **state)
{
	struct corral_policy *p = NULL, *d;
	char *a, *b;

	corral_policy_free(NULL);
	assert_null(corral_policy_dup(NULL));
	assert_int_equal(corral_policy_load_string("{\"root\": \"/r\", \"user\": \"u\", \"timeout\": 0.7,"
						   " \"fs\": {\"read_write\": [\"/w\"]},"
						   " \"env\": {\"set\": {\"A\": \"1\", \"B\": \"2\"}}}",
						   &p, NULL),
			 0);
	d = corral_policy_dup(p);
	assert_non_null(d);
	a = corral_policy_dump(p);
	corral_policy_free(p); /* the copy owns nothing of the original */
	b = corral_policy_dump(d);
	assert_string_equal(a, b);
	free(a);
	free(b);
	corral_policy_free(d);

	/* Half-built: whatever is zero is skipped. */
	p = calloc(1, sizeof(*p));
	p->root = strdup("/x");
	corral_policy_free(p);
}

static void test_load_file(void **state)
{
	const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char dir[1024], path[PATH_MAX];
	struct corral_error err = {};
	struct corral_policy *p = NULL;
	FILE *f;

	/* Under $TMPDIR when set, so the suite also runs inside corral. */
	snprintf(dir, sizeof(dir), "%s/corral-test-policy.XXXXXX", tmp);
	assert_non_null(mkdtemp(dir));

	snprintf(path, sizeof(path), "%s/missing.json", dir);
	assert_int_equal(corral_policy_load_file(path, &p, &err), -ENOENT);
	assert_int_equal(err.code, CORRAL_E_NOT_FOUND);
	assert_non_null(strstr(err.message, "missing.json: No such file or directory"));

	assert_int_equal(corral_policy_load_file(dir, &p, &err), -EISDIR);
	assert_non_null(strstr(err.message, ": Is a directory"));

	snprintf(path, sizeof(path), "%s/policy.json", dir);
	f = fopen(path, "we");
	fputs("{\n  \"timeout\": 3,\n  \"limits\": {\"memory\": \"12Q\"}\n}\n", f);
	fclose(f);
	assert_int_equal(corral_policy_load_file(path, &p, &err), -EINVAL);
	assert_string_equal(err.message,
			    "limits.memory: bad size '12Q' (expected an integer with an optional K/M/G/T suffix, e.g. 512M)");

	f = fopen(path, "we");
	fputs("{\n  \"timeout\": 3,\n    ]\n}\n", f);
	fclose(f);
	assert_int_equal(corral_policy_load_file(path, &p, &err), -EINVAL);
	{
		char expect[PATH_MAX + 64];

		snprintf(expect, sizeof(expect), "%s:3:5: string or '}' expected near ']'", path);
		assert_string_equal(err.message, expect);
	}

	f = fopen(path, "we");
	fputs(default_dump, f);
	fclose(f);
	assert_int_equal(corral_policy_load_file(path, &p, &err), 0);
	{
		char *s = corral_policy_dump(p);

		assert_string_equal(s, default_dump);
		free(s);
	}
	corral_policy_free(p);
	unlink(path);
	rmdir(dir);
}

static void test_error_untouched_on_success(void **state)
{
	struct corral_error err = { .code = 42, .message = "keep" };
	struct corral_policy *p = NULL;

	assert_int_equal(corral_policy_load_string("{\"timeout\": 2}", &p, &err), 0);
	assert_int_equal(corral_policy_set(p, "memory", "2G", &err), 0);
	assert_int_equal(err.code, 42);
	assert_string_equal(err.message, "keep");
	corral_policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_round_trip_odd_values),
		cmocka_unit_test(test_overlay),
		cmocka_unit_test(test_overlay_bad),
		cmocka_unit_test(test_overlay_relative),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_format_size),
		cmocka_unit_test(test_parse_duration),
		cmocka_unit_test(test_format_seconds),
		cmocka_unit_test(test_dup_free),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_error_untouched_on_success),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
