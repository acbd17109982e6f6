/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Processes whose last thread leaves by pthread_exit(): glibc then ends the process with
 * exit(0). For the end-to-end tests that the profiler's own thread never keeps such a
 * process alive.
 *
 *   lastthread main-exits   main starts a worker that spins in worker_work() for 0.3 s of
 *                           CPU time and returns, then calls pthread_exit()
 *   lastthread fork-thread  Python's test_3_join_in_forked_from_thread: a thread forks; in
 *                           the child it starts a thread, joins it and returns, which ends
 *                           the child through pthread_exit(); the parent waits for the
 *                           child (3 s at most), prints "child ended" or "child hung", and
 *                           exits 0 or 1
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

void *worker_work(void *arg);

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noipa)) void *worker_work(void *arg)
{
    double until = thread_cpu_s() + 0.3;
    while (thread_cpu_s() < until)
        for (int i = 0; i < 10000; i++)
            sink++;
    return arg;
}

static void *joiner(void *arg)
{
    (void)arg;
    return NULL;
}

static void *forking_thread(void *arg)
{
    (void)arg;
    pid_t p = fork();
    if (p == 0) {
        pthread_t t;
        pthread_create(&t, NULL, joiner, NULL);
        pthread_join(t, NULL);
        return NULL; /* the child's only thread ends: glibc exits the child with 0 */
    }
    int st = 0;
    for (int ms = 0; ms < 3000; ms++) {
        if (waitpid(p, &st, WNOHANG) == p) {
            printf("child ended %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
            return (void *)1;
        }
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
    }
    printf("child hung\n");
    kill(p, SIGKILL);
    waitpid(p, &st, 0);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t;
    if (argc > 1 && strcmp(argv[1], "main-exits") == 0) {
        pthread_create(&t, NULL, worker_work, NULL);
        pthread_exit(NULL);
    }
    if (argc > 1 && strcmp(argv[1], "fork-thread") == 0) {
        void *ok;
        pthread_create(&t, NULL, forking_thread, NULL);
        pthread_join(t, &ok);
        fflush(stdout);
        return ok ? 0 : 1;
    }
    fprintf(stderr, "usage: lastthread main-exits|fork-thread\n");
    return 2;
}
