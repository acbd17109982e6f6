/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Stack interning for the profile file: every distinct stack is written once, as a
 * PROF_REC_STACK with an id, and each sample after that is a few bytes in a
 * PROF_REC_SAMPLES batch naming the id, so a long run's file grows with its distinct
 * stacks plus a few bytes per sample. Stacks are compared frame by frame (and by stop
 * reason, flags and the leaf's sp_word), never by hash alone, so two different stacks never
 * merge. The word at the stack pointer is part of a stack only when it points into
 * executable code, by the code map the steppers use (sampler/codemap.h): then it may be
 * the caller of a frameless leaf; any other value is data the reporter never uses, and
 * keeping it would make every sample distinct.
 *
 * Owned by the writer thread's buffer owner (see writer.h); memory grows with distinct
 * stacks up to max_frames_total frames, after which lp_intern_stack() refuses and the caller
 * writes the sample in full.
 */
#ifndef PROF_LIBPROF_INTERN_H
#define PROF_LIBPROF_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct lp_intern_stack; /* one distinct stack */

struct lp_intern {
    uint64_t *frames;       /* every interned stack's frames, back to back */
    size_t n_frames, cap_frames;
    size_t max_frames_total; /* refuse new stacks beyond this many frames in all */
    struct lp_intern_stack *stacks;
    size_t n_stacks, cap_stacks;
    uint32_t *table;        /* open addressing: stack index + 1, 0 empty */
    size_t table_cap;       /* a power of two, at most half full */
};

/* Not async-signal-safe. */
void lp_intern_init(struct lp_intern *t, size_t max_frames_total);
/* Frees everything. Accepts a zeroed or finished table. */
void lp_intern_fini(struct lp_intern *t);
/* The word at sp as it goes into a stack: itself when it points into executable code
 * (the published code map), else 0. */
uint64_t lp_intern_filter_sp(uint64_t sp_word);
/* The id of this stack (ids count from 0 in order of first appearance); *is_new says
 * whether it was just added, and then the caller writes its PROF_REC_STACK. 0, or
 * -ENOSPC / -ENOMEM when it cannot be added (write the sample in full). */
int lp_intern_stack(struct lp_intern *t, const uint64_t *frames, uint16_t n_frames,
                    uint8_t stop_reason, uint8_t flags, uint64_t sp_word, uint32_t *id,
                    int *is_new);

#endif
