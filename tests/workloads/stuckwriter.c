/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A run whose profiler's writer thread cannot finish the profile at the end: for the
 * end-to-end test that the file still ends with its counters, and says what it lost.
 *
 *   stuckwriter SECONDS
 *
 * Lets a child process stop the thread named libprof-writer (ptrace, PTRACE_INTERRUPT:
 * the thread alone), then works SECONDS of CPU time in busy_while_stuck() (its samples
 * wait in the rings, never drained) and leaves by _exit(0), whose end the writer cannot
 * serve. Prints "stuckwriter stopped TID" when it stopped one, "stuckwriter alone" when
 * there is no writer thread; exits 77 when ptrace is refused.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

void busy_while_stuck(double seconds);

__attribute__((noipa)) void busy_while_stuck(double seconds)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    do {
        for (uint64_t i = 0; i < 1000000u; i++)
            sink += i;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}

/* The thread named libprof-writer, 0 when there is none. */
static long writer_tid(void)
{
    DIR *d = opendir("/proc/self/task");
    long found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d)) != NULL;) {
        char path[300], comm[32] = "";
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(comm, sizeof(comm), f) && strncmp(comm, "libprof-writer", 14) == 0)
            found = strtol(e->d_name, NULL, 10);
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return found;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0.3;
    long tid = writer_tid();
    if (tid == 0) {
        puts("stuckwriter alone");
        return 0;
    }
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    int done[2];
    if (pipe(done) != 0)
        return 1;
    pid_t child = fork();
    if (child == 0) {
        char ok = 1;
        if (ptrace(PTRACE_SEIZE, (pid_t)tid, 0, 0) != 0 ||
            ptrace(PTRACE_INTERRUPT, (pid_t)tid, 0, 0) != 0)
            ok = 0;
        int status;
        if (ok && waitpid((pid_t)tid, &status, __WALL) != (pid_t)tid)
            ok = 0;
        (void)!write(done[1], &ok, 1);
        /* Stays the tracer until the traced thread is gone with its process. */
        while (ok && waitpid((pid_t)tid, &status, __WALL) == (pid_t)tid && !WIFEXITED(status) &&
               !WIFSIGNALED(status))
            continue;
        _exit(0);
    }
    char ok = 0;
    if (read(done[0], &ok, 1) != 1 || !ok) {
        puts("stuckwriter: ptrace refused");
        return 77;
    }
    printf("stuckwriter stopped %ld\n", tid);
    fflush(stdout);
    busy_while_stuck(seconds);
    _exit(0);
}
