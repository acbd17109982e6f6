/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Stack interning for the profile file, shared by everything that writes profiles with
 * PROF_REC_STACK and PROF_REC_SAMPLES (libprof's writer thread, `prof record -p`): every
 * distinct stack gets an id the first time it is seen, the caller writes it once as a
 * PROF_REC_STACK, and each sample after that is a few bytes in a PROF_REC_SAMPLES batch
 * naming the id, so a long run's file grows with its distinct stacks plus a few bytes per
 * sample. Stacks are compared frame by frame (and by stop reason, flags, sp_word and, in
 * wall profiles, the thread's state), never by hash alone, so two different stacks never
 * merge. Which sp_word goes in is the caller's
 * choice (docs/FORMAT.md: only one that points into code).
 *
 * A hash table over a growing frame pool, owned by the one thread that writes the file;
 * memory grows with distinct stacks up to max_frames_total frames, after which
 * cmn_intern_stack() refuses and the caller writes the sample in full. Not
 * async-signal-safe (malloc). Header-only (static inline) so that the prof command shares
 * it without linking the library; an internal header, not installed.
 */
#ifndef PROF_COMMON_INTERN_H
#define PROF_COMMON_INTERN_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

/* One distinct stack. */
struct cmn_intern_stack {
    uint64_t hash;
    uint64_t sp_word;
    size_t at; /* first frame in the pool */
    uint32_t state; /* PROF_STATE_* with its call (prof_rec_sample.state), 0 none */
    uint16_t n_frames;
    uint8_t stop_reason;
    uint8_t flags;
};

struct cmn_intern {
    uint64_t *frames; /* every interned stack's frames, back to back */
    size_t n_frames, cap_frames;
    size_t max_frames_total; /* refuse new stacks beyond this many frames in all */
    struct cmn_intern_stack *stacks;
    size_t n_stacks, cap_stacks;
    uint32_t *table;  /* open addressing: stack index + 1, 0 empty */
    size_t table_cap; /* a power of two, at most half full */
};

static inline uint64_t cmn_intern_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static inline void cmn_intern_init(struct cmn_intern *t, size_t max_frames_total)
{
    memset(t, 0, sizeof(*t));
    t->max_frames_total = max_frames_total;
}

/* Frees everything. Accepts a zeroed or finished table. */
static inline void cmn_intern_fini(struct cmn_intern *t)
{
    free(t->frames);
    free(t->stacks);
    free(t->table);
    memset(t, 0, sizeof(*t));
}

static inline int cmn_intern_same(const struct cmn_intern *t, const struct cmn_intern_stack *s,
                                   const uint64_t *frames, uint16_t n, uint8_t stop, uint8_t flags,
                                   uint64_t sp, uint32_t state)
{
    return s->n_frames == n && s->stop_reason == stop && s->flags == flags && s->sp_word == sp &&
           s->state == state &&
           memcmp(t->frames + s->at, frames, n * sizeof(uint64_t)) == 0;
}

static inline int cmn_intern_grow_table(struct cmn_intern *t)
{
    size_t cap = t->table_cap ? t->table_cap * 2 : 1024;
    uint32_t *table = calloc(cap, sizeof(*table));
    if (!table)
        return -ENOMEM;
    for (size_t i = 0; i < t->n_stacks; i++) {
        size_t slot = t->stacks[i].hash & (cap - 1);
        while (table[slot])
            slot = (slot + 1) & (cap - 1);
        table[slot] = (uint32_t)i + 1;
    }
    free(t->table);
    t->table = table;
    t->table_cap = cap;
    return 0;
}

/* Room for one more stack of n_frames. 0, -ENOSPC (the frame budget) or -ENOMEM. */
static inline int cmn_intern_reserve(struct cmn_intern *t, size_t n_frames)
{
    if (t->n_frames + n_frames > t->max_frames_total)
        return -ENOSPC;
    if (!CMN_GROW(t->frames, t->cap_frames, t->n_frames + n_frames, 4096))
        return -ENOMEM;
    if (!CMN_GROW(t->stacks, t->cap_stacks, t->n_stacks + 1, 256))
        return -ENOMEM;
    if ((t->n_stacks + 1) * 2 > t->table_cap)
        return cmn_intern_grow_table(t);
    return 0;
}

/* The id of this stack with thread state `state` (0 outside wall profiles; ids count from
 * 0 in order of first appearance); *is_new says whether it was just added, and then the
 * caller writes its PROF_REC_STACK. 0, or -ENOSPC / -ENOMEM when it cannot be added
 * (write the sample in full). */
static inline int cmn_intern_stack_state(struct cmn_intern *t, const uint64_t *frames,
                                          uint16_t n_frames, uint8_t stop_reason, uint8_t flags,
                                          uint64_t sp_word, uint32_t state, uint32_t *id,
                                          int *is_new)
{
    uint64_t h = cmn_intern_mix(
        cmn_intern_mix(n_frames, stop_reason | (uint64_t)flags << 8 | (uint64_t)state << 16),
        sp_word);
    for (uint16_t i = 0; i < n_frames; i++)
        h = cmn_intern_mix(h, frames[i]);
    *is_new = 0;
    if (t->table_cap) {
        for (size_t slot = h & (t->table_cap - 1); t->table[slot];
             slot = (slot + 1) & (t->table_cap - 1)) {
            const struct cmn_intern_stack *s = &t->stacks[t->table[slot] - 1];
            if (s->hash == h &&
                cmn_intern_same(t, s, frames, n_frames, stop_reason, flags, sp_word, state)) {
                *id = t->table[slot] - 1;
                return 0;
            }
        }
    }
    int rc = cmn_intern_reserve(t, n_frames);
    if (rc != 0)
        return rc;
    struct cmn_intern_stack *s = &t->stacks[t->n_stacks];
    *s = (struct cmn_intern_stack){.hash = h,
                                    .sp_word = sp_word,
                                    .at = t->n_frames,
                                    .state = state,
                                    .n_frames = n_frames,
                                    .stop_reason = stop_reason,
                                    .flags = flags};
    memcpy(t->frames + t->n_frames, frames, n_frames * sizeof(uint64_t));
    t->n_frames += n_frames;
    size_t slot = h & (t->table_cap - 1);
    while (t->table[slot])
        slot = (slot + 1) & (t->table_cap - 1);
    t->table[slot] = (uint32_t)t->n_stacks + 1;
    *id = (uint32_t)t->n_stacks++;
    *is_new = 1;
    return 0;
}

/* The same without a state (CPU profiles). */
static inline int cmn_intern_stack(struct cmn_intern *t, const uint64_t *frames,
                                    uint16_t n_frames, uint8_t stop_reason, uint8_t flags,
                                    uint64_t sp_word, uint32_t *id, int *is_new)
{
    return cmn_intern_stack_state(t, frames, n_frames, stop_reason, flags, sp_word, 0, id,
                                  is_new);
}

#endif
