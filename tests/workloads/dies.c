/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A program that burns CPU and then ends abruptly, to check what a profile keeps of a
 * process that never reaches its destructors:
 *   dies MODE SECONDS     MODE: exit, _exit, abort, segv, kill, or flush (prof_flush(),
 *                         then _exit(0): everything sampled must be in the file);
 *                         fork: a fork child burns SECONDS and leaves by _exit(0), the
 *                         parent prints "child PID" and waits for it;
 *                         vfork: after the burn, 200 vfork children leave by _exit(0) at
 *                         once, then exit(0);
 *                         handler: after the burn, a SIGALRM handler calls _exit(0) 20 ms
 *                         into a loop of malloc() and free()
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
#include <sys/time.h>
#include <sys/wait.h>
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

static void exit_now(int signo)
{
    (void)signo;
    _exit(0);
}

/* The modes in which something else leaves by _exit(). */
static int others(const char *mode, double seconds)
{
    if (strcmp(mode, "fork") == 0) {
        pid_t c = fork();
        if (c == 0) {
            volatile uint64_t sink = burn(seconds);
            (void)sink;
            char line[64];
            int n = snprintf(line, sizeof(line), "cpu_s %.4f\n", thread_cpu());
            if (write(1, line, (size_t)n) != n)
                _exit(3);
            _exit(0);
        }
        printf("child %d\n", (int)c);
        fflush(stdout);
        int st;
        return waitpid(c, &st, 0) == c && WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    }
    volatile uint64_t sink = burn(seconds);
    (void)sink;
    if (strcmp(mode, "vfork") == 0) {
        for (int i = 0; i < 200; i++) {
            pid_t c = vfork();
            if (c == 0)
                _exit(0);
            int st;
            if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                return 1;
        }
        exit(0);
    }
    signal(SIGALRM, exit_now);
    struct itimerval it = {{0, 0}, {0, 20000}};
    setitimer(ITIMER_REAL, &it, NULL);
    for (;;) {
        void *volatile p = malloc(1000 + (sink & 4095));
        free(p);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    if (strcmp(argv[1], "fork") == 0 || strcmp(argv[1], "vfork") == 0 ||
        strcmp(argv[1], "handler") == 0)
        return others(argv[1], atof(argv[2]));
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
