/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Blocking system calls under a profiler: while one thread burns CPU (so profiling signals
 * keep coming), the main thread sleeps (nanosleep), reads a pipe that a third thread feeds
 * slowly, and waits on a condition variable with a timeout. Any EINTR or short read is a
 * failure: the profiler's signal must not interrupt the application's calls. Prints
 * "eintr N short N sleep_ms X" (X: wall time of 20 sleeps of 5 ms each).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static _Atomic int done;
static int pipe_fd[2];

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void *burner(void *arg)
{
    uint64_t x = (uintptr_t)arg;
    while (!atomic_load(&done)) {
        for (int i = 0; i < 100000; i++) {
            x = x * 6364136223846793005ull + 1;
            __asm__ volatile("" : "+r"(x));
        }
    }
    return (void *)(uintptr_t)x;
}

static void *feeder(void *arg)
{
    (void)arg;
    char block[4096] = { 0 };
    for (int i = 0; i < 20; i++) {
        struct timespec ts = { 0, 3000000 };
        nanosleep(&ts, NULL);
        if (write(pipe_fd[1], block, sizeof(block)) != (ssize_t)sizeof(block))
            break;
    }
    return NULL;
}

int main(void)
{
    int eintr = 0, short_reads = 0;
    pthread_t b, f;
    pthread_create(&b, NULL, burner, NULL);
    if (pipe(pipe_fd) != 0)
        return 1;
    pthread_create(&f, NULL, feeder, NULL);

    double t0 = now_ms();
    for (int i = 0; i < 20; i++) {
        struct timespec ts = { 0, 5000000 };
        if (nanosleep(&ts, NULL) != 0 && errno == EINTR)
            eintr++;
    }
    double sleep_ms = now_ms() - t0;

    for (int i = 0; i < 20; i++) {
        char block[4096];
        ssize_t n = read(pipe_fd[0], block, sizeof(block));
        if (n < 0 && errno == EINTR)
            eintr++;
        else if (n != (ssize_t)sizeof(block))
            short_reads++; /* a pipe write of 4096 bytes is atomic: reads see whole blocks */
    }

    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < 10; i++) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 5000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        int rc = pthread_cond_timedwait(&cv, &mu, &until);
        if (rc == EINTR)
            eintr++;
    }
    pthread_mutex_unlock(&mu);

    atomic_store(&done, 1);
    pthread_join(b, NULL);
    pthread_join(f, NULL);
    printf("eintr %d short %d sleep_ms %.1f\n", eintr, short_reads, sleep_ms);
    return 0;
}
