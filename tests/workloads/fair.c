/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Per-thread fairness truth: three threads, named fair-1..fair-3, burn CPU in the ratio
 * 1:2:3 (by the amount of work given to each), in burn_1(), burn_2() and burn_3() (so that
 * a profiler without thread ids shows the split by function), while the main thread
 * waits. Each measures its own CPU time with its thread CPU clock. At the end the truth file gets one line per
 * thread, "TID SHARE", SHARE being its part of the three threads' CPU time.
 *   fair [SECONDS] [TRUTH_FILE]     (about SECONDS of CPU in all, default 1.2)
 * Prints nothing; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct worker {
    double cpu_s;  /* out */
    pid_t tid;     /* out */
    uint64_t work; /* in: iterations */
    int index;
};

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define BURN(name, seed)                                                                   \
    __attribute__((noipa)) static uint64_t name(uint64_t n)                                \
    {                                                                                      \
        uint64_t x = (seed);                                                               \
        for (uint64_t i = 0; i < n; i++) {                                                 \
            x ^= x << 13;                                                                  \
            x ^= x >> 7;                                                                   \
            x ^= x << 17;                                                                  \
            __asm__ volatile("" : "+r"(x));                                                \
        }                                                                                  \
        return x;                                                                          \
    }

BURN(burn, 88172645463325252ull)
BURN(burn_1, 1ull)
BURN(burn_2, 2ull)
BURN(burn_3, 3ull)

static uint64_t (*const burners[3])(uint64_t) = { burn_1, burn_2, burn_3 };

static void *run(void *arg)
{
    struct worker *w = arg;
    char name[16];
    snprintf(name, sizeof(name), "fair-%d", w->index);
    pthread_setname_np(pthread_self(), name);
    w->tid = (pid_t)syscall(SYS_gettid);
    double t0 = thread_cpu();
    volatile uint64_t sink = burners[w->index - 1](w->work);
    (void)sink;
    w->cpu_s = thread_cpu() - t0;
    return NULL;
}

/* Iterations per CPU-second, measured on a short run. */
static double rate(void)
{
    double t0 = thread_cpu();
    volatile uint64_t sink = burn(20000000);
    (void)sink;
    return 20000000 / (thread_cpu() - t0);
}

int main(int argc, char **argv)
{
    double total_s = argc > 1 ? atof(argv[1]) : 1.2;
    const char *truth = argc > 2 ? argv[2] : NULL;
    double per_s = rate();
    struct worker w[3];
    pthread_t t[3];
    for (int i = 0; i < 3; i++) {
        w[i] = (struct worker){ .work = (uint64_t)(per_s * total_s * (i + 1) / 6), .index = i + 1 };
        pthread_create(&t[i], NULL, run, &w[i]);
    }
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    double sum = w[0].cpu_s + w[1].cpu_s + w[2].cpu_s;
    FILE *f = truth ? fopen(truth, "w") : NULL;
    for (int i = 0; f && i < 3; i++)
        fprintf(f, "%d %.4f\n", (int)w[i].tid, w[i].cpu_s / sum);
    if (f)
        fclose(f);
    return 0;
}
