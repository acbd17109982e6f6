/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the random intervals' arithmetic (common/jitter.h): the generator, the
 * spread of the intervals, and a counter's period with what it counted late and its
 * debt. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "common/jitter.h"

Test(jitter, the_generator_is_xorshift64_star)
{
    uint64_t state = 1;
    cr_assert_eq(cmn_jitter_random(&state), 0x47e4ce4b896cdd1dull);
    cr_assert_eq(cmn_jitter_random(&state), 0xabcfa6a8e079651dull);
    cr_assert_eq(cmn_jitter_random(&state), 0xb9d10d8feb731f57ull);
}

Test(jitter, intervals_spread_over_half_to_one_and_a_half_periods)
{
    uint64_t state = 12345, lo = UINT64_MAX, hi = 0, sum = 0;
    for (int i = 0; i < 100000; i++) {
        uint64_t v = cmn_jitter_interval(cmn_jitter_random(&state), 1000000);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        sum += v;
    }
    cr_assert(lo >= 500000 && lo < 510000, "lowest %llu", (unsigned long long)lo);
    cr_assert(hi < 1500000 && hi > 1490000, "highest %llu", (unsigned long long)hi);
    cr_assert(sum / 100000 > 995000 && sum / 100000 < 1005000, "mean %llu",
              (unsigned long long)(sum / 100000));
    cr_assert_eq(cmn_jitter_interval(0, 1000000), 500000);
    cr_assert_eq(cmn_jitter_interval(UINT64_MAX, 0), 1, "never 0");
}

Test(jitter, a_period_takes_off_what_was_counted_late_and_carries_a_debt)
{
    int64_t debt;
    /* No plan yet: the interval as drawn. */
    struct cmn_jitter_plan plan = {0};
    cr_assert_eq(cmn_jitter_period(900000, 1000000, 5000000, &plan, &debt), 900000);
    cr_assert_eq(debt, 0);
    /* 30 us past the planned overflow, and two periods more (expiries met in the kernel). */
    plan = (struct cmn_jitter_plan){.at = 1000000, .period = 800000};
    cr_assert_eq(cmn_jitter_period(900000, 1000000, 1000000 + 2 * 800000 + 30000, &plan, &debt),
                 870000);
    cr_assert_eq(debt, 0);
    /* Before the plan: nothing is late. */
    cr_assert_eq(cmn_jitter_period(900000, 1000000, 999999, &plan, &debt), 900000);
    /* Too late for the interval: the shortest period, the rest a debt, paid next time. */
    plan = (struct cmn_jitter_plan){.at = 1000, .period = 600000};
    cr_assert_eq(cmn_jitter_period(520000, 1000000, 1000 + 500000, &plan, &debt), 125000);
    cr_assert_eq(debt, 105000);
    plan = (struct cmn_jitter_plan){.debt_ns = debt};
    cr_assert_eq(cmn_jitter_period(900000, 1000000, 0, &plan, &debt), 795000);
    cr_assert_eq(debt, 0);
    /* A short mean: the kernel's shortest period is the floor. */
    plan = (struct cmn_jitter_plan){0};
    cr_assert_eq(cmn_jitter_period(5000, 8000, 0, &plan, &debt), CMN_JITTER_MIN_NS);
    cr_assert_eq(debt, CMN_JITTER_MIN_NS - 5000);
}
