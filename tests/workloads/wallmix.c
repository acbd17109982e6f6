/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The known-truth workload of wall-clock profiles. One thread, named "worker", goes round
 * four phases, each of a random length of 4 to 16 ms of wall time:
 *
 *   phase_spin   burns CPU
 *   phase_sleep  sleeps (nanosleep)
 *   phase_mutex  waits for a mutex that the thread "holder" holds, and releases when told
 *   phase_pipe   reads from a pipe that the thread "feeder" writes to when told
 *
 * and measures each phase's wall time (CLOCK_MONOTONIC around it). The helpers sleep on a
 * condition variable between their turns. At the end the shares of the worker's wall time
 * go to TRUTH_FILE:
 *
 *   phase_spin 0.2512
 *   phase_sleep 0.2476
 *   phase_mutex 0.2490
 *   phase_pipe 0.2522
 *   worker_tid 12345
 *   eintr 0               system calls of any thread that failed with EINTR
 *
 *   wallmix SECONDS TRUTH_FILE
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define KEEP __attribute__((noipa))
#define MIN_MS 4
#define MAX_MS 16

enum { SPIN, SLEEP, MUTEX, PIPE, N_PHASES };
static const char *const names[N_PHASES] = {"phase_spin", "phase_sleep", "phase_mutex",
                                            "phase_pipe"};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;  /* the one the worker waits for */
static pthread_mutex_t turn_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cv = PTHREAD_COND_INITIALIZER;
static int holder_turn, feeder_turn, done; /* under turn_mu */
static uint64_t hold_ns, feed_ns;          /* how long the next turn waits; under turn_mu */
static int holding;                        /* the holder has the lock; under turn_mu */
static int pipe_fd[2];
static volatile uint64_t sink;
static _Atomic unsigned n_eintr; /* EINTRs seen: a profiler must cause none */

uint64_t phase_spin(uint64_t ns);
uint64_t phase_sleep(uint64_t ns);
uint64_t phase_mutex(uint64_t ns);
uint64_t phase_pipe(uint64_t ns);

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0)
        n_eintr += errno == EINTR;
}

KEEP uint64_t phase_spin(uint64_t ns)
{
    uint64_t end = now_ns() + ns, x = ns;
    while (now_ns() < end) {
        for (int i = 0; i < 1000; i++) {
            x = x * 0x9e3779b97f4a7c15ull + 1;
            __asm__ volatile("" : "+r"(x));
        }
    }
    sink = x;
    return x;
}

KEEP uint64_t phase_sleep(uint64_t ns)
{
    sleep_ns(ns);
    return ns;
}

KEEP uint64_t phase_mutex(uint64_t ns)
{
    pthread_mutex_lock(&turn_mu);
    hold_ns = ns;
    holder_turn = 1;
    pthread_cond_broadcast(&turn_cv);
    while (!holding)
        pthread_cond_wait(&turn_cv, &turn_mu);
    pthread_mutex_unlock(&turn_mu);
    pthread_mutex_lock(&lock); /* the holder has it for ns */
    pthread_mutex_unlock(&lock);
    return ns;
}

KEEP uint64_t phase_pipe(uint64_t ns)
{
    pthread_mutex_lock(&turn_mu);
    feed_ns = ns;
    feeder_turn = 1;
    pthread_cond_broadcast(&turn_cv);
    pthread_mutex_unlock(&turn_mu);
    char c;
    while (read(pipe_fd[0], &c, 1) != 1)
        n_eintr += errno == EINTR;
    return ns;
}

static void *holder(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&turn_mu);
    for (;;) {
        while (!holder_turn && !done)
            pthread_cond_wait(&turn_cv, &turn_mu);
        if (done)
            break;
        holder_turn = 0;
        uint64_t ns = hold_ns;
        pthread_mutex_lock(&lock);
        holding = 1;
        pthread_cond_broadcast(&turn_cv);
        pthread_mutex_unlock(&turn_mu);
        sleep_ns(ns);
        pthread_mutex_lock(&turn_mu);
        holding = 0;
        pthread_mutex_unlock(&lock);
    }
    pthread_mutex_unlock(&turn_mu);
    return NULL;
}

static void *feeder(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&turn_mu);
    for (;;) {
        while (!feeder_turn && !done)
            pthread_cond_wait(&turn_cv, &turn_mu);
        if (done)
            break;
        feeder_turn = 0;
        uint64_t ns = feed_ns;
        pthread_mutex_unlock(&turn_mu);
        sleep_ns(ns);
        while (write(pipe_fd[1], "x", 1) != 1) {
        }
        pthread_mutex_lock(&turn_mu);
    }
    pthread_mutex_unlock(&turn_mu);
    return NULL;
}

static uint64_t next_random(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

struct worker_args {
    uint64_t run_ns;
    uint64_t spent[N_PHASES];
    uint64_t total_ns;
    long tid;
};

static void *worker(void *arg)
{
    struct worker_args *w = arg;
    w->tid = syscall(SYS_gettid);
    pthread_setname_np(pthread_self(), "worker");
    uint64_t (*const phase[N_PHASES])(uint64_t) = {phase_spin, phase_sleep, phase_mutex,
                                                   phase_pipe};
    uint64_t seed = 0x1234567u, start = now_ns();
    while (now_ns() - start < w->run_ns) {
        for (int k = 0; k < N_PHASES; k++) {
            uint64_t ms = MIN_MS + next_random(&seed) % (MAX_MS - MIN_MS + 1);
            uint64_t t0 = now_ns();
            phase[k](ms * 1000000u + next_random(&seed) % 1000000u);
            w->spent[k] += now_ns() - t0;
        }
    }
    w->total_ns = now_ns() - start;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: wallmix SECONDS TRUTH_FILE\n");
        return 2;
    }
    if (pipe(pipe_fd) != 0)
        return 1;
    struct worker_args w = {.run_ns = (uint64_t)(atof(argv[1]) * 1e9)};
    pthread_t th, tf, tw;
    pthread_create(&th, NULL, holder, NULL);
    pthread_create(&tf, NULL, feeder, NULL);
    pthread_create(&tw, NULL, worker, &w);
    pthread_join(tw, NULL);
    pthread_mutex_lock(&turn_mu);
    done = 1;
    pthread_cond_broadcast(&turn_cv);
    pthread_mutex_unlock(&turn_mu);
    pthread_join(th, NULL);
    pthread_join(tf, NULL);
    FILE *f = fopen(argv[2], "w");
    if (!f)
        return 1;
    for (int k = 0; k < N_PHASES; k++)
        fprintf(f, "%s %.4f\n", names[k], (double)w.spent[k] / (double)w.total_ns);
    fprintf(f, "worker_tid %ld\neintr %u\n", w.tid, (unsigned)n_eintr);
    fclose(f);
    return 0;
}
