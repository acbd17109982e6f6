/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Hash tables by open addressing over the caller's entries. The caller keeps its entries
 * (the keys and what they map to) in an array of its own and numbers them 0, 1, 2, ...;
 * the table holds only those numbers, in a power-of-two array of 32-bit slots (entry + 1,
 * 0 for an empty slot) kept at most half full and probed linearly. The caller computes
 * each key's hash (common/hash.h) and says, through a callback, whether an entry has a
 * given key and what an entry's hash is (for growing and for removal), so that one table
 * serves interned strings (reporter/symbols/names.c), interned stacks (common/intern.h,
 * reporter/stacks/aggregate.c), call-tree nodes (reporter/stacks/flame.c), address caches
 * (reporter/symbols/symbols.c, linecache.c) and per-thread or per-counter state
 * (attach/record_pid.c, attach/jitter.c). The table never moves an entry; entries the
 * caller moves (to fill a hole after a removal) are renumbered with
 * cmn_hashtab_renumber().
 *
 * Memory: a table is either growable (zeroed, or cmn_hashtab_init()): cmn_hashtab_reserve()
 * doubles its slots with calloc and rehashes, and cmn_hashtab_fini() frees them; or fixed
 * (cmn_hashtab_init_fixed()): the slots are the caller's, never grown nor freed, and
 * cmn_hashtab_is_full() says when no entry may be added. A table is used by one thread at
 * a time (its owner's), like the entries it numbers. Header-only, never installed.
 *
 * Signal handler's path: allowed. cmn_hashtab_init_fixed(), cmn_hashtab_is_full(),
 * cmn_hashtab_find(), cmn_hashtab_insert(), cmn_hashtab_remove() and
 * cmn_hashtab_renumber() call nothing but the caller's callbacks (and memset), so they
 * may run in a handler on a fixed table in memory the handler may touch;
 * cmn_hashtab_reserve() and cmn_hashtab_fini() allocate and free, and must not (`make
 * lint` refuses calloc and free in the handler's objects).
 */
#ifndef PROF_COMMON_HASHTAB_H
#define PROF_COMMON_HASHTAB_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CMN_HASHTAB_NONE UINT32_MAX              /* no entry: what a failed lookup returns */
#define CMN_HASHTAB_MAX_ENTRIES (UINT32_MAX - 1) /* entries one table numbers at most */
#define CMN_HASHTAB_FIRST_CAP 64u /* a growable table's first slots, unless init says */

struct cmn_hashtab {
    uint32_t *slots;  /* cap slots: entry + 1, 0 empty; the table's own unless is_fixed */
    size_t cap;       /* slots, a power of two; 0 before a growable table's first reserve */
    size_t n;         /* entries in the table */
    size_t first_cap; /* a growable table's first cap, a power of two; 0 for the default */
    bool is_fixed;    /* the slots are the caller's: never grown or freed */
};

/* The hash of entry `entry` (the one its key had when it was inserted). */
typedef uint64_t cmn_hashtab_hash_fn(const void *ctx, uint32_t entry);
/* Whether entry `entry` has the key `key` (whatever the caller passed to the lookup). */
typedef bool cmn_hashtab_same_fn(const void *ctx, uint32_t entry, const void *key);

/* Async-signal-safe (calls only memset and the callbacks given); on a fixed table. */
/* Makes t an empty fixed table over the caller's cap slots (cap a power of two, at least
 * 2), which it zeroes; t holds cap / 2 entries at most. */
static inline void cmn_hashtab_init_fixed(struct cmn_hashtab *t, uint32_t *slots, size_t cap)
{
    memset(slots, 0, cap * sizeof(*slots));
    *t = (struct cmn_hashtab){.slots = slots, .cap = cap, .is_fixed = true};
}

/* Whether one more entry would make t more than half full (or number more than
 * CMN_HASHTAB_MAX_ENTRIES): a fixed table takes no more then, a growable one grows. */
static inline bool cmn_hashtab_is_full(const struct cmn_hashtab *t)
{
    return t->n >= CMN_HASHTAB_MAX_ENTRIES || (t->n + 1) * 2 > t->cap;
}

/* The entry with key `key` whose hash is hash, by same(ctx, entry, key); CMN_HASHTAB_NONE
 * when there is none. */
static inline uint32_t cmn_hashtab_find(const struct cmn_hashtab *t, uint64_t hash,
                                        cmn_hashtab_same_fn *same, const void *ctx, const void *key)
{
    if (t->cap == 0)
        return CMN_HASHTAB_NONE;
    size_t mask = t->cap - 1;
    for (size_t i = (size_t)hash & mask; t->slots[i] != 0; i = (i + 1) & mask) {
        if (same(ctx, t->slots[i] - 1, key))
            return t->slots[i] - 1;
    }
    return CMN_HASHTAB_NONE;
}

/* Puts slot value v (entry + 1) at the first empty slot from hash's: the probe of
 * cmn_hashtab_insert() and of the rehash. */
static inline void cmn_hashtab_place(uint32_t *slots, size_t cap, uint64_t hash, uint32_t v)
{
    size_t mask = cap - 1, i = (size_t)hash & mask;
    while (slots[i] != 0)
        i = (i + 1) & mask;
    slots[i] = v;
}

/* Adds entry `entry`, whose key hashes to hash and is in no entry of t yet. t must have
 * room: cmn_hashtab_reserve() succeeded, or cmn_hashtab_is_full() said false. */
static inline void cmn_hashtab_insert(struct cmn_hashtab *t, uint64_t hash, uint32_t entry)
{
    cmn_hashtab_place(t->slots, t->cap, hash, entry + 1);
    t->n++;
}

/* The slot index holding entry `entry`, whose key hashes to hash; cap when it is not in
 * t. */
static inline size_t cmn_hashtab_slot_of(const struct cmn_hashtab *t, uint64_t hash, uint32_t entry)
{
    if (t->cap == 0)
        return 0;
    size_t mask = t->cap - 1;
    for (size_t i = (size_t)hash & mask; t->slots[i] != 0; i = (i + 1) & mask) {
        if (t->slots[i] == entry + 1)
            return i;
    }
    return t->cap;
}

/* Removes entry `entry` (whose key hashes to hash; nothing when it is not in t), moving
 * back the entries after it that its slot had pushed along (hash_of gives their homes),
 * so that every lookup still finds what it found. The caller's entry is left alone. */
static inline void cmn_hashtab_remove(struct cmn_hashtab *t, uint64_t hash, uint32_t entry,
                                      cmn_hashtab_hash_fn *hash_of, const void *ctx)
{
    size_t i = cmn_hashtab_slot_of(t, hash, entry);
    if (i == t->cap)
        return;
    size_t mask = t->cap - 1;
    t->slots[i] = 0;
    t->n--;
    for (size_t j = (i + 1) & mask; t->slots[j] != 0; j = (j + 1) & mask) {
        size_t home = (size_t)hash_of(ctx, t->slots[j] - 1) & mask;
        /* j's entry may fill the hole at i when its probe passed i: its home is not in
         * (i, j], cyclically. */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            t->slots[i] = t->slots[j];
            t->slots[j] = 0;
            i = j;
        }
    }
}

/* Says that the caller moved entry `from` (key hashing to hash) to number `to`, which is
 * in no slot (a removed entry's). */
static inline void cmn_hashtab_renumber(struct cmn_hashtab *t, uint64_t hash, uint32_t from,
                                        uint32_t to)
{
    size_t i = cmn_hashtab_slot_of(t, hash, from);
    if (i < t->cap)
        t->slots[i] = to + 1;
}

/* Not async-signal-safe (calloc, free). */
/* Makes t an empty growable table whose first array has first_cap slots (a power of two;
 * 0: CMN_HASHTAB_FIRST_CAP). A zeroed struct is the same with the default. Allocates
 * nothing. */
static inline void cmn_hashtab_init(struct cmn_hashtab *t, size_t first_cap)
{
    *t = (struct cmn_hashtab){.first_cap = first_cap};
}

/* Frees a growable table's slots and leaves it empty (and growable as it was). Accepts a
 * zeroed table; leaves a fixed one alone. */
static inline void cmn_hashtab_fini(struct cmn_hashtab *t)
{
    if (t->is_fixed)
        return;
    free(t->slots);
    cmn_hashtab_init(t, t->first_cap);
}

/* Room for one more entry: doubles a growable table that one more would make more than
 * half full, rehashing its entries by hash_of. 0; -ENOSPC when t is fixed and full or
 * numbers CMN_HASHTAB_MAX_ENTRIES already; -ENOMEM (t unchanged). */
static inline int cmn_hashtab_reserve(struct cmn_hashtab *t, cmn_hashtab_hash_fn *hash_of,
                                      const void *ctx)
{
    if (!cmn_hashtab_is_full(t))
        return 0;
    if (t->is_fixed || t->n >= CMN_HASHTAB_MAX_ENTRIES)
        return -ENOSPC;
    size_t cap = t->cap ? t->cap * 2 : t->first_cap ? t->first_cap : CMN_HASHTAB_FIRST_CAP;
    if (cap < t->cap || cap > SIZE_MAX / sizeof(*t->slots))
        return -ENOMEM;
    uint32_t *slots = calloc(cap, sizeof(*slots));
    if (slots == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < t->cap; i++) {
        if (t->slots[i] != 0)
            cmn_hashtab_place(slots, cap, hash_of(ctx, t->slots[i] - 1), t->slots[i]);
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

#endif
