/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the files of the Unix-socket mediation share (not installed, not
 * for the rest of corral: supervisor/local/unotify/unotify.h is its API):
 * unotify.c (mode, plan, the child's steps), decode.c (the pure decoder),
 * helper.c (the helper process and its protocol), mediate.c (the parent:
 * serving notifications).
 */
#ifndef CORRAL_UNOTIFY_PRIVATE_H
#define CORRAL_UNOTIFY_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "supervisor/local/unotify/decode.h"
#include "supervisor/local/unotify/unotify.h"

#define PAYLOAD_MAX CORRAL_UN_PAYLOAD_MAX
#define CONTROL_MAX CORRAL_UN_CONTROL_MAX
#define RIGHTS_MAX 250            /* SCM_MAX_FD is 253; 2 go to the socket and the target */
#define INFLIGHT_MAX 64

struct base {
	char *path; /* absolute, no trailing slash (except "/") */
	int fd;     /* O_PATH */
};

struct corral_unotify_plan {
	int handover_fd;
	struct base *bases; /* root, then read_write paths */
	size_t n_bases;
	bool switch_identity;
	uid_t uid;
	gid_t gid;
	bool inet; /* the network mode lets inet sockets connect and address sends (not "none") */
	int network; /* enum corral_network, for the denials' hints */
	struct corral_egress *egress; /* network "allow": the only inet destination (the sandbox's) */
};

/*
 * OP_HOLD: no call, only fds to keep. The fds a request carries (the
 * command's socket and SCM_RIGHTS, taken with pidfd_getfd) may be the last
 * references once the command is gone, and closing the last one can block:
 * a TCP socket with SO_LINGER and unsent data sleeps for its linger time in
 * close(). So the supervisor's event loop never makes that close: it hands
 * every fd it took to a helper (with the request, or OP_HOLD when the
 * request failed), closes its own copies, and only then sends the helper
 * anything else; a helper closes what it holds when the next message
 * comes (OP_RELEASE, or any other), so the last close is always the
 * helper's, and a helper killed at the end of the run closes without
 * lingering (an exiting task does not linger).
 */
enum { OP_CONNECT = 1, OP_SENDTO = 2, OP_SENDMSG = 3, OP_HOLD = 4, OP_RELEASE = 5 };
enum { ADDR_NONE = 0, ADDR_COPY = 1, ADDR_TARGET = 2 };

struct hreq {
	uint64_t id;
	uint32_t op;
	uint32_t flags;
	uint32_t addr_mode;
	uint32_t addr_len;
	uint32_t payload_len;
	uint32_t n_rights;
	uint32_t ctl_len; /* inet-level control messages, after the payload */
	uint8_t addr[CORRAL_UN_ADDR_MAX];
};

struct hrep {
	uint64_t id;
	int64_t val;
	int32_t err;
};

/* Fork a helper as the sandbox's identity (helper.c); its pid, or -errno; |*sock_out| its end. */
pid_t corral_un_helper_spawn(const struct corral_unotify_plan *plan, int *sock_out);

#endif
