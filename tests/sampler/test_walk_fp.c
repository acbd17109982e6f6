/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the frame-pointer stepper (sampler/walk_fp.c) on synthetic stacks: a good
 * chain, the trampoline root, and every way a chain can be wrong, none of which may make
 * the walk read outside the bounds it was given. */
#include <criterion/criterion.h>
#include <pthread.h>

#include "include/prof_format.h"
#include "sampler/walk_fp.h"

#define WORDS 256

static uintptr_t stk[WORDS] __attribute__((aligned(16)));

static uintptr_t at(unsigned word)
{
    return (uintptr_t)&stk[word];
}

/* A frame at word w: saved frame pointer, then return address. */
static void frame(unsigned w, uintptr_t next_fp, uintptr_t ret)
{
    stk[w] = next_fp;
    stk[w + 1] = ret;
}

static unsigned walk(uintptr_t fp, uintptr_t root, unsigned max, uint64_t *out, uint8_t *why)
{
    struct smp_regs regs = { .pc = 0xaaaa, .sp = at(0), .fp = fp };
    struct smp_stack stack = { .lo = at(0), .hi = at(WORDS), .root_fp = root };
    return smp_walk_fp(&regs, &stack, out, max, why);
}

static void good_chain(void)
{
    frame(10, at(20), 0x1111);
    frame(20, at(30), 0x2222);
    frame(30, 0, 0x3333);
}

Test(walk_fp, follows_a_good_chain_to_its_null_end)
{
    uint64_t f[16];
    uint8_t why;
    good_chain();
    cr_assert_eq(walk(at(10), 0, 16, f, &why), 4);
    cr_assert_eq(why, PROF_STOP_END);
    cr_assert_eq(f[0], 0xaaaa);
    cr_assert_eq(f[1], 0x1111);
    cr_assert_eq(f[2], 0x2222);
    cr_assert_eq(f[3], 0x3333);
}

Test(walk_fp, ends_complete_at_the_trampoline_without_its_frame)
{
    uint64_t f[16];
    uint8_t why;
    good_chain();
    cr_assert_eq(walk(at(10), at(30), 16, f, &why), 2, "0x2222 returns into the trampoline");
    cr_assert_eq(why, PROF_STOP_END);
    cr_assert_eq(f[1], 0x1111);
}

Test(walk_fp, leaf_inside_the_trampoline_keeps_its_pc)
{
    uint64_t f[16];
    uint8_t why;
    good_chain();
    cr_assert_eq(walk(at(30), at(30), 16, f, &why), 1);
    cr_assert_eq(why, PROF_STOP_END);
    cr_assert_eq(f[0], 0xaaaa);
}

Test(walk_fp, stops_at_a_cycle)
{
    uint64_t f[16];
    uint8_t why;
    good_chain();
    frame(30, at(10), 0x3333);
    cr_assert_eq(walk(at(10), 0, 16, f, &why), 4);
    cr_assert_eq(why, PROF_STOP_ORDER);
}

Test(walk_fp, stops_at_a_self_loop)
{
    uint64_t f[16];
    uint8_t why;
    frame(10, at(10), 0x1111);
    cr_assert_eq(walk(at(10), 0, 16, f, &why), 2);
    cr_assert_eq(why, PROF_STOP_ORDER);
}

Test(walk_fp, stops_at_a_misaligned_frame_pointer)
{
    uint64_t f[16];
    uint8_t why;
    good_chain();
    frame(20, at(30) + 3, 0x2222);
    cr_assert_eq(walk(at(10), 0, 16, f, &why), 3);
    cr_assert_eq(why, PROF_STOP_ALIGN);
}

Test(walk_fp, stops_at_a_frame_pointer_outside_the_stack)
{
    uint64_t f[16];
    uint8_t why;
    good_chain();
    frame(20, 0x10, 0x2222); /* unmapped: reading it would fault */
    cr_assert_eq(walk(at(10), 0, 16, f, &why), 3);
    cr_assert_eq(why, PROF_STOP_BOUNDS);
    frame(20, (uintptr_t)-16, 0x2222); /* kernel half */
    cr_assert_eq(walk(at(10), 0, 16, f, &why), 3);
    cr_assert_eq(why, PROF_STOP_BOUNDS);
}

Test(walk_fp, never_reads_the_last_word_past_the_top)
{
    uint64_t f[16];
    uint8_t why;
    frame(10, at(WORDS - 1), 0x1111); /* its return address would be at stk[WORDS] */
    cr_assert_eq(walk(at(10), 0, 16, f, &why), 2);
    cr_assert_eq(why, PROF_STOP_BOUNDS);
}

Test(walk_fp, never_reads_below_the_stack_pointer)
{
    uint64_t f[16];
    uint8_t why;
    struct smp_regs regs = { .pc = 0xaaaa, .sp = at(40), .fp = at(10) };
    struct smp_stack stack = { .lo = at(0), .hi = at(WORDS) };
    good_chain();
    cr_assert_eq(smp_walk_fp(&regs, &stack, f, 16, &why), 1);
    cr_assert_eq(why, PROF_STOP_BOUNDS);
}

Test(walk_fp, ends_at_a_zero_return_address)
{
    uint64_t f[16];
    uint8_t why;
    good_chain();
    frame(20, at(30), 0);
    cr_assert_eq(walk(at(10), 0, 16, f, &why), 2);
    cr_assert_eq(why, PROF_STOP_END);
}

Test(walk_fp, stops_at_the_depth_limit)
{
    uint64_t f[16];
    uint8_t why;
    good_chain();
    cr_assert_eq(walk(at(10), 0, 2, f, &why), 2);
    cr_assert_eq(why, PROF_STOP_DEPTH);
    cr_assert_eq(walk(at(10), 0, 1, f, &why), 1);
    cr_assert_eq(why, PROF_STOP_DEPTH);
}

Test(walk_fp, a_null_frame_pointer_gives_the_leaf_only)
{
    uint64_t f[16];
    uint8_t why;
    cr_assert_eq(walk(0, 0, 16, f, &why), 1);
    cr_assert_eq(why, PROF_STOP_END);
    cr_assert_eq(f[0], 0xaaaa);
}

/* A real chain: three nested calls built with frame pointers (the test objects are not
 * built with -fomit-frame-pointer, and -O2 keeps frame pointers where asked below). */
static uint64_t real_frames[16];
static unsigned real_n;
static uint8_t real_why;

__attribute__((noinline, optimize("no-omit-frame-pointer"))) static void level3(void)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    pthread_getattr_np(pthread_self(), &attr);
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
    struct smp_regs regs = { .pc = (uintptr_t)&level3, .sp = fp, .fp = fp };
    struct smp_stack stack = { .lo = (uintptr_t)addr, .hi = (uintptr_t)addr + size };
    real_n = smp_walk_fp(&regs, &stack, real_frames, 16, &real_why);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline, optimize("no-omit-frame-pointer"))) static void level2(void)
{
    level3();
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline, optimize("no-omit-frame-pointer"))) static void level1(void)
{
    level2();
    __asm__ volatile("" ::: "memory");
}

static int returns_into(uint64_t ret, void (*fn)(void))
{
    return ret > (uintptr_t)fn && ret < (uintptr_t)fn + 256;
}

Test(walk_fp, walks_a_real_call_chain)
{
    level1();
    cr_assert_geq(real_n, 3);
    cr_assert(returns_into(real_frames[1], level2), "level3 returns into level2");
    cr_assert(returns_into(real_frames[2], level1), "level2 returns into level1");
}
