/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the code map (sampler/codemap.c): lookups before and after a publish, the
 * range edges, a republish replacing the map, and the frame-pointer stepper ending a walk
 * at a return address outside the map instead of recording it. */
#include <criterion/criterion.h>

#include "include/prof_format.h"
#include "sampler/codemap.h"
#include "sampler/walk_fp.h"

/* Made-up ranges: not readable, so that no stepper loads from them. */
static const struct smp_code_range two[] = {{0x1000, 0x2000, 0}, {0x5000, 0x5100, 0}};

Test(codemap, every_address_passes_before_a_map_is_published)
{
    cr_assert(smp_codemap_contains(0));
    cr_assert(smp_codemap_contains(0xdeadbeef));
}

Test(codemap, finds_addresses_inside_ranges_only)
{
    smp_codemap_publish(two, 2);
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
    smp_codemap_publish(two, 2);
    smp_codemap_publish(two + 1, 1);
    cr_assert_not(smp_codemap_contains(0x1800));
    cr_assert(smp_codemap_contains(0x5000));
    smp_codemap_publish(two, 0);
    cr_assert_not(smp_codemap_contains(0x5000), "an empty map holds nothing");
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
    smp_codemap_publish(two, 2);
    struct fpstep_regs regs = {.pc = 0x1010, .sp = (uintptr_t)&stk[0], .fp = (uintptr_t)&stk[10]};
    struct smp_stack stack = {.lo = (uintptr_t)&stk[0], .hi = (uintptr_t)&stk[64]};
    uint64_t f[8];
    uint8_t why, flags;
    cr_assert_eq(smp_walk_fp(&regs, &stack, f, 8, &why, &flags), 2);
    cr_assert_eq(why, PROF_STOP_BOUNDS);
    cr_assert_eq(f[1], 0x1800);
}

Test(codemap, readable_only_inside_one_readable_range)
{
    static const struct smp_code_range mixed[] = {{0x1000, 0x2000, 1}, {0x5000, 0x5100, 0}};
    smp_codemap_publish(mixed, 2);
    cr_assert(smp_codemap_readable(0x1000, 16));
    cr_assert(smp_codemap_readable(0x1ff0, 16));
    cr_assert_not(smp_codemap_readable(0x1ff8, 16), "runs past the range's end");
    cr_assert_not(smp_codemap_readable(0x5000, 4), "executable but not readable");
    cr_assert_not(smp_codemap_readable(0x3000, 1), "no range there");
}
