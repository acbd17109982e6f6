/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Frame-pointer stepper, on the signal handler's path: the logic of common/fp_step.h
 * with this thread's memory. Stack words are loaded directly (the bounds are the thread's
 * own stack, proven readable outside the handler); a return address must lie in the code
 * map (sampler/codemap.h), entered once for the whole walk; instruction bytes are read
 * only through the fault-proof probe: the code map says what was code when it was read,
 * not that it is still mapped now (glibc loads and unloads modules behind our dlopen
 * wrappers, and a JIT frees code at will).
 */
#include "sampler/walk_fp.h"

#include "common/fp_step.h"
#include "sampler/check.h"
#include "sampler/codemap.h"
#include "sampler/probe.h"

/* The accessors' state: the code map the walk entered. */
struct self_mem {
    struct cmn_fp_mem base; /* first: the walk hands back a pointer to it */
    struct smp_codemap_view map;
};

SMP_READS_STACK static int self_stack_word(const struct cmn_fp_mem *m, uintptr_t addr,
                                           uintptr_t *out)
{
    (void)m;
    *out = *(const uintptr_t *)addr;
    return 1;
}

static int self_code(const struct cmn_fp_mem *m, uintptr_t addr, uint8_t *out, unsigned n)
{
    (void)m;
    return smp_probe_read(out, addr, n) == 0 ? 0 : -1;
}

static int self_is_code(const struct cmn_fp_mem *m, uintptr_t addr)
{
    return smp_codemap_view_contains(&((const struct self_mem *)m)->map, addr);
}

static void self_mem_enter(struct self_mem *m)
{
    m->base.stack_word = self_stack_word;
    m->base.code = self_code;
    m->base.is_code = self_is_code;
    smp_codemap_enter(&m->map);
}

SMP_READS_STACK unsigned smp_walk_fp(const struct cmn_fp_regs *regs, const struct smp_stack *stack,
                                     uint64_t *frames, unsigned max_frames,
                                     uint8_t *stop_reason, uint8_t *flags)
{
    struct self_mem m;
    self_mem_enter(&m);
    unsigned n = cmn_fp_walk(&m.base, regs, stack->lo, stack->hi, stack->root_fp, frames,
                             max_frames, stop_reason, flags);
    smp_codemap_leave(&m.map);
    SMP_RAW_CHECK(n <= max_frames, "walk_fp: more frames than asked for");
    return n;
}
