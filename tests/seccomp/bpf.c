/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit: the exported BPF program, run by a classic-BPF interpreter on
 * synthetic seccomp_data. Each decision is checked against what the table
 * means, without a kernel and whatever our privileges: this is what proves
 * a refusal came from the filter (as nobody, many calls fail anyway). Both
 * libseccomp layouts (optimize 1 and 2) must decide identically.
 */
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "sc-test.h"
#include "tests/seccomp/bpf-interp.h"

#define SC_ALLOW SECCOMP_RET_ALLOW
#define SC_KILL SECCOMP_RET_KILL_PROCESS
#define SC_ERRNO(e) (SECCOMP_RET_ERRNO | (uint32_t)(e))

#define NS_FLAGS (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | \
		  CLONE_NEWNET | CLONE_NEWCGROUP | 0x80UL)

static int checks;

static uint32_t decide(const struct corral_bpf *b, uint32_t arch, int nr, const uint64_t *args)
{
	struct seccomp_data d = { .nr = nr, .arch = arch };

	if (args)
		memcpy(d.args, args, sizeof(d.args));
	return bpf_run(b, &d);
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
	/* splitmix64: reproducible */
	uint64_t z = (rnd_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Interesting 64-bit values: small, boundaries, single bits, high-bit variants, random. */
static uint64_t pick(unsigned i)
{
	static const uint64_t fixed[] = { 0, 1, 2, 3, 10, 16, 17, 40, 0x7fffffff, 0x80000000,
					  0xfffffffe, 0xffffffff, 0x100000000ULL, 0x1ffffffffULL,
					  ~0ULL, 0xffffffff00000000ULL };

	if (i < ARRAY_SIZE(fixed))
		return fixed[i];
	i -= ARRAY_SIZE(fixed);
	if (i < 64)
		return 1ULL << i;
	if (i < 128)
		return (1ULL << (i - 64)) | (rnd() & 0xffffffff00000000ULL);
	return i & 1 ? rnd() & 0xffffffff : rnd();
}
#define N_PICKS 4096

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		checks++;                                                  \
		if (!(cond)) {                                             \
			fprintf(stderr, "FAIL: " __VA_ARGS__);             \
			fprintf(stderr, "\n");                             \
			sc_failures++;                                     \
		}                                                          \
	} while (0)

static bool in_set(uint64_t v, const uint64_t *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v == set[i])
			return true;
	return false;
}

/* Another row for the same syscall is in this filter (e.g. socket under "loopback"). */
static bool other_row_applies(const struct corral_sc_rule *r, int net, int abi)
{
	for (size_t i = 0; i < corral_sc_rules_len; i++)
		if (&corral_sc_rules[i] != r && strcmp(corral_sc_rules[i].syscall, r->syscall) == 0 &&
		    corral_sc_rule_applies(&corral_sc_rules[i], net, abi))
			return true;
	return false;
}

static void check_filter(const struct corral_bpf *b, int net, int abi, const char *tag)
{
	static const uint64_t fam_loopback[] = { AF_INET, AF_INET6 };
	static const uint64_t fam_host[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK };
	static const uint64_t unix_only[] = { AF_UNIX };
	int nr_socket = SCMP_SYS(socket), nr_pair = SCMP_SYS(socketpair), nr_ioctl = SCMP_SYS(ioctl);
	int nr_pers = SCMP_SYS(personality), nr_clone = SCMP_SYS(clone);
	uint64_t a[6] = { 0 };
	bool denied_nr[1024] = { false };
	uint32_t want;

	/* Foreign ABIs and x32 numbers: the process dies, whatever the call. */
	for (int nr = 0; nr < 450; nr++) {
		CHECK(decide(b, AUDIT_ARCH_I386, nr, NULL) == SC_KILL, "%s: i386 nr %d not killed", tag, nr);
		CHECK(decide(b, AUDIT_ARCH_X86_64, nr | 0x40000000, NULL) == SC_KILL,
		      "%s: x32 nr %d not killed", tag, nr);
	}
	CHECK(decide(b, AUDIT_ARCH_AARCH64, 0, NULL) == SC_KILL, "%s: aarch64 not killed", tag);
	CHECK(decide(b, 0, 0, NULL) == SC_KILL, "%s: arch 0 not killed", tag);

	/* Unconditional rows: refused with their errno, or left alone. */
	for (size_t i = 0; i < corral_sc_rules_len; i++) {
		const struct corral_sc_rule *r = &corral_sc_rules[i];
		int nr = seccomp_syscall_resolve_name(r->syscall);

		if (nr == __NR_SCMP_ERROR && r->fallback_nr > 0)
			nr = r->fallback_nr;
		if (nr < 0)
			continue;
		if (nr < 1024)
			denied_nr[nr] = true;
		if (r->cond != CORRAL_SC_ANY || (!corral_sc_rule_applies(r, net, abi) && other_row_applies(r, net, abi)))
			continue;
		for (unsigned k = 0; k < 64; k++) {
			for (int j = 0; j < 6; j++)
				a[j] = pick(k * 7 + j);
			uint32_t got = decide(b, AUDIT_ARCH_X86_64, nr, a);

			if (corral_sc_rule_applies(r, net, abi))
				CHECK(got == SC_ERRNO(r->err), "%s: %s -> %#x, want errno %d", tag, r->syscall, got,
				      r->err);
			else
				CHECK(got == SC_ALLOW, "%s: %s -> %#x, want allow", tag, r->syscall, got);
		}
	}

	/* Every "not one of these values" row, on its argument. */
	for (size_t i = 0; i < corral_sc_rules_len; i++) {
		const struct corral_sc_rule *r = &corral_sc_rules[i];
		int nr = seccomp_syscall_resolve_name(r->syscall);
		bool applies = corral_sc_rule_applies(r, net, abi);

		if (r->cond != CORRAL_SC_NOT_IN || nr < 0 || (!applies && other_row_applies(r, net, abi)))
			continue;
		for (unsigned k = 0; k < N_PICKS; k++) {
			uint64_t v = pick(k);

			memset(a, 0, sizeof(a));
			a[r->arg] = v;
			want = applies && !in_set(v, r->value, r->n_values) ? SC_ERRNO(r->err) : SC_ALLOW;
			CHECK(decide(b, AUDIT_ARCH_X86_64, nr, a) == want, "%s: %s(arg%u = %#llx) want %#x", tag,
			      r->syscall, r->arg, (unsigned long long)v, want);
		}
	}

	/* Every "both arguments non-zero" row, on its two arguments. */
	for (size_t i = 0; i < corral_sc_rules_len; i++) {
		const struct corral_sc_rule *r = &corral_sc_rules[i];
		int nr = seccomp_syscall_resolve_name(r->syscall);
		bool applies = corral_sc_rule_applies(r, net, abi);

		if (r->cond != CORRAL_SC_BOTH_NONZERO || nr < 0 || (!applies && other_row_applies(r, net, abi)))
			continue;
		for (unsigned k = 0; k < N_PICKS; k++)
			for (unsigned m = 0; m < N_PICKS; m += 7) {
				for (int j = 0; j < 6; j++)
					a[j] = rnd();
				a[r->arg] = pick(k);
				a[r->value[0]] = pick(m);
				want = applies && a[r->arg] && a[r->value[0]] ? SC_ERRNO(r->err) : SC_ALLOW;
				CHECK(decide(b, AUDIT_ARCH_X86_64, nr, a) == want,
				      "%s: %s(arg%u = %#llx, arg%u = %#llx) want %#x", tag, r->syscall, r->arg,
				      (unsigned long long)a[r->arg], (unsigned)r->value[0],
				      (unsigned long long)a[r->value[0]], want);
			}
	}

	/* Every other syscall up to the newest reviewed is allowed, whatever its arguments. */
	for (int nr = 0; nr < 1024; nr++) {
		if (denied_nr[nr])
			continue;
		for (int j = 0; j < 6; j++)
			a[j] = rnd();
		want = nr <= CORRAL_SC_NEWEST_NR ? SC_ALLOW : SC_ERRNO(ENOSYS);
		CHECK(decide(b, AUDIT_ARCH_X86_64, nr, a) == want, "%s: nr %d -> want %#x", tag, nr, want);
	}
	/* Numbers newer than the review look absent, up to the x32 bit. */
	for (unsigned k = 0; k < 4096; k++) {
		uint32_t nr = CORRAL_SC_NEWEST_NR + 1 + (uint32_t)(rnd() % (0x40000000 - CORRAL_SC_NEWEST_NR - 1));

		CHECK(decide(b, AUDIT_ARCH_X86_64, (int)nr, NULL) == SC_ERRNO(ENOSYS), "%s: nr %#x", tag, nr);
	}
	CHECK(decide(b, AUDIT_ARCH_X86_64, 0x3fffffff, NULL) == SC_ERRNO(ENOSYS), "%s: nr 0x3fffffff", tag);
	CHECK(decide(b, AUDIT_ARCH_X86_64, -1, NULL) == SC_ALLOW, "%s: nr -1 (skipped syscall)", tag);
	CHECK(decide(b, AUDIT_ARCH_X86_64, -2, NULL) == SC_KILL, "%s: nr -2", tag);
	CHECK(decide(b, AUDIT_ARCH_I386, CORRAL_SC_NEWEST_NR + 1, NULL) == SC_KILL, "%s: i386 new nr", tag);

	for (unsigned i = 0; i < N_PICKS; i++) {
		uint64_t v = pick(i);
		uint32_t got;
		bool deny;

		memset(a, 0, sizeof(a));
		a[0] = v;
		a[1] = SOCK_STREAM;
		/* socket(family): the allowed families for the mode, compared on all 64 bits */
		got = decide(b, AUDIT_ARCH_X86_64, nr_socket, a);
		deny = net == CORRAL_NET_NONE ? true :
		       net == CORRAL_NET_LOOPBACK ? !in_set(v, fam_loopback, ARRAY_SIZE(fam_loopback)) :
		       !in_set(v, fam_host, ARRAY_SIZE(fam_host));
		CHECK(got == (deny ? SC_ERRNO(EACCES) : SC_ALLOW), "%s: socket(%#llx) -> %#x", tag,
		      (unsigned long long)v, got);
		got = decide(b, AUDIT_ARCH_X86_64, nr_pair, a);
		deny = !in_set(v, unix_only, 1);
		CHECK(got == (deny ? SC_ERRNO(EACCES) : SC_ALLOW), "%s: socketpair(%#llx) -> %#x", tag,
		      (unsigned long long)v, got);

		/* personality: only 0 and the query */
		got = decide(b, AUDIT_ARCH_X86_64, nr_pers, a);
		deny = v != 0 && v != 0xffffffffULL;
		CHECK(got == (deny ? SC_ERRNO(EPERM) : SC_ALLOW), "%s: personality(%#llx) -> %#x", tag,
		      (unsigned long long)v, got);

		/* clone: any namespace flag, in the low 32 bits the kernel reads */
		got = decide(b, AUDIT_ARCH_X86_64, nr_clone, a);
		deny = (v & NS_FLAGS) != 0;
		CHECK(got == (deny ? SC_ERRNO(EPERM) : SC_ALLOW), "%s: clone(%#llx) -> %#x", tag,
		      (unsigned long long)v, got);

		/* ioctl: TIOCSTI/TIOCLINUX by the low 32 bits of the request, any high bits */
		a[0] = 1;
		a[1] = i % 3 == 0 ? (v & 0xffffffff00000000ULL) | TIOCSTI :
		       i % 3 == 1 ? (v & 0xffffffff00000000ULL) | TIOCLINUX : v;
		want = ((uint32_t)a[1] == TIOCSTI || (uint32_t)a[1] == TIOCLINUX) ? SC_ERRNO(EPERM) : SC_ALLOW;
		got = decide(b, AUDIT_ARCH_X86_64, nr_ioctl, a);
		CHECK(got == want, "%s: ioctl(1, %#llx) -> %#x", tag, (unsigned long long)a[1], got);
	}
	/*
	 * Another process's scheduling: setpriority and ioprio_set refuse a
	 * non-zero who (all 64 bits) and "every process of a uid" (which, low
	 * 32 bits); the sched_set* calls a non-zero pid.
	 */
	{
		static const char *const by_pid[] = { "sched_setaffinity", "sched_setscheduler", "sched_setparam",
						      "sched_setattr" };
		int nr_prio = SCMP_SYS(setpriority), nr_io = SCMP_SYS(ioprio_set);

		for (unsigned i = 0; i < N_PICKS; i += 3)
			for (unsigned j = 0; j < 24; j++) {
				memset(a, 0, sizeof(a));
				a[0] = pick(j);
				a[1] = pick(i);
				a[2] = rnd();
				want = a[1] != 0 || (uint32_t)a[0] == 2 ? SC_ERRNO(EPERM) : SC_ALLOW;
				CHECK(decide(b, AUDIT_ARCH_X86_64, nr_prio, a) == want, "%s: setpriority(%#llx, %#llx)",
				      tag, (unsigned long long)a[0], (unsigned long long)a[1]);
				want = a[1] != 0 || (uint32_t)a[0] == 3 ? SC_ERRNO(EPERM) : SC_ALLOW;
				CHECK(decide(b, AUDIT_ARCH_X86_64, nr_io, a) == want, "%s: ioprio_set(%#llx, %#llx)",
				      tag, (unsigned long long)a[0], (unsigned long long)a[1]);
			}
		for (size_t k = 0; k < ARRAY_SIZE(by_pid); k++)
			for (unsigned i = 0; i < N_PICKS; i++) {
				int nr = seccomp_syscall_resolve_name(by_pid[k]);

				memset(a, 0, sizeof(a));
				a[0] = pick(i);
				a[1] = rnd();
				want = a[0] != 0 ? SC_ERRNO(EPERM) : SC_ALLOW;
				CHECK(decide(b, AUDIT_ARCH_X86_64, nr, a) == want, "%s: %s(%#llx)", tag, by_pid[k],
				      (unsigned long long)a[0]);
			}
	}
	/* The requests a terminal needs. */
	for (unsigned long req = 0x5401; req <= 0x5460; req++) {
		a[1] = req;
		want = req == TIOCSTI || req == TIOCLINUX ? SC_ERRNO(EPERM) : SC_ALLOW;
		CHECK(decide(b, AUDIT_ARCH_X86_64, nr_ioctl, a) == want, "%s: ioctl %#lx", tag, req);
	}
}

/* Every syscall of the table is named, `like_this`, in the doc's seccomp section. */
static void check_doc(void)
{
	const char *src = getenv("CORRAL_SRCDIR");
	char path[4096], *text = NULL, *start, *end;
	size_t cap = 0;
	FILE *f;

	if (!src) {
		printf("# CORRAL_SRCDIR unset: doc check skipped\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/docs/threat-model.md", src);
	f = fopen(path, "re");
	if (!f || getdelim(&text, &cap, '\0', f) < 0) {
		sc_report(false, "read %s", path);
		free(text);
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
	start = strstr(text, "\n## seccomp\n");
	end = start ? strstr(start + 1, "\n## ") : NULL;
	if (end)
		*end = '\0';
	for (size_t i = 0; start && i < corral_sc_rules_len; i++) {
		char needle[64];

		snprintf(needle, sizeof(needle), "`%s`", corral_sc_rules[i].syscall);
		if (!strstr(start, needle))
			sc_report(false, "docs/threat-model.md (seccomp section) does not name %s", needle);
	}
	sc_report(start != NULL, "docs/threat-model.md has a seccomp section naming every row");
	free(text);
}

int main(void)
{
	char tag[64];

	sc_require_seccomp();
	for (int opt = 1; opt <= 2; opt++) {
		for (int net = CORRAL_NET_NONE; net <= CORRAL_NET_HOST; net++) {
			for (int abi = 0; abi <= 1; abi++) {
				struct corral_policy p = { .network = net };
				struct corral_posture ps = { 0 };
				struct corral_error err = { 0 };
				struct corral_bpf b;
				int before = sc_failures;

				if (corral_seccomp_compile_opt(&p, abi, opt, &ps, &b, &err) < 0 || !b.len) {
					fprintf(stderr, "compile: %s\n", err.message);
					return 1;
				}
				snprintf(tag, sizeof(tag), "net %s, landlock %d, optimize %d", sc_net_name(net), abi,
					 opt);
				check_filter(&b, net, abi, tag);
				sc_report(sc_failures == before, "%s: %u instructions, decisions as the table says",
					  tag, b.len);
				for (size_t i = 0; i < ps.n; i++)
					sc_report(ps.items[i].state == (strcmp(ps.items[i].id, "net.no_sockets") == 0 &&
									net != CORRAL_NET_NONE ?
									CORRAL_PROMISE_NA : CORRAL_PROMISE_ENFORCED),
						  "%s: promise %s %d %s", tag, ps.items[i].id, ps.items[i].state,
						  ps.items[i].why);
				corral_bpf_free(&b);
				corral_bpf_free(&b);
			}
		}
	}
	check_doc();
	printf("# %d decisions checked\n", checks);
	return sc_finish("seccomp-bpf");
}
