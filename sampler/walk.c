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
    uintptr_t stack_lo, stack_hi; /* the stack the walk began on */
    /* A probed stack (smp_stack.probed): [probed_lo, proven_hi) is proven readable, page by
     * page from the first; the page at win_lo is copied in win. */
    int probed;
    uintptr_t probed_lo, proven_hi, win_lo;
    int win_valid;
    uint8_t win[SMP_PROBE_PAGE];
};

/* The word at addr of a probed stack: its page is proven readable, with every page below it
 * down to the stack's first, then read through the window. 0 when it is not. */
static int probed_word(struct self_mem *s, uintptr_t addr, uintptr_t *out)
{
    uintptr_t page = addr & ~(uintptr_t)(SMP_PROBE_PAGE - 1);
    if ((addr & (sizeof(uintptr_t) - 1)) || addr < s->probed_lo)
        return 0;
    if (!s->win_valid || page != s->win_lo) {
        if (page >= s->proven_hi && page - s->proven_hi >= SMP_PROBED_JUMP)
            return 0;
        while (s->proven_hi <= page) {
            unsigned n = (unsigned)((page - s->proven_hi) / SMP_PROBE_PAGE) + 1;
            if (n > SMP_PROBE_MAX_PAGES)
                n = SMP_PROBE_MAX_PAGES;
            s->win_valid = 0;
            if (smp_probe_pages(s->win, s->proven_hi, n) != 0)
                return 0;
            s->proven_hi += (uintptr_t)n * SMP_PROBE_PAGE;
            s->win_lo = s->proven_hi - SMP_PROBE_PAGE;
            s->win_valid = 1;
        }
        if (!s->win_valid || page != s->win_lo) {
            s->win_valid = 0;
            if (smp_probe_pages(s->win, page, 1) != 0)
                return 0;
            s->win_lo = page;
            s->win_valid = 1;
        }
    }
    __builtin_memcpy(out, s->win + (addr - page), sizeof(*out));
    return 1;
}

SMP_READS_STACK static int self_stack_word(const struct cmn_fp_mem *m, uintptr_t addr,
                                           uintptr_t *out)
{
    struct self_mem *s = (struct self_mem *)m;
    if (s->probed && (addr < s->thread_lo || addr >= s->thread_hi))
        return probed_word(s, addr, out);
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

/* A goroutine's stack (Go's cgo call, common/uw_step.h): g.stack read through the probe;
 * the walk goes on there as on any probed stack, from sp's page up. */
static int self_go_stack(const struct cmn_uw_mem *m, uintptr_t g, uintptr_t depth,
                         uintptr_t *sp, uintptr_t *lo, uintptr_t *hi)
{
    struct self_mem *s = (struct self_mem *)m;
    uintptr_t bounds[2];
    if (smp_probe_read(bounds, g, sizeof(bounds)) != 0 || bounds[0] >= bounds[1] ||
        bounds[1] - bounds[0] > SMP_PROBED_SPAN || depth == 0 ||
        depth > bounds[1] - bounds[0] || (depth & (sizeof(uintptr_t) - 1)))
        return 0;
    *lo = bounds[0];
    *hi = bounds[1];
    *sp = bounds[1] - depth;
    if (s->thread_hi == 0 && !s->probed) {
        s->thread_lo = s->stack_lo; /* the stack the walk leaves, read directly still */
        s->thread_hi = s->stack_hi;
    }
    s->probed = 1;
    s->probed_lo = s->proven_hi = *sp & ~(uintptr_t)(SMP_PROBE_PAGE - 1);
    s->win_valid = 0;
    return 1;
}

SMP_READS_STACK unsigned smp_walk(const struct cmn_fp_regs *regs, const struct smp_stack *stack,
                                  uint64_t *frames, unsigned max_frames, unsigned mode,
                                  struct smp_walk_out *out)
{
    struct self_mem m;
    m.base = (struct cmn_uw_mem){.fp = {self_stack_word, self_code, self_is_code},
                                 .table = self_table,
                                 .other_stack = self_other_stack,
                                 .go_stack = self_go_stack};
    m.last = NULL;
    m.use_tables = mode != SMP_WALK_FP;
    m.n_pending = m.n_unknown = 0;
    m.thread_lo = stack->thread_lo;
    m.thread_hi = stack->thread_hi;
    m.stack_lo = stack->lo;
    m.stack_hi = stack->hi;
    m.probed = stack->probed;
    m.probed_lo = m.proven_hi = stack->lo & ~(uintptr_t)(SMP_PROBE_PAGE - 1);
    m.win_lo = 0;
    m.win_valid = 0;
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
