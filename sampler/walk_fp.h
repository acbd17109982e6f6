/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The frame-pointer stepper: follows the chain of saved frame pointers from an interrupted
 * context, reading only inside the stack bounds it is given. It stops, and says why, at the
 * first inconsistency (see PROF_STOP_* in include/libprof/prof_format.h) instead of guessing.
 * Before the walk it looks at the interrupted leaf: when the instruction bytes at the pc
 * prove that the leaf's frame is not set up (at its entry, between `push %rbp` and `mov
 * %rsp,%rbp`, at its `ret`), the frame pointer still describes the caller's frame and the
 * chain alone would skip the caller; the stepper then takes it from the stack slot or link
 * register the bytes name (see arch_leaf_state()) and flags the sample. Elsewhere it adds
 * nothing (common/fp_step.h).
 */
#ifndef PROF_SAMPLER_WALK_FP_H
#define PROF_SAMPLER_WALK_FP_H

#include <stdint.h>

#include "common/fp_step.h" /* struct cmn_fp_regs: the registers a walk starts from */

/* The readable stack of the interrupted thread: [lo, hi). */
struct smp_stack {
    uintptr_t lo;      /* lowest address; the walk also never reads below regs->sp */
    uintptr_t hi;      /* one past the highest address */
    uintptr_t root_fp; /* frame of the entry trampoline below main() or the thread's start
                        * routine: the walk ends there, complete; 0 = not known */
};

/* Marks the functions that load words from other functions' frames. AddressSanitizer
 * poisons parts of frames as redzones, and these reads, always inside the proven stack
 * bounds, are what a stack walker does; ASan builds must not report them. */
#if defined(__SANITIZE_ADDRESS__)
#define SMP_READS_STACK __attribute__((no_sanitize_address))
#else
#define SMP_READS_STACK
#endif

/* Async-signal-safe, re-entrant. Writes the leaf pc then one return address per frame into
 * frames (at most max_frames, which must be >= 1), sets *stop_reason to a PROF_STOP_*
 * value, *flags to PROF_SAMPLE_LEAF_CALLER when frames[1] was recovered for an interrupted
 * leaf without its frame (else 0), and returns the number of frames written. Reaching
 * stack->root_fp ends the walk as complete, without the trampoline's own frame. Loads only
 * inside [max(lo, sp), hi); instruction bytes (at the pc) are read with the fault-proof
 * probe (sampler/probe.h), never directly. */
unsigned smp_walk_fp(const struct cmn_fp_regs *regs, const struct smp_stack *stack,
                     uint64_t *frames, unsigned max_frames, uint8_t *stop_reason,
                     uint8_t *flags);

#endif
