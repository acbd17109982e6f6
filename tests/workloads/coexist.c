/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * An application that profiles itself the old way: its own SIGPROF handler (installed with
 * signal(), or with sigaction() when given "sigaction") and its own ITIMER_PROF at 100 Hz,
 * while it burns about SECONDS of CPU. It prints "ticks N cpu_s X": how often its handler
 * ran and how much CPU it used, so a test can compare the ticks per CPU-second with and
 * without a profiler around it. It also checks that its handler is the one sigaction()
 * reports, and prints "view ok" or "view wrong".
 *   coexist [SECONDS] [signal|sigaction]
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile sig_atomic_t ticks;

static void on_prof(int sig)
{
    (void)sig;
    ticks++;
}

static double process_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t spin_until(double cpu_s)
{
    uint64_t x = 1;
    while (process_cpu() < cpu_s) {
        for (int i = 0; i < 100000; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            __asm__ volatile("" : "+r"(x));
        }
    }
    return x;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    int use_sigaction = argc > 2 && strcmp(argv[2], "sigaction") == 0;
    if (use_sigaction) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_prof;
        sa.sa_flags = SA_RESTART;
        sigaction(SIGPROF, &sa, NULL);
    } else {
        signal(SIGPROF, on_prof);
    }
    struct sigaction now;
    sigaction(SIGPROF, NULL, &now);
    int view_ok = now.sa_handler == on_prof;

    struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
    setitimer(ITIMER_PROF, &it, NULL);
    double start = process_cpu();
    volatile uint64_t sink = spin_until(start + secs);
    (void)sink;
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_PROF, &off, NULL);
    printf("ticks %d cpu_s %.3f\nview %s\n", (int)ticks, process_cpu() - start,
           view_ok ? "ok" : "wrong");
    return 0;
}
