/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The public backtrace API (include/libprof/prof.h): prof_backtrace() and prof_backtrace_fd(),
 * called by the application from anywhere, signal and crash handlers included.
 *
 * The walk is the sampler's (common/uw_step.h), started exactly at a point of this file
 * (ARCH_HERE): each frame stepped by its module's unwind table where libprof has built
 * one (the code map holds them: sampler/codemap.h), by frame pointer elsewhere; a module
 * whose table is not built yet is asked for (the writer thread builds it) and walked by
 * frame pointer meanwhile. It cannot rely on the stack bounds the profiler captured
 * (smp_self): a crash handler typically runs on an alternate signal stack, and a thread
 * libprof did not start has no bounds at all, while pthread_getattr_np() is not
 * async-signal-safe. So every word, stack and code alike, is read through the fault-proof
 * probe (sampler/probe.h: one process_vm_readv(2), a few hundred ns; a crashed context
 * may hold any address), and the walk's own checks hold: aligned frames strictly
 * increasing while on one stack, return addresses inside executable mappings, at most
 * PROF_BT_MAX_FRAMES steps.
 *
 * Signal frames are crossed by the signal trampoline's unwind row, or, where its module
 * has no table, by its instruction bytes (the sigreturn system call): the interrupted
 * context above it gives the interrupted instruction, exact, and its stack pointer, on
 * whatever stack it was; this is how a SIGSEGV handler's backtrace reaches the faulting
 * function. The trampoline itself is left out of the backtrace. Where the faulting
 * function's table proves its caller (always, with a table: a function without a frame,
 * the usual crash site, included), the caller is the next frame. Where it has no table,
 * the walk steps by frame pointer, which skips the caller of a function without a frame:
 * prof_backtrace_fd() then writes the word at the interrupted stack pointer as a candidate
 * line ("? module+0xOFF"), which `prof symbolize` names only where the function's unwind
 * information says its return address is there, and drops otherwise. Module names come
 * from lp_unwind_module_at(), a table read from /proc/self/maps outside any handler, never
 * from dl_iterate_phdr(), which takes the loader's lock.
 */
#include "include/libprof/prof.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "common/uw_step.h"
#include "libprof/unwind.h"
#include "sampler/codemap.h"
#include "sampler/probe.h"

#define PROF_BT_MAX_FRAMES 4096 /* steps of one walk at most, whatever `max` says */
#define FD_FRAMES 256           /* frames prof_backtrace_fd() writes at most */
#define BT_OWN_FRAMES 2         /* walk_here() and the API function that called it */
#define BT_CROSSINGS 8          /* signal frames whose interrupted context is remembered */
#define BT_SLACK (BT_OWN_FRAMES + BT_CROSSINGS) /* walked beyond what is written */
#define BT_LOCAL_FRAMES 512     /* a walk on the caller's stack at most (4 KiB) */
#define BT_READS 8              /* stack words remembered while crossing a signal frame */

_Static_assert(sizeof(void *) == sizeof(uint64_t), "frames are written into void *pcs[]");

/* What a backtrace's entry is. */
#define BT_RETURN 0    /* a return address */
#define BT_EXACT 1     /* an interrupted instruction (below a signal frame) */
#define BT_CANDIDATE 2 /* the word at an interrupted function's stack pointer, where no table
                        * proved its caller: its return address if its unwind information
                        * says so (`prof symbolize` checks), else nothing */

/* A signal frame the walk crossed: where the interrupted code was. */
struct crossing {
    uintptr_t pc, sp;
    int has_row; /* its table has a row for pc: its caller is proven */
};

/* The walk's accessors' state. */
struct bt_mem {
    struct cmn_uw_mem base; /* first: the walk hands back a pointer to it */
    struct smp_codemap_view map;
    /* The walk crosses a signal frame right after it asked for the trampoline's table: the
     * stack words it reads then are the interrupted context's, which name the interrupted
     * pc (the next table asked for) and its stack pointer. */
    int is_crossing;
    struct {
        uintptr_t addr, value;
    } reads[BT_READS];
    unsigned n_reads;
    struct crossing crossings[BT_CROSSINGS];
    unsigned n_crossings;
};

/* A one-row table whose row is the signal trampoline's: a return address into code
 * without a table whose bytes are the sigreturn call is crossed by it (x86_64, where the
 * frame-pointer step leaves the stack pointer exact). */
struct one_row_table {
    struct cmn_uw_table head;
    uint32_t pages[2], pcs[1], rules[1];
};
static const struct one_row_table sigreturn_row = {
    .head = {.magic = CMN_UW_MAGIC,
             .n_rows = 1,
             .base = 0,
             .size = 1,
             .n_pages = 1,
             .pages_at = offsetof(struct one_row_table, pages),
             .pcs_at = offsetof(struct one_row_table, pcs),
             .rules_at = offsetof(struct one_row_table, rules),
             .total_bytes = sizeof(struct one_row_table)},
    .pages = {0, 1},
    .pcs = {0},
    .rules = {CMN_UW_SIGNAL | CMN_UW_REG_UNKNOWN << 4 | CMN_UW_REG_UNKNOWN << 10},
};

/* Reads the word at addr through the probe; 0 on success. */
static int read_word(uintptr_t addr, uintptr_t *out)
{
    if (addr & (sizeof(uintptr_t) - 1))
        return -EFAULT;
    return smp_probe_read(out, addr, sizeof(*out));
}

/* 1 when the bytes at pc are the sigreturn trampoline's. */
static int is_sigreturn(uintptr_t pc)
{
    uint8_t code[ARCH_SIGRETURN_LEN];
    return smp_probe_read(code, pc, sizeof(code)) == 0 && arch_is_sigreturn(code);
}

static int bt_stack_word(const struct cmn_fp_mem *m, uintptr_t addr, uintptr_t *out)
{
    struct bt_mem *b = (struct bt_mem *)m;
    if (read_word(addr, out) != 0)
        return 0;
    if (b->is_crossing && b->n_reads < BT_READS) {
        b->reads[b->n_reads].addr = addr;
        b->reads[b->n_reads++].value = *out;
    }
    return 1;
}

static int bt_code(const struct cmn_fp_mem *m, uintptr_t addr, uint8_t *out, unsigned n)
{
    (void)m;
    return smp_probe_read(out, addr, n) == 0 ? 0 : -1;
}

static int bt_is_code(const struct cmn_fp_mem *m, uintptr_t addr)
{
    return smp_codemap_view_contains(&((const struct bt_mem *)m)->map, addr);
}

/* Remembers the signal frame just crossed, now that the walk asks for the table of the
 * interrupted pc: the stack pointer is the context's word next to the pc's. */
static void note_crossing(struct bt_mem *b, uintptr_t pc, int has_row)
{
    b->is_crossing = 0;
    if (b->n_crossings == BT_CROSSINGS)
        return;
    struct crossing *c = &b->crossings[b->n_crossings++];
    *c = (struct crossing){.pc = pc, .has_row = has_row};
    for (unsigned i = 0; i < b->n_reads; i++) {
        if (arch_strip_pac(b->reads[i].value) != pc)
            continue;
        uintptr_t uc = b->reads[i].addr - ARCH_UC_PC_OFF;
        for (unsigned k = 0; k < b->n_reads; k++)
            if (b->reads[k].addr == uc + ARCH_UC_SP_OFF)
                c->sp = b->reads[k].value;
    }
}

/* The table of the module holding pc: built ones only; a module whose table is still to
 * come is asked for and walked by frame pointer (never CMN_UW_PENDING: a backtrace is
 * taken once). Code of no module is CMN_UW_ANON, as for the sampler's walk. */
static const struct cmn_uw_table *bt_table(const struct cmn_uw_mem *m, uintptr_t pc,
                                           uintptr_t *bias, unsigned *info)
{
    struct bt_mem *b = (struct bt_mem *)m;
    const struct smp_code_range *r = smp_codemap_view_find(&b->map, pc);
    const struct cmn_uw_table *t = r != NULL ? r->table : NULL;
    uint32_t rule = t != NULL ? cmn_uw_lookup(t, (uint64_t)(pc - r->bias)) : 0;
    if (b->is_crossing)
        note_crossing(b, pc, cmn_uw_kind(rule) != CMN_UW_NONE);
    if (r != NULL && t == NULL && r->module != 0)
        smp_codemap_want(r->module);
    if (cmn_uw_kind(rule) != CMN_UW_NONE) {
        b->is_crossing = cmn_uw_kind(rule) == CMN_UW_SIGNAL;
        b->n_reads = 0;
        *bias = r->bias;
        return t;
    }
    /* pc is a return address minus one: the bytes it returns to. */
    if (ARCH_FP_CFA_EXACT && is_sigreturn(pc + 1)) {
        b->is_crossing = 1;
        b->n_reads = 0;
        *bias = pc;
        return &sigreturn_row.head;
    }
    if (r != NULL && t == NULL && r->module == 0)
        *info = CMN_UW_ANON;
    return NULL;
}

/* A signal frame may have put the interrupted code on another stack (the thread's, below
 * or above an alternate one): every stack is read through the probe, so the walk may go
 * on from there. */
static int bt_other_stack(const struct cmn_uw_mem *m, uintptr_t sp, uintptr_t *lo,
                          uintptr_t *hi)
{
    (void)m;
    *lo = sp;
    *hi = UINTPTR_MAX & ~(uintptr_t)15;
    return 1;
}

/* Walks the calling thread's stack from a point inside this function into frames (at
 * most max), leaf first: this function, its caller (the API function), and that one's
 * callers. Async-signal-safe. */
__attribute__((noinline)) static unsigned walk_here(struct bt_mem *b, uint64_t *frames,
                                                   unsigned max)
{
    struct cmn_fp_regs regs;
    ARCH_HERE(regs.pc, regs.sp, regs.fp, regs.lr);
    *b = (struct bt_mem){.base = {.fp = {bt_stack_word, bt_code, bt_is_code},
                                  .table = bt_table,
                                  .other_stack = bt_other_stack}};
    struct cmn_uw_walk w = {.lo = regs.sp, .hi = UINTPTR_MAX & ~(uintptr_t)15,
                            .frames = frames, .max_frames = max};
    smp_codemap_enter(&b->map);
    unsigned n = cmn_uw_walk(&b->base, &regs, &w);
    smp_codemap_leave(&b->map);
    return n;
}

/* Where a backtrace's entries go: the caller's array (pcs), or lines on fd. */
struct bt_out {
    int skip;       /* entries still to skip */
    int room;       /* entries still to write */
    int n;          /* entries written */
    void **pcs;     /* prof_backtrace(): the caller's array; NULL: lines */
    int fd;         /* prof_backtrace_fd(): the file */
    int is_write_error;
};

static void put_line(struct bt_out *o, uintptr_t pc, uint8_t kind);

static void put(struct bt_out *o, uintptr_t pc, uint8_t kind)
{
    /* An array cannot say that an entry is unproven: candidates are lines only. */
    if (o->room <= 0 || (kind == BT_CANDIDATE && o->pcs != NULL))
        return;
    if (o->skip > 0) {
        o->skip--;
        return;
    }
    if (o->pcs != NULL)
        o->pcs[o->n] = (void *)pc;
    else
        put_line(o, pc, kind);
    o->room--;
    o->n++;
}

/* The walk's frames as entries: the walk's own frames dropped, each signal trampoline
 * dropped and the interrupted instruction after it marked exact, with the candidate of a
 * crossing whose caller no table proved. */
static void emit(const struct bt_mem *b, const uint64_t *frames, unsigned n, struct bt_out *o)
{
    unsigned k = 0;
    for (unsigned i = BT_OWN_FRAMES; i < n && o->room > 0; i++) {
        uintptr_t pc = (uintptr_t)frames[i];
        if (i + 1 < n && is_sigreturn(pc)) {
            const struct crossing *c = k < b->n_crossings ? &b->crossings[k++] : NULL;
            uintptr_t exact = (uintptr_t)frames[++i], at_sp = 0;
            put(o, exact, BT_EXACT);
            if (!ARCH_HAS_LR && c != NULL && c->pc == exact && !c->has_row && c->sp != 0 &&
                read_word(c->sp, &at_sp) == 0 && smp_codemap_contains(at_sp) &&
                (i + 1 >= n || frames[i + 1] != at_sp))
                put(o, at_sp, BT_CANDIDATE);
            continue;
        }
        put(o, pc, BT_RETURN);
    }
}

__attribute__((noinline)) PROF_API int prof_backtrace(void **pcs, int max, int skip)
{
    if (pcs == NULL || max <= 0)
        return 0;
    if (skip < 0)
        skip = 0;
    struct bt_mem b;
    struct bt_out o = {.skip = skip, .room = max, .pcs = pcs};
    /* The walk goes into a buffer on this stack when it is small enough, else into the
     * caller's array itself (entries are written at or before the frame they come from):
     * then the deepest frames, as many as are dropped at the front, do not fit. */
    uint64_t local[BT_LOCAL_FRAMES];
    long want = (long)max + skip + BT_SLACK;
    uint64_t *frames = want <= BT_LOCAL_FRAMES ? local : (uint64_t *)(void *)pcs;
    long cap = want <= BT_LOCAL_FRAMES ? want : max;
    unsigned n = walk_here(&b, frames, cap < PROF_BT_MAX_FRAMES ? (unsigned)cap
                                                                : PROF_BT_MAX_FRAMES);
    emit(&b, frames, n, &o);
    return o.n;
}

/* Formats v in hex into buf (no prefix); returns the length. Async-signal-safe. */
static size_t fmt_hex_sigsafe(char *buf, uint64_t v)
{
    char tmp[16];
    size_t n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v != 0);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

/* Writes all of buf; 0 or -1. Retries short writes and EINTR. */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

/* One output line for entry pc of kind: "path+0xOFF\n" or "0xADDR\n", with "? " before
 * it for a candidate; a return address names its call instruction (pc - 1). */
static void put_line(struct bt_out *o, uintptr_t pc, uint8_t kind)
{
    char line[4096 + 32];
    uint64_t offset;
    size_t len = 0;
    if (kind != BT_EXACT)
        pc--;
    if (kind == BT_CANDIDATE) {
        line[len++] = '?';
        line[len++] = ' ';
    }
    if (lp_unwind_module_at(pc, line + len, 4096, &offset) == 0 && line[len] != '\0') {
        len += strlen(line + len);
        line[len++] = '+';
    } else {
        offset = pc;
    }
    line[len++] = '0';
    line[len++] = 'x';
    len += fmt_hex_sigsafe(line + len, offset);
    line[len++] = '\n';
    if (!o->is_write_error && write_all(o->fd, line, len) != 0)
        o->is_write_error = 1;
}

__attribute__((noinline)) PROF_API int prof_backtrace_fd(int fd, int skip)
{
    int saved_errno = errno;
    struct bt_mem b;
    struct bt_out o = {.skip = skip < 0 ? 0 : skip, .room = FD_FRAMES, .fd = fd};
    uint64_t frames[FD_FRAMES + BT_SLACK];
    unsigned n = walk_here(&b, frames, FD_FRAMES + BT_SLACK);
    emit(&b, frames, n, &o);
    errno = saved_errno;
    return o.is_write_error ? -1 : o.n;
}
