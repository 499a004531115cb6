/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * corral's own definitions of the Landlock user-space ABI, versions 1 to 9
 * (kernel include/uapi/linux/landlock.h; Documentation/userspace-api/
 * landlock.rst). The installed <linux/landlock.h> is deliberately not used:
 * Debian 12's stops at ABI 2, and corral must use whatever the running
 * kernel offers, whatever the build host's headers hold. Every value here is
 * kernel ABI and can never change; names carry a CORRAL_ prefix so that they
 * never clash with a distro header pulled in indirectly.
 */
#ifndef CORRAL_LANDLOCK_UAPI_H
#define CORRAL_LANDLOCK_UAPI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>

/* Same number on every architecture (the unified syscall table, 5.13+). */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

/*
 * landlock_create_ruleset(2) argument. The kernel accepts any prefix of the
 * struct it knows (size argument): ABI 1-3 read handled_access_fs only,
 * ABI 4-5 add handled_access_net, ABI 6+ add scoped. corral always passes
 * the smallest size that holds the fields it sets, so that an older kernel
 * never sees (and rejects with E2BIG) a field it does not know.
 */
struct corral_ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;             /* ABI 6 */
};
#define CORRAL_LL_ATTR_SIZE_V1 offsetof(struct corral_ll_ruleset_attr, handled_access_net)
#define CORRAL_LL_ATTR_SIZE_V4 offsetof(struct corral_ll_ruleset_attr, scoped)
#define CORRAL_LL_ATTR_SIZE_V6 sizeof(struct corral_ll_ruleset_attr)

/* landlock_create_ruleset(NULL, 0, flags) queries. */
#define CORRAL_LL_CREATE_RULESET_VERSION (1U << 0) /* returns the ABI version */
#define CORRAL_LL_CREATE_RULESET_ERRATA (1U << 1)  /* returns the bitmask of fixed errata */

/* Errata bit N-1 is erratum N (kernel security/landlock/errata/abi-*.h). */
#define CORRAL_LL_ERRATUM_TCP_SOCKET_IDENT (1U << 0) /* erratum 1, ABI 4 */
#define CORRAL_LL_ERRATUM_SCOPED_SIGNAL (1U << 1)    /* erratum 2, ABI 6 */
#define CORRAL_LL_ERRATUM_DISCONNECTED_DIR (1U << 2) /* erratum 3, ABI 1 */

/* landlock_add_rule(2) rule types. */
enum {
	CORRAL_LL_RULE_PATH_BENEATH = 1,
	CORRAL_LL_RULE_NET_PORT = 2, /* ABI 4 */
};

struct corral_ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct corral_ll_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

/* Filesystem access rights. */
#define CORRAL_LL_FS_EXECUTE (1ULL << 0)
#define CORRAL_LL_FS_WRITE_FILE (1ULL << 1)
#define CORRAL_LL_FS_READ_FILE (1ULL << 2)
#define CORRAL_LL_FS_READ_DIR (1ULL << 3)
#define CORRAL_LL_FS_REMOVE_DIR (1ULL << 4)
#define CORRAL_LL_FS_REMOVE_FILE (1ULL << 5)
#define CORRAL_LL_FS_MAKE_CHAR (1ULL << 6)
#define CORRAL_LL_FS_MAKE_DIR (1ULL << 7)
#define CORRAL_LL_FS_MAKE_REG (1ULL << 8)
#define CORRAL_LL_FS_MAKE_SOCK (1ULL << 9)
#define CORRAL_LL_FS_MAKE_FIFO (1ULL << 10)
#define CORRAL_LL_FS_MAKE_BLOCK (1ULL << 11)
#define CORRAL_LL_FS_MAKE_SYM (1ULL << 12)
#define CORRAL_LL_FS_REFER (1ULL << 13)        /* ABI 2 */
#define CORRAL_LL_FS_TRUNCATE (1ULL << 14)     /* ABI 3 */
#define CORRAL_LL_FS_IOCTL_DEV (1ULL << 15)    /* ABI 5 */
#define CORRAL_LL_FS_RESOLVE_UNIX (1ULL << 16) /* ABI 9: connect/sendmsg to a pathname Unix socket */

/* Every filesystem right of ABI 1. */
#define CORRAL_LL_FS_ABI1 ((1ULL << 13) - 1)

/*
 * The rights that make sense on a non-directory; a path_beneath rule on a
 * file carrying any other right fails with EINVAL.
 */
#define CORRAL_LL_FS_FILE_RIGHTS                                                          \
	(CORRAL_LL_FS_EXECUTE | CORRAL_LL_FS_WRITE_FILE | CORRAL_LL_FS_READ_FILE |        \
	 CORRAL_LL_FS_TRUNCATE | CORRAL_LL_FS_IOCTL_DEV | CORRAL_LL_FS_RESOLVE_UNIX)

/* Network access rights (ABI 4). */
#define CORRAL_LL_NET_BIND_TCP (1ULL << 0)
#define CORRAL_LL_NET_CONNECT_TCP (1ULL << 1)

/* Scopes (ABI 6). */
#define CORRAL_LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define CORRAL_LL_SCOPE_SIGNAL (1ULL << 1)

/* landlock_restrict_self(2) flags. */
#define CORRAL_LL_RESTRICT_SELF_LOG_SAME_EXEC_OFF (1U << 0)  /* ABI 7 */
#define CORRAL_LL_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1)    /* ABI 7 */
#define CORRAL_LL_RESTRICT_SELF_LOG_SUBDOMAINS_OFF (1U << 2) /* ABI 7 */
#define CORRAL_LL_RESTRICT_SELF_TSYNC (1U << 3)              /* ABI 8: every thread of the process */

/* The kernel's layouts: a wrong size here is an EINVAL or E2BIG at run time. */
_Static_assert(sizeof(struct corral_ll_ruleset_attr) == 24, "landlock_ruleset_attr");
_Static_assert(CORRAL_LL_ATTR_SIZE_V1 == 8 && CORRAL_LL_ATTR_SIZE_V4 == 16, "ruleset_attr prefixes");
_Static_assert(sizeof(struct corral_ll_path_beneath_attr) == 12, "landlock_path_beneath_attr");
_Static_assert(sizeof(struct corral_ll_net_port_attr) == 16, "landlock_net_port_attr");

/* The newest ABI these definitions describe. */
#define CORRAL_LL_ABI_MAX 9

#endif
