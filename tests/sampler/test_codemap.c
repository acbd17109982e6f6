/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the code map (sampler/codemap.c, published by libprof/unwind.c): lookups
 * before and after a publish, the range edges, a republish replacing the map, a walk that
 * stays inside the table it entered while a publish waits for it, and the frame-pointer
 * stepper ending a walk at a return address outside the map instead of recording it. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "include/libprof/prof_format.h"
#include "libprof/codemap.h"
#include "libprof/unwind.h"
#include "sampler/codemap.h"
#include "sampler/walk.h"

/* The frame-pointer walk (PROF_UNWIND=fp) through smp_walk(). */
static unsigned walk_fp(const struct cmn_fp_regs *regs, const struct smp_stack *stack,
                        uint64_t *frames, unsigned max, uint8_t *why, uint8_t *flags)
{
    struct smp_walk_out o;
    unsigned n = smp_walk(regs, stack, frames, max, SMP_WALK_FP, &o);
    *why = o.stop_reason;
    *flags = o.flags;
    return n;
}

/* Made-up ranges: no stepper loads from them (code bytes go through the probe). */
static const struct smp_code_range two[] = {{.start = 0x1000, .end = 0x2000}, {.start = 0x5000, .end = 0x5100}};

Test(codemap, every_address_passes_before_a_map_is_published)
{
    cr_assert(smp_codemap_contains(0));
    cr_assert(smp_codemap_contains(0xdeadbeef));
}

Test(codemap, finds_addresses_inside_ranges_only)
{
    lp_codemap_publish(two, 2);
    cr_assert(smp_codemap_contains(0x1000));
    cr_assert(smp_codemap_contains(0x1fff));
    cr_assert_not(smp_codemap_contains(0x2000), "end is exclusive");
    cr_assert_not(smp_codemap_contains(0xfff));
    cr_assert_not(smp_codemap_contains(0x3000), "between ranges");
    cr_assert(smp_codemap_contains(0x50ff));
    cr_assert_not(smp_codemap_contains(0x5100));
    cr_assert_not(smp_codemap_contains(0));
}

Test(codemap, a_republish_replaces_the_map)
{
    lp_codemap_publish(two, 2);
    lp_codemap_publish(two + 1, 1);
    cr_assert_not(smp_codemap_contains(0x1800));
    cr_assert(smp_codemap_contains(0x5000));
    lp_codemap_publish(two, 0);
    cr_assert_not(smp_codemap_contains(0x5000), "an empty map holds nothing");
}

static _Atomic int published;

static void *publish_other(void *arg)
{
    (void)arg;
    lp_codemap_publish(two + 1, 1);
    atomic_store(&published, 1);
    return NULL;
}

/* Two publishes while a walk is inside the first table: the second must wait until the walk
 * leaves, or it would rewrite the table under it (the double buffer alternates). */
Test(codemap, a_walk_keeps_its_table_while_publishes_wait_for_it)
{
    lp_codemap_publish(two, 2);
    struct smp_codemap_view v;
    smp_codemap_enter(&v);
    lp_codemap_publish(two + 1, 1); /* fills the spare table: no reader there */
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, publish_other, NULL), 0);
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
    cr_assert_eq(atomic_load(&published), 0, "the publish did not wait for the walk");
    cr_assert(smp_codemap_view_contains(&v, 0x1800), "the walk's table changed under it");
    smp_codemap_leave(&v);
    pthread_join(t, NULL);
    cr_assert_eq(atomic_load(&published), 1);
    cr_assert_not(smp_codemap_contains(0x1800));
}

Test(codemap, the_fp_walk_stops_at_a_return_address_outside_code)
{
    static uintptr_t stk[64] __attribute__((aligned(16)));
    stk[10] = (uintptr_t)&stk[20];
    stk[11] = 0x1800; /* code */
    stk[20] = (uintptr_t)&stk[30];
    stk[21] = 0x3000; /* not code */
    stk[30] = 0;
    stk[31] = 0x1900;
    lp_codemap_publish(two, 2);
    struct cmn_fp_regs regs = {.pc = 0x1010, .sp = (uintptr_t)&stk[0], .fp = (uintptr_t)&stk[10]};
    struct smp_stack stack = {.lo = (uintptr_t)&stk[0], .hi = (uintptr_t)&stk[64]};
    uint64_t f[8];
    uint8_t why, flags;
    cr_assert_eq(walk_fp(&regs, &stack, f, 8, &why, &flags), 2);
    cr_assert_eq(why, PROF_STOP_CODE);
    cr_assert_eq(f[1], 0x1800);
}
