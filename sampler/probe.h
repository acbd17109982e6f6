/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The fault-proof memory probe: reads memory that is not proven readable (instruction bytes
 * at an interrupted pc, the bytes before a candidate return address, anything the
 * libunwind stepper asks for outside the thread's stack) without ever faulting. The kernel
 * does the read: process_vm_readv(2) on our own pid copies the bytes or fails with EFAULT,
 * so an unmapped, PROT_NONE or kernel address costs one system call instead of a SIGSEGV,
 * and a page unmapped by another thread between the check and the read cannot hurt,
 * because there is no separate check. Where process_vm_readv is refused (a seccomp filter,
 * an old kernel), smp_probe_init() selects a fallback: rt_sigprocmask(2) with an invalid
 * `how` copies 8 bytes from the address first and answers EFAULT when they are unreadable,
 * EINVAL otherwise, without changing the signal mask; the copy is then done by a plain load
 * (with a small window in which a concurrent munmap could fault it).
 *
 * Called from the signal handler (the steppers) and from ordinary threads. Measured cost on
 * the development machine (bench/walk): see docs/ARCHITECTURE.md, "Stack walking".
 */
#ifndef PROF_SAMPLER_PROBE_H
#define PROF_SAMPLER_PROBE_H

#include <stddef.h>
#include <stdint.h>

#define SMP_PROBE_MAX_BYTES 64u /* largest single read smp_probe_read() accepts */
#define SMP_PROBE_PAGE 4096u    /* the unit smp_probe_pages() reads (the smallest page) */
#define SMP_PROBE_MAX_PAGES 16u /* pages one smp_probe_pages() proves at most */

/* Async-signal-safe, re-entrant. */
/* Copies n bytes (1..SMP_PROBE_MAX_BYTES) at addr into dst. Returns 0, or -EFAULT when any
 * of them is not readable (dst is then undefined), -EINVAL for a bad n. Keeps errno. */
int smp_probe_read(void *dst, uintptr_t addr, size_t n);
/* Proves the n_pages pages (1..SMP_PROBE_MAX_PAGES of SMP_PROBE_PAGE bytes) from `from`
 * (aligned) readable, all of them, and copies the last one into page (SMP_PROBE_PAGE
 * bytes): 0, or -EFAULT when one is not (page is then undefined), -EINVAL for bad
 * arguments. One process_vm_readv. Keeps errno. */
int smp_probe_pages(void *page, uintptr_t from, unsigned n_pages);
/* 1 when the 8 bytes at addr are readable now, 0 otherwise (rt_sigprocmask probe). Keeps
 * errno. */
int smp_probe_readable8(uintptr_t addr);

/* Not async-signal-safe; call once before the first signal (idempotent). Picks the read
 * method by trying process_vm_readv on a known-good address. */
void smp_probe_init(void);

#endif
