/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The egress proxy's request parser: pure, on bytes the sandboxed command
 * sent (untrusted; fuzzed by tests/fuzz/fuzz-egress-request.c).
 *
 *   CONNECT host:port HTTP/1.x        a tunnel (HTTPS, git over TLS, ...)
 *   METHOD http://host[:port]/path HTTP/1.x   plain HTTP, absolute form
 *
 * followed by header lines and an empty line.
 */
#ifndef CORRAL_EGRESS_REQUEST_H
#define CORRAL_EGRESS_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#define CORRAL_EGRESS_HEAD_MAX 16384 /* bytes of request line + headers */

struct corral_egress_req {
	bool connect;          /* CONNECT: a tunnel; else a plain HTTP request to forward */
	char method[24];
	char version[12];      /* "HTTP/1.1" */
	char host[256];        /* as written, brackets of an IPv6 literal removed */
	unsigned port;
	size_t path_off, path_len; /* plain HTTP: the origin-form target ("/x?y") in the buffer */
	size_t headers_off;    /* first header line (after the request line's CRLF) */
	size_t head_len;       /* the whole head, final empty line included */
};

/*
 * Parse the head at the start of |buf| (|len| bytes). 0 when complete
 * (|r| filled), -EAGAIN when more bytes are needed (and |len| is below
 * CORRAL_EGRESS_HEAD_MAX), -EINVAL for a malformed request or an over-long
 * head, -EPROTONOSUPPORT for an absolute URI of another scheme than http.
 */
int corral_egress_parse(const char *buf, size_t len, struct corral_egress_req *r);

/*
 * Whether the header line |line| (|len| bytes, no CRLF) is one the proxy
 * drops when it forwards a plain HTTP request (Proxy-*, Connection,
 * Keep-Alive: it sends its own "Connection: close").
 */
bool corral_egress_hop_header(const char *line, size_t len);

#endif
