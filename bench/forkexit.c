/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A loop of fork() and _exit(): what a profiler costs a program that forks short-lived
 * children (shells, make, servers that fork per request), each child leaving at once.
 *
 *   forkexit N
 *
 * Forks N children one after another; each calls _exit(0) at once, and the parent waits
 * for it. Prints one line, "forkexit: N forks wall_us=W cpu_us=C", the wall time and the
 * CPU time of the parent and its children (user + system) per fork.
 * Exit status: 0; 1 when a fork fails; 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(struct timeval t)
{
    return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
    long n = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
    if (n <= 0) {
        fprintf(stderr, "usage: forkexit N\n");
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("forkexit: fork");
            return 1;
        }
        if (pid == 0)
            _exit(0);
        int status;
        waitpid(pid, &status, 0);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    double cpu = seconds(self.ru_utime) + seconds(self.ru_stime) + seconds(kids.ru_utime) +
                 seconds(kids.ru_stime);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("forkexit: %ld forks wall_us=%.1f cpu_us=%.1f\n", n, wall * 1e6 / (double)n,
           cpu * 1e6 / (double)n);
    return 0;
}
