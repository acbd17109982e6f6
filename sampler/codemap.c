/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The code map's lookup (see codemap.h), on the signal handler's path: a binary search, no
 * calls. The publisher is libprof/unwind.c's.
 */
#include "sampler/codemap.h"

#include <stdatomic.h>

#include "sampler/dbuf.h"

struct smp_codemap smp_codemap;

void smp_codemap_enter(struct smp_codemap_view *v)
{
    v->table = NULL;
    v->slot = -1;
    v->gave_up = 0;
    if (!atomic_load_explicit(&smp_codemap.published, memory_order_acquire))
        return;
    v->slot = smp_dbuf_enter(&smp_codemap.dbuf);
    if (v->slot < 0)
        v->gave_up = 1;
    else
        v->table = &smp_codemap.tables[v->slot];
}

void smp_codemap_leave(struct smp_codemap_view *v)
{
    smp_dbuf_leave(&smp_codemap.dbuf, v->slot);
    v->slot = -1;
    v->table = NULL;
}

int smp_codemap_view_contains(const struct smp_codemap_view *v, uintptr_t pc)
{
    const struct smp_codemap_table *t = v->table;
    if (t == NULL)
        return !v->gave_up;
    size_t lo = 0, hi = t->n < SMP_CODEMAP_MAX ? t->n : SMP_CODEMAP_MAX;
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

int smp_codemap_contains(uintptr_t pc)
{
    struct smp_codemap_view v;
    smp_codemap_enter(&v);
    int yes = smp_codemap_view_contains(&v, pc);
    smp_codemap_leave(&v);
    return yes;
}
