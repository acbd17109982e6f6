/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Labels set before profiling starts: a worker thread makes phase=early its label and
 * trace 4242...42 (span 0101...01) its trace, then spins SECONDS of CPU in worker_spin()
 * without changing either; the main thread, meanwhile, calls prof_start() (under
 * PROF_START=0, the session starts then) and waits for it. Every sample of worker_spin()
 * must carry phase=early and the trace (tests/e2e/test_labels.c).
 *
 *   latelabels SECONDS
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libprof/prof_weak.h>

static volatile uint64_t sink;
static volatile int labelled;

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void worker_spin(double s)
{
    double end = cpu_s() + s;
    uint64_t x = sink | 1;
    while (cpu_s() < end)
        for (int i = 0; i < 10000; i++)
            x = x * 6364136223846793005u + 1442695040888963407u;
    sink = x;
}

static void *worker(void *arg)
{
    unsigned char trace[16], span[8];
    memset(trace, 0x42, sizeof(trace));
    memset(span, 0x01, sizeof(span));
    prof_label_set("phase", "early");
    prof_trace_set(trace, span);
    labelled = 1;
    worker_spin(*(double *)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0.5;
    pthread_t t;
    if (pthread_create(&t, NULL, worker, &seconds) != 0)
        return 1;
    while (!labelled) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    prof_start();
    pthread_join(t, NULL);
    return 0;
}
