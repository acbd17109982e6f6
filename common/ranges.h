/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Binary searches over sorted arrays of the caller's structs, by an unsigned key field
 * of 4 or 8 bytes (an address, a file offset, an id): the last element at or below a key,
 * and the element of sorted ranges [start, end) that holds an address. One search serves
 * the mappings of a process (attach/procmaps.c) and of a profile
 * (reporter/symbols/symbols.c), a module's sections and functions
 * (reporter/symbols/module.c), perf maps (reporter/symbols/perfmap.c), a profile's threads
 * (reporter/input/profile.c), prof record -p's counters (attach/perf_ring.c) and the rows
 * of an unwind table (common/uw_table.h). Keys are read with memcpy, so an element needs
 * no alignment. The caller's array is only read. Header-only, never installed.
 *
 * Signal handler's path: allowed. Every function here is pure: it reads the array it is
 * given and calls nothing but memcpy, which the compiler turns into loads.
 *
 *     size_t i = CMN_RANGE_FIND(m->v, m->n, start, end, addr);    (m->n: in no mapping)
 */
#ifndef PROF_COMMON_RANGES_H
#define PROF_COMMON_RANGES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Async-signal-safe. */
/* The key of element i of the array at base (elements of elem_bytes; a key of key_bytes,
 * 4 or 8, at key_offset in each). */
static inline uint64_t cmn_range_key(const void *base, size_t i, size_t elem_bytes,
                                     size_t key_offset, size_t key_bytes)
{
    const unsigned char *at = (const unsigned char *)base + i * elem_bytes + key_offset;
    if (key_bytes == sizeof(uint32_t)) {
        uint32_t k;
        memcpy(&k, at, sizeof(k));
        return k;
    }
    uint64_t k;
    memcpy(&k, at, sizeof(k));
    return k;
}

/* How many of the n elements at base, sorted by key (ascending, repeats allowed), have a
 * key at or below key: the index after the last such element, 0 when there is none. */
static inline size_t cmn_range_upper(const void *base, size_t n, size_t elem_bytes,
                                     size_t key_offset, size_t key_bytes, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmn_range_key(base, mid, elem_bytes, key_offset, key_bytes) <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The index of the range holding addr among the n ranges at base, sorted by start and not
 * overlapping, each [start, end) (keys at start_offset and end_offset, key_bytes each);
 * n when none holds it. */
static inline size_t cmn_range_find(const void *base, size_t n, size_t elem_bytes,
                                    size_t start_offset, size_t end_offset, size_t key_bytes,
                                    uint64_t addr)
{
    size_t i = cmn_range_upper(base, n, elem_bytes, start_offset, key_bytes, addr);
    if (i > 0 && addr < cmn_range_key(base, i - 1, elem_bytes, end_offset, key_bytes))
        return i - 1;
    return n;
}

/* The same for an array of structs arr and the names of its key fields (4 or 8 bytes
 * each; a range's start and end of the same size). */
#define CMN_RANGE_FIELD_BYTES(arr, field)                                                          \
    (sizeof((arr)->field) +                                                                        \
     0 * sizeof(char[sizeof((arr)->field) == 4 || sizeof((arr)->field) == 8 ? 1 : -1]))
#define CMN_RANGE_UPPER(arr, n, field, key)                                                        \
    cmn_range_upper((arr), (n), sizeof(*(arr)), offsetof(__typeof__(*(arr)), field),               \
                    CMN_RANGE_FIELD_BYTES(arr, field), (key))
#define CMN_RANGE_FIND(arr, n, start_field, end_field, addr)                                       \
    cmn_range_find((arr), (n), sizeof(*(arr)), offsetof(__typeof__(*(arr)), start_field),          \
                   offsetof(__typeof__(*(arr)), end_field),                                        \
                   CMN_RANGE_FIELD_BYTES(arr, start_field), (addr))

#endif
