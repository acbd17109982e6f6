/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What a thread label costs the program (part of `make bench`): nanoseconds a call of
 * prof_label_set(), of a prof_label_push() and prof_label_pop() pair, and of
 * prof_trace_set(), in a loop on one thread over a few values already seen (the common
 * case of a request server: a handful of endpoints and tenants). Built with
 * <libprof/prof_weak.h>, so the same binary measures the calls without libprof (the weak
 * references are null: what an application that ships the calls pays) and under
 * LD_PRELOAD=libprof.so, idle (PROF_START=0) or sampling.
 *
 *   labels [CALLS]      prints "set NS", "push+pop NS", "trace NS" (best of 5 runs of CALLS,
 *                       default 2 000 000)
 */
#include <libprof/prof_weak.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *const values[] = {"/api/users", "/api/orders", "/static", "/health"};
#define N_VALUES (sizeof(values) / sizeof(values[0]))

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double per_call(int what, long calls)
{
    double best = 1e30;
    unsigned char trace[16] = {1}, span[8] = {2};
    for (int run = 0; run < 5; run++) {
        uint64_t t0 = now_ns();
        for (long i = 0; i < calls; i++) {
            const char *v = values[i & (N_VALUES - 1)];
            if (what == 0) {
                prof_label_set("endpoint", v);
            } else if (what == 1) {
                prof_label_token t = prof_label_push("endpoint", v);
                prof_label_pop(t);
            } else {
                trace[15] = (unsigned char)i;
                prof_trace_set(trace, span);
            }
            __asm__ volatile("" ::: "memory");
        }
        double ns = (double)(now_ns() - t0) / (double)calls;
        best = ns < best ? ns : best;
    }
    return best;
}

int main(int argc, char **argv)
{
    long calls = argc > 1 ? atol(argv[1]) : 2000000;
    if (calls <= 0) {
        fprintf(stderr, "labels: CALLS must be a positive number\n");
        return 2;
    }
    printf("set %.1f\n", per_call(0, calls));
    printf("push+pop %.1f\n", per_call(1, calls));
    printf("trace %.1f\n", per_call(2, calls));
    return 0;
}
