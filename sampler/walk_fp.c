/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Frame-pointer stepper, on the signal handler's path. Before each load it checks that the
 * frame lies inside the thread's stack above the interrupted stack pointer, is aligned,
 * and lies strictly above the previous frame; so every load is from mapped memory of this
 * thread's stack, and the loop ends after at most (hi - lo) / 16 steps even on a corrupt
 * chain. The walk is complete when it reaches the frame of libprof's entry trampoline
 * (root_fp: the frame below main() or below a thread's start routine, whose callers in
 * libc keep no frame pointer) or a null frame pointer or return address (the outermost
 * frames of code that clears them); anything else that stops it is a truncation.
 */
#include "sampler/walk_fp.h"

#include "arch/arch.h"
#include "include/prof_format.h"

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

unsigned smp_walk_fp(const struct smp_regs *regs, const struct smp_stack *stack,
                     uint64_t *frames, unsigned max_frames, uint8_t *stop_reason)
{
    uintptr_t lo = stack->lo > regs->sp ? stack->lo : regs->sp;
    uintptr_t hi = stack->hi;
    uintptr_t fp = regs->fp;
    uintptr_t prev = 0;
    unsigned n = 0;

    frames[n++] = arch_strip_pac(regs->pc);
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
