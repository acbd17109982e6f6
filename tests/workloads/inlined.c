/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A workload whose hot code is inlined: main -> outer_work -> mix_step, where mix_step is
 * always_inline, so that at -O2 its loop lives inside outer_work and the symbol table has
 * no mix_step at all. Only the DWARF inline information still says that the hot
 * instructions are mix_step's, inlined at a line of outer_work. The end-to-end tests check
 * that `prof report --lines` shows mix_step as a frame of its own under outer_work.
 *
 *   inlined [SECONDS]    process CPU seconds to burn, 0.5 by default
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

uint64_t outer_work(uint64_t n_iters, uint64_t x);

static inline __attribute__((always_inline)) uint64_t mix_step(uint64_t n_iters, uint64_t x)
{
    for (uint64_t i = 0; i < n_iters; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

__attribute__((noipa)) uint64_t outer_work(uint64_t n_iters, uint64_t x)
{
    x = mix_step(n_iters, x);
    return x * 3 + 1;
}

static double process_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? strtod(argv[1], NULL) : 0.5;
    if (!(seconds > 0.0) || argc > 2) {
        fprintf(stderr, "usage: inlined [SECONDS]\n");
        return 2;
    }
    uint64_t x = 88172645463325252ull;
    double end = process_cpu_s() + seconds;
    while (process_cpu_s() < end)
        x = outer_work(1000000, x);
    sink = x;
    return 0;
}
