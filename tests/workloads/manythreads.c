/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Thread churn: starts N short-lived threads (default 10000), eight at a time, each burning
 * a little CPU, and reports what the process holds before and after: open descriptors,
 * POSIX timers (/proc/self/timers) and resident memory (descriptors counted at rest).
 * Prints
 *   "fds B A timers B A rss_kb B A"
 * A profiler that leaks a timer, a descriptor or a buffer per thread shows up there.
 *   manythreads [N]
 */
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int count_fds_once(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n - 1; /* the directory's own descriptor */
}

/* The fewest of a few counts 20 ms apart: the profiler's writer opens a file for a moment
 * (the memory map it reads after new code, a library's unwind table it builds), which is
 * no leak; a leaked descriptor stays. */
static int count_fds(void)
{
    int least = count_fds_once();
    for (int i = 0; i < 5; i++) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
        int n = count_fds_once();
        least = n < least ? n : least;
    }
    return least;
}

static int count_timers(void)
{
    FILE *f = fopen("/proc/self/timers", "r");
    char line[256];
    int n = 0;
    while (f && fgets(line, sizeof(line), f))
        n += strncmp(line, "ID:", 3) == 0;
    if (f)
        fclose(f);
    return n;
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

__attribute__((noinline)) static void *short_life(void *arg)
{
    uint64_t x = (uintptr_t)arg;
    for (int i = 0; i < 20000; i++) {
        x = x * 6364136223846793005ull + 1;
        __asm__ volatile("" : "+r"(x));
    }
    return (void *)(uintptr_t)x;
}

static void churn(int n)
{
    for (int i = 0; i < n; i += 8) {
        pthread_t t[8];
        int k = n - i < 8 ? n - i : 8;
        for (int j = 0; j < k; j++)
            pthread_create(&t[j], NULL, short_life, (void *)(uintptr_t)(i + j));
        for (int j = 0; j < k; j++)
            pthread_join(t[j], NULL);
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10000;
    churn(64); /* let the thread stack cache and the allocator settle first */
    int fds0 = count_fds(), timers0 = count_timers();
    long rss0 = rss_kb();
    churn(n);
    printf("fds %d %d timers %d %d rss_kb %ld %ld\n", fds0, count_fds(), timers0, count_timers(),
           rss0, rss_kb());
    return 0;
}
