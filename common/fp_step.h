/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The frame-pointer pieces of the stack walk (common/uw_step.h), which steps a frame by
 * frame pointer where its module has no unwind table: the registers a walk starts from,
 * the accessors through which every walk reaches memory (struct cmn_fp_mem: a word of the
 * stack, bytes of code, "is this address code"), the checks of a frame before it is read,
 * and what the instruction bytes at an interrupted pc say about where its return address
 * is. In the handler the accessors are direct loads and the code map, inlined (the
 * accessors are static const, so the compiler sees through them); from outside (the prof
 * command) they read a copy of the stack and the target's memory.
 *
 * Header-only and static, so that the prof command shares the logic without linking the
 * library. It uses arch/ and the format's PROF_STOP_* values only.
 *
 * A frame is read only when it lies inside the stack bounds above the interrupted stack
 * pointer, aligned (cmn_fp_check_frame()); every stack word only inside the bounds
 * (cmn_fp_word()). The instruction bytes at the interrupted pc (cmn_fp_leaf_code()) say
 * whether the leaf is at its entry, between `push %rbp` and `mov %rsp,%rbp`, or at its
 * `ret` (arch_leaf_state()): then its return address is at a known stack slot or in the
 * link register. Anywhere else they prove nothing, and nothing is taken: a word at the
 * stack pointer that looks like a return address may be a stale one left in a slot the
 * leaf reserved and never wrote (`sub $8,%rsp`).
 *
 * Signal handler's path: allowed: it calls nothing but the caller's accessors.
 */
#ifndef PROF_COMMON_FP_STEP_H
#define PROF_COMMON_FP_STEP_H

#include <stdint.h>

#include "arch/arch.h"
#include "include/libprof/prof_format.h"

#define CMN_FP_PAGE_BYTES 4096u /* the smallest page size of both architectures */

/* Inlined into each walker; not instrumented by AddressSanitizer, as the in-process
 * walker's own stack reads are not (SMP_READS_STACK): a walk reads other functions'
 * frames, and instrumented copies of these helpers, inlined into an uninstrumented walker,
 * see their own locals as out of scope. */
#if defined(__SANITIZE_ADDRESS__)
#define CMN_FP_INLINE static inline __attribute__((always_inline, no_sanitize_address))
#else
#define CMN_FP_INLINE static inline __attribute__((always_inline))
#endif

/* The registers a walk starts from, taken from the interrupted context. */
struct cmn_fp_regs {
    uintptr_t pc; /* interrupted instruction */
    uintptr_t sp; /* stack pointer at the interruption */
    uintptr_t fp; /* frame pointer at the interruption */
    uintptr_t lr; /* link register (aarch64), 0 where calls push the return address */
    uintptr_t ret; /* the system call return register (arch_uc_ret()), when ret_known */
    int ret_known;
    uintptr_t arg; /* the first argument register (arch_uc_arg()), when arg_known */
    int arg_known;
};

/* How the walk reaches memory. Each accessor gets the struct back, so an outside walker
 * can embed it in its own state. */
struct cmn_fp_mem {
    /* The aligned word at addr into *out; 1 on success. The walk calls it only for
     * addresses inside the bounds it was given, which the caller has made readable. */
    int (*stack_word)(const struct cmn_fp_mem *m, uintptr_t addr, uintptr_t *out);
    /* n (<= 16) bytes of code at addr into out; 0 on success, -1 when not readable. */
    int (*code)(const struct cmn_fp_mem *m, uintptr_t addr, uint8_t *out, unsigned n);
    /* 1 when addr lies in executable code. */
    int (*is_code)(const struct cmn_fp_mem *m, uintptr_t addr);
};

/* Why the frame at fp cannot be read, or PROF_STOP_END when it can. */
CMN_FP_INLINE uint8_t cmn_fp_check_frame(uintptr_t fp, uintptr_t lo, uintptr_t hi,
                                         uintptr_t prev)
{
    if (fp < lo || fp > hi || hi - fp < ARCH_FRAME_RET_OFF + sizeof(uintptr_t))
        return PROF_STOP_BOUNDS;
    if (fp & (ARCH_FP_ALIGN - 1))
        return PROF_STOP_ALIGN;
    if (prev && fp <= prev)
        return PROF_STOP_ORDER;
    return PROF_STOP_END;
}

/* The word at addr into *out, when it lies inside [lo, hi) and is aligned. */
CMN_FP_INLINE int
cmn_fp_word(const struct cmn_fp_mem *m, uintptr_t addr, uintptr_t lo, uintptr_t hi,
            uintptr_t *out)
{
    if (addr < lo || addr >= hi || hi - addr < sizeof(uintptr_t) ||
        (addr & (sizeof(uintptr_t) - 1)))
        return 0;
    return m->stack_word(m, addr, out);
}

/* The instruction bytes at pc (ARCH_CODE_PEEK at most; the read stops at the page's end)
 * into code: how many, 0 when they cannot be read. arch_leaf_state() says what they mean. */
CMN_FP_INLINE unsigned cmn_fp_leaf_code(const struct cmn_fp_mem *m, uintptr_t pc,
                                        uint8_t code[ARCH_CODE_PEEK])
{
    unsigned n = CMN_FP_PAGE_BYTES - (unsigned)(pc & (CMN_FP_PAGE_BYTES - 1));
    if (n > ARCH_CODE_PEEK)
        n = ARCH_CODE_PEEK;
    return m->code(m, pc, code, n) == 0 ? n : 0;
}

#endif
