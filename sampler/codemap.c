/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The code map's lookup (see codemap.h), on the signal handler's path: a binary search, no
 * calls. The publisher is libprof/unwind.c's.
 */
#include "sampler/codemap.h"

#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler/dbuf.h"

struct smp_codemap smp_codemap;
_Atomic uint8_t smp_codemap_wanted[SMP_MODULES_MAX];
_Atomic uint32_t smp_codemap_n_wanted;
_Atomic int smp_codemap_rescan;
_Atomic uint32_t smp_writer_wake;

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

const struct smp_code_range *smp_codemap_view_find(const struct smp_codemap_view *v,
                                                   uintptr_t pc)
{
    const struct smp_codemap_table *t = v->table;
    if (t == NULL)
        return NULL;
    size_t lo = 0, hi = t->n < SMP_CODEMAP_MAX ? t->n : SMP_CODEMAP_MAX;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pc < t->ranges[mid].start)
            hi = mid;
        else if (pc >= t->ranges[mid].end)
            lo = mid + 1;
        else
            return &t->ranges[mid];
    }
    return NULL;
}

int smp_codemap_view_contains(const struct smp_codemap_view *v, uintptr_t pc)
{
    if (v->table == NULL)
        return !v->gave_up;
    return smp_codemap_view_find(v, pc) != NULL;
}

/* A raw system call in a function of its own (see handler.c, SMP_SYSCALL_SITE). */
__attribute__((noinline)) void smp_writer_wake_up(void)
{
    atomic_fetch_add(&smp_writer_wake, 1);
    syscall(SYS_futex, &smp_writer_wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    __asm__ volatile("" ::: "memory");
}

void smp_codemap_want(uint32_t module)
{
    if (module == 0 || module >= SMP_MODULES_MAX ||
        atomic_load_explicit(&smp_codemap_wanted[module], memory_order_relaxed))
        return;
    if (atomic_exchange(&smp_codemap_wanted[module], 1) == 0) {
        atomic_fetch_add(&smp_codemap_n_wanted, 1);
        smp_writer_wake_up();
    }
}

void smp_codemap_want_rescan(void)
{
    if (atomic_load_explicit(&smp_codemap_rescan, memory_order_relaxed) == 0 &&
        atomic_exchange(&smp_codemap_rescan, 1) == 0)
        smp_writer_wake_up();
}

int smp_codemap_contains(uintptr_t pc)
{
    struct smp_codemap_view v;
    smp_codemap_enter(&v);
    int yes = smp_codemap_view_contains(&v, pc);
    smp_codemap_leave(&v);
    return yes;
}
