/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Stack interning (see intern.h): a hash table over a growing frame pool. */
#include "libprof/intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/codemap.h"

struct lp_intern_stack {
    uint64_t hash;
    uint64_t sp_word;
    size_t at;          /* first frame in the pool */
    uint16_t n_frames;
    uint8_t stop_reason;
    uint8_t flags;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

void lp_intern_init(struct lp_intern *t, size_t max_frames_total)
{
    memset(t, 0, sizeof(*t));
    t->max_frames_total = max_frames_total;
}

void lp_intern_fini(struct lp_intern *t)
{
    free(t->frames);
    free(t->stacks);
    free(t->table);
    memset(t, 0, sizeof(*t));
}

uint64_t lp_intern_filter_sp(uint64_t sp_word)
{
    return sp_word && smp_codemap_contains((uintptr_t)sp_word) ? sp_word : 0;
}

static int same(const struct lp_intern *t, const struct lp_intern_stack *s,
                const uint64_t *frames, uint16_t n, uint8_t stop, uint8_t flags, uint64_t sp)
{
    return s->n_frames == n && s->stop_reason == stop && s->flags == flags &&
           s->sp_word == sp && memcmp(t->frames + s->at, frames, n * sizeof(uint64_t)) == 0;
}

static int grow_table(struct lp_intern *t)
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

static int reserve(struct lp_intern *t, size_t n_frames)
{
    if (t->n_frames + n_frames > t->max_frames_total)
        return -ENOSPC;
    if (t->n_frames + n_frames > t->cap_frames) {
        size_t cap = t->cap_frames ? t->cap_frames * 2 : 4096;
        while (cap < t->n_frames + n_frames)
            cap *= 2;
        uint64_t *f = realloc(t->frames, cap * sizeof(*f));
        if (!f)
            return -ENOMEM;
        t->frames = f;
        t->cap_frames = cap;
    }
    if (t->n_stacks == t->cap_stacks) {
        size_t cap = t->cap_stacks ? t->cap_stacks * 2 : 256;
        struct lp_intern_stack *s = realloc(t->stacks, cap * sizeof(*s));
        if (!s)
            return -ENOMEM;
        t->stacks = s;
        t->cap_stacks = cap;
    }
    if ((t->n_stacks + 1) * 2 > t->table_cap)
        return grow_table(t);
    return 0;
}

int lp_intern_stack(struct lp_intern *t, const uint64_t *frames, uint16_t n_frames,
                    uint8_t stop_reason, uint8_t flags, uint64_t sp_word, uint32_t *id,
                    int *is_new)
{
    uint64_t h = mix(mix(n_frames, stop_reason | (uint64_t)flags << 8), sp_word);
    for (uint16_t i = 0; i < n_frames; i++)
        h = mix(h, frames[i]);
    *is_new = 0;
    if (t->table_cap) {
        for (size_t slot = h & (t->table_cap - 1); t->table[slot];
             slot = (slot + 1) & (t->table_cap - 1)) {
            const struct lp_intern_stack *s = &t->stacks[t->table[slot] - 1];
            if (s->hash == h && same(t, s, frames, n_frames, stop_reason, flags, sp_word)) {
                *id = t->table[slot] - 1;
                return 0;
            }
        }
    }
    int rc = reserve(t, n_frames);
    if (rc != 0)
        return rc;
    struct lp_intern_stack *s = &t->stacks[t->n_stacks];
    *s = (struct lp_intern_stack){ .hash = h, .sp_word = sp_word, .at = t->n_frames,
                                   .n_frames = n_frames, .stop_reason = stop_reason,
                                   .flags = flags };
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
