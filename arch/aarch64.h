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

#include <stddef.h>
#include <stdint.h>
#include <asm/perf_regs.h>
#include <signal.h>
#include <ucontext.h>

#define ARCH_NAME "aarch64"
#define ARCH_FP_ALIGN 8u
#define ARCH_FRAME_FP_OFF 0u
#define ARCH_FRAME_RET_OFF 8u
#define ARCH_HAS_LR 1 /* bl leaves the return address in x30 */
#define ARCH_FRAME_CFA_OFF 16u /* the caller's stack pointer is at least this far above x29 */
#define ARCH_FP_CFA_EXACT 0    /* ... not exactly: the record may sit anywhere in the frame */

/* DWARF register numbers (the AAPCS64 DWARF supplement). */
#define ARCH_DWARF_SP 31u
#define ARCH_DWARF_FP 29u
#define ARCH_DWARF_RA 30u
#define ARCH_DWARF_X86_64 0

/* The user registers a perf_event sample is asked for (PERF_SAMPLE_REGS_USER), which it
 * carries in ascending register number, and how they are read back. */
#define ARCH_PERF_REGS_MASK                                                                \
    ((1ull << PERF_REG_ARM64_X0) | (1ull << PERF_REG_ARM64_X29) | (1ull << PERF_REG_ARM64_LR) | \
     (1ull << PERF_REG_ARM64_SP) | (1ull << PERF_REG_ARM64_PC))
#define ARCH_PERF_N_REGS 5u
/* The registers a sample record holds, in the order of their bits: ret is the system
 * call's return register (arch_uc_ret()). */
static inline void arch_perf_regs(const uint64_t *r, uintptr_t *pc, uintptr_t *sp, uintptr_t *fp,
                                  uintptr_t *lr, uintptr_t *ret, uintptr_t *arg)
{
    *ret = (uintptr_t)r[0];
    *arg = (uintptr_t)r[0]; /* x0: the first argument's register is the return register */
    *fp = (uintptr_t)r[1];
    *lr = (uintptr_t)r[2];
    *sp = (uintptr_t)r[3];
    *pc = (uintptr_t)r[4];
}

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

/* The register a system call returns its result in. */
static inline uintptr_t arch_uc_ret(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.regs[0];
}

/* The virtual counter (CNTVCT_EL0), readable from user space: the same use as x86_64's
 * arch_ticks(). */
static inline uint64_t arch_ticks(void)
{
    uint64_t v;
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v) : : "memory");
    return v;
}

/* The first argument's register (x0, the return register's too). */
static inline uintptr_t arch_uc_arg(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.regs[0];
}

/* glibc's vfork() keeps its return address in x30 (arch/x86_64.h's needs a recogniser). */
#define ARCH_VFORK 0
#define ARCH_VFORK_LEN 2u /* unused: sizes that keep the common code well-formed */
#define ARCH_VFORK_PUSHED 1u
#define ARCH_VFORK_PEEK 3u

static inline unsigned arch_vfork_at(const uint8_t *code)
{
    (void)code;
    return 0;
}

/* glibc's clone() keeps its unwind row past the system call here (unlike x86_64's, see
 * arch/x86_64.h): no tail to recognise for want of a row. */
#define ARCH_CLONE_TAIL_LEN 8u
#define ARCH_CLONE_ERROR_LEN 17u

static inline int arch_clone_tail(const uint8_t *code, uintptr_t pc, uintptr_t *err_at)
{
    (void)code;
    (void)pc;
    (void)err_at;
    return 0;
}

static inline int arch_clone_error(const uint8_t *code)
{
    (void)code;
    return 0;
}

/*
 * That row (CFA = sp, return address in x30) is right for the thread that called clone()
 * and wrong for the new thread, which runs the same instructions first, with the creator's
 * x30 and a stack of its own:
 *
 *   svc #0; cmp x0, #0; b.eq START; b.lt ERR; ret
 *
 * The new thread (x0 is 0) at the cmp or the b.eq has no caller. arch_clone_child() takes
 * the ARCH_CLONE_CHILD_BEFORE bytes before the pc and ARCH_CLONE_CHILD_AFTER from it, and
 * says whether the pc is there.
 */
#define ARCH_CLONE_CHILD 1
#define ARCH_CLONE_CHILD_BEFORE 8u
#define ARCH_CLONE_CHILD_AFTER 16u

static inline int arch_clone_child(const uint8_t *code)
{
    uint32_t w[6];
    for (unsigned i = 0; i < 6; i++) /* little-endian instruction words */
        w[i] = (uint32_t)code[4 * i] | (uint32_t)code[4 * i + 1] << 8 |
               (uint32_t)code[4 * i + 2] << 16 | (uint32_t)code[4 * i + 3] << 24;
    for (unsigned k = 0; k < 2; k++) /* the svc at pc - 4 (pc at the cmp), or at pc - 8 */
        if (w[k] == 0xd4000001u && w[k + 1] == 0xf100001fu &&
            (w[k + 2] & 0xff00001fu) == 0x54000000u && (w[k + 3] & 0xff00001fu) == 0x5400000bu &&
            w[k + 4] == 0xd65f03c0u)
            return 1;
    return 0;
}

/* User addresses fit in 48 bits (52 with LVA, not used by Linux user space by default);
 * the bits above hold a pointer-authentication code when PAC is on. */
static inline uintptr_t arch_strip_pac(uintptr_t pc)
{
    return pc & ((UINT64_C(1) << 48) - 1);
}

/*
 * The interrupted leaf. Until `stp x29, x30, [sp, #-N]!; mov x29, sp` has completed, and
 * again after `ldp x29, x30, [sp], #N` at `ret`, x29 holds the caller's frame; the return
 * address into the caller is then in x30 (lr), which stp does not change:
 *
 *   at stp x29, x30, [sp, #-N]!   ARCH_LEAF_RA_IN_LR
 *   at mov x29, sp                ARCH_LEAF_RA_IN_LR (also saved at sp + 8)
 *   at ret (x30)                  ARCH_LEAF_RA_IN_LR
 *   anything else                 ARCH_LEAF_UNKNOWN
 *
 * Instructions are 4 bytes, little-endian, at 4-byte aligned addresses.
 */
#define ARCH_CODE_PEEK 4u
#define ARCH_CALL_PEEK 8u
#define ARCH_LEAF_UNKNOWN 0u
#define ARCH_LEAF_RA_AT_SP 1u
#define ARCH_LEAF_RA_AT_SP1 2u
#define ARCH_LEAF_RA_IN_LR 3u

static inline uint32_t arch_insn_at(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline unsigned arch_leaf_state(const uint8_t *code, unsigned n)
{
    if (n < 4)
        return ARCH_LEAF_UNKNOWN;
    uint32_t insn = arch_insn_at(code);
    if ((insn & 0xffc07fffu) == 0xa9807bfdu) /* stp x29, x30, [sp, #imm]! */
        return ARCH_LEAF_RA_IN_LR;
    if (insn == 0x910003fdu) /* mov x29, sp */
        return ARCH_LEAF_RA_IN_LR;
    if (insn == 0xd65f03c0u) /* ret */
        return ARCH_LEAF_RA_IN_LR;
    return ARCH_LEAF_UNKNOWN;
}

/* 1 when the instruction before a return address (before[4..7]) is bl or blr. */
static inline int arch_is_call_site(const uint8_t *before)
{
    uint32_t insn = arch_insn_at(before + 4);
    return (insn & 0xfc000000u) == 0x94000000u || (insn & 0xfffffc1fu) == 0xd63f0000u;
}

/* The registers of the code that expands it, into four uintptr_t lvalues: pc (an address
 * inside the expansion), sp, fp (x29) and lr (x30) as they are there. A walk can start at
 * this point of a function exactly (the backtrace API walks from its own frame). */
#define ARCH_HERE(pc, sp, fp, lr)                                                          \
    __asm__ volatile("adr %0, .\n\tmov %1, sp\n\tmov %2, x29\n\tmov %3, x30"           \
                     : "=r"(pc), "=r"(sp), "=r"(fp), "=r"(lr))

/*
 * Frameless stubs of code generators (see arch/x86_64.h): none known here; CPython's perf
 * trampoline keeps a frame record on aarch64.
 */
#define ARCH_STUB_BEFORE 4u
#define ARCH_STUB_AFTER 4u
static inline unsigned arch_stub_cfa(const uint8_t *code)
{
    (void)code;
    return 0;
}

/*
 * Signal frames. A handler returns into the vDSO's __kernel_rt_sigreturn
 * (`mov x8, #139; svc #0`). The kernel's frame record for it sits after a variable-size
 * signal frame, so the interrupted context is not located from it here: a walk goes on
 * through the frame record (the interrupted x29, x30) instead.
 */
#define ARCH_SIGRETURN_LEN 8u
#define ARCH_UC_PC_OFF offsetof(ucontext_t, uc_mcontext.pc)
#define ARCH_UC_SP_OFF offsetof(ucontext_t, uc_mcontext.sp)
#define ARCH_UC_FP_OFF (offsetof(ucontext_t, uc_mcontext.regs) + 29 * sizeof(uint64_t))

static inline int arch_is_sigreturn(const uint8_t *code)
{
    return arch_insn_at(code) == 0xd2801168u && arch_insn_at(code + 4) == 0xd4000001u;
}

static inline uintptr_t arch_sigframe_uc(uintptr_t fp)
{
    (void)fp;
    return 0;
}

/* From the stack pointer at the trampoline: the kernel's rt_sigframe starts there, a
 * siginfo_t and then the ucontext_t (arch/arm64/kernel/signal.c). */
static inline uintptr_t arch_sigframe_uc_at(uintptr_t sp)
{
    return sp + sizeof(siginfo_t);
}

/* The signal's siginfo from the same stack pointer (also in the sigreturn system call,
 * whose user pc is just past the trampoline): the frame begins with it. */
static inline uintptr_t arch_sigframe_info_at(uintptr_t sp)
{
    return sp;
}
#define ARCH_UC_LR_OFF (offsetof(ucontext_t, uc_mcontext.regs) + 30 * sizeof(uint64_t))

/* The C library's __start_context (see arch/x86_64.h): not recognised here. */
#define ARCH_CONTEXT_START 0
#define ARCH_CONTEXT_START_LEN 4u
static inline int arch_context_start(const uint8_t *code)
{
    (void)code;
    return 0;
}

/* Calling fn(arg) on another stack (see arch/x86_64.h): the frame record (x29) is left
 * alone, the old stack pointer kept in callee-saved x19. */
#define ARCH_STACK_ALIGN 16u
static inline void arch_call_on_stack(void (*fn)(void *), void *arg, uintptr_t top)
{
    register void *x0 __asm__("x0") = arg;
    __asm__ volatile("mov x19, sp\n\t"
                     "mov sp, %[top]\n\t"
                     "blr %[fn]\n\t"
                     "mov sp, x19"
                     : "+r"(x0), [fn] "+r"(fn), [top] "+r"(top)
                     :
                     : "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12",
                       "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x30", "memory", "cc",
                       "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v17", "v18",
                       "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28",
                       "v29", "v30", "v31");
}

/* The stack pointer of the calling function (an upper bound of what it uses below). */
static inline uintptr_t arch_sp_here(void)
{
    uintptr_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    return sp;
}

#endif
