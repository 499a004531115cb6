/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The egress proxy's request parser (request.h). Pure. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "supervisor/local/egress/request.h"

/* The end of the head: the offset just past "\r\n\r\n" (or "\n\n"), or 0. */
static size_t head_end(const char *buf, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (buf[i + 1] == '\n')
			return i + 2;
		if (buf[i + 1] == '\r' && i + 2 < len && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

static int parse_port(const char *s, size_t n, unsigned *port)
{
	unsigned v = 0;

	if (n == 0 || n > 5)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -EINVAL;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return -EINVAL;
	*port = v;
	return 0;
}

/* "host:port", "[v6]:port", or (|need_port| false) a bare host: into |r|. */
static int parse_authority(const char *s, size_t n, bool need_port, unsigned dflt, struct corral_egress_req *r)
{
	const char *host = s, *colon = NULL;
	size_t hl;

	if (n == 0)
		return -EINVAL;
	if (s[0] == '[') {
		const char *close = memchr(s, ']', n);

		if (!close)
			return -EINVAL;
		host = s + 1;
		hl = (size_t)(close - host);
		if (close + 1 < s + n) {
			if (close[1] != ':')
				return -EINVAL;
			colon = close + 1;
		}
	} else {
		colon = memchr(s, ':', n);
		hl = colon ? (size_t)(colon - s) : n;
		if (colon && memchr(colon + 1, ':', (size_t)(s + n - colon - 1)))
			return -EINVAL; /* an unbracketed IPv6 literal */
	}
	if (hl == 0 || hl >= sizeof(r->host))
		return -EINVAL;
	for (size_t i = 0; i < hl; i++) {
		unsigned char c = (unsigned char)host[i];

		/* Userinfo ("a@b"), percent-escapes and controls are no part of a host we resolve. */
		if (!(isalnum(c) || c == '.' || c == '-' || c == '_' || c == ':'))
			return -EINVAL;
	}
	memcpy(r->host, host, hl);
	r->host[hl] = '\0';
	if (colon)
		return parse_port(colon + 1, (size_t)(s + n - colon - 1), &r->port);
	if (need_port)
		return -EINVAL;
	r->port = dflt;
	return 0;
}

int corral_egress_parse(const char *buf, size_t len, struct corral_egress_req *r)
{
	size_t end, line_end, i = 0, mlen, tstart, tlen, vstart;

	memset(r, 0, sizeof(*r));
	if (len > CORRAL_EGRESS_HEAD_MAX)
		len = CORRAL_EGRESS_HEAD_MAX;
	end = head_end(buf, len);
	if (!end)
		return len >= CORRAL_EGRESS_HEAD_MAX ? -EINVAL : -EAGAIN;
	line_end = (size_t)((const char *)memchr(buf, '\n', end) - buf);
	r->headers_off = line_end + 1;
	r->head_len = end;
	if (line_end > 0 && buf[line_end - 1] == '\r')
		line_end--;

	/* METHOD SP target SP HTTP/1.x */
	while (i < line_end && isupper((unsigned char)buf[i]))
		i++;
	mlen = i;
	if (mlen == 0 || mlen >= sizeof(r->method) || i >= line_end || buf[i] != ' ')
		return -EINVAL;
	memcpy(r->method, buf, mlen);
	tstart = ++i;
	while (i < line_end && buf[i] != ' ')
		if ((unsigned char)buf[i++] < 0x21)
			return -EINVAL;
	tlen = i - tstart;
	if (tlen == 0 || i >= line_end)
		return -EINVAL;
	vstart = i + 1;
	if (line_end - vstart != 8 || memcmp(buf + vstart, "HTTP/1.", 7) != 0 ||
	    (buf[vstart + 7] != '0' && buf[vstart + 7] != '1'))
		return -EINVAL;
	memcpy(r->version, buf + vstart, 8);

	if (strcmp(r->method, "CONNECT") == 0) {
		r->connect = true;
		return parse_authority(buf + tstart, tlen, true, 0, r);
	}
	/* Absolute form only: a proxy is asked for http://host/...; origin form is no request to a proxy. */
	if (tlen < 7 || strncasecmp(buf + tstart, "http://", 7) != 0) {
		const char *sep = memchr(buf + tstart, ':', tlen);

		return sep && sep + 2 < buf + tstart + tlen && sep[1] == '/' && sep[2] == '/' ? -EPROTONOSUPPORT :
											   -EINVAL;
	}
	{
		const char *auth = buf + tstart + 7, *stop = buf + tstart + tlen, *p = auth;

		while (p < stop && *p != '/' && *p != '?' && *p != '#')
			p++;
		if (parse_authority(auth, (size_t)(p - auth), false, 80, r) < 0)
			return -EINVAL;
		r->path_off = (size_t)(p - buf);
		r->path_len = (size_t)(stop - p);
	}
	return 0;
}

bool corral_egress_hop_header(const char *line, size_t len)
{
	static const char *const hop[] = { "proxy-", "connection:", "keep-alive:" };

	for (size_t i = 0; i < sizeof(hop) / sizeof(hop[0]); i++) {
		size_t n = strlen(hop[i]);

		if (len >= n && strncasecmp(line, hop[i], n) == 0)
			return true;
	}
	return false;
}
