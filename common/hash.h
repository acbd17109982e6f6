/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Hash functions for the reporter's open-addressing tables (names, stacks, the address
 * cache). Header-only: pure functions, no state. Not for anything adversarial: a crafted
 * profile can make a table slow, never wrong.
 *
 * Signal handler's path: allowed: pure arithmetic.
 */
#ifndef PROF_COMMON_HASH_H
#define PROF_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Mixes one 64-bit word (the splitmix64 finalizer): every input bit reaches every output
 * bit, so the low bits can index a power-of-two table. */
static inline uint64_t cmn_hash_word(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* Hashes n bytes (FNV-1a, then mixed). One multiply a byte: for short keys; long inputs
 * go through cmn_hash_stream. */
static inline uint64_t cmn_hash_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return cmn_hash_word(h);
}

/* A hash of a long input given in pieces (an object's .eh_frame read through a small
 * buffer): 32 bytes a step in four independent lanes (a word each, so that the processor
 * runs them side by side: the hash of a module's 2 MB .eh_frame is on every process
 * start's path), the same value however the input is cut. Not for anything adversarial
 * either. */
struct cmn_hash_stream {
    uint64_t h[4];
    uint64_t n;             /* bytes taken so far */
    unsigned char tail[32]; /* the bytes of a block not complete yet: n % 32 of them */
};

#define CMN_HASH_STREAM_INIT                                                                \
    {{0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull,                   \
      0x27d4eb2f165667c5ull},                                                               \
     0,                                                                                     \
     {0}}

static inline uint64_t cmn_hash_stream_mix_(uint64_t h, uint64_t w)
{
    h ^= w * 0x87c37b91114253d5ull;
    return ((h << 31) | (h >> 33)) * 0x4cf5ad432745937full;
}

static inline void cmn_hash_stream_block_(struct cmn_hash_stream *s, const unsigned char *b)
{
    uint64_t w[4];
    __builtin_memcpy(w, b, 32);
    s->h[0] = cmn_hash_stream_mix_(s->h[0], w[0]);
    s->h[1] = cmn_hash_stream_mix_(s->h[1], w[1]);
    s->h[2] = cmn_hash_stream_mix_(s->h[2], w[2]);
    s->h[3] = cmn_hash_stream_mix_(s->h[3], w[3]);
}

static inline void cmn_hash_stream_add(struct cmn_hash_stream *s, const void *p, size_t n)
{
    const unsigned char *b = p;
    unsigned have = (unsigned)(s->n & 31);
    s->n += n;
    if (have != 0) {
        unsigned take = 32 - have < n ? 32 - have : (unsigned)n;
        __builtin_memcpy(s->tail + have, b, take);
        b += take;
        n -= take;
        if (have + take < 32)
            return;
        cmn_hash_stream_block_(s, s->tail);
    }
    for (; n >= 32; n -= 32, b += 32)
        cmn_hash_stream_block_(s, b);
    if (n > 0)
        __builtin_memcpy(s->tail, b, n);
}

static inline uint64_t cmn_hash_stream_end(const struct cmn_hash_stream *s)
{
    uint64_t h[4] = {s->h[0], s->h[1], s->h[2], s->h[3]};
    unsigned left = (unsigned)(s->n & 31), i = 0;
    for (; i + 8 <= left; i += 8) {
        uint64_t w;
        __builtin_memcpy(&w, s->tail + i, 8);
        h[i / 8] = cmn_hash_stream_mix_(h[i / 8], w);
    }
    uint64_t out = h[0] ^ cmn_hash_word(h[1]) ^ cmn_hash_word(h[2] + 1) ^
                   cmn_hash_word(h[3] + 2);
    for (; i < left; i++)
        out = (out ^ s->tail[i]) * 0x100000001b3ull;
    return cmn_hash_word(out ^ s->n);
}

#endif
