/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A daemon-like program: it closes every descriptor but 0-2 (the way daemons detach),
 * then, while burning CPU, keeps closing and reopening files of its own in DIR, so they
 * reuse the lowest free descriptor numbers (those a profiler might hold), and writes known
 * lines into them. At the end it checks that each file holds exactly what it wrote and
 * prints "ok" or "corrupt FILE".
 *   daemon DIR [SECONDS]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N_FILES 4

static double process_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t work(uint64_t x)
{
    for (int i = 0; i < 200000; i++) {
        x = x * 6364136223846793005ull + 1;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    double secs = argc > 2 ? atof(argv[2]) : 0.6;
    close_range(3, ~0u, 0);
    char path[N_FILES][512];
    long lines[N_FILES] = { 0 };
    for (int i = 0; i < N_FILES; i++) {
        snprintf(path[i], sizeof(path[i]), "%s/own%d.txt", argv[1], i);
        unlink(path[i]);
    }
    uint64_t x = 1;
    double end = process_cpu() + secs;
    for (long round = 0; process_cpu() < end; round++) {
        int i = (int)(round % N_FILES);
        int fd = open(path[i], O_WRONLY | O_CREAT | O_APPEND, 0644);
        x = work(x);
        char line[64];
        int len = snprintf(line, sizeof(line), "line %ld of file %d\n", lines[i], i);
        if (fd >= 0 && write(fd, line, (size_t)len) == len)
            lines[i]++;
        close(fd);
    }
    for (int i = 0; i < N_FILES; i++) {
        FILE *f = fopen(path[i], "r");
        char got[64], want[64];
        long n = 0;
        int bad = !f;
        while (f && fgets(got, sizeof(got), f)) {
            snprintf(want, sizeof(want), "line %ld of file %d\n", n, i);
            bad |= strcmp(got, want) != 0;
            n++;
        }
        if (f)
            fclose(f);
        if (bad || n != lines[i]) {
            printf("corrupt %s\n", path[i]);
            return 1;
        }
    }
    printf("ok\n");
    return (int)(x & 0); /* keeps x live */
}
