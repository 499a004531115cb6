/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Network "allow": the host list (policy key "allow", `--allow HOST[:PORT]`)
 * and the matcher the egress proxy asks (supervisor/local/egress/). Pure:
 * no syscall, no name resolution; the unit tests and the proxy share it.
 *
 * An entry is a DNS name ("pypi.org"), a suffix ("*.npmjs.org": subdomains
 * only, never "npmjs.org" itself nor "evil-npmjs.org"), an IPv4 literal in
 * dotted decimal, or an IPv6 literal (bracketed when a port follows),
 * optionally followed by ":PORT". Without a port an entry allows 80 and 443.
 */
#ifndef CORRAL_POLICY_ALLOW_H
#define CORRAL_POLICY_ALLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CORRAL_ALLOW_HOST_MAX 253

enum corral_allow_kind {
	CORRAL_ALLOW_NAME = 1,   /* exact DNS name */
	CORRAL_ALLOW_SUFFIX,     /* "*.suffix": |host| is the suffix without "*." */
	CORRAL_ALLOW_IP4,
	CORRAL_ALLOW_IP6,
};

struct corral_allow_entry {
	int kind;                              /* enum corral_allow_kind */
	char host[CORRAL_ALLOW_HOST_MAX + 1];  /* lower case, no trailing dot; an IP's canonical text */
	uint8_t ip[16];                        /* IP4: the first 4 bytes */
	unsigned port;                         /* 0: 80 and 443 */
};

/*
 * Parse one entry. 0, or -EINVAL with |why| (one line, naming what to
 * write instead). The canonical spelling of the entry goes to |canon|
 * (at least CORRAL_ALLOW_HOST_MAX + 16 bytes) when non-NULL.
 */
int corral_allow_parse(const char *s, struct corral_allow_entry *e, char *canon, size_t canon_len, char *why,
		       size_t why_len);

/* Whether |e| allows port |port|. */
bool corral_allow_port_ok(const struct corral_allow_entry *e, unsigned port);

/*
 * What a requested host is: an IP literal in any spelling a resolver would
 * take (dotted decimal, but also "2130706433", "0x7f.1", octal, "::ffff:
 * 127.0.0.1", "[::1]") — |family| 4 or 6 and |addr| (an IPv4-mapped IPv6
 * address is reported as IPv4) — or a name (|family| 0), lower-cased into
 * |name| without a trailing dot. -EINVAL for a host no name or address can be.
 */
int corral_allow_classify(const char *host, int *family, uint8_t addr[16], char name[CORRAL_ALLOW_HOST_MAX + 1]);

/* The first entry of |v| allowing the name |name| (as classify gives it) on |port|, or -1. */
int corral_allow_match_name(const struct corral_allow_entry *v, size_t n, const char *name, unsigned port);

/* The first IP-literal entry of |v| that is exactly |addr| (family 4 or 6) and allows |port|, or -1. */
int corral_allow_match_ip(const struct corral_allow_entry *v, size_t n, int family, const uint8_t *addr,
			  unsigned port);

/*
 * Whether an address is one a listed name must not resolve to unless it is
 * listed literally (DNS rebinding): unspecified, loopback, private
 * (10/8, 172.16/12, 192.168/16, 100.64/10, 198.18/15, fc00::/7, fec0::/10,
 * 64:ff9b:1::/48), link-local (169.254/16, fe80::/10), multicast, reserved
 * (240/4, broadcast), and the same inside IPv4-mapped, NAT64 (64:ff9b::/96)
 * and 6to4 (2002::/16) IPv6 addresses.
 */
bool corral_allow_internal(int family, const uint8_t *addr);

#endif
