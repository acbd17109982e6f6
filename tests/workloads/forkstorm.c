/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Forks while other threads hold every lock they can: for the end-to-end tests of fork
 * under the profiler. Three threads spin, one loops dlopen()/dlclose() of a library this
 * program does not link (so that it is mapped and unmapped each time), and the main thread
 * forks N short-lived children, which work a little and leave by _exit() (exit() could
 * deadlock in glibc itself: dlclose() in another thread holds its atexit lock). A child
 * that has not ended within 3 s is counted as hung and killed.
 *
 *   forkstorm N [nodlopen]    prints "hung K of N" and exits 0 when K is 0, 1 otherwise
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HANG_MS 3000

static volatile int stop;
static volatile uint64_t sink;

static void *spinner(void *arg)
{
    while (!stop)
        sink++;
    return arg;
}

/* A library of the system that this program does not link. */
static const char *const libraries[] = {"libz.so.1", "libutil.so.1", "libm.so.6", NULL};

static void *opener(void *arg)
{
    const char *lib = NULL;
    for (int i = 0; libraries[i] && !lib; i++) {
        void *h = dlopen(libraries[i], RTLD_NOW);
        if (h) {
            lib = libraries[i];
            dlclose(h);
        }
    }
    while (!stop && lib) {
        void *h = dlopen(lib, RTLD_NOW);
        if (h)
            dlclose(h);
    }
    return arg;
}

/* Waits for child p; 1 when it ended within HANG_MS, else kills it and returns 0. */
static int ended(pid_t p)
{
    int st;
    for (int ms = 0; ms < HANG_MS; ms++) {
        if (waitpid(p, &st, WNOHANG) == p)
            return 1;
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
    }
    kill(p, SIGKILL);
    waitpid(p, &st, 0);
    return 0;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200;
    int with_dlopen = !(argc > 2 && strcmp(argv[2], "nodlopen") == 0);
    pthread_t t[4];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, spinner, NULL);
    if (with_dlopen)
        pthread_create(&t[3], NULL, opener, NULL);
    int hung = 0;
    for (int i = 0; i < n; i++) {
        pid_t p = fork();
        if (p == 0) {
            for (int k = 0; k < 200000; k++)
                sink++;
            _exit(0);
        }
        if (p < 0 || !ended(p))
            hung++;
    }
    stop = 1;
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    if (with_dlopen)
        pthread_join(t[3], NULL);
    printf("hung %d of %d\n", hung, n);
    return hung == 0 ? 0 : 1;
}
