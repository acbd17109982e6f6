/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Threads parked in known functions, for the end-to-end tests of `prof stacks`
 * (tests/e2e/test_stacks.c). Each thread names itself and parks:
 *
 *   futex-a, futex-b  in park_in_futex(), blocked in a futex wait
 *   spinner           in park_spinning(), a busy loop that polls the stop word
 *   deep              in park_inner(), called by park_middle(), called by park_outer()
 *   blocker           (with --block-snapshot) blocks SIGRTMAX-3, libprof's default snapshot
 *                     signal, then parks in park_in_futex()
 *   main              in wait_for_eof(), blocked reading standard input
 *
 * The blocking system calls are issued with an inline `syscall` (`svc` on aarch64) inside
 * the named function itself: glibc's wrappers keep no frame pointer, so a thread blocked in
 * one of them would be caught outside the function that the test looks for. Built with
 * frame pointers (the Makefile's WORK_CFLAGS), so every frame pointer chain is intact.
 *
 * Once every thread is parked (the blocked ones asleep in the kernel, as /proc says), it
 * prints one line with the thread ids, then waits for standard input to close:
 *
 *   ready pid=123 main=123 futex-a=124 futex-b=125 spinner=126 deep=127 [blocker=128]
 *
 * At end of input it wakes every thread, joins them and prints, then exits 0:
 *
 *   done eintr=0
 *
 * eintr counts the blocking calls that failed with EINTR: none should, since a stop by a
 * tracer (or a signal whose handler has SA_RESTART) restarts them.
 *
 *   parked [--block-snapshot] [--ignore-snapshot]
 *
 * --ignore-snapshot catches SIGRTMAX-3 with a handler that does nothing (SA_RESTART) and
 * parks one more thread in park_in_futex(), named libprof-writer as libprof's writer
 * thread is (prof stacks sends its requests there): with a library named libprof.so
 * preloaded that is not libprof, it plays a libprof that never answers the snapshot
 * signal.
 */
#define _GNU_SOURCE /* pthread_setname_np, gettid */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#define MAX_PARKED 8

#include "tests/workloads/raw_syscall.h"

void park_in_futex(void);
void park_spinning(void);
void park_outer(void);
void park_middle(void);
void park_inner(void);
void wait_for_eof(void);

static int stop_word; /* 0 while parked; 1 tells every thread to return (futex word) */
static long n_eintr;  /* blocking calls that failed with EINTR (atomic) */
static int n_parked;  /* threads about to park (atomic) */
static volatile unsigned long n_spins; /* park_spinning's loops, so they are not optimized away */

struct parked {
    const char *name; /* the thread's name, also its key on the ready line */
    int is_blocked;   /* sleeps in the kernel when parked (all but the spinner) */
    void (*park)(void);
    pid_t tid; /* written by the thread before it counts itself parked */
};

/* A macro, not a function: an inlined function would be a frame of its own under
 * `prof stacks`, which names inlined functions. */
#define IS_STOPPING() (__atomic_load_n(&stop_word, __ATOMIC_ACQUIRE) != 0)

/* Sleeps in a futex wait until the stop word is set. */
__attribute__((noinline)) void park_in_futex(void)
{
    while (!IS_STOPPING()) {
        long r = RAW_SYSCALL4(SYS_futex, &stop_word, FUTEX_WAIT_PRIVATE, 0, NULL);
        if (r == -EINTR)
            __atomic_fetch_add(&n_eintr, 1, __ATOMIC_RELAXED);
    }
}

__attribute__((noinline)) void park_spinning(void)
{
    while (!IS_STOPPING())
        n_spins++;
}

/* The deep chain: the futex wait is issued in the innermost function itself. */
__attribute__((noinline)) void park_inner(void)
{
    while (!IS_STOPPING()) {
        long r = RAW_SYSCALL4(SYS_futex, &stop_word, FUTEX_WAIT_PRIVATE, 0, NULL);
        if (r == -EINTR)
            __atomic_fetch_add(&n_eintr, 1, __ATOMIC_RELAXED);
    }
}

__attribute__((noinline)) void park_middle(void)
{
    park_inner();
    __asm__ volatile("" ::: "memory"); /* keeps the call from becoming a jump */
}

__attribute__((noinline)) void park_outer(void)
{
    park_middle();
    __asm__ volatile("" ::: "memory");
}

/* Reads standard input until it closes; the data itself is ignored. */
__attribute__((noinline)) void wait_for_eof(void)
{
    char buf[256];
    for (;;) {
        long r = RAW_SYSCALL4(SYS_read, 0, buf, sizeof(buf), 0);
        if (r == -EINTR) {
            __atomic_fetch_add(&n_eintr, 1, __ATOMIC_RELAXED);
            continue;
        }
        if (r <= 0)
            return;
    }
}

static void *run_parked(void *arg)
{
    struct parked *t = arg;
    pthread_setname_np(pthread_self(), t->name);
    if (strcmp(t->name, "blocker") == 0) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGRTMAX - 3);
        pthread_sigmask(SIG_BLOCK, &set, NULL);
    }
    t->tid = gettid();
    __atomic_fetch_add(&n_parked, 1, __ATOMIC_RELEASE);
    t->park();
    return NULL;
}

static void ignore_signal(int sig)
{
    (void)sig;
}

/* The kernel's state letter of thread tid of this process, '?' when unreadable. */
static char thread_state(pid_t tid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
    FILE *f = fopen(path, "re");
    if (!f)
        return '?';
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')');
    return paren && paren[1] == ' ' ? paren[2] : '?';
}

/* Waits until every thread counted itself and every blocking one sleeps in the kernel. */
static void wait_parked(struct parked *threads, int n)
{
    struct timespec tick = {0, 1000 * 1000};
    while (__atomic_load_n(&n_parked, __ATOMIC_ACQUIRE) < n)
        nanosleep(&tick, NULL);
    for (int i = 0; i < n; i++)
        while (threads[i].is_blocked && thread_state(threads[i].tid) != 'S')
            nanosleep(&tick, NULL);
}

int main(int argc, char **argv)
{
    struct parked threads[MAX_PARKED] = {
        {"futex-a", 1, park_in_futex, 0}, {"futex-b", 1, park_in_futex, 0},
        {"spinner", 0, park_spinning, 0}, {"deep", 1, park_outer, 0},
        {"blocker", 1, park_in_futex, 0},
    };
    const struct parked writer = {"libprof-writer", 1, park_in_futex, 0};
    int n = 4;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--block-snapshot") == 0) {
            n = 5;
        } else if (strcmp(argv[i], "--ignore-snapshot") == 0) {
            struct sigaction sa = {.sa_handler = ignore_signal, .sa_flags = SA_RESTART};
            sigaction(SIGRTMAX - 3, &sa, NULL);
            threads[MAX_PARKED - 1] = writer;
        } else {
            fprintf(stderr, "usage: parked [--block-snapshot] [--ignore-snapshot]\n");
            return 2;
        }
    }
    if (threads[MAX_PARKED - 1].name != NULL)
        threads[n++] = threads[MAX_PARKED - 1];
    pthread_t handles[MAX_PARKED];
    for (int i = 0; i < n; i++) {
        if (pthread_create(&handles[i], NULL, run_parked, &threads[i]) != 0) {
            fprintf(stderr, "parked: pthread_create failed\n");
            return 1;
        }
    }
    wait_parked(threads, n);
    printf("ready pid=%d main=%d", (int)getpid(), (int)gettid());
    for (int i = 0; i < n; i++)
        printf(" %s=%d", threads[i].name, (int)threads[i].tid);
    printf("\n");
    fflush(stdout);

    wait_for_eof();
    __atomic_store_n(&stop_word, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &stop_word, FUTEX_WAKE_PRIVATE, MAX_PARKED, NULL);
    for (int i = 0; i < n; i++)
        pthread_join(handles[i], NULL);
    printf("done eintr=%ld\n", __atomic_load_n(&n_eintr, __ATOMIC_RELAXED));
    return 0;
}
