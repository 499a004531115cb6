/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Live: the socket rules of each network mode, io_uring, in forked children
 * under the real filter. Each refused family is paired with an allowed call.
 */
#include <linux/io_uring.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "sc-test.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

#define EAFNO (-1) /* success, or EAFNOSUPPORT when the host lacks the family (e.g. no IPv6) */

static const struct {
	int net;
	const char *what;
	bool pair;       /* socketpair instead of socket */
	uint64_t family; /* full 64-bit register value */
	int type;
	int proto;
	int expect;      /* errno, 0 success, EAFNO */
} cases[] = {
	/* "none": socketpair(AF_UNIX) is the neighbour that must keep working. */
	{ CORRAL_NET_NONE, "socketpair(AF_UNIX, STREAM)", true, AF_UNIX, SOCK_STREAM, 0, 0 },
	{ CORRAL_NET_NONE, "socketpair(AF_UNIX, DGRAM)", true, AF_UNIX, SOCK_DGRAM, 0, 0 },
	{ CORRAL_NET_NONE, "socketpair(AF_UNIX, SEQPACKET)", true, AF_UNIX, SOCK_SEQPACKET, 0, 0 },
	{ CORRAL_NET_NONE, "socketpair(AF_INET)", true, AF_INET, SOCK_STREAM, 0, EACCES },
	{ CORRAL_NET_NONE, "socketpair(AF_UNIX | 1<<32)", true, (1ULL << 32) | AF_UNIX, SOCK_STREAM, 0, EACCES },
	{ CORRAL_NET_NONE, "socket(AF_UNIX)", false, AF_UNIX, SOCK_STREAM, 0, EACCES },
	{ CORRAL_NET_NONE, "socket(AF_UNIX, DGRAM)", false, AF_UNIX, SOCK_DGRAM, 0, EACCES },
	{ CORRAL_NET_NONE, "socket(AF_INET, STREAM)", false, AF_INET, SOCK_STREAM, 0, EACCES },
	{ CORRAL_NET_NONE, "socket(AF_INET, DGRAM)", false, AF_INET, SOCK_DGRAM, 0, EACCES },
	{ CORRAL_NET_NONE, "socket(AF_INET6)", false, AF_INET6, SOCK_STREAM, 0, EACCES },
	{ CORRAL_NET_NONE, "socket(AF_NETLINK, ROUTE)", false, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE, EACCES },
	{ CORRAL_NET_NONE, "socket(AF_PACKET)", false, AF_PACKET, SOCK_DGRAM, 0, EACCES },
	{ CORRAL_NET_NONE, "socket(AF_VSOCK)", false, AF_VSOCK, SOCK_STREAM, 0, EACCES },
	{ CORRAL_NET_NONE, "socket(AF_UNSPEC)", false, AF_UNSPEC, SOCK_STREAM, 0, EACCES },
	{ CORRAL_NET_NONE, "socket(AF_ALG)", false, 38, SOCK_SEQPACKET, 0, EACCES },

	/* "loopback": inet, inet6; the namespace (elsewhere) confines them; unix as under "none". */
	{ CORRAL_NET_LOOPBACK, "socket(AF_INET)", false, AF_INET, SOCK_STREAM, 0, 0 },
	{ CORRAL_NET_LOOPBACK, "socket(AF_INET6)", false, AF_INET6, SOCK_DGRAM, 0, EAFNO },
	{ CORRAL_NET_LOOPBACK, "socket(AF_UNIX)", false, AF_UNIX, SOCK_STREAM, 0, EACCES },
	{ CORRAL_NET_LOOPBACK, "socketpair(AF_UNIX)", true, AF_UNIX, SOCK_STREAM, 0, 0 },
	{ CORRAL_NET_LOOPBACK, "socket(AF_NETLINK)", false, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE, EACCES },
	{ CORRAL_NET_LOOPBACK, "socket(AF_PACKET)", false, AF_PACKET, SOCK_DGRAM, 0, EACCES },
	{ CORRAL_NET_LOOPBACK, "socket(AF_VSOCK)", false, AF_VSOCK, SOCK_STREAM, 0, EACCES },
	{ CORRAL_NET_LOOPBACK, "socket(AF_INET | 1<<32)", false, (1ULL << 32) | AF_INET, SOCK_STREAM, 0, EACCES },
	{ CORRAL_NET_LOOPBACK, "socket(3 = AF_AX25)", false, 3, SOCK_SEQPACKET, 0, EACCES },
	{ CORRAL_NET_LOOPBACK, "socket(9 = AF_X25)", false, 9, SOCK_SEQPACKET, 0, EACCES },

	/* "host": adds netlink. */
	{ CORRAL_NET_HOST, "socket(AF_INET)", false, AF_INET, SOCK_STREAM, 0, 0 },
	{ CORRAL_NET_HOST, "socket(AF_INET, DGRAM)", false, AF_INET, SOCK_DGRAM, 0, 0 },
	{ CORRAL_NET_HOST, "socket(AF_INET6)", false, AF_INET6, SOCK_STREAM, 0, EAFNO },
	{ CORRAL_NET_HOST, "socket(AF_UNIX)", false, AF_UNIX, SOCK_STREAM, 0, 0 },
	{ CORRAL_NET_HOST, "socket(AF_NETLINK, ROUTE)", false, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE, 0 },
	{ CORRAL_NET_HOST, "socket(AF_PACKET)", false, AF_PACKET, SOCK_DGRAM, 0, EACCES },
	{ CORRAL_NET_HOST, "socket(AF_VSOCK)", false, AF_VSOCK, SOCK_STREAM, 0, EACCES },
	{ CORRAL_NET_HOST, "socket(AF_NETLINK | 1<<32)", false, (1ULL << 32) | AF_NETLINK, SOCK_RAW, 0, EACCES },
	{ CORRAL_NET_HOST, "socket(17 = AF_PACKET, raw)", false, AF_PACKET, SOCK_RAW, 0, EACCES },
	{ CORRAL_NET_HOST, "socket(AF_BLUETOOTH)", false, 31, SOCK_STREAM, 0, EACCES },
};

static int run_case(size_t i)
{
	long r;
	int sv[2], e;

	if (cases[i].pair)
		r = syscall(SYS_socketpair, cases[i].family, cases[i].type | SOCK_CLOEXEC, cases[i].proto, sv);
	else
		r = syscall(SYS_socket, cases[i].family, cases[i].type | SOCK_CLOEXEC, cases[i].proto);
	e = errno;
	if (cases[i].expect == EAFNO)
		return r >= 0 || e == EAFNOSUPPORT ? 0 : sc_expect(cases[i].what, r, e, 0);
	return sc_expect(cases[i].what, r, e, cases[i].expect);
}

/* io_uring fails in every mode; its neighbour (eventfd, a plain fd) works. */
static int run_io_uring(void)
{
	struct io_uring_params params = { 0 };
	int bad = 0;
	long r;

	r = syscall(SYS_io_uring_setup, 8, &params);
	bad |= sc_expect("io_uring_setup", r, errno, ENOSYS);
	r = syscall(SYS_io_uring_enter, 0, 1, 0, 0, NULL, 0);
	bad |= sc_expect("io_uring_enter", r, errno, ENOSYS);
	r = syscall(SYS_io_uring_register, 0, 0, NULL, 0);
	bad |= sc_expect("io_uring_register", r, errno, ENOSYS);
	r = syscall(SYS_eventfd2, 0, 0);
	bad |= sc_expect("eventfd2 (neighbour)", r, errno, 0);
	return bad;
}

int main(void)
{
	sc_require_seccomp();

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		pid_t pid = fork();
		int st;

		if (pid < 0)
			return perror("fork"), 1;
		if (pid == 0) {
			sc_child_enter(sc_filter(cases[i].net, 1));
			_exit(run_case(i));
		}
		st = sc_wait(pid);
		sc_report(WIFEXITED(st) && WEXITSTATUS(st) == 0, "net %s: %s %s",
			  sc_net_name(cases[i].net), cases[i].what,
			  cases[i].expect > 0 ? strerrorname_np(cases[i].expect) : "works");
	}
	for (int net = CORRAL_NET_NONE; net <= CORRAL_NET_HOST; net++) {
		pid_t pid = fork();
		int st;

		if (pid < 0)
			return perror("fork"), 1;
		if (pid == 0) {
			sc_child_enter(sc_filter(net, 1));
			_exit(run_io_uring());
		}
		st = sc_wait(pid);
		sc_report(WIFEXITED(st) && WEXITSTATUS(st) == 0, "net %s: io_uring_* ENOSYS, eventfd works",
			  sc_net_name(net));
	}
	return sc_finish("seccomp-net");
}
