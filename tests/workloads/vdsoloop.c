/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A workload that spends its time in the vDSO: main -> read_clocks, which calls
 * clock_gettime(CLOCK_MONOTONIC) in a loop; the C library answers it from the kernel's
 * vDSO without a system call. The end-to-end tests check that frames there are named from
 * the reporter's own vDSO (its build-id is the same on the same kernel), not left as
 * "[vdso]+0x...".
 *
 *   vdsoloop [SECONDS]    process CPU seconds to burn, 0.5 by default
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

uint64_t read_clocks(unsigned n);

__attribute__((noipa)) uint64_t read_clocks(unsigned n)
{
    uint64_t sum = 0;
    struct timespec ts;
    for (unsigned i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sum += (uint64_t)ts.tv_nsec;
    }
    return sum;
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
        fprintf(stderr, "usage: vdsoloop [SECONDS]\n");
        return 2;
    }
    double end = process_cpu_s() + seconds;
    while (process_cpu_s() < end)
        sink += read_clocks(100000);
    return 0;
}
