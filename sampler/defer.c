/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Stacks kept for a later walk (see defer.h). */
#include "sampler/defer.h"

#include <string.h>

#include "sampler/probe.h"
#include "sampler/walk.h"

struct smp_defer *_Atomic smp_defer_pool;

/* The stack of a probed walk (smp_stack.probed), copied through the probe page by page
 * from the stack pointer's, as far as the pages are readable: the bytes kept. */
static uintptr_t copy_probed(unsigned char *to, uintptr_t sp, uintptr_t len)
{
    uintptr_t page = sp & ~(uintptr_t)(SMP_PROBE_PAGE - 1), done = 0;
    unsigned char buf[SMP_PROBE_PAGE];
    while (done < len) {
        if (smp_probe_pages(buf, page, 1) != 0)
            break;
        uintptr_t from = page > sp ? page : sp, end = page + SMP_PROBE_PAGE;
        uintptr_t n = end - from < len - done ? end - from : len - done;
        memcpy(to + done, buf + (from - page), n);
        done += n;
        page = end;
    }
    return done - done % sizeof(uintptr_t);
}

SMP_READS_STACK uint32_t smp_defer_take(const struct cmn_fp_regs *regs, uintptr_t lo,
                                        uintptr_t hi, int probed)
{
    struct smp_defer *pool = atomic_load_explicit(&smp_defer_pool, memory_order_acquire);
    if (pool == NULL || regs->sp < lo || regs->sp >= hi)
        return 0;
    for (uint32_t i = 0; i < SMP_DEFER_SLOTS; i++) {
        int expect = SMP_DEFER_FREE;
        if (!atomic_compare_exchange_strong_explicit(&pool[i].state, &expect,
                                                     SMP_DEFER_FILLING, memory_order_acquire,
                                                     memory_order_relaxed))
            continue;
        uintptr_t len = hi - regs->sp < SMP_DEFER_BYTES ? hi - regs->sp : SMP_DEFER_BYTES;
        len -= len % sizeof(uintptr_t);
        pool[i].regs = *regs;
        if (probed) {
            pool[i].len = copy_probed(pool[i].stack, regs->sp, len);
            atomic_store_explicit(&pool[i].state, SMP_DEFER_READY, memory_order_release);
            return i + 1;
        }
        pool[i].len = len;
        /* Word by word: the bounds are the walk's, which reads the same words; a library
         * memcpy could be instrumented where the walk's reads are not. */
        const volatile uintptr_t *from = (const volatile uintptr_t *)regs->sp;
        uintptr_t *to = (uintptr_t *)pool[i].stack;
        for (uintptr_t k = 0; k < len / sizeof(uintptr_t); k++)
            to[k] = from[k];
        atomic_store_explicit(&pool[i].state, SMP_DEFER_READY, memory_order_release);
        return i + 1;
    }
    return 0;
}

const struct smp_defer *smp_defer_get(uint32_t number)
{
    struct smp_defer *pool = atomic_load_explicit(&smp_defer_pool, memory_order_acquire);
    if (pool == NULL || number == 0 || number > SMP_DEFER_SLOTS)
        return NULL;
    struct smp_defer *d = &pool[number - 1];
    return atomic_load_explicit(&d->state, memory_order_acquire) == SMP_DEFER_READY ? d : NULL;
}

void smp_defer_release(uint32_t number)
{
    struct smp_defer *pool = atomic_load_explicit(&smp_defer_pool, memory_order_acquire);
    if (pool != NULL && number > 0 && number <= SMP_DEFER_SLOTS)
        atomic_store_explicit(&pool[number - 1].state, SMP_DEFER_FREE, memory_order_release);
}

void smp_defer_reset(void)
{
    struct smp_defer *pool = atomic_load_explicit(&smp_defer_pool, memory_order_acquire);
    for (uint32_t i = 0; pool != NULL && i < SMP_DEFER_SLOTS; i++)
        atomic_store_explicit(&pool[i].state, SMP_DEFER_FREE, memory_order_relaxed);
}
