/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The seccomp filter: built from seccomp/deny_table.c with libseccomp in the
 * parent, exported to classic BPF, installed in the child with one raw
 * seccomp(2) call. The child makes no libseccomp call: libseccomp allocates
 * and is not async-signal-safe.
 */
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp/seccomp.h"

static const enum corral_promise_id promise_ids[] = {
	CORRAL_P_NET_NO_SOCKETS, CORRAL_P_NET_NO_IO_URING, CORRAL_P_SECCOMP_FOREIGN_ABI,
	CORRAL_P_SECCOMP_DENY_TABLE, CORRAL_P_TTY_NO_INJECTION,
};

static void ctx_freep(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}

bool corral_seccomp_available(void)
{
	static const uint32_t needed[] = { SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_ERRNO,
					   SECCOMP_RET_ALLOW };

	/* Strict mode (1) would have killed us already; -1 is a kernel without seccomp. */
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(needed); i++) {
		uint32_t action = needed[i];

		if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) < 0)
			return false;
	}
	return true;
}


static int add_one(scmp_filter_ctx ctx, uint32_t act, int nr, unsigned int n,
		   const struct scmp_arg_cmp *cmp)
{
	return seccomp_rule_add_exact_array(ctx, act, nr, n, cmp);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * libseccomp 2.5 allows one comparison per argument in a rule, and rules on
 * one syscall are ORed. "arg not in S" is therefore written as the union of
 * its complement: the gaps between the sorted values of S, each cut into
 * aligned power-of-two blocks (one masked compare each), and "arg > max(S)".
 * All 64 bits are compared, so a value with high bits set (which the kernel
 * would truncate to an int) lands in "> max" and is refused: fail safe.
 */
static int add_not_in(scmp_filter_ctx ctx, const struct corral_sc_rule *r, uint32_t act, int nr)
{
	uint64_t v[CORRAL_SC_MAX_VALUES], lo = 0;
	struct scmp_arg_cmp c;
	int k;

	if (r->n_values == 0 || r->n_values > CORRAL_SC_MAX_VALUES)
		return -EINVAL;
	memcpy(v, r->value, r->n_values * sizeof(v[0]));
	qsort(v, r->n_values, sizeof(v[0]), cmp_u64);
	for (unsigned i = 0; i < r->n_values; i++) {
		/* the gap [lo, v[i] - 1] */
		while (lo < v[i]) {
			uint64_t size = 1;

			/* the largest aligned block starting at lo that fits in the gap */
			while ((lo & (size * 2 - 1)) == 0 && lo + size * 2 - 1 < v[i] && size < (1ULL << 62))
				size *= 2;
			c = SCMP_CMP(r->arg, SCMP_CMP_MASKED_EQ, ~(size - 1), lo);
			k = add_one(ctx, act, nr, 1, &c);
			if (k < 0)
				return k;
			lo += size;
		}
		lo = v[i] + 1;
	}
	c = SCMP_CMP(r->arg, SCMP_CMP_GT, v[r->n_values - 1]);
	return add_one(ctx, act, nr, 1, &c);
}

static int add_rule(scmp_filter_ctx ctx, const struct corral_sc_rule *r, uint32_t act, int nr)
{
	struct scmp_arg_cmp c;
	int k;

	switch (r->cond) {
	case CORRAL_SC_ANY:
		return add_one(ctx, act, nr, 0, NULL);
	case CORRAL_SC_ANY_BIT:
		for (int bit = 0; bit < 64; bit++) {
			uint64_t m = 1ULL << bit;

			if (!(r->value[0] & m))
				continue;
			c = SCMP_CMP(r->arg, SCMP_CMP_MASKED_EQ, m, m);
			k = add_one(ctx, act, nr, 1, &c);
			if (k < 0)
				return k;
		}
		return 0;
	case CORRAL_SC_LOW32_EQ:
		c = SCMP_CMP(r->arg, SCMP_CMP_MASKED_EQ, 0xffffffffULL, r->value[0] & 0xffffffffULL);
		return add_one(ctx, act, nr, 1, &c);
	case CORRAL_SC_NOT_IN:
		return add_not_in(ctx, r, act, nr);
	case CORRAL_SC_NOT_ZERO_OR_QUERY:
		/*
		 * A 32-bit value other than 0 and 0xffffffff has, somewhere
		 * round the 32-bit circle, a set bit followed by a clear
		 * one: 32 two-bit masked compares cover exactly those
		 * values. "> 0xffffffff" covers high bits.
		 */
		for (int bit = 0; bit < 32; bit++) {
			uint64_t set = 1ULL << bit, clear = 1ULL << ((bit + 1) % 32);

			c = SCMP_CMP(r->arg, SCMP_CMP_MASKED_EQ, set | clear, set);
			k = add_one(ctx, act, nr, 1, &c);
			if (k < 0)
				return k;
		}
		c = SCMP_CMP(r->arg, SCMP_CMP_GT, 0xffffffffULL);
		return add_one(ctx, act, nr, 1, &c);
	case CORRAL_SC_NONZERO:
		c = SCMP_CMP(r->arg, SCMP_CMP_NE, 0);
		return add_one(ctx, act, nr, 1, &c);
	case CORRAL_SC_BOTH_NONZERO: {
		/* Two compares in one rule: ANDed. */
		struct scmp_arg_cmp both[2] = {
			SCMP_CMP(r->arg, SCMP_CMP_NE, 0),
			SCMP_CMP((unsigned)r->value[0], SCMP_CMP_NE, 0),
		};

		if (r->value[0] > 5 || r->value[0] == r->arg)
			return -EINVAL;
		return add_one(ctx, act, nr, 2, both);
	}
	}
	return -EINVAL;
}

/*
 * Where syscall numbers from 424 on are the same as everywhere (the
 * generic table): there the "newer than reviewed" cut-off is meaningful.
 */
#if defined(__x86_64__) || defined(__aarch64__) || (defined(__riscv) && __riscv_xlen == 64)
#define HAVE_NEWEST_CUTOFF 1
#else
#define HAVE_NEWEST_CUTOFF 0
#endif

/*
 * Instructions run before libseccomp's program: on the native arch, a
 * number above CORRAL_SC_NEWEST_NR answers ENOSYS. libseccomp cannot say
 * "every number above N", and its program starts with its own arch check,
 * so a prefix whose jumps all land on that first instruction (or return)
 * composes with it untouched. Numbers with bit 0x40000000 (x32) and -1 go
 * on to libseccomp, which kills the former and allows the latter. Only
 * constant-emulatable instructions: the kernel's allow cache still works.
 */
#define PREFIX_LEN 6
static void newest_prefix(struct sock_filter *p, uint32_t native_arch)
{
	const struct sock_filter prefix[PREFIX_LEN] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, native_arch, 0, PREFIX_LEN - 2),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, PREFIX_LEN - 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, CORRAL_SC_NEWEST_NR, 0, PREFIX_LEN - 5),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
	};

	memcpy(p, prefix, sizeof(prefix));
}

static int export_bpf(scmp_filter_ctx ctx, struct corral_bpf *out, struct corral_error *err)
{
	size_t pre = HAVE_NEWEST_CUTOFF ? PREFIX_LEN : 0;
	_cleanup_close_ int fd = -1;
	_cleanup_free_ struct sock_filter *insns = NULL;
	struct stat st;
	size_t n, got = 0;
	int r;

	/* libseccomp 2.5 exports only to an fd; a memfd keeps it off disk. */
	fd = memfd_create("corral-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return corral_err(err, CORRAL_E_SETUP, errno, "seccomp: memfd_create: %m");
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return corral_err(err, CORRAL_E_SETUP, -r, "seccomp: exporting the filter to BPF: %s",
				  corral_strerror(-r));
	if (fstat(fd, &st) < 0)
		return corral_err(err, CORRAL_E_SETUP, errno, "seccomp: fstat: %m");
	if (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) != 0)
		return corral_err(err, CORRAL_E_INTERNAL, EINVAL,
				  "seccomp: exported BPF has a bad size (%lld bytes)", (long long)st.st_size);
	n = st.st_size / sizeof(struct sock_filter);
	if (n + pre > BPF_MAXINSNS)
		return corral_err(err, CORRAL_E_INTERNAL, E2BIG,
				  "seccomp: filter has %zu instructions, the kernel takes %d", n + pre,
				  BPF_MAXINSNS);
	insns = calloc(n + pre, sizeof(*insns));
	if (!insns)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "seccomp: out of memory");
	if (pre)
		newest_prefix(insns, seccomp_arch_native());
	while (got < n * sizeof(*insns)) {
		ssize_t k = pread(fd, (char *)(insns + pre) + got, n * sizeof(*insns) - got, got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return corral_err(err, CORRAL_E_SETUP, k < 0 ? errno : EIO,
					  "seccomp: reading the exported BPF back: %s",
					  k < 0 ? corral_strerror(errno) : "short read");
		got += k;
	}
	out->filter = TAKE_PTR(insns);
	out->len = (unsigned short)(n + pre);
	return 0;
}

static void add_promises(const struct corral_policy *p, int landlock_abi, bool unix_allowed,
			 struct corral_posture *ps)
{
	if (p->network == CORRAL_NET_NONE && unix_allowed)
		corral_posture_add(ps, CORRAL_P_NET_NO_SOCKETS, CORRAL_PROMISE_ENFORCED,
				   "socket() of every family but AF_UNIX: refused by seccomp (Unix sockets "
				   "reach only the root and read_write paths: net.unix_mediated)");
	else if (p->network == CORRAL_NET_NONE)
		corral_posture_add(ps, CORRAL_P_NET_NO_SOCKETS, CORRAL_PROMISE_ENFORCED,
				   "socket() of every family, AF_UNIX included: refused by seccomp "
				   "(socketpair(AF_UNIX) works)");
	else if (p->network == CORRAL_NET_ALLOW)
		corral_posture_add(ps, CORRAL_P_NET_NO_SOCKETS, CORRAL_PROMISE_ENFORCED,
				   "network \"allow\": inet, inet6%s sockets only (refused by seccomp); their "
				   "connects and addressed sends are mediated (net.egress_allow)",
				   unix_allowed ? " and unix" : "");
	else
		corral_posture_add(ps, CORRAL_P_NET_NO_SOCKETS, CORRAL_PROMISE_NA,
				   p->network == CORRAL_NET_LOOPBACK && unix_allowed ?
				   "network \"loopback\": inet and inet6 sockets allowed, confined by a "
				   "private network namespace; AF_UNIX allowed (net.unix_mediated); other "
				   "families refused by seccomp" :
				   p->network == CORRAL_NET_LOOPBACK ?
				   "network \"loopback\": inet and inet6 sockets allowed, confined by a "
				   "private network namespace; unix and other families refused by seccomp" :
				   "network \"host\": inet, inet6, unix and netlink sockets allowed (other "
				   "families refused by seccomp)");
	corral_posture_add(ps, CORRAL_P_NET_NO_IO_URING, CORRAL_PROMISE_ENFORCED,
			   "io_uring_setup/enter/register: refused by seccomp (ENOSYS)");
	corral_posture_add(ps, CORRAL_P_SECCOMP_FOREIGN_ABI, CORRAL_PROMISE_ENFORCED,
			   "i386 (int $0x80) and x32 syscalls: the process is killed by seccomp");
	corral_posture_add(ps, CORRAL_P_SECCOMP_DENY_TABLE, CORRAL_PROMISE_ENFORCED,
			   "mount, namespaces, bpf, perf, keyrings, modules, kexec, clock...: refused by "
			   "seccomp%s", landlock_abi > 0 ? "" :
			   "; ptrace and process_vm_* too (no Landlock to scope them)");
	corral_posture_add(ps, CORRAL_P_TTY_NO_INJECTION, CORRAL_PROMISE_ENFORCED,
			   "TIOCSTI/TIOCLINUX terminal input injection: refused by seccomp");
}

/*
 * With the supervisor's mediation listening, a socket() family the network
 * mode refuses goes to it instead: it counts the refusal for the result's
 * denials and answers the row's errno (EACCES), so the command sees what
 * it would without. Nothing is notified for a command that never asks.
 */
static uint32_t rule_action(const struct corral_sc_rule *r, bool notify_socket)
{
	if (notify_socket && strcmp(r->syscall, "socket") == 0 && r->err == EACCES)
		return SCMP_ACT_NOTIFY;
	return SCMP_ACT_ERRNO(r->err);
}

/*
 * The supervisor's rules (see corral_seccomp_compile_unix): the listener
 * hand-over and TIOCGPTPEER always; connect and the sends only when it
 * mediates Unix sockets (|mediate_unix|).
 */
static int add_mediation(scmp_filter_ctx ctx, int handover_fd, bool mediate_unix, bool mediate_inet)
{
	const uint32_t notify = SCMP_ACT_NOTIFY;
	int r = 0;

	/* Network "allow": listen() too, so no inet socket can take connections from the host's network. */
	if (mediate_inet)
		r = seccomp_rule_add_exact(ctx, notify, SCMP_SYS(listen), 0);
	if (!mediate_unix && !mediate_inet)
		goto pty;
	if (r == 0)
		r = seccomp_rule_add_exact(ctx, notify, SCMP_SYS(connect), 0);
	if (r == 0)
		r = seccomp_rule_add_exact(ctx, notify, SCMP_SYS(sendmmsg), 0);
	if (r == 0)
		r = seccomp_rule_add_exact(ctx, notify, SCMP_SYS(sendto), 1, SCMP_A4(SCMP_CMP_NE, 0));
	if (r == 0)
		r = seccomp_rule_add_exact(ctx, notify, SCMP_SYS(sendmsg), 1,
					   SCMP_A2(SCMP_CMP_LE, 0xffffffffULL));
	/* The peer of a pty the command made: Landlock denies /dev/pts, the supervisor opens it. */
pty:
	if (r == 0)
		r = seccomp_rule_add_exact(ctx, notify, SCMP_SYS(ioctl), 1,
					   SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, TIOCGPTPEER));
	if (r == 0)
		r = seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(sendmsg), 2,
					   SCMP_A0(SCMP_CMP_NE, (uint64_t)handover_fd),
					   SCMP_A2(SCMP_CMP_GT, 0xffffffffULL));
	return r;
}

static int compile(const struct corral_policy *p, int landlock_abi, int optimize, bool unix_allowed,
		   int handover_fd, struct corral_posture *ps, struct corral_bpf *out,
		   struct corral_error *err)
{
	_cleanup_(ctx_freep) scmp_filter_ctx ctx = NULL;
	/* "allow" without the supervisor's mediation would be the host's network: "none"'s rules instead. */
	int net = p->network == CORRAL_NET_ALLOW && handover_fd < 0 ? CORRAL_NET_NONE : p->network;
	int r;

	out->filter = NULL;
	out->len = 0;

	if (!corral_seccomp_available()) {
		for (size_t i = 0; i < ARRAY_SIZE(promise_ids); i++)
			corral_posture_add(ps, promise_ids[i], CORRAL_PROMISE_DROPPED,
					   "needs seccomp filters (SECCOMP_SET_MODE_FILTER with kill-process and "
					   "errno actions, Linux 4.14); unavailable here");
		return 0;
	}

	/*
	 * Default ALLOW: the filesystem is Landlock's; this filter refuses
	 * what the table lists. seccomp_init() knows only the native
	 * architecture, so a syscall made through another ABI (i386 int
	 * 0x80, and x32, which libseccomp treats as its own architecture and
	 * filters out of the x86_64 branch by the 0x40000000 number bit)
	 * takes the bad-architecture action: the whole process dies.
	 */
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "seccomp: seccomp_init failed");
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (r < 0)
		return corral_err(err, CORRAL_E_SETUP, -r, "seccomp: bad-arch action: %s", corral_strerror(-r));
	if (optimize > 0) {
		r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, optimize);
		if (r < 0)
			return corral_err(err, CORRAL_E_SETUP, -r, "seccomp: optimize level %d: %s",
					  optimize, corral_strerror(-r));
	}

	for (size_t i = 0; i < corral_sc_rules_len; i++) {
		const struct corral_sc_rule *rule = &corral_sc_rules[i];
		int nr;

		if (!corral_sc_rule_applies_unix(rule, net, landlock_abi, unix_allowed))
			continue;
		nr = seccomp_syscall_resolve_name(rule->syscall);
		if (nr == __NR_SCMP_ERROR)
			nr = rule->fallback_nr > 0 ? rule->fallback_nr : __NR_SCMP_ERROR;
		/* Unknown, or a pseudo-number: the call does not exist on this architecture. */
		if (nr < 0)
			continue;
		r = add_rule(ctx, rule, rule_action(rule, handover_fd >= 0), nr);
		if (r < 0)
			return corral_err(err, CORRAL_E_SETUP, -r, "seccomp: rule for %s: %s", rule->syscall,
					  corral_strerror(-r));
	}

	if (handover_fd >= 0) {
		/* The supervisor mediates Unix sockets itself (corral_unix_mode: CORRAL_UNIX_MEDIATED). */
		bool mediate_unix = unix_allowed && landlock_abi < 9 && p->network != CORRAL_NET_HOST;

		r = add_mediation(ctx, handover_fd, mediate_unix, p->network == CORRAL_NET_ALLOW);
		if (r < 0)
			return corral_err(err, CORRAL_E_SETUP, -r, "seccomp: Unix-socket mediation rules: %s",
					  corral_strerror(-r));
	}

	r = export_bpf(ctx, out, err);
	if (r < 0)
		return r;
	add_promises(p, landlock_abi, unix_allowed, ps);
	return 0;
}

int corral_seccomp_compile_opt(const struct corral_policy *p, int landlock_abi, int optimize,
			       struct corral_posture *ps, struct corral_bpf *out,
			       struct corral_error *err)
{
	return compile(p, landlock_abi, optimize, false, -1, ps, out, err);
}

int corral_seccomp_compile_unix(const struct corral_policy *p, int landlock_abi, bool unix_allowed,
				int handover_fd, struct corral_posture *ps, struct corral_bpf *out,
				struct corral_error *err)
{
	return compile(p, landlock_abi, CORRAL_SC_DEFAULT_OPTIMIZE, unix_allowed, handover_fd, ps, out,
		       err);
}

int corral_seccomp_compile_abi(const struct corral_policy *p, int landlock_abi,
			       struct corral_posture *ps, struct corral_bpf *out,
			       struct corral_error *err)
{
	return corral_seccomp_compile_opt(p, landlock_abi, CORRAL_SC_DEFAULT_OPTIMIZE, ps, out, err);
}

int corral_seccomp_compile(const struct corral_policy *p, struct corral_posture *ps,
			   struct corral_bpf *out, struct corral_error *err)
{
	return corral_seccomp_compile_abi(p, corral_landlock_abi(), ps, out, err);
}

void corral_bpf_free(struct corral_bpf *prog)
{
	if (!prog)
		return;
	free(prog->filter);
	prog->filter = NULL;
	prog->len = 0;
}

int corral_seccomp_install(const struct corral_bpf *prog)
{
	struct sock_fprog fprog;

	if (!prog)
		return -EINVAL;
	if (prog->len == 0)
		return 0;
	fprog.len = prog->len;
	fprog.filter = prog->filter;
	/* No TSYNC: the child is single-threaded. Raw syscall: no libseccomp after fork. */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) < 0)
		return -errno;
	return 0;
}
