/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A workload whose hot path runs through libc with callbacks: qsort() calling
 * by_value() and bsearch() calling by_key(). Debian's libc has no frame pointers, so the
 * frame-pointer chain breaks inside qsort/bsearch and the samples lose main; the libunwind
 * stepper follows libc's .eh_frame. main -> sort_many -> qsort -> ... -> by_value and
 * main -> search_many -> bsearch -> by_key. tests/e2e/test_unwind.c and bench/walk compare
 * the steppers on it.
 *
 *   callbacks [SECONDS]    process CPU seconds to burn, 1 by default
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N_VALUES 4096

static uint64_t values[N_VALUES];
static volatile uint64_t sink;

__attribute__((noipa)) static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

__attribute__((noipa)) static int by_key(const void *key, const void *elem)
{
    return by_value(key, elem);
}

__attribute__((noipa)) static void sort_many(uint64_t *seed)
{
    for (size_t i = 0; i < N_VALUES; i++) {
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        values[i] = *seed >> 20;
    }
    qsort(values, N_VALUES, sizeof(values[0]), by_value);
}

__attribute__((noipa)) static void search_many(uint64_t seed)
{
    uint64_t found = 0;
    for (int i = 0; i < 20000; i++) {
        uint64_t key = values[(seed + (uint64_t)i * 7919u) % N_VALUES];
        found += bsearch(&key, values, N_VALUES, sizeof(values[0]), by_key) != NULL;
    }
    sink += found;
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
        fprintf(stderr, "usage: callbacks [SECONDS]\n");
        return 2;
    }
    uint64_t seed = 42;
    while (process_cpu_s() < seconds) {
        sort_many(&seed);
        search_many(seed);
    }
    return 0;
}
