/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A session from a library caller (corral_session_new, _call, _cancel,
 * _free), in the kernel suite so that CI runs it under ASan+UBSan too: the
 * supervisor's threads, the template and its keepers (which run in the
 * template's memory and are reused call after call), through bursts of
 * overlapping calls, shell state, a background job, a cancel and a bad
 * request. Every call must be answered once, with what it ran.
 */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "corral.h"
#include "../common.h"

#define N_CALLS 240

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static json_t *events; /* every event, in order */
static int failures;

static void on_event(void *userdata, const char *line, size_t len)
{
	json_t *ev = json_loadb(line, len, 0, NULL);

	(void)userdata;
	pthread_mutex_lock(&mu);
	if (!ev) {
		fprintf(stderr, "FAIL - an event is not JSON: %.*s\n", (int)len, line);
		failures++;
	} else {
		json_array_append_new(events, ev);
	}
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

/* The final event (result or error) for integer id |id|, waiting up to |secs|; a new reference or NULL. */
static json_t *final_for(int id, int secs)
{
	struct timespec until;
	json_t *found = NULL;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += secs;
	pthread_mutex_lock(&mu);
	while (!found) {
		size_t i;
		json_t *ev;

		json_array_foreach(events, i, ev) {
			const char *kind = json_string_value(json_object_get(ev, "event"));

			if (json_integer_value(json_object_get(ev, "id")) == id && kind &&
			    (strcmp(kind, "result") == 0 || strcmp(kind, "error") == 0)) {
				found = json_incref(ev);
				break;
			}
		}
		if (!found && pthread_cond_timedwait(&cv, &mu, &until) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&mu);
	return found;
}

/* |ev|'s string |key| (in |obj| of it when not NULL) is |want|. */
static bool str_is(json_t *ev, const char *obj, const char *key, const char *want)
{
	json_t *o = obj ? json_object_get(ev, obj) : ev;
	const char *v = json_string_value(json_object_get(o, key));

	return v && strcmp(v, want) == 0;
}

static void check(const char *name, int ok, json_t *ev)
{
	char *text = ev ? json_dumps(ev, JSON_COMPACT) : NULL;

	if (ok) {
		printf("ok - %s\n", name);
	} else {
		printf("FAIL - %s %.600s\n", name, text ? text : "(no event)");
		failures++;
	}
	free(text);
}

static void submit(struct corral_session *s, const char *req, int n)
{
	if (n <= 0 || corral_session_call(s, req, (size_t)n) < 0) {
		printf("FAIL - corral_session_call %.200s\n", req);
		failures++;
	}
}

/* One request from a literal format. */
#define CALL(s, ...)                                                          \
	do {                                                                  \
		char req_[512];                                               \
		submit((s), req_, snprintf(req_, sizeof(req_), __VA_ARGS__)); \
	} while (0)

int main(void)
{
	char root[] = "/tmp/corral-lib-session.XXXXXX";
	struct corral_policy *p = NULL;
	struct corral_session *s = NULL;
	struct corral_error err = {};
	int bad = 0;
	json_t *ev;

	events = json_array();
	if (!mkdtemp(root) || corral_policy_new(&p) < 0)
		return 1;
	if (geteuid() == 0 && chown(root, 65534, 65534) < 0)
		return 1;
	if (corral_policy_set(p, "root", root, &err) < 0) {
		fprintf(stderr, "root: %s\n", err.message);
		return 1;
	}
	if (corral_session_new(p, NULL, on_event, NULL, &s, &err) < 0) {
		if (err.code == CORRAL_E_UNSUPPORTED || err.code == CORRAL_E_UNENFORCEABLE)
			skip_or_fail(err.message);
		fprintf(stderr, "corral_session_new: %s (%s)\n", err.message, corral_error_code_name(err.code));
		return 1;
	}

	/* Shell state across sequential calls (control for the bursts below: the session works). */
	CALL(s, "{\"id\": 1, \"tool\": \"bash\", \"command\": \"mkdir -p sub && cd sub && export LIBV=1\"}");
	ev = final_for(1, 30);
	check("bash: state set", ev && json_integer_value(json_object_get(ev, "exit_status")) == 0, ev);
	json_decref(ev);
	CALL(s, "{\"id\": 2, \"tool\": \"bash\", \"command\": \"echo $LIBV; pwd -P | sed 's,.*/,,'\"}");
	ev = final_for(2, 30);
	check("bash: the next call has the directory and the export",
	      ev && str_is(ev, NULL, "stdout", "1\nsub\n"), ev);
	json_decref(ev);

	/* A background job, then bursts of eight overlapping calls while it runs. */
	CALL(s, "{\"id\": 3, \"tool\": \"bash\", \"command\": \"sleep 30\", \"background\": true}");
	for (int id = 10; id < 10 + N_CALLS; id++) {
		if (id % 3 == 0)
			CALL(s, "{\"id\": %d, \"tool\": \"bash\", \"command\": \"echo %d\"}", id, id);
		else if (id % 3 == 1)
			CALL(s, "{\"id\": %d, \"tool\": \"exec\", \"argv\": [\"/bin/echo\", \"%d\"]}", id, id);
		else
			CALL(s, "{\"id\": %d, \"tool\": \"list_dir\", \"path\": \".\", \"tag\": \"t%d\"}", id, id);
		if (id % 8 == 7) {
			json_t *e = final_for(id, 30);

			json_decref(e);
		}
	}
	for (int id = 10; id < 10 + N_CALLS; id++) {
		char want[32];

		ev = final_for(id, 30);
		snprintf(want, sizeof(want), "%d\n", id);
		if (!ev || !str_is(ev, NULL, "event", "result") || (id % 3 != 2 && !str_is(ev, NULL, "stdout", want))) {
			check("a call of the bursts answered with its own output", 0, ev);
			bad++;
		}
		json_decref(ev);
	}
	check("every call of the bursts answered with its own output", bad == 0, NULL);

	/* The job is still running; cancel it. A bad request is an error event, and the session goes on. */
	check("cancel of the background job finds it running", corral_session_cancel(s, "3") == 1, NULL);
	ev = final_for(3, 30);
	check("the job ends cancelled",
	      ev && str_is(ev, NULL, "ended_by", "cancelled"), ev);
	json_decref(ev);
	CALL(s, "{\"id\": 4, \"tool\": \"exec\", \"argv\": 5}");
	ev = final_for(4, 30);
	check("a malformed request: error bad_request",
	      ev && str_is(ev, "error", "code", "bad_request"), ev);
	json_decref(ev);
	CALL(s, "{\"id\": 5, \"tool\": \"exec\", \"argv\": [\"/bin/echo\", \"5\"]}");
	ev = final_for(5, 30);
	check("the session goes on after it (control)",
	      ev && str_is(ev, NULL, "stdout", "5\n"), ev);
	json_decref(ev);

	corral_session_free(s);
	corral_policy_free(p);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", root);
	}
	json_decref(events);
	printf("%s\n", failures ? "FAILED" : "all passed");
	return failures ? 1 : 0;
}
