/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every rule of corral's seccomp filter: the syscall, the argument
 * condition, the errno and why. The filter's default action is ALLOW (the
 * filesystem is Landlock's job); this table is what it refuses.
 * docs/threat-model.md ("seccomp") explains it row by row, and
 * tests/seccomp/ drives every row live.
 */
#include <errno.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "seccomp/seccomp.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

/*
 * Every namespace flag. CLONE_NEWTIME (0x80) lies in clone()'s exit-signal
 * byte and cannot be asked for through clone() (the kernel rejects exit
 * signals above 64); it is in the mask for unshare-like completeness and
 * costs nothing.
 */
#define NS_FLAGS (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | \
		  CLONE_NEWNET | CLONE_NEWCGROUP | CLONE_NEWTIME)

#define ALL CORRAL_SC_NET_ALL
#define DENY(name, e, why) \
	{ .syscall = (name), .cond = CORRAL_SC_ANY, .err = (e), .when = ALL, \
	  .promise = CORRAL_P_SECCOMP_DENY_TABLE, .reason = (why) }

const struct corral_sc_rule corral_sc_rules[] = {
	/* Network. Pointer arguments are out of seccomp's reach, so the
	 * family is the only thing it can judge; see docs/threat-model.md. */
	{ "socket", CORRAL_SC_ANY, 0, { 0 }, 0, EACCES, CORRAL_SC_NET_NONE | CORRAL_SC_UNIX_REFUSED, CORRAL_P_NET_NO_SOCKETS,
	  "network \"none\": no socket of any family, AF_UNIX included (Landlock cannot stop connect() to a host socket)" },
	{ "socket", CORRAL_SC_NOT_IN, 0, { AF_UNIX }, 1, EACCES, CORRAL_SC_NET_NONE | CORRAL_SC_UNIX_ALLOWED,
	  CORRAL_P_NET_NO_SOCKETS, "network \"none\" with Unix mediation: AF_UNIX only (connect/send to a pathname "
	  "socket is checked by the supervisor or Landlock ABI 9)" },
	{ "socket", CORRAL_SC_NOT_IN, 0, { AF_INET, AF_INET6 }, 2, EACCES,
	  CORRAL_SC_NET_LOOPBACK | CORRAL_SC_NET_ALLOW | CORRAL_SC_UNIX_REFUSED,
	  CORRAL_P_NET_NO_SOCKETS, "network \"loopback\" and \"allow\": inet and inet6 only (a private network "
	  "namespace; or every connect mediated: the egress proxy only); no unix (as under \"none\"), netlink, "
	  "packet, vsock or other family" },
	{ "socket", CORRAL_SC_NOT_IN, 0, { AF_UNIX, AF_INET, AF_INET6 }, 3, EACCES,
	  CORRAL_SC_NET_LOOPBACK | CORRAL_SC_NET_ALLOW | CORRAL_SC_UNIX_ALLOWED, CORRAL_P_NET_NO_SOCKETS,
	  "network \"loopback\" and \"allow\" with Unix mediation: inet, inet6 (private namespace, or mediated "
	  "connects) and unix (mediated)" },
	{ "socket", CORRAL_SC_NOT_IN, 2, { 0, IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP }, 4, EACCES,
	  CORRAL_SC_NET_ALLOW, CORRAL_P_NET_EGRESS_ALLOW,
	  "network \"allow\": protocol 0, TCP, UDP or ICMP only (SCTP connects through setsockopt "
	  "SCTP_SOCKOPT_CONNECTX without connect(), which the supervisor mediates; Landlock's TCP rules do not cover it)" },
	{ "socket", CORRAL_SC_NOT_IN, 0, { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK }, 4, EACCES,
	  CORRAL_SC_NET_HOST, CORRAL_P_NET_NO_SOCKETS, "network \"host\": inet, inet6, unix and netlink only; no packet, vsock or other family" },
	{ "socketpair", CORRAL_SC_NOT_IN, 0, { AF_UNIX }, 1, EACCES, ALL, CORRAL_P_NET_NO_SOCKETS,
	  "a connected AF_UNIX pair reaches nothing outside; other families refused" },
	{ "io_uring_setup", CORRAL_SC_ANY, 0, { 0 }, 0, ENOSYS, ALL, CORRAL_P_NET_NO_IO_URING,
	  "io_uring opens files and sockets without the syscalls this filter sees; ENOSYS: callers fall back" },
	{ "io_uring_enter", CORRAL_SC_ANY, 0, { 0 }, 0, ENOSYS, ALL, CORRAL_P_NET_NO_IO_URING, "as io_uring_setup" },
	{ "io_uring_register", CORRAL_SC_ANY, 0, { 0 }, 0, ENOSYS, ALL, CORRAL_P_NET_NO_IO_URING, "as io_uring_setup" },

	/* Terminal input injection: the request is an unsigned int in the
	 * kernel, so only its low 32 bits are compared (CVE-2019-10063). */
	{ "ioctl", CORRAL_SC_LOW32_EQ, 1, { TIOCSTI }, 1, EPERM, ALL, CORRAL_P_TTY_NO_INJECTION,
	  "TIOCSTI pushes input into a terminal: commands typed into the caller's shell" },
	{ "ioctl", CORRAL_SC_LOW32_EQ, 1, { TIOCLINUX }, 1, EPERM, ALL, CORRAL_P_TTY_NO_INJECTION,
	  "TIOCLINUX can paste the console selection as input" },

	/* Namespaces: a new user namespace hands out every capability over
	 * fresh namespaces, the largest kernel attack surface there is. */
	{ "clone", CORRAL_SC_ANY_BIT, 0, { NS_FLAGS }, 1, EPERM, ALL, CORRAL_P_SECCOMP_DENY_TABLE,
	  "clone with a namespace flag (flags: arg0 on x86_64 and arm64): new namespaces are the sandbox's to make" },
	DENY("clone3", ENOSYS,
	     "flags live in memory the filter cannot read; ENOSYS makes libc fall back to clone, whose flags it sees"),
	DENY("unshare", EPERM, "new namespaces (user namespaces above all)"),
	DENY("setns", EPERM, "entering another namespace"),

	/* Mounts and the root. */
	DENY("mount", EPERM, "mounting (in a user namespace it would be allowed)"),
	DENY("umount2", EPERM, "unmounting"),
	DENY("pivot_root", EPERM, "changing the root mount"),
	DENY("chroot", EPERM, "changing the root directory"),
	DENY("move_mount", EPERM, "new mount API"),
	DENY("open_tree", EPERM, "new mount API: detached mount trees"),
	{ .syscall = "open_tree_attr", .cond = CORRAL_SC_ANY, .err = EPERM, .when = ALL,
	  .promise = CORRAL_P_SECCOMP_DENY_TABLE, .reason = "new mount API (Linux 6.15)", .fallback_nr = 467 },
	DENY("fsopen", EPERM, "new mount API"),
	DENY("fsconfig", EPERM, "new mount API"),
	DENY("fsmount", EPERM, "new mount API"),
	DENY("fspick", EPERM, "new mount API"),
	DENY("mount_setattr", EPERM, "new mount API: changing mount attributes"),

	/* Kernel attack surface an untrusted command has no use for. */
	DENY("bpf", EPERM, "eBPF programs and maps: verifier bugs are a classic privilege escalation"),
	DENY("perf_event_open", EPERM, "performance counters: side channels and a long CVE history"),
	DENY("userfaultfd", EPERM, "stalls kernel copies at will: a race-widening tool for exploits"),
	DENY("keyctl", EPERM, "kernel keyrings are not namespaced: the caller's session keys"),
	DENY("add_key", EPERM, "kernel keyrings"),
	DENY("request_key", EPERM, "kernel keyrings"),
	DENY("kexec_load", EPERM, "loading a new kernel"),
	DENY("kexec_file_load", EPERM, "loading a new kernel"),
	DENY("init_module", EPERM, "loading kernel modules"),
	DENY("finit_module", EPERM, "loading kernel modules"),
	DENY("delete_module", EPERM, "unloading kernel modules"),
	DENY("open_by_handle_at", EPERM, "opens any file by handle, around every path check (the 2014 docker breakout)"),
	DENY("name_to_handle_at", EPERM, "file handles: the other half of open_by_handle_at"),
	DENY("reboot", EPERM, "rebooting the host"),
	DENY("swapon", EPERM, "swap devices"),
	DENY("swapoff", EPERM, "swap devices"),
	DENY("acct", EPERM, "process accounting to a file"),
	DENY("quotactl", EPERM, "filesystem quotas"),
	DENY("quotactl_fd", EPERM, "filesystem quotas"),
	DENY("syslog", EPERM, "the kernel log: addresses and other processes' messages"),
	DENY("modify_ldt", EPERM, "x86 LDT entries: only 16-bit code needs them; a recurring source of kernel bugs"),
	DENY("iopl", EPERM, "raw I/O port access"),
	DENY("ioperm", EPERM, "raw I/O port access"),
	DENY("settimeofday", EPERM, "the host's clock"),
	DENY("clock_settime", EPERM, "the host's clock"),
	DENY("clock_adjtime", EPERM, "the host's clock"),
	DENY("adjtimex", EPERM, "the host's clock (also changes it, not only reads it)"),
	{ "personality", CORRAL_SC_NOT_ZERO_OR_QUERY, 0, { 0 }, 0, EPERM, ALL, CORRAL_P_SECCOMP_DENY_TABLE,
	  "only PER_LINUX and the query 0xffffffff: flags such as READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE and "
	  "MMAP_PAGE_ZERO weaken exploit mitigations" },

	/* Obsolete or removed: ENOSYS, as on a kernel without them. */
	DENY("lookup_dcookie", ENOSYS, "obsolete (oprofile); removed in Linux 6.9"),
	DENY("nfsservctl", ENOSYS, "removed in Linux 3.1"),
	DENY("uselib", ENOSYS, "obsolete a.out loader"),
	DENY("ustat", ENOSYS, "obsolete; filesystem information by device number"),
	DENY("sysfs", ENOSYS, "obsolete; filesystem type list"),
	DENY("_sysctl", ENOSYS, "removed in Linux 5.5"),
	DENY("create_module", ENOSYS, "removed in Linux 2.6"),
	DENY("get_kernel_syms", ENOSYS, "removed in Linux 2.6"),
	DENY("query_module", ENOSYS, "removed in Linux 2.6"),
	DENY("vm86", ENOSYS, "virtual 8086 mode (i386 only)"),
	DENY("vm86old", ENOSYS, "virtual 8086 mode (i386 only)"),

	/*
	 * Reaching other processes' memory. Landlock (every ABI) confines
	 * these to the sandbox's own domain: a confined process may trace
	 * only processes in the same or a nested domain, so gdb and strace
	 * work inside and nothing outside is reachable. Without Landlock the
	 * filter denies them instead.
	 */
	{ "ptrace", CORRAL_SC_ANY, 0, { 0 }, 0, EPERM, ALL | CORRAL_SC_NO_LANDLOCK, CORRAL_P_SECCOMP_DENY_TABLE,
	  "without Landlock nothing scopes ptrace to the sandbox (with it, gdb and strace work inside)" },
	{ "process_vm_readv", CORRAL_SC_ANY, 0, { 0 }, 0, EPERM, ALL | CORRAL_SC_NO_LANDLOCK,
	  CORRAL_P_SECCOMP_DENY_TABLE, "without Landlock: another process's memory" },
	{ "process_vm_writev", CORRAL_SC_ANY, 0, { 0 }, 0, EPERM, ALL | CORRAL_SC_NO_LANDLOCK,
	  CORRAL_P_SECCOMP_DENY_TABLE, "without Landlock: another process's memory" },
	{ "pidfd_getfd", CORRAL_SC_ANY, 0, { 0 }, 0, EPERM, ALL | CORRAL_SC_NO_LANDLOCK,
	  CORRAL_P_SECCOMP_DENY_TABLE, "without Landlock: another process's file descriptors" },
	{ "process_madvise", CORRAL_SC_ANY, 0, { 0 }, 0, EPERM, ALL | CORRAL_SC_NO_LANDLOCK,
	  CORRAL_P_SECCOMP_DENY_TABLE, "without Landlock: another process's memory advice" },
	{ "kcmp", CORRAL_SC_ANY, 0, { 0 }, 0, EPERM, ALL | CORRAL_SC_NO_LANDLOCK,
	  CORRAL_P_SECCOMP_DENY_TABLE, "without Landlock: probes another process's kernel objects" },
	{ "move_pages", CORRAL_SC_NOT_IN, 0, { 0 }, 1, EPERM, ALL | CORRAL_SC_NO_LANDLOCK,
	  CORRAL_P_SECCOMP_DENY_TABLE, "without Landlock: another process's pages (pid 0, itself, stays allowed)" },
	{ "migrate_pages", CORRAL_SC_NOT_IN, 0, { 0 }, 1, EPERM, ALL | CORRAL_SC_NO_LANDLOCK,
	  CORRAL_P_SECCOMP_DENY_TABLE, "without Landlock: another process's pages (pid 0, itself, stays allowed)" },

	/*
	 * System V IPC and POSIX message queues. Their objects live in the
	 * IPC namespace, not the filesystem: Landlock does not see them, and
	 * any process of the same uid may find (shmctl SHM_STAT walks them
	 * all, no key needed), attach, read, overwrite or remove another's
	 * segments, queues and semaphores, and mq_unlink another's queue.
	 * Segments also outlive the run and its memory limit (only
	 * kernel.shmall bounds them). A private IPC namespace would keep them
	 * usable but costs 200-350 us per run here and needs root or a user
	 * namespace, so they are refused (shmdt stays: it detaches only one's
	 * own). POSIX shared memory and semaphores (shm_open, sem_open) are
	 * files in /dev/shm, which Landlock confines; multiprocessing uses
	 * those. docs/workloads.md names what needs the refused ones.
	 */
	DENY("shmget", EPERM, "System V shared memory: segments of every process of the uid, and outliving the run"),
	DENY("shmat", EPERM, "System V shared memory: attaches any segment of the uid's, found without its key"),
	DENY("shmctl", EPERM, "System V shared memory: lists, reads, changes and removes the uid's segments"),
	DENY("msgget", EPERM, "System V message queues: the uid's queues, outside processes' included"),
	DENY("msgsnd", EPERM, "System V message queues"),
	DENY("msgrcv", EPERM, "System V message queues: takes another process's messages"),
	DENY("msgctl", EPERM, "System V message queues: lists and removes the uid's queues"),
	DENY("semget", EPERM, "System V semaphores: the uid's sets, outside processes' included"),
	DENY("semop", EPERM, "System V semaphores"),
	DENY("semtimedop", EPERM, "System V semaphores"),
	DENY("semctl", EPERM, "System V semaphores: sets the value of, and removes, another process's semaphores"),
	DENY("mq_open", EPERM, "POSIX message queues: a namespace of their own, outside Landlock"),
	DENY("mq_unlink", EPERM, "POSIX message queues: removes another process's queue"),
	DENY("mq_timedsend", EPERM, "POSIX message queues"),
	DENY("mq_timedreceive", EPERM, "POSIX message queues"),
	DENY("mq_notify", EPERM, "POSIX message queues"),
	DENY("mq_getsetattr", EPERM, "POSIX message queues"),

	/*
	 * Another process's resource limits. Landlock does not scope
	 * prlimit, and the kernel lets a process set the limits of any
	 * process of its own uid: the supervisor's, when corral runs
	 * unprivileged (a low RLIMIT_NOFILE blinds its sweep of leftovers),
	 * or any process of the user's (RLIMIT_CPU 1 kills it). Setting is
	 * refused unless pid is 0 (itself; setrlimit is that too); reading
	 * (new limit NULL) stays allowed.
	 */
	{ "prlimit64", CORRAL_SC_BOTH_NONZERO, 0, { 2 }, 1, EPERM, ALL, CORRAL_P_SECCOMP_DENY_TABLE,
	  "setting another process's limits (pid != 0 and a new limit): the supervisor's, or any process of the uid's" },

	/*
	 * Another process's scheduling: its nice value, I/O priority, CPU
	 * affinity, policy (SCHED_IDLE) and deadline parameters. Landlock does
	 * not scope these either, and the kernel lets a process change them for
	 * any process of its own uid: a session's template and keepers (every
	 * later call inherits what they carry), or any process of the user's
	 * when corral runs unprivileged. Refused unless the target is the
	 * caller (pid or who 0; nice(), taskset CMD and chrt CMD are that),
	 * its own process group (setpriority, ioprio_set with who 0) being the
	 * command's own too; "every process of the uid" (PRIO_USER,
	 * IOPRIO_WHO_USER) is refused whoever it names.
	 */
	{ "setpriority", CORRAL_SC_NONZERO, 1, { 0 }, 0, EPERM, ALL, CORRAL_P_SECCOMP_DENY_TABLE,
	  "another process's nice value (who != 0)" },
	{ "setpriority", CORRAL_SC_LOW32_EQ, 0, { 2 /* PRIO_USER */ }, 1, EPERM, ALL, CORRAL_P_SECCOMP_DENY_TABLE,
	  "the nice value of every process of a uid (PRIO_USER)" },
	{ "ioprio_set", CORRAL_SC_NONZERO, 1, { 0 }, 0, EPERM, ALL, CORRAL_P_SECCOMP_DENY_TABLE,
	  "another process's I/O priority (who != 0)" },
	{ "ioprio_set", CORRAL_SC_LOW32_EQ, 0, { 3 /* IOPRIO_WHO_USER */ }, 1, EPERM, ALL, CORRAL_P_SECCOMP_DENY_TABLE,
	  "the I/O priority of every process of a uid (IOPRIO_WHO_USER)" },
	{ "sched_setaffinity", CORRAL_SC_NONZERO, 0, { 0 }, 0, EPERM, ALL, CORRAL_P_SECCOMP_DENY_TABLE,
	  "another process's CPU affinity (pid != 0)" },
	{ "sched_setscheduler", CORRAL_SC_NONZERO, 0, { 0 }, 0, EPERM, ALL, CORRAL_P_SECCOMP_DENY_TABLE,
	  "another process's scheduling policy (pid != 0)" },
	{ "sched_setparam", CORRAL_SC_NONZERO, 0, { 0 }, 0, EPERM, ALL, CORRAL_P_SECCOMP_DENY_TABLE,
	  "another process's scheduling parameters (pid != 0)" },
	{ "sched_setattr", CORRAL_SC_NONZERO, 0, { 0 }, 0, EPERM, ALL, CORRAL_P_SECCOMP_DENY_TABLE,
	  "another process's scheduling attributes (pid != 0)" },
};

const size_t corral_sc_rules_len = sizeof(corral_sc_rules) / sizeof(corral_sc_rules[0]);

bool corral_sc_rule_applies(const struct corral_sc_rule *r, int network, int landlock_abi)
{
	return corral_sc_rule_applies_unix(r, network, landlock_abi, false);
}

bool corral_sc_rule_applies_unix(const struct corral_sc_rule *r, int network, int landlock_abi,
				 bool unix_allowed)
{
	unsigned bit;

	if ((r->when & CORRAL_SC_UNIX_REFUSED) && unix_allowed)
		return false;
	if ((r->when & CORRAL_SC_UNIX_ALLOWED) && !unix_allowed)
		return false;

	switch (network) {
	case CORRAL_NET_NONE: bit = CORRAL_SC_NET_NONE; break;
	case CORRAL_NET_LOOPBACK: bit = CORRAL_SC_NET_LOOPBACK; break;
	case CORRAL_NET_HOST: bit = CORRAL_SC_NET_HOST; break;
	case CORRAL_NET_ALLOW: bit = CORRAL_SC_NET_ALLOW; break;
	default: return true; /* an unknown mode gets every rule: never less confined */
	}
	if (!(r->when & bit))
		return false;
	if ((r->when & CORRAL_SC_NO_LANDLOCK) && landlock_abi > 0)
		return false;
	return true;
}
