/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A captured stream: the head in a buffer that grows to half the cap, then
 * the tail in a ring of the other half, so a build that prints 1 GiB costs
 * the supervisor the cap and no more, and the end of the log (where the
 * error is) survives. read(2) goes straight into the head or the ring:
 * no byte is copied before the end of the run.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal/utf8.h"
#include "internal/util.h"
#include "supervisor/exec/stream.h"

#define READ_CHUNK 65536
#define FIRST_ALLOC 16384

void corral_stream_init(struct corral_stream *s, int fd, size_t cap)
{
	*s = (struct corral_stream){ .fd = fd };
	if (cap == SIZE_MAX) {
		s->head_max = SIZE_MAX - 1; /* the head holds head_max + 1 bytes (the NUL) */
	} else {
		s->head_max = cap / 2;
		s->tail_max = cap - cap / 2;
	}
}

/* Grow |*buf| to hold at least |need| bytes, doubling, never past |max|. False on ENOMEM. */
static bool grow(char **buf, size_t *alloc, size_t need, size_t max)
{
	size_t na = *alloc ? *alloc : FIRST_ALLOC;
	char *nb;

	while (na < need && na <= SIZE_MAX / 2)
		na *= 2;
	if (na < need || na > max)
		na = need > max ? need : max;
	nb = realloc(*buf, na);
	if (!nb)
		return false;
	*buf = nb;
	*alloc = na;
	return true;
}

char *corral_stream_span(struct corral_stream *s, size_t *len)
{
	size_t want = *len;

	assert(s->head_len <= s->head_max && s->tail_len <= s->tail_max && want > 0);
	if (s->head_len < s->head_max) {
		if (want > s->head_max - s->head_len)
			want = s->head_max - s->head_len;
		if (s->head_alloc >= s->head_len + want + 1 ||
		    grow(&s->head, &s->head_alloc, s->head_len + want + 1, s->head_max + 1)) {
			*len = want;
			return s->head + s->head_len;
		}
		/* No memory: the head ends here; what follows goes to the tail, or is left out. */
		s->head_max = s->head_len;
	}
	if (s->tail_len < s->tail_max) {
		if (s->tail_len == s->tail_alloc && !grow(&s->tail, &s->tail_alloc, s->tail_len + 1, s->tail_max))
			s->tail_max = s->tail_len; /* no memory: the ring is what there is */
		else {
			if (want > s->tail_alloc - s->tail_len)
				want = s->tail_alloc - s->tail_len;
			*len = want;
			return s->tail + s->tail_len;
		}
	}
	if (s->tail_max == 0)
		return NULL;
	/* The ring is full: overwrite its oldest bytes. */
	if (want > s->tail_max - s->tail_pos)
		want = s->tail_max - s->tail_pos;
	*len = want;
	return s->tail + s->tail_pos;
}

/* Same conditions as corral_stream_span, which was called last: the same region. */
void corral_stream_commit(struct corral_stream *s, size_t n)
{
	s->total += n;
	if (s->head_len < s->head_max) {
		s->head_len += n;
		assert(s->head_len <= s->head_max && s->head_len < s->head_alloc);
	} else if (s->tail_len < s->tail_max) {
		s->tail_len += n;
		assert(s->tail_len <= s->tail_alloc);
	} else {
		assert(s->tail_max > 0 && s->tail_pos + n <= s->tail_max);
		s->tail_pos = (s->tail_pos + n) % s->tail_max;
	}
}

void corral_stream_skip(struct corral_stream *s, size_t n)
{
	s->total += n;
}

void corral_stream_add(struct corral_stream *s, const char *d, size_t n)
{
	while (n) {
		size_t l = n;
		char *p = corral_stream_span(s, &l);

		if (!p) {
			corral_stream_skip(s, n);
			return;
		}
		memcpy(p, d, l);
		corral_stream_commit(s, l);
		d += l;
		n -= l;
	}
}

void corral_stream_set(struct corral_stream *s, const char *text, size_t len)
{
	free(s->head);
	free(s->tail);
	s->tail = NULL;
	s->tail_len = s->tail_alloc = s->tail_pos = 0;
	s->head = malloc(len + 1);
	s->head_len = s->head ? len : 0;
	s->head_alloc = s->head ? len + 1 : 0;
	if (s->head)
		memcpy(s->head, text, len);
	s->total = s->head_len;
}

int corral_stream_read(struct corral_stream *s)
{
	char scratch[READ_CHUNK];

	if (s->fd < 0)
		return CORRAL_STREAM_DONE;
	for (int i = 0; i < 64; i++) {
		size_t len = READ_CHUNK;
		char *p = corral_stream_span(s, &len);
		ssize_t n = read(s->fd, p ? p : scratch, p ? len : sizeof(scratch));

		if (n > 0) {
			if (p)
				corral_stream_commit(s, (size_t)n);
			else
				corral_stream_skip(s, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return CORRAL_STREAM_AGAIN;
		s->fd = safe_close(s->fd);
		return CORRAL_STREAM_DONE;
	}
	return CORRAL_STREAM_MORE;
}

/* Where the head may end without cutting a character: before a valid but incomplete last sequence. */
static size_t head_cut(const char *b, size_t n)
{
	for (size_t back = 1; back <= 4 && back <= n; back++) {
		const unsigned char *c = (const unsigned char *)b + n - back;
		size_t bad;

		if ((*c & 0xC0) == 0x80)
			continue; /* a continuation byte: look for its lead */
		return corral_utf8_seq(c, back, &bad) < 0 ? n - back : n;
	}
	return n;
}

/* Where the tail may start: past the continuation bytes of a character whose start was overwritten. */
static size_t tail_start(const char *b, size_t n)
{
	size_t i = 0;

	while (i < 3 && i < n && ((unsigned char)b[i] & 0xC0) == 0x80)
		i++;
	return i;
}

void corral_stream_finish(struct corral_stream *s, char **buf, size_t *len, bool *clipped, uint64_t *total)
{
	uint64_t omitted = s->total - s->head_len - s->tail_len;
	size_t hl = s->head_len, ts = 0, tl = s->tail_len, ml = 0, n;
	char marker[96], *out;

	assert(s->total >= (uint64_t)s->head_len + s->tail_len);
	*total = s->total;
	*clipped = omitted > 0;
	if (tl) {
		/* The ring in order: the oldest byte first. */
		if (s->tail_pos) {
			char *lin = malloc(tl);

			if (lin) {
				memcpy(lin, s->tail + s->tail_pos, tl - s->tail_pos);
				memcpy(lin + tl - s->tail_pos, s->tail, s->tail_pos);
				free(s->tail);
				s->tail = lin;
			} else {
				/* No memory for the order: only the part after the oldest byte, in order. */
				memmove(s->tail, s->tail + s->tail_pos, tl - s->tail_pos);
				omitted += s->tail_pos;
				tl -= s->tail_pos;
				*clipped = true;
			}
			s->tail_pos = 0;
		}
	}
	if (omitted) {
		hl = head_cut(s->head, s->head_len);
		ts = tail_start(s->tail, tl);
		omitted += (s->head_len - hl) + ts;
		ml = (size_t)snprintf(marker, sizeof(marker), "%s[\xE2\x80\xA6 %" PRIu64 " bytes omitted \xE2\x80\xA6]\n",
				      hl && s->head[hl - 1] != '\n' ? "\n" : "", omitted);
	}
	n = hl + ml + (tl - ts);
	if (n + 1 <= s->head_alloc) {
		out = s->head;
	} else {
		out = realloc(s->head, n + 1);
		if (!out) {
			/* Keep what the head has. */
			*clipped = *clipped || tl > 0;
			out = s->head;
			n = hl = out ? s->head_len : 0;
			ml = tl = ts = 0;
		}
	}
	s->head = NULL;
	if (!out)
		out = calloc(1, 1);
	if (out) {
		if (ml)
			memcpy(out + hl, marker, ml);
		if (tl > ts)
			memcpy(out + hl + ml, s->tail + ts, tl - ts);
		out[n] = '\0';
	}
	*buf = out;
	*len = out ? n : 0;
	free(s->tail);
	s->tail = NULL;
	s->head_len = s->head_alloc = s->tail_len = s->tail_alloc = s->tail_pos = 0;
}

void corral_stream_free(struct corral_stream *s)
{
	s->fd = safe_close(s->fd);
	free(s->head);
	free(s->tail);
	s->head = s->tail = NULL;
}
