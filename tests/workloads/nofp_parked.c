/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A thread parked several calls deep in code built without frame pointers, as most
 * distributions build theirs, for the end-to-end tests of `prof stacks --unwind`
 * (tests/e2e/test_stacks.c). The pragma below turns the Makefile's -fno-omit-frame-pointer
 * off for this file, as in tests/workloads/nofp.c, so %rbp (x29) is an ordinary register
 * here and the frame-pointer walk cannot follow these frames; libunwind can, from the
 * .eh_frame unwind tables the compiler still emits.
 *
 *   deep   in nofp_c(), called by nofp_b(), called by nofp_a(), called by the thread's
 *          start routine run_deep(): blocked in a futex wait issued in nofp_c() itself
 *   main   in nofp_wait_for_eof(), blocked reading standard input
 *
 * The blocking system calls are inline (`syscall`, `svc`), so that the leaf is the named
 * function and not a libc wrapper. Once both sleep in the kernel it prints
 *
 *   ready pid=123 main=123 deep=124
 *
 * and at end of input it wakes the thread, joins it, prints "done eintr=0" (the blocking
 * calls that failed with EINTR: none should) and exits 0, as tests/workloads/parked.c.
 */
#pragma GCC optimize("omit-frame-pointer")
#define _GNU_SOURCE /* pthread_setname_np, gettid */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#include "tests/workloads/raw_syscall.h"

void nofp_a(void);
void nofp_b(void);
void nofp_c(void);
void nofp_wait_for_eof(void);

static int stop_word;  /* 0 while parked; 1 tells the thread to return (futex word) */
static long n_eintr;   /* blocking calls that failed with EINTR (atomic) */
static pid_t deep_tid; /* written by the thread before it parks (atomic) */

#define IS_STOPPING() (__atomic_load_n(&stop_word, __ATOMIC_ACQUIRE) != 0)

/* Sleeps in a futex wait until the stop word is set. */
__attribute__((noinline)) void nofp_c(void)
{
    while (!IS_STOPPING()) {
        long r = RAW_SYSCALL4(SYS_futex, &stop_word, FUTEX_WAIT_PRIVATE, 0, NULL);
        if (r == -EINTR)
            __atomic_fetch_add(&n_eintr, 1, __ATOMIC_RELAXED);
    }
}

__attribute__((noinline)) void nofp_b(void)
{
    nofp_c();
    __asm__ volatile("" ::: "memory"); /* keeps the call from becoming a jump */
}

__attribute__((noinline)) void nofp_a(void)
{
    nofp_b();
    __asm__ volatile("" ::: "memory");
}

/* Reads standard input until it closes; the data itself is ignored. */
__attribute__((noinline)) void nofp_wait_for_eof(void)
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

static void *run_deep(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "deep");
    __atomic_store_n(&deep_tid, gettid(), __ATOMIC_RELEASE);
    nofp_a();
    return NULL;
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

int main(void)
{
    pthread_t deep;
    if (pthread_create(&deep, NULL, run_deep, NULL) != 0) {
        fprintf(stderr, "nofp_parked: pthread_create failed\n");
        return 1;
    }
    struct timespec tick = {0, 1000 * 1000};
    pid_t tid;
    while ((tid = __atomic_load_n(&deep_tid, __ATOMIC_ACQUIRE)) == 0 || thread_state(tid) != 'S')
        nanosleep(&tick, NULL);
    printf("ready pid=%d main=%d deep=%d\n", (int)getpid(), (int)gettid(), (int)tid);
    fflush(stdout);

    nofp_wait_for_eof();
    __atomic_store_n(&stop_word, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &stop_word, FUTEX_WAKE_PRIVATE, 1, NULL);
    pthread_join(deep, NULL);
    printf("done eintr=%ld\n", __atomic_load_n(&n_eintr, __ATOMIC_RELAXED));
    return 0;
}
