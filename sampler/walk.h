/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The in-process stack walk, on the signal handler's path: the walk of common/uw_step.h
 * over this thread's own memory. Each frame is stepped by its module's unwind table where
 * libprof/ has built one (the code map holds them: sampler/codemap.h), by frame pointer
 * elsewhere; PROF_UNWIND chooses (SMP_WALK_*). A module whose table is not built yet is
 * asked for at the first frame that needs it; the walk stops there meanwhile
 * (PROF_STOP_PENDING), since a frame-pointer step through code built without frame
 * pointers would skip a caller.
 *
 * Reads stack words directly, only inside the bounds it is given (the thread's stack,
 * proven readable outside the handler, or the alternate signal stack it runs on), and
 * through the probe on any other stack (a coroutine's: struct smp_stack.probed);
 * instruction bytes only through the fault-proof probe (sampler/probe.h). It stops, and
 * says why, at the first frame it cannot prove (PROF_STOP_* in
 * include/libprof/prof_format.h) instead of guessing.
 */
#ifndef PROF_SAMPLER_WALK_H
#define PROF_SAMPLER_WALK_H

#include <stdint.h>

#include "common/fp_step.h" /* struct cmn_fp_regs: the registers a walk starts from */

/* The readable stack of the interrupted thread: [lo, hi). */
struct smp_stack {
    uintptr_t lo;      /* lowest address; the walk also never reads below regs->sp */
    uintptr_t hi;      /* one past the highest address */
    uintptr_t root_fp; /* frame of the entry trampoline below main() or the thread's start
                        * routine: the walk ends there, complete; 0 = not known */
    uintptr_t thread_lo, thread_hi; /* the thread's own stack, when [lo, hi) is its
                                     * alternate signal stack: a signal frame there leads
                                     * back to it; 0 = the same */
    uintptr_t root_lo, root_hi; /* the entry trampolines' code: a return address in it ends
                                 * the walk complete, without it; 0 = none */
    int probed;        /* 1: [lo, hi) is memory the thread runs on that is not its own stack
                        * (a coroutine's, a goroutine's): not proven readable, so every word
                        * outside [thread_lo, thread_hi) is read through the probe, and only
                        * while every page from lo up to it is readable (a walk that leaves
                        * that memory stops, PROF_STOP_BOUNDS) */
};

/* A probed stack's extent at most, from its stack pointer's page (SMP_PROBED_SPAN), and
 * the distance one step may prove in one go (a frame larger than it stops the walk). */
#define SMP_PROBED_SPAN (1ull << 30)
#define SMP_PROBED_JUMP (1u << 20)

/* How frames are stepped (PROF_UNWIND). */
#define SMP_WALK_FP 0u     /* frame pointers only */
#define SMP_WALK_AUTO 1u   /* unwind tables where there are, frame pointers elsewhere */
#define SMP_WALK_TABLES 2u /* unwind tables only: a pc without a row ends the walk */

/* A stack deeper than the frames a sample holds keeps both ends: its innermost frames, a
 * PROF_FRAME_ELIDED marker and its outermost quarter (so that every flame graph stays
 * rooted at the thread's first frame). The walk reads at most SMP_WALK_CAP frames: each
 * link is read and checked, there is no shortcut that would not be a guess, and this bounds
 * a sample's cost (beyond it the stack keeps its innermost frames, PROF_STOP_DEPTH).
 * Samples of fewer than 16 frames keep their innermost ones only. */
#define SMP_WALK_CAP 8192u
#define SMP_WALK_KEEP_OUTER(max_frames) ((max_frames) >= 16u ? (max_frames) / 4u : 0u)

/* What a walk says besides its frames. */
struct smp_walk_out {
    uint8_t stop_reason; /* PROF_STOP_* */
    uint8_t flags;       /* PROF_SAMPLE_LEAF_CALLER when the leaf's caller came from its
                          * instruction bytes */
    uint32_t n_by_table; /* frames stepped by an unwind table */
    uint32_t n_by_fp;    /* frames stepped by frame pointer */
    uint32_t n_pending;  /* 1 when it stopped at a module whose table was not built yet */
    uint32_t n_unknown;  /* frames whose pc is in no range of the code map: code mapped
                          * since the map was read (a library being loaded), asked to be
                          * read again */
    uint32_t n_elided;   /* frames left out between the two ends */
    uint32_t deferred;   /* its stack kept for a later walk (sampler/defer.h), 0 none */
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
 * frames (at most max_frames, which must be >= 1), fills *out and returns the number of
 * frames written. Reaching stack->root_fp's frame ends the walk complete, without the
 * trampoline's own frame. mode: SMP_WALK_*. */
unsigned smp_walk(const struct cmn_fp_regs *regs, const struct smp_stack *stack,
                  uint64_t *frames, unsigned max_frames, unsigned mode,
                  struct smp_walk_out *out);

#endif
