/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A periodic workload, the worst case of a profiler with a fixed sampling period: each of
 * its threads repeats rounds of exactly ROUND_US microseconds of its own CPU time (4 ms by
 * default, the period of the default 250 Hz), and each round runs three functions one
 * after the other for fixed parts of it:
 *
 *   round: phase_a (50 %) | phase_b (30 %) | phase_c (20 %) | round ...
 *
 * A sampler whose period is the round's samples each function at the same few phases of
 * every round and gets their shares wrong by as much as the phases are off; a sampler
 * whose intervals are random shares them right. Each function spins in small steps of
 * work until the thread's CPU clock reaches its end of the round (absolute targets, so
 * rounds do not drift), and adds the CPU time it took to its own total; at the end the
 * shares of the three totals go to TRUTH_FILE:
 *
 *   phase_a 0.5003
 *   phase_b 0.2999
 *   phase_c 0.1998
 *   rounds 2500
 *
 *   periodic THREADS CPU_SECONDS_EACH [ROUND_US] [TRUTH_FILE]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define KEEP __attribute__((noipa))
#define MAX_THREADS 16
#define STEP_ITERS 10000 /* work between two reads of the CPU clock: a few microseconds */

static _Atomic uint64_t phase_ns[3]; /* CPU time in each phase, all threads */
static _Atomic uint64_t n_rounds;
static uint64_t round_ns = 4000000;
static uint64_t cpu_each_ns;
static volatile uint64_t sink;

uint64_t phase_a(uint64_t until, uint64_t now);
uint64_t phase_b(uint64_t until, uint64_t now);
uint64_t phase_c(uint64_t until, uint64_t now);

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Work until the thread's CPU clock reaches `until`; returns the clock then. Each phase
 * function has a body of its own so that none is folded into another. */
KEEP uint64_t phase_a(uint64_t until, uint64_t now)
{
    uint64_t x = now;
    while (now < until) {
        for (int i = 0; i < STEP_ITERS; i++) {
            x = x * 0x9e3779b97f4a7c15ull + 1;
            __asm__ volatile("" : "+r"(x));
        }
        now = thread_cpu_ns();
    }
    sink = x;
    return now;
}

KEEP uint64_t phase_b(uint64_t until, uint64_t now)
{
    uint64_t x = now;
    while (now < until) {
        for (int i = 0; i < STEP_ITERS; i++) {
            x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ull;
            __asm__ volatile("" : "+r"(x));
        }
        now = thread_cpu_ns();
    }
    sink = x;
    return now;
}

KEEP uint64_t phase_c(uint64_t until, uint64_t now)
{
    uint64_t x = now;
    while (now < until) {
        for (int i = 0; i < STEP_ITERS; i++) {
            x = (x ^ (x >> 27)) * 0x94d049bb133111ebull + 3;
            __asm__ volatile("" : "+r"(x));
        }
        now = thread_cpu_ns();
    }
    sink = x;
    return now;
}

static void *worker(void *arg)
{
    (void)arg;
    uint64_t start = thread_cpu_ns(), now = start, mine[3] = {0, 0, 0}, rounds = 0;
    for (uint64_t round = start; now < start + cpu_each_ns; round += round_ns) {
        uint64_t t0 = now;
        now = phase_a(round + round_ns / 2, now);
        mine[0] += now - t0;
        t0 = now;
        now = phase_b(round + round_ns * 8 / 10, now);
        mine[1] += now - t0;
        t0 = now;
        now = phase_c(round + round_ns, now);
        mine[2] += now - t0;
        rounds++;
    }
    for (int k = 0; k < 3; k++)
        atomic_fetch_add(&phase_ns[k], mine[k]);
    atomic_fetch_add(&n_rounds, rounds);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: periodic THREADS CPU_SECONDS_EACH [ROUND_US] [TRUTH_FILE]\n");
        return 2;
    }
    int n = atoi(argv[1]);
    if (n < 1 || n > MAX_THREADS)
        n = 1;
    cpu_each_ns = (uint64_t)(atof(argv[2]) * 1e9);
    if (argc > 3 && atoi(argv[3]) > 0)
        round_ns = (uint64_t)atoi(argv[3]) * 1000u;
    pthread_t t[MAX_THREADS];
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    uint64_t all = phase_ns[0] + phase_ns[1] + phase_ns[2];
    FILE *f = argc > 4 ? fopen(argv[4], "w") : NULL;
    if (f) {
        fprintf(f, "phase_a %.4f\nphase_b %.4f\nphase_c %.4f\nrounds %llu\n",
                (double)phase_ns[0] / (double)all, (double)phase_ns[1] / (double)all,
                (double)phase_ns[2] / (double)all, (unsigned long long)n_rounds);
        fclose(f);
    }
    return 0;
}
