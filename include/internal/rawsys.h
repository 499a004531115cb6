/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * System calls that leave errno alone: -errno on failure, as the kernel
 * returns it. For code running in another process's memory (a session's
 * keepers share the template's, supervisor/session/keeper.c): errno is
 * thread-local storage of that memory, and a write to it from here would
 * land in the other process's errno, between its failed call and its read.
 *
 * RAWSYS_INLINE is 1 where the instruction is written here (x86_64,
 * aarch64); elsewhere these go through libc's syscall(3), which sets
 * errno, and callers must not share memory with a running process.
 */
#ifndef CORRAL_INTERNAL_RAWSYS_H
#define CORRAL_INTERNAL_RAWSYS_H

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define RAWSYS_INLINE 1
static inline long rawsys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
#define RAWSYS_INLINE 1
static inline long rawsys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory", "cc");
	return x0;
}
#else
#define RAWSYS_INLINE 0
static inline long rawsys6(long n, long a, long b, long c, long d, long e, long f)
{
	long r = syscall(n, a, b, c, d, e, f);

	return r < 0 ? -errno : r;
}
#endif

/* rawsys(SYS_x, args...): up to six arguments, each cast to long. */
#define RAWSYS_L(x) ((long)(x))
#define rawsys0(n) rawsys6((n), 0, 0, 0, 0, 0, 0)
#define rawsys1(n, a) rawsys6((n), RAWSYS_L(a), 0, 0, 0, 0, 0)
#define rawsys2(n, a, b) rawsys6((n), RAWSYS_L(a), RAWSYS_L(b), 0, 0, 0, 0)
#define rawsys3(n, a, b, c) rawsys6((n), RAWSYS_L(a), RAWSYS_L(b), RAWSYS_L(c), 0, 0, 0)
#define rawsys4(n, a, b, c, d) rawsys6((n), RAWSYS_L(a), RAWSYS_L(b), RAWSYS_L(c), RAWSYS_L(d), 0, 0)
#define rawsys5(n, a, b, c, d, e) rawsys6((n), RAWSYS_L(a), RAWSYS_L(b), RAWSYS_L(c), RAWSYS_L(d), RAWSYS_L(e), 0)

#endif
