/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Coroutines on small heap stacks, as green-thread and fiber libraries run them: 8
 * coroutines, each on a 16 KiB stack from malloc(), started by makecontext() and switched
 * round-robin by swapcontext() from main; each burns CPU three calls deep
 * (coro_entry -> coro_outer -> coro_middle -> coro_spin) and yields back to main between
 * rounds. A profiler's signal lands on these stacks almost every time: its walk must take
 * its bounds from the memory the stack pointer is in (no thread owns it) and reach the
 * coroutine's first frame, and its handler must not write its frames there. Prints
 * "coroutines N" (the rounds run) and exits 0.
 *   coroutines [SECONDS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>

#define N_CORO 8
#define STACK_BYTES (16 * 1024)

static ucontext_t main_ctx, coro_ctx[N_CORO];
static volatile uint64_t sink;
static volatile int done;

static double process_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noipa)) static void coro_spin(void)
{
    uint64_t x = sink;
    for (int i = 0; i < 300000; i++) {
        x = x * 6364136223846793005ull + 1;
        __asm__ volatile("" : "+r"(x));
    }
    sink = x;
}

__attribute__((noipa)) static void coro_middle(void)
{
    coro_spin();
    __asm__ volatile("" ::: "memory");
}

__attribute__((noipa)) static void coro_outer(void)
{
    coro_middle();
    __asm__ volatile("" ::: "memory");
}

__attribute__((noipa)) static void coro_entry(int id)
{
    while (!done) {
        coro_outer();
        swapcontext(&coro_ctx[id], &main_ctx);
    }
}

/* Coroutine i on a fresh heap stack; 0 or -1. */
__attribute__((noipa)) static int make_coro(int i)
{
    void *stack = malloc(STACK_BYTES);
    if (stack == NULL || getcontext(&coro_ctx[i]) != 0)
        return -1;
    coro_ctx[i].uc_stack.ss_sp = stack;
    coro_ctx[i].uc_stack.ss_size = STACK_BYTES;
    coro_ctx[i].uc_link = &main_ctx;
    makecontext(&coro_ctx[i], (void (*)(void))coro_entry, 1, i);
    return 0;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    for (int i = 0; i < N_CORO; i++)
        if (make_coro(i) != 0)
            return 1;
    double end = process_cpu() + secs;
    static volatile long rounds;
    static volatile int at;
    while (process_cpu() < end) {
        for (at = 0; at < N_CORO; at++)
            swapcontext(&main_ctx, &coro_ctx[at]);
        rounds++;
    }
    done = 1;
    for (at = 0; at < N_CORO; at++)
        swapcontext(&main_ctx, &coro_ctx[at]); /* each returns through uc_link */
    printf("coroutines %ld\n", (long)rounds);
    return 0;
}
