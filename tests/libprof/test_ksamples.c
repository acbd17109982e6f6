/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of how the samples of a kernel-recorded ring weigh (libprof/ksamples.c,
 * lp_ksamples_weigh()) with the ring source's intervals drawn per writer period
 * (sampler/jitter.c, smp_jitter_window()): every sample weighs one period, the draws steer
 * the time between samples back to a period each, so that a thread's samples keep pace
 * with its time; where the counter may not sample kernel time, the intervals it skipped
 * there come as weight. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "libprof/ksamples.h"
#include "sampler/jitter.h"

#define PERIOD 1000000u /* 1000 Hz */

Test(ksamples, a_kernel_time_counter_sample_weighs_its_fixed_periods)
{
    struct lp_kweigh w = {.fixed = 4, .period_ns = PERIOD};
    cr_expect_eq(lp_ksamples_weigh(&w, 123456789), 4);
    cr_expect_eq(lp_ksamples_weigh(&w, 0), 4);
}

Test(ksamples, samples_at_the_interval_drawn_weigh_one_each)
{
    struct lp_kweigh w = {.period_ns = PERIOD, .drawn_ns = 1200000};
    uint64_t count = 0;
    for (int i = 0; i < 100; i++) {
        count += 1200000 + (uint64_t)(i % 3) * 1000; /* the kernel's few microseconds late */
        cr_expect_eq(lp_ksamples_weigh(&w, count), 1, "sample %d", i);
    }
    cr_expect(w.skew_ns >= 100 * 200000 && w.skew_ns <= 100 * 200000 + 100000, "skew %lld",
              (long long)w.skew_ns);
    cr_expect_eq(w.n_window, 100);
}

Test(ksamples, intervals_skipped_in_the_kernel_come_as_weight)
{
    /* A counter that may not sample kernel time skips the expiries that meet its thread
     * there: the next sample's value shows them. */
    struct lp_kweigh w = {.period_ns = PERIOD, .drawn_ns = PERIOD, .kernel_skips = 1};
    cr_expect_eq(lp_ksamples_weigh(&w, PERIOD), 1);
    cr_expect_eq(lp_ksamples_weigh(&w, 5 * PERIOD + 3000), 4); /* 3 expiries in the kernel */
    cr_expect(w.skew_ns >= 0 && w.skew_ns < 10000, "skew %lld", (long long)w.skew_ns);
    /* Intervals of half a period: two skipped make one period of weight. */
    w.drawn_ns = PERIOD / 2;
    cr_expect_eq(lp_ksamples_weigh(&w, 5 * PERIOD + 3000 + 3 * PERIOD / 2), 2);
}

Test(ksamples, a_counter_that_samples_the_kernel_weighs_one_and_steers_the_rest)
{
    /* A new draw cuts the interval under way short: that time is the next draws' to make
     * up for, as more samples, not weight. */
    struct lp_kweigh w = {.period_ns = PERIOD, .drawn_ns = PERIOD};
    cr_expect_eq(lp_ksamples_weigh(&w, PERIOD), 1);
    cr_expect_eq(lp_ksamples_weigh(&w, PERIOD + PERIOD * 7 / 10 + PERIOD), 1);
    cr_expect_eq(w.skew_ns, (int64_t)PERIOD * 7 / 10, "skew %lld", (long long)w.skew_ns);
}

Test(ksamples, a_counter_value_that_goes_back_weighs_one)
{
    struct lp_kweigh w = {.period_ns = PERIOD, .drawn_ns = PERIOD, .last_count = 50 * PERIOD};
    cr_expect_eq(lp_ksamples_weigh(&w, 10), 1);
    cr_expect_eq(w.last_count, 10);
}

Test(ksamples, drawn_windows_keep_a_threads_weight_to_its_time)
{
    /* A thread sampled through 2000 writer periods of 50 ms (100 000 periods), its interval
     * drawn anew for each, which cuts the interval under way short: its weights stand for
     * its time within half a writer period's samples, where weighing every sample 1
     * without steering would be off by thousands. */
    struct lp_kweigh w = {.period_ns = PERIOD, .drawn_ns = PERIOD};
    uint64_t rng = 12345, count = 0, weight = 0, next = PERIOD;
    for (int window = 0; window < 2000; window++) {
        uint64_t end = (uint64_t)(window + 1) * 50 * PERIOD;
        for (; next <= end; next += w.drawn_ns)
            weight += lp_ksamples_weigh(&w, next);
        count = end;
        w.drawn_ns = smp_jitter_window(&rng, PERIOD, w.skew_ns, 50.0);
        next = count + w.drawn_ns; /* the new interval counts from the draw */
        w.n_window = 0;
    }
    double off = ((double)weight * PERIOD - (double)count) / PERIOD;
    cr_expect(off > -25 && off < 25, "weights stand for %.1f periods more than the time", off);
}

Test(ksamples, window_draws_spread_the_rate_and_keep_its_mean)
{
    uint64_t rng = 99, lo = UINT64_MAX, hi = 0;
    double rate = 0;
    for (int i = 0; i < 20000; i++) {
        uint64_t p = smp_jitter_window(&rng, PERIOD, 0, 50.0);
        lo = p < lo ? p : lo;
        hi = p > hi ? p : hi;
        rate += (double)PERIOD / (double)p;
    }
    double fast = 1 + SMP_JITTER_WINDOW_SPREAD, slow = 1 - SMP_JITTER_WINDOW_SPREAD;
    cr_expect(lo >= (uint64_t)(PERIOD / fast) - 1 && hi <= (uint64_t)(PERIOD / slow) + 1,
              "intervals %llu..%llu", (unsigned long long)lo, (unsigned long long)hi);
    cr_expect(lo < PERIOD / fast * 1.05 && hi > PERIOD / slow * 0.9, "spread only %llu..%llu",
              (unsigned long long)lo, (unsigned long long)hi);
    rate /= 20000;
    cr_expect(rate > 0.99 && rate < 1.01, "mean rate %.4f of the asked", rate);
}

Test(ksamples, a_thread_behind_gets_shorter_intervals)
{
    uint64_t rng = 7, behind = 0, ahead = 0;
    for (int i = 0; i < 1000; i++) {
        behind += smp_jitter_window(&rng, PERIOD, 10 * (int64_t)PERIOD, 50.0);
        ahead += smp_jitter_window(&rng, PERIOD, -10 * (int64_t)PERIOD, 50.0);
    }
    cr_expect(behind < ahead, "behind %llu, ahead %llu", (unsigned long long)behind,
              (unsigned long long)ahead);
    cr_expect(smp_jitter_window(&rng, PERIOD, 1000 * (int64_t)PERIOD, 50.0) >=
                  (uint64_t)(PERIOD / (1 + SMP_JITTER_WINDOW_STEER)) - 1,
              "a draw left its steering's bounds");
}
