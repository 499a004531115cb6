/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mediation's decoder: pure functions that turn a seccomp notification
 * and the caller's memory (read through a callback, once per object) into
 * one normalised request, and take its untrusted parts apart (control
 * messages, the address). No syscall here: the supervisor passes
 * process_vm_readv, the unit tests and the fuzzer a buffer.
 */
#ifndef CORRAL_UNOTIFY_DECODE_H
#define CORRAL_UNOTIFY_DECODE_H

#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#define CORRAL_UN_PAYLOAD_MAX (64 * 1024) /* bytes one mediated send carries (stream: a short write) */
#define CORRAL_UN_CONTROL_MAX 4096
#define CORRAL_UN_IOV_MAX 1024            /* UIO_MAXIOV: more is EMSGSIZE, as the kernel says */
/* The kernel takes addresses up to a sockaddr_storage (move_addr_to_kernel): so does the mediation. */
#define CORRAL_UN_ADDR_MAX (sizeof(struct sockaddr_storage))

/*
 * Copy |len| bytes at |remote| of the caller into |local|: 0 or -errno
 * (a short read is -EFAULT). Each object is read once, and only the copy
 * is used: the caller may rewrite its memory meanwhile.
 */
typedef int (*corral_un_read_fn)(void *ctx, uint64_t remote, void *local, size_t len);

enum corral_un_kind {
	CORRAL_UN_CONNECT = 1,
	CORRAL_UN_SENDTO,
	CORRAL_UN_SENDMSG,  /* sendmsg, and sendmmsg's first message */
	CORRAL_UN_SOCKET,   /* socket() of a refused family: counted, refused */
	CORRAL_UN_PTY_PEER, /* ioctl(fd, TIOCGPTPEER, flags) */
};

/* One call, normalised. */
struct corral_un_req {
	int kind;             /* enum corral_un_kind */
	int fd;               /* the caller's fd, as the kernel reads it (an int) */
	uint32_t flags;       /* send flags; TIOCGPTPEER's open flags */
	bool mmsg;            /* sendmmsg: the answer is 1 (one message), not the bytes */
	bool empty;           /* sendmmsg of no message: answered 0, nothing read */
	int family;           /* CORRAL_UN_SOCKET: the family asked for */
	uint32_t addr_len;    /* 0: no address */
	uint8_t addr[CORRAL_UN_ADDR_MAX];
	uint64_t total;       /* bytes the caller asked to send */
	size_t payload_len;   /* of them, copied into the payload buffer */
	size_t ctl_len;
	uint8_t control[CORRAL_UN_CONTROL_MAX];
};

/*
 * Decode the call in |d| (x86-64/native numbers) into |req|, the payload
 * into |payload| (at most |cap| bytes). 0, or -errno to answer the caller
 * with: ENOSYS for a call the mediation does not take, EFAULT for memory
 * it cannot read, EINVAL for an address longer than a sockaddr_storage,
 * ENOBUFS for more control data than CORRAL_UN_CONTROL_MAX, EMSGSIZE for
 * more than CORRAL_UN_IOV_MAX iovecs.
 */
int corral_un_decode(const struct seccomp_data *d, corral_un_read_fn rd, void *ctx, uint8_t *payload,
		     size_t cap, struct corral_un_req *req);

/*
 * Take the copied control messages apart: SCM_RIGHTS fd numbers into
 * |rights| (at most |max_rights|: more is ETOOMANYREFS), SCM_CREDENTIALS
 * dropped (the helper's are sent anyway), IP-level ones (IP, IPv6, UDP,
 * TCP) on an inet socket (|domain|) appended as written to |pass| (at
 * most |pass_cap| bytes: more is ENOBUFS); a malformed header or any
 * other message is EINVAL. 0 or -errno.
 */
int corral_un_parse_control(const uint8_t *ctl, size_t ctl_len, int domain, int *rights,
			    size_t max_rights, size_t *n_rights, uint8_t *pass, size_t pass_cap,
			    size_t *pass_len);

enum corral_un_addr {
	CORRAL_UN_ADDR_NONE = 0,  /* no address, or not a Unix one on a Unix socket: goes as copied */
	CORRAL_UN_ADDR_PATH,      /* a pathname: |name| is it (relative or absolute) */
	CORRAL_UN_ADDR_ABSTRACT,  /* |name| is "@" and the name, unprintable bytes as '?' */
};

/*
 * What the address of |req| is, for a socket of |domain|: a security
 * decision only for a Unix socket's AF_UNIX address. |name| must hold
 * sizeof(sun_path) + 2 bytes.
 */
int corral_un_addr_kind(const struct corral_un_req *req, int domain, char *name, size_t name_cap);

/* Lexically normalise an absolute path in place: "//", "/./", "a/.." (the kernel re-checks beneath). */
void corral_un_normalise(char *p);

#endif
