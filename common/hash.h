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
 * buffer): eight bytes a step, the same value however the input is cut. Not for anything
 * adversarial either. */
struct cmn_hash_stream {
    uint64_t h;
    uint64_t n;            /* bytes taken so far */
    unsigned char tail[8]; /* the bytes of a word not complete yet: n % 8 of them */
};

#define CMN_HASH_STREAM_INIT {0x9e3779b97f4a7c15ull, 0, {0}}

static inline void cmn_hash_stream_word_(struct cmn_hash_stream *s, uint64_t w)
{
    uint64_t h = s->h ^ (w * 0x87c37b91114253d5ull);
    s->h = ((h << 31) | (h >> 33)) * 0x4cf5ad432745937full;
}

static inline void cmn_hash_stream_add(struct cmn_hash_stream *s, const void *p, size_t n)
{
    const unsigned char *b = p;
    unsigned have = (unsigned)(s->n & 7);
    s->n += n;
    while (have != 0 && n > 0) {
        s->tail[have++] = *b++;
        n--;
        if (have == 8) {
            uint64_t w;
            __builtin_memcpy(&w, s->tail, 8);
            cmn_hash_stream_word_(s, w);
            have = 0;
        }
    }
    for (; n >= 8; n -= 8, b += 8) {
        uint64_t w;
        __builtin_memcpy(&w, b, 8);
        cmn_hash_stream_word_(s, w);
    }
    for (unsigned i = 0; i < n; i++)
        s->tail[i] = b[i];
}

static inline uint64_t cmn_hash_stream_end(const struct cmn_hash_stream *s)
{
    uint64_t h = s->h;
    for (unsigned i = 0; i < (unsigned)(s->n & 7); i++)
        h = (h ^ s->tail[i]) * 0x100000001b3ull;
    return cmn_hash_word(h ^ s->n);
}

#endif
