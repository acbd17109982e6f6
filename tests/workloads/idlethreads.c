/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Many parked threads and one busy one, to measure what a wall-clock profile costs a
 * process with idle threads (docs/BENCH.md): N threads wait on a condition variable for
 * the whole run; once they are parked (a second after they started) one thread spins for
 * SECONDS of wall time, which is what is measured. At the end it prints the
 * wall time, the process's CPU time, the busy thread's CPU time and its loop iterations
 * per CPU-second:
 *
 *   wall_s 10.001 process_cpu_s 10.052 busy_cpu_s 10.001 busy_iters_per_cpu_s 123456789
 *
 * The CPU time beyond the busy thread's is what the other threads cost (the parked ones
 * nothing, a profiler's own thread and records whatever they cost); the iterations per
 * CPU-second fall by what a profiler's handler costs the busy thread.
 *
 *   idlethreads N SECONDS
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int done;
static volatile uint64_t sink;

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *parked(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    while (!done)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    return NULL;
}

struct busy {
    uint64_t run_ns, cpu_ns, iters;
};

static void *busy(void *arg)
{
    struct busy *b = arg;
    uint64_t end = clock_ns(CLOCK_MONOTONIC) + b->run_ns, x = 1;
    while (clock_ns(CLOCK_MONOTONIC) < end) {
        for (int i = 0; i < 100000; i++) {
            x = x * 0x9e3779b97f4a7c15ull + 1;
            __asm__ volatile("" : "+r"(x));
        }
        b->iters += 100000;
    }
    sink = x;
    b->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    struct busy b = {.run_ns = (uint64_t)((argc > 2 ? atof(argv[2]) : 10.0) * 1e9)};
    pthread_t *t = calloc((size_t)n, sizeof(*t)), tb;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], &attr, parked, NULL) != 0)
            return 1;
    sleep(1);
    uint64_t w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    pthread_create(&tb, NULL, busy, &b);
    pthread_join(tb, NULL);
    uint64_t w1 = clock_ns(CLOCK_MONOTONIC), c1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    pthread_mutex_lock(&mu);
    done = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("wall_s %.3f process_cpu_s %.3f busy_cpu_s %.3f busy_iters_per_cpu_s %.0f\n",
           (double)(w1 - w0) / 1e9, (double)(c1 - c0) / 1e9, (double)b.cpu_ns / 1e9,
           (double)b.iters / ((double)b.cpu_ns / 1e9));
    free(t);
    return 0;
}
