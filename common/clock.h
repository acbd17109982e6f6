/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Reading a clock in nanoseconds (CLOCK_MONOTONIC for sample times and deadlines,
 * CLOCK_REALTIME for the wall-clock start, the CPU-time clocks for rates). Through
 * clock_gettime(), so through the vDSO: not for the signal handler, which reads its clock
 * by system call (sampler/handler.h, smp_clock_ns()). Header-only, never installed.
 *
 * Signal handler's path: not allowed (the vDSO's clock reads fault where the TSC is turned off).
 */
#ifndef PROF_COMMON_CLOCK_H
#define PROF_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Not async-signal-safe (the vDSO's clock reads fault where the TSC is turned off). */
/* Clock clk now, in nanoseconds; 0 when it cannot be read. */
static inline uint64_t cmn_clock_ns(clockid_t clk)
{
    struct timespec ts;
    if (clock_gettime(clk, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC now, in seconds. */
static inline double cmn_clock_s(void)
{
    return (double)cmn_clock_ns(CLOCK_MONOTONIC) / 1e9;
}

#endif
