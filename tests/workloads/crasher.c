/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A program that crashes on purpose and prints its own backtrace from its SIGSEGV handler
 * with libprof's prof_backtrace_fd() (declared weak: the program also runs without
 * libprof, and then prints "no libprof"). The handler runs on an alternate signal stack,
 * as crash handlers do. main -> crash_outer -> crash_here, which writes through a null
 * pointer on the line marked CRASH LINE. The end-to-end test pipes the output through
 * `prof symbolize` and expects crash_here at that line, then its callers.
 *
 *   crasher    prints "backtrace:" then one frame per line on stdout, exits 3
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
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

int main(void)
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
    crash_outer(null);
    return 0;
}
