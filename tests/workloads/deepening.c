/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A thread whose stack deepens: it spends SHALLOW CPU-seconds in shallow_spin, called
 * from its start routine, then DEEP CPU-seconds in deep_spin at the bottom of DEPTH frames
 * of deepen, each holding 256 bytes, then SHALLOW again in shallow_spin. The ring source
 * sizes a thread's stack copy to what its walks read (libprof/timers.c): small in the
 * first phase, too small for the second, whose stacks must still come out whole once the
 * copy has grown again (tests/e2e/test_tables.c).
 *
 *   deepening SHALLOW DEEP DEPTH
 *
 * Exit status: 0; 2 on bad usage.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define KEEP __attribute__((noipa))

static double shallow_s, deep_s;
static int depth;
static volatile uint64_t sink;

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void spin(double s)
{
    double end = cpu_s() + s;
    uint64_t x = sink | 1;
    while (cpu_s() < end)
        for (int i = 0; i < 20000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = x;
}

KEEP static void shallow_spin(void)
{
    spin(shallow_s);
}

KEEP static void deep_spin(void)
{
    spin(deep_s);
}

KEEP static void deepen(int n)
{
    volatile char pad[256];
    pad[0] = (char)n;
    if (n > 1)
        deepen(n - 1);
    else
        deep_spin();
    pad[255] = pad[0];
}

static void *run(void *arg)
{
    (void)arg;
    shallow_spin();
    deepen(depth);
    shallow_spin();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4 || (shallow_s = atof(argv[1])) <= 0 || (deep_s = atof(argv[2])) <= 0 ||
        (depth = atoi(argv[3])) < 1 || depth > 100) {
        fprintf(stderr, "usage: deepening SHALLOW DEEP DEPTH (1..100)\n");
        return 2;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, run, NULL) != 0)
        return 1;
    pthread_join(t, NULL);
    return 0;
}
