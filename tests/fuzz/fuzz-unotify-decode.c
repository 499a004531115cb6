/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Unix-socket mediation's decoder (supervisor/local/unotify/decode.c)
 * on arbitrary notifications and caller memory. Input: one byte choosing
 * the syscall, one the socket's family, six 64-bit arguments, then the
 * caller's memory, mapped at address 0 (arguments and the pointers inside
 * a msghdr or an iovec are offsets into it; anything past it faults).
 * Every decoded request is taken further as the supervisor would: its
 * control block walked, its address classified and a pathname normalised.
 * Invariants checked: lengths never exceed their buffers.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "supervisor/local/unotify/decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct image {
	const uint8_t *p;
	size_t len;
};

static int image_read(void *ctx, uint64_t remote, void *local, size_t len)
{
	const struct image *im = ctx;

	if (remote > im->len || len > im->len - remote)
		return -EFAULT;
	memcpy(local, im->p + remote, len);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int nrs[] = { __NR_connect, __NR_sendto, __NR_sendmsg, __NR_sendmmsg, __NR_socket,
				   __NR_ioctl, __NR_write };
	static const int domains[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK };
	static struct corral_un_req req;
	static uint8_t payload[4096];
	struct seccomp_data d = {};
	struct image im;
	int rights[252];
	uint8_t pass[CORRAL_UN_CONTROL_MAX];
	size_t n_rights, pass_len;
	char name[sizeof(((struct sockaddr_un *)0)->sun_path) + 2];
	char path[sizeof(name) + 8];
	int domain, r, k;

	if (size < 2 + sizeof(d.args))
		return 0;
	d.nr = nrs[data[0] % (sizeof(nrs) / sizeof(nrs[0]))];
	domain = domains[data[1] % (sizeof(domains) / sizeof(domains[0]))];
	memcpy(d.args, data + 2, sizeof(d.args));
	im.p = data + 2 + sizeof(d.args);
	im.len = size - 2 - sizeof(d.args);

	r = corral_un_decode(&d, image_read, &im, payload, sizeof(payload), &req);
	if (r > 0)
		abort();
	if (r < 0)
		return 0;
	if (req.payload_len > sizeof(payload) || req.ctl_len > sizeof(req.control) ||
	    req.addr_len > sizeof(req.addr) || (req.payload_len > req.total && !req.empty))
		abort();
	r = corral_un_parse_control(req.control, req.ctl_len, domain, rights, sizeof(rights) / sizeof(rights[0]),
				    &n_rights, pass, sizeof(pass), &pass_len);
	if (r == 0 && (n_rights > sizeof(rights) / sizeof(rights[0]) || pass_len > sizeof(pass)))
		abort();
	k = corral_un_addr_kind(&req, domain, name, sizeof(name));
	if (k == CORRAL_UN_ADDR_PATH || k == CORRAL_UN_ADDR_ABSTRACT) {
		if (strlen(name) >= sizeof(name))
			abort();
		snprintf(path, sizeof(path), "/%s", name);
		corral_un_normalise(path);
		if (path[0] != '/' || strstr(path, "//") || strstr(path, "/./"))
			abort();
	}
	return 0;
}
