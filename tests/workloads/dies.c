/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A program that burns CPU and then ends abruptly, to check what a profile keeps of a
 * process that never reaches its destructors:
 *   dies MODE SECONDS     MODE: exit, _exit, abort, segv, kill, or flush (prof_flush(),
 *                         then _exit(0): everything sampled must be in the file)
 * It burns SECONDS of CPU in burn(), prints "cpu_s X" (its one thread's CPU time just
 * before the end: the profiler's own threads are not the program's time)
 * on stdout, unbuffered, then calls exit(0), _exit(0), abort(), dereferences a null
 * pointer, or sends itself SIGKILL.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "include/libprof/prof.h"

#pragma weak prof_flush

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noipa)) static uint64_t burn(double secs)
{
    uint64_t x = 1;
    while (thread_cpu() < secs)
        for (int i = 0; i < 20000; i++) {
            x = x * 6364136223846793005ull + 1;
            __asm__ volatile("" : "+r"(x));
        }
    return x;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    volatile uint64_t sink = burn(atof(argv[2]));
    (void)sink;
    const char *mode = argv[1];
    if (strcmp(mode, "flush") == 0 && (!prof_flush || prof_flush() != 0))
        return 4;
    char line[64];
    int n = snprintf(line, sizeof(line), "cpu_s %.4f\n", thread_cpu());
    if (write(1, line, (size_t)n) != n)
        return 3;
    if (strcmp(mode, "exit") == 0)
        exit(0);
    if (strcmp(mode, "_exit") == 0 || strcmp(mode, "flush") == 0)
        _exit(0);
    if (strcmp(mode, "abort") == 0)
        abort();
    if (strcmp(mode, "segv") == 0)
        *(volatile int *)(uintptr_t)argc = 0; /* a small address: never mapped */
    if (strcmp(mode, "kill") == 0)
        kill(getpid(), SIGKILL);
    return 2;
}
