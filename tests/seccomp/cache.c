/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The filters precompiled at build time (seccomp/cache.c) are
 * exactly what corral_seccomp_compile_abi produces now, promises included,
 * for every network mode and Landlock ABI; and a policy the table does not
 * hold falls through to a real compile.
 */
#include <stdio.h>
#include <string.h>

#include "policy/policy.h"
#include "seccomp/seccomp.h"
#include "supervisor/exec/sandbox.h"
#include "tests/common.h"

int main(void)
{
	int fails = 0, checked = 0;

	if (!corral_seccomp_available())
		skip_or_fail("seccomp filters unavailable on this kernel");
	for (int net = CORRAL_NET_NONE; net <= CORRAL_NET_HOST; net++)
		for (int abi = 0; abi <= 10; abi++)
		for (int ua = 0; ua <= 1; ua++)
		for (int ho = -1; ho <= 1024; ho += 1025) {
			struct corral_policy *p = NULL;
			struct corral_posture pa = {}, pb = {};
			struct corral_bpf a = {}, b = {};
			struct corral_error err = {};

			if (corral_policy_new(&p) < 0)
				return 1;
			p->network = net;
			if (corral_seccomp_compile_unix(p, abi, ua, ho, &pa, &a, &err) < 0 ||
			    corral_seccomp_compile_cached(p, abi, ua, ho, &pb, &b, &err) < 0) {
				printf("FAIL net %d abi %d: %s\n", net, abi, err.message);
				fails++;
				continue;
			}
			if (a.len == 0 || a.len != b.len || memcmp(a.filter, b.filter, a.len * sizeof(*a.filter))) {
				printf("FAIL net %d abi %d: filters differ (%u vs %u instructions)\n", net, abi, a.len,
				       b.len);
				fails++;
			}
			if (pa.n != pb.n) {
				printf("FAIL net %d abi %d: %zu vs %zu promises\n", net, abi, pa.n, pb.n);
				fails++;
			}
			for (size_t i = 0; i < pa.n && i < pb.n; i++)
				if (strcmp(pa.items[i].id, pb.items[i].id) || pa.items[i].state != pb.items[i].state ||
				    strcmp(pa.items[i].why, pb.items[i].why)) {
					printf("FAIL net %d abi %d: promise %zu differs (%s)\n", net, abi, i,
					       pa.items[i].id);
					fails++;
				}
			checked++;
			corral_bpf_free(&a);
			corral_bpf_free(&b);
			corral_policy_free(p);
		}
	printf("%d combinations checked, %d failures\n", checked, fails);
	return fails ? 1 : 0;
}
