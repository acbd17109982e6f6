/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Frame-pointer stepper, on the signal handler's path. Before each load it checks that the
 * frame lies inside the thread's stack above the interrupted stack pointer, is aligned,
 * and lies strictly above the previous frame; so every load is from mapped memory of this
 * thread's stack, and the loop ends after at most (hi - lo) / 16 steps even on a corrupt
 * chain. Every return address must lie in executable code (sampler/codemap.h), so garbage
 * read through a frame pointer that is not one ends the walk instead of becoming a frame.
 * The walk is complete when it reaches the frame of libprof's entry trampoline
 * (root_fp: the frame below main() or below a thread's start routine, whose callers in
 * libc keep no frame pointer) or a null frame pointer or return address (the outermost
 * frames of code that clears them); anything else that stops it is a truncation.
 *
 * The interrupted leaf comes first (leaf_caller()): when the instruction bytes at the pc
 * say the leaf is at its entry, between `push %rbp` and `mov %rsp,%rbp`, or at its `ret`
 * (arch_leaf_state()), the return address into its caller is at a known stack slot or in
 * the link register, and the chain from the frame pointer starts at the caller's caller.
 * When the bytes say nothing (a loop in the prologue, a frameless leaf), two signatures
 * are tried, each accepted only if the candidate is preceded by a call instruction: the
 * word at sp equal to the frame pointer (it was just pushed: the return address is above
 * it), and, where calls push the return address, the word at sp itself (nothing pushed).
 * A local variable that holds a return address while the leaf is in its body would fool
 * the second one; that is the one way this stepper can add a wrong frame, and it needs a
 * code address that follows a call stored exactly at sp.
 */
#include "sampler/walk_fp.h"

#include "arch/arch.h"
#include "include/prof_format.h"
#include "sampler/codemap.h"
#include "sampler/probe.h"

#define PAGE_BYTES 4096u /* the smallest page size of both architectures */

/* Why the frame at fp cannot be read, or PROF_STOP_END when it can. */
static uint8_t check_frame(uintptr_t fp, uintptr_t lo, uintptr_t hi, uintptr_t prev)
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
SMP_READS_STACK static int stack_word(uintptr_t addr, uintptr_t lo, uintptr_t hi,
                                      uintptr_t *out)
{
    if (addr < lo || addr >= hi || hi - addr < sizeof(uintptr_t) ||
        (addr & (sizeof(uintptr_t) - 1)))
        return 0;
    *out = *(const uintptr_t *)addr;
    return 1;
}

/* 1 when ra lies in executable code and follows a call instruction (read through the
 * probe). */
static int is_return_address(uintptr_t ra)
{
    uint8_t before[ARCH_CALL_PEEK];
    return ra > ARCH_CALL_PEEK && smp_codemap_contains(ra) &&
           smp_probe_read(before, ra - ARCH_CALL_PEEK, sizeof(before)) == 0 &&
           arch_is_call_site(before);
}

/* What the instruction bytes at pc say (ARCH_LEAF_*). The read stops at the page's end.
 * The thread was just running this code, so when the code map has it in a readable
 * mapping the bytes are loaded directly (the common case, at no cost); otherwise (an
 * execute-only mapping, code outside the map) through the fault-proof probe, which costs
 * a system call. */
static unsigned leaf_state(uintptr_t pc)
{
    uint8_t code[ARCH_CODE_PEEK];
    unsigned n = PAGE_BYTES - (unsigned)(pc & (PAGE_BYTES - 1));
    if (n > sizeof(code))
        n = sizeof(code);
    if (smp_codemap_readable(pc, n)) {
        const volatile uint8_t *at = (const volatile uint8_t *)pc;
        for (unsigned i = 0; i < n; i++)
            code[i] = at[i];
    } else if (smp_probe_read(code, pc, n) != 0) {
        return ARCH_LEAF_UNKNOWN;
    }
    return arch_leaf_state(code, n);
}

/* The return address into the leaf's caller when the frame pointer still describes the
 * caller's frame, else 0 (see the file comment). */
SMP_READS_STACK static uintptr_t leaf_caller(const struct smp_regs *regs, uintptr_t lo,
                                             uintptr_t hi)
{
    uintptr_t w0 = 0, w1 = 0;
    int has0 = stack_word(regs->sp, lo, hi, &w0);
    int has1 = stack_word(regs->sp + sizeof(uintptr_t), lo, hi, &w1);
    /* The frame pointer was saved at sp: the caller's frame lies above the saved pair. */
    int fp_saved = has0 && has1 && w0 == regs->fp && regs->fp >= regs->sp + 16 &&
                   (!ARCH_HAS_LR || arch_strip_pac(w1) == arch_strip_pac(regs->lr));

    uintptr_t ra;
    switch (leaf_state(regs->pc)) {
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
        /* The bytes say nothing: only a candidate that follows a call is taken. */
        if (fp_saved && is_return_address(arch_strip_pac(w1)))
            return w1;
        if (!ARCH_HAS_LR && has0 && w0 != regs->fp && is_return_address(w0))
            return w0;
        return 0;
    }
    return ra != 0 && smp_codemap_contains(arch_strip_pac(ra)) ? ra : 0;
}

uintptr_t smp_walk_fp_leaf_caller(const struct smp_regs *regs, uintptr_t lo, uintptr_t hi)
{
    return arch_strip_pac(leaf_caller(regs, lo > regs->sp ? lo : regs->sp, hi));
}

SMP_READS_STACK unsigned smp_walk_fp(const struct smp_regs *regs, const struct smp_stack *stack,
                     uint64_t *frames, unsigned max_frames, uint8_t *stop_reason,
                     uint8_t *flags)
{
    uintptr_t lo = stack->lo > regs->sp ? stack->lo : regs->sp;
    uintptr_t hi = stack->hi;
    uintptr_t fp = regs->fp;
    uintptr_t prev = 0;
    unsigned n = 0;

    frames[n++] = arch_strip_pac(regs->pc);
    *flags = 0;
    if (max_frames > 1) {
        uintptr_t caller = arch_strip_pac(leaf_caller(regs, lo, hi));
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
        if (fp == stack->root_fp) {
            if (n > 1)
                n--; /* the return address into the trampoline */
            *stop_reason = PROF_STOP_END;
            break;
        }
        uint8_t why = check_frame(fp, lo, hi, prev);
        if (why != PROF_STOP_END) {
            *stop_reason = why;
            break;
        }
        const uintptr_t *frame = (const uintptr_t *)fp;
        uintptr_t ret = arch_strip_pac(frame[ARCH_FRAME_RET_OFF / sizeof(uintptr_t)]);
        if (ret == 0) {
            *stop_reason = PROF_STOP_END;
            break;
        }
        /* A word that is not in any code: the chain went through a frame that does not
         * keep the frame pointer (or a corrupt one). Stop rather than record garbage. */
        if (!smp_codemap_contains(ret)) {
            *stop_reason = PROF_STOP_BOUNDS;
            break;
        }
        if (n >= max_frames) {
            *stop_reason = PROF_STOP_DEPTH;
            break;
        }
        frames[n++] = ret;
        prev = fp;
        fp = frame[ARCH_FRAME_FP_OFF / sizeof(uintptr_t)];
    }
    return n;
}
