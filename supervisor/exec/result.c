/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A run's result: the conventional exit code and the JSON object of DESIGN.md. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal/utf8.h"
#include "internal/util.h"
#include "supervisor/exec/result.h"

void corral_result_reset(struct corral_result *res)
{
	size_t sz = res->sz < sizeof(*res) ? res->sz : sizeof(*res);

	if (sz > sizeof(res->sz))
		memset((char *)res + sizeof(res->sz), 0, sz - sizeof(res->sz));
}

_public_ void corral_result_clear(struct corral_result *res)
{
	/* Smaller: never filled by the library (corral_sandbox_exec refuses it), nothing to free. */
	if (!res || res->sz < CORRAL_RESULT_SZ_MIN)
		return;
	free(res->stdout_buf);
	free(res->stderr_buf);
	free(res->exec_interp);
	for (size_t i = 0; i < res->n_denials; i++) {
		free(res->denials[i].what);
		free(res->denials[i].hint);
	}
	free(res->denials);
	for (size_t i = 0; i < res->n_warnings; i++)
		free(res->warnings[i]);
	free(res->warnings);
	corral_result_reset(res);
}

_public_ int corral_result_exit_code(const struct corral_result *res)
{
	if (res->sz < CORRAL_RESULT_SZ_MIN)
		return 125;
	if (res->timed_out)
		return 124;
	if (res->exec_errno) /* 126 when the file is there (a missing interpreter): DESIGN.md */
		return res->exec_errno == ENOENT && !res->exec_interp ? 127 : 126;
	if (res->signal > 0)
		return 128 + res->signal;
	if (res->exited)
		return res->exit_status;
	return 125;
}

struct sbuf {
	char *p;
	size_t len, alloc;
	bool oom;
	bool count_only; /* first pass: only measure, so the text is allocated once */
	bool compact;    /* no space after the separators of the text's own punctuation */
	FILE *f;         /* stream straight to |f| instead */
};

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->count_only) {
		b->len += n;
		return;
	}
	if (b->f) {
		if (n && fwrite(s, 1, n, b->f) != n)
			b->oom = true;
		return;
	}
	if (b->len + n + 1 > b->alloc) {
		size_t na = b->alloc ? b->alloc : 256;
		char *np;

		while (na < b->len + n + 1)
			na *= 2;
		np = realloc(b->p, na);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->alloc = na;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* The result's own text (keys, punctuation, numbers; never the command's), compacted when asked. */
static void sb_puts(struct sbuf *b, const char *s)
{
	if (!b->compact) {
		sb_put(b, s, strlen(s));
		return;
	}
	while (*s) {
		size_t n = strcspn(s, ",:");

		if (s[n])
			n++;
		sb_put(b, s, n);
		s += n;
		if (*s == ' ' && (s[-1] == ',' || s[-1] == ':'))
			s++;
	}
}

/*
 * Escapes are gathered in a local buffer and put in one piece, not one
 * sb_put (and so one fwrite) each: 1 MiB of NUL bytes is a million "\u0000"s.
 */
struct esc_buf {
	char p[1024];
	size_t n;
};

static void esc_flush(struct sbuf *b, struct esc_buf *e)
{
	sb_put(b, e->p, e->n);
	e->n = 0;
}

static void esc_put(struct sbuf *b, struct esc_buf *e, const char *s, size_t n)
{
	if (e->n + n > sizeof(e->p))
		esc_flush(b, e);
	memcpy(e->p + e->n, s, n);
	e->n += n;
}

static void sb_json_string(struct sbuf *b, const char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)buf;
	size_t i = 0, run = 0, bad;
	struct esc_buf e = { .n = 0 };

	sb_put(b, "\"", 1);
	while (i < len) {
		unsigned char c = s[i];
		int k;

		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			if (!run && e.n)
				esc_flush(b, &e);
			run++;
			i++;
			continue;
		}
		sb_put(b, (const char *)s + i - run, run);
		run = 0;
		if (c < 0x80) {
			switch (c) {
			case '"': esc_put(b, &e, "\\\"", 2); break;
			case '\\': esc_put(b, &e, "\\\\", 2); break;
			case '\n': esc_put(b, &e, "\\n", 2); break;
			case '\r': esc_put(b, &e, "\\r", 2); break;
			case '\t': esc_put(b, &e, "\\t", 2); break;
			case '\b': esc_put(b, &e, "\\b", 2); break;
			case '\f': esc_put(b, &e, "\\f", 2); break;
			default: {
				char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

				esc_put(b, &e, u, 6);
			}
			}
			i++;
			continue;
		}
		k = corral_utf8_seq(s + i, len - i, &bad);
		if (k > 0) {
			esc_flush(b, &e);
			sb_put(b, (const char *)s + i, (size_t)k);
			i += (size_t)k;
		} else {
			esc_put(b, &e, "\xEF\xBF\xBD", 3); /* one U+FFFD per maximal subpart */
			i += bad;
		}
	}
	esc_flush(b, &e);
	sb_put(b, (const char *)s + i - run, run);
	sb_put(b, "\"", 1);
}

static void sb_ms(struct sbuf *b, double v)
{
	char num[64];
	size_t n;

	if (!(v >= 0) || v > 1e15)
		v = 0;
	n = (size_t)snprintf(num, sizeof(num), "%.3f", v);
	while (n > 2 && num[n - 1] == '0' && num[n - 2] != '.')
		num[--n] = '\0';
	sb_put(b, num, n);
}

static void build_json(struct sbuf *b, const struct corral_result *res);

static char *result_json(const struct corral_result *res, bool compact)
{
	struct sbuf count = { .count_only = true, .compact = compact }, b = { .compact = compact };

	if (res->sz < CORRAL_RESULT_SZ_MIN)
		return NULL;
	/* Two passes: the output can be several times the captured bytes (\u0000). */
	build_json(&count, res);
	b.p = malloc(count.len + 1);
	if (!b.p)
		return NULL;
	b.alloc = count.len + 1;
	b.p[0] = '\0';
	build_json(&b, res);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

_public_ char *corral_result_json(const struct corral_result *res)
{
	return result_json(res, false);
}

char *corral_result_json_compact(const struct corral_result *res)
{
	return result_json(res, true);
}

_public_ int corral_result_json_fprint(const struct corral_result *res, FILE *f)
{
	struct sbuf b = { .f = f };

	if (res->sz < CORRAL_RESULT_SZ_MIN)
		return -EINVAL;
	build_json(&b, res);
	return b.oom ? -EIO : 0;
}

static void sb_json_cstr(struct sbuf *b, const char *s)
{
	s = s ? s : "";
	sb_json_string(b, s, strlen(s));
}

/* "2026-12-03T09:00:00.123Z": RFC 3339, UTC, milliseconds; null for no time. */
static void sb_rfc3339(struct sbuf *b, int64_t ms)
{
	time_t secs = (time_t)(ms / 1000);
	struct tm tm;
	char buf[48];
	size_t n;

	if (ms <= 0 || !gmtime_r(&secs, &tm) || !(n = strftime(buf, sizeof(buf), "\"%Y-%m-%dT%H:%M:%S", &tm))) {
		sb_puts(b, "null");
		return;
	}
	snprintf(buf + n, sizeof(buf) - n, ".%03dZ\"", (int)(ms % 1000));
	sb_puts(b, buf);
}

static void build_json(struct sbuf *b_, const struct corral_result *res)
{
	struct sbuf *b = b_;
	char num[64];

	sb_puts(b, "{\"run_id\": ");
	sb_json_cstr(b, res->run_id);
	sb_puts(b, ", \"started_at\": ");
	sb_rfc3339(b, res->started_at_ms);
	sb_puts(b, ", \"exit_status\": ");
	if (res->exited && !res->timed_out) {
		snprintf(num, sizeof(num), "%d", res->exit_status);
		sb_puts(b, num);
	} else {
		sb_puts(b, "null");
	}
	sb_puts(b, ", \"signal\": ");
	if (res->signal > 0) {
		snprintf(num, sizeof(num), "%d", res->signal);
		sb_puts(b, num);
	} else {
		sb_puts(b, "null");
	}
	sb_puts(b, res->timed_out ? ", \"timed_out\": true" : ", \"timed_out\": false");
	sb_puts(b, ", \"ended_by\": ");
	sb_json_cstr(b, res->ended_by ? res->ended_by : "exit");
	sb_puts(b, ", \"stdout\": ");
	sb_json_string(b, res->stdout_buf ? res->stdout_buf : "", res->stdout_len);
	sb_puts(b, ", \"stderr\": ");
	sb_json_string(b, res->stderr_buf ? res->stderr_buf : "", res->stderr_len);
	sb_puts(b, res->stdout_truncated ? ", \"stdout_truncated\": true" : ", \"stdout_truncated\": false");
	sb_puts(b, res->stderr_truncated ? ", \"stderr_truncated\": true" : ", \"stderr_truncated\": false");
	snprintf(num, sizeof(num), ", \"stdout_bytes\": %" PRIu64 ", \"stderr_bytes\": %" PRIu64, res->stdout_bytes,
		 res->stderr_bytes);
	sb_puts(b, num);
	sb_puts(b, ", \"wall_ms\": ");
	sb_ms(b, res->wall_ms);
	sb_puts(b, ", \"cpu_ms\": ");
	sb_ms(b, res->cpu_ms);
	snprintf(num, sizeof(num), ", \"max_rss_kb\": %ld", res->max_rss_kb);
	sb_puts(b, num);
	sb_puts(b, ", \"provider\": ");
	sb_json_string(b, res->provider ? res->provider : "local", strlen(res->provider ? res->provider : "local"));
	snprintf(num, sizeof(num), ", \"leftovers_killed\": %u", res->leftovers_killed);
	sb_puts(b, num);
	sb_puts(b, ", \"denials\": [");
	for (size_t i = 0; i < res->n_denials; i++) {
		const struct corral_denial *d = &res->denials[i];

		sb_puts(b, i ? ", {\"kind\": " : "{\"kind\": ");
		sb_json_cstr(b, d->kind);
		sb_puts(b, ", \"what\": ");
		sb_json_cstr(b, d->what);
		snprintf(num, sizeof(num), ", \"count\": %lu, \"source\": ", d->count);
		sb_puts(b, num);
		sb_json_cstr(b, d->source);
		sb_puts(b, ", \"hint\": ");
		sb_json_cstr(b, d->hint);
		sb_puts(b, "}");
	}
	sb_puts(b, "], \"warnings\": [");
	for (size_t i = 0; i < res->n_warnings; i++) {
		if (i)
			sb_puts(b, ", ");
		sb_json_cstr(b, res->warnings[i]);
	}
	sb_puts(b, "]}");
}

_public_ int corral_result_exec_error(const struct corral_result *res, const char *name, char *buf, size_t len)
{
	return corral_exec_error_line(res, name, buf, len);
}
