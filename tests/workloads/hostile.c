/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * An adversarial workload for the stack walk: while the profiler samples it, it keeps
 * garbage where the frame-pointer walk looks.
 *
 *   hostile fp SECONDS       spins with %rbp (x29) set to 0, small, odd, unmapped, kernel,
 *                            non-canonical and own-stack values (below sp, near the top,
 *                            a word pointing at itself, a two-word cycle)
 *   hostile saved SECONDS    spins with the saved frame pointers of its six callers'
 *                            frames overwritten by such values (restored before returning)
 *   hostile deep N SECONDS   recurses N frames deep on a thread with a 256 MB stack and
 *                            spins at the bottom
 *
 * The profile must be readable and the program must exit 0: the end-to-end test
 * (tests/e2e/test_hostile.c) checks both, and the depth limit on the deep run.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N_SAVED 6

static volatile uint64_t sink;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double process_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A value from one of the hostile classes; `self` is a word on this thread's stack. */
static uintptr_t hostile_value(uintptr_t *self, uintptr_t *pair)
{
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    switch (next_random() % 12) {
    case 0: return 0;
    case 1: return next_random() % 4096;                      /* small */
    case 2: return (uintptr_t)next_random() | 1u;              /* odd, anything */
    case 3: return UINT64_C(0x00007ff000000000) - 4096 * (next_random() % 64); /* unmapped */
    case 4: return UINT64_C(0xffffffff81000000) + (next_random() % 4096) * 8; /* kernel */
    case 5: return UINT64_C(0x8000000000000000) | (next_random() & ~7ull); /* non-canonical */
    case 6: return here - 64 - 8 * (next_random() % 64);      /* below sp */
    case 7: *self = (uintptr_t)self; return (uintptr_t)self;  /* points at itself */
    case 8:                                                    /* a two-word cycle */
        pair[0] = (uintptr_t)&pair[2];
        pair[2] = (uintptr_t)&pair[0];
        return (uintptr_t)&pair[0];
    case 9: return here + 8 * (next_random() % 4096);         /* above: maybe past the top */
    case 10: return here + 1 + (next_random() % 64);           /* misaligned stack address */
    default: return next_random();                              /* any 64 bits */
    }
}

/* Spins n iterations with the frame pointer register holding v (restored after). */
static void spin_with_fp(uintptr_t v, uint64_t n)
{
#if defined(__x86_64__)
    __asm__ volatile("mov %%rbp, %%r12\n\t"
                     "mov %0, %%rbp\n"
                     "1:\n\t"
                     "dec %1\n\t"
                     "jnz 1b\n\t"
                     "mov %%r12, %%rbp"
                     : "+r"(v), "+r"(n)
                     :
                     : "r12", "memory", "cc");
#elif defined(__aarch64__)
    __asm__ volatile("mov x19, x29\n\t"
                     "mov x29, %0\n"
                     "1:\n\t"
                     "subs %1, %1, #1\n\t"
                     "b.ne 1b\n\t"
                     "mov x29, x19"
                     : "+r"(v), "+r"(n)
                     :
                     : "x19", "memory", "cc");
#else
    (void)v;
    for (uint64_t i = 0; i < n; i++)
        sink += i;
#endif
}

__attribute__((noipa)) static void clobber_fp(double seconds)
{
    uintptr_t self[4], pair[4];
    while (process_cpu_s() < seconds)
        spin_with_fp(hostile_value(&self[0], pair), 20000);
}

/* At the bottom of a chain of frames: overwrites the saved frame pointers of the frames
 * above, spins, and restores them before anything returns. */
__attribute__((noipa)) static void clobber_saved_at_bottom(double seconds)
{
    uintptr_t *slots[N_SAVED];
    uintptr_t saved[N_SAVED];
    uintptr_t self[4], pair[4];
    uintptr_t *fp = __builtin_frame_address(0);
    for (int i = 0; i < N_SAVED; i++) {
        slots[i] = fp;
        saved[i] = *fp;
        fp = (uintptr_t *)*fp;
    }
    while (process_cpu_s() < seconds) {
        for (int i = 0; i < N_SAVED; i++)
            if (next_random() % 3 != 0)
                *(volatile uintptr_t *)slots[i] = hostile_value(&self[0], pair);
        for (volatile int k = 0; k < 20000; k++)
            sink += (uint64_t)k;
        for (int i = 0; i < N_SAVED; i++)
            *(volatile uintptr_t *)slots[i] = saved[i];
    }
}

__attribute__((noipa)) static void chain(int n, double seconds)
{
    if (n == 0)
        clobber_saved_at_bottom(seconds);
    else
        chain(n - 1, seconds);
    sink++;
}

struct deep_args {
    unsigned depth;
    double seconds;
};

__attribute__((noipa)) static uint64_t recurse(unsigned n, double seconds)
{
    if (n == 0) {
        uint64_t x = 0;
        while (process_cpu_s() < seconds)
            for (int k = 0; k < 100000; k++)
                x += (uint64_t)k * sink;
        return x;
    }
    return recurse(n - 1, seconds) + 1;
}

static void *deep_thread(void *arg)
{
    const struct deep_args *a = arg;
    sink = recurse(a->depth, a->seconds);
    return NULL;
}

static int run_deep(unsigned depth, double seconds)
{
    pthread_attr_t attr;
    pthread_t t;
    struct deep_args a = {.depth = depth, .seconds = seconds};
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)256 << 20);
    if (pthread_create(&t, &attr, deep_thread, &a) != 0) {
        fprintf(stderr, "hostile: pthread_create failed\n");
        return 1;
    }
    pthread_join(t, NULL);
    pthread_attr_destroy(&attr);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "fp") == 0) {
        clobber_fp(strtod(argv[2], NULL));
    } else if (argc == 3 && strcmp(argv[1], "saved") == 0) {
        chain(N_SAVED + 2, strtod(argv[2], NULL));
    } else if (argc == 4 && strcmp(argv[1], "deep") == 0) {
        return run_deep((unsigned)strtoul(argv[2], NULL, 10), strtod(argv[3], NULL));
    } else {
        fprintf(stderr, "usage: hostile fp SECONDS | saved SECONDS | deep N SECONDS\n");
        return 2;
    }
    return 0;
}
