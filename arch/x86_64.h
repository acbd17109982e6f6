/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * x86_64: registers from an interrupted context and the frame-pointer frame layout.
 * A function built with frame pointers starts `push %rbp; mov %rsp,%rbp`, so %rbp points
 * at the caller's saved %rbp, with the return address one word above it:
 *
 *     higher addresses
 *     | return address |  rbp + 8   (ARCH_FRAME_RET_OFF)
 *     | caller's rbp   |  rbp + 0   (ARCH_FRAME_FP_OFF)
 *     | locals ...     |
 *     lower addresses (the stack grows down)
 *
 * All functions are async-signal-safe: they only read the ucontext the kernel passed.
 */
#ifndef PROF_ARCH_X86_64_H
#define PROF_ARCH_X86_64_H

#include <stdint.h>
#include <ucontext.h>

#define ARCH_NAME "x86_64"
#define ARCH_FP_ALIGN 8u      /* a saved frame pointer is at least word-aligned */
#define ARCH_FRAME_FP_OFF 0u  /* caller's frame pointer, from the frame pointer */
#define ARCH_FRAME_RET_OFF 8u /* return address, from the frame pointer */

static inline uintptr_t arch_pc(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
}

static inline uintptr_t arch_sp(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
}

static inline uintptr_t arch_fp(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
}

/* x86_64 keeps the return address on the stack, not in a register. */
static inline uintptr_t arch_lr(const ucontext_t *uc)
{
    (void)uc;
    return 0;
}

/* No pointer authentication on x86_64. */
static inline uintptr_t arch_strip_pac(uintptr_t pc)
{
    return pc;
}

#endif
