/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The in-process walk (see walk.h), on the signal handler's path: common/uw_step.h with
 * this thread's memory. Stack words are loaded directly (the bounds are the thread's own
 * stack, proven readable outside the handler); a return address must lie in the code map
 * (sampler/codemap.h), entered once for the whole walk, which also gives each frame's
 * unwind table; instruction bytes are read only through the fault-proof probe: the code
 * map says what was code when it was read, not that it is still mapped now (glibc loads
 * and unloads modules behind our dlopen wrappers, and a JIT frees code at will).
 */
#include "sampler/walk.h"

#include "common/uw_step.h"
#include "sampler/check.h"
#include "sampler/codemap.h"
#include "sampler/probe.h"

/* The accessors' state: the code map the walk entered, and what it counted. */
struct self_mem {
    struct cmn_uw_mem base; /* first: the walk hands back a pointer to it */
    struct smp_codemap_view map;
    const struct smp_code_range *last; /* the range found last: the next frame is often in it */
    int use_tables;
    unsigned n_pending;
    unsigned n_unknown;
    uintptr_t thread_lo, thread_hi;
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

/* The range of the entered map that holds pc, or NULL; the last one found first. */
static const struct smp_code_range *find(struct self_mem *s, uintptr_t pc)
{
    const struct smp_code_range *r = s->last;
    if (r != NULL && pc >= r->start && pc < r->end)
        return r;
    r = smp_codemap_view_find(&s->map, pc);
    if (r != NULL)
        s->last = r;
    return r;
}

/* An address in no range of the map (which was read at start and at dlopen()) may be code
 * mapped since, by the program (a JIT) or by glibc itself: the map is asked to be read
 * again, and a later walk gets past it. */
static int self_is_code(const struct cmn_fp_mem *m, uintptr_t addr)
{
    struct self_mem *s = (struct self_mem *)m;
    if (s->map.table == NULL)
        return !s->map.gave_up; /* nothing published yet: every address passes */
    if (find(s, addr) != NULL)
        return 1;
    smp_codemap_want_rescan();
    return 0;
}

/* The table of the module holding pc. A pc in no known range, or in a module whose table
 * is not built yet, asks libprof/ for it. */
static const struct cmn_uw_table *self_table(const struct cmn_uw_mem *m, uintptr_t pc,
                                             uintptr_t *bias, unsigned *info)
{
    struct self_mem *s = (struct self_mem *)m;
    if (!s->use_tables || s->map.table == NULL)
        return NULL;
    const struct smp_code_range *r = find(s, pc);
    if (r == NULL) {
        s->n_unknown++;
        smp_codemap_want_rescan();
        return NULL;
    }
    if (r->table != NULL) {
        *bias = r->bias;
        return r->table;
    }
    if (r->module != 0) {
        s->n_pending++;
        *info = CMN_UW_PENDING;
        smp_codemap_want(r->module);
    } else {
        *info = CMN_UW_ANON;
    }
    return NULL;
}

static int self_other_stack(const struct cmn_uw_mem *m, uintptr_t sp, uintptr_t *lo,
                            uintptr_t *hi)
{
    const struct self_mem *s = (const struct self_mem *)m;
    if (s->thread_hi == 0 || sp < s->thread_lo || sp >= s->thread_hi)
        return 0;
    *lo = s->thread_lo;
    *hi = s->thread_hi;
    return 1;
}

SMP_READS_STACK unsigned smp_walk(const struct cmn_fp_regs *regs, const struct smp_stack *stack,
                                  uint64_t *frames, unsigned max_frames, unsigned mode,
                                  struct smp_walk_out *out)
{
    struct self_mem m = {
        .base = {.fp = {self_stack_word, self_code, self_is_code},
                 .table = self_table,
                 .other_stack = self_other_stack},
        .use_tables = mode != SMP_WALK_FP,
        .thread_lo = stack->thread_lo,
        .thread_hi = stack->thread_hi,
    };
    struct cmn_uw_walk w = {.lo = stack->lo, .hi = stack->hi, .root_fp = stack->root_fp,
                            .frames = frames, .max_frames = max_frames,
                            .stop_lo = stack->root_lo, .stop_hi = stack->root_hi,
                            .keep_outer = SMP_WALK_KEEP_OUTER(max_frames),
                            .walk_cap = SMP_WALK_CAP,
                            .tables_only = mode == SMP_WALK_TABLES};
    smp_codemap_enter(&m.map);
    unsigned n = cmn_uw_walk(&m.base, regs, &w);
    smp_codemap_leave(&m.map);
    SMP_RAW_CHECK(n >= 1 && n <= max_frames, "walk: frames out of range");
    out->stop_reason = w.stop_reason;
    out->flags = w.flags;
    out->n_by_table = w.n_by_table;
    out->n_by_fp = w.n_by_fp;
    out->n_pending = m.n_pending;
    out->n_unknown = m.n_unknown;
    out->n_elided = w.n_elided;
    return n;
}
