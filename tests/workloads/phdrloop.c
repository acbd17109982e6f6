/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A workload that spends its time inside dl_iterate_phdr(), which holds the loader's lock
 * while it calls back: a profiling signal lands there most of the time. A libunwind
 * stepper that called glibc's dl_iterate_phdr() from the handler would wait for that lock
 * forever (the interrupted thread holds it); libprof's own dl_iterate_phdr() serves the
 * handler a snapshot instead. main -> walk_objects -> dl_iterate_phdr -> count_object.
 *
 *   phdrloop [SECONDS]    process CPU seconds to burn, 1 by default
 */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

__attribute__((noipa)) static int count_object(struct dl_phdr_info *info, size_t size,
                                               void *data)
{
    uint64_t *n = data;
    (void)size;
    for (int i = 0; i < 2000; i++)
        *n += (uint64_t)info->dlpi_phnum * (uint64_t)i;
    return 0;
}

__attribute__((noipa)) static void walk_objects(void)
{
    uint64_t n = 0;
    dl_iterate_phdr(count_object, &n);
    sink += n;
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
        fprintf(stderr, "usage: phdrloop [SECONDS]\n");
        return 2;
    }
    while (process_cpu_s() < seconds)
        for (int i = 0; i < 200; i++)
            walk_objects();
    return 0;
}
