/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Two threads burning CPU side by side, for the end-to-end tests of thread support. The
 * thread "worker-one" runs spin_one() and "worker-two" runs spin_two(), a fixed number of
 * iterations each, while main waits in pthread_join. The result depends only on the
 * iteration count, so a run with the profiler prints exactly what a run without it does:
 *
 *   one 9f0c3e...    spin_one's result
 *   two 51aa07...    spin_two's result
 *
 *   twothreads [MILLION_ITERATIONS]    per thread; the default, 250, is about 0.5 s each
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

uint64_t spin_one(uint64_t n_iters);
uint64_t spin_two(uint64_t n_iters);

struct worker {
    uint64_t n_iters; /* in: iterations to do */
    uint64_t result;  /* out: written by the worker before it returns */
};

__attribute__((noipa)) uint64_t spin_one(uint64_t n_iters)
{
    uint64_t x = 0x0123456789abcdefull;
    for (uint64_t i = 0; i < n_iters; i++) {
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdull;
        x += i;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

__attribute__((noipa)) uint64_t spin_two(uint64_t n_iters)
{
    uint64_t x = 0xfedcba9876543210ull;
    for (uint64_t i = 0; i < n_iters; i++) {
        x ^= x >> 30;
        x *= 0xc4ceb9fe1a85ec53ull;
        x -= i;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

static void *thread_one(void *arg)
{
    struct worker *w = arg;
    pthread_setname_np(pthread_self(), "worker-one");
    w->result = spin_one(w->n_iters);
    return NULL;
}

static void *thread_two(void *arg)
{
    struct worker *w = arg;
    pthread_setname_np(pthread_self(), "worker-two");
    w->result = spin_two(w->n_iters);
    return NULL;
}

int main(int argc, char **argv)
{
    uint64_t millions = 250;
    if (argc > 1) {
        char *end;
        millions = strtoull(argv[1], &end, 10);
        if (*end || millions == 0 || argc > 2) {
            fprintf(stderr, "usage: twothreads [MILLION_ITERATIONS]\n");
            return 2;
        }
    }
    struct worker one = {.n_iters = millions * 1000000u};
    struct worker two = {.n_iters = millions * 1000000u};
    pthread_t t1, t2;
    if (pthread_create(&t1, NULL, thread_one, &one) != 0 ||
        pthread_create(&t2, NULL, thread_two, &two) != 0) {
        fprintf(stderr, "twothreads: pthread_create failed\n");
        return 1;
    }
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("one %016" PRIx64 "\ntwo %016" PRIx64 "\n", one.result, two.result);
    return 0;
}
