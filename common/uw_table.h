/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The unwind table of one module: for every address of its code, how to find the caller's
 * frame, compiled in advance from the module's DWARF call-frame information (.eh_frame,
 * .debug_frame; common/uw_build.h) so that a signal handler can step a frame with a binary
 * search and three loads. Shared by the preloaded library (built in its writer thread,
 * read by the sampling handler: sampler/walk.c), by the backtrace API, and by the prof
 * command (walking stack copies of another process: attach/).
 *
 * A table lives in one block of memory, written once and then only read:
 *
 *   struct cmn_uw_table            the header below
 *   uint32_t page_first[n_pages+1] for each 256-byte bucket ("page") of [base, base + size): the index
 *                                  of the first row starting in it or after it
 *   uint32_t pc[n_rows]            row starts, as offsets from base, strictly increasing
 *   uint32_t rule[n_rows]          each row's rule, valid from its pc to the next row's
 *
 * Addresses are the module's link-time addresses (a run-time pc minus the mapping's load
 * bias). A rule is one 32-bit word:
 *
 *   bits  0..3   kind: where the canonical frame address (CFA: the caller's stack pointer
 *                just before its call) comes from, or why there is none (CMN_UW_*)
 *   bits  4..9   the caller's frame pointer: 0 unchanged by this frame, 1..61 saved at
 *                CFA - 8k, 62 saved at the address the frame pointer holds, 63 not known
 *   bits 10..15  the return address: 0 in the link register, 1..62 saved at CFA - 8k,
 *                63 not known
 *   bits 16..31  a signed offset: the CFA's in units of 8 bytes (CMN_UW_CFA_SP/_FP/
 *                _FP_DEREF), the PLT rule's threshold (CMN_UW_PLT)
 *
 * The rules that do not fit (a CFA from another register, a DWARF expression other than
 * the PLT's and the realigned frame's, offsets that are not multiples of 8 or beyond
 * 256 KiB) are CMN_UW_STOP: a walk that meets one stops and says why instead of guessing.
 * One rule comes from code recognised whole, not from call-frame information: Go's switch
 * to the system stack for a cgo call (CMN_UW_GO_CGO).
 * Header-only, never installed; the lookup is async-signal-safe.
 *
 * Signal handler's path: allowed: cmn_uw_lookup() and the accessors of a built table; the
 * layout and index functions are for the thread that builds one.
 */
#ifndef PROF_COMMON_UW_TABLE_H
#define PROF_COMMON_UW_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "common/ranges.h"

#define CMN_UW_MAGIC 0x31545755u /* "UWT1" */
#define CMN_UW_PAGE_SHIFT 8u /* 256-byte buckets ("pages"): a few rows each, a short search */

/* Rule kinds. */
#define CMN_UW_NONE 0u        /* no call-frame information covers the address */
#define CMN_UW_CFA_SP 1u      /* CFA = stack pointer + offset */
#define CMN_UW_CFA_FP 2u      /* CFA = frame pointer + offset */
#define CMN_UW_CFA_FP_DEREF 3u /* CFA = the word at frame pointer + offset (realigned frame) */
#define CMN_UW_END 4u         /* the outermost frame: its return address is undefined */
#define CMN_UW_SIGNAL 5u      /* the signal trampoline: the interrupted context is above */
#define CMN_UW_PLT 6u         /* a PLT entry: CFA = sp + 8, + 8 more from byte `offset` of
                               * each 16-byte entry on (the linker's own expression) */
#define CMN_UW_STOP 7u        /* a rule the steppers do not follow */
#define CMN_UW_GO_CGO 8u      /* x86_64, Go's runtime.asmcgocall at its call of the C function,
                               * on the system stack: the goroutine's g at sp + 48 and its
                               * stack depth at sp + 40 (0 and the caller's stack pointer
                               * when the call did not switch stacks); the caller's stack
                               * pointer is g.stack.hi less the depth, its return address
                               * there (common/uw_step.h, cmn_uw_go_cgo()) */

#define CMN_UW_REG_SAME 0u    /* fp: unchanged; ra: in the link register */
#define CMN_UW_FP_AT_FP 62u   /* fp: saved at the address the frame pointer holds */
#define CMN_UW_REG_UNKNOWN 63u
#define CMN_UW_SLOT_MAX 61u   /* largest k of "saved at CFA - 8k" */
#define CMN_UW_OFF_MIN (-32768 * 8)
#define CMN_UW_OFF_MAX (32767 * 8)

static inline uint32_t cmn_uw_rule(unsigned kind, unsigned fp, unsigned ra, int32_t off8)
{
    return (kind & 0xfu) | (fp & 0x3fu) << 4 | (ra & 0x3fu) << 10 |
           (uint32_t)(uint16_t)(int16_t)off8 << 16;
}

static inline unsigned cmn_uw_kind(uint32_t rule)
{
    return rule & 0xfu;
}

static inline unsigned cmn_uw_fp(uint32_t rule)
{
    return (rule >> 4) & 0x3fu;
}

static inline unsigned cmn_uw_ra(uint32_t rule)
{
    return (rule >> 10) & 0x3fu;
}

/* The offset in bytes (the PLT threshold as is). */
static inline int32_t cmn_uw_off(uint32_t rule)
{
    int32_t v = (int16_t)(uint16_t)(rule >> 16);
    return cmn_uw_kind(rule) == CMN_UW_PLT ? v : v * 8;
}

/* 1 when rule describes a frame-pointer frame: the CFA from the frame pointer, with the
 * caller's frame pointer and the return address saved as a pair right where it points
 * (x86_64: push %rbp; mov %rsp,%rbp; aarch64: a frame record at x29). Through such a
 * frame a frame-pointer walk is exact. */
static inline int cmn_uw_is_fp_frame(uint32_t rule)
{
    int32_t off = cmn_uw_off(rule);
    return cmn_uw_kind(rule) == CMN_UW_CFA_FP && off > 0 && off % 8 == 0 &&
           (int32_t)cmn_uw_fp(rule) * 8 == off && (int32_t)cmn_uw_ra(rule) * 8 == off - 8;
}

struct cmn_uw_table {
    uint32_t magic;       /* CMN_UW_MAGIC */
    uint32_t n_rows;      /* rows in pc[] and rule[] */
    uint64_t base;        /* link-time address of page_first[0]'s page */
    uint64_t size;        /* bytes of address space from base the rows cover */
    uint32_t n_pages;     /* entries of page_first[] minus one */
    uint32_t pages_at;    /* offsets of the three arrays from the table's start */
    uint32_t pcs_at;
    uint32_t rules_at;
    uint64_t total_bytes; /* the whole block */
};

static inline const uint32_t *cmn_uw_pages(const struct cmn_uw_table *t)
{
    return (const uint32_t *)((const char *)t + t->pages_at);
}

static inline const uint32_t *cmn_uw_pcs(const struct cmn_uw_table *t)
{
    return (const uint32_t *)((const char *)t + t->pcs_at);
}

static inline const uint32_t *cmn_uw_rules(const struct cmn_uw_table *t)
{
    return (const uint32_t *)((const char *)t + t->rules_at);
}

/* Async-signal-safe, reads only the table. The rule for link-time address addr, or
 * CMN_UW_NONE's rule (0) when the table does not cover it. */
static inline uint32_t cmn_uw_lookup(const struct cmn_uw_table *t, uint64_t addr)
{
    if (addr < t->base || addr - t->base >= t->size)
        return 0;
    uint32_t off = (uint32_t)(addr - t->base);
    uint32_t page = off >> CMN_UW_PAGE_SHIFT;
    const uint32_t *first = cmn_uw_pages(t), *pc = cmn_uw_pcs(t);
    /* The row covering off starts in this page at or before it, or is the last row of an
     * earlier page: search [first[page] - 1, first[page + 1]) for the last pc <= off. */
    uint32_t lo = first[page] > 0 ? first[page] - 1 : 0, hi = first[page + 1];
    if (hi > t->n_rows)
        hi = t->n_rows;
    if (lo >= hi || pc[lo] > off)
        return 0;
    lo += (uint32_t)cmn_range_upper(pc + lo, hi - lo, sizeof(*pc), 0, sizeof(*pc), off) - 1;
    return cmn_uw_rules(t)[lo];
}

/* The bytes of a table of n_rows rows covering size bytes of address space. */
static inline uint64_t cmn_uw_table_bytes(uint64_t n_rows, uint64_t size)
{
    uint64_t pages = (size + ((1u << CMN_UW_PAGE_SHIFT) - 1)) >> CMN_UW_PAGE_SHIFT;
    return sizeof(struct cmn_uw_table) + 4 * (pages + 1) + 8 * n_rows;
}

/* Lays out a table of n rows covering size bytes from base in mem
 * (cmn_uw_table_bytes(n, size) bytes, 4-byte aligned): fills the header; the caller then
 * writes the rows (strictly increasing pcs, all below size) and calls
 * cmn_uw_table_index(). Any thread but a handler. */
static inline struct cmn_uw_table *cmn_uw_table_layout(void *mem, uint64_t base, uint64_t size,
                                                       uint32_t n)
{
    struct cmn_uw_table *t = mem;
    uint64_t pages = (size + ((1u << CMN_UW_PAGE_SHIFT) - 1)) >> CMN_UW_PAGE_SHIFT;
    t->magic = CMN_UW_MAGIC;
    t->n_rows = n;
    t->base = base;
    t->size = size;
    t->n_pages = (uint32_t)pages;
    t->pages_at = (uint32_t)sizeof(*t);
    t->pcs_at = t->pages_at + 4 * (uint32_t)(pages + 1);
    t->rules_at = t->pcs_at + 4 * n;
    t->total_bytes = cmn_uw_table_bytes(n, size);
    return t;
}

/* Fills the page index from the rows. */
static inline void cmn_uw_table_index(struct cmn_uw_table *t)
{
    uint32_t *first = (uint32_t *)((char *)t + t->pages_at);
    const uint32_t *pc = cmn_uw_pcs(t);
    uint32_t row = 0;
    for (uint64_t p = 0; p <= t->n_pages; p++) {
        while (row < t->n_rows && (pc[row] >> CMN_UW_PAGE_SHIFT) < p)
            row++;
        first[p] = row;
    }
}

#endif
