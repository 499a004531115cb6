/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The static corral's entry point: map the executable's pages in a few
 * calls before the C library starts, instead of one page fault at a time.
 *
 * A short `corral run` touches some 60 pages of its own file and data. On
 * a paravirtualized host each first touch is a trap to the hypervisor
 * (measured here: 10-20 µs per fault, against about 1 µs per page for
 * MADV_POPULATE_*), and they were a third of corral's cost over the
 * posix_spawn floor (docs/benchmarks.md). So, first thing after execve:
 *
 *   - every read-only and executable segment: MADV_POPULATE_READ (page
 *     table entries for pages already in the page cache, no copy);
 *   - the file-backed part of the writable segment (.data, the RELRO part):
 *     MADV_POPULATE_WRITE (the private copies the start-up would make
 *     anyway); not .bss, most of which is large buffers a run never
 *     touches (measured: populating it costs more than it saves);
 *   - the 32 KiB of stack below the entry stack pointer.
 *
 * Advice only: on a kernel without MADV_POPULATE_* (before 5.14) the calls
 * fail and corral starts as it always did. This runs before the C library
 * has set up thread-local storage, so it makes raw system calls (no errno)
 * and has no stack protector; it reads nothing but the ELF program headers
 * the first segment maps.
 *
 * Used only in the static x86_64 build (meson.build passes -e corral_entry).
 */
#include <elf.h>
#include <stdint.h>
#include <sys/syscall.h>

#define PREFAULT_PAGE 4096UL
#define PREFAULT_STACK (32 * 1024UL)
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

extern const char __executable_start[];

void corral_prefault(uintptr_t sp);

static inline __attribute__((always_inline)) void madvise_raw(uintptr_t start, uintptr_t end, long advice)
{
	long ret;

	start &= ~(PREFAULT_PAGE - 1);
	end = (end + PREFAULT_PAGE - 1) & ~(PREFAULT_PAGE - 1);
	if (end <= start)
		return;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_madvise), "D"(start), "S"(end - start), "d"(advice)
			 : "rcx", "r11", "memory");
	(void)ret;
}

__attribute__((used, noinline, no_stack_protector)) void corral_prefault(uintptr_t sp)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)__executable_start;
	const Elf64_Phdr *ph;
	uintptr_t bias = (uintptr_t)-1;

	if (eh->e_ident[EI_MAG0] != ELFMAG0 || eh->e_ident[EI_MAG1] != ELFMAG1 ||
	    eh->e_ident[EI_MAG2] != ELFMAG2 || eh->e_ident[EI_MAG3] != ELFMAG3 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phentsize != sizeof(Elf64_Phdr))
		return;
	ph = (const Elf64_Phdr *)(__executable_start + eh->e_phoff);
	/* Load bias: 0 for a fixed-address executable, the base for a static PIE. */
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_vaddr & ~(PREFAULT_PAGE - 1)) < bias)
			bias = ph[i].p_vaddr & ~(PREFAULT_PAGE - 1);
	if (bias == (uintptr_t)-1)
		return;
	bias = (uintptr_t)__executable_start - bias;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		uintptr_t start = bias + ph[i].p_vaddr;

		if (ph[i].p_type != PT_LOAD)
			continue;
		if (ph[i].p_flags & PF_W)
			madvise_raw(start, start + ph[i].p_filesz, MADV_POPULATE_WRITE);
		else
			madvise_raw(start, start + ph[i].p_memsz, MADV_POPULATE_READ);
	}
	madvise_raw(sp - PREFAULT_STACK, sp, MADV_POPULATE_WRITE);
}

/*
 * The entry: the kernel's initial stack and registers are the C library's
 * _start's to read (argc at the stack pointer; %rdx a function for atexit),
 * so both are kept across the call and _start is entered as the kernel
 * would have entered it.
 */
__asm__(".text\n"
	".globl corral_entry\n"
	".type corral_entry, @function\n"
	"corral_entry:\n"
	"	mov %rdx, %r12\n"
	"	mov %rsp, %r13\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call corral_prefault\n"
	"	mov %r13, %rsp\n"
	"	mov %r12, %rdx\n"
	"	jmp _start\n"
	".size corral_entry, . - corral_entry\n");
