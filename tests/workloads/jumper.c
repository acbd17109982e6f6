/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Signal handlers that never return, for the end-to-end tests of the sampling signal's
 * handler: the application's handlers must be able to leave by siglongjmp() or
 * pthread_exit() while profiling goes on, every later sample kept.
 *
 *   jumper longjmp SECONDS   the timeout idiom: a SIGALRM handler (setitimer(ITIMER_REAL)
 *                            at 2 kHz) jumps out of spin_until_alarm() with siglongjmp(),
 *                            over and over, for SECONDS of CPU time
 *   jumper exit SECONDS      worker threads spin in worker_spin() until main sends them
 *                            SIGUSR1, whose handler calls pthread_exit(); a new worker
 *                            follows, for SECONDS of CPU time
 *
 * Prints "jumps N" or "exits N" and "cpu_s X" (the CPU time of the main thread for
 * longjmp, of the process for exit), exits 0.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static sigjmp_buf back;
static volatile uint64_t sink;

void spin_until_alarm(void);
void *worker_spin(void *arg);

static double cpu_s_of(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The process's CPU time: every thread of the program's, and the profiler's writer
 * thread's too. */
static double cpu_s(void)
{
    return cpu_s_of(CLOCK_PROCESS_CPUTIME_ID);
}

static void on_alarm(int sig)
{
    (void)sig;
    siglongjmp(back, 1);
}

__attribute__((noipa)) void spin_until_alarm(void)
{
    for (;;)
        sink++;
}

static int run_longjmp(double seconds)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    volatile unsigned long jumps = 0;
    volatile int armed = 0;
    if (sigsetjmp(back, 1))
        jumps++;
    if (!armed) {
        armed = 1;
        struct itimerval it = {{0, 500}, {0, 500}};
        setitimer(ITIMER_REAL, &it, NULL);
    }
    if (cpu_s() < seconds)
        spin_until_alarm();
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    /* The one thread that runs here: its CPU time is what its samples must weigh. */
    printf("jumps %lu\ncpu_s %.3f\n", jumps, cpu_s_of(CLOCK_THREAD_CPUTIME_ID));
    return 0;
}

static void on_usr1(int sig)
{
    (void)sig;
    pthread_exit(NULL);
}

__attribute__((noipa)) void *worker_spin(void *arg)
{
    (void)arg;
    for (;;)
        sink++;
    return NULL;
}

static int run_exit(double seconds)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    unsigned long exits = 0;
    while (cpu_s() < seconds) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker_spin, NULL) != 0)
            return 1;
        struct timespec ts = {0, 2 * 1000000L};
        nanosleep(&ts, NULL);
        pthread_kill(t, SIGUSR1);
        pthread_join(t, NULL);
        exits++;
    }
    printf("exits %lu\ncpu_s %.3f\n", exits, cpu_s());
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: jumper longjmp|exit SECONDS\n");
        return 2;
    }
    double seconds = atof(argv[2]);
    if (strcmp(argv[1], "longjmp") == 0)
        return run_longjmp(seconds);
    if (strcmp(argv[1], "exit") == 0)
        return run_exit(seconds);
    fprintf(stderr, "jumper: unknown mode %s\n", argv[1]);
    return 2;
}
