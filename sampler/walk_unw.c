/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libunwind stepper, on the signal handler's path (see walk_unw.h). It calls only
 * unw_init_local2(), unw_step() and unw_get_reg(), through the pointers libprof/unwind.c
 * resolved when it loaded libunwind (so `make lint` sees no libunwind symbol here; these
 * three are the whole list); everything they need was set up by libprof/unwind.c before
 * the first timer was armed. The busy flag both guards against re-entry (libunwind's
 * per-thread cache is not re-entrant) and tells our dl_iterate_phdr() to serve the
 * snapshot.
 */
#include "sampler/walk_unw.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <stdatomic.h>

#include "arch/arch.h"
#include "include/prof_format.h"
#include "sampler/codemap.h"

#if defined(__x86_64__)
#define FP_REG UNW_X86_64_RBP
#elif defined(__aarch64__)
#define FP_REG UNW_AARCH64_X29
#endif

int smp_unw_enabled;
static struct {
    int (*init_local2)(unw_cursor_t *, unw_context_t *, int);
    int (*step)(unw_cursor_t *);
    int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
} api; /* set once by smp_walk_unw_set_api(), before smp_unw_enabled */
__thread int smp_unw_busy __attribute__((tls_model("initial-exec")));
static _Atomic int paused;  /* > 0 while an object is being unloaded; libprof/ */
static _Atomic int walkers; /* handlers inside libunwind now, all threads */

/* Steps until the walk must end; returns the stop reason. */
static uint8_t step_all(unw_cursor_t *cursor, const struct smp_stack *stack, uintptr_t sp0,
                        uint64_t *frames, unsigned max_frames, unsigned *n)
{
    uintptr_t prev_sp = sp0;
    for (;;) {
        int rc = api.step(cursor);
        if (rc == 0)
            return PROF_STOP_END;
        if (rc < 0)
            return PROF_STOP_BOUNDS;
        unw_word_t ip = 0, sp = 0, fp = 0;
        if (api.get_reg(cursor, UNW_REG_IP, &ip) < 0 || api.get_reg(cursor, UNW_REG_SP, &sp) < 0)
            return PROF_STOP_BOUNDS;
        if (ip == 0)
            return PROF_STOP_END;
        if (!smp_codemap_contains(arch_strip_pac(ip)))
            return PROF_STOP_BOUNDS;
        if (sp < stack->lo || sp > stack->hi)
            return PROF_STOP_BOUNDS;
        if (sp < prev_sp)
            return PROF_STOP_ORDER;
        /* The frame we stepped into is the trampoline's: ip returns into it. */
        if (stack->root_fp != 0 && api.get_reg(cursor, FP_REG, &fp) == 0 &&
            fp == stack->root_fp)
            return PROF_STOP_END;
        if (*n >= max_frames)
            return PROF_STOP_DEPTH;
        frames[(*n)++] = arch_strip_pac(ip);
        prev_sp = sp;
    }
}

unsigned smp_walk_unw(void *ucontext, const struct fpstep_regs *regs,
                      const struct smp_stack *stack, uint64_t *frames, unsigned max_frames,
                      uint8_t *stop_reason)
{
    if (smp_unw_busy)
        return 0;
    /* Announce the walk, then look at `paused`: with both sequentially consistent, an
     * unloader that saw walkers == 0 is certain this walk will see it paused. */
    atomic_fetch_add(&walkers, 1);
    if (atomic_load(&paused) != 0) {
        atomic_fetch_sub(&walkers, 1);
        return 0;
    }
    smp_unw_busy = 1;
    atomic_signal_fence(memory_order_seq_cst);

    unsigned n = 0;
    unw_cursor_t cursor;
    if (api.init_local2(&cursor, (unw_context_t *)ucontext, UNW_INIT_SIGNAL_FRAME) == 0) {
        frames[n++] = arch_strip_pac(regs->pc);
        *stop_reason = step_all(&cursor, stack, regs->sp, frames, max_frames, &n);
    }

    atomic_signal_fence(memory_order_seq_cst);
    smp_unw_busy = 0;
    atomic_fetch_sub(&walkers, 1);
    return n;
}

void smp_walk_unw_set_api(void *init_local2, void *step, void *get_reg)
{
    api.init_local2 = (int (*)(unw_cursor_t *, unw_context_t *, int))init_local2;
    api.step = (int (*)(unw_cursor_t *))step;
    api.get_reg = (int (*)(unw_cursor_t *, unw_regnum_t, unw_word_t *))get_reg;
}

void smp_walk_unw_pause(void)
{
    atomic_fetch_add(&paused, 1);
    while (atomic_load(&walkers) != 0)
        continue; /* a walk takes microseconds; no call, so nothing here can block */
}

void smp_walk_unw_resume(void)
{
    atomic_fetch_sub(&paused, 1);
}
