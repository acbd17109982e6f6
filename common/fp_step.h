/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The frame-pointer stepper's logic, once, for every place that walks frame pointers:
 * the signal handler walking its own thread (sampler/walk_fp.c), and the prof command
 * walking another process's threads from outside (ptrace, perf_event stack copies). The
 * logic is the same everywhere; what differs is how memory is reached, so the walk takes
 * it through three accessors (struct cmn_fp_mem): a word of the stack, bytes of code, and
 * "is this address code". In the handler they are direct loads and the code map, inlined
 * (the accessors are static const, so the compiler sees through them); from outside they
 * read a copy of the stack and the target's memory.
 *
 * Header-only and static, so that the prof command shares the logic without linking the
 * library (the lint's layering rule allows the reporter this one sampler header). It uses
 * arch/ and the format's PROF_STOP_* and PROF_SAMPLE_* values only.
 *
 * The walk: before each load it checks that the frame lies inside the stack bounds above
 * the interrupted stack pointer, is aligned, and lies strictly above the previous frame,
 * so it ends after at most (hi - lo) / 16 steps even on a corrupt chain. Every return
 * address must lie in code, so garbage read through a frame pointer that is not one ends
 * the walk instead of becoming a frame. The walk is complete when it reaches root_fp (the
 * frame of libprof's entry trampoline below main() or a thread's start routine) or a null
 * frame pointer or return address; anything else that stops it is a truncation.
 *
 * The interrupted leaf comes first (cmn_fp_leaf_caller()): when the instruction bytes at
 * the pc say the leaf is at its entry, between `push %rbp` and `mov %rsp,%rbp`, or at its
 * `ret` (arch_leaf_state()), the return address into its caller is at a known stack slot
 * or in the link register, and the chain from the frame pointer starts at the caller's
 * caller. Anywhere else the bytes prove nothing, and nothing is added: a word at the stack
 * pointer that looks like a return address may be a stale one left in a slot the leaf
 * reserved and never wrote (`sub $8,%rsp`), and taking it made callers that never called.
 * The leaf's caller is then left to the unwind information (the reporter's fix-up from
 * sp_word, which adds it only where the leaf's CFI says the return address is at sp).
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

/* What the instruction bytes at pc say (ARCH_LEAF_*). The read stops at the page's end. */
CMN_FP_INLINE unsigned
cmn_fp_leaf_state(const struct cmn_fp_mem *m, uintptr_t pc)
{
    uint8_t code[ARCH_CODE_PEEK];
    unsigned n = CMN_FP_PAGE_BYTES - (unsigned)(pc & (CMN_FP_PAGE_BYTES - 1));
    if (n > sizeof(code))
        n = sizeof(code);
    if (m->code(m, pc, code, n) != 0)
        return ARCH_LEAF_UNKNOWN;
    return arch_leaf_state(code, n);
}

/* The return address into the interrupted leaf's caller when the instruction bytes at the
 * pc prove that the frame pointer still describes the caller's frame, else 0 (see the file
 * comment). Reads the stack only inside [max(lo, sp), hi). Not PAC-stripped. */
CMN_FP_INLINE uintptr_t
cmn_fp_leaf_caller(const struct cmn_fp_mem *m, const struct cmn_fp_regs *regs, uintptr_t lo,
                   uintptr_t hi)
{
    if (lo < regs->sp)
        lo = regs->sp;
    uintptr_t w0 = 0, w1 = 0;
    int has0 = cmn_fp_word(m, regs->sp, lo, hi, &w0);
    int has1 = cmn_fp_word(m, regs->sp + sizeof(uintptr_t), lo, hi, &w1);
    /* The frame pointer was saved at sp: the caller's frame lies above the saved pair. */
    int fp_saved = has0 && has1 && w0 == regs->fp && regs->fp >= regs->sp + 16 &&
                   (!ARCH_HAS_LR || arch_strip_pac(w1) == arch_strip_pac(regs->lr));

    uintptr_t ra;
    switch (cmn_fp_leaf_state(m, regs->pc)) {
    case ARCH_LEAF_RA_AT_SP:
        ra = has0 ? w0 : 0;
        break;
    case ARCH_LEAF_RA_AT_SP1:
        ra = fp_saved ? w1 : 0;
        break;
    case ARCH_LEAF_RA_IN_LR:
        ra = regs->lr;
        break;
    default:
        return 0; /* the bytes prove nothing: no guess */
    }
    return ra != 0 && m->is_code(m, arch_strip_pac(ra)) ? ra : 0;
}

/* The walk. Writes the leaf pc then one return address per frame into frames (at most
 * max_frames >= 1), sets *stop_reason (PROF_STOP_*) and *flags (PROF_SAMPLE_LEAF_CALLER
 * when frames[1] was recovered for a leaf without its frame, else 0); returns the number
 * of frames. Stack words are read only inside [max(lo, sp), hi). root_fp: the frame where
 * the walk ends complete without its own return address, 0 when not known. */
CMN_FP_INLINE unsigned
cmn_fp_walk(const struct cmn_fp_mem *m, const struct cmn_fp_regs *regs, uintptr_t lo,
            uintptr_t hi, uintptr_t root_fp, uint64_t *frames, unsigned max_frames,
            uint8_t *stop_reason, uint8_t *flags)
{
    if (lo < regs->sp)
        lo = regs->sp;
    uintptr_t fp = regs->fp;
    uintptr_t prev = 0;
    unsigned n = 0;

    frames[n++] = arch_strip_pac(regs->pc);
    *flags = 0;
    if (max_frames > 1) {
        uintptr_t caller = arch_strip_pac(cmn_fp_leaf_caller(m, regs, lo, hi));
        if (caller != 0) {
            frames[n++] = caller;
            *flags = PROF_SAMPLE_LEAF_CALLER;
        }
    }
    for (;;) {
        if (fp == 0) {
            *stop_reason = PROF_STOP_END;
            break;
        }
        if (fp == root_fp) {
            if (n > 1)
                n--; /* the return address into the trampoline */
            *stop_reason = PROF_STOP_END;
            break;
        }
        uint8_t why = cmn_fp_check_frame(fp, lo, hi, prev);
        if (why != PROF_STOP_END) {
            *stop_reason = why;
            break;
        }
        uintptr_t ret_word, next_fp;
        if (!m->stack_word(m, fp + ARCH_FRAME_RET_OFF, &ret_word) ||
            !m->stack_word(m, fp + ARCH_FRAME_FP_OFF, &next_fp)) {
            *stop_reason = PROF_STOP_BOUNDS;
            break;
        }
        uintptr_t ret = arch_strip_pac(ret_word);
        if (ret == 0) {
            *stop_reason = PROF_STOP_END;
            break;
        }
        /* A word that is not in any code: the chain went through a frame that does not
         * keep the frame pointer (or a corrupt one). Stop rather than record garbage. */
        if (!m->is_code(m, ret)) {
            *stop_reason = PROF_STOP_BOUNDS;
            break;
        }
        if (n >= max_frames) {
            *stop_reason = PROF_STOP_DEPTH;
            break;
        }
        frames[n++] = ret;
        prev = fp;
        fp = next_fp;
    }
    return n;
}

#endif
