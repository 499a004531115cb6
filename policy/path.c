/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Path math, written once (path.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy/path.h"

int corral_path_normalise(char *p, unsigned flags)
{
	char *out = p, *in = p;

	if (!p || p[0] != '/')
		return -EINVAL;
	/* Each component consumes at least "/" plus itself: |out| never passes |in|. */
	while (*in) {
		size_t n;

		while (*in == '/')
			in++;
		if (!*in)
			break;
		n = strcspn(in, "/");
		if (n == 1 && in[0] == '.') {
			in++;
			continue;
		}
		if (n == 2 && in[0] == '.' && in[1] == '.' && (flags & CORRAL_PATH_DOTDOT)) {
			in += 2;
			while (out > p && *--out != '/')
				;
			continue;
		}
		*out++ = '/';
		memmove(out, in, n);
		out += n;
		in += n;
	}
	if (out == p)
		*out++ = '/';
	*out = '\0';
	return 0;
}

char *corral_path_normalised(const char *p, unsigned flags)
{
	char *s;

	if (!p || p[0] != '/')
		return NULL;
	s = strdup(p);
	if (s)
		corral_path_normalise(s, flags);
	return s;
}

/* The next component of *|s| (skipping "" and "."), its length in *|n|; NULL at the end. */
static const char *next_component(const char **s, size_t *n)
{
	for (;;) {
		const char *c = *s;

		while (*c == '/')
			c++;
		if (!*c) {
			*s = c;
			return NULL;
		}
		*n = strcspn(c, "/");
		*s = c + *n;
		if (*n == 1 && c[0] == '.')
			continue;
		return c;
	}
}

static bool is_dotdot(const char *c, size_t n)
{
	return n == 2 && c[0] == '.' && c[1] == '.';
}

bool corral_path_contains(const char *parent, const char *child)
{
	const char *pc, *cc;
	size_t pn, cn;

	if (!parent || !child || parent[0] != '/' || child[0] != '/')
		return false;
	for (const char *s = child; (cc = next_component(&s, &cn));)
		if (is_dotdot(cc, cn))
			return false;
	for (;;) {
		pc = next_component(&parent, &pn);
		if (!pc)
			return true;
		if (is_dotdot(pc, pn))
			return false;
		cc = next_component(&child, &cn);
		if (!cc || cn != pn || memcmp(pc, cc, pn) != 0)
			return false;
	}
}
