/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The stack walk, once, for every place that walks a stack: the sampling and snapshot
 * handlers walking their own thread (sampler/walk.c), the backtrace API, and the prof
 * command walking copies of another process's stacks (attach/). Each frame is stepped by
 * the unwind table of the module its pc lies in (common/uw_table.h), where there is one;
 * elsewhere by frame pointer (common/fp_step.h). How memory and tables are reached is the
 * caller's (struct cmn_uw_mem): direct loads and the code map in the handler, a stack
 * copy and the target's files from outside.
 *
 * A step by table: the frame's rule gives its canonical frame address (CFA: the stack
 * pointer before the call that made the frame), the slot of the return address and
 * whether the caller's frame pointer was saved, and where. The caller's pc is the return
 * address, its stack pointer the CFA. The leaf's row says where its return address is at
 * the exact instruction it was interrupted at (a prologue, an epilogue, a leaf without a
 * frame), so the leaf's caller is proven like any other. Other frames' pcs are return
 * addresses: their rows are looked up at pc - 1, inside the call. A return into the
 * signal trampoline (a CMN_UW_SIGNAL row) is crossed: the interrupted context the kernel
 * saved above it gives the next pc, exact again, and its stack pointer, which may lie on
 * another stack (an application's handler running on its alternate stack).
 *
 * Every stack read is bounds-checked ([sp, hi) of the stack the frame is on, aligned),
 * every CFA must lie strictly above the last, every return address in code; anything
 * else stops the walk with its reason (PROF_STOP_*). It stops complete (PROF_STOP_END)
 * at a frame whose return address is undefined (the C library's _start and the first
 * frame of a clone()d thread say so), at a return into the C library's __start_context
 * (a makecontext() coroutine's first frame: cmn_uw_context_start()), at a new thread still in the C library's clone()
 * (cmn_uw_clone_tail(), cmn_uw_clone_child()), at a null return address or frame
 * pointer, or at root_fp, the frame of the caller's entry trampoline, which is not
 * recorded. Header-only; async-signal-safe when the accessors are.
 *
 * Signal handler's path: allowed, with accessors that are async-signal-safe.
 */
#ifndef PROF_COMMON_UW_STEP_H
#define PROF_COMMON_UW_STEP_H

#include <stdint.h>

#include "arch/arch.h"
#include "common/fp_step.h"
#include "common/uw_table.h"
#include "include/libprof/prof_format.h"

/* What the table accessor says besides the table. */
#define CMN_UW_PENDING 1u /* the module's table is still to come */
#define CMN_UW_ANON 2u    /* the code belongs to no module */

/* How the walk reaches memory and tables. */
struct cmn_uw_mem {
    struct cmn_fp_mem fp; /* first: stack words, code bytes, "is code" */
    /* The table of the module that holds code address pc, and the load bias to subtract
     * from pc for it; NULL: step by frame pointer there, or, with CMN_UW_PENDING in *info,
     * stop: the module has a table that is not built yet. CMN_UW_ANON in *info: pc is in
     * code of no module (anonymous memory: a JIT's). NULL accessor: never a table. */
    const struct cmn_uw_table *(*table)(const struct cmn_uw_mem *m, uintptr_t pc,
                                        uintptr_t *bias, unsigned *info);
    /* The bounds of another stack of the thread's that holds sp (its own, when the walk
     * began on the alternate signal stack): 1 and *lo, *hi set, else 0. May be NULL. */
    int (*other_stack)(const struct cmn_uw_mem *m, uintptr_t sp, uintptr_t *lo,
                       uintptr_t *hi);
    /* Go's cgo call (CMN_UW_GO_CGO): the stack of the goroutine whose g is at address g,
     * [*lo, *hi) (g.stack: the g's first two words, read from live memory), and the stack
     * pointer depth bytes below its top, *sp, which the walk may read from there up; 1,
     * else 0 (g unreadable, or a depth its stack does not hold). NULL where memory is not
     * live (a copy of the stack, taken earlier: the goroutine's stack is not in it and may
     * have changed since). */
    int (*go_stack)(const struct cmn_uw_mem *m, uintptr_t g, uintptr_t depth, uintptr_t *sp,
                    uintptr_t *lo, uintptr_t *hi);
};

/* A walk's limits and results. */
struct cmn_uw_walk {
    uintptr_t lo, hi;     /* the stack the walk starts on: [lo, hi) */
    uintptr_t root_fp;    /* the entry trampoline's frame: the walk ends there, 0 none */
    uint64_t *frames;     /* out: leaf pc, then return addresses */
    unsigned max_frames;  /* >= 1 */
    unsigned keep_outer;  /* 0, or the outermost frames kept past max_frames (see
                           * cmn_uw_walk()); then keep_outer + 2 <= max_frames */
    unsigned long walk_cap; /* with keep_outer: the frames walked at most */
    int tables_only;      /* 1: a pc without a table row stops the walk (PROF_STOP_NO_INFO)
                           * instead of a step by frame pointer */
    uintptr_t stop_lo, stop_hi; /* code whose return addresses end the walk complete, not
                                 * recorded (entry trampolines known by address); 0 none */
    uint8_t stop_reason;  /* out: PROF_STOP_* */
    uint8_t flags;        /* out: PROF_SAMPLE_LEAF_CALLER when the leaf's caller came from
                           * its instruction bytes (a frame-pointer step) */
    uint32_t n_by_table;  /* out: frames stepped by an unwind table */
    uint32_t n_by_fp;     /* out: frames stepped by frame pointer */
    uint32_t n_elided;    /* out: frames left out between the two ends (PROF_FRAME_ELIDED) */
    uintptr_t fp;         /* out: the frame pointer at the last frame, when fp_known */
    int fp_known;
};

/* The registers of the frame being stepped. */
struct cmn_uw_frame {
    uintptr_t pc, sp, fp, lr;
    int exact;      /* pc is an interrupted instruction, not a return address */
    int fp_known;   /* fp holds the frame pointer's value */
    int lr_known;   /* lr holds the link register's value */
    int sp_exact;   /* sp is the frame's stack pointer (not a lower bound of it) */
    uintptr_t lo, hi; /* the stack the frame is on */
    uintptr_t ret;  /* the leaf's system call return register, when ret_known */
    int ret_known;
    uintptr_t arg;  /* the leaf's first argument register, when arg_known */
    int arg_known;
};

CMN_FP_INLINE int cmn_uw_word(const struct cmn_uw_mem *m, const struct cmn_uw_frame *f,
                              uintptr_t addr, uintptr_t *out)
{
    return cmn_fp_word(&m->fp, addr, f->sp > f->lo ? f->sp : f->lo, f->hi, out);
}

/* Crosses a signal frame: the interrupted context lies at arch_sigframe_uc_at(sp). */
CMN_FP_INLINE uint8_t cmn_uw_signal(const struct cmn_uw_mem *m, struct cmn_uw_frame *f)
{
    uintptr_t uc = arch_sigframe_uc_at(f->sp), pc, sp, fp, lr = 0;
    if (uc == 0 || !cmn_uw_word(m, f, uc + ARCH_UC_PC_OFF, &pc) ||
        !cmn_uw_word(m, f, uc + ARCH_UC_SP_OFF, &sp) ||
        !cmn_uw_word(m, f, uc + ARCH_UC_FP_OFF, &fp) ||
        (ARCH_HAS_LR && !cmn_uw_word(m, f, uc + ARCH_UC_LR_OFF, &lr)))
        return PROF_STOP_BOUNDS;
    if (sp < f->lo || sp >= f->hi) {
        uintptr_t lo, hi;
        if (m->other_stack == NULL || !m->other_stack(m, sp, &lo, &hi))
            return PROF_STOP_BOUNDS;
        f->lo = lo;
        f->hi = hi;
    } else if (sp <= f->sp) {
        return PROF_STOP_ORDER;
    }
    *f = (struct cmn_uw_frame){.pc = arch_strip_pac(pc), .sp = sp, .fp = fp, .lr = lr,
                               .exact = 1, .fp_known = 1, .lr_known = ARCH_HAS_LR,
                               .sp_exact = 1, .lo = f->lo, .hi = f->hi};
    return PROF_STOP_END;
}

/* Crosses Go's switch to the system stack for a cgo call (CMN_UW_GO_CGO at f's pc, f on
 * the system stack with its exact stack pointer): the caller's stack pointer is the word at
 * sp + 40 when the word at sp + 48 is 0 (no switch: the same stack), else the goroutine's
 * stack top (g.stack.hi of that g) less that word (its depth), on the goroutine's stack,
 * which must hold it; its return address lies there, and its frame pointer is unchanged
 * (asmcgocall keeps none). A walk over a copy (no go_stack) stops, PROF_STOP_RULE, as at
 * any other stack switch: it cannot read the goroutine's stack as it was. */
CMN_FP_INLINE uint8_t cmn_uw_go_cgo(const struct cmn_uw_mem *m, struct cmn_uw_frame *f)
{
    uintptr_t g, depth, sp, lo = f->lo, hi = f->hi, ra;
    if (!f->sp_exact)
        return PROF_STOP_RULE;
    if (!cmn_uw_word(m, f, f->sp + 48, &g) || !cmn_uw_word(m, f, f->sp + 40, &depth))
        return PROF_STOP_BOUNDS;
    if (g == 0) {
        sp = depth;
        if (sp <= f->sp)
            return PROF_STOP_ORDER;
    } else {
        if (m->go_stack == NULL)
            return PROF_STOP_RULE;
        if ((g & (sizeof(uintptr_t) - 1)) || !m->go_stack(m, g, depth, &sp, &lo, &hi))
            return PROF_STOP_BOUNDS;
    }
    struct cmn_uw_frame at = {.sp = sp, .lo = lo, .hi = hi};
    if (sp < lo || sp >= hi || !cmn_uw_word(m, &at, sp, &ra))
        return PROF_STOP_BOUNDS;
    *f = (struct cmn_uw_frame){.pc = arch_strip_pac(ra), .sp = sp + sizeof(uintptr_t),
                               .fp = f->fp, .fp_known = f->fp_known, .sp_exact = 1, .lo = lo,
                               .hi = hi};
    return PROF_STOP_END;
}

/* What a step can end with besides PROF_STOP_*: the walk is complete at this frame
 * (CMN_UW_ENDED), or at the entry trampoline's, which is not recorded (CMN_UW_ROOT). */
#define CMN_UW_ENDED 0xfeu
#define CMN_UW_ROOT 0xffu

/* The caller's frame pointer by rule field fp_at; 0 when it cannot be read. */
CMN_FP_INLINE int cmn_uw_caller_fp(const struct cmn_uw_mem *m, const struct cmn_uw_frame *f,
                                   unsigned fp_at, uintptr_t cfa, uintptr_t *fp, int *known)
{
    *fp = f->fp;
    *known = f->fp_known;
    if (fp_at == CMN_UW_REG_SAME)
        return 1;
    if (fp_at == CMN_UW_REG_UNKNOWN) {
        *known = 0;
        return 1;
    }
    *known = 1;
    if (fp_at == CMN_UW_FP_AT_FP)
        return f->fp_known && cmn_uw_word(m, f, f->fp, fp);
    /* A slot below the stack pointer was popped already (compilers keep the saved rule
     * through `pop %rbp` to the `ret`): the register holds the caller's value again. */
    if (cfa - 8u * fp_at < f->sp) {
        *known = f->fp_known;
        return 1;
    }
    return cmn_uw_word(m, f, cfa - 8u * fp_at, fp);
}

/* One step by the rule of the frame f: f becomes its caller's. PROF_STOP_END when it
 * stepped. */
CMN_FP_INLINE uint8_t cmn_uw_step_rule(const struct cmn_uw_mem *m, struct cmn_uw_frame *f,
                                       uint32_t rule, uintptr_t root_fp)
{
    unsigned kind = cmn_uw_kind(rule);
    intptr_t off = cmn_uw_off(rule);
    uintptr_t cfa;
    unsigned ra_at = cmn_uw_ra(rule);
    /* The link register is known at the leaf and after a signal frame only. */
    if (kind <= CMN_UW_CFA_FP_DEREF && ra_at == CMN_UW_REG_SAME && !f->lr_known)
        return PROF_STOP_RULE;
    if ((kind == CMN_UW_CFA_SP || kind == CMN_UW_PLT) && !f->sp_exact)
        return PROF_STOP_RULE;
    if ((kind == CMN_UW_CFA_FP || kind == CMN_UW_CFA_FP_DEREF) && !f->fp_known)
        return PROF_STOP_RULE;
    switch (kind) {
    case CMN_UW_CFA_SP:
        cfa = f->sp + (uintptr_t)off;
        break;
    case CMN_UW_CFA_FP:
        cfa = f->fp + (uintptr_t)off;
        break;
    case CMN_UW_CFA_FP_DEREF:
        if (!cmn_uw_word(m, f, f->fp + (uintptr_t)off, &cfa))
            return PROF_STOP_BOUNDS;
        break;
    case CMN_UW_PLT:
        cfa = f->sp + 8 + ((f->pc & 15u) >= (uintptr_t)off ? 8 : 0);
        break;
    case CMN_UW_END:
        return CMN_UW_ENDED;
    case CMN_UW_SIGNAL:
        return cmn_uw_signal(m, f);
    case CMN_UW_GO_CGO:
        return cmn_uw_go_cgo(m, f);
    default:
        return PROF_STOP_RULE;
    }
    /* The CFA lies above the frame's stack pointer; only a leaf whose return address is
     * still in the link register (aarch64) may have none of its own (CFA = sp). */
    int lr_leaf = ra_at == CMN_UW_REG_SAME && f->lr_known;
    if (cfa < f->sp || (cfa == f->sp && !lr_leaf))
        return PROF_STOP_ORDER;
    if (cfa > f->hi || (cfa & (sizeof(uintptr_t) - 1)))
        return PROF_STOP_BOUNDS;
    /* The entry trampoline's frame (its CFA sits two words above its frame pointer): its
     * caller is libc's start code, which stacks do not show. */
    if (root_fp != 0 && cfa == root_fp + 2 * sizeof(uintptr_t))
        return CMN_UW_ROOT;
    uintptr_t ra, fp;
    int fp_known;
    if (ra_at == CMN_UW_REG_SAME) {
        if (!f->lr_known)
            return PROF_STOP_RULE;
        ra = f->lr;
    } else if (ra_at > CMN_UW_SLOT_MAX) {
        return PROF_STOP_RULE;
    } else if (!cmn_uw_word(m, f, cfa - 8u * ra_at, &ra)) {
        return PROF_STOP_BOUNDS;
    }
    if (!cmn_uw_caller_fp(m, f, cmn_uw_fp(rule), cfa, &fp, &fp_known))
        return PROF_STOP_BOUNDS;
    *f = (struct cmn_uw_frame){.pc = arch_strip_pac(ra), .sp = cfa, .fp = fp,
                               .fp_known = fp_known, .sp_exact = 1, .lo = f->lo, .hi = f->hi};
    return PROF_STOP_END;
}

/* The interrupted leaf without a table row: the instruction bytes at its pc may prove
 * that its frame is not set up (at its entry, between push and mov of the frame pointer,
 * at its ret; arch_leaf_state()), and where its return address is. 1 with f stepped to
 * the caller, whose frame the frame pointer still describes; 0 when they prove nothing. */
CMN_FP_INLINE int cmn_uw_leaf_bytes(const struct cmn_uw_mem *m, struct cmn_uw_frame *f,
                                    const uint8_t *code, unsigned n)
{
    uintptr_t ra = 0, sp = f->sp;
    unsigned state = n > 0 ? arch_leaf_state(code, n) : ARCH_LEAF_UNKNOWN;
    if (state == ARCH_LEAF_RA_AT_SP) {
        sp = f->sp + sizeof(uintptr_t);
        if (!cmn_uw_word(m, f, f->sp, &ra))
            return 0;
    } else if (state == ARCH_LEAF_RA_AT_SP1) {
        uintptr_t saved_fp;
        sp = f->sp + 2 * sizeof(uintptr_t);
        if (!cmn_uw_word(m, f, f->sp, &saved_fp) || saved_fp != f->fp ||
            !cmn_uw_word(m, f, f->sp + sizeof(uintptr_t), &ra))
            return 0;
    } else if (state == ARCH_LEAF_RA_IN_LR && f->lr_known) {
        ra = f->lr;
    }
    ra = arch_strip_pac(ra);
    if (ra == 0 || !m->fp.is_code(&m->fp, ra))
        return 0;
    *f = (struct cmn_uw_frame){.pc = ra, .sp = sp, .fp = f->fp, .fp_known = f->fp_known,
                               .sp_exact = f->sp_exact, .lo = f->lo, .hi = f->hi};
    return 1;
}

/* The leaf at the C library's clone() tail (arch_clone_tail(): its instructions, code[n]
 * at the pc, and those of its error path are recognised whole). 1: the caller's thread, f
 * stepped to its caller (the return address at sp, nothing pushed); 2: the new thread,
 * whose first frame this is; 0: other code, or the return register unknown. */
CMN_FP_INLINE int cmn_uw_clone_tail(const struct cmn_uw_mem *m, struct cmn_uw_frame *f,
                                    const uint8_t *code, unsigned n)
{
    uint8_t err[ARCH_CLONE_ERROR_LEN];
    uintptr_t err_at, ra;
    if (!f->exact || !f->ret_known || !f->sp_exact || n < ARCH_CLONE_TAIL_LEN ||
        !arch_clone_tail(code, f->pc, &err_at) ||
        m->fp.code(&m->fp, err_at, err, sizeof(err)) != 0 || !arch_clone_error(err))
        return 0;
    if (f->ret == 0)
        return 2;
    if (!cmn_uw_word(m, f, f->sp, &ra) || ra == 0 || !m->fp.is_code(&m->fp, ra))
        return 0;
    *f = (struct cmn_uw_frame){.pc = ra, .sp = f->sp + sizeof(uintptr_t), .fp = f->fp,
                               .fp_known = f->fp_known, .sp_exact = 1, .lo = f->lo,
                               .hi = f->hi};
    return 1;
}

/* 1 when the leaf f is the new thread at its first instructions in the C library's clone()
 * (arch_clone_child(): aarch64, where clone()'s row would give it its creator's caller). */
CMN_FP_INLINE int cmn_uw_clone_child(const struct cmn_uw_mem *m, const struct cmn_uw_frame *f)
{
    uint8_t code[ARCH_CLONE_CHILD_BEFORE + ARCH_CLONE_CHILD_AFTER];
    return ARCH_CLONE_CHILD && f->exact && f->ret_known && f->ret == 0 &&
           f->pc >= ARCH_CLONE_CHILD_BEFORE &&
           m->fp.code(&m->fp, f->pc - ARCH_CLONE_CHILD_BEFORE, code, sizeof(code)) == 0 &&
           arch_clone_child(code);
}

/* The leaf inside the C library's vfork() past the pop of its return address
 * (arch_vfork_at(): the whole code recognised), where the unwind information puts the
 * return address in the first argument's register: 1 with f stepped to its caller (its
 * stack pointer the leaf's, or 8 bytes above once the return address is pushed back), 0
 * when the register is unknown or the code is other. */
CMN_FP_INLINE int cmn_uw_vfork(const struct cmn_uw_mem *m, struct cmn_uw_frame *f)
{
    uint8_t code[ARCH_VFORK_PEEK];
    unsigned past;
    if (!ARCH_VFORK || !f->exact || !f->arg_known || !f->sp_exact ||
        f->pc < ARCH_VFORK_LEN - 1 ||
        m->fp.code(&m->fp, f->pc - (ARCH_VFORK_LEN - 1), code, sizeof(code)) != 0 ||
        (past = arch_vfork_at(code)) == 0)
        return 0;
    uintptr_t ra = arch_strip_pac(f->arg), sp = f->sp + (past >= ARCH_VFORK_PUSHED ? 8u : 0u);
    if (ra == 0 || !m->fp.is_code(&m->fp, ra) || sp > f->hi)
        return 0;
    *f = (struct cmn_uw_frame){.pc = ra, .sp = sp, .fp = f->fp, .fp_known = f->fp_known,
                               .sp_exact = 1, .lo = f->lo, .hi = f->hi};
    return 1;
}

/* 1 when the frame f, a return address without a row in a module that has a table, is the
 * C library's __start_context (arch_context_start()): the frame below is a coroutine's
 * first, and the walk is complete there. */
CMN_FP_INLINE int cmn_uw_context_start(const struct cmn_uw_mem *m, const struct cmn_uw_frame *f)
{
    uint8_t code[ARCH_CONTEXT_START_LEN];
    return ARCH_CONTEXT_START && !f->exact &&
           m->fp.code(&m->fp, f->pc, code, sizeof(code)) == 0 && arch_context_start(code);
}

/* A frame of a known frameless stub (arch_stub_cfa(): a code generator's trampoline in
 * anonymous memory, without unwind information): 1 with f stepped to its caller, 0 when
 * the bytes around the return address are no known stub. */
CMN_FP_INLINE int cmn_uw_stub(const struct cmn_uw_mem *m, struct cmn_uw_frame *f)
{
    uint8_t code[ARCH_STUB_BEFORE + ARCH_STUB_AFTER];
    uintptr_t ra;
    if (f->exact || !f->sp_exact ||
        m->fp.code(&m->fp, f->pc - ARCH_STUB_BEFORE, code, sizeof(code)) != 0)
        return 0;
    unsigned off = arch_stub_cfa(code);
    uintptr_t cfa = f->sp + off;
    if (off == 0 || cfa > f->hi || !cmn_uw_word(m, f, cfa - sizeof(uintptr_t), &ra))
        return 0;
    *f = (struct cmn_uw_frame){.pc = arch_strip_pac(ra), .sp = cfa, .fp = f->fp,
                               .fp_known = f->fp_known, .sp_exact = 1, .lo = f->lo,
                               .hi = f->hi};
    return 1;
}

/* One step by frame pointer from f; *leaf_caller is set when the leaf's caller came from
 * its instruction bytes. */
CMN_FP_INLINE uint8_t cmn_uw_step_fp(const struct cmn_uw_mem *m, struct cmn_uw_frame *f,
                                     uintptr_t root_fp, int is_anon, int *leaf_caller)
{
    if (f->exact && !*leaf_caller) {
        uint8_t code[ARCH_CODE_PEEK];
        unsigned n = cmn_fp_leaf_code(&m->fp, f->pc, code);
        int clone = cmn_uw_clone_tail(m, f, code, n);
        if (clone == 2)
            return CMN_UW_ENDED;
        if (clone == 1 || cmn_uw_leaf_bytes(m, f, code, n)) {
            *leaf_caller = 1;
            return PROF_STOP_END;
        }
    }
    /* Only a code generator's memory holds stubs: the bytes are not read elsewhere. */
    if (is_anon && cmn_uw_stub(m, f))
        return PROF_STOP_END;
    if (!f->fp_known)
        return PROF_STOP_RULE;
    if (f->fp == 0)
        return CMN_UW_ENDED;
    if (f->fp == root_fp)
        return CMN_UW_ROOT;
    if (f->fp >= f->lo && f->fp < f->sp)
        return PROF_STOP_ORDER; /* below the frame's own stack pointer: a cycle, or garbage */
    uint8_t why = cmn_fp_check_frame(f->fp, f->sp > f->lo ? f->sp : f->lo, f->hi, 0);
    if (why != PROF_STOP_END)
        return why;
    uintptr_t ret, next_fp;
    if (!m->fp.stack_word(&m->fp, f->fp + ARCH_FRAME_RET_OFF, &ret) ||
        !m->fp.stack_word(&m->fp, f->fp + ARCH_FRAME_FP_OFF, &next_fp))
        return PROF_STOP_BOUNDS;
    if (ret == 0)
        return CMN_UW_ENDED;
    /* x86_64's frame ends right above the saved pair; aarch64's frame record may sit
     * anywhere in its frame, so the caller's stack pointer is then only a lower bound. */
    *f = (struct cmn_uw_frame){.pc = arch_strip_pac(ret), .sp = f->fp + ARCH_FRAME_CFA_OFF,
                               .fp = next_fp, .fp_known = 1, .sp_exact = ARCH_FP_CFA_EXACT,
                               .lo = f->lo, .hi = f->hi};
    return PROF_STOP_END;
}

/* Where frame t of a walk is kept in w->frames: in order up to the marker's slot
 * (max_frames - keep_outer - 1), then round a ring of keep_outer slots after it, so that
 * whatever the depth the innermost frames and the last keep_outer ones are kept. */
CMN_FP_INLINE unsigned cmn_uw_slot(const struct cmn_uw_walk *w, unsigned long t)
{
    unsigned inner = w->max_frames - w->keep_outer - 1;
    if (w->keep_outer == 0 || t <= inner)
        return (unsigned)t;
    return inner + 1 + (unsigned)((t - inner - 1) % w->keep_outer);
}

CMN_FP_INLINE void cmn_uw_reverse(uint64_t *a, unsigned n)
{
    for (unsigned i = 0; i < n / 2; i++) {
        uint64_t t = a[i];
        a[i] = a[n - 1 - i];
        a[n - 1 - i] = t;
    }
}

/* Ends a walk that saw `total` frames: when more than fit, the marker of the frames left
 * out goes between the innermost and the outermost ones, which the ring holds rotated.
 * Returns the frames kept. */
CMN_FP_INLINE unsigned cmn_uw_finish(struct cmn_uw_walk *w, unsigned long total)
{
    if (w->keep_outer == 0 || total <= w->max_frames)
        return (unsigned)total;
    unsigned inner = w->max_frames - w->keep_outer - 1, k = w->keep_outer;
    uint64_t *ring = w->frames + inner + 1;
    unsigned r = cmn_uw_slot(w, total - k) - (inner + 1); /* where the oldest kept one is */
    cmn_uw_reverse(ring, r);
    cmn_uw_reverse(ring + r, k - r);
    cmn_uw_reverse(ring, k);
    w->n_elided = (uint32_t)(total - inner - k);
    w->frames[inner] = PROF_FRAME_ELIDED | w->n_elided;
    w->flags |= PROF_SAMPLE_ELIDED;
    return w->max_frames;
}

/* The walk. Writes the leaf pc, then one return address per frame, into w->frames, sets
 * w's results and returns the number of frames kept. Without keep_outer it stops at
 * max_frames (PROF_STOP_DEPTH); with it, it walks on (walk_cap frames at most) and keeps
 * the innermost frames, a PROF_FRAME_ELIDED marker and the keep_outer outermost ones.
 * Reads the stack only inside [max(lo, sp), hi) of the stack each frame is on. */
CMN_FP_INLINE unsigned cmn_uw_walk(const struct cmn_uw_mem *m, const struct cmn_fp_regs *regs,
                                   struct cmn_uw_walk *w)
{
    struct cmn_uw_frame f = {.pc = arch_strip_pac(regs->pc), .sp = regs->sp, .fp = regs->fp,
                             .lr = regs->lr, .exact = 1, .fp_known = 1,
                             .lr_known = ARCH_HAS_LR, .sp_exact = 1, .lo = w->lo, .hi = w->hi,
                             .ret = regs->ret, .ret_known = regs->ret_known,
                             .arg = regs->arg, .arg_known = regs->arg_known};
    unsigned long total = 0, cap = w->keep_outer ? w->walk_cap : w->max_frames;
    int leaf_caller = 0;
    uint8_t why;
    /* The last frame is held back until the next: the entry trampoline's return address,
     * known only one step later, is dropped without ever taking a slot of the ring. */
    uint64_t held = 0;
    w->frames[total++] = f.pc;
    w->flags = 0;
    w->n_by_table = w->n_by_fp = w->n_elided = 0;
    for (;;) {
        uintptr_t bias = 0, at = f.exact ? f.pc : f.pc - 1;
        unsigned info = 0;
        const struct cmn_uw_table *t = m->table ? m->table(m, at, &bias, &info) : NULL;
        uint32_t rule = t ? cmn_uw_lookup(t, (uint64_t)(at - bias)) : 0;
        if (total == 1 && cmn_uw_clone_child(m, &f)) {
            why = CMN_UW_ENDED; /* a new thread: its own first frame */
        } else if (total == 1 &&
                   (cmn_uw_kind(rule) == CMN_UW_STOP ||
                    (cmn_uw_kind(rule) >= CMN_UW_CFA_SP && cmn_uw_kind(rule) <= CMN_UW_CFA_FP_DEREF &&
                     cmn_uw_ra(rule) == CMN_UW_REG_UNKNOWN)) &&
                   cmn_uw_vfork(m, &f)) {
            /* The leaf's row cannot give its return address (in a register): vfork(). The
             * code is read only for such rows, never for the many leaves without one. */
            why = PROF_STOP_END;
            leaf_caller = 1;
        } else if (t != NULL && cmn_uw_kind(rule) == CMN_UW_NONE && cmn_uw_context_start(m, &f)) {
            why = CMN_UW_ENDED; /* a coroutine's first frame returns there */
        } else if (info & CMN_UW_PENDING) {
            /* Without its table a frame-pointer step could skip the caller of a function
             * that keeps no frame pointer: the walk stops for the moment it takes (at the
             * entry trampoline's frame it is complete). */
            why = w->root_fp != 0 && f.fp_known && f.fp == w->root_fp ? CMN_UW_ROOT
                                                                      : PROF_STOP_PENDING;
        } else if (cmn_uw_kind(rule) != CMN_UW_NONE) {
            why = cmn_uw_step_rule(m, &f, rule, w->root_fp);
            w->n_by_table++;
        } else if (w->tables_only) {
            why = PROF_STOP_NO_INFO;
        } else {
            why = cmn_uw_step_fp(m, &f, w->root_fp, (info & CMN_UW_ANON) != 0, &leaf_caller);
            w->n_by_fp++;
        }
        if (why == CMN_UW_ROOT && total > 1) {
            total--; /* the return address into the trampoline */
            held = 0;
        }
        if (why != PROF_STOP_END)
            break;
        if (f.pc == 0 || (f.pc >= w->stop_lo && f.pc < w->stop_hi)) {
            why = CMN_UW_ENDED;
            break;
        }
        if (!m->fp.is_code(&m->fp, f.pc)) {
            why = PROF_STOP_CODE;
            break;
        }
        if (total >= cap) {
            why = PROF_STOP_DEPTH;
            break;
        }
        if (held != 0)
            w->frames[cmn_uw_slot(w, total - 1)] = held;
        held = f.pc;
        total++;
    }
    if (held != 0)
        w->frames[cmn_uw_slot(w, total - 1)] = held;
    if (leaf_caller && total >= 2)
        w->flags = PROF_SAMPLE_LEAF_CALLER;
    w->fp = f.fp;
    w->fp_known = f.fp_known;
    w->stop_reason = why == CMN_UW_ENDED || why == CMN_UW_ROOT ? PROF_STOP_END : why;
    return cmn_uw_finish(w, total);
}

#endif
