/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "allow" host list: parsing an entry, classifying a requested host,
 * matching (see allow.h). Pure: inet_pton/inet_aton/inet_ntop read no file.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/allow.h"

static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* A DNS name: labels of [a-z0-9_-], 1..63 bytes, 253 in all; not all-numeric last label. */
static bool valid_name(const char *s)
{
	size_t len = strlen(s), label = 0;
	bool digits_only = true;

	if (len == 0 || len > CORRAL_ALLOW_HOST_MAX)
		return false;
	for (size_t i = 0; i <= len; i++) {
		char c = s[i];

		if (c == '.' || c == '\0') {
			if (label == 0 || label > 63 || s[i - 1] == '-' || s[i - label] == '-')
				return false;
			if (c == '\0')
				break;
			label = 0;
			digits_only = true;
			continue;
		}
		if (!(islower((unsigned char)c) || isdigit((unsigned char)c) || c == '-' || c == '_'))
			return false;
		if (!isdigit((unsigned char)c))
			digits_only = false;
		label++;
	}
	/* "1.2.3" or "10": a resolver reads these as numbers, never as names. */
	return !digits_only;
}

static void lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

static int parse_port(const char *s, unsigned *port)
{
	char *end;
	unsigned long v;

	if (!*s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v == 0 || v > 65535)
		return -EINVAL;
	*port = (unsigned)v;
	return 0;
}

int corral_allow_classify(const char *host, int *family, uint8_t addr[16], char name[CORRAL_ALLOW_HOST_MAX + 1])
{
	char buf[CORRAL_ALLOW_HOST_MAX + 3];
	size_t len = strlen(host);
	struct in_addr a4;

	*family = 0;
	name[0] = '\0';
	memset(addr, 0, 16);
	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	if (host[0] == '[') {
		if (len < 3 || host[len - 1] != ']')
			return -EINVAL;
		memcpy(buf, host + 1, len - 2);
		buf[len - 2] = '\0';
		if (inet_pton(AF_INET6, buf, addr) != 1)
			return -EINVAL;
		goto v6;
	}
	memcpy(buf, host, len + 1);
	if (strchr(buf, ':')) {
		if (inet_pton(AF_INET6, buf, addr) != 1)
			return -EINVAL; /* zone ids ("%eth0") included: never a destination here */
		goto v6;
	}
	lower(buf);
	if (len > 1 && buf[len - 1] == '.')
		buf[--len] = '\0';
	/* Every spelling a resolver takes: "2130706433", "0x7f.1", "0177.0.0.1", "127.1". */
	if (inet_aton(buf, &a4)) {
		*family = 4;
		memcpy(addr, &a4, 4);
		return 0;
	}
	if (!valid_name(buf))
		return -EINVAL;
	memcpy(name, buf, len + 1);
	return 0;
v6:
	/* ::ffff:a.b.c.d is the IPv4 address to every socket that takes it. */
	if (memcmp(addr, v4_mapped, 12) == 0) {
		memmove(addr, addr + 12, 4);
		memset(addr + 4, 0, 12);
		*family = 4;
		return 0;
	}
	*family = 6;
	return 0;
}

int corral_allow_parse(const char *s, struct corral_allow_entry *e, char *canon, size_t canon_len, char *why,
		       size_t why_len)
{
	char buf[CORRAL_ALLOW_HOST_MAX + 16];
	const char *port_s = NULL;
	size_t len = strlen(s);
	char *host = buf;

	memset(e, 0, sizeof(*e));
	if (len == 0 || len >= sizeof(buf)) {
		snprintf(why, why_len, "expected HOST or HOST:PORT (a DNS name, *.suffix or an IP address)");
		return -EINVAL;
	}
	memcpy(buf, s, len + 1);
	if (buf[0] == '[') {
		char *close = strchr(buf, ']');

		if (!close || (close[1] && close[1] != ':')) {
			snprintf(why, why_len, "an IPv6 address with a port is written [ADDRESS]:PORT");
			return -EINVAL;
		}
		if (close[1] == ':')
			port_s = close + 2;
		close[1] = '\0';
	} else {
		char *colon = strchr(buf, ':');

		/* Two colons or more: a bare IPv6 address (no port; bracket it to give one). */
		if (colon && !strchr(colon + 1, ':')) {
			*colon = '\0';
			port_s = colon + 1;
		}
	}
	if (port_s && parse_port(port_s, &e->port) < 0) {
		snprintf(why, why_len, "port must be a number from 1 to 65535");
		return -EINVAL;
	}
	if (strcmp(host, "*") == 0 || strcmp(host, "*.") == 0) {
		snprintf(why, why_len, "\"*\" would allow every host: list the hosts, or use network \"host\"");
		return -EINVAL;
	}
	if (host[0] == '*') {
		int fam;
		uint8_t a[16];

		if (host[1] != '.' ||
		    corral_allow_classify(host + 2, &fam, a, e->host) < 0 || fam != 0 || strchr(host + 2, '*')) {
			snprintf(why, why_len, "a wildcard is written *.example.com (subdomains of one DNS name)");
			return -EINVAL;
		}
		e->kind = CORRAL_ALLOW_SUFFIX;
	} else {
		int fam;
		char plain[CORRAL_ALLOW_HOST_MAX + 3];
		char bare[INET6_ADDRSTRLEN + 2];

		if (corral_allow_classify(host, &fam, e->ip, e->host) < 0) {
			snprintf(why, why_len, "not a DNS name or IP address (names: letters, digits, '-', '_' and dots; "
				 "IPv4 as four decimal numbers; IPv6 in brackets when a port follows)");
			return -EINVAL;
		}
		if (fam == 4) {
			struct in_addr a4;

			/* Only the dotted-decimal spelling in a policy: what it says is what it allows. */
			size_t hl = strlen(host);

			if (hl >= sizeof(plain))
				hl = sizeof(plain) - 1;
			memcpy(plain, host, hl);
			plain[hl] = '\0';
			lower(plain);
			if (inet_pton(AF_INET, plain, &a4) != 1 && !strchr(host, ':')) {
				snprintf(why, why_len, "write an IPv4 address as four decimal numbers (a.b.c.d)");
				return -EINVAL;
			}
			e->kind = CORRAL_ALLOW_IP4;
			inet_ntop(AF_INET, e->ip, e->host, sizeof(e->host));
		} else if (fam == 6) {
			e->kind = CORRAL_ALLOW_IP6;
			inet_ntop(AF_INET6, e->ip, bare, sizeof(bare));
			snprintf(e->host, sizeof(e->host), "%s", bare);
		} else {
			e->kind = CORRAL_ALLOW_NAME;
		}
	}
	if (canon && canon_len) {
		const char *pre = e->kind == CORRAL_ALLOW_SUFFIX ? "*." : "";

		if (e->kind == CORRAL_ALLOW_IP6 && e->port)
			snprintf(canon, canon_len, "[%s]:%u", e->host, e->port);
		else if (e->port)
			snprintf(canon, canon_len, "%s%s:%u", pre, e->host, e->port);
		else
			snprintf(canon, canon_len, "%s%s", pre, e->host);
	}
	return 0;
}

bool corral_allow_port_ok(const struct corral_allow_entry *e, unsigned port)
{
	return e->port ? e->port == port : port == 80 || port == 443;
}

int corral_allow_match_name(const struct corral_allow_entry *v, size_t n, const char *name, unsigned port)
{
	size_t nl = strlen(name);

	for (size_t i = 0; i < n; i++) {
		const struct corral_allow_entry *e = &v[i];

		if (!corral_allow_port_ok(e, port))
			continue;
		if (e->kind == CORRAL_ALLOW_NAME && strcmp(e->host, name) == 0)
			return (int)i;
		if (e->kind == CORRAL_ALLOW_SUFFIX) {
			size_t sl = strlen(e->host);

			/* A subdomain: "a.example.com" for "*.example.com"; never "evil-example.com". */
			if (nl > sl + 1 && name[nl - sl - 1] == '.' && strcmp(name + nl - sl, e->host) == 0)
				return (int)i;
		}
	}
	return -1;
}

int corral_allow_match_ip(const struct corral_allow_entry *v, size_t n, int family, const uint8_t *addr,
			  unsigned port)
{
	for (size_t i = 0; i < n; i++) {
		const struct corral_allow_entry *e = &v[i];

		if (!corral_allow_port_ok(e, port))
			continue;
		if ((family == 4 && e->kind == CORRAL_ALLOW_IP4 && memcmp(e->ip, addr, 4) == 0) ||
		    (family == 6 && e->kind == CORRAL_ALLOW_IP6 && memcmp(e->ip, addr, 16) == 0))
			return (int)i;
	}
	return -1;
}

static bool internal4(const uint8_t *a)
{
	return a[0] == 0 || a[0] == 10 || a[0] == 127 || (a[0] == 100 && (a[1] & 0xc0) == 64) ||
	       (a[0] == 169 && a[1] == 254) || (a[0] == 172 && (a[1] & 0xf0) == 16) ||
	       (a[0] == 192 && a[1] == 168) || (a[0] == 192 && a[1] == 0 && a[2] == 0) ||
	       (a[0] == 198 && (a[1] & 0xfe) == 18) || a[0] >= 224;
}

bool corral_allow_internal(int family, const uint8_t *addr)
{
	static const uint8_t zero[16];
	static const uint8_t nat64[12] = { 0, 0x64, 0xff, 0x9b };

	if (family == 4)
		return internal4(addr);
	if (memcmp(addr, zero, 15) == 0) /* :: and ::1 */
		return true;
	if (memcmp(addr, v4_mapped, 12) == 0 || memcmp(addr, nat64, 12) == 0 || memcmp(addr, zero, 12) == 0)
		return internal4(addr + 12); /* mapped, NAT64, and the old IPv4-compatible form */
	if (addr[0] == 0x20 && addr[1] == 0x02)
		return internal4(addr + 2); /* 6to4 (2002::/16) carries an IPv4 address in bytes 2-5 */
	if (memcmp(addr, nat64, 4) == 0 && addr[4] == 0 && addr[5] == 1)
		return true; /* 64:ff9b:1::/48, local-use NAT64 */
	/* ULA fc00::/7, link-local fe80::/10, the old site-local fec0::/10, multicast ff00::/8 */
	return (addr[0] & 0xfe) == 0xfc || (addr[0] == 0xfe && (addr[1] & 0x80) == 0x80) || addr[0] == 0xff;
}

/* ------------------------------------------------------- policy's side */

/* The fuzzer (tests/fuzz/fuzz-egress-request.c) takes the pure part above only. */
#ifndef CORRAL_ALLOW_PURE
#include "internal/util.h"
#include "policy/policy-private.h"

int corral_allow_add(struct corral_strv *l, const char *name, const char *s, struct corral_error *err)
{
	struct corral_allow_entry e;
	char canon[CORRAL_ALLOW_HOST_MAX + 16], why[200], pr[120];

	if (corral_allow_parse(s, &e, canon, sizeof(canon), why, sizeof(why)) < 0)
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: '%s': %s", name, corral_printable(s, pr, sizeof(pr)),
				  why);
	if (strv_contains(l, canon))
		return 0;
	if (l->n >= 256)
		return corral_err(err, CORRAL_E_POLICY, 0, "%s: more than 256 hosts listed", name);
	if (strv_add(l, canon) < 0)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "%s: out of memory", name);
	return 0;
}
#endif
