/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The code map's two tables and the lookup (see codemap.h), on the signal handler's path:
 * a binary search, no calls.
 */
#include "sampler/codemap.h"

#include <stdatomic.h>

struct table {
    size_t n;                                       /* ranges in use */
    struct smp_code_range ranges[SMP_CODEMAP_MAX];  /* sorted by start */
};

static struct table tables[2];          /* written by publish only */
static _Atomic(struct table *) current; /* what lookups read; NULL: nothing published */

int smp_codemap_contains(uintptr_t pc)
{
    const struct table *t = atomic_load_explicit(&current, memory_order_acquire);
    if (t == NULL)
        return 1;
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pc < t->ranges[mid].start)
            hi = mid;
        else if (pc >= t->ranges[mid].end)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

int smp_codemap_readable(uintptr_t addr, size_t len)
{
    const struct table *t = atomic_load_explicit(&current, memory_order_acquire);
    if (t == NULL)
        return 0;
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (addr < t->ranges[mid].start)
            hi = mid;
        else if (addr >= t->ranges[mid].end)
            lo = mid + 1;
        else
            return t->ranges[mid].readable && len <= t->ranges[mid].end - addr;
    }
    return 0;
}

void smp_codemap_publish(const struct smp_code_range *ranges, size_t n)
{
    struct table *t = atomic_load_explicit(&current, memory_order_relaxed) == &tables[0]
                          ? &tables[1]
                          : &tables[0];
    if (n > SMP_CODEMAP_MAX)
        n = SMP_CODEMAP_MAX;
    for (size_t i = 0; i < n; i++)
        t->ranges[i] = ranges[i];
    t->n = n;
    atomic_store_explicit(&current, t, memory_order_release);
}
