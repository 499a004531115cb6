/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Agent sessions (DESIGN.md "Agent sessions"): the request parser, the
 * calls (one thread each), the shell state, background jobs, cancel,
 * status and the audit lines. Commands run through the session's template
 * process (template.c); file tools run host-side (tools.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "internal/sha256.h"
#include "internal/syscalls.h"
#include "internal/utf8.h"
#include "internal/util.h"
#include "policy/policy.h"
#include "supervisor/docker/session.h"
#include "supervisor/exec/audit.h"
#include "supervisor/exec/result.h"
#include "supervisor/exec/sandbox.h"
#include "supervisor/session/session.h"
#include "supervisor/session/state.h"
#include "supervisor/session/template.h"

#define DEFAULT_TIMEOUT 30.0
#define DEFAULT_OUTPUT (1024 * 1024)
#define DEFAULT_MAX_CALLS 16
#define STATE_MAX (4u << 20)
#define JOBS_KEPT 64
#define WORKERS_IDLE 2

struct call {
	struct corral_session *s;
	json_t *req;
	json_t *id;
	char *id_text;          /* the id's JSON text ("7", "\"abc\"") */
	const char *tool;
	int cancel_fd;          /* eventfd */
	volatile bool cancelled;
	bool background, stream, running, command;
	bool done;              /* its thread emitted its last event */
	char started_at[48];
	char run_id[33];
	int64_t started_ms;     /* started_at, ms since the epoch */
	unsigned long leftovers;
	double t0;
	/* Output kept for job_output (background jobs), under s->lock. */
	char *jout[2];
	size_t jlen[2], jread[2], jmax;
	size_t carry_len[2];    /* stream events: an incomplete UTF-8 sequence held back */
	char carry[2][4];
	json_t *final;          /* a finished call's result fields, for job_kill */
	bool joinable;          /* its thread may still touch it (false: free to free) */
	unsigned waiters;       /* job_kill calls waiting for it to end: not trimmed */
	unsigned long seq;      /* its number for the template (command calls), > 0 */
	struct corral_denials denials; /* what the supervisor refused its processes, under s->lock */
	struct call *next;
	struct call *qnext;     /* the queue of calls waiting for a worker (s->queue) */
	struct cmd_run *sent;   /* a command sent to the template when its request was read, for its worker */
};

struct corral_session {
	struct corral_sandbox *sb;
	struct corral_template t;
	struct corral_dsession *docker; /* the docker provider's container, in place of the template */
	corral_session_event_fn fn;
	void *userdata;
	pthread_mutex_t lock;       /* calls, state, counters */
	pthread_mutex_t emit_lock;  /* one event at a time */
	pthread_cond_t cond;
	struct call *calls;         /* running, and finished background jobs (at most JOBS_KEPT) */
	unsigned n_running, max_calls;
	unsigned n_threads;         /* calls started and not yet finished */
	/*
	 * The calls' worker threads: started as calls need them, a few kept
	 * idle (WORKERS_IDLE), so a call costs no thread creation and no
	 * stack mapping and unmapping (with its TLB shootdown).
	 */
	pthread_cond_t work;
	struct call *queue, *queue_tail;
	unsigned n_queued, n_workers, n_idle;
	unsigned long n_calls, n_errors, seq, call_seq;
	bool closing;
	struct cmd_run *run_kept;   /* a finished command's memory, for the next one (command_run_new) */
	char *cwd;                  /* relative to the root, "." for it */
	char **env;                 /* exported variables the last bash call left (NULL: the base) */
	int audit_fd;
	char *approve;              /* the approval command, or NULL */
	const char *approve_key;    /* where it came from: "--approve" or "policy key approve" */
	char session_id[33];
	char policy_sha256[65];
	const char *bash;
	char *login_shell;          /* the sandbox user's passwd shell (session_login_shell), or NULL */
	bool proc_default;          /* proc "private" by the session's default, not the policy's */
};

/* ------------------------------------------------------------ helpers */


static void iso_now(char out[48])
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(out, 48, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
		 tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ts.tv_nsec / 1000000) % 1000);
}

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void random_hex(char *out, size_t nbytes)
{
	unsigned char b[32];

	if (nbytes > sizeof(b))
		nbytes = sizeof(b);
	if (getrandom(b, nbytes, 0) != (ssize_t)nbytes)
		for (size_t i = 0; i < nbytes; i++)
			b[i] = (unsigned char)(rand() ^ (int)mono_ms());
	for (size_t i = 0; i < nbytes; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

/* One event's line (malloc'd, taken), to the session's output. */
static void emit_line(struct corral_session *s, char *line)
{
	pthread_mutex_lock(&s->emit_lock);
	s->fn(s->userdata, line, strlen(line));
	pthread_mutex_unlock(&s->emit_lock);
	free(line);
}

/* Emit one event: |ev| is consumed. */
static void emit(struct corral_session *s, json_t *ev)
{
	char *line;

	if (!ev)
		return;
	line = json_dumps(ev, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(9));
	json_decref(ev);
	if (line)
		emit_line(s, line);
}

static json_t *event_new(json_t *id, const char *event, json_t *tag)
{
	json_t *ev = json_object();

	json_object_set(ev, "id", id ? id : json_null());
	json_object_set_new(ev, "event", json_string(event));
	if (tag)
		json_object_set(ev, "tag", tag);
	return ev;
}

static void emit_error(struct corral_session *s, json_t *id, json_t *tag, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void emit_error(struct corral_session *s, json_t *id, json_t *tag, const char *code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	json_t *ev = event_new(id, "error", tag), *e = json_object();

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_set_new(e, "code", json_string(code));
	json_object_set_new(e, "message", corral_json_text(msg, strlen(msg)));
	json_object_set_new(ev, "error", e);
	pthread_mutex_lock(&s->lock);
	s->n_errors++;
	pthread_mutex_unlock(&s->lock);
	emit(s, ev);
}

/* ------------------------------------------------------------ audit */

/*
 * Append call |c|'s line to the session's audit log (supervisor/exec/audit.c,
 * the one writer of DESIGN.md "Audit log" lines): |res| when its command
 * ran, else |err_code| and |err_msg| when it failed, else (a file tool
 * that succeeded) neither.
 */
static void audit(struct corral_session *s, struct call *c, const struct corral_result *res, const char *ended_by,
		  const char *cwd, const char *err_code, const char *err_msg)
{
	json_t *argv = json_object_get(c->req, "argv"), *tag = json_object_get(c->req, "tag");
	_cleanup_free_ const char **av = NULL;
	_cleanup_free_ char *tag_text = NULL;
	struct corral_result r;
	struct corral_audit_call call = {
		.session_id = s->session_id, .tool = c->tool,
		.command = json_string_value(json_object_get(c->req, "command")),
		.path = json_string_value(json_object_get(c->req, "path")),
		.cwd = cwd, .id_json = c->id_text, .run_id = c->run_id, .started_at_ms = c->started_ms,
		.error_code = err_code, .error_message = err_msg,
	};

	if (s->audit_fd < 0)
		return;
	if (json_is_array(argv)) {
		av = calloc(json_array_size(argv) + 1, sizeof(*av));
		if (!av)
			return;
		for (size_t i = 0; i < json_array_size(argv); i++)
			av[i] = json_string_value(json_array_get(argv, i));
		call.argv = av;
	}
	if (tag)
		call.tag_json = tag_text = json_dumps(tag, JSON_COMPACT | JSON_ENCODE_ANY);
	if (res) {
		r = *res;
		r.ended_by = ended_by;
		r.leftovers_killed = (unsigned)c->leftovers;
		res = &r;
	}
	(void)corral_audit_write(s->audit_fd, s->policy_sha256, s->docker ? "docker" : "local",
				 corral_network_name(s->sb->policy->network), &call, res, err_code ? -EPERM : 0, NULL);
}

/* ------------------------------------------------------------ calls */

static struct call *find_call(struct corral_session *s, const char *id_text, bool running_only)
{
	for (struct call *c = s->calls; c; c = c->next)
		if (strcmp(c->id_text, id_text) == 0 && (!running_only || c->running))
			return c;
	return NULL;
}

static void call_free(struct call *c)
{
	if (!c)
		return;
	json_decref(c->req);
	json_decref(c->id);
	free(c->id_text);
	safe_close(c->cancel_fd);
	free(c->jout[0]);
	free(c->jout[1]);
	json_decref(c->final);
	corral_denials_clear(&c->denials);
	free(c);
}

/* Unlink |c| (s->lock held). */
static void call_unlink(struct corral_session *s, struct call *c)
{
	for (struct call **pp = &s->calls; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			return;
		}
}

static void on_output(void *arg, int stream, const char *data, size_t len)
{
	struct call *c = arg;
	struct corral_session *s = c->s;
	int i = stream - 1;

	if (c->background) {
		pthread_mutex_lock(&s->lock);
		if (c->jlen[i] < c->jmax) {
			size_t k = len < c->jmax - c->jlen[i] ? len : c->jmax - c->jlen[i];
			char *nb = realloc(c->jout[i], c->jlen[i] + k + 1);

			if (nb) {
				memcpy(nb + c->jlen[i], data, k);
				c->jout[i] = nb;
				c->jlen[i] += k;
			}
		}
		pthread_mutex_unlock(&s->lock);
	}
	if (c->stream) {
		/* Whole characters only: an incomplete sequence at the end waits for the next chunk. */
		size_t n = c->carry_len[i] + len, keep = 0;
		char *b = malloc(n);
		json_t *ev;

		if (!b)
			return;
		memcpy(b, c->carry[i], c->carry_len[i]);
		memcpy(b + c->carry_len[i], data, len);
		for (size_t k = n > 3 ? n - 3 : 0; k < n; k++) {
			size_t bad;

			if (corral_utf8_seq((unsigned char *)b + k, n - k, &bad) < 0) {
				keep = n - k;
				break;
			}
		}
		memcpy(c->carry[i], b + n - keep, keep);
		c->carry_len[i] = keep;
		if (n == keep) {
			free(b);
			return;
		}
		ev = event_new(c->id, "output", json_object_get(c->req, "tag"));
		json_object_set_new(ev, "stream", json_string(i ? "stderr" : "stdout"));
		json_object_set_new(ev, "data", corral_json_text(b, n - keep));
		free(b);
		emit(c->s, ev);
	}
}

/*
 * The call is over: no longer running (a cancel says false, its id may be
 * used again) from just before its last event on. Its thread may still be
 * finishing (s->n_threads).
 */
static void call_finish(struct call *c)
{
	struct corral_session *s = c->s;

	pthread_mutex_lock(&s->lock);
	if (c->running) {
		c->running = false;
		s->n_running--;
		pthread_cond_broadcast(&s->cond);
	}
	pthread_mutex_unlock(&s->lock);
}

static char **envp_dup(char *const *v)
{
	size_t n = 0;
	char **o;

	while (v && v[n])
		n++;
	o = calloc(n + 1, sizeof(*o));
	for (size_t i = 0; o && i < n; i++)
		if (!(o[i] = strdup(v[i]))) {
			for (size_t j = 0; j < i; j++)
				free(o[j]);
			free(o);
			return NULL;
		}
	return o;
}

static void envp_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* Set NAME=VALUE in the malloc'd vector *|v| (replacing). */
static int envp_set(char ***v, const char *name, const char *value)
{
	size_t nl = strlen(name), n = 0;
	char *e;

	if (asprintf(&e, "%s=%s", name, value) < 0)
		return -ENOMEM;
	for (; (*v)[n]; n++)
		if (strncmp((*v)[n], name, nl) == 0 && (*v)[n][nl] == '=') {
			free((*v)[n]);
			(*v)[n] = e;
			return 0;
		}
	{
		char **nv = realloc(*v, (n + 2) * sizeof(**v));

		if (!nv) {
			free(e);
			return -ENOMEM;
		}
		nv[n] = e;
		nv[n + 1] = NULL;
		*v = nv;
	}
	return 0;
}

/* The session's environment now: the last bash call's exports, or the base plus TMPDIR and HOME. */
static char **session_env(struct corral_session *s)
{
	char **v = NULL;

	pthread_mutex_lock(&s->lock);
	if (s->env)
		v = envp_dup(s->env);
	pthread_mutex_unlock(&s->lock);
	if (v)
		return v;
	/* docker: the container's own (the plan's -e, HOME and TMPDIR its /tmp) until a bash call exports. */
	if (s->docker)
		return calloc(1, sizeof(*v));
	v = envp_dup(s->sb->envp);
	if (!v)
		return NULL;
	if (s->sb->policy->fs.private_tmp) {
		bool has = false;

		for (size_t i = 0; v[i]; i++)
			has |= strncmp(v[i], "TMPDIR=", 7) == 0;
		if (!has && envp_set(&v, "TMPDIR", s->t.run.tmp_path) < 0)
			goto oom;
	}
	{
		/* HOME: the session's private one, unless the policy gives one (env.set, env.pass). */
		bool set = false;

		for (size_t i = 0; v[i]; i++)
			set |= strncmp(v[i], "HOME=", 5) == 0;
		if (!set && envp_set(&v, "HOME", s->t.home) < 0)
			goto oom;
	}
	return v;
oom:
	envp_free(v);
	return NULL;
}

/*
 * The SHELL bash sets itself (unexported) when its environment has none:
 * the passwd shell of the user it runs as, "/bin/sh" without an entry.
 * Looking it up in the sandbox costs bash a connect to glibc's nscd
 * socket, which the Unix-socket mediation answers (~0.2 ms, a sixth of
 * a `bash` call here). So a bash call without SHELL gets this one in its
 * environment, and its script un-exports it first thing: the command
 * sees what bash would have set, and its children see no SHELL.
 */
static char *session_login_shell(const struct corral_sandbox *sb)
{
	uid_t uid = sb->switch_identity ? sb->uid : getuid();
	struct passwd pw, *e = NULL;
	char buf[4096];

	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &e) != 0)
		return NULL; /* unknown: bash looks it up itself */
	return strdup(e && e->pw_shell ? e->pw_shell : "/bin/sh");
}

static char *session_cwd(struct corral_session *s)
{
	char *c;

	pthread_mutex_lock(&s->lock);
	c = strdup(s->cwd ? s->cwd : ".");
	pthread_mutex_unlock(&s->lock);
	return c;
}

/*
 * The bash script of one call: an EXIT trap that writes the physical
 * working directory (one line) and `export -p` to |state|, then the
 * command on its own line. Builtins only, no fork; the trap leaves the
 * exit status alone (bash keeps the status the shell was exiting with)
 * and writes nothing to stdout or stderr.
 */
static char *bash_script(const char *state, const char *command, bool unexport_shell)
{
	char *out;

	if (asprintf(&out, "trap '{ builtin pwd -P || builtin echo; builtin export -p; } >| %s 2>/dev/null' EXIT%s\n%s",
		     state, unexport_shell ? "; builtin export -n SHELL" : "", command) < 0)
		return NULL;
	return out;
}

/* Read the state file a bash call left (through the boundary: the command controls it). */
static const char *env_lookup(char *const *v, const char *name, size_t nl)
{
	for (size_t i = 0; v && v[i]; i++)
		if (strncmp(v[i], name, nl) == 0 && v[i][nl] == '=')
			return v[i];
	return NULL;
}

/*
 * Read the state file a bash call left (through the boundary: the command
 * controls it). |call_env| (the call's own "env", or NULL) is not
 * persisted: a variable it set and the command left as it was goes back
 * to the session's value before the call (|before|).
 */
static void take_state(struct corral_session *s, const char *name, json_t *warnings, json_t *call_env,
		       char *const *before)
{
	struct corral_error err = {};
	_cleanup_close_ int fd = corral_resolve_open(s->t.run.tmp_fd, NULL, name, CORRAL_RESOLVE_FILE, &err);
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	_cleanup_free_ char *list = NULL;
	char **env = NULL, *p, *end, *pwd, *nl;
	size_t n = 0, got = 0;
	ssize_t k;

	unlinkat(s->t.run.tmp_fd, name, 0);
	if (fd < 0) {
		json_array_append_new(warnings, json_string("the shell left no state (an EXIT trap of its own, "
			"exec, or a kill): the working directory and exports stay as they were"));
		return;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > STATE_MAX || !(buf = malloc((size_t)st.st_size + 1)))
		return;
	while (got < (size_t)st.st_size && (k = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)k;
	buf[got] = 0;
	pwd = buf;
	nl = memchr(buf, '\n', got);
	if (!nl || !(list = malloc(got + 1)))
		return;
	*nl = 0;
	p = list;
	end = list + corral_state_decode_exports(nl + 1, got - (size_t)(nl + 1 - buf), list);
	{
		/* The root as the shell sees it: docker mounts it at /workspace. */
		const char *root = s->docker ? CORRAL_DOCKER_WORKDIR : s->sb->root;
		size_t pl = strlen(pwd), rl = strlen(root);
		const char *rel = NULL;

		while (pl && pwd[pl - 1] == '\n')
			pwd[--pl] = 0;
		if (strcmp(pwd, root) == 0)
			rel = ".";
		else if (strncmp(pwd, root, rl) == 0 && (pwd[rl] == '/' || rl == 1))
			rel = pwd + rl + (rl > 1);
		if (rel) {
			struct corral_error e2 = {};
			int dfd = strcmp(rel, ".") == 0 ? 0 :
				  corral_resolve_open(s->sb->root_fd, NULL, rel, CORRAL_RESOLVE_DIRECTORY, &e2);

			if (dfd >= 0) {
				char *c = strdup(rel);

				if (dfd > 0)
					close(dfd);
				if (c) {
					pthread_mutex_lock(&s->lock);
					free(s->cwd);
					s->cwd = c;
					pthread_mutex_unlock(&s->lock);
				}
			} else {
				char w[700];

				snprintf(w, sizeof(w), "the shell ended in %s, which the file tools may not use (%s): "
					 "the working directory stays as it was", pwd, e2.message);
				json_array_append_new(warnings, corral_json_text(w, strlen(w)));
			}
		} else if (*pwd) {
			char w[700];

			snprintf(w, sizeof(w), "the shell ended outside the root (%s): the working directory stays as "
				 "it was", pwd);
			json_array_append_new(warnings, corral_json_text(w, strlen(w)));
		}
	}
	env = calloc(1, sizeof(*env));
	for (; env && p < end; p += strlen(p) + 1) {
		char **nv;

		const char *eq = strchr(p, '='), *keep = p;

		if (!eq || strncmp(p, "PWD=", 4) == 0 || strncmp(p, "OLDPWD=", 7) == 0 ||
		    strncmp(p, "SHLVL=", 6) == 0 || strncmp(p, "_=", 2) == 0)
			continue;
		if (call_env) {
			_cleanup_free_ char *nm = strndup(p, (size_t)(eq - p));
			json_t *cv = nm ? json_object_get(call_env, nm) : NULL;

			if (cv && strcmp(json_string_value(cv), eq + 1) == 0) {
				keep = env_lookup(before, p, (size_t)(eq - p));
				if (!keep)
					continue;
			}
		}
		nv = realloc(env, (n + 2) * sizeof(*env));
		if (!nv)
			break;
		env = nv;
		env[n] = strdup(keep);
		if (!env[n])
			break;
		env[++n] = NULL;
	}
	if (env) {
		pthread_mutex_lock(&s->lock);
		envp_free(s->env);
		s->env = env;
		pthread_mutex_unlock(&s->lock);
	}
}

#define SCRIPT_ARG_MAX (96u << 10)

/* Write |text| to a new file .corral/|name| of the session's tmp, owned by the commands' identity. */
static int write_script(struct corral_session *s, const char *name, const char *text)
{
	_cleanup_close_ int dfd = openat(s->t.run.tmp_fd, ".corral", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int fd = -1;
	size_t len = strlen(text), off = 0;

	if (dfd < 0)
		return -errno;
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (s->sb->switch_identity && fchown(fd, s->sb->uid, s->sb->gid) < 0)
		return -errno;
	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EIO;
		off += (size_t)w;
	}
	return 0;
}

/* A command call's argv: the exec tool's own, or bash running the command and then saving its state. */
struct cmd {
	char **argv;
	char *script;             /* bash: the script (command + state capture) */
	char script_name[64];     /* bash: the script's file in .corral, when too long for an argument */
	char script_path[4200];
	char state_name[64];      /* bash: where the script saves the shell's state, relative to the tmp */
	char state_path[4200];
	bool unexport_shell;      /* bash: SHELL was handed to it only to spare the lookup (session_login_shell) */
};

/* Build |m| for call |c|. 0 or -ENOMEM. */
static int command_argv(struct call *c, bool bash, struct cmd *m)
{
	struct corral_session *s = c->s;
	unsigned long seq;

	if (!bash) {
		json_t *a = json_object_get(c->req, "argv");

		m->argv = calloc(json_array_size(a) + 1, sizeof(*m->argv));
		for (size_t i = 0; m->argv && i < json_array_size(a); i++)
			m->argv[i] = (char *)json_string_value(json_array_get(a, i));
		return m->argv ? 0 : -ENOMEM;
	}
	pthread_mutex_lock(&s->lock);
	seq = ++s->seq;
	pthread_mutex_unlock(&s->lock);
	snprintf(m->state_name, sizeof(m->state_name), ".corral/state-%lu", seq);
	snprintf(m->state_path, sizeof(m->state_path), "%s/%s", s->t.run.tmp_path, m->state_name);
	m->script = bash_script(m->state_path, json_string_value(json_object_get(c->req, "command")), m->unexport_shell);
	m->argv = calloc(4, sizeof(*m->argv));
	if (!m->argv || !m->script)
		return -ENOMEM;
	m->argv[0] = (char *)s->bash;
	m->argv[1] = (char *)"-c";
	m->argv[2] = m->script;
	/*
	 * One argument may not exceed 128 KiB (MAX_ARG_STRLEN): a longer
	 * script (a heredoc writing a file) goes into the session's tmp,
	 * created by us (O_EXCL, O_NOFOLLOW below an fd of .corral), and
	 * bash reads it from there.
	 */
	if (strlen(m->script) > SCRIPT_ARG_MAX) {
		snprintf(m->script_name, sizeof(m->script_name), "cmd-%lu", seq);
		if (write_script(s, m->script_name, m->script) == 0) {
			snprintf(m->script_path, sizeof(m->script_path), "%s/.corral/%s", s->t.run.tmp_path,
				 m->script_name);
			m->argv[1] = m->script_path;
			m->argv[2] = NULL;
		}
	}
	return 0;
}

static void command_free(struct corral_session *s, struct cmd *m)
{
	free(m->script);
	if (m->script_name[0]) {
		int dfd = openat(s->t.run.tmp_fd, ".corral", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (dfd >= 0) {
			unlinkat(dfd, m->script_name, 0);
			close(dfd);
		}
	}
	free(m->argv);
}

/* |warnings| (a JSON array of strings) appended to |res|'s own. False on ENOMEM. */
static bool add_warnings(struct corral_result *res, json_t *warnings)
{
	size_t n = json_array_size(warnings);
	char **v;

	if (!n)
		return true;
	v = realloc(res->warnings, (res->n_warnings + n) * sizeof(*v));
	if (!v)
		return false;
	res->warnings = v;
	for (size_t i = 0; i < n; i++) {
		char *w = strdup(json_string_value(json_array_get(warnings, i)) ?: "");

		if (!w)
			return false;
		res->warnings[res->n_warnings++] = w;
	}
	return true;
}

/*
 * The result event's line: the id, "event" and the tag, then the run
 * result's own JSON text (corral_result_json) and, for bash, the cwd. The
 * text is spliced, not parsed and dumped again: that round trip through
 * jansson cost more than half of the supervisor's time on a call.
 */
static char *result_line(struct call *c, const char *result, const char *cwd)
{
	json_t *tag = json_object_get(c->req, "tag");
	_cleanup_free_ char *tag_text = tag ? json_dumps(tag, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	_cleanup_free_ char *cwd_text = NULL;
	size_t rl = strlen(result);
	char *line;

	if (cwd) {
		json_t *j = corral_json_text(cwd, strlen(cwd));

		cwd_text = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
		json_decref(j);
		if (!cwd_text)
			return NULL;
	}
	if ((tag && !tag_text) || rl < 2 || result[0] != '{' || result[rl - 1] != '}' || rl - 2 > INT_MAX)
		return NULL;
	if (asprintf(&line, "{\"id\":%s,\"event\":\"result\"%s%s,%.*s%s%s}", c->id_text ? c->id_text : "null",
		     tag_text ? ",\"tag\":" : "", tag_text ? tag_text : "", (int)(rl - 2), result + 1,
		     cwd_text ? ",\"cwd\":" : "", cwd_text ? cwd_text : "") < 0)
		return NULL;
	return line;
}

/* The result event of a command call that ran: the run result's fields, the session's additions, audited. */
static void command_result(struct call *c, struct corral_result *res, const struct corral_tcall *tc,
			   json_t *warnings, const char *cwd, bool bash)
{
	struct corral_session *s = c->s;
	const char *audited = res->ended_by ? res->ended_by : corral_template_ended_by(res, tc->cancelled);
	_cleanup_free_ char *now = bash ? session_cwd(s) : NULL;
	_cleanup_free_ char *text = NULL;
	char *line = NULL;

	if (tc->cancelled)
		res->ended_by = "cancelled";
	c->leftovers = tc->leftovers;
	if (add_warnings(res, warnings) && (text = corral_result_json_compact(res)))
		line = result_line(c, text, bash ? (now ? now : ".") : NULL);
	audit(s, c, res, audited, cwd, NULL, NULL);
	if (!line) {
		call_finish(c);
		emit_error(s, c->id, json_object_get(c->req, "tag"), "internal", "out of memory");
		return;
	}
	/* A background job's result, for a job_kill that comes after its end (a call's is not asked for again). */
	if (c->background) {
		json_t *ev = json_loads(line, JSON_ALLOW_NUL, NULL);

		pthread_mutex_lock(&s->lock);
		json_decref(c->final);
		c->final = ev;
		pthread_mutex_unlock(&s->lock);
	}
	call_finish(c);
	emit_line(s, line);
}

/* A command call between its send (possibly on the thread that read the request) and its wait (its worker). */
struct cmd_run {
	struct cmd m;
	char **envp, **before, *cwd;
	struct corral_tcall tc;
	bool bash, oom;
	int send_r;               /* corral_template_send's: 0, or -errno with |err| */
	struct corral_error err;
};

/* Prepare call |c|'s command from the session's state, and send it to the template. */
static void command_start(struct call *c, struct cmd_run *k)
{
	struct corral_session *s = c->s;
	json_t *req = c->req, *v;
	double timeout = s->sb->policy->timeout > 0 ? s->sb->policy->timeout : DEFAULT_TIMEOUT;
	size_t max_output = s->sb->policy->limits.output ? s->sb->policy->limits.output : DEFAULT_OUTPUT;
	const char *key;

	k->bash = strcmp(c->tool, "bash") == 0;
	k->cwd = session_cwd(s);
	k->envp = session_env(s);
	k->before = k->bash ? session_env(s) : NULL; /* what take_state compares the bash call's exports with */
	if ((v = json_object_get(req, "timeout")))
		timeout = json_number_value(v);
	if ((v = json_object_get(req, "max_output")))
		max_output = (size_t)json_integer_value(v);
	c->jmax = max_output;
	if ((v = json_object_get(req, "env")))
		json_object_foreach(v, key, v) {
			if (!k->envp || envp_set(&k->envp, key, json_string_value(v)) < 0)
				break;
		}
	if (k->bash && s->login_shell && k->envp && !env_lookup(k->envp, "SHELL", 5)) {
		if (envp_set(&k->envp, "SHELL", s->login_shell) < 0) {
			envp_free(k->envp);
			k->envp = NULL;
		}
		k->m.unexport_shell = true;
	}
	if (command_argv(c, k->bash, &k->m) < 0 || !k->envp || !k->cwd) {
		k->oom = true;
		return;
	}
	k->tc = (struct corral_tcall){
		.seq = c->seq, .argv = k->m.argv, .envp = k->envp, .cwd = k->cwd, .timeout = timeout,
		.max_output = max_output, .cancel_fd = c->cancel_fd,
		.on_output = (c->background || c->stream) ? on_output : NULL, .arg = c,
	};
	if ((v = json_object_get(req, "stdin"))) {
		k->tc.stdin_data = json_string_value(v);
		k->tc.stdin_len = json_string_length(v);
	}
	/* docker: the call goes to the container's exec API when its worker waits (corral_dsession_exec). */
	if (!s->docker)
		k->send_r = corral_template_send(&s->t, &k->tc, &k->err);
}

/*
 * A zeroed cmd_run: the session's kept one, or a new one. Its 9 KiB are
 * kept between calls: musl's malloc would map and unmap them on every
 * call (a page fault per page, a TLB shootdown on every CPU each thread
 * ran on).
 */
static struct cmd_run *command_run_new(struct corral_session *s)
{
	struct cmd_run *k;

	pthread_mutex_lock(&s->lock);
	k = s->run_kept;
	s->run_kept = NULL;
	pthread_mutex_unlock(&s->lock);
	if (k) {
		memset(k, 0, sizeof(*k));
		return k;
	}
	return calloc(1, sizeof(*k));
}

static void command_run_free(struct corral_session *s, struct cmd_run *k)
{
	if (!k)
		return;
	command_free(s, &k->m);
	envp_free(k->envp);
	envp_free(k->before);
	free(k->cwd);
	pthread_mutex_lock(&s->lock);
	if (!s->run_kept) {
		s->run_kept = k;
		k = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	free(k);
}

/* Wait for call |c|'s command (sent by command_start), then its result event and audit line. */
static void command_wait(struct call *c, struct cmd_run *k)
{
	struct corral_session *s = c->s;
	json_t *req = c->req, *warnings = json_array();
	struct corral_result res = CORRAL_RESULT_INIT;
	struct corral_error err = {};
	int r;

	if (k->oom) {
		call_finish(c);
		emit_error(s, c->id, json_object_get(req, "tag"), "internal", "out of memory");
		audit(s, c, NULL, NULL, k->cwd, "internal", "out of memory");
		goto out;
	}
	if (s->docker)
		r = corral_dsession_exec(s->docker, &k->tc, &res, &err);
	else
		r = k->send_r < 0 ? k->send_r : corral_template_wait(&k->tc, &res, &err);
	if (k->send_r < 0)
		err = k->err;
	memcpy(res.run_id, c->run_id, sizeof(res.run_id));
	res.started_at_ms = c->started_ms;
	if (r < 0) {
		call_finish(c);
		emit_error(s, c->id, json_object_get(req, "tag"), corral_error_code_name(err.code), "%s", err.message);
		audit(s, c, NULL, NULL, k->cwd, corral_error_code_name(err.code), err.message);
		goto out;
	}
	/* What the supervisor refused the call's processes, and what their stderr says was refused. */
	if (!s->docker) {
		pthread_mutex_lock(&s->lock);
		corral_denials_collect(&c->denials, s->sb, &s->t.run, &res);
		pthread_mutex_unlock(&s->lock);
	}
	if (k->tc.cwd_failed) {
		char w[600];

		snprintf(w, sizeof(w), "the working directory %s is gone: the command ran in the root", k->cwd);
		json_array_append_new(warnings, corral_json_text(w, strlen(w)));
	}
	/* What compat "best-effort" dropped, in every command's warnings as in a run's. */
	for (size_t i = 0; i < s->sb->n_dropped; i++) {
		char w[600];

		snprintf(w, sizeof(w), "best-effort: dropped %s", s->sb->dropped[i]);
		json_array_append_new(warnings, corral_json_text(w, strlen(w)));
	}
	/* A call that ended on its own leaves its state (a background, timed-out or cancelled one none). */
	if (k->bash) {
		if (!c->background && !res.timed_out && !k->tc.cancelled)
			take_state(s, k->m.state_name, warnings, json_object_get(req, "env"), k->before);
		else
			unlinkat(s->t.run.tmp_fd, k->m.state_name, 0);
	}
	command_result(c, &res, &k->tc, warnings, k->cwd, k->bash);
out:
	/* The call's pipes closed, and the next call's made, after its answer. */
	if (!s->docker)
		corral_template_release(&s->t, &k->tc);
	corral_result_clear(&res);
	json_decref(warnings);
}

/* A command call on its worker: sent already when the request was read (c->sent), else now. */
static void run_command(struct call *c)
{
	struct cmd_run *k = c->sent;

	c->sent = NULL;
	if (!k) {
		k = command_run_new(c->s);
		if (!k) {
			call_finish(c);
			emit_error(c->s, c->id, json_object_get(c->req, "tag"), "internal", "out of memory");
			return;
		}
		command_start(c, k);
	}
	command_wait(c, k);
	command_run_free(c->s, k);
}

static void run_file_tool(struct call *c)
{
	struct corral_session *s = c->s;
	struct corral_tool_err e = { .code = "internal" };
	char *cwd = session_cwd(s);
	struct corral_tools_ctx ctx = {
		.root_fd = s->sb->root_fd, .root = s->sb->root, .cwd = cwd ? cwd : ".",
		.chown_files = s->sb->switch_identity, .uid = s->sb->uid, .gid = s->sb->gid,
		.cancelled = &c->cancelled,
	};
	json_t *out = json_object();
	int r;

	if (strcmp(c->tool, "read_file") == 0)
		r = corral_tool_read_file(&ctx, c->req, out, &e);
	else if (strcmp(c->tool, "write_file") == 0)
		r = corral_tool_write_file(&ctx, c->req, out, &e);
	else if (strcmp(c->tool, "edit_file") == 0)
		r = corral_tool_edit_file(&ctx, c->req, out, &e);
	else if (strcmp(c->tool, "list_dir") == 0)
		r = corral_tool_list_dir(&ctx, c->req, out, &e);
	else
		r = corral_tool_grep(&ctx, c->req, out, &e);
	if (r < 0) {
		call_finish(c);
		emit_error(s, c->id, json_object_get(c->req, "tag"), e.code, "%s", e.msg);
		audit(s, c, NULL, NULL, cwd, e.code, e.msg);
	} else {
		json_t *ev = event_new(c->id, "result", json_object_get(c->req, "tag"));

		json_object_update(ev, out);
		audit(s, c, NULL, NULL, cwd, NULL, NULL);
		call_finish(c);
		emit(s, ev);
	}
	json_decref(out);
	free(cwd);
}

/* A finished background job nobody waits on: its record may be freed (s->lock held). */
static bool trimmable(const struct call *c)
{
	return !c->running && !c->joinable && !c->waiters;
}

/*
 * Keep at most JOBS_KEPT finished background jobs (s->lock held). A job a
 * job_kill waits on is kept: it is usually the oldest, and job_kill reads
 * it after the wait (it trims when done).
 */
static void trim_jobs(struct corral_session *s)
{
	unsigned n = 0;

	for (struct call *c = s->calls; c; c = c->next)
		n += trimmable(c);
	while (n > JOBS_KEPT) {
		struct call *last = NULL;

		for (struct call *c = s->calls; c; c = c->next)
			if (trimmable(c))
				last = c;
		if (!last)
			break;
		call_unlink(s, last);
		call_free(last);
		n--;
	}
}

extern char **environ;

/*
 * Ask the session's approve command about call |c|: 1 approved, 0 denied
 * (|why| says how). The command runs on the host, unconfined: it is the
 * caller's own policy decision, fed the request's JSON on stdin (a socket,
 * so a command that does not read it cannot stop us with SIGPIPE). The
 * request is written as the command takes it, so one that does not read
 * it is still bounded by the 60 s; a cancel of the call (or the session's
 * end) kills the command and denies the call.
 */
static int approved(struct corral_session *s, struct call *c, char *why, size_t wsz)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, status = 0, ok = 0;
	char *req = json_dumps(c->req, JSON_COMPACT), **envp = NULL, buf[1024];
	char *argv[] = { (char *)"/bin/sh", (char *)"-c", s->approve, NULL };
	char e_sid[64], e_tool[64];
	size_t n_env = 0, got = 0, req_len = 0, req_off = 0;
	posix_spawn_file_actions_t fa;
	double deadline = mono_ms() + 60000;
	pid_t pid = -1;
	int pidfd = -1;
	bool timed_out = false, cancelled = false, out_eof = false;

	snprintf(why, wsz, "the approve command could not run");
	while (environ && environ[n_env])
		n_env++;
	envp = calloc(n_env + 3, sizeof(*envp));
	if (!req || !envp || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) < 0 || pipe2(out, O_CLOEXEC) < 0)
		goto out;
	req_len = strlen(req);
	req[req_len++] = '\n'; /* json_dumps' NUL: the request is one line */
	memcpy(envp, environ, n_env * sizeof(*envp));
	snprintf(e_sid, sizeof(e_sid), "CORRAL_SESSION_ID=%s", s->session_id);
	snprintf(e_tool, sizeof(e_tool), "CORRAL_TOOL=%s", c->tool);
	envp[n_env] = e_sid;
	envp[n_env + 1] = e_tool;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[1], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, out[1], 2);
	if (posix_spawn(&pid, "/bin/sh", &fa, NULL, argv, envp) != 0)
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	in[1] = safe_close(in[1]);
	out[1] = safe_close(out[1]);
	if (pid < 0)
		goto out;
	fcntl(in[0], F_SETFL, O_NONBLOCK);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	pidfd = (int)syscall(__NR_pidfd_open, pid, 0);
	for (;;) {
		/* Its output until it exits (a child of its own may keep the pipe: not waited for). */
		struct pollfd pf[4] = { { .fd = out_eof ? -1 : out[0], .events = POLLIN },
					{ .fd = c->cancel_fd, .events = POLLIN }, { .fd = pidfd, .events = POLLIN },
					{ .fd = in[0], .events = POLLOUT } };
		double left = deadline - mono_ms();
		bool exited;
		ssize_t k;

		if (left <= 0 || poll(pf, 4, (int)left + 1) == 0) {
			timed_out = true;
			kill(pid, SIGKILL);
			break;
		}
		if (pf[1].revents) {
			cancelled = true;
			kill(pid, SIGKILL);
			break;
		}
		exited = pidfd >= 0 ? pf[2].revents != 0 : out_eof;
		if (in[0] >= 0 && pf[3].revents) {
			k = send(in[0], req + req_off, req_len - req_off, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (k > 0)
				req_off += (size_t)k;
			if ((k < 0 && errno != EAGAIN && errno != EINTR) || req_off >= req_len)
				in[0] = safe_close(in[0]); /* all of it, or the command closed its stdin: EOF for it */
		}
		while (!out_eof && (pf[0].revents || exited)) {
			k = read(out[0], got < sizeof(buf) - 1 ? buf + got : buf,
				 got < sizeof(buf) - 1 ? sizeof(buf) - 1 - got : sizeof(buf));
			if (k < 0 && errno == EINTR)
				continue;
			if (k == 0 || (k < 0 && errno != EAGAIN))
				out_eof = true;
			if (k <= 0)
				break;
			if (got < sizeof(buf) - 1)
				got += (size_t)k;
		}
		if (exited || (pidfd < 0 && out_eof))
			break;
	}
	buf[got < sizeof(buf) ? got : sizeof(buf) - 1] = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	ok = !timed_out && !cancelled && WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (!ok) {
		char *nl = strchr(buf, '\n');

		if (nl)
			*nl = 0;
		if (cancelled)
			snprintf(why, wsz, "cancelled while the approve command (%s) was deciding: the call did not run",
				 s->approve_key);
		else if (timed_out)
			snprintf(why, wsz, "the approve command gave no answer within 60 s");
		else if (WIFEXITED(status) && (WEXITSTATUS(status) == 127 || WEXITSTATUS(status) == 126))
			snprintf(why, wsz, "the approve command (%s) could not be run (exit %d: %.300s): every call is "
				 "denied until it is fixed", s->approve_key, WEXITSTATUS(status), *buf ? buf : "not found");
		else
			snprintf(why, wsz, "denied by the approve command (%s %d)%s%.300s",
				 WIFEXITED(status) ? "exit" : "signal",
				 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), *buf ? ": " : "", buf);
	}
out:
	safe_close(pidfd);
	safe_close(in[0]);
	safe_close(in[1]);
	safe_close(out[0]);
	safe_close(out[1]);
	free(req);
	free(envp);
	return ok;
}

static void *call_main(void *arg)
{
	struct call *c = arg;
	struct corral_session *s = c->s;
	char why[512];

	if (s->approve && !approved(s, c, why, sizeof(why))) {
		char *cwd = session_cwd(s);

		call_finish(c);
		emit_error(s, c->id, json_object_get(c->req, "tag"), "denied", "%s", why);
		audit(s, c, NULL, NULL, cwd, "denied", why);
		free(cwd);
	} else if (c->command)
		run_command(c);
	else
		run_file_tool(c);
	call_finish(c);
	pthread_mutex_lock(&s->lock);
	c->joinable = false;
	c->done = true;
	s->n_threads--;
	if (!c->background) {
		call_unlink(s, c);
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		call_free(c);
		return NULL;
	}
	trim_jobs(s);
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* ------------------------------------------------------------ requests */

static char *id_text(json_t *id)
{
	return json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
}

static void tool_status(struct corral_session *s, json_t *id, json_t *tag)
{
	json_t *ev = event_new(id, "result", tag), *running = json_array(), *jobs = json_array();

	pthread_mutex_lock(&s->lock);
	for (struct call *c = s->calls; c; c = c->next) {
		if (c->running)
			json_array_append(running, c->id);
		if (c->background)
			json_array_append(jobs, c->id);
	}
	json_object_set_new(ev, "cwd", json_string(s->cwd ? s->cwd : "."));
	json_object_set_new(ev, "running", running);
	json_object_set_new(ev, "jobs", jobs);
	json_object_set_new(ev, "calls", json_integer((json_int_t)s->n_calls));
	json_object_set_new(ev, "errors", json_integer((json_int_t)s->n_errors));
	json_object_set_new(ev, "session_id", json_string(s->session_id));
	/* the protocol's version is corral's: a client can refuse one it does not know */
	json_object_set_new(ev, "version", json_string(corral_version()));
	json_object_set_new(ev, "root", json_string(s->sb->root));
	json_object_set_new(ev, "template_pid", json_integer(s->t.pid));
	if (s->docker)
		json_object_set_new(ev, "container", json_string(corral_dsession_container(s->docker)));
	/* "private": the calls see the session's own processes only (its own PID namespace and /proc; a container has its own). */
	json_object_set_new(ev, "proc", json_string(s->docker || s->t.pidns ? "private" : "host"));
	{
		json_t *d = json_array();

		for (size_t i = 0; i < s->sb->n_dropped; i++)
			json_array_append_new(d, corral_json_text(s->sb->dropped[i], strlen(s->sb->dropped[i])));
		json_object_set_new(ev, "dropped", d);
	}
	pthread_mutex_unlock(&s->lock);
	emit(s, ev);
}

static void tool_job(struct corral_session *s, json_t *id, json_t *tag, json_t *job, bool kill_it)
{
	_cleanup_free_ char *jt = id_text(job);
	struct call *c;
	json_t *ev;

	pthread_mutex_lock(&s->lock);
	c = jt ? find_call(s, jt, false) : NULL;
	if (!c || !c->background) {
		pthread_mutex_unlock(&s->lock);
		emit_error(s, id, tag, "not_found", "no background job with id %s (start one with \"background\": true; "
			   "status lists them)", jt ? jt : "?");
		return;
	}
	if (kill_it) {
		uint64_t one = 1;

		if (c->running) {
			c->cancelled = true;
			ssize_t _unused_ n = write(c->cancel_fd, &one, sizeof(one));
			c->waiters++;
			while (!c->done)
				pthread_cond_wait(&s->cond, &s->lock);
			c->waiters--;
		}
		ev = event_new(id, "result", tag);
		json_object_set(ev, "job", c->id);
		if (c->final) {
			const char *k;
			json_t *val;

			json_object_foreach(c->final, k, val)
				if (strcmp(k, "id") && strcmp(k, "event") && strcmp(k, "tag"))
					json_object_set(ev, k, val);
		}
		trim_jobs(s);
		pthread_mutex_unlock(&s->lock);
		emit(s, ev);
		return;
	}
	ev = event_new(id, "result", tag);
	json_object_set(ev, "job", c->id);
	for (int i = 0; i < 2; i++) {
		json_object_set_new(ev, i ? "stderr" : "stdout",
				    corral_json_text(c->jout[i] ? c->jout[i] + c->jread[i] : "", c->jlen[i] - c->jread[i]));
		c->jread[i] = c->jlen[i];
	}
	json_object_set_new(ev, "running", json_boolean(c->running));
	pthread_mutex_unlock(&s->lock);
	emit(s, ev);
}

static void tool_cancel(struct corral_session *s, json_t *id, json_t *tag, json_t *target)
{
	_cleanup_free_ char *tt = id_text(target);
	int r = tt ? corral_session_cancel(s, tt) : 0;
	json_t *ev = event_new(id, "result", tag);

	json_object_set_new(ev, "cancelled", json_boolean(r == 1));
	emit(s, ev);
}

/* A new call record for a threaded tool (not yet registered). NULL on failure, errno set. */
static struct call *call_new(struct corral_session *s, json_t *req, json_t *id, const struct corral_tool_spec *tool,
			     char **idt)
{
	struct call *c = calloc(1, sizeof(*c));
	struct timespec ts;

	if (!c)
		return NULL;
	c->s = s;
	c->req = req;
	c->id = json_incref(id);
	c->id_text = TAKE_PTR(*idt);
	c->tool = tool->name;
	c->command = tool->command;
	c->background = tool->command && json_is_true(json_object_get(req, "background"));
	c->stream = tool->command && json_is_true(json_object_get(req, "stream"));
	c->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	c->t0 = mono_ms();
	iso_now(c->started_at);
	clock_gettime(CLOCK_REALTIME, &ts);
	c->started_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	random_hex(c->run_id, 16);
	c->seq = __atomic_add_fetch(&s->call_seq, 1, __ATOMIC_RELAXED);
	if (c->cancel_fd < 0) {
		int e = errno;

		c->req = NULL; /* the caller's still */
		call_free(c);
		errno = e;
		return NULL;
	}
	return c;
}

/* Register |c| as running: false (an error event emitted, |c| freed) when its id runs or the session is full. */
static bool call_register(struct corral_session *s, struct call *c, json_t *tag)
{
	pthread_mutex_lock(&s->lock);
	if (find_call(s, c->id_text, true)) {
		pthread_mutex_unlock(&s->lock);
		emit_error(s, c->id, tag, "duplicate_id", "id %s is still running: use a new id for each call",
			   c->id_text);
		call_free(c);
		return false;
	}
	if (s->n_running >= s->max_calls) {
		unsigned m = s->max_calls;

		pthread_mutex_unlock(&s->lock);
		emit_error(s, c->id, tag, "busy", "%u calls are running already (the session's limit): wait for one "
			   "to end, or cancel one", m);
		call_free(c);
		return false;
	}
	/* A finished job's record under the same id gives way to the new call. */
	{
		struct call *old = find_call(s, c->id_text, false);

		if (old) {
			call_unlink(s, old);
			call_free(old);
		}
	}
	c->running = true;
	c->joinable = true;
	c->next = s->calls;
	s->calls = c;
	s->n_running++;
	s->n_threads++;
	pthread_mutex_unlock(&s->lock);
	return true;
}

/* A worker: runs queued calls, then waits for more; ends when enough others are idle, or at the session's end. */
static void *worker_main(void *arg)
{
	struct corral_session *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct call *c;

		while (!s->queue && !s->closing) {
			s->n_idle++;
			pthread_cond_wait(&s->work, &s->lock);
			s->n_idle--;
		}
		c = s->queue;
		if (!c)
			break;
		s->queue = c->qnext;
		if (!s->queue)
			s->queue_tail = NULL;
		s->n_queued--;
		pthread_mutex_unlock(&s->lock);
		call_main(c); /* |c| may be freed by now */
		pthread_mutex_lock(&s->lock);
		if (s->n_idle >= WORKERS_IDLE && !s->queue)
			break;
	}
	s->n_workers--;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/*
 * Hand the registered call |c| to a worker (an idle one, or a new one);
 * on failure unregister it and emit an error event. Nothing here touches
 * |c| once s->lock is released: its worker may finish and free it.
 */
static void call_start(struct corral_session *s, struct call *c, json_t *id, json_t *tag)
{
	int e = 0;

	pthread_mutex_lock(&s->lock);
	c->qnext = NULL;
	if (s->queue_tail)
		s->queue_tail->qnext = c;
	else
		s->queue = c;
	s->queue_tail = c;
	s->n_queued++;
	if (s->n_idle >= s->n_queued) {
		pthread_cond_signal(&s->work);
	} else {
		pthread_attr_t attr;
		pthread_t thread;

		e = pthread_attr_init(&attr);
		if (e == 0) {
			e = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
			if (e == 0)
				e = pthread_create(&thread, &attr, worker_main, s);
			pthread_attr_destroy(&attr);
		}
		if (e == 0)
			s->n_workers++;
	}
	if (e != 0 && s->n_workers == 0) {
		/* No worker to take it: out of the queue (it is the only one: every queued call had a worker). */
		s->queue = s->queue_tail = NULL;
		s->n_queued = 0;
		c->running = false;
		c->joinable = false;
		s->n_running--;
		s->n_threads--;
		call_unlink(s, c);
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		emit_error(s, id, tag, "internal", "could not start a thread for the call: %s", corral_strerror(e));
		if (c->sent && c->sent->tc.x) {
			/* Sent already: killed and waited for, nobody would. */
			struct corral_result res = CORRAL_RESULT_INIT;
			uint64_t one = 1;
			ssize_t _unused_ n = write(c->cancel_fd, &one, sizeof(one));

			corral_template_wait(&c->sent->tc, &res, NULL);
			corral_template_release(&s->t, &c->sent->tc);
			corral_result_clear(&res);
		}
		command_run_free(s, c->sent);
		c->sent = NULL;
		call_free(c);
		return;
	}
	/* A failed create with workers left: one of them takes the call when it is done. */
	pthread_mutex_unlock(&s->lock);
}

_public_ int corral_session_call(struct corral_session *s, const char *request, size_t len)
{
	json_t *req, *id, *tag;
	const struct corral_tool_spec *tool = NULL;
	struct call *c;
	_cleanup_free_ char *idt = NULL;

	if (!s || !request)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	if (s->closing) {
		pthread_mutex_unlock(&s->lock);
		return -ESHUTDOWN;
	}
	s->n_calls++;
	pthread_mutex_unlock(&s->lock);
	{
		struct corral_request pr;
		struct corral_tool_err e = {};

		if (corral_request_parse(request, len, &pr, &e) < 0) {
			emit_error(s, pr.id, pr.tag, e.code, "%s", e.msg);
			corral_request_clear(&pr);
			return 0;
		}
		req = json_incref(pr.req);
		id = pr.id;
		tag = pr.tag;
		tool = pr.tool;
		corral_request_clear(&pr);
	}
	if (tool->command && strcmp(tool->name, "bash") == 0 && !s->bash) {
		emit_error(s, id, tag, "not_found", "bash: no /bin/bash on this host; use the exec tool");
		json_decref(req);
		return 0;
	}
	idt = id_text(id);
	if (!idt) {
		json_decref(req);
		return -ENOMEM;
	}
	pthread_mutex_lock(&s->lock);
	if (find_call(s, idt, true)) {
		pthread_mutex_unlock(&s->lock);
		emit_error(s, id, tag, "duplicate_id", "id %s is still running: use a new id for each call", idt);
		json_decref(req);
		return 0;
	}
	pthread_mutex_unlock(&s->lock);
	if (!tool->threaded) {
		if (strcmp(tool->name, "status") == 0)
			tool_status(s, id, tag);
		else if (strcmp(tool->name, "cancel") == 0)
			tool_cancel(s, id, tag, json_object_get(req, "target"));
		else
			tool_job(s, id, tag, json_object_get(req, "job"), strcmp(tool->name, "job_kill") == 0);
		json_decref(req);
		return 0;
	}
	c = call_new(s, req, id, tool, &idt);
	if (!c) {
		int e = errno ? errno : ENOMEM;

		json_decref(req);
		return -e;
	}
	if (!call_register(s, c, tag))
		return 0;
	/* Before the thread exists, so "started" always comes before the result. */
	if (c->background)
		emit(s, event_new(id, "started", tag));
	/*
	 * A command with no approval to wait for goes to the template at once,
	 * from this thread: its worker's wake-up then runs alongside the
	 * command instead of before it.
	 */
	if (c->command && !s->approve && !s->docker && (c->sent = command_run_new(s)))
		command_start(c, c->sent);
	call_start(s, c, id, tag);
	return 0;
}

_public_ int corral_session_cancel(struct corral_session *s, const char *id_json)
{
	json_t *id;
	char *canon;
	struct call *c;
	int r = 0;

	if (!s || !id_json)
		return 0;
	/* Canonical text, so "7" and " 7" name the same call. */
	id = json_loads(id_json, JSON_DECODE_ANY, NULL);
	canon = id ? id_text(id) : NULL;
	json_decref(id);
	if (!canon)
		return 0;
	pthread_mutex_lock(&s->lock);
	c = find_call(s, canon, true);
	if (c) {
		/* Every call's eventfd: a command's keeper, or an approve command still deciding, is woken. */
		uint64_t one = 1;
		ssize_t _unused_ n;

		c->cancelled = true;
		n = write(c->cancel_fd, &one, sizeof(one));
		r = 1;
	}
	pthread_mutex_unlock(&s->lock);
	free(canon);
	return r;
}

/* Denials to the running call numbered |seq| (0: none; a call that ended gets nothing). */
static void route_to_call(void *arg, unsigned long seq, struct corral_denials *d)
{
	struct corral_session *s = arg;

	pthread_mutex_lock(&s->lock);
	for (struct call *c = s->calls; seq && c; c = c->next) {
		if (c->seq != seq || !c->running)
			continue;
		for (size_t i = 0; i < d->n; i++) {
			const struct corral_denial *e = &d->v[i];

			for (unsigned long k = 0; k < e->count; k++)
				corral_denials_add(&c->denials, e->kind, e->what, e->source, e->hint);
		}
		break;
	}
	pthread_mutex_unlock(&s->lock);
	corral_denials_clear(d);
}

/* The call a process of the session belongs to: its keeper's number, through the process tree; 0 none. */
static unsigned long call_of(void *arg, pid_t pid)
{
	struct corral_session *s = arg;

	return corral_template_call_of(&s->t, pid);
}

/*
 * The Unix-socket mediation's denials (its thread, the refused task still
 * waiting in its call): to the call whose process was refused, found
 * through the process tree (the template's keeper of that call); a process
 * of no running call's is not reported.
 */
static void route_denials(void *arg, pid_t pid, struct corral_denials *d)
{
	route_to_call(arg, call_of(arg, pid), d);
}

/*
 * The approval gate: the option (--approve, corral_session_opts.approve)
 * over the policy's key "approve". A command naming an absolute path that
 * cannot be executed is refused here, naming where it came from.
 */
static int session_approve(struct corral_session *s, const struct corral_session_opts *o, struct corral_error *err)
{
	bool opt = o->sz >= offsetof(struct corral_session_opts, approve) + sizeof(o->approve) && o->approve;
	const char *a = opt ? o->approve : s->sb->policy->approve;
	const char *key = opt ? "--approve" : "policy key approve";
	char first[4096];
	size_t n;

	if (!a)
		return 0;
	a += strspn(a, " \t");
	n = strcspn(a, " \t\n;|&<>()$`'\"\\");
	if (a[0] == '/' && n < sizeof(first) && (a[n] == 0 || a[n] == ' ' || a[n] == '\t' || a[n] == '\n')) {
		memcpy(first, a, n);
		first[n] = 0;
		if (access(first, X_OK) < 0)
			return corral_err(err, CORRAL_E_POLICY, errno, "%s: the approve command %s cannot be run: %s "
					  "(it runs on the host before each call; fix the path, or drop %s)", key, first,
					  corral_strerror(errno), key);
	}
	s->approve = strdup(opt ? o->approve : s->sb->policy->approve);
	if (!s->approve)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	s->approve_key = key;
	return 0;
}

/*
 * The session's sandbox. DESIGN.md: a session makes its PID namespace once
 * and defaults to proc "private" where corral can make one (as root, or
 * unprivileged where user namespaces are allowed); a proc the policy or
 * --proc gave is kept as given (strict refuses a "private" it cannot make).
 */
static int session_sandbox(struct corral_session *s, const struct corral_policy *p, struct corral_error *err)
{
	struct corral_procns_plan plan;
	struct corral_policy *own;
	char why[200];
	int r;

	if (p->proc_given || p->proc == CORRAL_PROC_PRIVATE || p->provider == CORRAL_PROVIDER_DOCKER ||
	    corral_procns_check(&plan, why, sizeof(why)) < 0)
		return corral_sandbox_new(p, &s->sb, err);
	own = corral_policy_dup(p);
	if (!own)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	own->proc = CORRAL_PROC_PRIVATE;
	r = corral_sandbox_new(own, &s->sb, err);
	corral_policy_free(own);
	s->proc_default = true;
	return r;
}

/*
 * Start the template. A default "private" (session_sandbox) that the
 * kernel refuses here after all (a container without mount rights) gives
 * way to the host's /proc, as a policy without the key would have.
 */
static int session_template(struct corral_session *s, const struct corral_policy *p, struct corral_error *err)
{
	struct corral_error e2 = {};
	int r = corral_template_start(&s->t, s->sb, &e2);

	if (r < 0 && s->proc_default) {
		corral_sandbox_free(s->sb);
		s->sb = NULL;
		s->proc_default = false;
		r = corral_sandbox_new(p, &s->sb, err);
		if (r < 0)
			return r;
		return corral_template_start(&s->t, s->sb, err);
	}
	if (r < 0 && err)
		*err = e2;
	return r;
}

_public_ int corral_session_new(const struct corral_policy *p, const struct corral_session_opts *opts,
				corral_session_event_fn fn, void *userdata, struct corral_session **out,
				struct corral_error *err)
{
	struct corral_session_opts o = {};
	struct corral_session *s;
	int r;

	if (!p || !fn || !out)
		return corral_err(err, CORRAL_E_USAGE, EINVAL, "session: missing argument");
	if (opts)
		memcpy(&o, opts, opts->sz && opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	s = calloc(1, sizeof(*s));
	if (!s)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->emit_lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	pthread_cond_init(&s->work, NULL);
	s->fn = fn;
	s->userdata = userdata;
	s->max_calls = o.max_calls ? o.max_calls : DEFAULT_MAX_CALLS;
	s->audit_fd = -1;
	s->t.pid = -1;
	s->t.ctl = s->t.pidfd = s->t.devnull = s->t.un_stop = s->t.took_r = s->t.hint_w = -1;
	s->bash = access("/bin/bash", X_OK) == 0 ? "/bin/bash" : NULL;
	random_hex(s->session_id, 16);
	r = session_sandbox(s, p, err);
	if (r < 0)
		goto fail;
	if (o.audit_path) {
		s->audit_fd = open(o.audit_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
		if (s->audit_fd < 0) {
			r = corral_err(err, CORRAL_E_SETUP, errno, "audit %s: %s (the audit log must be a file corral may "
				       "append to)", o.audit_path, corral_strerror(errno));
			goto fail;
		}
	} else if (s->sb->audit_fd >= 0) {
		/* The policy's audit log (--audit, policy key audit), opened by the sandbox. */
		s->audit_fd = fcntl(s->sb->audit_fd, F_DUPFD_CLOEXEC, 3);
		if (s->audit_fd < 0) {
			r = corral_err(err, CORRAL_E_SETUP, errno, "audit: %s", corral_strerror(errno));
			goto fail;
		}
	}
	r = session_approve(s, &o, err);
	if (r < 0)
		goto fail;
	memcpy(s->policy_sha256, s->sb->policy_sha256, sizeof(s->policy_sha256));
	if (!s->policy_sha256[0]) {
		/* The policy's identity for the audit lines: SHA-256 of its canonical form. */
		char *dump = corral_policy_dump(s->sb->policy);

		if (!dump) {
			r = corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
			goto fail;
		}
		corral_sha256_hex(dump, strlen(dump), s->policy_sha256);
		free(dump);
	}
	/* The first directory: the policy's cwd (--cwd), proven beneath the root as the file tools do. */
	if (s->sb->policy->cwd && *s->sb->policy->cwd) {
		struct corral_error e = {};
		char *host = NULL;
		size_t rl = strlen(s->sb->root);
		int dfd = corral_resolve_open(s->sb->root_fd, s->sb->root, s->sb->policy->cwd, CORRAL_RESOLVE_DIRECTORY, &e);

		if (dfd < 0 || corral_resolve_path(s->sb->root, s->sb->policy->cwd, true, &host, &e) < 0) {
			safe_close(dfd);
			r = corral_err(err, e.code ? e.code : CORRAL_E_SETUP, e.sys_errno ? e.sys_errno : EINVAL,
				       "cwd %s (root %s): --cwd (policy key cwd) must name a directory under the root, "
				       "reached without symlinks", e.message, s->sb->root);
			goto fail;
		}
		safe_close(dfd);
		s->cwd = strdup(host[rl] == '/' && host[rl + 1] ? host + rl + 1 : ".");
		free(host);
		if (!s->cwd) {
			r = corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
			goto fail;
		}
	}
	s->t.route = route_denials;
	s->t.route_arg = s;
	/* The egress proxy's refusals (network "allow"), to the call whose process was refused. */
	corral_egress_route(s->sb->egress, call_of, route_to_call, s);
	if (s->sb->docker) {
		r = corral_dsession_start(s->sb, s->session_id, &s->t, &s->docker, err);
		/* the image's bash (the host's is not what runs) */
		s->bash = "/bin/bash";
	} else {
		r = session_template(s, p, err);
		s->login_shell = session_login_shell(s->sb);
	}
	if (r < 0)
		goto fail;
	if (!s->cwd)
		s->cwd = strdup(".");
	*out = s;
	return 0;
fail:
	if (s->sb)
		corral_egress_route(s->sb->egress, NULL, NULL, NULL);
	corral_sandbox_free(s->sb);
	safe_close(s->audit_fd);
	free(s->approve);
	free(s->cwd);
	free(s);
	return r;
}

_public_ void corral_session_free(struct corral_session *s)
{
	if (!s)
		return;
	/* No proxy thread routes into |s| any more (before s->lock: the route takes it under the proxy's). */
	corral_egress_route(s->sb->egress, NULL, NULL, NULL);
	pthread_mutex_lock(&s->lock);
	s->closing = true;
	for (struct call *c = s->calls; c; c = c->next)
		if (c->running) {
			uint64_t one = 1;
			ssize_t _unused_ n;

			c->cancelled = true;
			n = write(c->cancel_fd, &one, sizeof(one));
		}
	while (s->n_threads)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_cond_broadcast(&s->work);
	while (s->n_workers)
		pthread_cond_wait(&s->cond, &s->lock);
	while (s->calls) {
		struct call *c = s->calls;

		s->calls = c->next;
		call_free(c);
	}
	pthread_mutex_unlock(&s->lock);
	if (s->docker)
		corral_dsession_stop(s->docker, &s->t);
	else
		corral_template_stop(&s->t);
	corral_sandbox_free(s->sb);
	safe_close(s->audit_fd);
	free(s->approve);
	envp_free(s->env);
	free(s->run_kept);
	free(s->login_shell);
	free(s->cwd);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->emit_lock);
	pthread_cond_destroy(&s->cond);
	pthread_cond_destroy(&s->work);
	free(s);
}
