/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Frame-pointer stepper, on the signal handler's path: the logic of sampler/fp_step.h
 * with this thread's memory. Stack words are loaded directly (the bounds are the thread's
 * own stack, proven readable outside the handler); a return address must lie in the code
 * map (sampler/codemap.h); instruction bytes are loaded directly when the code map has
 * them in a readable mapping (the thread was just running there, the common case, at no
 * cost), else through the fault-proof probe, which costs a system call.
 */
#include "sampler/walk_fp.h"

#include "sampler/codemap.h"
#include "sampler/fp_step.h"
#include "sampler/probe.h"

SMP_READS_STACK static int self_stack_word(const struct fpstep_mem *m, uintptr_t addr,
                                           uintptr_t *out)
{
    (void)m;
    *out = *(const uintptr_t *)addr;
    return 1;
}

static int self_code(const struct fpstep_mem *m, uintptr_t addr, uint8_t *out, unsigned n)
{
    (void)m;
    if (smp_codemap_readable(addr, n)) {
        const volatile uint8_t *at = (const volatile uint8_t *)addr;
        for (unsigned i = 0; i < n; i++)
            out[i] = at[i];
        return 0;
    }
    return smp_probe_read(out, addr, n) == 0 ? 0 : -1;
}

static int self_is_code(const struct fpstep_mem *m, uintptr_t addr)
{
    (void)m;
    return smp_codemap_contains(addr);
}

static const struct fpstep_mem self_mem = {
    .stack_word = self_stack_word,
    .code = self_code,
    .is_code = self_is_code,
};

SMP_READS_STACK uintptr_t smp_walk_fp_leaf_caller(const struct fpstep_regs *regs, uintptr_t lo,
                                                  uintptr_t hi)
{
    return arch_strip_pac(fpstep_leaf_caller(&self_mem, regs, lo, hi));
}

SMP_READS_STACK unsigned smp_walk_fp(const struct fpstep_regs *regs, const struct smp_stack *stack,
                                     uint64_t *frames, unsigned max_frames,
                                     uint8_t *stop_reason, uint8_t *flags)
{
    return fpstep_walk(&self_mem, regs, stack->lo, stack->hi, stack->root_fp, frames,
                       max_frames, stop_reason, flags);
}
