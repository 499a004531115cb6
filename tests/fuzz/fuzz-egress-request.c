/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The egress proxy's request parser (supervisor/local/egress/request.c) on
 * arbitrary bytes a sandboxed command could send, and the host it yields
 * taken further as the proxy would (classified, matched against a list).
 * Invariants: offsets stay inside the input, the host is a C string that
 * fits, a complete head never ends past the input.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/allow.h"
#include "supervisor/local/egress/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct corral_allow_entry list[3];
	static int ready;
	struct corral_egress_req rq;
	char name[CORRAL_ALLOW_HOST_MAX + 1];
	uint8_t addr[16];
	int r, fam;

	if (!ready) {
		char why[200];

		corral_allow_parse("*.example.org:443", &list[0], NULL, 0, why, sizeof(why));
		corral_allow_parse("10.0.0.5", &list[1], NULL, 0, why, sizeof(why));
		corral_allow_parse("[::1]:8080", &list[2], NULL, 0, why, sizeof(why));
		ready = 1;
	}
	r = corral_egress_parse((const char *)data, size, &rq);
	if (r != 0 && r != -EAGAIN && r != -EINVAL && r != -EPROTONOSUPPORT)
		abort();
	if (r != 0)
		return 0;
	if (rq.head_len > size || rq.headers_off > rq.head_len || rq.path_off + rq.path_len > size ||
	    strlen(rq.host) >= sizeof(rq.host) || rq.port == 0 || rq.port > 65535)
		abort();
	if (corral_allow_classify(rq.host, &fam, addr, name) == 0) {
		if (fam)
			(void)corral_allow_match_ip(list, 3, fam, addr, rq.port), (void)corral_allow_internal(fam, addr);
		else if (strlen(name) > CORRAL_ALLOW_HOST_MAX)
			abort();
		else
			(void)corral_allow_match_name(list, 3, name, rq.port);
	}
	for (size_t i = rq.headers_off; i < rq.head_len;) {
		const char *nl = memchr(data + i, '\n', rq.head_len - i);

		if (!nl)
			abort(); /* a complete head ends each line */
		(void)corral_egress_hop_header((const char *)data + i, (size_t)(nl - (const char *)data) - i);
		i = (size_t)(nl - (const char *)data) + 1;
	}
	return 0;
}
