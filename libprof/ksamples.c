/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Kernel-time samples (see ksamples.h). The ring is the kernel's: a metadata page, then
 * data pages that the kernel appends records to (data_head) and this reader consumes
 * (data_tail). A PERF_RECORD_SAMPLE with the sample type sampler/timer_perf.c asks for:
 *
 *   header | pid u32 | tid u32 | time u64 | nr u64 | ips[nr] u64 | abi u64 |
 *   regs[ARCH_PERF_N_REGS] u64 | size u64 | stack[size] | dyn_size u64 (when size != 0)
 *
 * ips start with the PERF_CONTEXT_USER marker, then the pc the thread returns to, then the
 * return addresses of the kernel's frame-pointer walk from the user frame pointer. regs
 * are the user registers where the thread entered the kernel, stack the bytes at its
 * stack pointer (dyn_size of them were copied).
 */
#include "libprof/ksamples.h"

#include <linux/perf_event.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "common/clock.h"
#include "common/perf_ring.h"
#include "common/uw_step.h"
#include "include/libprof/prof_format.h"
#include "libprof/unwind.h"
#include "libprof/writer.h"
#include "sampler/codemap.h"
#include "sampler/defer.h"
#include "sampler/handler.h"
#include "sampler/probe.h"
#include "sampler/timer_perf.h"
#include "sampler/walk.h"

#define LP_KSAMPLE_MAX_BYTES (LP_KSAMPLE_MAX_STACK + 8192u) /* a record this reader takes */
#define LP_KSAMPLE_MAX_BPS (LP_KSAMPLE_MAX_STACK / 16u) /* frame pointers in the copy */
#define LP_KSAMPLE_MAX_PASSES 16u /* walks of one sample that build a pending table each */
#define LP_KSAMPLE_MIN_SPAN_NS 5000000u /* rates are measured over 5 ms at least */
#define LP_KSAMPLE_BUSY_HOLD_NS 500000000u /* a filling ring keeps the short period so long */

static void count(unsigned idx, uint64_t n)
{
    atomic_fetch_add_explicit(&smp_sampler.counters[idx], n, memory_order_relaxed);
}

/* One sample record, taken apart. */
struct ksample {
    uint32_t tid;
    uint64_t time_ns;
    uint64_t count;           /* the counter's value (PERF_SAMPLE_READ), 0 without */
    const unsigned char *ips; /* the kernel's chain: context markers and user pcs */
    uint64_t nr;
    struct cmn_fp_regs regs;  /* where the thread entered the kernel */
    const unsigned char *stack; /* the bytes copied at regs.sp */
    uint64_t stack_len;
};

/* Record body b (len bytes) of ring k's layout into *s; 0, or -1 when it is not one. */
static int parse(const unsigned char *b, size_t len, const struct smp_perf_kring *k,
                 struct ksample *s)
{
    uint32_t pid_tid[2];
    uint64_t abi = 0, regs[ARCH_PERF_N_REGS], size = 0, dyn = 0;
    size_t at = 16;
    if (len < at + 8u * (1u + k->has_read + k->has_callchain))
        return -1;
    memcpy(pid_tid, b, 8);
    memcpy(&s->time_ns, b + 8, 8);
    s->tid = pid_tid[1];
    s->count = 0;
    if (k->has_read) {
        memcpy(&s->count, b + at, 8);
        at += 8;
    }
    s->nr = 0;
    s->ips = b + at;
    if (k->has_callchain) {
        memcpy(&s->nr, b + at, 8);
        at += 8;
        if (s->nr > (len - at) / 8)
            return -1;
        s->ips = b + at;
        at += s->nr * 8;
    }
    if (at + 8 > len)
        return -1;
    memcpy(&abi, b + at, 8);
    at += 8;
    if (abi == PERF_SAMPLE_REGS_ABI_NONE || at + sizeof(regs) + 8 > len)
        return -1;
    memcpy(regs, b + at, sizeof(regs));
    at += sizeof(regs);
    s->regs = (struct cmn_fp_regs){.ret_known = 1, .arg_known = 1};
    arch_perf_regs(regs, &s->regs.pc, &s->regs.sp, &s->regs.fp, &s->regs.lr, &s->regs.ret,
                   &s->regs.arg);
    memcpy(&size, b + at, 8);
    at += 8;
    if (size > len - at || (size > 0 && len - at - size < 8))
        return -1;
    if (size > 0)
        memcpy(&dyn, b + at + size, 8);
    s->stack = b + at;
    s->stack_len = dyn < size ? dyn : size;
    return 0;
}

/* The layout of the perf source's kernel-time counters, and of the switch-out samples of
 * libprof/wall.c: a call chain, no counter value. */
static const struct smp_perf_kring chain_layout = {.has_callchain = 1};

/* The walk's memory: the stack copy, this process's code and the unwind tables. A word
 * beyond the copy is not there (out_of_copy). */
struct copy_mem {
    struct cmn_uw_mem base; /* first */
    struct smp_codemap_view map;
    uintptr_t lo;           /* the copy holds [lo, lo + len) */
    uint64_t len;
    const unsigned char *bytes;
    uint64_t used;          /* bytes of the copy read, from its start */
    int out_of_copy;
    int is_switched;        /* the stack went on onto another one (copy_go_stack()) */
    int use_tables;         /* 0 with PROF_UNWIND=fp */
    unsigned n_unknown;     /* frames whose pc is in no range of the code map */
};

static int copy_word(const struct cmn_fp_mem *m, uintptr_t addr, uintptr_t *out)
{
    struct copy_mem *c = (struct copy_mem *)m;
    if (addr < c->lo || addr - c->lo > c->len || c->len - (addr - c->lo) < sizeof(*out)) {
        c->out_of_copy = 1;
        return 0;
    }
    memcpy(out, c->bytes + (addr - c->lo), sizeof(*out));
    if (addr - c->lo + sizeof(*out) > c->used)
        c->used = addr - c->lo + sizeof(*out);
    return 1;
}

/* Go's cgo call: the goroutine's stack is not in the copy (nor, by now, as it was), so the
 * stack goes on past it: the thread's samples are cut, and a thread whose samples are
 * moves to the perf source, whose handler walks live memory (libprof/timers.c). */
static int copy_go_stack(const struct cmn_uw_mem *m, uintptr_t g, uintptr_t depth,
                         uintptr_t *sp, uintptr_t *lo, uintptr_t *hi)
{
    (void)g, (void)depth, (void)sp, (void)lo, (void)hi;
    struct copy_mem *c = (struct copy_mem *)m;
    c->out_of_copy = 1;
    c->is_switched = 1;
    return 0;
}

static int copy_code(const struct cmn_fp_mem *m, uintptr_t addr, uint8_t *out, unsigned n)
{
    (void)m;
    return smp_probe_read(out, addr, n) == 0 ? 0 : -1;
}

static int copy_is_code(const struct cmn_fp_mem *m, uintptr_t addr)
{
    struct copy_mem *c = (struct copy_mem *)m;
    if (smp_codemap_view_contains(&c->map, addr))
        return 1;
    /* Code mapped since the map was read (a JIT's): the walk reads it again. */
    if (c->map.table != NULL)
        c->n_unknown++;
    return 0;
}

static const struct cmn_uw_table *copy_table(const struct cmn_uw_mem *m, uintptr_t pc,
                                             uintptr_t *bias, unsigned *info)
{
    struct copy_mem *c = (struct copy_mem *)m;
    const struct smp_code_range *r = c->use_tables ? smp_codemap_view_find(&c->map, pc) : NULL;
    if (c->use_tables && r == NULL && c->map.table != NULL)
        c->n_unknown++;
    if (r == NULL || r->table == NULL) {
        if (r != NULL && r->module != 0) {
            *info = CMN_UW_PENDING;
            smp_codemap_want(r->module);
        } else if (r != NULL) {
            *info = CMN_UW_ANON;
        }
        return NULL;
    }
    *bias = r->bias;
    return r->table;
}

/* The rule of the frame whose pc is frames[i] (a return address but for the leaf). */
static uint32_t rule_at(const struct copy_mem *c, const uint64_t *frames, unsigned i)
{
    uintptr_t bias = 0, at = (uintptr_t)frames[i] - (i > 0);
    unsigned info = 0;
    const struct cmn_uw_table *t = copy_table(&c->base, at, &bias, &info);
    return t ? cmn_uw_lookup(t, at - bias) : 0;
}

/* 1 when the frame of frames[i] is proven a frame-pointer frame, or frame pointers are
 * what PROF_UNWIND=fp trusts anyway. */
static int fp_frame(const struct copy_mem *c, const uint64_t *frames, unsigned i)
{
    return !c->use_tables || cmn_uw_is_fp_frame(rule_at(c, frames, i));
}

/* Where the copy ran out, the kernel's frame-pointer walk goes on, but only through frames
 * the tables prove to be frame-pointer frames (elsewhere it read garbage). The frame the
 * walk stopped at has frame pointer fp: the kernel's chain followed frame pointers bp0 (the
 * user's), bp1 = [bp0], ...; its return address after bp_j is ips entry j + 1 past the
 * user pc. Appends what is proven; returns the new count and sets *why. */
static unsigned splice(const struct ksample *k, struct copy_mem *c, uintptr_t fp, uint64_t *frames,
                       unsigned n, unsigned max_frames, unsigned kernel_cap,
                       const struct lp_ksamples_ends *ends, uint8_t *why)
{
    static uint64_t user[LP_KSAMPLE_MAX_FRAMES + 1]; /* the buffer's owner, one at a time */
    unsigned n_user = 0;
    for (uint64_t i = 0; i < k->nr && n_user <= LP_KSAMPLE_MAX_FRAMES; i++) {
        uint64_t ip;
        memcpy(&ip, k->ips + i * 8, 8);
        if (ip < (uint64_t)PERF_CONTEXT_MAX)
            user[n_user++] = ip;
    }
    /* The frame pointers the kernel followed, as far as the copy shows them. */
    uintptr_t bp = k->regs.fp;
    unsigned j = 0;
    for (; j < LP_KSAMPLE_MAX_BPS && bp != fp; j++)
        if (!copy_word(&c->base.fp, bp, &bp))
            return n;
    if (bp != fp || !fp_frame(c, frames, n - 1))
        return n;
    for (unsigned i = j + 1; i < n_user; i++) {
        if (user[i] >= ends->lo && user[i] < ends->hi) {
            *why = PROF_STOP_END;
            return n;
        }
        if (!smp_codemap_view_contains(&c->map, user[i]))
            return n;
        if (n >= max_frames) {
            *why = PROF_STOP_DEPTH;
            return n;
        }
        frames[n++] = user[i];
        if (!fp_frame(c, frames, n - 1))
            return n;
    }
    /* The kernel's walk stopped at its own limit: the stack goes on. */
    if (n_user >= kernel_cap)
        *why = PROF_STOP_DEPTH;
    return n;
}

/* What a walk found besides its frames. */
struct kwalk {
    uint8_t why;         /* PROF_STOP_* */
    uint8_t flags;       /* PROF_SAMPLE_LEAF_CALLER, PROF_SAMPLE_ELIDED */
    uint32_t n_by_table; /* frames stepped by an unwind table */
    uint32_t n_by_fp;    /* and by frame pointer */
    unsigned n_unknown;  /* frames whose pc is in no range of the code map */
    int is_cut;          /* the stack went on past the copy */
    int is_switched;     /* onto another stack (Go's cgo call) */
    uint64_t used;       /* bytes of the copy the walk read */
};

/* The user stack of sample k into frames: walked by the unwind tables over the stack copy,
 * then by the kernel's chain where that is proven (splice()). A stack deeper than
 * max_frames keeps both ends, as the handler's walk does (sampler/walk.h). */
static unsigned walk_once(const struct ksample *k, const struct lp_ksamples_ends *ends,
                          unsigned kernel_cap, unsigned max_frames, uint64_t *frames,
                          struct kwalk *o)
{
    struct copy_mem c = {.base = {.fp = {copy_word, copy_code, copy_is_code},
                                  .table = copy_table, .go_stack = copy_go_stack},
                         .lo = k->regs.sp, .len = k->stack_len, .bytes = k->stack,
                         .use_tables = smp_sampler.walk_mode != SMP_WALK_FP};
    struct cmn_uw_walk w = {.lo = k->regs.sp, .hi = UINTPTR_MAX - 16, .frames = frames,
                            .max_frames = max_frames, .stop_lo = ends->lo,
                            .stop_hi = ends->hi,
                            .keep_outer = SMP_WALK_KEEP_OUTER(max_frames),
                            .walk_cap = SMP_WALK_CAP,
                            .tables_only = smp_sampler.walk_mode == SMP_WALK_TABLES};
    smp_codemap_enter(&c.map);
    unsigned n = cmn_uw_walk(&c.base, &k->regs, &w);
    o->why = w.stop_reason;
    if (c.out_of_copy && w.fp_known && o->why != PROF_STOP_DEPTH && w.n_elided == 0)
        n = splice(k, &c, w.fp, frames, n, max_frames, kernel_cap, ends, &o->why);
    smp_codemap_leave(&c.map);
    o->is_cut = c.out_of_copy && o->why != PROF_STOP_END;
    o->is_switched = o->is_cut && c.is_switched;
    o->used = c.used;
    o->flags = w.flags;
    o->n_by_table = w.n_by_table;
    o->n_by_fp = w.n_by_fp;
    o->n_unknown = c.n_unknown;
    return n;
}

/* The same; a module whose table the walk met unbuilt is built at once (this is the
 * writer thread, which builds them) and the walk made again, as long as each pass gets
 * further (a stack through three modules met before any of their tables existed takes
 * three passes). A walk cut short at code in no range of the code map, when the map was
 * read before the sample was taken, has the map read again first (a library mapped by a
 * dlopen() still running: its _init takes the first page fault of its code). */
static unsigned walk(const struct ksample *k, const struct lp_ksamples_ends *ends,
                     unsigned kernel_cap, unsigned max_frames, uint64_t *frames,
                     struct kwalk *o)
{
    unsigned n = walk_once(k, ends, kernel_cap, max_frames, frames, o);
    if (o->n_unknown > 0 && o->why != PROF_STOP_END && lp_unwind_rescan_since(k->time_ns))
        n = walk_once(k, ends, kernel_cap, max_frames, frames, o);
    for (unsigned pass = 0; pass < LP_KSAMPLE_MAX_PASSES && o->why == PROF_STOP_PENDING;
         pass++) {
        unsigned before = n;
        lp_unwind_serve();
        n = walk_once(k, ends, kernel_cap, max_frames, frames, o);
        if (n <= before)
            break;
    }
    return n;
}

/* 1 when the chain (frames, leaf first) was taken inside one of libprof's own handlers: a
 * frame of libprof's code on the leaf's side of a return into a signal trampoline (the
 * handler returns there), a leaf in libprof's code, or a walk cut short (why) in libprof's
 * code, under a system call of the C library's (the walk may stop before the trampoline:
 * libprof's own unwind table is built only once a walk asks for it; the only system calls
 * and faults libprof's own code makes on a thread of the program's are its handlers'; its
 * wrappers of the program's calls continue into the program's code). */
static int is_our_handler(const uint64_t *frames, unsigned n, uint8_t why,
                          const struct lp_ksamples_ends *e)
{
    if (n > 0 && frames[0] >= e->self_lo && frames[0] < e->self_hi)
        return 1;
    if (why != PROF_STOP_END && n > 1 && frames[n - 1] >= e->self_lo &&
        frames[n - 1] < e->self_hi)
        return 1;
    int in_self = 0;
    for (unsigned i = 0; i < n; i++) {
        if (frames[i] >= e->self_lo && frames[i] < e->self_hi) {
            in_self = 1;
            continue;
        }
        uint8_t code[ARCH_SIGRETURN_LEN];
        if (in_self && i > 0 && smp_probe_read(code, frames[i], sizeof(code)) == 0 &&
            arch_is_sigreturn(code))
            return 1;
    }
    return 0;
}

/* 1 when the sample was taken in the sigreturn system call that ends a handler of one of
 * libprof's signals: the pc is just past a sigreturn trampoline, and the signal frame at
 * the stack pointer (in the stack copy) names the signal. The handler has returned, so no
 * frame of libprof's is left for is_our_handler() to see; the time is still its cost. */
static int is_our_sigreturn(const struct ksample *k, const struct lp_ksamples_ends *e)
{
    uint8_t code[ARCH_SIGRETURN_LEN];
    uintptr_t at = arch_sigframe_info_at(k->regs.sp) - k->regs.sp;
    int32_t signo = 0;
    /* Known: the one place to look, without reading code for every sample. */
    if (e->sigreturn_pc != 0 && k->regs.pc != e->sigreturn_pc)
        return 0;
    if (k->regs.pc < ARCH_SIGRETURN_LEN ||
        smp_probe_read(code, k->regs.pc - ARCH_SIGRETURN_LEN, sizeof(code)) != 0 ||
        !arch_is_sigreturn(code) || k->stack_len < at + sizeof(signo))
        return 0;
    memcpy(&signo, k->stack + at, sizeof(signo)); /* siginfo_t.si_signo */
    for (unsigned i = 0; i < LP_KSAMPLE_SIGNALS; i++)
        if (signo > 0 && signo == e->signals[i])
            return 1;
    return 0;
}

uintptr_t lp_ksamples_sigreturn_pc(int signo)
{
    /* The kernel's view of the action: handler, flags, restorer, mask. */
    struct {
        uintptr_t handler;
        unsigned long flags;
        uintptr_t restorer;
        uint64_t mask;
    } act;
    if (signo <= 0 || syscall(SYS_rt_sigaction, signo, NULL, &act, sizeof(act.mask)) != 0 ||
        act.restorer == 0)
        return 0;
    uint8_t code[ARCH_SIGRETURN_LEN];
    if (smp_probe_read(code, act.restorer, sizeof(code)) != 0 || !arch_is_sigreturn(code))
        return 0;
    return act.restorer + ARCH_SIGRETURN_LEN;
}

void lp_ksamples_rewalk(struct prof_rec_sample *rec, uint64_t *frames, unsigned cap,
                        const struct smp_defer *d, const struct lp_ksamples_ends *ends)
{
    struct ksample k = {.tid = rec->tid, .time_ns = rec->time_ns, .regs = d->regs,
                        .stack = d->stack, .stack_len = d->len};
    static uint64_t out[LP_KSAMPLE_MAX_FRAMES]; /* the buffer's owner, one at a time */
    unsigned max = cap < LP_KSAMPLE_MAX_FRAMES ? cap : LP_KSAMPLE_MAX_FRAMES;
    struct kwalk o;
    /* No chain of the kernel's to splice: its cap never says "cut short". */
    unsigned n = walk(&k, ends, UINT32_MAX, max, out, &o);
    uint8_t why = o.why;
    if (n == 0 || (why != PROF_STOP_END && n <= rec->n_frames))
        return;
    if (rec->stop_reason < PROF_STOP_N)
        atomic_fetch_sub_explicit(&smp_sampler.counters[PROF_STAT_STOP_OF(rec->stop_reason)], 1,
                                  memory_order_relaxed);
    if (why == PROF_STOP_END)
        atomic_fetch_sub_explicit(&smp_sampler.counters[PROF_STAT_TRUNCATED], 1,
                                  memory_order_relaxed);
    else if (why < PROF_STOP_N)
        count(PROF_STAT_STOP_OF(why), 1);
    memcpy(frames, out, n * sizeof(out[0]));
    rec->n_frames = (uint16_t)n;
    rec->stop_reason = why;
    rec->flags = (uint8_t)((rec->flags & ~PROF_SAMPLE_TRUNCATED) |
                           (why == PROF_STOP_END ? 0 : PROF_SAMPLE_TRUNCATED));
}

unsigned lp_ksamples_walk_body(const unsigned char *b, size_t len,
                               const struct lp_ksamples_ends *ends, unsigned kernel_cap,
                               unsigned max_frames, uint64_t *frames, uint8_t *why)
{
    struct ksample k;
    if (parse(b, len, &chain_layout, &k) != 0)
        return 0;
    if (max_frames > LP_KSAMPLE_MAX_FRAMES)
        max_frames = LP_KSAMPLE_MAX_FRAMES;
    struct kwalk o;
    unsigned n = walk(&k, ends, kernel_cap, max_frames, frames, &o);
    *why = o.why;
    return n;
}

uint32_t lp_ksamples_weigh(struct lp_kweigh *wt, uint64_t count)
{
    if (wt->fixed != 0)
        return wt->fixed;
    uint64_t period = wt->period_ns, drawn = wt->drawn_ns ? wt->drawn_ns : period;
    uint64_t delta = count > wt->last_count ? count - wt->last_count : 0;
    wt->last_count = count;
    wt->n_window++;
    if (period == 0)
        return 1;
    uint64_t extra = 0;
    if (wt->kernel_skips && delta > drawn) {
        /* Whole intervals the counter skipped in the kernel (within an eighth of one: the
         * kernel takes a sample a little late), in periods, the remainder carried on. */
        uint64_t skipped = (delta - drawn + drawn / 8) / drawn;
        int64_t due = (int64_t)(skipped * drawn) + wt->carry_ns;
        extra = due > (int64_t)(period / 2) ? ((uint64_t)due + period / 2) / period : 0;
        if (extra > UINT32_MAX / 2)
            extra = UINT32_MAX / 2;
        wt->carry_ns = due - (int64_t)(extra * period);
    }
    wt->skew_ns += (int64_t)delta - (int64_t)((1 + extra) * period);
    return 1u + (uint32_t)extra;
}

/* A sample record's body (after its header: misc the header's) into one sample of w. */
static void put_record(struct lp_writer *w, const struct smp_perf_kring *ring,
                       const unsigned char *b, size_t len, uint16_t misc,
                       const struct lp_ksamples_ends *ends, unsigned kernel_cap,
                       unsigned max_frames, struct lp_kweigh *wt)
{
    struct ksample k;
    static uint64_t frames[LP_KSAMPLE_MAX_FRAMES]; /* the buffer's owner, one at a time */
    if (parse(b, len, ring, &k) != 0)
        return;
    uint32_t weight = lp_ksamples_weigh(wt, k.count);
    uint32_t own = __atomic_load_n(&ends->own_tid, __ATOMIC_ACQUIRE);
    if (own != 0 && k.tid == own && k.time_ns >= ends->own_since_ns) {
        count(PROF_STAT_OWN_WAIT, 1);
        return;
    }
    if (max_frames > LP_KSAMPLE_MAX_FRAMES)
        max_frames = LP_KSAMPLE_MAX_FRAMES;
    struct kwalk o;
    unsigned n = walk(&k, ends, kernel_cap, max_frames, frames, &o);
    uint8_t why = o.why;
    wt->n_cut += o.is_cut;
    wt->n_switched += o.is_switched;
    if (!o.is_cut) {
        wt->n_whole++;
        if (o.used > wt->max_used)
            wt->max_used = (uint32_t)o.used;
    }
    if (is_our_handler(frames, n, why, ends) || is_our_sigreturn(&k, ends)) {
        count(PROF_STAT_KERNEL_SELF, 1);
        return;
    }
    /* The perf source's kernel-time counter samples only there; the ring source's
     * counter wherever the thread runs, the record's mode telling which. */
    int in_kernel = !ring->counts_user ||
                    (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
    struct prof_rec_sample rec = {.time_ns = k.time_ns,
                                  .tid = k.tid,
                                  .weight = weight,
                                  .n_frames = (uint16_t)n,
                                  .stop_reason = why,
                                  .flags = (uint8_t)(o.flags |
                                                     (in_kernel ? PROF_SAMPLE_KERNEL : 0) |
                                                     (why == PROF_STOP_END
                                                          ? 0
                                                          : PROF_SAMPLE_TRUNCATED)),
                                  .state = smp_sampler.running_state};
    lp_writer_put_sample(w, &rec, frames);
    count(PROF_STAT_SAMPLES, 1);
    if (in_kernel)
        count(PROF_STAT_KERNEL_SAMPLES, 1);
    if (ring->counts_user)
        count(PROF_STAT_RING_SAMPLES, 1);
    count(PROF_STAT_WEIGHT, weight);
    count(PROF_STAT_FRAMES_TABLE, o.n_by_table);
    count(PROF_STAT_FRAMES_FP, o.n_by_fp);
    if (why != PROF_STOP_END) {
        count(PROF_STAT_TRUNCATED, 1);
        if (why < PROF_STOP_N)
            count(PROF_STAT_STOP_OF(why), 1);
    }
}

/* Records of bytes (some lost, or not) came into ring k since its last drain: at that
 * rate, drawn up to 1.75 times faster for the next period (sampler/jitter.h), three
 * quarters of the ring or more in a whole quiet period (or any lost), and the writer keeps
 * its short period for a while (time in the kernel comes in bursts: a large allocation's
 * page faults). A thread's ring source ring of a sized copy holds four periods at the rate
 * asked (libprof/timers.c), which its CPU-time clock cannot exceed but by its draws: the
 * writer keeps its long period for it. A ring of the first, large copy, capped in pages,
 * holds less at high rates: the short period until its copy is sized. */
static void note_rate(struct smp_perf_kring *k, size_t bytes, int lost, size_t page)
{
    uint64_t now = cmn_clock_ns(CLOCK_MONOTONIC);
    uint64_t since = k->drained_ns != 0 && now > k->drained_ns ? now - k->drained_ns : 0;
    k->drained_ns = now;
    if (since < LP_KSAMPLE_MIN_SPAN_NS)
        since = LP_KSAMPLE_MIN_SPAN_NS;
    double per_period = (double)bytes * (LP_WRITER_PERIOD_MS * 1e6) / (double)since;
    if (k->map_bytes > page && (lost || per_period * 7 >= 3.0 * (double)(k->map_bytes - page)))
        k->busy_until_ns = now + LP_KSAMPLE_BUSY_HOLD_NS;
}

size_t lp_ksamples_drain(struct lp_writer *w, struct smp_perf_kring *k,
                         const struct lp_ksamples_ends *ends, unsigned kernel_cap,
                         unsigned max_frames, struct lp_kweigh *wt, int *busy)
{
    if (!k->map)
        return 0;
    if (k->busy_until_ns != 0 && cmn_clock_ns(CLOCK_MONOTONIC) >= k->busy_until_ns)
        k->busy_until_ns = 0; /* the clock is read only for rings in use or on hold */
    size_t moved = 0, page = (size_t)sysconf(_SC_PAGESIZE);
    struct cmn_pring pr;
    /* Most threads spend no time in the kernel between two drains: nothing to begin. */
    if (cmn_pring_begin(&pr, k->map, k->map_bytes, page)) {
        size_t bytes = 0;
        int lost = 0;
        static unsigned char rec[LP_KSAMPLE_MAX_BYTES]; /* one drainer at a time: the owner */
        struct perf_event_header h;
        uint64_t at;
        while (cmn_pring_next(&pr, &h, &at)) {
            bytes += h.size;
            size_t body = h.size - sizeof(h);
            if (h.type == PERF_RECORD_SAMPLE && body <= sizeof(rec)) {
                /* In place where the record lies in one piece: a record is as large as
                 * the stack it may copy, of which a few KiB are used. */
                const unsigned char *b = cmn_pring_at(&pr, at, body);
                if (b == NULL) {
                    cmn_pring_copy(&pr, at, rec, body);
                    b = rec;
                }
                put_record(w, k, b, body, h.misc, ends, kernel_cap, max_frames, wt);
                moved++;
            } else if (h.type == PERF_RECORD_LOST && body >= 16) {
                uint64_t n_lost[2];
                cmn_pring_copy(&pr, at, n_lost, sizeof(n_lost));
                count(PROF_STAT_DROPPED, n_lost[1]);
                lost = 1;
            }
        }
        cmn_pring_end(&pr);
        note_rate(k, bytes, lost, page);
        if (moved)
            lp_writer_end_samples(w);
    }
    if (busy && k->busy_until_ns != 0)
        *busy = 1;
    return moved;
}
