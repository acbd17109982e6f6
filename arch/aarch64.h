/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * aarch64: registers from an interrupted context and the frame-record layout. A function
 * with a frame record starts `stp x29, x30, [sp, #-N]!; mov x29, sp`, so x29 points at a
 * two-word record: the caller's x29, then the return address (x30):
 *
 *     | saved x30 (lr) |  x29 + 8   (ARCH_FRAME_RET_OFF)
 *     | saved x29      |  x29 + 0   (ARCH_FRAME_FP_OFF)
 *
 * Return addresses may carry pointer-authentication bits, stripped by arch_strip_pac().
 * All functions are async-signal-safe: they only read the ucontext the kernel passed.
 */
#ifndef PROF_ARCH_AARCH64_H
#define PROF_ARCH_AARCH64_H

#include <stdint.h>
#include <ucontext.h>

#define ARCH_NAME "aarch64"
#define ARCH_FP_ALIGN 8u
#define ARCH_FRAME_FP_OFF 0u
#define ARCH_FRAME_RET_OFF 8u

static inline uintptr_t arch_pc(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.pc;
}

static inline uintptr_t arch_sp(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.sp;
}

static inline uintptr_t arch_fp(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.regs[29];
}

static inline uintptr_t arch_lr(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.regs[30];
}

/* User addresses fit in 48 bits (52 with LVA, not used by Linux user space by default);
 * the bits above hold a pointer-authentication code when PAC is on. */
static inline uintptr_t arch_strip_pac(uintptr_t pc)
{
    return pc & ((UINT64_C(1) << 48) - 1);
}

#endif
