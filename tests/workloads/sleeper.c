/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * One nanosleep() that a signal handler would cut short (it is never restarted, SA_RESTART
 * or not), for the end-to-end test that a snapshot of a process under libprof wakes none
 * of its threads (tests/e2e/test_snapshot.c). Prints "ready" when it is about to sleep,
 * then "slept" when the sleep ran its whole SECONDS, or "cut short" when it returned
 * early (EINTR), and exits 0.
 *   sleeper [SECONDS]      1.5 by default
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? strtod(argv[1], NULL) : 1.5;
    struct timespec ts = {.tv_sec = (time_t)seconds,
                          .tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9)};
    printf("ready\n");
    fflush(stdout);
    int rc = nanosleep(&ts, NULL);
    printf(rc == 0 ? "slept\n" : errno == EINTR ? "cut short\n" : "failed\n");
    return 0;
}
