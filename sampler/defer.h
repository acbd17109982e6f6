/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Stacks kept for a later walk. A handler's walk that stops at a module whose unwind table
 * is not built yet (PROF_STOP_PENDING: the first sample in each module of a process, the
 * writer thread builds the table when asked), or short of the root after a frame in code
 * the code map does not know yet (a library mapped by a dlopen() still running: the
 * writer reads the maps again), would leave that sample truncated for good,
 * since the stack is gone once the handler returns. Instead the handler copies the
 * registers and the stack at the stack pointer (up to SMP_DEFER_BYTES, within the stack's
 * proven bounds) into a free slot of this pool, and the ring slot says which
 * (smp_slot.deferred); the writer thread, once the table is built, walks the copy again
 * (libprof/ksamples.c) and keeps the longer stack, then frees the slot. A handler that
 * finds no slot free keeps its truncated sample. The pool is memory libprof/ maps at start
 * (NULL before: nothing is kept); a slot's pages are touched only when it is used.
 */
#ifndef PROF_SAMPLER_DEFER_H
#define PROF_SAMPLER_DEFER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/fp_step.h"

#define SMP_DEFER_SLOTS 8u
#define SMP_DEFER_BYTES (32u << 10) /* stack bytes a slot holds */

enum { SMP_DEFER_FREE, SMP_DEFER_FILLING, SMP_DEFER_READY };

struct smp_defer {
    _Atomic int state;       /* SMP_DEFER_*: FREE -> FILLING (a handler, by CAS) -> READY
                              * (the handler) -> FREE (the writer thread) */
    struct cmn_fp_regs regs; /* where the interrupted code was */
    uintptr_t len;           /* bytes of stack copied from regs.sp */
    unsigned char stack[SMP_DEFER_BYTES];
};

/* SMP_DEFER_SLOTS slots, or NULL: set by libprof/ before sampling starts, never freed. */
extern struct smp_defer *_Atomic smp_defer_pool;

/* Bytes libprof/ maps for the pool. */
#define SMP_DEFER_POOL_BYTES (SMP_DEFER_SLOTS * sizeof(struct smp_defer))

/* Async-signal-safe, re-entrant. Copies regs and the stack [regs->sp, min(hi, regs->sp +
 * SMP_DEFER_BYTES)) into a free slot: its number + 1, or 0 when none is free, there is no
 * pool, or the stack pointer is outside [lo, hi) (the walk's bounds). probed: [lo, hi) is
 * not proven readable (sampler/walk.h): the copy goes through the probe, as far as the
 * stack's pages are readable. */
uint32_t smp_defer_take(const struct cmn_fp_regs *regs, uintptr_t lo, uintptr_t hi,
                        int probed);

/* The slot that number (smp_defer_take()'s) names, READY; NULL for 0. */
const struct smp_defer *smp_defer_get(uint32_t number);

/* Frees the slot that number names (0: nothing). */
void smp_defer_release(uint32_t number);

/* A fork child's: every slot free (their fillers were other threads, gone). */
void smp_defer_reset(void);

#endif
