/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The result's "denials": see denials.h. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal/util.h"
#include "policy/policy.h"
#include "supervisor/exec/denials.h"
#include "supervisor/exec/sandbox.h"

#define INFERRED_MAX 16 /* fs entries inferred from one run's stderr */

void corral_denials_add(struct corral_denials *d, const char *kind, const char *what,
			const char *source, const char *hint)
{
	struct corral_denial *e;

	if (!d || !what)
		return;
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->v[i].kind, kind) == 0 && strcmp(d->v[i].what, what) == 0) {
			d->v[i].count++;
			return;
		}
	if (d->n >= CORRAL_DENIALS_MAX) {
		d->v[d->n - 1].count++;	/* the overflow entry */
		return;
	}
	if (d->n == CORRAL_DENIALS_MAX - 1) {
		/* kind: the first unlisted one's (the schema's enum has no "mixed") */
		what = CORRAL_DENIALS_MORE;
		source = "supervisor";
		hint = "corral lists the first 31 distinct refused targets; this entry counts "
		       "refusals of further ones (any kind); the listed ones show what to change";
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 4;
		struct corral_denial *v = realloc(d->v, cap * sizeof(*v));

		if (!v)
			return;
		d->v = v;
		d->cap = cap;
	}
	e = &d->v[d->n];
	*e = (struct corral_denial){ .kind = kind, .source = source, .count = 1,
				     .what = strdup(what), .hint = strdup(hint ? hint : "") };
	if (!e->what || !e->hint) {
		free(e->what);
		free(e->hint);
		return;
	}
	d->n++;
}

static const struct {
	int family;
	const char *name;
} families[] = {
	{ AF_UNIX, "AF_UNIX" },       { AF_INET, "AF_INET" },     { AF_INET6, "AF_INET6" },
	{ AF_NETLINK, "AF_NETLINK" }, { AF_PACKET, "AF_PACKET" }, { AF_VSOCK, "AF_VSOCK" },
	{ AF_BLUETOOTH, "AF_BLUETOOTH" }, { AF_ALG, "AF_ALG" },   { AF_CAN, "AF_CAN" },
	{ AF_XDP, "AF_XDP" },         { AF_KEY, "AF_KEY" },       { AF_TIPC, "AF_TIPC" },
	{ AF_RDS, "AF_RDS" },         { AF_LLC, "AF_LLC" },       { AF_NFC, "AF_NFC" },
	{ AF_SMC, "AF_SMC" },         { 45, "AF_MCTP" },          { AF_QIPCRTR, "AF_QIPCRTR" },
};

void corral_denials_socket(struct corral_denials *d, int network, const char *call, int family)
{
	const char *name = NULL;
	char what[64];

	for (size_t i = 0; i < ARRAY_SIZE(families); i++)
		if (families[i].family == family)
			name = families[i].name;
	if (name)
		snprintf(what, sizeof(what), "%s(%s)", call, name);
	else
		snprintf(what, sizeof(what), "%s(family %d)", call, family);
	/*
	 * Runtimes (node, the JVM, getifaddrs) list network interfaces through
	 * netlink whether or not they go on to use the network: say that it
	 * is harmless by itself, so a model does not widen the network for it.
	 */
	if (family == AF_NETLINK && network != CORRAL_NET_HOST) {
		corral_denials_add(d, "network", what, "supervisor",
				   network == CORRAL_NET_ALLOW ?
				   "netlink (listing network interfaces) is refused under network allow; often "
				   "harmless: most programs go on without it (the listed hosts stay reachable "
				   "through the proxy)" :
				   network == CORRAL_NET_LOOPBACK ?
				   "netlink (listing network interfaces) is refused under network loopback; often "
				   "harmless: most programs go on without it. Only if the command failed for want of "
				   "it, pass --net host (policy key \"network\")" :
				   "netlink (listing network interfaces) is refused under network none; often "
				   "harmless: most programs go on without it. Only if the command needs the network, "
				   "pass --net host (policy key \"network\")");
		return;
	}
	corral_denials_add(d, "network", what, "supervisor",
			   network == CORRAL_NET_HOST ?
			   "network is host: inet, inet6, Unix and netlink sockets only; this family is "
			   "refused under every network mode" :
			   network == CORRAL_NET_ALLOW ?
			   "network is allow: only inet, inet6 and Unix sockets, their connects mediated (the "
			   "egress proxy); this family is refused; pass --net host (policy key \"network\") "
			   "for it" :
			   network == CORRAL_NET_LOOPBACK ?
			   "network is loopback: only inet, inet6 and Unix sockets inside a private network "
			   "namespace; pass --net host (policy key \"network\") for this family" :
			   "network is none: no sockets but Unix ones under the root; pass --net host (policy "
			   "key \"network\") to reach the network, or --net loopback for a private localhost");
}

void corral_denials_unix(struct corral_denials *d, const char *path, bool abstract)
{
	char hint[PATH_MAX + 256];

	if (abstract) {
		corral_denials_add(d, "unix_socket", path, "supervisor",
				   "abstract Unix socket addresses are refused: use a pathname socket under "
				   "the root or $TMPDIR, or pass --net host (policy key \"network\")");
		return;
	}
	snprintf(hint, sizeof(hint), "the Unix socket %s is outside the root, $TMPDIR and the read_write "
		 "paths: put it under the root, or pass --rw DIR for its directory (policy key "
		 "fs.read_write; --root for the root)", path);
	corral_denials_add(d, "unix_socket", path, "supervisor", hint);
}

void corral_denials_clear(struct corral_denials *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].what);
		free(d->v[i].hint);
	}
	free(d->v);
	*d = (struct corral_denials){};
}

/* ------------------------------------------------------------ inference */

/* Case-insensitive search in a line that is not NUL-terminated. */
static bool line_has(const char *s, size_t len, const char *needle)
{
	size_t nl = strlen(needle);

	for (size_t i = 0; i + nl <= len; i++)
		if (strncasecmp(s + i, needle, nl) == 0)
			return true;
	return false;
}

static bool refusal_line(const char *s, size_t len)
{
	return line_has(s, len, "permission denied") || line_has(s, len, "read-only file system") ||
	       line_has(s, len, "EACCES") || line_has(s, len, "EROFS");
}

size_t corral_denials_line_paths(const char *line, size_t len,
				 void (*fn)(const char *path, void *arg), void *arg)
{
	size_t found = 0;

	if (!refusal_line(line, len))
		return 0;
	for (size_t i = 0; i < len; i++) {
		char path[PATH_MAX];
		size_t k = 0, j = i;
		char prev = i ? line[i - 1] : ' ';
		char quote = 0;

		/* coreutils in a UTF-8 locale quotes with U+2018 ... U+2019. */
		bool curly = i >= 3 && memcmp(line + i - 3, "\xe2\x80\x98", 3) == 0;

		/* A path starts a token: after a blank, a quote, '(', '=' or '['. */
		if (line[i] != '/' || !(curly || prev == ' ' || prev == '\t' || prev == '\'' || prev == '"' ||
					prev == '`' || prev == '(' || prev == '=' || prev == '['))
			continue;
		if (prev == '\'' || prev == '"' || prev == '`')
			quote = prev == '`' ? '\'' : prev;
		while (j < len && k < sizeof(path) - 1) {
			char c = line[j];

			if (curly && j + 3 <= len && memcmp(line + j, "\xe2\x80\x99", 3) == 0)
				break;
			if (quote ? c == quote : !curly && (c == ' ' || c == '\t' || c == '\'' || c == '"' ||
							    c == ')' || c == ',' || c == ']' ||
							    (c == ':' && (j + 1 == len || line[j + 1] == ' '))))
				break;
			if (c == '\n' || c == '\r')
				break;
			path[k++] = c;
			j++;
		}
		if (k == sizeof(path) - 1) /* too long to be sure of */
			break;
		/* A sentence's full stop is not part of the path. */
		while (k > 1 && path[k - 1] == '.' && !quote && !curly)
			k--;
		path[k] = '\0';
		i = j;
		if (k == 0)
			continue;
		/* "/bin/bash: line 1: /etc/x: Permission denied": the first is the program, not what was refused. */
		if (j - k == 0 && j + 1 < len && line[j] == ':' && memmem(line + j, len - j, " /", 2))
			continue;
		fn(path, arg);
		found++;
	}
	return found;
}

static bool under(const char *path, const char *base)
{
	size_t bl;

	if (!base)
		return false;
	bl = strlen(base);
	if (bl == 1 && base[0] == '/')
		return true;
	return strncmp(path, base, bl) == 0 && (path[bl] == '/' || path[bl] == '\0');
}

struct infer {
	const struct corral_sandbox *sb;
	const struct corral_run *run;
	struct corral_denials *d;
	size_t n_inferred;
	char **rw, **ro; /* canonical policy paths, made at the first candidate */
	bool loaded;
	uid_t uid;
	gid_t gid;
};

static char **canon_list(const struct corral_strv *l)
{
	char **v = calloc(l->n + 1, sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = 0; i < l->n; i++)
		v[i] = realpath(l->v[i], NULL); /* a missing path allows nothing: NULL, skipped */
	return v;
}

static void free_list(char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static bool under_any(const char *path, char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		if (under(path, v[i]))
			return true;
	return false;
}

/* The path as the kernel resolves it (the file, or its directory when the file is not there). */
static char *canonical(const char *path, struct stat *st, bool *exists)
{
	char *r = realpath(path, NULL), *dir, *slash, *out;

	if (r) {
		*exists = stat(r, st) == 0;
		return r;
	}
	*exists = false;
	slash = strrchr(path, '/');
	if (!slash || !slash[1] || strcmp(slash + 1, ".") == 0 || strcmp(slash + 1, "..") == 0)
		return NULL;
	dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
	if (!dir)
		return NULL;
	r = realpath(dir, NULL);
	free(dir);
	if (!r || stat(r, st) < 0 || !S_ISDIR(st->st_mode)) {
		free(r);
		return NULL;
	}
	if (asprintf(&out, "%s%s%s", r, strcmp(r, "/") ? "/" : "", slash + 1) < 0)
		out = NULL;
	free(r);
	return out;
}

/* Could the command's uid/gid write |st| (a file; a directory: create in it) by its mode alone? */
static bool dac_writable(const struct stat *st, uid_t uid, gid_t gid)
{
	mode_t m = st->st_mode, need_w, need_x;

	if (uid == st->st_uid) {
		need_w = S_IWUSR;
		need_x = S_IXUSR;
	} else if (gid == st->st_gid) {
		need_w = S_IWGRP;
		need_x = S_IXGRP;
	} else {
		need_w = S_IWOTH;
		need_x = S_IXOTH;
	}
	return (m & need_w) && (!S_ISDIR(m) || (m & need_x));
}

static bool dac_searchable(const struct stat *st, uid_t uid, gid_t gid)
{
	mode_t m = st->st_mode;

	if (uid == st->st_uid)
		return m & S_IXUSR;
	if (gid == st->st_gid)
		return m & S_IXGRP;
	return m & S_IXOTH;
}

static void infer_one(const char *raw, void *arg)
{
	struct infer *in = arg;
	const struct corral_policy *p = in->sb->policy;
	const char *tmp = in->run ? in->run->tmp_path : NULL;
	char hint[2 * PATH_MAX + 300];
	struct stat st;
	bool exists, readable;
	char *path;

	if (in->n_inferred >= INFERRED_MAX)
		return;
	if (!in->loaded) {
		in->loaded = true;
		in->rw = canon_list(&p->fs.read_write);
		in->ro = canon_list(&p->fs.read_only);
	}
	path = canonical(raw, &st, &exists);
	if (!path)
		return;
	/*
	 * /proc and /dev: the run's own terminal, devices and processes are
	 * granted per run, others scoped by Landlock: not decided from paths.
	 */
	if (under(path, "/proc") || under(path, "/dev") || under(path, in->sb->root) ||
	    under_any(path, in->rw, p->fs.read_write.n) || (tmp && under(path, tmp))) {
		free(path);
		return;
	}
	readable = under_any(path, in->ro, p->fs.read_only.n);
	if (readable) {
		/*
		 * Read and execute are allowed there: the refusal is the policy's
		 * only if it was a write the file's mode would have let the
		 * command's uid make (else the mode may have refused a read). A
		 * file that is not there was being created (a read would have
		 * said ENOENT), if its directory could be searched.
		 */
		if (exists ? !dac_writable(&st, in->uid, in->gid) : !dac_searchable(&st, in->uid, in->gid))
			goto out;
	}
	if (under(path, "/tmp") || under(path, "/var/tmp"))
		snprintf(hint, sizeof(hint), "%s is not writable: use $TMPDIR%s", under(path, "/tmp") ? "/tmp" :
			 "/var/tmp", p->fs.private_tmp ? " (the run's private tmp)" :
			 " after giving the policy fs.private_tmp, or a directory under the root");
	else if (readable)
		snprintf(hint, sizeof(hint), "%s is read-only under the policy (fs.read_only): write under the "
			 "root or $TMPDIR, or pass --rw DIR (policy key fs.read_write)", path);
	else
		snprintf(hint, sizeof(hint), "%s is outside the root and every path of the policy: pass --ro "
			 "DIR to read it or --rw DIR to write it (policy keys fs.read_only, fs.read_write)", path);
	corral_denials_add(in->d, "fs", path, "inferred", hint);
	in->n_inferred++;
out:
	free(path);
}

static void infer(struct corral_denials *d, const struct corral_sandbox *sb, const struct corral_run *run,
		  const char *buf, size_t len)
{
	struct infer in = { .sb = sb, .run = run, .d = d };

	if (!buf || !len || !sb || !sb->policy)
		return;
	in.uid = sb->switch_identity ? sb->uid : geteuid();
	in.gid = sb->switch_identity ? sb->gid : getegid();
	/*
	 * The paths come from the command's stderr: resolve them with the
	 * command's filesystem identity (this thread only), or a root
	 * supervisor would tell the caller which files exist under, and where
	 * symlinks point in, directories the command cannot search (/root).
	 */
	if (sb->switch_identity) {
		setfsgid(in.gid);
		setfsuid(in.uid);
	}
	for (size_t off = 0; off < len;) {
		const char *nl = memchr(buf + off, '\n', len - off);
		size_t l = nl ? (size_t)(nl - buf - off) : len - off;

		corral_denials_line_paths(buf + off, l, infer_one, &in);
		off += l + 1;
	}
	if (sb->switch_identity) {
		setfsuid(geteuid());
		setfsgid(getegid());
	}
	free_list(in.rw, sb->policy->fs.read_write.n);
	free_list(in.ro, sb->policy->fs.read_only.n);
}

void corral_denials_collect(struct corral_denials *d, const struct corral_sandbox *sb,
			    const struct corral_run *run, struct corral_result *res)
{
	if (!d || !res)
		return;
	infer(d, sb, run, res->stderr_buf, res->stderr_len);
	if (d->n == 0)
		return;
	res->denials = d->v;
	res->n_denials = d->n;
	*d = (struct corral_denials){};
}
