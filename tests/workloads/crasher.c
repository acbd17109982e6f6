/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A program that crashes on purpose and prints its own backtrace from its SIGSEGV handler
 * with libprof's prof_backtrace_fd() (declared weak: the program also runs without
 * libprof, and then prints "no libprof"). The handler runs on an alternate signal stack,
 * as crash handlers do. main -> crash_outer -> crash_here, which writes through a null
 * pointer on the line marked CRASH LINE. The end-to-end test pipes the output through
 * `prof symbolize` and expects crash_here at that line, then its callers. With `nofp`, the
 * crash is in code built without frame pointers, after a moment of work there (so that
 * libprof samples it and builds the program's unwind table): main -> crash_nofp_outer,
 * which burns 0.3 s of CPU with %rbp cleared, -> crash_nofp_leaf, which has no frame at
 * all and writes through a null pointer on the line marked NOFP CRASH LINE.
 *
 *   crasher [nofp]   prints "backtrace:" then one frame per line on stdout, exits 3
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "include/libprof/prof.h"

#pragma weak prof_backtrace_fd

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    static const char head[] = "backtrace:\n", none[] = "no libprof\n";
    (void)sig;
    (void)si;
    (void)uc;
    if (prof_backtrace_fd) {
        write(1, head, sizeof(head) - 1);
        prof_backtrace_fd(1, 0);
    } else {
        write(1, none, sizeof(none) - 1);
    }
    _exit(3);
}

__attribute__((noipa)) void crash_here(volatile int *p);
__attribute__((noipa)) void crash_outer(volatile int *p);

__attribute__((noipa)) void crash_here(volatile int *p)
{
    *p = 42; /* CRASH LINE */
}

__attribute__((noipa)) void crash_outer(volatile int *p)
{
    crash_here(p);
    __asm__ volatile("" ::: "memory");
}

#define NOFP __attribute__((noipa, optimize("omit-frame-pointer")))

NOFP void crash_nofp_leaf(volatile int *p);
NOFP void crash_nofp_outer(volatile int *p);

NOFP void crash_nofp_leaf(volatile int *p)
{
    *p = 42; /* NOFP CRASH LINE */
}

NOFP void crash_nofp_outer(volatile int *p)
{
    struct timespec ts = {0, 0};
    volatile unsigned long spin = 0;
#if defined(__x86_64__)
    __asm__ volatile("xor %%ebp, %%ebp" ::: "rbp"); /* no frame pointer to follow */
#endif
    while (ts.tv_sec == 0 && ts.tv_nsec < 300000000) {
        for (int i = 0; i < 100000; i++)
            spin += (unsigned long)i;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    }
    crash_nofp_leaf(p);
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
    static char altstack[1 << 16];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack)};
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGSEGV, &sa, NULL) != 0)
        return 2;
    volatile int *volatile null = NULL;
    if (argc > 1 && strcmp(argv[1], "nofp") == 0)
        crash_nofp_outer(null);
    else
        crash_outer(null);
    return 0;
}
