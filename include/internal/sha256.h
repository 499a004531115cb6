/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SHA-256 (FIPS 180-4), small and dependency-free: the audit log's
 * policy_sha256. Not for secrets (no constant-time promise needed: the
 * input is the canonical policy text).
 */
#ifndef CORRAL_INTERNAL_SHA256_H
#define CORRAL_INTERNAL_SHA256_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct corral_sha256 {
	uint32_t h[8];
	uint64_t len;        /* bytes hashed so far */
	unsigned char buf[64];
	size_t fill;         /* bytes waiting in buf */
};

static inline uint32_t corral_sha256_ror(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static inline void corral_sha256_block(struct corral_sha256 *c, const unsigned char *p)
{
	static const uint32_t k[64] = {
		0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
		0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
		0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
		0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
		0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
		0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
		0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
		0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
	};
	uint32_t w[64], a, b, cc, d, e, f, g, h;

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
		       (uint32_t)p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = corral_sha256_ror(w[i - 15], 7) ^ corral_sha256_ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = corral_sha256_ror(w[i - 2], 17) ^ corral_sha256_ror(w[i - 2], 19) ^ (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3];
	e = c->h[4], f = c->h[5], g = c->h[6], h = c->h[7];
	for (int i = 0; i < 64; i++) {
		uint32_t s1 = corral_sha256_ror(e, 6) ^ corral_sha256_ror(e, 11) ^ corral_sha256_ror(e, 25);
		uint32_t ch = (e & f) ^ (~e & g);
		uint32_t t1 = h + s1 + ch + k[i] + w[i];
		uint32_t s0 = corral_sha256_ror(a, 2) ^ corral_sha256_ror(a, 13) ^ corral_sha256_ror(a, 22);
		uint32_t maj = (a & b) ^ (a & cc) ^ (b & cc);
		uint32_t t2 = s0 + maj;

		h = g, g = f, f = e, e = d + t1;
		d = cc, cc = b, b = a, a = t1 + t2;
	}
	c->h[0] += a, c->h[1] += b, c->h[2] += cc, c->h[3] += d;
	c->h[4] += e, c->h[5] += f, c->h[6] += g, c->h[7] += h;
}

static inline void corral_sha256_init(struct corral_sha256 *c)
{
	static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
					0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };

	memcpy(c->h, iv, sizeof(iv));
	c->len = 0;
	c->fill = 0;
}

static inline void corral_sha256_update(struct corral_sha256 *c, const void *data, size_t n)
{
	const unsigned char *p = data;

	c->len += n;
	while (n) {
		size_t take = 64 - c->fill < n ? 64 - c->fill : n;

		if (c->fill == 0 && n >= 64) {
			corral_sha256_block(c, p);
			p += 64;
			n -= 64;
			continue;
		}
		memcpy(c->buf + c->fill, p, take);
		c->fill += take;
		p += take;
		n -= take;
		if (c->fill == 64) {
			corral_sha256_block(c, c->buf);
			c->fill = 0;
		}
	}
}

/* The digest as 64 lowercase hex digits and a NUL in |hex|. */
static inline void corral_sha256_final_hex(struct corral_sha256 *c, char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	uint64_t bits = c->len * 8;
	unsigned char pad[72] = { 0x80 };
	size_t padlen = c->fill < 56 ? 56 - c->fill : 120 - c->fill;

	for (int i = 0; i < 8; i++)
		pad[padlen + i] = (unsigned char)(bits >> (56 - 8 * i));
	corral_sha256_update(c, pad, padlen + 8);
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++)
			hex[8 * i + j] = digits[(c->h[i] >> (28 - 4 * j)) & 15];
	hex[64] = '\0';
}

/* SHA-256 of |n| bytes at |data|, as hex. */
static inline void corral_sha256_hex(const void *data, size_t n, char hex[65])
{
	struct corral_sha256 c;

	corral_sha256_init(&c);
	corral_sha256_update(&c, data, n);
	corral_sha256_final_hex(&c, hex);
}

#endif
