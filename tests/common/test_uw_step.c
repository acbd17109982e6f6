/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the walk by unwind tables (common/uw_step.h) on synthetic stacks and a
 * table written here: each frame is stepped by its row, the leaf's caller is exact where
 * the leaf has no frame or a stale return address lies at its stack pointer, signal frames
 * are crossed (to another stack too), the outermost frame and the entry trampoline end the
 * walk complete, and rows that cannot be followed, missing rows and bad stacks end it with
 * their reason. The frame layouts (return address at CFA - 8, frame pointer at CFA - 16)
 * are those of x86_64 and of aarch64's `stp x29, x30, [sp, #-16]!`; the link register's
 * case is aarch64's alone. Built for aarch64 too (make test-aarch64). */
#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>
#include <ucontext.h>

#include "common/uw_step.h"

#define WORDS 2048
#define OUTER 1500 /* the outermost frame's frame pointer, in words */
#define INTR 1000  /* the interrupted code's stack pointer when a signal frame is crossed */

static uintptr_t stk[WORDS] __attribute__((aligned(16)));
static uintptr_t alt[WORDS] __attribute__((aligned(16)));

/* The module: functions at link-time addresses, loaded with bias BIAS. */
#define BIAS 0x400000u
#define F_FRAMED 0x1000u   /* push fp; mov sp,fp: CFA = fp + 16 in its body */
#define F_FRAMELESS 0x1100u /* CFA = sp + 8, and sp + 16 after a `sub $8` at +0x10 */
#define F_START 0x1200u    /* the outermost frame */
#define F_SIGRET 0x1300u   /* the signal trampoline */
#define F_PLT 0x1400u
#define F_NOINFO 0x1500u   /* no row */
#define F_STOP 0x1600u     /* a rule not followed */
#define F_LR 0x1700u       /* aarch64 leaf: return address in the link register */
#define F_GOCGO 0x1780u    /* Go's asmcgocall: its C call at +0x10 (two bytes) */
#define CODE_END 0x1800u

static uint32_t pcs[24], rules[24];
static unsigned n_rows;
static struct cmn_uw_table *table;

static void row(uint32_t pc, uint32_t rule)
{
    pcs[n_rows] = pc;
    rules[n_rows++] = rule;
}

static void make_table(void)
{
    n_rows = 0;
    row(F_FRAMED, cmn_uw_rule(CMN_UW_CFA_SP, 0, 1, 1));
    row(F_FRAMED + 1, cmn_uw_rule(CMN_UW_CFA_SP, 2, 1, 2));
    row(F_FRAMED + 4, cmn_uw_rule(CMN_UW_CFA_FP, 2, 1, 2));
    row(F_FRAMELESS, cmn_uw_rule(CMN_UW_CFA_SP, 0, 1, 1));
    row(F_FRAMELESS + 0x10, cmn_uw_rule(CMN_UW_CFA_SP, 0, 1, 2));
    row(F_START, cmn_uw_rule(CMN_UW_END, 0, 0, 0));
    row(F_SIGRET, cmn_uw_rule(CMN_UW_SIGNAL, 63, 63, 0));
    row(F_PLT, cmn_uw_rule(CMN_UW_PLT, 0, 1, 11));
    row(F_NOINFO, 0);
    row(F_STOP, cmn_uw_rule(CMN_UW_STOP, 0, 0, 0));
    row(F_LR, cmn_uw_rule(CMN_UW_CFA_SP, 0, 0, 0));
    row(F_GOCGO, cmn_uw_rule(CMN_UW_STOP, 0, 0, 0));
    row(F_GOCGO + 0x10, cmn_uw_rule(CMN_UW_GO_CGO, 0, 0, 0));
    row(F_GOCGO + 0x12, cmn_uw_rule(CMN_UW_STOP, 0, 0, 0));
    row(CODE_END, 0);
    static uint64_t mem[512];
    cr_assert_lt(cmn_uw_table_bytes(n_rows, CODE_END), sizeof(mem));
    table = cmn_uw_table_layout(mem, 0, CODE_END, n_rows);
    memcpy((char *)table + table->pcs_at, pcs, n_rows * 4);
    memcpy((char *)table + table->rules_at, rules, n_rows * 4);
    cmn_uw_table_index(table);
}

static int stack_word(const struct cmn_fp_mem *m, uintptr_t addr, uintptr_t *out)
{
    (void)m;
    *out = *(const uintptr_t *)addr;
    return 1;
}

static int code(const struct cmn_fp_mem *m, uintptr_t addr, uint8_t *out, unsigned n)
{
    (void)m, (void)addr, (void)out, (void)n;
    return -1; /* no instruction bytes: they prove nothing */
}

static int is_code(const struct cmn_fp_mem *m, uintptr_t addr)
{
    (void)m;
    return addr >= BIAS && addr < BIAS + CODE_END;
}

static int with_tables = 1;
static const struct cmn_uw_table *get_table(const struct cmn_uw_mem *m, uintptr_t pc,
                                            uintptr_t *bias, unsigned *info)
{
    (void)m, (void)info;
    *bias = BIAS;
    return with_tables && pc >= BIAS && pc < BIAS + CODE_END ? table : NULL;
}

static int other_stack(const struct cmn_uw_mem *m, uintptr_t sp, uintptr_t *lo, uintptr_t *hi)
{
    (void)m;
    if (sp < (uintptr_t)stk || sp >= (uintptr_t)(stk + WORDS))
        return 0;
    *lo = (uintptr_t)stk;
    *hi = (uintptr_t)(stk + WORDS);
    return 1;
}

static const struct cmn_uw_mem mem = {{stack_word, code, is_code}, get_table, other_stack, NULL};

static uintptr_t at(unsigned w)
{
    return (uintptr_t)&stk[w];
}

static uintptr_t pc_of(uint32_t link)
{
    return BIAS + link;
}

static struct cmn_uw_walk walk_from(uintptr_t pc, uintptr_t sp, uintptr_t fp, uintptr_t lr,
                                    uint64_t *frames, unsigned max)
{
    make_table();
    struct cmn_fp_regs regs = {.pc = pc, .sp = sp, .fp = fp, .lr = lr};
    struct cmn_uw_walk w = {.lo = (uintptr_t)stk, .hi = (uintptr_t)(stk + WORDS),
                            .frames = frames, .max_frames = max};
    unsigned n = cmn_uw_walk(&mem, &regs, &w);
    w.max_frames = n; /* the count, for the tests */
    return w;
}

/* main-like outermost frame: a framed function called from F_START, its frame at word
 * OUTER (fp), its CFA two words above. */
static void outer_frames(void)
{
    stk[OUTER] = 0;                      /* saved fp of the outermost frame */
    stk[OUTER + 1] = pc_of(F_START + 5); /* return into the start code */
}

Test(uw_step, a_frameless_leaf_then_a_framed_caller_reach_the_outermost_frame)
{
    uint64_t f[16];
    outer_frames();
    stk[40] = pc_of(F_FRAMED + 0x20); /* the leaf's return address, at its sp */
    struct cmn_uw_walk w = walk_from(pc_of(F_FRAMELESS + 4), at(40), at(OUTER), 0, f, 16);
    cr_assert_eq(w.max_frames, 3);
    cr_assert_eq(f[0], pc_of(F_FRAMELESS + 4));
    cr_assert_eq(f[1], pc_of(F_FRAMED + 0x20));
    cr_assert_eq(f[2], pc_of(F_START + 5));
    cr_assert_eq(w.stop_reason, PROF_STOP_END);
    cr_assert_eq(w.n_by_table, 3);
    cr_assert_eq(w.n_by_fp, 0);
}

Test(uw_step, a_stale_return_address_in_an_unwritten_slot_never_becomes_a_caller)
{
    uint64_t f[16];
    outer_frames();
    /* After `sub $8, %rsp` the slot at sp was never written: it holds a return address
     * into F_FRAMED left there by an earlier call. The row says the return address is at
     * sp + 8. */
    stk[40] = pc_of(F_FRAMED + 0x30);
    stk[41] = pc_of(F_FRAMED + 0x20);
    struct cmn_uw_walk w = walk_from(pc_of(F_FRAMELESS + 0x14), at(40), at(OUTER), 0, f, 16);
    cr_assert_eq(w.max_frames, 3);
    cr_assert_eq(f[1], pc_of(F_FRAMED + 0x20));
    for (unsigned i = 0; i < w.max_frames; i++)
        cr_assert_neq(f[i], pc_of(F_FRAMED + 0x30), "the stale word became frame %u", i);
}

Test(uw_step, a_leaf_in_its_prologue_keeps_its_caller)
{
    uint64_t f[16];
    outer_frames();
    /* At F_FRAMED + 1: fp pushed (at sp), return address above it; fp is still the
     * caller's. */
    stk[38] = at(OUTER);
    stk[39] = pc_of(F_FRAMED + 0x20);
    struct cmn_uw_walk w = walk_from(pc_of(F_FRAMED + 1), at(38), at(OUTER), 0, f, 16);
    cr_assert_eq(w.max_frames, 3);
    cr_assert_eq(f[1], pc_of(F_FRAMED + 0x20));
    cr_assert_eq(f[2], pc_of(F_START + 5));
    cr_assert_eq(w.stop_reason, PROF_STOP_END);
}

Test(uw_step, the_entry_trampolines_frame_ends_the_walk_without_its_own)
{
    uint64_t f[16];
    outer_frames();
    stk[40] = pc_of(F_FRAMED + 0x20);
    make_table();
    struct cmn_fp_regs regs = {.pc = pc_of(F_FRAMELESS + 4), .sp = at(40), .fp = at(OUTER)};
    struct cmn_uw_walk w = {.lo = at(0), .hi = at(WORDS), .root_fp = at(OUTER), .frames = f,
                            .max_frames = 16};
    cr_assert_eq(cmn_uw_walk(&mem, &regs, &w), 1, "F_FRAMED's frame is the trampoline's");
    cr_assert_eq(w.stop_reason, PROF_STOP_END);
}

Test(uw_step, a_signal_frame_is_crossed_to_the_interrupted_code)
{
    uint64_t f[16];
    outer_frames();
    /* The handler (frameless leaf at word 20) returns into the trampoline; the kernel's
     * ucontext lies at the trampoline's sp; the interrupted code was F_FRAMELESS at word
     * INTR, with the return address into F_FRAMED at its sp. */
    stk[20] = pc_of(F_SIGRET + 1);
    ucontext_t *uc = (ucontext_t *)arch_sigframe_uc_at(at(21));
    cr_assert_lt((uintptr_t)uc + sizeof(*uc), at(INTR));
    memset(uc, 0, sizeof(*uc));
    *(uintptr_t *)((char *)uc + ARCH_UC_PC_OFF) = pc_of(F_FRAMELESS + 4);
    *(uintptr_t *)((char *)uc + ARCH_UC_SP_OFF) = at(INTR);
    *(uintptr_t *)((char *)uc + ARCH_UC_FP_OFF) = at(OUTER);
    stk[INTR] = pc_of(F_FRAMED + 0x20);
    struct cmn_uw_walk w = walk_from(pc_of(F_FRAMELESS + 4), at(20), at(OUTER), 0, f, 16);
    cr_assert_eq(w.max_frames, 5);
    cr_assert_eq(f[1], pc_of(F_SIGRET + 1));
    cr_assert_eq(f[2], pc_of(F_FRAMELESS + 4), "the interrupted pc, exact");
    cr_assert_eq(f[3], pc_of(F_FRAMED + 0x20));
    cr_assert_eq(f[4], pc_of(F_START + 5));
    cr_assert_eq(w.stop_reason, PROF_STOP_END);
}

Test(uw_step, a_signal_frame_on_the_alternate_stack_leads_back_to_the_thread_stack)
{
    uint64_t f[16];
    outer_frames();
    alt[20] = pc_of(F_SIGRET + 1);
    ucontext_t *uc = (ucontext_t *)arch_sigframe_uc_at((uintptr_t)&alt[21]);
    memset(uc, 0, sizeof(*uc));
    *(uintptr_t *)((char *)uc + ARCH_UC_PC_OFF) = pc_of(F_FRAMELESS + 4);
    *(uintptr_t *)((char *)uc + ARCH_UC_SP_OFF) = at(INTR);
    *(uintptr_t *)((char *)uc + ARCH_UC_FP_OFF) = at(OUTER);
    stk[INTR] = pc_of(F_FRAMED + 0x20);
    make_table();
    struct cmn_fp_regs regs = {.pc = pc_of(F_FRAMELESS + 4), .sp = (uintptr_t)&alt[20], .fp = at(OUTER)};
    struct cmn_uw_walk w = {.lo = (uintptr_t)alt, .hi = (uintptr_t)(alt + WORDS),
                            .frames = f, .max_frames = 16};
    cr_assert_eq(cmn_uw_walk(&mem, &regs, &w), 5);
    cr_assert_eq(f[4], pc_of(F_START + 5));
    cr_assert_eq(w.stop_reason, PROF_STOP_END);
}

Test(uw_step, rows_it_cannot_follow_end_the_walk_with_a_reason)
{
    uint64_t f[16];
    outer_frames();
    stk[40] = pc_of(F_STOP + 8);
    struct cmn_uw_walk w = walk_from(pc_of(F_FRAMELESS + 4), at(40), at(OUTER), 0, f, 16);
    cr_assert_eq(w.max_frames, 2);
    cr_assert_eq(w.stop_reason, PROF_STOP_RULE);
}

Test(uw_step, without_a_row_it_steps_by_frame_pointer_unless_told_not_to)
{
    uint64_t f[16];
    outer_frames();
    /* F_NOINFO keeps a frame pointer: its frame at word 50, called from F_FRAMED. */
    stk[50] = at(OUTER);
    stk[51] = pc_of(F_FRAMED + 0x20);
    stk[40] = pc_of(F_NOINFO + 0x10);
    struct cmn_uw_walk w = walk_from(pc_of(F_FRAMELESS + 4), at(40), at(50), 0, f, 16);
    cr_assert_eq(w.max_frames, 4);
    cr_assert_eq(f[2], pc_of(F_FRAMED + 0x20));
    cr_assert_eq(f[3], pc_of(F_START + 5));
    cr_assert_eq(w.n_by_fp, 1);
    make_table();
    struct cmn_fp_regs regs = {.pc = pc_of(F_FRAMELESS + 4), .sp = at(40), .fp = at(50)};
    struct cmn_uw_walk only = {.lo = at(0), .hi = at(WORDS), .frames = f, .max_frames = 16,
                               .tables_only = 1};
    cr_assert_eq(cmn_uw_walk(&mem, &regs, &only), 2);
    cr_assert_eq(only.stop_reason, PROF_STOP_NO_INFO);
}

Test(uw_step, a_module_without_a_table_is_walked_by_frame_pointer)
{
    uint64_t f[16];
    outer_frames();
    stk[50] = at(OUTER);
    stk[51] = pc_of(F_FRAMED + 0x20);
    with_tables = 0;
    struct cmn_uw_walk w = walk_from(pc_of(F_FRAMED + 0x40), at(45), at(50), 0, f, 16);
    with_tables = 1;
    cr_assert_eq(w.max_frames, 3);
    cr_assert_eq(f[1], pc_of(F_FRAMED + 0x20));
    cr_assert_eq(f[2], pc_of(F_START + 5));
    cr_assert_eq(w.n_by_table, 0);
}

Test(uw_step, bad_stacks_stop_the_walk_inside_the_bounds)
{
    uint64_t f[16];
    /* A return address outside the code. */
    stk[40] = 0x1234;
    struct cmn_uw_walk w = walk_from(pc_of(F_FRAMELESS + 4), at(40), 0, 0, f, 16);
    cr_assert_eq(w.max_frames, 1);
    cr_assert_eq(w.stop_reason, PROF_STOP_CODE);
    /* A CFA past the top of the stack. */
    w = walk_from(pc_of(F_FRAMELESS + 0x14), at(WORDS - 1), 0, 0, f, 16);
    cr_assert_eq(w.stop_reason, PROF_STOP_BOUNDS);
    /* A frame pointer below the stack pointer (a CFA from it would go down). */
    w = walk_from(pc_of(F_FRAMED + 0x20), at(40), at(10), 0, f, 16);
    cr_assert_eq(w.stop_reason, PROF_STOP_ORDER);
    /* Depth. */
    outer_frames();
    stk[40] = pc_of(F_FRAMED + 0x20);
    w = walk_from(pc_of(F_FRAMELESS + 4), at(40), at(OUTER), 0, f, 2);
    cr_assert_eq(w.max_frames, 2);
    cr_assert_eq(w.stop_reason, PROF_STOP_DEPTH);
}

#if defined(__x86_64__)
Test(uw_step, a_plt_entry_uses_the_linkers_rule)
{
    uint64_t f[16];
    outer_frames();
    /* Before the entry's push (offset < 11): the return address at sp; after it, at
     * sp + 8. */
    stk[40] = pc_of(F_FRAMED + 0x20);
    struct cmn_uw_walk w = walk_from(pc_of(F_PLT + 0x16), at(40), at(OUTER), 0, f, 16);
    cr_assert_eq(w.max_frames, 3);
    cr_assert_eq(f[1], pc_of(F_FRAMED + 0x20));
    stk[39] = 0x77;
    w = walk_from(pc_of(F_PLT + 0x1b), at(39), at(OUTER), 0, f, 16);
    cr_assert_eq(w.max_frames, 3);
    cr_assert_eq(f[1], pc_of(F_FRAMED + 0x20));
}
#endif

#if defined(__aarch64__)
Test(uw_step, an_aarch64_leaf_returns_through_its_link_register_only_at_the_leaf)
{
    uint64_t f[16];
    outer_frames();
    struct cmn_uw_walk w = walk_from(pc_of(F_LR + 8), at(40), at(OUTER), pc_of(F_FRAMED + 0x20),
                                     f, 16);
    cr_assert_eq(w.max_frames, 3);
    cr_assert_eq(f[1], pc_of(F_FRAMED + 0x20));
    /* A caller's row that says "in the link register" cannot be followed. */
    stk[40] = pc_of(F_LR + 0x10);
    w = walk_from(pc_of(F_FRAMELESS + 4), at(40), at(OUTER), 0, f, 16);
    cr_assert_eq(w.stop_reason, PROF_STOP_RULE);
}
#endif

/* A chain of n framed calls below the outermost frame: frame i (0 the innermost) at word
 * 100 + 4 i, each returning into F_FRAMED + i + 0x20 of the next. */
static void framed_chain(unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        unsigned w = 100 + 4 * i;
        stk[w] = i + 1 < n ? at(w + 4) : at(OUTER);
        stk[w + 1] = pc_of(F_FRAMED + 0x21 + (i + 1 < n ? i + 1 : 0x3f));
    }
    outer_frames();
}

Test(uw_step, a_deep_stack_keeps_both_ends_and_counts_what_it_leaves_out)
{
    uint64_t f[20];
    framed_chain(100);
    make_table();
    struct cmn_fp_regs regs = {.pc = pc_of(F_FRAMED + 0x20), .sp = at(90), .fp = at(100)};
    struct cmn_uw_walk w = {.lo = at(0), .hi = at(WORDS), .frames = f, .max_frames = 20,
                            .keep_outer = 5, .walk_cap = 10000};
    cr_assert_eq(cmn_uw_walk(&mem, &regs, &w), 20);
    cr_assert_eq(w.stop_reason, PROF_STOP_END);
    cr_assert(w.flags & PROF_SAMPLE_ELIDED);
    /* 102 frames: the leaf, 100 returns into F_FRAMED, the start code. */
    cr_assert_eq(w.n_elided, 102 - 14 - 5);
    cr_assert_eq(f[14], PROF_FRAME_ELIDED | (102 - 14 - 5));
    for (unsigned i = 1; i < 14; i++)
        cr_assert_eq(f[i], pc_of(F_FRAMED + 0x21 + i), "inner frame %u", i);
    for (unsigned k = 0; k < 3; k++) /* the outermost ones, in order */
        cr_assert_eq(f[15 + k], pc_of(F_FRAMED + 0x21 + 97 + k), "outer frame %u", k);
    cr_assert_eq(f[18], pc_of(F_FRAMED + 0x21 + 0x3f), "the outermost framed call");
    cr_assert_eq(f[19], pc_of(F_START + 5));
}

Test(uw_step, the_trampolines_frame_never_takes_a_place_among_the_outer_ones)
{
    uint64_t f[20];
    framed_chain(100);
    make_table();
    /* The outermost framed call's frame (at OUTER) is the trampoline's. */
    struct cmn_fp_regs regs = {.pc = pc_of(F_FRAMED + 0x20), .sp = at(90), .fp = at(100)};
    struct cmn_uw_walk w = {.lo = at(0), .hi = at(WORDS), .root_fp = at(OUTER), .frames = f,
                            .max_frames = 20, .keep_outer = 5, .walk_cap = 10000};
    cr_assert_eq(cmn_uw_walk(&mem, &regs, &w), 20);
    cr_assert_eq(w.stop_reason, PROF_STOP_END);
    for (unsigned k = 0; k < 5; k++)
        cr_assert_eq(f[15 + k], pc_of(F_FRAMED + 0x21 + 95 + k), "outer frame %u", k);
}

Test(uw_step, past_the_walk_cap_the_stack_is_cut_with_the_depth_reason)
{
    uint64_t f[20];
    framed_chain(100);
    make_table();
    struct cmn_fp_regs regs = {.pc = pc_of(F_FRAMED + 0x20), .sp = at(90), .fp = at(100)};
    struct cmn_uw_walk w = {.lo = at(0), .hi = at(WORDS), .frames = f, .max_frames = 20,
                            .keep_outer = 5, .walk_cap = 50};
    cr_assert_eq(cmn_uw_walk(&mem, &regs, &w), 20);
    cr_assert_eq(w.stop_reason, PROF_STOP_DEPTH);
    cr_assert_eq(w.n_elided, 50 - 14 - 5);
}

/* The C library's clone() code, for the tests of each architecture below: instruction
 * bytes written into clone_code, read at BIAS. */
static uint8_t clone_code[CODE_END];

static int clone_bytes(const struct cmn_fp_mem *m, uintptr_t addr, uint8_t *out, unsigned n)
{
    (void)m;
    if (addr < BIAS || addr - BIAS > CODE_END - n)
        return -1;
    memcpy(out, clone_code + (addr - BIAS), n);
    return 0;
}

static const struct cmn_uw_mem clone_mem = {{stack_word, clone_bytes, is_code}, get_table,
                                            other_stack, NULL};

#if defined(__x86_64__)
/* The C library's clone() tail (arch/x86_64.h): at the instruction after the system call,
 * where glibc's unwind information has ended, the return register tells the thread that
 * called from the new one. The code: the tail at F_NOINFO + 0x10, its error path 0x18
 * bytes on. */
static struct cmn_uw_walk walk_clone(uintptr_t ret, int ret_known, uint64_t *frames)
{
    static const uint8_t tail[] = {0x48, 0x85, 0xc0, 0x7c, 0x13, 0x74, 0x01, 0xc3};
    static const uint8_t err[] = {0x48, 0x8b, 0x0d, 0x11, 0x22, 0x33, 0x44, 0xf7, 0xd8,
                                  0x64, 0x89, 0x01, 0x48, 0x83, 0xc8, 0xff, 0xc3};
    memcpy(clone_code + F_NOINFO + 0x10, tail, sizeof(tail));
    memcpy(clone_code + F_NOINFO + 0x28, err, sizeof(err));
    make_table();
    stk[40] = pc_of(F_START + 8); /* the caller's return address, at sp */
    struct cmn_fp_regs regs = {.pc = pc_of(F_NOINFO + 0x10), .sp = at(40), .fp = 1,
                               .ret = ret, .ret_known = ret_known};
    struct cmn_uw_walk w = {.lo = at(0), .hi = at(WORDS), .frames = frames, .max_frames = 8};
    w.max_frames = cmn_uw_walk(&clone_mem, &regs, &w);
    return w;
}

Test(uw_step, the_caller_of_clone_returns_by_the_word_at_sp)
{
    uint64_t f[8];
    struct cmn_uw_walk w = walk_clone(4242, 1, f); /* the new thread's id */
    cr_assert_eq(w.max_frames, 2);
    cr_assert_eq(f[1], pc_of(F_START + 8));
    cr_assert_eq(w.stop_reason, PROF_STOP_END);
    w = walk_clone((uintptr_t)-11, 1, f); /* -EAGAIN: the error path returns alike */
    cr_assert_eq(w.max_frames, 2);
    cr_assert_eq(f[1], pc_of(F_START + 8));
}

Test(uw_step, a_new_thread_in_clone_is_its_own_first_frame)
{
    uint64_t f[8];
    struct cmn_uw_walk w = walk_clone(0, 1, f);
    cr_assert_eq(w.max_frames, 1);
    cr_assert_eq(w.stop_reason, PROF_STOP_END);
}

Test(uw_step, without_the_return_register_or_the_whole_code_the_clone_tail_proves_nothing)
{
    uint64_t f[8];
    struct cmn_uw_walk w = walk_clone(4242, 0, f);
    cr_assert_neq(w.stop_reason, PROF_STOP_END, "the return register is not known");
    cr_assert_eq(w.max_frames, 1);
    walk_clone(4242, 1, f);
    clone_code[F_NOINFO + 0x28 + 9] = 0x90; /* the error path's errno store is not there */
    struct cmn_fp_regs regs = {.pc = pc_of(F_NOINFO + 0x10), .sp = at(40), .fp = 1,
                               .ret = 4242, .ret_known = 1};
    struct cmn_uw_walk w2 = {.lo = at(0), .hi = at(WORDS), .frames = f, .max_frames = 8};
    cr_assert_eq(cmn_uw_walk(&clone_mem, &regs, &w2), 1);
    cr_assert_neq(w2.stop_reason, PROF_STOP_END);
}

/* The C library's vfork() (arch/x86_64.h) at F_STOP + 0x10, whose rows between the pop of
 * its return address and its push say "in %rdi": the leaf there returns to %rdi. */
static struct cmn_uw_walk walk_vfork(unsigned past, int arg_known, uint64_t *frames)
{
    static const uint8_t vfork[] = {0x5f, 0xb8, 0x3a, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x57,
                                    0x3d, 0x01, 0xf0, 0xff, 0xff, 0x73, 0x01, 0xc3};
    memcpy(clone_code + F_STOP + 0x10, vfork, sizeof(vfork));
    make_table();
    stk[40] = 0x5a5a; /* whatever the stack holds there: the return address is not on it */
    struct cmn_fp_regs regs = {.pc = pc_of(F_STOP + 0x10 + past), .sp = at(40), .fp = 1,
                               .arg = pc_of(F_START + 8), .arg_known = arg_known};
    struct cmn_uw_walk w = {.lo = at(0), .hi = at(WORDS), .frames = frames, .max_frames = 8};
    w.max_frames = cmn_uw_walk(&clone_mem, &regs, &w);
    return w;
}

Test(uw_step, a_leaf_in_vfork_returns_through_the_register_that_holds_its_return_address)
{
    uint64_t f[8];
    static const unsigned insns[] = {1, 6, 8, 9, 14, 16}; /* mov, syscall, push, cmp, jae, ret */
    for (unsigned i = 0; i < sizeof(insns) / sizeof(insns[0]); i++) {
        struct cmn_uw_walk w = walk_vfork(insns[i], 1, f);
        cr_assert_eq(w.max_frames, 2, "past %u", insns[i]);
        cr_assert_eq(f[1], pc_of(F_START + 8));
        cr_assert_eq(w.stop_reason, PROF_STOP_END);
        cr_assert_eq(w.flags, PROF_SAMPLE_LEAF_CALLER);
    }
}

Test(uw_step, without_the_register_or_the_whole_code_vfork_proves_nothing)
{
    uint64_t f[8];
    struct cmn_uw_walk w = walk_vfork(8, 0, f);
    cr_assert_eq(w.max_frames, 1);
    cr_assert_eq(w.stop_reason, PROF_STOP_RULE, "the register is not known");
    w = walk_vfork(0, 1, f);
    cr_assert_eq(w.stop_reason, PROF_STOP_RULE, "at the pop, its row's own case");
    walk_vfork(8, 1, f);
    clone_code[F_STOP + 0x10 + 2] = 0x39; /* another system call: fork */
    struct cmn_fp_regs regs = {.pc = pc_of(F_STOP + 0x18), .sp = at(40), .fp = 1,
                               .arg = pc_of(F_START + 8), .arg_known = 1};
    struct cmn_uw_walk w2 = {.lo = at(0), .hi = at(WORDS), .frames = f, .max_frames = 8};
    cr_assert_eq(cmn_uw_walk(&clone_mem, &regs, &w2), 1);
    cr_assert_eq(w2.stop_reason, PROF_STOP_RULE);
}
#endif

#if defined(__aarch64__)
/* glibc's clone() on aarch64 (arch/aarch64.h): its row (return by x30) holds past the
 * system call, for the creator; the new thread, x0 = 0, at the cmp or the b.eq after the
 * svc is its own first frame, not a frame of the creator's caller. The code at F_LR. */
static void put_word(uint32_t link, uint32_t insn)
{
    memcpy(clone_code + link, &insn, 4);
}

static struct cmn_uw_walk walk_clone(uint32_t pc, uintptr_t ret, uint64_t *frames)
{
    put_word(F_LR + 0x10, 0xd2801b88u); /* mov x8, #220 */
    put_word(F_LR + 0x14, 0xd4000001u); /* svc #0 */
    put_word(F_LR + 0x18, 0xf100001fu); /* cmp x0, #0 */
    put_word(F_LR + 0x1c, 0x540000a0u); /* b.eq START */
    put_word(F_LR + 0x20, 0x5400004bu); /* b.lt ERR */
    put_word(F_LR + 0x24, 0xd65f03c0u); /* ret */
    make_table();
    outer_frames();
    struct cmn_fp_regs regs = {.pc = pc_of(pc), .sp = at(40), .fp = at(OUTER),
                               .lr = pc_of(F_FRAMED + 0x20), .ret = ret, .ret_known = 1};
    struct cmn_uw_walk w = {.lo = at(0), .hi = at(WORDS), .frames = frames, .max_frames = 8};
    w.max_frames = cmn_uw_walk(&clone_mem, &regs, &w);
    return w;
}

Test(uw_step, a_new_thread_in_aarch64_clone_is_its_own_first_frame)
{
    uint64_t f[8];
    struct cmn_uw_walk w = walk_clone(F_LR + 0x18, 0, f);
    cr_assert_eq(w.max_frames, 1, "the creator's caller taken for the new thread's");
    cr_assert_eq(w.stop_reason, PROF_STOP_END);
    w = walk_clone(F_LR + 0x1c, 0, f);
    cr_assert_eq(w.max_frames, 1);
    cr_assert_eq(w.stop_reason, PROF_STOP_END);
}

Test(uw_step, the_caller_of_aarch64_clone_returns_by_its_row)
{
    uint64_t f[8];
    struct cmn_uw_walk w = walk_clone(F_LR + 0x18, 4242, f); /* the new thread's id */
    cr_assert_eq(w.max_frames, 3);
    cr_assert_eq(f[1], pc_of(F_FRAMED + 0x20));
    /* Another instruction after the svc: not clone()'s code, the row holds. */
    put_word(F_LR + 0x24, 0xd503201fu); /* nop */
    struct cmn_fp_regs regs = {.pc = pc_of(F_LR + 0x18), .sp = at(40), .fp = at(OUTER),
                               .lr = pc_of(F_FRAMED + 0x20), .ret = 0, .ret_known = 1};
    struct cmn_uw_walk w2 = {.lo = at(0), .hi = at(WORDS), .frames = f, .max_frames = 8};
    cr_assert_eq(cmn_uw_walk(&clone_mem, &regs, &w2), 3);
    cr_assert_eq(f[1], pc_of(F_FRAMED + 0x20));
}
#endif

/* Go's cgo call: a C leaf (frameless) called by asmcgocall on the system stack (stk), its
 * g and the goroutine's stack depth at the call's stack pointer + 48 and + 40; the
 * goroutine's stack (gst, bounds in the g's first two words) holds asmcgocall's return
 * address into a framed Go function whose frame leads to the outermost one. */
static uintptr_t gst[WORDS] __attribute__((aligned(16)));
static uintptr_t fake_g[2];
#define G_SP 500  /* the goroutine's stack pointer at asmcgocall's entry, in words */
#define G_FP 520  /* the framed Go function's frame */

static int go_stack(const struct cmn_uw_mem *m, uintptr_t g, uintptr_t depth, uintptr_t *sp,
                    uintptr_t *lo, uintptr_t *hi)
{
    (void)m;
    const uintptr_t *gp = (const uintptr_t *)g;
    if (gp != fake_g || depth > gp[1] - gp[0])
        return 0;
    *lo = gp[0];
    *hi = gp[1];
    *sp = gp[1] - depth;
    return 1;
}

static const struct cmn_uw_mem go_mem = {{stack_word, code, is_code}, get_table, other_stack,
                                         go_stack};

static struct cmn_uw_walk go_walk(const struct cmn_uw_mem *m, uintptr_t g, uintptr_t depth,
                                  uint64_t *frames)
{
    make_table();
    fake_g[0] = (uintptr_t)gst;
    fake_g[1] = (uintptr_t)(gst + WORDS);
    stk[40] = pc_of(F_GOCGO + 0x12); /* the C leaf's return address into asmcgocall */
    stk[41 + 5] = depth;             /* asmcgocall's sp is stk[41]: + 40 */
    stk[41 + 6] = g;                 /* + 48 */
    gst[G_SP] = pc_of(F_FRAMED + 0x20);
    gst[G_FP] = 0;
    gst[G_FP + 1] = pc_of(F_START + 5);
    struct cmn_fp_regs regs = {.pc = pc_of(F_FRAMELESS + 4), .sp = at(40),
                               .fp = (uintptr_t)&gst[G_FP]};
    struct cmn_uw_walk w = {.lo = (uintptr_t)stk, .hi = (uintptr_t)(stk + WORDS),
                            .frames = frames, .max_frames = 16};
    w.max_frames = cmn_uw_walk(m, &regs, &w);
    return w;
}

Test(uw_step, a_go_cgo_call_is_crossed_to_the_goroutine_s_stack)
{
    uint64_t f[16];
    uintptr_t depth = (uintptr_t)(gst + WORDS) - (uintptr_t)&gst[G_SP];
    struct cmn_uw_walk w = go_walk(&go_mem, (uintptr_t)fake_g, depth, f);
    cr_assert_eq(w.stop_reason, PROF_STOP_END);
    cr_assert_eq(w.max_frames, 4);
    cr_assert_eq(f[1], pc_of(F_GOCGO + 0x12));
    cr_assert_eq(f[2], pc_of(F_FRAMED + 0x20), "the Go caller, from the goroutine's stack");
    cr_assert_eq(f[3], pc_of(F_START + 5));
}

Test(uw_step, a_go_cgo_call_without_a_switch_finds_its_caller_on_the_same_stack)
{
    uint64_t f[16];
    stk[60] = pc_of(F_FRAMED + 0x20);
    outer_frames();
    make_table();
    stk[40] = pc_of(F_GOCGO + 0x12);
    stk[46] = at(60); /* the caller's stack pointer itself */
    stk[47] = 0;      /* no g: no switch */
    struct cmn_fp_regs regs = {.pc = pc_of(F_FRAMELESS + 4), .sp = at(40), .fp = at(OUTER)};
    struct cmn_uw_walk w = {.lo = (uintptr_t)stk, .hi = (uintptr_t)(stk + WORDS),
                            .frames = f, .max_frames = 16};
    unsigned n = cmn_uw_walk(&mem, &regs, &w);
    cr_assert_eq(w.stop_reason, PROF_STOP_END);
    cr_assert_eq(n, 4);
    cr_assert_eq(f[2], pc_of(F_FRAMED + 0x20));
    /* A caller's stack pointer below the call's own is no caller. */
    stk[46] = at(30);
    n = cmn_uw_walk(&mem, &regs, &w);
    cr_assert_eq(w.stop_reason, PROF_STOP_ORDER);
    cr_assert_eq(n, 2);
}

Test(uw_step, a_go_cgo_call_over_a_copy_or_a_bad_g_stops_and_says_why)
{
    uint64_t f[16];
    uintptr_t depth = (uintptr_t)(gst + WORDS) - (uintptr_t)&gst[G_SP];
    /* No live memory (a copy of the stack): the goroutine's stack cannot be read. */
    struct cmn_uw_walk w = go_walk(&mem, (uintptr_t)fake_g, depth, f);
    cr_assert_eq(w.stop_reason, PROF_STOP_RULE);
    cr_assert_eq(w.max_frames, 2);
    /* A depth the goroutine's stack does not hold, a g that is not one: no caller. */
    w = go_walk(&go_mem, (uintptr_t)fake_g, sizeof(gst) + 8, f);
    cr_assert_eq(w.stop_reason, PROF_STOP_BOUNDS);
    cr_assert_eq(w.max_frames, 2);
    w = go_walk(&go_mem, (uintptr_t)gst, depth, f);
    cr_assert_eq(w.stop_reason, PROF_STOP_BOUNDS);
    cr_assert_eq(w.max_frames, 2);
}
