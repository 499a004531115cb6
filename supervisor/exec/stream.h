/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One captured output stream of a run: its head and its tail within a
 * cap, in memory that stays within the cap however much the command
 * writes (a ring for the tail), and the count of every byte it wrote.
 */
#ifndef CORRAL_EXEC_STREAM_H
#define CORRAL_EXEC_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct corral_stream {
	int fd;          /* read end (non-blocking), or -1 */
	size_t head_max; /* the first bytes kept: half the cap */
	size_t tail_max; /* the last bytes kept after those: the other half */
	char *head;
	size_t head_len, head_alloc;
	char *tail;      /* a ring once tail_len == tail_max: the oldest byte at tail_pos */
	size_t tail_len, tail_alloc, tail_pos;
	uint64_t total;  /* every byte the stream carried */
};

/* |cap|: bytes kept in all (SIZE_MAX: no cap, everything kept). Takes |fd|. */
void corral_stream_init(struct corral_stream *s, int fd, size_t cap);

/*
 * Where the next bytes go: at most *|len| (updated) contiguous bytes of
 * the head or the tail ring, allocated on demand; NULL when nothing more
 * is kept (no tail, or no memory): read them anywhere and pass them to
 * corral_stream_skip. Then corral_stream_commit the bytes that landed.
 */
char *corral_stream_span(struct corral_stream *s, size_t *len);
void corral_stream_commit(struct corral_stream *s, size_t n);
void corral_stream_skip(struct corral_stream *s, size_t n);
/* |n| bytes read elsewhere, kept as the stream keeps what it reads (span, copy, commit; skip the rest). */
void corral_stream_add(struct corral_stream *s, const char *d, size_t n);

/* Replace what was kept by |text| (a message that stands for the stream). */
void corral_stream_set(struct corral_stream *s, const char *text, size_t len);

enum { CORRAL_STREAM_DONE = 0, CORRAL_STREAM_AGAIN = 1, CORRAL_STREAM_MORE = 2 };

/*
 * Read what the fd has, a bounded amount per call (so one stream cannot
 * starve the loop). DONE: EOF or error (the fd is closed, or there was
 * none); AGAIN: nothing more for now; MORE: there may be more.
 */
int corral_stream_read(struct corral_stream *s);

/*
 * The kept text, NUL-terminated, in *|buf| (malloc'd; the caller owns it;
 * NULL only on ENOMEM): everything when it fit the cap, else the head,
 * one line "[… N bytes omitted …]" and the tail, neither cut inside a
 * UTF-8 character (the marker is not counted against the cap; N counts
 * every byte left out). *|clipped|: bytes were left out. *|total|: every
 * byte the stream carried. The stream keeps nothing after.
 */
void corral_stream_finish(struct corral_stream *s, char **buf, size_t *len, bool *clipped, uint64_t *total);

/* Free what |s| holds and close its fd. */
void corral_stream_free(struct corral_stream *s);

#endif
