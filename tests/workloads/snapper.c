/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Workload for prof_snapshot(): threads parked in known functions, each named, then one
 * snapshot through the API into the file argv[2]. Threads:
 *   spinner  spins in park_spin()
 *   waiter   waits on a futex in park_wait(), a system call issued from park_wait()
 *            itself (glibc's wrappers keep no frame pointer); it counts EINTRs
 *   deep     spins in park_inner() under park_outer() -> park_middle()
 *   deaf     blocks the snapshot signal (SIGRTMAX-3) and spins in park_deaf()
 * Modes (argv[1]):
 *   api  take the snapshot, print "rc=R eintr=N", and exit 0
 *   own  first install an action of the application's own for SIGRTMAX-3 and send itself
 *        three with kill(): they must reach that action; then the snapshot, whose
 *        requests must not. Prints "rc=R eintr=N app_signals=K".
 * Built with frame pointers (WORK_CFLAGS); calls prof_snapshot only when it is there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#pragma weak prof_snapshot
int prof_snapshot(int fd);

static atomic_int stop;
static atomic_int parked;
static atomic_int eintrs;
static _Atomic uint32_t futex_word;
static atomic_int app_signals;

__attribute__((noinline)) static void park_spin(void)
{
    atomic_fetch_add(&parked, 1);
    while (!atomic_load_explicit(&stop, memory_order_relaxed))
        __asm__ volatile("" ::: "memory");
}

/* The futex system call from this function's own body. */
static long raw_futex_wait(_Atomic uint32_t *word, uint32_t val)
{
    long ret;
#if defined(__x86_64__)
    register long r10 __asm__("r10") = 0;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "0"((long)SYS_futex), "D"(word), "S"((long)FUTEX_WAIT), "d"((long)val),
                       "r"(r10)
                     : "rcx", "r11", "memory");
#else
    ret = syscall(SYS_futex, word, FUTEX_WAIT, val, NULL);
    if (ret < 0)
        ret = -errno;
#endif
    return ret;
}

__attribute__((noinline)) static void park_wait(void)
{
    atomic_fetch_add(&parked, 1);
    while (!atomic_load(&stop)) {
        long r = raw_futex_wait(&futex_word, 0);
        if (r == -EINTR)
            atomic_fetch_add(&eintrs, 1);
    }
}

__attribute__((noinline)) static void park_inner(void)
{
    park_spin();
}

__attribute__((noinline)) static void park_middle(void)
{
    park_inner();
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void park_outer(void)
{
    park_middle();
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void park_deaf(void)
{
    park_spin();
    __asm__ volatile("" ::: "memory");
}

static void *spinner(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "spinner");
    park_spin();
    return NULL;
}

static void *waiter(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "waiter");
    park_wait();
    return NULL;
}

static void *deep(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "deep");
    park_outer();
    return NULL;
}

static void *deaf(void *arg)
{
    (void)arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGRTMAX - 3);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    pthread_setname_np(pthread_self(), "deaf");
    park_deaf();
    return NULL;
}

static void on_app_signal(int sig, siginfo_t *info, void *uc)
{
    (void)sig;
    (void)info;
    (void)uc;
    atomic_fetch_add(&app_signals, 1);
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "api") != 0 && strcmp(argv[1], "own") != 0)) {
        fprintf(stderr, "usage: snapper api|own FILE\n");
        return 2;
    }
    int own = strcmp(argv[1], "own") == 0;
    if (own) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = on_app_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigaction(SIGRTMAX - 3, &sa, NULL);
        for (int i = 0; i < 3; i++)
            kill(getpid(), SIGRTMAX - 3);
    }
    void *(*fns[])(void *) = {spinner, waiter, deep, deaf};
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, fns[i], NULL);
    while (atomic_load(&parked) < 4)
        usleep(1000);
    usleep(20000); /* the waiter is in its futex wait by now */

    int rc = -2;
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0 && prof_snapshot) {
        rc = prof_snapshot(fd);
        close(fd);
    }
    atomic_store(&stop, 1);
    atomic_store(&futex_word, 1);
    syscall(SYS_futex, &futex_word, FUTEX_WAKE, 16, NULL, NULL, 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    if (own)
        printf("rc=%d eintr=%d app_signals=%d\n", rc, atomic_load(&eintrs),
               atomic_load(&app_signals));
    else
        printf("rc=%d eintr=%d\n", rc, atomic_load(&eintrs));
    return 0;
}
