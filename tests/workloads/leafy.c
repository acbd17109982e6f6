/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A workload whose hot function has no frame of its own, at the end of a known 9-deep path:
 * main -> level_a -> ... -> level_f -> leaf_caller -> leaf_spin,
 * where leaf_spin calls nothing and needs no stack, so gcc 12 emits neither `push %rbp` nor
 * `mov %rsp,%rbp` for it even under -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
 * (`objdump -d` shows its first instruction is the loop setup). While it runs, %rbp still
 * points at leaf_caller's frame and the return address into leaf_caller is the word at
 * %rsp; a frame-pointer walk that ignores that word reports level_f -> leaf_spin, 8 of the
 * 9 frames. The end-to-end tests check that the profile has all 9.
 *
 *   leafy [SECONDS]    process CPU seconds to burn, 0.6 by default
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

uint64_t leaf_spin(uint64_t n_iters, uint64_t x);
uint64_t leaf_caller(uint64_t n_iters, uint64_t x);

/* No calls, no locals in memory: no frame. */
__attribute__((noipa)) uint64_t leaf_spin(uint64_t n_iters, uint64_t x)
{
    for (uint64_t i = 0; i < n_iters; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

__attribute__((noipa)) uint64_t leaf_caller(uint64_t n_iters, uint64_t x)
{
    return leaf_spin(n_iters, x) + 1;
}

/* Six framed levels between main and leaf_caller, each doing work after its call so that
 * none is a tail call. */
#define LEVEL(name, next)                                                                  \
    __attribute__((noipa)) static uint64_t name(uint64_t n_iters, uint64_t x)              \
    {                                                                                      \
        return next(n_iters, x) ^ 1;                                                       \
    }
LEVEL(level_f, leaf_caller)
LEVEL(level_e, level_f)
LEVEL(level_d, level_e)
LEVEL(level_c, level_d)
LEVEL(level_b, level_c)
LEVEL(level_a, level_b)

static double process_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? strtod(argv[1], NULL) : 0.6;
    if (!(seconds > 0.0) || argc > 2) {
        fprintf(stderr, "usage: leafy [SECONDS]\n");
        return 2;
    }
    uint64_t x = 0x9e3779b97f4a7c15ull;
    while (process_cpu_s() < seconds)
        x = level_a(1000000, x);
    sink = x;
    return 0;
}
