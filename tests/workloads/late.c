/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Profiling a region: started with PROF_START=0, it runs two threads that burn CPU in
 * before_start() for a while, then calls prof_start() (the threads already exist, so the
 * library must find and arm them), burns in profiled_region(), calls prof_stop() and
 * burns in after_stop(). The profile must hold profiled_region() only, from all three
 * threads. The prof_* functions are weak, so it also runs without libprof.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "include/libprof/prof.h"

#pragma weak prof_start
#pragma weak prof_stop

static _Atomic int phase; /* 0 before, 1 profiled, 2 after, 3 done */

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Each phase function burns until the main thread moves the phase on. The increments
 * differ so that the compiler cannot fold the three into one function (identical code
 * folding would give them one name). */
#define BURN_UNTIL_PHASE_CHANGES(name, inc)                                                \
    __attribute__((noipa)) static uint64_t name(int p)                                     \
    {                                                                                      \
        uint64_t x = 1;                                                                    \
        while (atomic_load(&phase) <= p) {                                                 \
            for (int i = 0; i < 20000; i++) {                                              \
                x = x * 6364136223846793005ull + (inc);                                    \
                __asm__ volatile("" : "+r"(x));                                            \
            }                                                                              \
        }                                                                                  \
        return x;                                                                          \
    }

BURN_UNTIL_PHASE_CHANGES(before_start, 1)
BURN_UNTIL_PHASE_CHANGES(profiled_region, 3)
BURN_UNTIL_PHASE_CHANGES(after_stop, 5)

static void *worker(void *arg)
{
    volatile uint64_t sink = before_start(0);
    sink += profiled_region(1);
    sink += after_stop(2);
    return arg;
}

/* The main thread burns too, for `secs` of its own CPU time per phase. */
static void main_phase(double secs)
{
    double end = thread_cpu() + secs;
    int p = atomic_load(&phase);
    while (thread_cpu() < end) {
        uint64_t x = 1;
        for (int i = 0; i < 20000; i++) {
            x = x * 6364136223846793005ull + 1;
            __asm__ volatile("" : "+r"(x));
        }
    }
    atomic_store(&phase, p + 1);
}

int main(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    main_phase(0.2);
    if (prof_start && prof_start() != 0)
        fprintf(stderr, "prof_start failed\n");
    main_phase(0.3);
    if (prof_stop && prof_stop() != 0)
        fprintf(stderr, "prof_stop failed\n");
    main_phase(0.2);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    return 0;
}
