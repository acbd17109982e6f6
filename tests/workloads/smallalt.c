/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A program with a small alternate signal stack of its own (4 KiB, or the kernel's minimum
 * signal frame plus 1 KiB where that is more: AT_MINSIGSTKSZ) and a SA_ONSTACK handler
 * that uses it, as crash handlers do. Its main thread burns CPU three calls deep
 * (small_outer -> small_middle -> small_spin) and raises its signal now and then. Guard
 * words around the alternate stack must stay whole: a profiler's handler that ran on that
 * stack would overwrite the one below it. Prints "smallalt N guards intact" and exits 0,
 * or exits 3 when a guard changed.
 *   smallalt [SECONDS]
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>

#define GUARD_WORDS 4096
#define GUARD 0x5a5a5a5a5a5a5a5aull

static struct {
    uint64_t below[GUARD_WORDS];
    _Alignas(16) uint8_t stack[64 * 1024]; /* the part used is at its top: see main */
    uint64_t above[GUARD_WORDS];
} mem;
static volatile sig_atomic_t handled;
static volatile uint64_t sink;

static double process_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_usr1(int sig)
{
    (void)sig;
    handled++;
}

__attribute__((noipa)) static void small_spin(void)
{
    uint64_t x = sink;
    for (int i = 0; i < 200000; i++) {
        x = x * 6364136223846793005ull + 1;
        __asm__ volatile("" : "+r"(x));
    }
    sink = x;
}

__attribute__((noipa)) static void small_middle(void)
{
    small_spin();
    __asm__ volatile("" ::: "memory");
}

__attribute__((noipa)) static void small_outer(void)
{
    small_middle();
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    size_t size = 4096, min = (size_t)getauxval(AT_MINSIGSTKSZ) + 1024;
    if (size < min)
        size = (min + 4095) & ~(size_t)4095;
    /* The stack is the top `size` bytes of mem.stack; everything below it is guarded too. */
    uint8_t *lo = mem.stack + sizeof(mem.stack) - size;
    for (int i = 0; i < GUARD_WORDS; i++)
        mem.below[i] = mem.above[i] = GUARD;
    memset(mem.stack, 0x5a, sizeof(mem.stack) - size);
    stack_t ss = {.ss_sp = lo, .ss_size = size, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        perror("sigaltstack");
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK | SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    double end = process_cpu() + secs;
    long rounds = 0;
    while (process_cpu() < end) {
        small_outer();
        if (++rounds % 16 == 0)
            raise(SIGUSR1);
    }
    int intact = 1;
    for (int i = 0; i < GUARD_WORDS; i++)
        intact &= mem.below[i] == GUARD && mem.above[i] == GUARD;
    for (size_t i = 0; i < sizeof(mem.stack) - size; i++)
        intact &= mem.stack[i] == 0x5a;
    printf("smallalt %d guards %s\n", handled > 0, intact ? "intact" : "overwritten");
    return intact ? 0 : 3;
}
