/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The README's crash example: a program whose SIGSEGV handler writes the crashing thread's
 * stack with libprof's prof_backtrace_fd(), then exits 1, for `prof symbolize` to name.
 * prof_backtrace_fd is declared weak, so that the program runs without libprof as well
 * (run it under LD_PRELOAD or prof record to have the backtrace). The handler runs on an
 * alternate signal stack, as crash handlers do: the stack that overflowed may be the one
 * that crashed.
 *
 *   crash    parse_config -> read_field -> crash_here writes through a null pointer
 */
#include <libprof/prof.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#pragma weak prof_backtrace_fd

void crash_here(volatile int *field);
void read_field(volatile int *field);
void parse_config(volatile int *field);

static void on_segv(int sig)
{
    static const char head[] = "crash: SIGSEGV; backtrace:\n";
    static const char none[] = "crash: SIGSEGV (run under libprof for a backtrace)\n";
    (void)sig;
    if (prof_backtrace_fd) {
        (void)!write(2, head, sizeof(head) - 1);
        prof_backtrace_fd(2, 0);
    } else {
        (void)!write(2, none, sizeof(none) - 1);
    }
    _exit(1);
}

__attribute__((noipa)) void crash_here(volatile int *field)
{
    *field = 42; /* field is NULL: the crash */
}

__attribute__((noipa)) void read_field(volatile int *field)
{
    crash_here(field);
    __asm__ volatile("" ::: "memory"); /* keeps the call from becoming a jump */
}

__attribute__((noipa)) void parse_config(volatile int *field)
{
    read_field(field);
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    static char alt_stack[64 * 1024];
    stack_t ss = {.ss_sp = alt_stack, .ss_size = sizeof(alt_stack)};
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_segv;
    sa.sa_flags = SA_ONSTACK;
    sigaltstack(&ss, NULL);
    sigaction(SIGSEGV, &sa, NULL);
    parse_config(NULL);
    return 0;
}
