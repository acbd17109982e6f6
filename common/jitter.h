/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Random sampling intervals, the arithmetic: a timer with a fixed period samples a program
 * whose work repeats at that period at the same few phases of each round, so every
 * interval is drawn afresh, uniformly between half and one and a half times the mean
 * period (sampler/jitter.h says why that keeps every function's expected share and the
 * mean rate). A counter re-armed after its overflow (PERF_EVENT_IOC_PERIOD) starts its
 * interval afresh, but it went on counting between the overflow and the re-arm: that is
 * taken off the interval drawn (modulo the period: an expiry that met the thread in the
 * kernel was skipped, the clock going on for another period), so that the intervals
 * between overflows are the ones drawn; an interval that would end up shorter than the
 * shortest period takes that minimum and carries the difference to the next as a debt.
 *
 * The same numbers for libprof's handler (sampler/jitter.c, which re-arms its own thread's
 * counter or timer) and for `prof record -p` (attach/jitter.c, which re-arms another
 * process's counters): the generator is a xorshift64* whose state the caller keeps and
 * seeds (not 0), the rest are pure functions. Header-only, never installed.
 *
 * Signal handler's path: allowed: arithmetic on the caller's values only.
 */
#ifndef PROF_COMMON_JITTER_H
#define PROF_COMMON_JITTER_H

#include <stdint.h>

#define CMN_JITTER_MIN_NS 10000u /* the kernel's shortest software clock period */

/* Where a counter should next overflow, in its own count (nanoseconds of counted time).
 * The caller's, per counter. */
struct cmn_jitter_plan {
    uint64_t at;     /* its count at the planned overflow, 0 unknown */
    uint64_t period; /* the period it was armed with, 0 unknown */
    int64_t debt_ns; /* counted time an interval could not take off (shorter than the
                      * shortest period), for the next */
};

/* Async-signal-safe. */
/* The next number of the xorshift64* generator whose state is *state (seeded by the
 * caller, not 0). */
static inline uint64_t cmn_jitter_random(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* The interval drawn around mean_ns from the random number r: mean/2 + mean * u, u
 * uniform in [0, 1) from r's top 32 bits, so in [mean/2, 3 mean/2); at least 1. */
static inline uint64_t cmn_jitter_interval(uint64_t r, uint64_t mean_ns)
{
    uint64_t u = r >> 32;
    uint64_t spread = (uint64_t)(((unsigned __int128)mean_ns * u) >> 32);
    uint64_t next = mean_ns / 2 + spread;
    return next > 0 ? next : 1;
}

/* The period to re-arm a counter with after its overflow, now that it counts `count`:
 * interval_ns (drawn) less what it counted past the plan's overflow (when plan knows it)
 * less the plan's debt, and at least the shortest period (mean_ns / 8, and
 * CMN_JITTER_MIN_NS). *debt_ns gets the plan's next debt: what that minimum added. */
static inline uint64_t cmn_jitter_period(uint64_t interval_ns, uint64_t mean_ns, uint64_t count,
                                         const struct cmn_jitter_plan *plan,
                                         int64_t *debt_ns /* out */)
{
    int64_t late = 0;
    if (plan->at != 0 && plan->period != 0 && count >= plan->at)
        late = (int64_t)((count - plan->at) % plan->period);
    int64_t period = (int64_t)interval_ns - late - plan->debt_ns;
    int64_t min = (int64_t)(mean_ns / 8 > CMN_JITTER_MIN_NS ? mean_ns / 8 : CMN_JITTER_MIN_NS);
    *debt_ns = period < min ? min - period : 0;
    return (uint64_t)(period < min ? min : period);
}

#endif
