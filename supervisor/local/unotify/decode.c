/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The mediation's decoder (see decode.h): one function per syscall, no syscalls. */
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "policy/path.h"
#include "supervisor/local/unotify/decode.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

static int rd_obj(corral_un_read_fn rd, void *ctx, uint64_t remote, void *local, size_t len)
{
	return len == 0 ? 0 : rd(ctx, remote, local, len);
}

/* The address at |ptr|/|len| (none when either is 0), copied into |req|. */
static int take_addr(corral_un_read_fn rd, void *ctx, uint64_t ptr, uint64_t len, struct corral_un_req *req)
{
	int r;

	if (ptr == 0 || len == 0)
		return 0;
	if (len > sizeof(req->addr))
		return -EINVAL;
	r = rd_obj(rd, ctx, ptr, req->addr, (size_t)len);
	if (r < 0)
		return r;
	req->addr_len = (uint32_t)len;
	return 0;
}

/* Copy the iovecs' bytes into |buf| (at most |cap|); sets req->total and req->payload_len. */
static int gather(corral_un_read_fn rd, void *ctx, uint64_t iov_ptr, uint64_t iovlen, uint8_t *buf,
		  size_t cap, struct corral_un_req *req)
{
	struct iovec riov[64];
	uint64_t done = 0, total = 0;
	size_t got = 0;

	if (iovlen > CORRAL_UN_IOV_MAX)
		return -EMSGSIZE;
	while (done < iovlen) {
		size_t k = iovlen - done > 64 ? 64 : (size_t)(iovlen - done);
		int r = rd_obj(rd, ctx, iov_ptr + done * sizeof(struct iovec), riov, k * sizeof(struct iovec));

		if (r < 0)
			return r;
		for (size_t i = 0; i < k; i++) {
			size_t want = riov[i].iov_len;

			total += want;
			if (got < cap) {
				size_t take = want < cap - got ? want : cap - got;

				r = rd_obj(rd, ctx, (uint64_t)(uintptr_t)riov[i].iov_base, buf + got, take);
				if (r < 0)
					return r;
				got += take;
			}
		}
		done += k;
	}
	req->total = total;
	req->payload_len = got;
	return 0;
}

static int decode_connect(const struct seccomp_data *d, corral_un_read_fn rd, void *ctx,
			  struct corral_un_req *req)
{
	req->kind = CORRAL_UN_CONNECT;
	return take_addr(rd, ctx, d->args[1], d->args[2], req);
}

static int decode_sendto(const struct seccomp_data *d, corral_un_read_fn rd, void *ctx, uint8_t *payload,
			 size_t cap, struct corral_un_req *req)
{
	int r;

	req->kind = CORRAL_UN_SENDTO;
	req->flags = (uint32_t)d->args[3];
	req->total = d->args[2];
	req->payload_len = d->args[2] < cap ? (size_t)d->args[2] : cap;
	r = rd_obj(rd, ctx, d->args[1], payload, req->payload_len);
	if (r < 0)
		return r;
	return take_addr(rd, ctx, d->args[4], d->args[5], req);
}

/* sendmsg, and sendmmsg's first message (struct mmsghdr starts with its msghdr; a short count is allowed). */
static int decode_sendmsg(const struct seccomp_data *d, corral_un_read_fn rd, void *ctx, uint8_t *payload,
			  size_t cap, struct corral_un_req *req)
{
	struct msghdr m;
	int r;

	req->kind = CORRAL_UN_SENDMSG;
	if (d->nr == __NR_sendmmsg) {
		req->mmsg = true;
		if ((uint32_t)d->args[2] == 0) {
			req->empty = true;
			return 0;
		}
		req->flags = (uint32_t)d->args[3];
	} else {
		req->flags = (uint32_t)d->args[2];
	}
	r = rd_obj(rd, ctx, d->args[1], &m, sizeof(m));
	if (r < 0)
		return r;
	r = gather(rd, ctx, (uint64_t)(uintptr_t)m.msg_iov, m.msg_iovlen, payload, cap, req);
	if (r < 0)
		return r;
	if (m.msg_controllen > CORRAL_UN_CONTROL_MAX)
		return -ENOBUFS;
	req->ctl_len = m.msg_controllen;
	r = rd_obj(rd, ctx, (uint64_t)(uintptr_t)m.msg_control, req->control, req->ctl_len);
	if (r < 0)
		return r;
	return take_addr(rd, ctx, (uint64_t)(uintptr_t)m.msg_name, m.msg_namelen, req);
}

int corral_un_decode(const struct seccomp_data *d, corral_un_read_fn rd, void *ctx, uint8_t *payload,
		     size_t cap, struct corral_un_req *req)
{
	memset(req, 0, offsetof(struct corral_un_req, control));
	req->fd = (int)d->args[0];
	switch (d->nr) {
	case __NR_connect:
		return decode_connect(d, rd, ctx, req);
	case __NR_sendto:
		return decode_sendto(d, rd, ctx, payload, cap, req);
	case __NR_sendmsg:
	case __NR_sendmmsg:
		return decode_sendmsg(d, rd, ctx, payload, cap, req);
	case __NR_socket:
		req->kind = CORRAL_UN_SOCKET;
		req->family = (int)(uint32_t)d->args[0];
		return 0;
	case __NR_ioctl:
		if ((uint32_t)d->args[1] != (uint32_t)TIOCGPTPEER)
			return -ENOSYS;
		req->kind = CORRAL_UN_PTY_PEER;
		req->flags = (uint32_t)d->args[2];
		return 0;
	}
	return -ENOSYS;
}

int corral_un_parse_control(const uint8_t *ctl, size_t ctl_len, int domain, int *rights,
			    size_t max_rights, size_t *n_rights, uint8_t *pass, size_t pass_cap,
			    size_t *pass_len)
{
	/* CMSG_FIRSTHDR/NXTHDR read the headers: walk an aligned copy. */
	union {
		uint8_t b[CORRAL_UN_CONTROL_MAX];
		struct cmsghdr align;
	} c;
	struct msghdr m = { .msg_control = c.b, .msg_controllen = ctl_len };

	*n_rights = 0;
	*pass_len = 0;
	if (ctl_len == 0)
		return 0;
	if (ctl_len > sizeof(c.b))
		return -ENOBUFS;
	memcpy(c.b, ctl, ctl_len);
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
		size_t at = (size_t)((uint8_t *)cm - c.b);

		if (cm->cmsg_len < CMSG_LEN(0) || at + cm->cmsg_len > ctl_len)
			return -EINVAL;
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS)
			continue;
		/*
		 * IP-level ones on an inet socket (IP_TOS, IP_PKTINFO,
		 * IPV6_HOPLIMIT, UDP_SEGMENT...) go along as written: they say
		 * how to send, not where to, and the socket's own namespace
		 * bounds them.
		 */
		if ((domain == AF_INET || domain == AF_INET6) &&
		    (cm->cmsg_level == IPPROTO_IP || cm->cmsg_level == IPPROTO_IPV6 ||
		     cm->cmsg_level == IPPROTO_UDP || cm->cmsg_level == IPPROTO_TCP)) {
			size_t sp = CMSG_ALIGN(cm->cmsg_len);

			if (sp > ctl_len - at)
				sp = ctl_len - at;
			if (*pass_len + sp > pass_cap)
				return -ENOBUFS;
			memcpy(pass + *pass_len, cm, sp);
			*pass_len += sp;
			continue;
		}
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			return -EINVAL;
		for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			if (*n_rights >= max_rights)
				return -ETOOMANYREFS;
			memcpy(&rights[*n_rights], CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			(*n_rights)++;
		}
	}
	return 0;
}

int corral_un_addr_kind(const struct corral_un_req *req, int domain, char *name, size_t name_cap)
{
	const size_t off = offsetof(struct sockaddr_un, sun_path);
	struct sockaddr_un sun;
	size_t plen;

	name[0] = '\0';
	if (req->addr_len == 0 || domain != AF_UNIX || req->addr_len <= off)
		return CORRAL_UN_ADDR_NONE;
	memset(&sun, 0, sizeof(sun));
	memcpy(&sun, req->addr, req->addr_len < sizeof(sun) ? req->addr_len : sizeof(sun));
	if (sun.sun_family != AF_UNIX)
		return CORRAL_UN_ADDR_NONE;
	plen = req->addr_len - off;
	if (plen > sizeof(sun.sun_path))
		plen = sizeof(sun.sun_path);
	if (name_cap < sizeof(sun.sun_path) + 2)
		return -EINVAL;
	if (sun.sun_path[0] == '\0') {
		name[0] = '@';
		for (size_t i = 1; i < plen; i++)
			name[i] = sun.sun_path[i] >= 0x20 && sun.sun_path[i] < 0x7f ? sun.sun_path[i] : '?';
		name[plen] = '\0';
		return CORRAL_UN_ADDR_ABSTRACT;
	}
	plen = strnlen(sun.sun_path, plen);
	memcpy(name, sun.sun_path, plen);
	name[plen] = '\0';
	return CORRAL_UN_ADDR_PATH;
}

void corral_un_normalise(char *p)
{
	/* Absolute here (the caller prefixes the cwd or "/"); the kernel re-checks beneath. */
	corral_path_normalise(p, CORRAL_PATH_DOTDOT);
}
