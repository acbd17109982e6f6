/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the pool of stacks kept for a later walk (sampler/defer.c). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/defer.h"

static struct smp_defer *pool;
static uintptr_t stack[16384] __attribute__((aligned(16)));

static void setup(void)
{
    pool = calloc(SMP_DEFER_SLOTS, sizeof(*pool));
    cr_assert_not_null(pool);
    atomic_store(&smp_defer_pool, pool);
    for (unsigned i = 0; i < 16384; i++)
        stack[i] = 0x1000 + i;
}

static void teardown(void)
{
    atomic_store(&smp_defer_pool, NULL);
    free(pool);
}

TestSuite(defer, .init = setup, .fini = teardown);

Test(defer, a_kept_stack_holds_the_registers_and_the_words_at_sp_within_the_bounds)
{
    struct cmn_fp_regs regs = {.pc = 0x401000, .sp = (uintptr_t)&stack[100],
                               .fp = (uintptr_t)&stack[120], .ret = 7, .ret_known = 1};
    uintptr_t hi = (uintptr_t)&stack[200];
    uint32_t n = smp_defer_take(&regs, (uintptr_t)stack, hi, 0);
    cr_assert_eq(n, 1);
    const struct smp_defer *d = smp_defer_get(n);
    cr_assert_not_null(d);
    cr_assert_eq(d->regs.pc, regs.pc);
    cr_assert_eq(d->regs.sp, regs.sp);
    cr_assert_eq(d->len, 100 * sizeof(uintptr_t), "the copy ends at the stack's top");
    cr_assert_eq(memcmp(d->stack, &stack[100], d->len), 0);
    smp_defer_release(n);
    cr_assert_null(smp_defer_get(n));
}

Test(defer, a_deep_stack_is_copied_up_to_the_slots_size)
{
    struct cmn_fp_regs regs = {.sp = (uintptr_t)&stack[0]};
    uint32_t n = smp_defer_take(&regs, (uintptr_t)stack, (uintptr_t)&stack[16384], 0);
    cr_assert_neq(n, 0);
    cr_assert_eq(smp_defer_get(n)->len, SMP_DEFER_BYTES);
}

Test(defer, a_full_pool_or_a_stack_pointer_out_of_bounds_keeps_nothing)
{
    struct cmn_fp_regs regs = {.sp = (uintptr_t)&stack[10]};
    uintptr_t lo = (uintptr_t)stack, hi = (uintptr_t)&stack[64];
    for (unsigned i = 0; i < SMP_DEFER_SLOTS; i++)
        cr_assert_eq(smp_defer_take(&regs, lo, hi, 0), i + 1);
    cr_assert_eq(smp_defer_take(&regs, lo, hi, 0), 0, "a ninth stack while eight wait");
    smp_defer_release(3);
    cr_assert_eq(smp_defer_take(&regs, lo, hi, 0), 3, "a freed slot serves again");
    smp_defer_reset();
    regs.sp = (uintptr_t)&stack[64];
    cr_assert_eq(smp_defer_take(&regs, lo, hi, 0), 0, "sp at the top: nothing to copy");
    regs.sp = lo - 64;
    cr_assert_eq(smp_defer_take(&regs, lo, hi, 0), 0, "sp below the bounds");
    cr_assert_null(smp_defer_get(0));
    cr_assert_null(smp_defer_get(SMP_DEFER_SLOTS + 1));
}

Test(defer, without_a_pool_nothing_is_kept)
{
    atomic_store(&smp_defer_pool, NULL);
    struct cmn_fp_regs regs = {.sp = (uintptr_t)&stack[10]};
    cr_assert_eq(smp_defer_take(&regs, (uintptr_t)stack, (uintptr_t)&stack[64], 0), 0);
    atomic_store(&smp_defer_pool, pool);
}
