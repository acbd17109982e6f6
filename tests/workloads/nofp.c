/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A workload built without frame pointers, as most distributions build their code: the
 * pragma below turns -fno-omit-frame-pointer off for this file, so %rbp is an ordinary
 * register here. main -> nofp_outer -> nofp_middle -> nofp_inner, where nofp_inner burns
 * the CPU. The frame-pointer stepper cannot follow these frames; the libunwind stepper
 * can, from .eh_frame. tests/e2e/test_unwind.c and bench/walk compare the two.
 *
 *   nofp [SECONDS]    process CPU seconds to burn, 1 by default
 */
#pragma GCC optimize("omit-frame-pointer")
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

__attribute__((noipa)) static uint64_t nofp_inner(uint64_t x, uint64_t *scratch)
{
    for (int i = 0; i < 200000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        scratch[i & 15] += x >> 33;
    }
    return x;
}

__attribute__((noipa)) static uint64_t nofp_middle(uint64_t x)
{
    uint64_t scratch[16] = {0};
    x = nofp_inner(x, scratch);
    return x + scratch[3];
}

__attribute__((noipa)) static uint64_t nofp_outer(uint64_t x)
{
    uint64_t y = nofp_middle(x);
    return y ^ (y >> 7);
}

static double process_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? strtod(argv[1], NULL) : 1.0;
    if (!(seconds > 0.0) || argc > 2) {
        fprintf(stderr, "usage: nofp [SECONDS]\n");
        return 2;
    }
    uint64_t x = 1;
    while (process_cpu_s() < seconds)
        x = nofp_outer(x);
    sink = x;
    return 0;
}
