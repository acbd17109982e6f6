/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A thread blocked inside the C library, for the end-to-end test of `prof stacks` on a
 * leaf without a frame pointer (tests/e2e/test_stacks.c): the thread "pauser" calls
 * wait_in_libc(), built with frame pointers, which calls libc's pause(), built without.
 * While pause() runs, %rbp still holds wait_in_libc()'s frame, so a frame-pointer walk
 * goes from pause() to wait_in_libc()'s caller and skips wait_in_libc() itself (its
 * return address is inside pause()'s frame, which keeps no frame pointer); the unwind
 * tables have it. Once the thread sleeps it prints
 *
 *   ready pid=123 pauser=124
 *
 * and at end of standard input prints "done eintr=0" (it makes no call that could see
 * EINTR; the line is what the tests' parked_finish() expects) and exits 0.
 */
#define _GNU_SOURCE /* pthread_setname_np, gettid */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile pid_t pauser_tid;

__attribute__((noinline)) void wait_in_libc(void);
__attribute__((noinline)) void wait_in_libc(void)
{
    for (;;)
        pause();
}

static void *run_pauser(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "pauser");
    pauser_tid = gettid();
    wait_in_libc();
    return NULL;
}

/* The kernel's state letter of thread tid of this process. */
static char state_of(pid_t tid)
{
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *close = strrchr(buf, ')');
    return close && close[1] == ' ' ? close[2] : 0;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, run_pauser, NULL) != 0)
        return 1;
    for (int i = 0; i < 5000 && (pauser_tid == 0 || state_of(pauser_tid) != 'S'); i++)
        usleep(1000);
    printf("ready pid=%d pauser=%d\n", (int)getpid(), (int)pauser_tid);
    fflush(stdout);
    char buf[64];
    while (read(0, buf, sizeof(buf)) > 0) {
    }
    printf("done eintr=0\n");
    return 0;
}
