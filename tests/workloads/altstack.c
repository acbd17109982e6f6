/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * An application whose signal handler runs on an alternate signal stack (sigaltstack and
 * SA_ONSTACK) and burns CPU there: it raises SIGUSR1 in a loop, and the handler calls
 * on_alt_stack_work(), so most of the run's CPU time is spent on the alternate stack. A
 * profiler must walk that stack (it is not the thread's) and must not crash. Prints
 * "handled N".
 *   altstack [SECONDS]
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t handled;
static volatile uint64_t sink;

static double process_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noipa)) static void on_alt_stack_work(void)
{
    uint64_t x = sink;
    for (int i = 0; i < 200000; i++) {
        x = x * 6364136223846793005ull + 1;
        __asm__ volatile("" : "+r"(x));
    }
    sink = x;
}

__attribute__((noipa)) static void on_usr1(int sig)
{
    (void)sig;
    on_alt_stack_work();
    handled++;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    static char alt[64 * 1024];
    stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
    if (sigaltstack(&ss, NULL) != 0)
        return 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK | SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    double end = process_cpu() + secs;
    while (process_cpu() < end)
        raise(SIGUSR1);
    printf("handled %d\n", (int)handled);
    return 0;
}
