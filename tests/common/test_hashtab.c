/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the shared hash table (common/hashtab.h): lookups over the caller's
 * entries, growth, a fixed table in the caller's memory, removal and renumbering; the
 * streaming hash of common/hash.h. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "common/hash.h"
#include "common/hashtab.h"

/* The caller's entries: keys, numbered by their index. */
struct keys {
    uint64_t key[4096];
    uint32_t n;
    unsigned hash_mask; /* hashes keep only these bits: collisions on purpose */
};

static uint64_t key_hash(const struct keys *k, uint64_t key)
{
    return cmn_hash_word(key) & k->hash_mask;
}

static uint64_t entry_hash(const void *ctx, uint32_t entry)
{
    const struct keys *k = ctx;
    return key_hash(k, k->key[entry]);
}

static bool same_key(const void *ctx, uint32_t entry, const void *key)
{
    const struct keys *k = ctx;
    return k->key[entry] == *(const uint64_t *)key;
}

static uint32_t find(const struct cmn_hashtab *t, const struct keys *k, uint64_t key)
{
    return cmn_hashtab_find(t, key_hash(k, key), same_key, k, &key);
}

/* Adds key as the next entry of a growable table. */
static void add(struct cmn_hashtab *t, struct keys *k, uint64_t key)
{
    cr_assert_eq(cmn_hashtab_reserve(t, entry_hash, k), 0);
    k->key[k->n] = key;
    cmn_hashtab_insert(t, key_hash(k, key), k->n++);
}

Test(hashtab, finds_every_entry_through_growth)
{
    static struct keys k = {.hash_mask = ~0u};
    struct cmn_hashtab t = {0};
    cr_assert_eq(find(&t, &k, 7), CMN_HASHTAB_NONE);
    for (uint64_t i = 0; i < 3000; i++)
        add(&t, &k, i * 977 + 5);
    cr_assert_eq(t.n, 3000);
    cr_assert(t.cap >= 6000 && (t.cap & (t.cap - 1)) == 0);
    for (uint32_t i = 0; i < 3000; i++)
        cr_assert_eq(find(&t, &k, (uint64_t)i * 977 + 5), i);
    cr_assert_eq(find(&t, &k, 6), CMN_HASHTAB_NONE);
    cmn_hashtab_fini(&t);
    cr_assert_eq(t.cap, 0);
    cr_assert_eq(find(&t, &k, 5), CMN_HASHTAB_NONE);
}

Test(hashtab, grows_from_the_first_size_asked_for)
{
    static struct keys k = {.hash_mask = ~0u};
    struct cmn_hashtab t;
    cmn_hashtab_init(&t, 512);
    add(&t, &k, 1);
    cr_assert_eq(t.cap, 512);
    cmn_hashtab_fini(&t);
    add(&t, &k, 2);
    cr_assert_eq(t.cap, 512, "fini keeps the first size");
    cmn_hashtab_fini(&t);
}

Test(hashtab, a_fixed_table_takes_half_its_slots_and_no_more)
{
    static struct keys k = {.hash_mask = 3}; /* four homes for everything */
    uint32_t slots[16];
    struct cmn_hashtab t;
    cmn_hashtab_init_fixed(&t, slots, 16);
    for (uint64_t i = 0; i < 8; i++) {
        cr_assert(!cmn_hashtab_is_full(&t));
        k.key[k.n] = i + 100;
        cmn_hashtab_insert(&t, key_hash(&k, i + 100), k.n++);
    }
    cr_assert(cmn_hashtab_is_full(&t));
    cr_assert_eq(cmn_hashtab_reserve(&t, entry_hash, &k), -ENOSPC);
    for (uint32_t i = 0; i < 8; i++)
        cr_assert_eq(find(&t, &k, i + 100), i);
    cmn_hashtab_fini(&t); /* leaves the caller's slots alone */
    cr_assert_eq(t.slots, slots);
}

Test(hashtab, removal_keeps_every_other_entry_found)
{
    /* Few homes, so that removals move entries that collided back across the hole, and
     * around the end of the slots. */
    static struct keys k = {.hash_mask = 0x30f};
    struct cmn_hashtab t;
    cmn_hashtab_init(&t, 0);
    for (uint64_t i = 0; i < 400; i++)
        add(&t, &k, i * 31 + 1);
    bool gone[400] = {false};
    for (uint32_t round = 0; round < 3; round++) {
        for (uint32_t i = round; i < 400; i += 3 + round) {
            if (gone[i])
                continue;
            cmn_hashtab_remove(&t, key_hash(&k, k.key[i]), i, entry_hash, &k);
            gone[i] = true;
        }
        for (uint32_t i = 0; i < 400; i++)
            cr_assert_eq(find(&t, &k, k.key[i]), gone[i] ? CMN_HASHTAB_NONE : i,
                         "round %u, entry %u", round, i);
    }
    size_t left = 0;
    for (uint32_t i = 0; i < 400; i++)
        left += !gone[i];
    cr_assert_eq(t.n, left);
    cmn_hashtab_fini(&t);
}

Test(hashtab, renumbers_an_entry_the_caller_moved)
{
    static struct keys k = {.hash_mask = 7};
    struct cmn_hashtab t = {0};
    for (uint64_t i = 0; i < 20; i++)
        add(&t, &k, i + 1000);
    /* Entry 5 goes; the last takes its number, as a caller's swap-remove does. */
    cmn_hashtab_remove(&t, key_hash(&k, k.key[5]), 5, entry_hash, &k);
    uint32_t last = --k.n;
    cmn_hashtab_renumber(&t, key_hash(&k, k.key[last]), last, 5);
    k.key[5] = k.key[last];
    cr_assert_eq(find(&t, &k, 1005), CMN_HASHTAB_NONE);
    cr_assert_eq(find(&t, &k, 1019), 5);
    for (uint32_t i = 0; i < k.n; i++)
        cr_assert_eq(find(&t, &k, k.key[i]), i);
    cmn_hashtab_fini(&t);
}

/* The streaming hash: the same value however its input is cut, and a different one for
 * a changed byte or a longer run of zeros. */
static uint64_t stream_in_pieces(const unsigned char *b, size_t n, size_t piece)
{
    struct cmn_hash_stream s = CMN_HASH_STREAM_INIT;
    for (size_t at = 0; at < n; at += piece)
        cmn_hash_stream_add(&s, b + at, n - at < piece ? n - at : piece);
    return cmn_hash_stream_end(&s);
}

Test(hash, a_stream_hashes_the_same_however_its_input_is_cut)
{
    unsigned char b[1000];
    for (size_t i = 0; i < sizeof(b); i++)
        b[i] = (unsigned char)(i * 131 + 7);
    uint64_t whole = stream_in_pieces(b, sizeof(b), sizeof(b));
    size_t pieces[] = {1, 3, 7, 8, 9, 31, 32, 33, 64, 999};
    for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++)
        cr_expect_eq(stream_in_pieces(b, sizeof(b), pieces[i]), whole, "pieces of %zu",
                     pieces[i]);
    for (size_t at = 0; at < sizeof(b); at += 97) {
        b[at] ^= 1;
        cr_expect_neq(stream_in_pieces(b, sizeof(b), 5), whole, "byte %zu changed", at);
        b[at] ^= 1;
    }
    /* Two words of a block swapped (each lane hashes its own word). */
    unsigned char w[64];
    for (size_t i = 0; i < sizeof(w); i++)
        w[i] = (unsigned char)i;
    uint64_t straight = stream_in_pieces(w, sizeof(w), 64);
    unsigned char t[8];
    memcpy(t, w + 8, 8);
    memcpy(w + 8, w + 16, 8);
    memcpy(w + 16, t, 8);
    cr_expect_neq(stream_in_pieces(w, sizeof(w), 64), straight, "two words swapped");
    unsigned char zeros[72] = {0};
    uint64_t seen[73];
    for (size_t n = 0; n <= sizeof(zeros); n++) {
        seen[n] = stream_in_pieces(zeros, n, 5 + n % 3);
        for (size_t m = 0; m < n; m++)
            cr_expect_neq(seen[n], seen[m], "%zu and %zu zeros", n, m);
    }
}
