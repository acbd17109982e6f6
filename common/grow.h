/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Growing arrays: one place that doubles an array's capacity, checks the size for
 * overflow and leaves the array as it was when memory runs out. Used by the reporter,
 * attach/ and libprof/ outside the handler (it calls realloc). Header-only, never
 * installed.
 *
 * Signal handler's path: not allowed (realloc).
 */
#ifndef PROF_COMMON_GROW_H
#define PROF_COMMON_GROW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* Not async-signal-safe. */
/* Makes room for need elements of elem_bytes in *arr, whose capacity is *cap elements:
 * doubles it (from min_cap) until need fits. true; false when memory or size_t runs out,
 * with *arr and *cap as they were. */
static inline bool cmn_grow(void **arr, size_t *cap, size_t need, size_t elem_bytes,
                            size_t min_cap)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : min_cap;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return false;
        n *= 2;
    }
    if (n > SIZE_MAX / elem_bytes)
        return false;
    void *a = realloc(*arr, n * elem_bytes);
    if (a == NULL)
        return false;
    *arr = a;
    *cap = n;
    return true;
}

/* cmn_grow() for an array variable and its size_t capacity: CMN_GROW(a->items, a->cap,
 * a->n + 1, 64). */
#define CMN_GROW(arr, cap, need, min_cap)                                                  \
    cmn_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)), (min_cap))

#endif
