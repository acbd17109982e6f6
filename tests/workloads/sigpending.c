/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A profiling signal left pending while the program has it blocked: for the end-to-end
 * tests that none ever meets a default action that terminates.
 *
 *   sigpending exec          blocks every signal, works 50 ms of CPU time (a tick of the
 *                            profiler's timer is pending then) and execs itself in mode
 *                            "unblock", which unblocks every signal and exits 0 (run with
 *                            PROF_FOLLOW=0, the exec'd image has no handler for it)
 *   sigpending itimer        SIGPROF's action is the default (terminate); it blocks
 *                            SIGPROF, works 50 ms (a tick of PROF_TIMER=itimer pending),
 *                            arms ITIMER_PROF for 10 s itself, unblocks SIGPROF, works 20
 *                            ms more, disarms and exits 0
 *
 * Prints "sigpending ok" before exiting 0.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static void burn_ms(int ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do {
        for (int i = 0; i < 10000; i++)
            sink++;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

static int run_unblock(void)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    burn_ms(10);
    puts("sigpending ok");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "unblock") == 0)
        return run_unblock();
    if (argc > 1 && strcmp(argv[1], "exec") == 0) {
        sigset_t all;
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        burn_ms(50);
        fflush(stdout);
        execl("/proc/self/exe", argv[0], "unblock", (char *)NULL);
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "itimer") == 0) {
        signal(SIGPROF, SIG_DFL);
        sigset_t prof;
        sigemptyset(&prof);
        sigaddset(&prof, SIGPROF);
        sigprocmask(SIG_BLOCK, &prof, NULL);
        burn_ms(50);
        struct itimerval it = {{10, 0}, {10, 0}}, off = {{0, 0}, {0, 0}};
        setitimer(ITIMER_PROF, &it, NULL);
        sigprocmask(SIG_UNBLOCK, &prof, NULL);
        burn_ms(20);
        setitimer(ITIMER_PROF, &off, NULL);
        puts("sigpending ok");
        return 0;
    }
    fprintf(stderr, "usage: sigpending exec|itimer\n");
    return 2;
}
