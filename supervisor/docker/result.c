/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The docker client's result turned into the command's. Exec failures and
 * docker's own failures are decided by the exec helper's report on the
 * run's status socket (exec-helper.c), never by text the command can write.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/docker/docker-private.h"
#include "supervisor/exec/result.h"

void corral_docker_status_parse(const char *buf, size_t len, struct corral_docker_status *st)
{
	char line[300];

	st->exec_errno = 0;
	st->has_interp = false;
	st->interp[0] = '\0';
	for (size_t off = 0; off < len;) {
		const char *nl = memchr(buf + off, '\n', len - off);
		size_t l = nl ? (size_t)(nl - (buf + off)) : len - off;

		if (l < sizeof(line)) {
			memcpy(line, buf + off, l);
			line[l] = '\0';
			if (line[0] == 'E' && line[1] == ' ') {
				char *end;
				long e = strtol(line + 2, &end, 10);

				if (end != line + 2 && !*end && e > 0 && e < 4096)
					st->exec_errno = (int)e;
			} else if (line[0] == 'I' && line[1] == ' ') {
				size_t il = strnlen(line + 2, sizeof(st->interp) - 1);

				st->has_interp = true;
				memcpy(st->interp, line + 2, il);
				st->interp[il] = '\0';
			}
		}
		off += l + 1;
	}
	/* A report without an errno is no exec failure: the command ran. */
	if (!st->exec_errno)
		st->has_interp = false;
}

static char *find_line(char *buf, size_t len, const char *prefix)
{
	size_t pl = strlen(prefix);

	for (char *l = buf; l && l < buf + len;) {
		if ((size_t)(buf + len - l) >= pl && memcmp(l, prefix, pl) == 0)
			return l;
		l = memchr(l, '\n', (size_t)(buf + len - l));
		if (l)
			l++;
	}
	return NULL;
}

/* As the engine reports a local exec failure: exec_errno, exec_interp, 126/127 and its one stderr line. */
static int exec_failed(struct corral_result *res, bool captured, const char *cmd,
		       const struct corral_docker_status *st, struct corral_error *err)
{
	char msg[600];
	int n;

	res->exec_errno = st->exec_errno;
	if (st->has_interp && !(res->exec_interp = strdup(st->interp)))
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	res->exit_status = st->exec_errno == ENOENT && !res->exec_interp ? 127 : 126;
	if (!captured)
		return 0;
	/* The command never ran: what the client wrote (its warnings) stays, the line follows. */
	n = corral_exec_error_line(res, cmd, msg, sizeof(msg));
	if (n > 0) {
		size_t l = (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1;
		char *nb = realloc(res->stderr_buf, res->stderr_len + l + 1);

		if (!nb)
			return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
		memcpy(nb + res->stderr_len, msg, l);
		res->stderr_len += l;
		nb[res->stderr_len] = '\0';
		res->stderr_buf = nb;
	}
	return 0;
}

int corral_docker_map_result(struct corral_result *res, bool captured, const char *cmd,
			     const struct corral_docker_status *st, struct corral_error *err)
{
	int s = res->exit_status;

	res->provider = "docker";
	if (!res->exited || res->timed_out)
		return 0;
	if (st->started && st->exec_errno)
		return exec_failed(res, captured, cmd, st, err);
	if (!st->started) {
		/*
		 * The helper never ran, so neither did the command: whatever
		 * the client printed is docker's own (its "docker: " line for
		 * 125, tini's when it could not start the helper).
		 */
		const char *l = captured && res->stderr_buf ? find_line(res->stderr_buf, res->stderr_len, "docker: ")
							    : NULL;
		size_t n;

		if (!l && captured && res->stderr_buf)
			l = res->stderr_buf;
		if (l && !strncmp(l, "docker: ", 8))
			l += 8;
		n = l ? strcspn(l, "\n") : 0;
		if (n > 400)
			n = 400;
		return corral_err(err, CORRAL_E_PROVIDER, EIO,
				  "docker provider: the container did not run the command (docker exited %d)%s%.*s", s,
				  n ? ": " : captured ? "" : "; docker's message is above", (int)n, l ? l : "");
	}
	/*
	 * tini exits 128+N when the command died of signal N; docker reports
	 * nothing finer, so a command that itself exits 129..192 reads as a signal.
	 */
	if (s > 128 && s <= 128 + 64) {
		res->exited = false;
		res->exit_status = 0;
		res->signal = s - 128;
	}
	return 0;
}
