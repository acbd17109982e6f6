/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the stack walk (sampler/walk.c) stepping by frame pointer on synthetic stacks: a good
 * chain, the trampoline root, and every way a chain can be wrong, none of which may make
 * the walk read outside the bounds it was given. */
#include <criterion/criterion.h>
#include <pthread.h>

#include "include/libprof/prof_format.h"
#include "sampler/walk.h"

/* The frame-pointer walk (PROF_UNWIND=fp) through smp_walk(). */
static unsigned walk_fp(const struct cmn_fp_regs *regs, const struct smp_stack *stack,
                        uint64_t *frames, unsigned max, uint8_t *why, uint8_t *flags)
{
    struct smp_walk_out o;
    unsigned n = smp_walk(regs, stack, frames, max, SMP_WALK_FP, &o);
    *why = o.stop_reason;
    *flags = o.flags;
    return n;
}

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
    struct cmn_fp_regs regs = { .pc = 0xaaaa, .sp = at(0), .fp = fp };
    struct smp_stack stack = { .lo = at(0), .hi = at(WORDS), .root_fp = root };
    uint8_t flags;
    return walk_fp(&regs, &stack, out, max, why, &flags);
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
    struct cmn_fp_regs regs = { .pc = 0xaaaa, .sp = at(40), .fp = at(10) };
    struct smp_stack stack = { .lo = at(0), .hi = at(WORDS) };
    good_chain();
    uint8_t flags;
    cr_assert_eq(walk_fp(&regs, &stack, f, 16, &why, &flags), 1);
    cr_assert_eq(why, PROF_STOP_ORDER, "a frame pointer below the stack pointer");
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
static uint8_t real_flags;

__attribute__((noinline, optimize("no-omit-frame-pointer"))) static void level3(void)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    pthread_getattr_np(pthread_self(), &attr);
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
    /* The pc is in the body, where the frame is set up (the entry would be a prologue). */
    uintptr_t pc;
#if defined(__x86_64__)
    __asm__ volatile("lea 0(%%rip), %0" : "=r"(pc));
#else
    __asm__ volatile("adr %0, ." : "=r"(pc));
#endif
    struct cmn_fp_regs regs = { .pc = pc, .sp = fp, .fp = fp };
    struct smp_stack stack = { .lo = (uintptr_t)addr, .hi = (uintptr_t)addr + size };
    real_n = walk_fp(&regs, &stack, real_frames, 16, &real_why, &real_flags);
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
    cr_assert_eq(real_flags, 0, "a leaf with its frame set up needs no recovery");
}

#if defined(__x86_64__)
/* The interrupted leaf: pc points at instruction bytes in these arrays (readable data, read
 * through the probe like code), sp at stk[0]. The frame pointer is the caller's frame at
 * stk[10] (good_chain), whose own return address is 0x1111. */
static const uint8_t code_ret[] = {0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc};
static const uint8_t code_push[] = {0x55, 0x48, 0x89, 0xe5, 0xcc, 0xcc, 0xcc, 0xcc};
static const uint8_t code_mov[] = {0x48, 0x89, 0xe5, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc};
static const uint8_t code_loop[] = {0x48, 0xff, 0xc8, 0x75, 0xfb, 0xcc, 0xcc, 0xcc};
/* A call rel32, then the instruction a return address points at (index 8). */
static const uint8_t code_call[] = {0xcc, 0xcc, 0xcc, 0xe8, 0, 0, 0, 0, 0x90, 0xcc};

static unsigned walk_leaf(const uint8_t *pc, unsigned max, uint64_t *out, uint8_t *why,
                          uint8_t *flags)
{
    struct cmn_fp_regs regs = { .pc = (uintptr_t)pc, .sp = at(0), .fp = at(10) };
    struct smp_stack stack = { .lo = at(0), .hi = at(WORDS) };
    return walk_fp(&regs, &stack, out, max, why, flags);
}

Test(walk_fp, at_ret_recovers_the_caller_from_the_word_at_sp)
{
    uint64_t f[16];
    uint8_t why, flags;
    good_chain();
    stk[0] = 0x4444;
    cr_assert_eq(walk_leaf(code_ret, 16, f, &why, &flags), 5);
    cr_assert_eq(why, PROF_STOP_END);
    cr_assert_eq(flags, PROF_SAMPLE_LEAF_CALLER);
    cr_assert_eq(f[1], 0x4444);
    cr_assert_eq(f[2], 0x1111);
}

Test(walk_fp, at_push_recovers_the_caller_from_the_word_at_sp)
{
    uint64_t f[16];
    uint8_t why, flags;
    good_chain();
    stk[0] = 0x4444;
    cr_assert_eq(walk_leaf(code_push, 16, f, &why, &flags), 5);
    cr_assert_eq(flags, PROF_SAMPLE_LEAF_CALLER);
    cr_assert_eq(f[1], 0x4444);
}

Test(walk_fp, after_push_recovers_the_caller_above_the_saved_frame_pointer)
{
    uint64_t f[16];
    uint8_t why, flags;
    good_chain();
    stk[0] = at(10); /* the pushed %rbp */
    stk[1] = 0x4444;
    cr_assert_eq(walk_leaf(code_mov, 16, f, &why, &flags), 5);
    cr_assert_eq(flags, PROF_SAMPLE_LEAF_CALLER);
    cr_assert_eq(f[1], 0x4444);
    cr_assert_eq(f[2], 0x1111);
}

Test(walk_fp, at_mov_without_the_pushed_frame_pointer_adds_nothing)
{
    uint64_t f[16];
    uint8_t why, flags;
    good_chain();
    stk[0] = 0x7777;
    stk[1] = 0x4444;
    cr_assert_eq(walk_leaf(code_mov, 16, f, &why, &flags), 4);
    cr_assert_eq(flags, 0);
    cr_assert_eq(f[1], 0x1111);
}

/* In a leaf's body the instruction bytes prove nothing: a word at sp that looks like a
 * return address (it follows a call) may be a stale one in a slot the leaf reserved and
 * never wrote, and is never taken for the leaf's caller; nor is the pair a pushed frame
 * pointer would leave. The reporter decides from the leaf's unwind information (sp_word). */
Test(walk_fp, a_leaf_in_its_body_never_takes_a_stack_word_for_its_caller)
{
    uint64_t f[16];
    uint8_t why, flags;
    good_chain();
    stk[0] = (uintptr_t)&code_call[8]; /* a stale return address at sp */
    cr_assert_eq(walk_leaf(code_loop, 16, f, &why, &flags), 4);
    cr_assert_eq(flags, 0);
    cr_assert_eq(f[1], 0x1111, "the chain's first return address, nothing before it");
    stk[0] = at(10); /* what push %rbp leaves, with a call site above it */
    stk[1] = (uintptr_t)&code_call[8];
    cr_assert_eq(walk_leaf(code_loop, 16, f, &why, &flags), 4);
    cr_assert_eq(flags, 0);
    stk[0] = 8; /* not readable: nothing faults either */
    cr_assert_eq(walk_leaf(code_loop, 16, f, &why, &flags), 4);
    cr_assert_eq(flags, 0);
}

Test(walk_fp, an_unreadable_pc_is_not_a_fault)
{
    uint64_t f[16];
    uint8_t why, flags;
    good_chain();
    stk[0] = 0x4444;
    cr_assert_eq(walk_leaf((const uint8_t *)8, 16, f, &why, &flags), 4);
    cr_assert_eq(flags, 0);
    cr_assert_eq(walk_leaf((const uint8_t *)UINT64_C(0xffffffff81000000), 16, f, &why,
                           &flags), 4);
}

Test(walk_fp, the_recovered_caller_counts_against_the_depth_limit)
{
    uint64_t f[16];
    uint8_t why, flags;
    good_chain();
    stk[0] = 0x4444;
    cr_assert_eq(walk_leaf(code_ret, 1, f, &why, &flags), 1);
    cr_assert_eq(flags, 0);
    cr_assert_eq(walk_leaf(code_ret, 2, f, &why, &flags), 2);
    cr_assert_eq(why, PROF_STOP_DEPTH);
    cr_assert_eq(f[1], 0x4444);
}
#endif

#if defined(__aarch64__)
#define INSN(w) (uint8_t)(w), (uint8_t)((w) >> 8), (uint8_t)((w) >> 16), (uint8_t)((w) >> 24)
/* The interrupted leaf on aarch64: the return address into the caller is in lr until the
 * frame record is set up, and again at `ret`. sp at stk[0], the caller's frame at stk[10]. */
static const uint8_t a64_ret[] = {INSN(0xd65f03c0u), INSN(0xd503201fu)};
static const uint8_t a64_stp[] = {INSN(0xa9bf7bfdu), INSN(0x910003fdu)};
static const uint8_t a64_loop[] = {INSN(0xf1000400u), INSN(0x54ffffe1u)}; /* subs; b.ne */
/* bl, then the instruction a return address points at (index 8). */
static const uint8_t a64_call[] = {INSN(0xd503201fu), INSN(0x94000010u), INSN(0xd503201fu)};

static unsigned walk_leaf_lr(const uint8_t *pc, uintptr_t lr, uint64_t *out, uint8_t *why,
                             uint8_t *flags)
{
    struct cmn_fp_regs regs = { .pc = (uintptr_t)pc, .sp = at(0), .fp = at(10), .lr = lr };
    struct smp_stack stack = { .lo = at(0), .hi = at(WORDS) };
    return walk_fp(&regs, &stack, out, 16, why, flags);
}

Test(walk_fp, aarch64_at_ret_and_stp_takes_the_caller_from_lr)
{
    uint64_t f[16];
    uint8_t why, flags;
    good_chain();
    cr_assert_eq(walk_leaf_lr(a64_ret, 0x4444, f, &why, &flags), 5);
    cr_assert_eq(flags, PROF_SAMPLE_LEAF_CALLER);
    cr_assert_eq(f[1], 0x4444);
    cr_assert_eq(f[2], 0x1111);
    cr_assert_eq(walk_leaf_lr(a64_stp, 0x4444, f, &why, &flags), 5);
    cr_assert_eq(f[1], 0x4444);
}

Test(walk_fp, aarch64_a_loop_after_stp_proves_no_caller_by_its_bytes)
{
    uint64_t f[16];
    uint8_t why, flags;
    uintptr_t ra = (uintptr_t)&a64_call[8];
    good_chain();
    /* stp x29, x30 stored the caller's frame and lr, and the leaf loops before mov x29,
     * sp: a pair of words equal to x29 and lr proves nothing (any function could hold
     * them there); only the leaf's unwind row would. */
    stk[0] = at(10);
    stk[1] = ra;
    cr_assert_eq(walk_leaf_lr(a64_loop, ra, f, &why, &flags), 4);
    cr_assert_eq(flags, 0);
    /* Without the saved pair, a stale lr is not trusted. */
    stk[0] = 0x7777;
    cr_assert_eq(walk_leaf_lr(a64_loop, ra, f, &why, &flags), 4);
    cr_assert_eq(flags, 0);
}
#endif
