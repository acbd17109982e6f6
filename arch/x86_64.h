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

#include <asm/perf_regs.h>
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#define ARCH_NAME "x86_64"
#define ARCH_FP_ALIGN 8u      /* a saved frame pointer is at least word-aligned */
#define ARCH_FRAME_FP_OFF 0u  /* caller's frame pointer, from the frame pointer */
#define ARCH_FRAME_RET_OFF 8u /* return address, from the frame pointer */
#define ARCH_HAS_LR 0         /* the return address of a call is pushed, not in a register */
#define ARCH_FRAME_CFA_OFF 16u /* the caller's stack pointer, from the frame pointer */
#define ARCH_FP_CFA_EXACT 1    /* ... exactly: the saved pair ends the frame */

/* DWARF register numbers: the stack pointer, the frame pointer, the return address's
 * column (the System V x86_64 ABI's). */
#define ARCH_DWARF_SP 7u
#define ARCH_DWARF_FP 6u
#define ARCH_DWARF_RA 16u
#define ARCH_DWARF_X86_64 1 /* the linker's PLT rule is x86_64's */

/* The user registers a perf_event sample is asked for (PERF_SAMPLE_REGS_USER), which it
 * carries in ascending register number, and how they are read back. */
#define ARCH_PERF_REGS_MASK                                                                \
    ((1ull << PERF_REG_X86_AX) | (1ull << PERF_REG_X86_DI) | (1ull << PERF_REG_X86_BP) |     \
     (1ull << PERF_REG_X86_SP) | (1ull << PERF_REG_X86_IP))
#define ARCH_PERF_N_REGS 5u
/* The registers a sample record holds, in the order of their bits: ret is the system
 * call's return register (arch_uc_ret()), arg the first argument's (arch_uc_arg()). */
static inline void arch_perf_regs(const uint64_t *r, uintptr_t *pc, uintptr_t *sp, uintptr_t *fp,
                                  uintptr_t *lr, uintptr_t *ret, uintptr_t *arg)
{
    *ret = (uintptr_t)r[0];
    *arg = (uintptr_t)r[1];
    *fp = (uintptr_t)r[2];
    *sp = (uintptr_t)r[3];
    *pc = (uintptr_t)r[4];
    *lr = 0;
}

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

/* The register a system call returns its result in. */
static inline uintptr_t arch_uc_ret(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RAX];
}

/* The first argument's register, where glibc's vfork() keeps its return address. */
static inline uintptr_t arch_uc_arg(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RDI];
}

/* No pointer authentication on x86_64. */
static inline uintptr_t arch_strip_pac(uintptr_t pc)
{
    return pc;
}

/* The CPU's time-stamp counter: a few nanoseconds, no system call (the thread-label API
 * stamps its changes with it; libprof/labels.c turns ticks into CLOCK_MONOTONIC). It
 * faults in a thread that turned the TSC off (prctl(PR_SET_TSC, PR_TSC_SIGSEGV)). */
static inline uint64_t arch_ticks(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}

/*
 * The interrupted leaf. While a function is between its entry and the end of
 * `push %rbp; mov %rsp,%rbp`, or past `pop %rbp`/`leave` at its `ret`, %rbp still holds
 * the caller's frame and a frame-pointer walk skips the caller. arch_leaf_state() reads
 * the instruction bytes at the pc (the caller fetched them with a fault-proof read) and
 * says where the return address is then:
 *
 *   at endbr64; push %rbp  or  push %rbp; mov %rsp,%rbp   ARCH_LEAF_RA_AT_SP  [sp]
 *   at mov %rsp,%rbp (rbp pushed, not yet moved)          ARCH_LEAF_RA_AT_SP1 [sp + 8]
 *   at ret / rep ret                                       ARCH_LEAF_RA_AT_SP  [sp]
 *   anything else                                          ARCH_LEAF_UNKNOWN
 */
#define ARCH_CODE_PEEK 8u      /* bytes at the pc that arch_leaf_state() looks at */
#define ARCH_CALL_PEEK 8u      /* bytes before a return address arch_is_call_site() needs */
#define ARCH_LEAF_UNKNOWN 0u   /* the bytes do not say: assume the frame is set up */
#define ARCH_LEAF_RA_AT_SP 1u  /* nothing pushed: the return address is the word at sp */
#define ARCH_LEAF_RA_AT_SP1 2u /* the frame pointer is saved at sp, the return address above */
#define ARCH_LEAF_RA_IN_LR 3u  /* the return address is in the link register (aarch64) */

static inline unsigned arch_leaf_state(const uint8_t *code, unsigned n)
{
    if (n >= 5 && code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && code[3] == 0xfa &&
        code[4] == 0x55)
        return ARCH_LEAF_RA_AT_SP; /* endbr64; push %rbp */
    if (n >= 4 && code[0] == 0x55 && code[1] == 0x48 && code[2] == 0x89 && code[3] == 0xe5)
        return ARCH_LEAF_RA_AT_SP; /* push %rbp; mov %rsp,%rbp */
    if (n >= 3 && code[0] == 0x48 && code[1] == 0x89 && code[2] == 0xe5)
        return ARCH_LEAF_RA_AT_SP1; /* mov %rsp,%rbp */
    if (n >= 1 && code[0] == 0xc3)
        return ARCH_LEAF_RA_AT_SP; /* ret */
    if (n >= 2 && code[0] == 0xf3 && code[1] == 0xc3)
        return ARCH_LEAF_RA_AT_SP; /* rep ret */
    return ARCH_LEAF_UNKNOWN;
}

/*
 * The C library's clone() and clone3() end their unwind information before the system
 * call ("in the child the unwind info would be wrong"): a thread interrupted at the
 * instruction after it, in the call or back from it, has no table row. glibc's code there:
 *
 *   test %rax,%rax; jl ERR; je +1; ret; START: (the new thread's first frame)
 *   ERR: mov errno@gottpoff(%rip),%rcx; neg %eax; mov %eax,%fs:(%rcx); or $-1,%rax; ret
 *
 * Every path of the caller's returns with nothing pushed (the return address at sp); the
 * new thread, whose return register is 0, takes START and has no caller. arch_clone_tail()
 * recognises the first line (ARCH_CLONE_TAIL_LEN bytes at the pc) and says where ERR is;
 * arch_clone_error() the second (ARCH_CLONE_ERROR_LEN bytes at ERR).
 */
#define ARCH_CLONE_TAIL_LEN 8u
#define ARCH_CLONE_ERROR_LEN 17u

static inline int arch_clone_tail(const uint8_t *code, uintptr_t pc, uintptr_t *err_at)
{
    if (code[0] != 0x48 || code[1] != 0x85 || code[2] != 0xc0 || code[3] != 0x7c ||
        code[5] != 0x74 || code[6] != 0x01 || code[7] != 0xc3)
        return 0;
    *err_at = pc + 5 + (uintptr_t)(intptr_t)(int8_t)code[4];
    return 1;
}

static inline int arch_clone_error(const uint8_t *code)
{
    static const uint8_t tail[] = {0xf7, 0xd8, 0x64, 0x89, 0x01, 0x48, 0x83, 0xc8, 0xff, 0xc3};
    if (code[0] != 0x48 || code[1] != 0x8b || code[2] != 0x0d)
        return 0;
    for (unsigned i = 0; i < sizeof(tail); i++)
        if (code[7 + i] != tail[i])
            return 0;
    return 1;
}

/* The new thread's first instructions in clone() have no row here (arch_clone_tail() tells
 * them by the return register); aarch64's need arch_clone_child(). */
#define ARCH_CLONE_CHILD 0
#define ARCH_CLONE_CHILD_BEFORE 8u
#define ARCH_CLONE_CHILD_AFTER 16u

static inline int arch_clone_child(const uint8_t *code)
{
    (void)code;
    return 0;
}

/*
 * glibc's vfork(): `pop %rdi; mov $58,%eax; syscall; push %rdi; cmp $-4095,%eax; jae ERR;
 * ret` keeps its return address in %rdi across the system call, where the child and the
 * parent both come back, and says so in its unwind information to its end (a rule the
 * tables do not follow). ARCH_VFORK_LEN bytes from its entry; a pc 1 to
 * ARCH_VFORK_LEN - 1 bytes past it has its caller in %rdi, and its CFA at the stack
 * pointer before the push (ARCH_VFORK_PUSHED bytes in) and 8 bytes above it from there.
 * arch_vfork_at() reads the ARCH_VFORK_PEEK bytes that start ARCH_VFORK_LEN - 1 before
 * the pc and says how far past the entry the pc is, 0 when it is not there. (The error
 * path past the ret, taken when the system call fails, is not recognised.)
 */
#define ARCH_VFORK 1
#define ARCH_VFORK_LEN 17u
#define ARCH_VFORK_PUSHED 9u
#define ARCH_VFORK_PEEK (2u * ARCH_VFORK_LEN - 1u)

static inline unsigned arch_vfork_at(const uint8_t *code)
{
    static const uint8_t vfork[ARCH_VFORK_LEN] = {0x5f, 0xb8, 0x3a, 0x00, 0x00, 0x00,
                                                  0x0f, 0x05, 0x57, 0x3d, 0x01, 0xf0,
                                                  0xff, 0xff, 0x73, 0x01, 0xc3};
    for (unsigned past = 1; past < ARCH_VFORK_LEN; past++) {
        const uint8_t *entry = code + (ARCH_VFORK_LEN - 1 - past);
        unsigned i = 0;
        while (i < ARCH_VFORK_LEN && entry[i] == vfork[i])
            i++;
        if (i == ARCH_VFORK_LEN)
            return past;
    }
    return 0;
}

/* The length of an `ff /2` (call near, indirect) instruction whose ModRM byte is m and
 * SIB byte (when there is one) s, opcode included. */
static inline unsigned arch_ff2_len(uint8_t m, uint8_t s)
{
    unsigned mod = m >> 6, rm = m & 7u, len = 2;
    if (mod == 3)
        return len;
    if (rm == 4) {
        len++;
        if (mod == 0 && (s & 7u) == 5)
            len += 4;
    }
    if (mod == 1)
        len += 1;
    else if (mod == 2 || (mod == 0 && rm == 5))
        len += 4;
    return len;
}

/* 1 when the ARCH_CALL_PEEK bytes before a candidate return address (before[7] is the byte
 * just before it) end with a call instruction: `call rel32` (e8), or `call *r/m` (ff /2,
 * with its length matching the ModRM form). A word on the stack that passes is a return
 * address but for a very unlikely coincidence. */
static inline int arch_is_call_site(const uint8_t *before)
{
    if (before[3] == 0xe8)
        return 1;
    for (unsigned k = 2; k <= 7; k++) {
        const uint8_t *op = before + 8 - k;
        if (op[0] == 0xff && ((op[1] >> 3) & 7u) == 2 &&
            arch_ff2_len(op[1], k >= 3 ? op[2] : 0) == k)
            return 1;
    }
    return 0;
}

/* The registers of the code that expands it, into four uintptr_t lvalues: pc (an address
 * inside the expansion), sp and fp as they are there, lr 0. A walk can start at this
 * point of a function exactly (the backtrace API walks from its own frame). */
#define ARCH_HERE(pc, sp, fp, lr)                                                          \
    do {                                                                                   \
        __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"            \
                         : "=r"(pc), "=r"(sp), "=r"(fp));                                  \
        (lr) = 0;                                                                          \
    } while (0)

/*
 * Frameless stubs of code generators, which have no unwind information and keep no frame
 * pointer, recognized by their bytes around the return address into them: CPython 3.12's
 * perf trampoline (`python -X perf`: `sub $8,%rsp; call *%rcx; add $8,%rsp; ret`, copied
 * into anonymous memory once per Python function). arch_stub_cfa() gets the
 * ARCH_STUB_BEFORE bytes before the return address and ARCH_STUB_AFTER at it, and answers
 * the stub frame's CFA offset from its stack pointer (the return address is the word
 * below the CFA, the frame pointer is untouched), or 0 when the bytes are no known stub.
 */
#define ARCH_STUB_BEFORE 6u
#define ARCH_STUB_AFTER 5u
static inline unsigned arch_stub_cfa(const uint8_t *code)
{
    static const uint8_t cpython_trampoline[ARCH_STUB_BEFORE + ARCH_STUB_AFTER] = {
        0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3};
    for (unsigned i = 0; i < sizeof(cpython_trampoline); i++)
        if (code[i] != cpython_trampoline[i])
            return 0;
    return 16;
}

/*
 * Signal frames. A handler returns into the sigreturn trampoline (glibc's __restore_rt:
 * `mov $15,%rax; syscall`), and the kernel put the interrupted context right above that
 * return address: a frame whose return address (at fp + 8) is the trampoline has the
 * ucontext_t at fp + 16. ARCH_UC_*_OFF locate the registers inside it.
 */
#define ARCH_SIGRETURN_LEN 9u
#define ARCH_UC_PC_OFF (offsetof(ucontext_t, uc_mcontext.gregs) + REG_RIP * sizeof(greg_t))
#define ARCH_UC_SP_OFF (offsetof(ucontext_t, uc_mcontext.gregs) + REG_RSP * sizeof(greg_t))
#define ARCH_UC_FP_OFF (offsetof(ucontext_t, uc_mcontext.gregs) + REG_RBP * sizeof(greg_t))

static inline int arch_is_sigreturn(const uint8_t *code)
{
    static const uint8_t tramp[ARCH_SIGRETURN_LEN] = {0x48, 0xc7, 0xc0, 0x0f, 0x00,
                                                      0x00, 0x00, 0x0f, 0x05};
    for (unsigned i = 0; i < ARCH_SIGRETURN_LEN; i++)
        if (code[i] != tramp[i])
            return 0;
    return 1;
}

/* The interrupted context's address, from the frame pointer of the frame that returns into
 * the trampoline; 0 when the architecture cannot tell. */
static inline uintptr_t arch_sigframe_uc(uintptr_t fp)
{
    return fp + 16;
}

/* The same from the stack pointer at the trampoline (the handler's return popped the
 * trampoline's address off the kernel's frame: the ucontext_t is what is left). */
static inline uintptr_t arch_sigframe_uc_at(uintptr_t sp)
{
    return sp;
}

/* The signal's siginfo from the same stack pointer (also in the sigreturn system call,
 * whose user pc is just past the trampoline): the kernel's ucontext is glibc's up to
 * uc_sigmask, which is 8 bytes in the kernel's, and its siginfo follows it. */
static inline uintptr_t arch_sigframe_info_at(uintptr_t sp)
{
    return sp + offsetof(ucontext_t, uc_sigmask) + 8u;
}
#define ARCH_UC_LR_OFF 0 /* no link register */

/*
 * The C library's __start_context (glibc, x86_64: `mov %rbx,%rsp; mov (%rsp),%rdi`): where
 * a coroutine that makecontext() set up returns to. makecontext() writes its address as the
 * return address of the coroutine's function, so a walk meets it as a frame whose pc is the
 * first instruction of __start_context (pc - 1 lies outside it: no row there); the frame
 * below it is the coroutine's first. ARCH_CONTEXT_START_LEN bytes at that pc.
 */
#define ARCH_CONTEXT_START 1
#define ARCH_CONTEXT_START_LEN 7u
static inline int arch_context_start(const uint8_t *code)
{
    static const uint8_t start[ARCH_CONTEXT_START_LEN] = {0x48, 0x89, 0xdc, 0x48, 0x8b, 0x3c, 0x24};
    for (unsigned i = 0; i < ARCH_CONTEXT_START_LEN; i++)
        if (code[i] != start[i])
            return 0;
    return 1;
}

/*
 * Calling fn(arg) on another stack, whose top (one past its highest byte) is top, aligned
 * to ARCH_STACK_ALIGN: the stack pointer is moved there for the call and back after it. The
 * frame pointer is left alone, so that fn's first frame links to the caller's on the old
 * stack and a frame-pointer walk crosses over. The old stack pointer is kept in a
 * callee-saved register; everything a call may clobber is declared so.
 */
#define ARCH_STACK_ALIGN 16u
static inline void arch_call_on_stack(void (*fn)(void *), void *arg, uintptr_t top)
{
    __asm__ volatile("mov %%rsp, %%rbx\n\t"
                     "mov %[top], %%rsp\n\t"
                     "call *%[fn]\n\t"
                     "mov %%rbx, %%rsp"
                     : "+D"(arg), [fn] "+a"(fn), [top] "+S"(top)
                     :
                     : "rbx", "rcx", "rdx", "r8", "r9", "r10", "r11", "memory", "cc", "xmm0",
                       "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
                       "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "st", "st(1)",
                       "st(2)", "st(3)", "st(4)", "st(5)", "st(6)", "st(7)");
}

/* The stack pointer of the calling function (an upper bound of what it uses below). */
static inline uintptr_t arch_sp_here(void)
{
    uintptr_t sp;
    __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
    return sp;
}

#endif
