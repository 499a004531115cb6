/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Unix-socket mediation's decoder on synthetic notifications: the
 * caller's memory is a buffer at a fake address, so every branch (each
 * syscall, short and bad pointers, oversized addresses, control blocks,
 * iovec counts, the address kinds, the normaliser) runs in-process.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "supervisor/local/unotify/decode.h"

#define BASE 0x700000000000ULL

/* The caller's memory: |mem| at BASE; anything else faults. */
static uint8_t mem[64 * 1024];
static size_t used;

static int fake_read(void *ctx, uint64_t remote, void *local, size_t len)
{
	(void)ctx;
	if (remote < BASE || remote - BASE > sizeof(mem) || len > sizeof(mem) - (remote - BASE))
		return -EFAULT;
	memcpy(local, mem + (remote - BASE), len);
	return 0;
}

/* Place |len| bytes in the caller's memory; their address. */
static uint64_t put(const void *p, size_t len)
{
	uint64_t at = BASE + used;

	memcpy(mem + used, p, len);
	used += (len + 15) & ~(size_t)15;
	return at;
}

static uint64_t put_sun(const char *path, bool abstract, uint64_t *len)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t n = strlen(path);

	memcpy(a.sun_path + abstract, path, n);
	*len = offsetof(struct sockaddr_un, sun_path) + n + abstract + !abstract;
	return put(&a, sizeof(a));
}

static struct corral_un_req req;
static uint8_t payload[256];

static int decode(int nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct seccomp_data d = { .nr = nr, .args = { a0, a1, a2, a3, a4, a5 } };

	return corral_un_decode(&d, fake_read, NULL, payload, sizeof(payload), &req);
}

static void reset(void **state)
{
	(void)state;
	used = 0;
	memset(mem, 0, sizeof(mem));
}

static void test_connect(void **state)
{
	uint64_t len, a;
	char name[sizeof(((struct sockaddr_un *)0)->sun_path) + 2];

	reset(state);
	a = put_sun("/ws/s.sock", false, &len);
	assert_int_equal(decode(__NR_connect, 7, a, len, 0, 0, 0), 0);
	assert_int_equal(req.kind, CORRAL_UN_CONNECT);
	assert_int_equal(req.fd, 7);
	assert_int_equal(req.addr_len, len);
	assert_int_equal(corral_un_addr_kind(&req, AF_UNIX, name, sizeof(name)), CORRAL_UN_ADDR_PATH);
	assert_string_equal(name, "/ws/s.sock");
	/* The same address on an inet socket, or a non-Unix family: not a decision here. */
	assert_int_equal(corral_un_addr_kind(&req, AF_INET, name, sizeof(name)), CORRAL_UN_ADDR_NONE);

	a = put_sun("x\001y", true, &len);
	assert_int_equal(decode(__NR_connect, 3, a, len, 0, 0, 0), 0);
	assert_int_equal(corral_un_addr_kind(&req, AF_UNIX, name, sizeof(name)), CORRAL_UN_ADDR_ABSTRACT);
	assert_string_equal(name, "@x?y");

	/* fd: the low 32 bits, as the kernel reads an int. */
	assert_int_equal(decode(__NR_connect, (1ULL << 32) | 5, a, len, 0, 0, 0), 0);
	assert_int_equal(req.fd, 5);
}

static void test_errors(void **state)
{
	static const struct {
		const char *what;
		int nr;
		uint64_t a[6];
		int want;
	} cases[] = {
		{ "connect, address unmapped", __NR_connect, { 3, 0x1000, 16 }, -EFAULT },
		{ "connect, address past the end", __NR_connect, { 3, BASE + sizeof(mem) - 4, 16 }, -EFAULT },
		{ "connect, address longer than sockaddr_storage", __NR_connect, { 3, BASE, CORRAL_UN_ADDR_MAX + 1 }, -EINVAL },
		{ "connect, no address", __NR_connect, { 3, 0, 0 }, 0 },
		{ "connect, length without pointer", __NR_connect, { 3, 0, 16 }, 0 },
		{ "sendto, payload unmapped", __NR_sendto, { 3, 0x1000, 8, 0, 0, 0 }, -EFAULT },
		{ "sendmsg, msghdr unmapped", __NR_sendmsg, { 3, 0x1000, 0 }, -EFAULT },
		{ "sendmmsg, no message", __NR_sendmmsg, { 3, 0x1000, 0, 0 }, 0 },
		{ "ioctl, not TIOCGPTPEER", __NR_ioctl, { 3, TIOCSTI, 0 }, -ENOSYS },
		{ "write", __NR_write, { 1, BASE, 1 }, -ENOSYS },
	};

	reset(state);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = decode(cases[i].nr, cases[i].a[0], cases[i].a[1], cases[i].a[2], cases[i].a[3],
			       cases[i].a[4], cases[i].a[5]);

		if (r != cases[i].want)
			fail_msg("%s: got %d, want %d", cases[i].what, r, cases[i].want);
	}
	assert_int_equal(decode(__NR_sendmmsg, 3, 0x1000, 0, 0, 0, 0), 0);
	assert_true(req.empty); /* vlen 0: answered 0, nothing read */
}

static void test_sendto(void **state)
{
	char big[1000];
	uint64_t len, a, p;

	reset(state);
	memset(big, 'b', sizeof(big));
	p = put(big, sizeof(big));
	a = put_sun("rel.sock", false, &len);
	assert_int_equal(decode(__NR_sendto, 4, p, sizeof(big), (1ULL << 40) | MSG_DONTWAIT, a, len), 0);
	assert_int_equal(req.kind, CORRAL_UN_SENDTO);
	assert_int_equal(req.flags, MSG_DONTWAIT);
	assert_int_equal(req.total, sizeof(big));
	assert_int_equal(req.payload_len, sizeof(payload)); /* clipped to the buffer */
	assert_memory_equal(payload, big, sizeof(payload));
	assert_int_equal(req.addr_len, len);
}

static void test_sendmsg(void **state)
{
	struct iovec iov[2];
	struct msghdr m = {};
	union {
		char b[CMSG_SPACE(sizeof(int) * 2) + CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} c;
	struct cmsghdr *cm;
	int fdv[2] = { 10, 11 }, rights[4], tos = 4;
	uint8_t pass[64];
	size_t n_rights, pass_len;
	uint64_t len;

	reset(state);
	iov[0] = (struct iovec){ (void *)(uintptr_t)put("hello", 5), 5 };
	iov[1] = (struct iovec){ (void *)(uintptr_t)put("world", 5), 5 };
	memset(&c, 0, sizeof(c));
	m.msg_control = c.b;
	m.msg_controllen = sizeof(c.b);
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(fdv));
	memcpy(CMSG_DATA(cm), fdv, sizeof(fdv));
	cm = CMSG_NXTHDR(&m, cm);
	cm->cmsg_level = IPPROTO_IP;
	cm->cmsg_type = IP_TOS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &tos, sizeof(int));
	m.msg_iov = (void *)(uintptr_t)put(iov, sizeof(iov));
	m.msg_iovlen = 2;
	m.msg_control = (void *)(uintptr_t)put(c.b, sizeof(c.b));
	m.msg_name = (void *)(uintptr_t)put_sun("/a", false, &len);
	m.msg_namelen = (socklen_t)len;
	assert_int_equal(decode(__NR_sendmsg, 3, put(&m, sizeof(m)), MSG_NOSIGNAL, 0, 0, 0), 0);
	assert_int_equal(req.kind, CORRAL_UN_SENDMSG);
	assert_false(req.mmsg);
	assert_int_equal(req.total, 10);
	assert_memory_equal(payload, "helloworld", 10);
	assert_int_equal(req.ctl_len, sizeof(c.b));
	assert_int_equal(req.addr_len, len);

	/* On a Unix socket: the rights are taken, IP_TOS is not a Unix-level message. */
	assert_int_equal(corral_un_parse_control(req.control, req.ctl_len, AF_UNIX, rights, 4, &n_rights,
						 pass, sizeof(pass), &pass_len), -EINVAL);
	/* On an inet socket: IP_TOS goes along as written, the rights are taken. */
	assert_int_equal(corral_un_parse_control(req.control, req.ctl_len, AF_INET, rights, 4, &n_rights,
						 pass, sizeof(pass), &pass_len), 0);
	assert_int_equal(n_rights, 2);
	assert_int_equal(rights[0], 10);
	assert_int_equal(rights[1], 11);
	assert_int_equal(pass_len, CMSG_SPACE(sizeof(int)));
	assert_int_equal(corral_un_parse_control(req.control, req.ctl_len, AF_INET, rights, 1, &n_rights,
						 pass, sizeof(pass), &pass_len), -ETOOMANYREFS);
	assert_int_equal(corral_un_parse_control(req.control, req.ctl_len, AF_INET, rights, 4, &n_rights,
						 pass, 4, &pass_len), -ENOBUFS);

	/* sendmmsg: the first message, answered as one. */
	{
		uint64_t mp = put(&m, sizeof(m));

		assert_int_equal(decode(__NR_sendmmsg, 3, mp, 2, MSG_DONTWAIT, 0, 0), 0);
		assert_true(req.mmsg);
		assert_int_equal(req.flags, MSG_DONTWAIT);

		/* Too much control data, too many iovecs, an unmapped iovec. */
		m.msg_controllen = CORRAL_UN_CONTROL_MAX + 1;
		assert_int_equal(decode(__NR_sendmsg, 3, put(&m, sizeof(m)), 0, 0, 0, 0), -ENOBUFS);
		m.msg_controllen = 0;
		m.msg_iovlen = CORRAL_UN_IOV_MAX + 1;
		assert_int_equal(decode(__NR_sendmsg, 3, put(&m, sizeof(m)), 0, 0, 0, 0), -EMSGSIZE);
		iov[1].iov_base = (void *)0x1000;
		m.msg_iov = (void *)(uintptr_t)put(iov, sizeof(iov));
		m.msg_iovlen = 2;
		assert_int_equal(decode(__NR_sendmsg, 3, put(&m, sizeof(m)), 0, 0, 0, 0), -EFAULT);
	}
}

static void test_control_malformed(void **state)
{
	struct cmsghdr h = { .cmsg_len = CMSG_LEN(0) - 1, .cmsg_level = SOL_SOCKET, .cmsg_type = SCM_RIGHTS };
	int rights[4];
	uint8_t pass[64];
	size_t n, pl;

	(void)state;
	assert_int_equal(corral_un_parse_control((const uint8_t *)&h, sizeof(h), AF_UNIX, rights, 4, &n, pass,
						 sizeof(pass), &pl), -EINVAL);
	h.cmsg_len = 4096; /* longer than the block */
	assert_int_equal(corral_un_parse_control((const uint8_t *)&h, sizeof(h), AF_UNIX, rights, 4, &n, pass,
						 sizeof(pass), &pl), -EINVAL);
	h.cmsg_len = CMSG_LEN(0);
	h.cmsg_type = SCM_CREDENTIALS; /* dropped: the helper's are sent */
	assert_int_equal(corral_un_parse_control((const uint8_t *)&h, sizeof(h), AF_UNIX, rights, 4, &n, pass,
						 sizeof(pass), &pl), 0);
	assert_int_equal(n, 0);
	assert_int_equal(pl, 0);
}

static void test_socket_ioctl(void **state)
{
	reset(state);
	assert_int_equal(decode(__NR_socket, (1ULL << 32) | AF_INET, SOCK_STREAM, 0, 0, 0, 0), 0);
	assert_int_equal(req.kind, CORRAL_UN_SOCKET);
	assert_int_equal(req.family, AF_INET);
	assert_int_equal(decode(__NR_ioctl, 9, (1ULL << 32) | TIOCGPTPEER, 02, 0, 0, 0), 0);
	assert_int_equal(req.kind, CORRAL_UN_PTY_PEER);
	assert_int_equal(req.fd, 9);
	assert_int_equal(req.flags, 02);
}

static void test_normalise(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "/", "/" },         { "//a//b/", "/a/b" },   { "/a/./b", "/a/b" },   { "/a/../b", "/b" },
		{ "/../../a", "/a" }, { "/ws/../ws-evil/s", "/ws-evil/s" }, { "/a/b/..", "/a" }, { "/.", "/" },
		{ "/a/..b/c", "/a/..b/c" }, { "/a/.b", "/a/.b" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char p[64];

		strcpy(p, cases[i].in);
		corral_un_normalise(p);
		if (strcmp(p, cases[i].out) != 0)
			fail_msg("%s: got %s, want %s", cases[i].in, p, cases[i].out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connect),      cmocka_unit_test(test_errors),
		cmocka_unit_test(test_sendto),       cmocka_unit_test(test_sendmsg),
		cmocka_unit_test(test_control_malformed), cmocka_unit_test(test_socket_ioctl),
		cmocka_unit_test(test_normalise),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
