/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The frame-pointer stepper: follows the chain of saved frame pointers from an interrupted
 * context, reading only inside the stack bounds it is given. It stops, and says why, at the
 * first inconsistency (see PROF_STOP_* in include/prof_format.h) instead of guessing.
 */
#ifndef PROF_SAMPLER_WALK_FP_H
#define PROF_SAMPLER_WALK_FP_H

#include <stdint.h>

/* The registers a walk starts from, taken from the interrupted context. */
struct smp_regs {
    uintptr_t pc; /* interrupted instruction */
    uintptr_t sp; /* stack pointer at the interruption */
    uintptr_t fp; /* frame pointer at the interruption */
};

/* The readable stack of the interrupted thread: [lo, hi). */
struct smp_stack {
    uintptr_t lo;      /* lowest address; the walk also never reads below regs->sp */
    uintptr_t hi;      /* one past the highest address */
    uintptr_t root_fp; /* frame of the entry trampoline below main() or the thread's start
                        * routine: the walk ends there, complete; 0 = not known */
};

/* Async-signal-safe, re-entrant. Writes the leaf pc then one return address per frame into
 * frames (at most max_frames, which must be >= 1), sets *stop_reason to a PROF_STOP_*
 * value and returns the number of frames written. Reaching stack->root_fp ends the walk
 * as complete, without the trampoline's own frame. Never reads outside [max(lo, sp), hi). */
unsigned smp_walk_fp(const struct smp_regs *regs, const struct smp_stack *stack,
                     uint64_t *frames, unsigned max_frames, uint8_t *stop_reason);

#endif
