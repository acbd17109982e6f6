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

/* Hashes n bytes (FNV-1a, then mixed). */
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

#endif
