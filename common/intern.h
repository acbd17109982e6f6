/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Stack interning for the profile file, shared by everything that writes profiles with
 * PROF_REC_STACK and PROF_REC_SAMPLES (libprof's writer thread, `prof record -p`): every
 * distinct stack gets an id the first time it is seen, the caller writes it once as a
 * PROF_REC_STACK, and each sample after that is a few bytes in a PROF_REC_SAMPLES batch
 * naming the id, so a long run's file grows with its distinct stacks plus a few bytes per
 * sample. Stacks are compared frame by frame (and by stop reason, flags, sp_word and, in
 * wall profiles, the thread's state), never by hash alone, so two different stacks never
 * merge. A stack's context is part of it: in wall profiles the thread's state, and the
 * thread's label set (prof_label_set()), so that a sample names its labels by its stack.
 * Which sp_word goes in is the caller's
 * choice (docs/FORMAT.md: only one that points into code).
 *
 * A hash table (common/hashtab.h) over a growing frame pool, owned by the one thread that
 * writes the file; memory grows with distinct stacks up to max_frames_total frames, after
 * which cmn_intern_stack() refuses and the caller writes the sample in full. Not
 * async-signal-safe (malloc). Header-only (static inline) so that the prof command shares
 * it without linking the library; an internal header, not installed.
 *
 * Signal handler's path: not allowed (malloc).
 */
#ifndef PROF_COMMON_INTERN_H
#define PROF_COMMON_INTERN_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hashtab.h"

/* One distinct stack. */
struct cmn_intern_stack {
    uint64_t hash;
    uint64_t sp_word;
    size_t at; /* first frame in the pool */
    uint32_t state; /* PROF_STATE_* with its call (prof_rec_sample.state), 0 none */
    uint32_t label_set; /* the thread's label set id (prof_stack_state.label_set), 0 none */
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
    struct cmn_hashtab table; /* the stacks by their hash and contents */
};

static inline uint64_t cmn_intern_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static inline void cmn_intern_init(struct cmn_intern *t, size_t max_frames_total)
{
    memset(t, 0, sizeof(*t));
    cmn_hashtab_init(&t->table, 1024);
    t->max_frames_total = max_frames_total;
}

/* Frees everything. Accepts a zeroed or finished table. */
static inline void cmn_intern_fini(struct cmn_intern *t)
{
    free(t->frames);
    free(t->stacks);
    cmn_hashtab_fini(&t->table);
    memset(t, 0, sizeof(*t));
}

/* A stack as looked up (cmn_intern_stack_state()'s arguments). */
struct cmn_intern_key {
    uint64_t hash;
    const uint64_t *frames;
    uint64_t sp_word;
    uint32_t state;
    uint32_t label_set;
    uint16_t n_frames;
    uint8_t stop_reason;
    uint8_t flags;
};

static inline bool cmn_intern_same(const void *ctx, uint32_t id, const void *key)
{
    const struct cmn_intern *t = ctx;
    const struct cmn_intern_stack *s = &t->stacks[id];
    const struct cmn_intern_key *k = key;
    return s->hash == k->hash && s->n_frames == k->n_frames && s->stop_reason == k->stop_reason &&
           s->flags == k->flags && s->sp_word == k->sp_word && s->state == k->state &&
           s->label_set == k->label_set &&
           memcmp(t->frames + s->at, k->frames, k->n_frames * sizeof(uint64_t)) == 0;
}

static inline uint64_t cmn_intern_hash_of(const void *ctx, uint32_t id)
{
    return ((const struct cmn_intern *)ctx)->stacks[id].hash;
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
    return cmn_hashtab_reserve(&t->table, cmn_intern_hash_of, t);
}

/* The id of this stack with thread state `state` (0 outside wall profiles) and label set
 * `label_set` (0 none; ids count from 0 in order of first appearance); *is_new says
 * whether it was just added, and then the caller writes its PROF_REC_STACK. 0, or -ENOSPC
 * / -ENOMEM when it cannot be added (write the sample in full). */
static inline int cmn_intern_stack_ctx(struct cmn_intern *t, const uint64_t *frames,
                                        uint16_t n_frames, uint8_t stop_reason, uint8_t flags,
                                        uint64_t sp_word, uint32_t state, uint32_t label_set,
                                        uint32_t *id, int *is_new)
{
    uint64_t h = cmn_intern_mix(
        cmn_intern_mix(n_frames, stop_reason | (uint64_t)flags << 8 | (uint64_t)state << 16),
        sp_word ^ ((uint64_t)label_set << 32));
    for (uint16_t i = 0; i < n_frames; i++)
        h = cmn_intern_mix(h, frames[i]);
    *is_new = 0;
    struct cmn_intern_key key = {.hash = h,
                                 .frames = frames,
                                 .sp_word = sp_word,
                                 .state = state,
                                 .label_set = label_set,
                                 .n_frames = n_frames,
                                 .stop_reason = stop_reason,
                                 .flags = flags};
    uint32_t found = cmn_hashtab_find(&t->table, h, cmn_intern_same, t, &key);
    if (found != CMN_HASHTAB_NONE) {
        *id = found;
        return 0;
    }
    int rc = cmn_intern_reserve(t, n_frames);
    if (rc != 0)
        return rc;
    struct cmn_intern_stack *s = &t->stacks[t->n_stacks];
    *s = (struct cmn_intern_stack){.hash = h,
                                    .sp_word = sp_word,
                                    .at = t->n_frames,
                                    .state = state,
                                    .label_set = label_set,
                                    .n_frames = n_frames,
                                    .stop_reason = stop_reason,
                                    .flags = flags};
    memcpy(t->frames + t->n_frames, frames, n_frames * sizeof(uint64_t));
    t->n_frames += n_frames;
    cmn_hashtab_insert(&t->table, h, (uint32_t)t->n_stacks);
    *id = (uint32_t)t->n_stacks++;
    *is_new = 1;
    return 0;
}

/* The same without a label set. */
static inline int cmn_intern_stack_state(struct cmn_intern *t, const uint64_t *frames,
                                          uint16_t n_frames, uint8_t stop_reason, uint8_t flags,
                                          uint64_t sp_word, uint32_t state, uint32_t *id,
                                          int *is_new)
{
    return cmn_intern_stack_ctx(t, frames, n_frames, stop_reason, flags, sp_word, state, 0, id,
                                is_new);
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
