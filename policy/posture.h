/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The posture of a policy on this host: for each promise of DESIGN.md
 * ("What the local provider promises"), enforced, dropped (and why), or not
 * applicable. landlock/, seccomp/ and supervisor/ each add the promises they
 * enforce; corral_sandbox_new() refuses under compat "strict" when any is
 * dropped, and `corral probe` prints the list.
 */
#ifndef CORRAL_POSTURE_H
#define CORRAL_POSTURE_H

#include <stddef.h>

#include "internal/util.h"

/*
 * The promise vocabulary, written once: every id corral reports, what it
 * promises, and the mechanism that keeps it. |kinds|: P a posture entry
 * (probe, sandbox_new's strict check, the dropped list), C a group of
 * `corral check`'s report (in this order there). An id is named in code
 * by its enum (CORRAL_P_FS_WRITE), so a misspelt one does not compile.
 */
#define CORRAL_PK_POSTURE 1u
#define CORRAL_PK_CHECK 2u
#define CORRAL_PROMISE_LIST(X) \
	X(FS_WRITE, "fs.write", CORRAL_PK_POSTURE | CORRAL_PK_CHECK, \
	  "writes only under the root and the read_write paths", \
	  "Landlock: write rights only on the root, fs.read_write and the private tmp; docker: a read-only root filesystem") \
	X(FS_READ, "fs.read", CORRAL_PK_POSTURE | CORRAL_PK_CHECK, \
	  "reads only the root, read_write and read_only paths", \
	  "Landlock: read rights only on those paths; docker: only the image and the bind mounts") \
	X(FS_REFER, "fs.refer", CORRAL_PK_POSTURE, "no link or rename out of the root", "Landlock ABI 2 (REFER)") \
	X(FS_TRUNCATE, "fs.truncate", CORRAL_PK_POSTURE, "no truncate outside the root", "Landlock ABI 3 (TRUNCATE)") \
	X(FS_IOCTL_DEV, "fs.ioctl_dev", CORRAL_PK_POSTURE, \
	  "no device ioctls outside /dev/tty, /dev/ptmx and the command's own terminal", "Landlock ABI 5 (IOCTL_DEV)") \
	X(FS_RESOLVE_UNIX, "fs.resolve_unix", CORRAL_PK_POSTURE, \
	  "pathname Unix sockets only beneath the allowed paths", "Landlock ABI 9 (RESOLVE_UNIX)") \
	X(NET_NO_INET, "net.no_inet", CORRAL_PK_CHECK, "no network: no TCP or UDP over IPv4 or IPv6, no netlink", \
	  "seccomp socket filter, Landlock TCP rules") \
	X(NET_FAMILIES, "net.families", CORRAL_PK_CHECK, "no packet or vsock sockets, whatever the network mode", \
	  "seccomp socket filter") \
	X(NET_UNIX, "net.unix", CORRAL_PK_CHECK, \
	  "Unix sockets reach nothing outside the sandbox (pathname and abstract)", \
	  "supervisor mediation or Landlock RESOLVE_UNIX; Landlock abstract-socket scope") \
	X(NET_NONE, "net.none", CORRAL_PK_POSTURE, "no network", "docker --network none") \
	X(NET_NO_SOCKETS, "net.no_sockets", CORRAL_PK_POSTURE, "socket families the network mode does not allow are refused", \
	  "seccomp socket filter") \
	X(NET_TCP_LANDLOCK, "net.tcp_landlock", CORRAL_PK_POSTURE, "TCP bind and connect denied", "Landlock ABI 4") \
	X(NET_LOOPBACK_NAMESPACE, "net.loopback_namespace", CORRAL_PK_POSTURE, \
	  "network loopback: a private network namespace holding only lo", "network namespace") \
	X(NET_UNIX_MEDIATED, "net.unix_mediated", CORRAL_PK_POSTURE, \
	  "pathname Unix socket connects and sends checked against the allowed paths", \
	  "seccomp user notification, answered by the supervisor") \
	X(NET_EGRESS_ALLOW, "net.egress_allow", CORRAL_PK_POSTURE | CORRAL_PK_CHECK, \
	  "network allow: connections reach only the hosts of the allow list (names resolved by corral; no raw IP, " \
	  "UDP, DNS or listening socket unless listed)", \
	  "seccomp user notification (every inet connect and addressed send goes to the supervisor: the egress proxy " \
	  "only), corral's egress proxy, Landlock TCP rules") \
	X(NET_UNIX_REFUSED, "net.unix_refused", CORRAL_PK_POSTURE, "Unix sockets refused", "seccomp socket filter") \
	X(NET_NO_IO_URING, "net.no_io_uring", CORRAL_PK_POSTURE, "no io_uring (it would get around the socket filter)", \
	  "seccomp") \
	X(SYSCALL_BYPASS, "syscall.bypass", CORRAL_PK_CHECK, \
	  "io_uring and foreign syscall ABIs (x32, i386) cannot get around the filter", "seccomp") \
	X(SECCOMP_FILTER, "seccomp.filter", CORRAL_PK_POSTURE, "corral's seccomp filter is installed", "seccomp") \
	X(SECCOMP_DENY_TABLE, "seccomp.deny_table", CORRAL_PK_POSTURE, \
	  "kernel interfaces a command has no business with are refused (mount, bpf, keyctl, System V IPC of others, ...)", \
	  "seccomp deny table") \
	X(SECCOMP_FOREIGN_ABI, "seccomp.foreign_abi", CORRAL_PK_POSTURE, "foreign syscall ABIs (x32, i386) refused", \
	  "seccomp") \
	X(SECCOMP_DOCKER_DEFAULT, "seccomp.docker_default", CORRAL_PK_POSTURE, "docker's default seccomp profile", \
	  "docker") \
	X(PROC_ISOLATION, "proc.isolation", CORRAL_PK_CHECK, \
	  "no signals, ptrace, resource limits, scheduling, System V IPC objects or /proc/PID/{environ,mem,cwd,root,fd} of processes outside the sandbox (their cmdline and status stay visible under proc \"host\": see proc.private)", \
	  "Landlock scopes, seccomp") \
	X(PROC_PRIVATE, "proc.private", CORRAL_PK_POSTURE | CORRAL_PK_CHECK, \
	  "host processes are out of sight: a PID namespace and /proc of the run's own (proc \"private\")", \
	  "PID namespace") \
	X(SCOPE_PTRACE, "scope.ptrace", CORRAL_PK_POSTURE, "no ptrace or /proc/PID of processes outside the sandbox", \
	  "Landlock ABI 1") \
	X(SCOPE_SIGNAL, "scope.signal", CORRAL_PK_POSTURE, "no signals to processes outside the sandbox", \
	  "Landlock ABI 6 (signal scope)") \
	X(SCOPE_ABSTRACT_UNIX, "scope.abstract_unix", CORRAL_PK_POSTURE, "no abstract Unix sockets outside the sandbox", \
	  "Landlock ABI 6 (abstract-socket scope)") \
	X(SCOPE_PROCESSES, "scope.processes", CORRAL_PK_POSTURE, \
	  "signals, ptrace and /proc of processes outside the container", "docker PID namespace") \
	X(TTY_NO_INJECTION, "tty.no_injection", CORRAL_PK_POSTURE | CORRAL_PK_CHECK, \
	  "no terminal input injection (TIOCSTI, TIOCLINUX)", "seccomp") \
	X(PRIV_NONE, "priv.none", CORRAL_PK_CHECK, \
	  "no privilege: no_new_privs, no capabilities, a non-root uid when corral runs as root", \
	  "no_new_privs, capability sets, the identity switch") \
	X(PRIV_NO_NEW_PRIVS, "priv.no_new_privs", CORRAL_PK_POSTURE, \
	  "no_new_privs: setuid and file capabilities cannot raise privilege", "prctl(PR_SET_NO_NEW_PRIVS)") \
	X(PRIV_NO_CAPABILITIES, "priv.no_capabilities", CORRAL_PK_POSTURE, \
	  "every capability dropped, bounding and ambient sets included", "capset, PR_CAPBSET_DROP") \
	X(IDENTITY_NON_ROOT, "identity.non_root", CORRAL_PK_POSTURE, "the command runs as a uid other than root", \
	  "setresuid/setresgid") \
	X(LIFETIME, "lifetime", CORRAL_PK_POSTURE | CORRAL_PK_CHECK, \
	  "nothing outlives the run: the deadline and the exit kill the whole tree", \
	  "cgroup kill and the subreaper sweep; docker kill") \
	X(LEAK_FDS, "leak.fds", CORRAL_PK_CHECK, "only stdio file descriptors are inherited", "close_range") \
	X(LEAK_ENV, "leak.env", CORRAL_PK_CHECK, "only the listed environment variables are passed", \
	  "the environment built from env.pass and env.set") \
	X(LIMITS_CGROUP, "limits.cgroup", CORRAL_PK_POSTURE, "memory and processes bounded by the container's cgroup", \
	  "docker --memory, --pids-limit, --ulimit") \
	X(LIMITS_MEMORY, "limits.memory", CORRAL_PK_POSTURE | CORRAL_PK_CHECK, "address space bounded by limits.memory", \
	  "a memory cgroup, else RLIMIT_AS") \
	X(LIMITS_CPU, "limits.cpu", CORRAL_PK_CHECK, "CPU time bounded by limits.cpu", "RLIMIT_CPU") \
	X(LIMITS_PROCESSES, "limits.processes", CORRAL_PK_POSTURE | CORRAL_PK_CHECK, \
	  "processes bounded by limits.processes", "a pids cgroup, else RLIMIT_NPROC") \
	X(LIMITS_FILE_SIZE, "limits.file_size", CORRAL_PK_CHECK, "file size bounded by limits.file_size", "RLIMIT_FSIZE") \
	X(LIMITS_OPEN_FILES, "limits.open_files", CORRAL_PK_CHECK, "open files bounded by limits.open_files", \
	  "RLIMIT_NOFILE") \
	X(LIMITS_OUTPUT, "limits.output", CORRAL_PK_CHECK, "captured output bounded by limits.output", \
	  "the supervisor stops reading")

enum corral_promise_id {
#define CORRAL_PROMISE_ENUM(e, id, kinds, text, mech) CORRAL_P_##e,
	CORRAL_PROMISE_LIST(CORRAL_PROMISE_ENUM)
#undef CORRAL_PROMISE_ENUM
	CORRAL_P__COUNT
};

struct corral_promise_info {
	const char *id;        /* "fs.write": stable, in every report */
	unsigned kinds;        /* CORRAL_PK_* */
	const char *text;      /* what it promises, one line */
	const char *mechanism; /* what keeps it */
};

/* Indexed by enum corral_promise_id. */
extern const struct corral_promise_info corral_promises[CORRAL_P__COUNT];

/* The enum of the id |name| ("fs.write"), or -1. */
int corral_promise_by_name(const char *name);

enum corral_promise_state {
	CORRAL_PROMISE_ENFORCED = 0,
	CORRAL_PROMISE_DROPPED = 1,  /* the policy asks for it; this host cannot */
	CORRAL_PROMISE_NA = 2,       /* the policy does not ask for it (e.g. network "host") */
};

struct corral_promise {
	enum corral_promise_id which;
	const char *id;   /* corral_promises[which].id, e.g. "fs.truncate" */
	int state;        /* enum corral_promise_state */
	char why[512];    /* for DROPPED/NA: the reason, naming what it needs ("needs Landlock ABI 3, kernel has 2") */
};

#define CORRAL_POSTURE_MAX 64
struct corral_posture {
	struct corral_promise items[CORRAL_POSTURE_MAX];
	size_t n;
};

_printf_(4, 5) void corral_posture_add(struct corral_posture *ps, enum corral_promise_id which, int state,
				       const char *fmt, ...);
/* The entry for |which| in |ps|, or NULL. */
const struct corral_promise *corral_posture_get(const struct corral_posture *ps, enum corral_promise_id which);
/* First dropped promise, or NULL. */
const struct corral_promise *corral_posture_first_dropped(const struct corral_posture *ps);

#endif
