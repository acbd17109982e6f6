/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The unwind-table compiler: DWARF call-frame information (.eh_frame, .debug_frame) in,
 * the rows of an unwind table (common/uw_table.h) out. Used where tables are built: the
 * preloaded library's writer thread (libprof/uwtables.c), which reads what the loader
 * mapped into the profiled program, and the prof command (attach/), which reads another
 * process's files. Header-only, never installed; not async-signal-safe (it allocates).
 *
 * Layout of the sections, records back to back:
 *
 *   CIE: length u32 (0xffffffff: a u64 follows) | id (.eh_frame: u32 0; .debug_frame:
 *        all ones, of the length's width) | version u8 | augmentation string |
 *        [v4: address size, segment size] | code alignment ULEB | data alignment SLEB |
 *        return-address register (v1: u8, else ULEB) | ['z': ULEB length, then data
 *        per letter: L, P, R, S] | initial instructions
 *   FDE: length | .eh_frame: u32 distance back from this field to its CIE; .debug_frame:
 *        the CIE's offset in the section | start, range (.eh_frame: the CIE's 'R'
 *        pointer encoding; .debug_frame: the address size) | ['z': ULEB length, data] |
 *        instructions
 *
 * An FDE's rules come from running its CIE's initial instructions, then its own; every
 * advance of the location ends a row. Only the rules a stack walk needs are tracked: the
 * CFA, the frame pointer's and the return address's. Everything is read through a bounded
 * cursor: a truncated section, a length beyond it, a CIE pointer that names no CIE, an
 * unknown instruction or augmentation ends that record (or that FDE's rows, from where it
 * could not be followed on: CMN_UW_STOP), never the build. Work is linear in the input:
 * instructions are read once per FDE, and rows are at most the instruction bytes plus two
 * per FDE.
 *
 * Signal handler's path: not allowed (it allocates).
 */
#ifndef PROF_COMMON_UW_BUILD_H
#define PROF_COMMON_UW_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/uw_table.h"

#define CMN_CFI_STATE_DEPTH 16u /* DW_CFA_remember_state nesting followed */
#define CMN_CFI_MAX_SPAN (1ull << 32) /* a table covers at most 4 GiB of addresses */

/* The DWARF register numbers of one architecture. */
struct cmn_cfi_regs {
    unsigned sp; /* stack pointer */
    unsigned fp; /* frame pointer */
    unsigned ra; /* the return address's column */
    int is_x86_64; /* the linker's PLT expression is recognised */
};

/* One row before the table is assembled. */
struct cmn_cfi_row {
    uint32_t off;  /* where the rule starts, from its FDE's start */
    uint32_t rule; /* cmn_uw_rule() */
};

/* One FDE's rows, rows[first .. first + n), covering [start, start + len). */
struct cmn_cfi_fde {
    uint64_t start;
    uint32_t len;
    uint32_t first;
    uint32_t n;
    uint32_t order; /* the order FDEs were read in: an earlier one wins an overlap */
};

/* What a CIE says. */
struct cmn_cfi_cie {
    uint64_t code_align;
    int64_t data_align;
    unsigned ra_reg;
    uint8_t fde_enc;    /* 'R'; absolute 64-bit by default */
    uint8_t addr_size;  /* .debug_frame v4 */
    bool has_aug_data;  /* 'z' */
    bool is_signal;     /* 'S': the signal trampoline */
    size_t insns_at, insns_end;
};

/* A register's rule, as far as a walk needs it. */
#define CMN_CFI_SAME 0u   /* unchanged (the return address: in the link register) */
#define CMN_CFI_AT 1u     /* saved at CFA + off */
#define CMN_CFI_AT_FP 2u  /* saved at the address the frame pointer holds */
#define CMN_CFI_UNDEF 3u  /* undefined */
#define CMN_CFI_OTHER 4u  /* anything else: not followed */

/* The CFA's rule. */
#define CMN_CFI_CFA_REG 0u      /* reg + off */
#define CMN_CFI_CFA_DEREF 1u    /* the word at reg + off */
#define CMN_CFI_CFA_PLT 2u      /* the PLT expression with threshold off */
#define CMN_CFI_CFA_OTHER 3u    /* an expression not followed */

struct cmn_cfi_state {
    unsigned cfa_how;
    unsigned cfa_reg;
    int64_t cfa_off;
    unsigned fp_how, ra_how;
    int64_t fp_off, ra_off;
};

#define CMN_CFI_CIE_CACHE 8u /* CIEs kept parsed, with their initial rules */

struct cmn_cfi_cie_entry {
    size_t at;                  /* the CIE's offset in its section */
    const uint8_t *section;     /* and the section's bytes */
    bool ok;                    /* it parsed, and its instructions ran */
    struct cmn_cfi_cie cie;
    struct cmn_cfi_state init;  /* the rules after its initial instructions */
};

/* What a build collects and counts. Zero-initialize; free with cmn_cfi_build_free(). */
struct cmn_cfi_build {
    struct cmn_cfi_regs regs;
    struct cmn_cfi_row *rows;
    size_t n_rows, cap_rows;
    struct cmn_cfi_fde *fdes;
    size_t n_fdes, cap_fdes;
    size_t n_bad;      /* records that could not be read (skipped) */
    size_t n_stop;     /* FDEs with a rule the steppers do not follow */
    bool out_of_memory;
    struct cmn_cfi_cie_entry cies[CMN_CFI_CIE_CACHE]; /* most FDEs share a few CIEs */
    unsigned next_cie; /* the entry replaced next */
};

/* A bounded reader; any read past `end` sets is_bad and yields 0. */
struct cmn_cfi_cursor {
    const uint8_t *data;
    size_t at;
    size_t end;
    bool is_bad;
};

/* Where a section's bytes are: their address (the one pc-relative pointers are relative
 * to) and what to subtract from decoded addresses to make them link-time addresses. */
struct cmn_cfi_section {
    const uint8_t *data;
    size_t size;
    uint64_t vaddr;  /* address of data[0] */
    uint64_t bias;   /* subtracted from every decoded code address */
    bool is_debug_frame;
};

static inline uint64_t cmn_cfi_u(struct cmn_cfi_cursor *c, size_t n)
{
    if (c->is_bad || c->end - c->at < n) {
        c->is_bad = true;
        return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)c->data[c->at + i] << (8 * i);
    c->at += n;
    return v;
}

static inline uint64_t cmn_cfi_uleb(struct cmn_cfi_cursor *c)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint8_t b = (uint8_t)cmn_cfi_u(c, 1);
        if (c->is_bad)
            return 0;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7fu) << shift;
        if (!(b & 0x80u))
            return v;
        if (shift > 63) {
            c->is_bad = true;
            return 0;
        }
    }
}

static inline int64_t cmn_cfi_sleb(struct cmn_cfi_cursor *c)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b;
    do {
        b = (uint8_t)cmn_cfi_u(c, 1);
        if (c->is_bad || shift > 63) {
            c->is_bad = true;
            return 0;
        }
        v |= (uint64_t)(b & 0x7fu) << shift;
        shift += 7;
    } while (b & 0x80u);
    if (shift < 64 && (b & 0x40u))
        v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

/* Pointer encodings (DW_EH_PE_*). */
#define CMN_PE_OMIT 0xffu
#define CMN_PE_FORMAT 0x0fu
#define CMN_PE_APPLY 0x70u
#define CMN_PE_PCREL 0x10u
#define CMN_PE_INDIRECT 0x80u

/* A pointer in encoding enc; pc-relative ones count from the field's address. Only the
 * absolute and pc-relative forms are accepted: the others need bases no unwinder of code
 * addresses has (text, data, function) and mark the cursor bad. */
static inline uint64_t cmn_cfi_ptr(struct cmn_cfi_cursor *c, uint8_t enc,
                                   const struct cmn_cfi_section *s)
{
    uint64_t field = s->vaddr + c->at, v;
    if ((enc & CMN_PE_INDIRECT) || ((enc & CMN_PE_APPLY) != 0 && (enc & CMN_PE_APPLY) !=
                                                                     CMN_PE_PCREL)) {
        c->is_bad = true;
        return 0;
    }
    switch (enc & CMN_PE_FORMAT) {
    case 0x0: v = cmn_cfi_u(c, 8); break;                         /* absptr (64-bit) */
    case 0x1: v = cmn_cfi_uleb(c); break;
    case 0x2: v = cmn_cfi_u(c, 2); break;
    case 0x3: v = cmn_cfi_u(c, 4); break;
    case 0x4: v = cmn_cfi_u(c, 8); break;
    case 0x9: v = (uint64_t)cmn_cfi_sleb(c); break;
    case 0xa: v = (uint64_t)(int64_t)(int16_t)cmn_cfi_u(c, 2); break;
    case 0xb: v = (uint64_t)(int64_t)(int32_t)cmn_cfi_u(c, 4); break;
    case 0xc: v = cmn_cfi_u(c, 8); break;
    default: c->is_bad = true; return 0;
    }
    if ((enc & CMN_PE_APPLY) == CMN_PE_PCREL)
        v += field;
    return v;
}

/* The record at c->at: its length field, leaving c->at after it and *end at its end.
 * 0 for the terminator; sets is_bad when it does not fit. *is64: a 64-bit record. */
static inline uint64_t cmn_cfi_record(struct cmn_cfi_cursor *c, size_t *end, bool *is64)
{
    uint64_t len = cmn_cfi_u(c, 4);
    *is64 = len == 0xffffffffu;
    if (*is64)
        len = cmn_cfi_u(c, 8);
    if (c->is_bad || len > c->end - c->at) {
        c->is_bad = true;
        return 0;
    }
    *end = c->at + (size_t)len;
    return len;
}

/* Reads the augmentation data the letters of aug announce; unknown letters are fine
 * after 'z' (its length skips them), fatal without it. */
static inline bool cmn_cfi_augmentation(struct cmn_cfi_cursor *c, const char *aug, size_t aug_len,
                                        struct cmn_cfi_cie *cie,
                                        const struct cmn_cfi_section *s)
{
    if (aug_len == 0)
        return true;
    if (aug[0] != 'z')
        return false; /* "eh" and other pre-'z' forms are not read */
    cie->has_aug_data = true;
    uint64_t len = cmn_cfi_uleb(c);
    if (c->is_bad || len > c->end - c->at)
        return false;
    size_t data_end = c->at + (size_t)len;
    for (size_t i = 1; i < aug_len && !c->is_bad; i++) {
        switch (aug[i]) {
        case 'L': cmn_cfi_u(c, 1); break;
        case 'P': {
            uint8_t enc = (uint8_t)cmn_cfi_u(c, 1);
            cmn_cfi_ptr(c, (uint8_t)(enc & ~CMN_PE_INDIRECT & ~CMN_PE_APPLY), s);
            break;
        }
        case 'R': cie->fde_enc = (uint8_t)cmn_cfi_u(c, 1); break;
        case 'S': cie->is_signal = true; break;
        default: i = aug_len; break; /* the rest is skipped by the length */
        }
    }
    c->at = data_end;
    return !c->is_bad;
}

/* Parses the CIE at offset `at`; false when it is not one or cannot be read. */
static inline bool cmn_cfi_parse_cie(const struct cmn_cfi_section *s, size_t at,
                                     struct cmn_cfi_cie *cie)
{
    struct cmn_cfi_cursor c = {s->data, at, s->size, false};
    size_t end;
    bool is64;
    if (cmn_cfi_record(&c, &end, &is64) == 0 || c.is_bad)
        return false;
    c.end = end;
    uint64_t id = cmn_cfi_u(&c, is64 ? 8 : 4);
    uint64_t want = s->is_debug_frame ? (is64 ? ~(uint64_t)0 : 0xffffffffu) : 0;
    if (c.is_bad || id != want)
        return false;
    memset(cie, 0, sizeof(*cie));
    cie->fde_enc = 0x00; /* absptr */
    cie->addr_size = 8;
    unsigned version = (unsigned)cmn_cfi_u(&c, 1);
    const char *aug = (const char *)s->data + c.at;
    size_t aug_len = strnlen(aug, c.end - c.at);
    if (aug_len == c.end - c.at || (version != 1 && version != 3 && version != 4))
        return false;
    c.at += aug_len + 1;
    if (version == 4) {
        cie->addr_size = (uint8_t)cmn_cfi_u(&c, 1);
        cmn_cfi_u(&c, 1); /* segment selector size */
        if (cie->addr_size != 8 && cie->addr_size != 4)
            return false;
    }
    cie->code_align = cmn_cfi_uleb(&c);
    cie->data_align = cmn_cfi_sleb(&c);
    cie->ra_reg = version == 1 ? (unsigned)cmn_cfi_u(&c, 1) : (unsigned)cmn_cfi_uleb(&c);
    if (c.is_bad || !cmn_cfi_augmentation(&c, aug, aug_len, cie, s))
        return false;
    cie->insns_at = c.at;
    cie->insns_end = c.end;
    return cie->code_align != 0;
}

/* The rule word for a state. */
static inline uint32_t cmn_cfi_encode(const struct cmn_cfi_build *b, const struct cmn_cfi_cie *cie,
                                      const struct cmn_cfi_state *st)
{
    const struct cmn_cfi_regs *r = &b->regs;
    if (cie->is_signal)
        return cmn_uw_rule(CMN_UW_SIGNAL, CMN_UW_REG_UNKNOWN, CMN_UW_REG_UNKNOWN, 0);
    if (st->ra_how == CMN_CFI_UNDEF)
        return cmn_uw_rule(CMN_UW_END, 0, 0, 0);
    unsigned kind;
    int64_t off = st->cfa_off;
    if (st->cfa_how == CMN_CFI_CFA_REG && st->cfa_reg == r->sp)
        kind = CMN_UW_CFA_SP;
    else if (st->cfa_how == CMN_CFI_CFA_REG && st->cfa_reg == r->fp)
        kind = CMN_UW_CFA_FP;
    else if (st->cfa_how == CMN_CFI_CFA_DEREF && st->cfa_reg == r->fp)
        kind = CMN_UW_CFA_FP_DEREF;
    else if (st->cfa_how == CMN_CFI_CFA_PLT)
        return cmn_uw_rule(CMN_UW_PLT, CMN_UW_REG_SAME, 1, (int32_t)st->cfa_off);
    else
        return cmn_uw_rule(CMN_UW_STOP, 0, 0, 0);
    if (off % 8 != 0 || off < CMN_UW_OFF_MIN || off > CMN_UW_OFF_MAX)
        return cmn_uw_rule(CMN_UW_STOP, 0, 0, 0);

    unsigned ra;
    if (st->ra_how == CMN_CFI_SAME && !r->is_x86_64)
        ra = CMN_UW_REG_SAME;
    else if (st->ra_how == CMN_CFI_AT && st->ra_off < 0 && st->ra_off % 8 == 0 &&
             -st->ra_off / 8 <= CMN_UW_SLOT_MAX)
        ra = (unsigned)(-st->ra_off / 8);
    else
        return cmn_uw_rule(CMN_UW_STOP, 0, 0, 0);

    unsigned fp;
    if (st->fp_how == CMN_CFI_SAME)
        fp = CMN_UW_REG_SAME;
    else if (st->fp_how == CMN_CFI_AT && st->fp_off < 0 && st->fp_off % 8 == 0 &&
             -st->fp_off / 8 <= CMN_UW_SLOT_MAX)
        fp = (unsigned)(-st->fp_off / 8);
    else if (st->fp_how == CMN_CFI_AT_FP)
        fp = CMN_UW_FP_AT_FP;
    else
        fp = CMN_UW_REG_UNKNOWN;
    return cmn_uw_rule(kind, fp, ra, (int32_t)(off / 8));
}

/* Recognises the few DWARF expressions that walks follow: the linker's PLT rule
 * (x86_64: breg7 8; breg16 0; lit15; and; litN; ge; lit3; shl; plus), the CFA of a
 * realigned frame (breg<fp> off; deref) and a frame pointer saved where it points
 * (breg<fp> 0, as a register's location). */
static inline void cmn_cfi_cfa_expr(const struct cmn_cfi_build *b, const uint8_t *e, size_t n,
                                    struct cmn_cfi_state *st)
{
    static const uint8_t plt_head[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a};
    static const uint8_t plt_tail[] = {0x2a, 0x33, 0x24, 0x22};
    st->cfa_how = CMN_CFI_CFA_OTHER;
    if (b->regs.is_x86_64 && n == 11 && memcmp(e, plt_head, 6) == 0 && e[6] >= 0x30 &&
        e[6] <= 0x4f && memcmp(e + 7, plt_tail, 4) == 0) {
        st->cfa_how = CMN_CFI_CFA_PLT;
        st->cfa_off = e[6] - 0x30;
        return;
    }
    if (n >= 3 && e[0] == 0x70 + b->regs.fp && e[n - 1] == 0x06 /* deref */) {
        struct cmn_cfi_cursor c = {e, 1, n - 1, false};
        int64_t off = cmn_cfi_sleb(&c);
        if (!c.is_bad && c.at == n - 1) {
            st->cfa_how = CMN_CFI_CFA_DEREF;
            st->cfa_reg = b->regs.fp;
            st->cfa_off = off;
        }
    }
}

static inline void cmn_cfi_reg_expr(const struct cmn_cfi_build *b, unsigned reg,
                                    const uint8_t *e, size_t n, struct cmn_cfi_state *st)
{
    if (reg == b->regs.fp)
        st->fp_how = n == 2 && e[0] == 0x70 + b->regs.fp && e[1] == 0 ? CMN_CFI_AT_FP
                                                                     : CMN_CFI_OTHER;
    else if (reg == b->regs.ra)
        st->ra_how = CMN_CFI_OTHER;
}

/* Sets register reg's rule (only the frame pointer's and the return address's count). */
static inline void cmn_cfi_set(const struct cmn_cfi_build *b, unsigned reg, unsigned how,
                               int64_t off, struct cmn_cfi_state *st)
{
    if (reg == b->regs.fp) {
        st->fp_how = how;
        st->fp_off = off;
    } else if (reg == b->regs.ra) {
        st->ra_how = how;
        st->ra_off = off;
    }
}

static inline void cmn_cfi_restore(const struct cmn_cfi_build *b, unsigned reg,
                                   const struct cmn_cfi_state *init, struct cmn_cfi_state *st)
{
    if (reg == b->regs.fp) {
        st->fp_how = init->fp_how;
        st->fp_off = init->fp_off;
    } else if (reg == b->regs.ra) {
        st->ra_how = init->ra_how;
        st->ra_off = init->ra_off;
    }
}

/* Appends one row of the FDE being read (b->fdes[b->n_fdes]); false when memory runs
 * out. */
static inline bool cmn_cfi_put_row(struct cmn_cfi_build *b, uint64_t pc, uint32_t rule)
{
    struct cmn_cfi_fde *f = &b->fdes[b->n_fdes];
    uint32_t off = (uint32_t)(pc - f->start);
    if (f->n > 0 && b->rows[b->n_rows - 1].off == off) {
        b->rows[b->n_rows - 1].rule = rule; /* a zero advance: the later rule holds */
        return true;
    }
    if (f->n > 0 && b->rows[b->n_rows - 1].rule == rule)
        return true; /* the same rule goes on */
    if (b->n_rows >= UINT32_MAX || !CMN_GROW(b->rows, b->cap_rows, b->n_rows + 1, 1024)) {
        b->out_of_memory = true;
        return false;
    }
    b->rows[b->n_rows++] = (struct cmn_cfi_row){off, rule};
    f->n++;
    return true;
}

/* The running state of one FDE's instructions. */
struct cmn_cfi_run {
    struct cmn_cfi_build *b;
    const struct cmn_cfi_cie *cie;
    const struct cmn_cfi_section *s;
    struct cmn_cfi_state st, init;
    struct cmn_cfi_state saved[CMN_CFI_STATE_DEPTH];
    unsigned depth;
    uint64_t loc, end; /* current location; the FDE's end */
    bool in_cie;       /* running the CIE's initial instructions: no advance allowed */
};

/* Ends the row at r->loc and moves to new_loc. */
static inline bool cmn_cfi_advance(struct cmn_cfi_run *r, uint64_t new_loc)
{
    if (r->in_cie)
        return false;
    if (r->loc < r->end && !cmn_cfi_put_row(r->b, r->loc, cmn_cfi_encode(r->b, r->cie, &r->st)))
        return false;
    r->loc = new_loc < r->loc ? r->end : new_loc; /* never backwards */
    return true;
}

/* An unsigned operand as a signed one; one beyond the signed range saturates. */
static inline int64_t cmn_cfi_signed(uint64_t v)
{
    return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* v times the CIE's data alignment factor; a product that overflows gives INT64_MAX, an
 * offset no rule accepts (a hostile factor or operand must not be undefined behaviour). */
static inline int64_t cmn_cfi_scaled(int64_t v, int64_t align)
{
    int64_t r;
    return __builtin_mul_overflow(v, align, &r) ? INT64_MAX : r;
}

/* Runs one instruction (opcode op already read); false ends the instructions. */
static inline bool cmn_cfi_step(struct cmn_cfi_run *r, struct cmn_cfi_cursor *c, uint8_t op)
{
    const struct cmn_cfi_build *b = r->b;
    const struct cmn_cfi_cie *cie = r->cie;
    struct cmn_cfi_state *st = &r->st;
    unsigned high = op >> 6, low = op & 0x3fu, reg;
    int64_t off;
    if (high == 1)
        return cmn_cfi_advance(r, r->loc + low * cie->code_align);
    if (high == 2) {
        off = cmn_cfi_scaled(cmn_cfi_signed(cmn_cfi_uleb(c)), cie->data_align);
        cmn_cfi_set(b, low, CMN_CFI_AT, off, st);
        return !c->is_bad;
    }
    if (high == 3) {
        cmn_cfi_restore(b, low, &r->init, st);
        return true;
    }
    switch (op) {
    case 0x00: return true; /* nop */
    case 0x01: { /* set_loc */
        uint64_t to = r->s->is_debug_frame ? cmn_cfi_u(c, cie->addr_size)
                                           : cmn_cfi_ptr(c, cie->fde_enc, r->s) - r->s->bias;
        return !c->is_bad && cmn_cfi_advance(r, to);
    }
    case 0x02: return cmn_cfi_advance(r, r->loc + cmn_cfi_u(c, 1) * cie->code_align);
    case 0x03: return cmn_cfi_advance(r, r->loc + cmn_cfi_u(c, 2) * cie->code_align);
    case 0x04: return cmn_cfi_advance(r, r->loc + cmn_cfi_u(c, 4) * cie->code_align);
    case 0x05: /* offset_extended */
        reg = (unsigned)cmn_cfi_uleb(c);
        cmn_cfi_set(b, reg, CMN_CFI_AT,
                    cmn_cfi_scaled(cmn_cfi_signed(cmn_cfi_uleb(c)), cie->data_align), st);
        return !c->is_bad;
    case 0x06: /* restore_extended */
        cmn_cfi_restore(b, (unsigned)cmn_cfi_uleb(c), &r->init, st);
        return !c->is_bad;
    case 0x07: /* undefined */
        cmn_cfi_set(b, (unsigned)cmn_cfi_uleb(c), CMN_CFI_UNDEF, 0, st);
        return !c->is_bad;
    case 0x08: /* same_value */
        cmn_cfi_set(b, (unsigned)cmn_cfi_uleb(c), CMN_CFI_SAME, 0, st);
        return !c->is_bad;
    case 0x09: /* register: saved in another register */
        reg = (unsigned)cmn_cfi_uleb(c);
        cmn_cfi_uleb(c);
        cmn_cfi_set(b, reg, CMN_CFI_OTHER, 0, st);
        return !c->is_bad;
    case 0x0a: /* remember_state */
        if (r->depth == CMN_CFI_STATE_DEPTH)
            return false;
        r->saved[r->depth++] = *st;
        return true;
    case 0x0b: /* restore_state: the CFA's rule too, as GCC's and LLVM's unwinders do */
        if (r->depth == 0)
            return false;
        *st = r->saved[--r->depth];
        return true;
    case 0x0c: /* def_cfa */
        st->cfa_how = CMN_CFI_CFA_REG;
        st->cfa_reg = (unsigned)cmn_cfi_uleb(c);
        st->cfa_off = (int64_t)cmn_cfi_uleb(c);
        return !c->is_bad;
    case 0x0d: /* def_cfa_register */
        st->cfa_reg = (unsigned)cmn_cfi_uleb(c);
        if (st->cfa_how != CMN_CFI_CFA_REG)
            st->cfa_how = CMN_CFI_CFA_OTHER;
        return !c->is_bad;
    case 0x0e: /* def_cfa_offset */
        st->cfa_off = (int64_t)cmn_cfi_uleb(c);
        if (st->cfa_how != CMN_CFI_CFA_REG)
            st->cfa_how = CMN_CFI_CFA_OTHER;
        return !c->is_bad;
    case 0x0f: { /* def_cfa_expression */
        uint64_t n = cmn_cfi_uleb(c);
        if (c->is_bad || n > c->end - c->at)
            return false;
        cmn_cfi_cfa_expr(b, c->data + c->at, (size_t)n, st);
        c->at += (size_t)n;
        return true;
    }
    case 0x10:   /* expression */
    case 0x16: { /* val_expression */
        reg = (unsigned)cmn_cfi_uleb(c);
        uint64_t n = cmn_cfi_uleb(c);
        if (c->is_bad || n > c->end - c->at)
            return false;
        if (op == 0x10)
            cmn_cfi_reg_expr(b, reg, c->data + c->at, (size_t)n, st);
        else
            cmn_cfi_set(b, reg, CMN_CFI_OTHER, 0, st);
        c->at += (size_t)n;
        return true;
    }
    case 0x11: /* offset_extended_sf */
        reg = (unsigned)cmn_cfi_uleb(c);
        cmn_cfi_set(b, reg, CMN_CFI_AT, cmn_cfi_scaled(cmn_cfi_sleb(c), cie->data_align), st);
        return !c->is_bad;
    case 0x12: /* def_cfa_sf */
        st->cfa_how = CMN_CFI_CFA_REG;
        st->cfa_reg = (unsigned)cmn_cfi_uleb(c);
        st->cfa_off = cmn_cfi_scaled(cmn_cfi_sleb(c), cie->data_align);
        return !c->is_bad;
    case 0x13: /* def_cfa_offset_sf */
        st->cfa_off = cmn_cfi_scaled(cmn_cfi_sleb(c), cie->data_align);
        if (st->cfa_how != CMN_CFI_CFA_REG)
            st->cfa_how = CMN_CFI_CFA_OTHER;
        return !c->is_bad;
    case 0x14: /* val_offset */
    case 0x15: /* val_offset_sf */
        reg = (unsigned)cmn_cfi_uleb(c);
        if (op == 0x14)
            cmn_cfi_uleb(c);
        else
            cmn_cfi_sleb(c);
        cmn_cfi_set(b, reg, CMN_CFI_OTHER, 0, st);
        return !c->is_bad;
    case 0x2d: /* GNU_window_save; aarch64: negate_ra_state (return address signing) */
        return true;
    case 0x2e: /* GNU_args_size */
        cmn_cfi_uleb(c);
        return !c->is_bad;
    case 0x2f: /* GNU_negative_offset_extended */
        reg = (unsigned)cmn_cfi_uleb(c);
        cmn_cfi_set(b, reg, CMN_CFI_AT,
                    cmn_cfi_scaled(-cmn_cfi_signed(cmn_cfi_uleb(c)), cie->data_align), st);
        return !c->is_bad;
    default:
        return false; /* unknown: what follows cannot be read */
    }
}

/* Runs instructions [at, end) of the section on r. false when they stopped early. */
static inline bool cmn_cfi_run_insns(struct cmn_cfi_run *r, size_t at, size_t end)
{
    struct cmn_cfi_cursor c = {r->s->data, at, end, false};
    while (c.at < c.end && (r->in_cie || r->loc < r->end)) {
        uint8_t op = (uint8_t)cmn_cfi_u(&c, 1);
        if (!cmn_cfi_step(r, &c, op) || c.is_bad)
            return false;
    }
    return true;
}

/* The CIE at cie_at, parsed and its initial instructions run, from the cache or now;
 * NULL when it cannot be used. */
static inline const struct cmn_cfi_cie_entry *cmn_cfi_cie_at(struct cmn_cfi_build *b,
                                                             const struct cmn_cfi_section *s,
                                                             size_t cie_at)
{
    for (unsigned i = 0; i < CMN_CFI_CIE_CACHE; i++)
        if (b->cies[i].section == s->data && b->cies[i].at == cie_at)
            return b->cies[i].ok ? &b->cies[i] : NULL;
    struct cmn_cfi_cie_entry *e = &b->cies[b->next_cie++ % CMN_CFI_CIE_CACHE];
    *e = (struct cmn_cfi_cie_entry){.at = cie_at, .section = s->data};
    e->ok = cmn_cfi_parse_cie(s, cie_at, &e->cie);
    if (e->ok) {
        /* The initial rules, which DW_CFA_restore returns to; no advance is allowed. */
        struct cmn_cfi_run r = {.b = b, .cie = &e->cie, .s = s, .in_cie = true};
        r.st.cfa_how = CMN_CFI_CFA_OTHER;
        e->ok = cmn_cfi_run_insns(&r, e->cie.insns_at, e->cie.insns_end);
        e->init = r.st;
    }
    return e->ok ? e : NULL;
}

/* Parses the FDE whose fields after the CIE pointer start at c->at (record end c->end)
 * and appends its rows; cie_at is its CIE's offset. */
static inline void cmn_cfi_fde(struct cmn_cfi_build *b, const struct cmn_cfi_section *s,
                               struct cmn_cfi_cursor *c, size_t cie_at)
{
    const struct cmn_cfi_cie_entry *e = cmn_cfi_cie_at(b, s, cie_at);
    if (e == NULL) {
        b->n_bad++;
        return;
    }
    const struct cmn_cfi_cie *cie = &e->cie;
    uint64_t start, range;
    if (s->is_debug_frame) {
        start = cmn_cfi_u(c, cie->addr_size);
        range = cmn_cfi_u(c, cie->addr_size);
    } else {
        start = cmn_cfi_ptr(c, cie->fde_enc, s) - s->bias;
        range = cmn_cfi_ptr(c, (uint8_t)(cie->fde_enc & CMN_PE_FORMAT), s);
    }
    if (cie->has_aug_data) {
        uint64_t n = cmn_cfi_uleb(c);
        if (n > c->end - c->at)
            c->is_bad = true;
        else
            c->at += (size_t)n;
    }
    /* An FDE at address 0 describes code the linker discarded. */
    if (c->is_bad || start == 0 || range == 0 || range >= CMN_CFI_MAX_SPAN ||
        start + range < start) {
        b->n_bad += c->is_bad;
        return;
    }
    if (!CMN_GROW(b->fdes, b->cap_fdes, b->n_fdes + 1, 256)) {
        b->out_of_memory = true;
        return;
    }
    b->fdes[b->n_fdes] = (struct cmn_cfi_fde){start, (uint32_t)range, (uint32_t)b->n_rows, 0,
                                              (uint32_t)b->n_fdes};
    struct cmn_cfi_run r = {.b = b, .cie = cie, .s = s, .st = e->init, .init = e->init,
                            .loc = start, .end = start + range};
    if (!cmn_cfi_run_insns(&r, c->at, c->end)) {
        /* From where the instructions could not be followed: nothing is known. */
        b->n_stop++;
        r.st.cfa_how = CMN_CFI_CFA_OTHER;
        r.st.ra_how = CMN_CFI_SAME;
    }
    if (!b->out_of_memory && cmn_cfi_advance(&r, r.end))
        b->n_fdes++;
    else
        b->n_rows = b->fdes[b->n_fdes].first;
}

/* Reads every FDE of a section into b. */
static inline void cmn_cfi_add_section(struct cmn_cfi_build *b, const struct cmn_cfi_section *s)
{
    struct cmn_cfi_cursor c = {s->data, 0, s->size, false};
    /* CIEs are cached by their section's address and their offset in it: an earlier
     * section, freed since, may have had the same address (and a .debug_frame's CIEs are
     * not an .eh_frame's). The cache is this section's alone. */
    memset(b->cies, 0, sizeof(b->cies));
    b->next_cie = 0;
    /* Room for what such a section usually holds, at once (a row per 7 bytes, an FDE per
     * 40: measured on Debian's python3 and libc); more grows as needed. */
    if (!CMN_GROW(b->rows, b->cap_rows, b->n_rows + s->size / 6 + 16, 1024) ||
        !CMN_GROW(b->fdes, b->cap_fdes, b->n_fdes + s->size / 32 + 16, 256)) {
        b->out_of_memory = true;
        return;
    }
    while (c.at < c.end && !b->out_of_memory) {
        size_t rec_at = c.at, end;
        bool is64;
        uint64_t len = cmn_cfi_record(&c, &end, &is64);
        if (c.is_bad) {
            b->n_bad++;
            return;
        }
        if (len == 0) {
            if (!s->is_debug_frame)
                return; /* .eh_frame's terminator */
            continue;
        }
        size_t id_at = c.at;
        uint64_t id = cmn_cfi_u(&c, is64 ? 8 : 4);
        struct cmn_cfi_cursor rec = {s->data, c.at, end, c.is_bad};
        uint64_t cie_id = s->is_debug_frame ? (is64 ? ~(uint64_t)0 : 0xffffffffu) : 0;
        if (!c.is_bad && id != cie_id) {
            /* An FDE: its CIE lies before it in .eh_frame, anywhere in .debug_frame. */
            if (s->is_debug_frame ? id < s->size && id != rec_at : id <= id_at)
                cmn_cfi_fde(b, s, &rec, s->is_debug_frame ? (size_t)id : id_at - (size_t)id);
            else
                b->n_bad++;
        }
        c.at = end;
    }
}

/* 1 when code[0..n) holds, at some byte, what may be a load of the stack pointer from
 * memory (x86_64: a REX.W prefix without REX.R, 0x8b, a ModRM byte naming %rsp with a
 * memory operand): a function that switches stacks so (Go's asmcgocall, systemstack,
 * mcall, gogo, morestack: the current goroutine's or the scheduler's stack pointer read
 * from a g or a gobuf). Bytes are not decoded: an immediate or a displacement that looks
 * so also answers 1, which only stops walks early. */
static inline int cmn_cfi_loads_sp(const uint8_t *code, size_t n)
{
    for (size_t i = 0; i + 2 < n; i++)
        if ((code[i] & 0xfc) == 0x48 && code[i + 1] == 0x8b && (code[i + 2] & 0x38) == 0x20 &&
            (code[i + 2] & 0xc0) != 0xc0)
            return 1;
    return 0;
}

/* Go's runtime.asmcgocall (x86_64) calls the C function through `call *%rax` on the
 * system stack in one of two ways, recognised by their instructions whole, which fix
 * the layout CMN_UW_GO_CGO reads: after the switch, `mov %rdi,0x30(%rsp)` (g),
 * `mov 0x8(%rdi),%rdi` (g.stack.hi), `sub %rdx,%rdi` (less the goroutine's stack
 * pointer), `mov %rdi,0x28(%rsp)` (the depth), `mov %rbx,%rdi; mov %rbx,%rcx; call *%rax`;
 * without one (already on the system stack), `movq $0x0,0x30(%rsp)`,
 * `mov %rdx,0x28(%rsp)` (the caller's stack pointer itself), then the same three. Go 1.19
 * lays it out so (Go 1.17 to 1.20 alike). */
static const uint8_t cmn_cfi_go_cgo_switched[] = {
    0x48, 0x89, 0x7c, 0x24, 0x30, 0x48, 0x8b, 0x7f, 0x08, 0x48, 0x29, 0xd7, 0x48,
    0x89, 0x7c, 0x24, 0x28, 0x48, 0x89, 0xdf, 0x48, 0x89, 0xd9, 0xff, 0xd0};
static const uint8_t cmn_cfi_go_cgo_nosave[] = {
    0x48, 0xc7, 0x44, 0x24, 0x30, 0x00, 0x00, 0x00, 0x00, 0x48, 0x89,
    0x54, 0x24, 0x28, 0x48, 0x89, 0xdf, 0x48, 0x89, 0xd9, 0xff, 0xd0};

/* The offsets in code[0..n) of the `call *%rax` instructions that end either of the
 * sequences above, into at[] (2 at most); how many. */
static inline unsigned cmn_cfi_go_cgo_calls(const uint8_t *code, size_t n, uint32_t at[2])
{
    unsigned k = 0;
    for (size_t i = 0; i < n && k < 2; i++) {
        size_t a = sizeof(cmn_cfi_go_cgo_switched), b = sizeof(cmn_cfi_go_cgo_nosave);
        if (n - i >= a && memcmp(code + i, cmn_cfi_go_cgo_switched, a) == 0)
            at[k++] = (uint32_t)(i + a - 2);
        else if (n - i >= b && memcmp(code + i, cmn_cfi_go_cgo_nosave, b) == 0)
            at[k++] = (uint32_t)(i + b - 2);
    }
    return k;
}

/* A module whose call-frame information is Go's (its linker's .debug_frame): Go's
 * assembly functions that switch stacks keep rules that assume one stack, so a walk by
 * them would take a word of the other stack for a return address (a wrong caller, found
 * on a cgo call's samples: runtime.exitsyscall0 above runtime.asmcgocall). Every FDE whose
 * code (text: n bytes at link-time address vaddr) loads the stack pointer from memory gets
 * STOP rows: the walk ends there and says why. Where that code is asmcgocall's, its call
 * of the C function gets a CMN_UW_GO_CGO row instead (its two bytes: a return address
 * there is looked up inside the call), which a walk of live memory follows to the
 * goroutine's stack. x86_64 only. Returns how many FDEs were stopped. */
static inline unsigned cmn_cfi_stop_stack_switches(struct cmn_cfi_build *b, const uint8_t *text,
                                                   uint64_t vaddr, size_t n)
{
    unsigned stopped = 0;
    if (!b->regs.is_x86_64)
        return 0;
    for (size_t i = 0; i < b->n_fdes; i++) {
        const struct cmn_cfi_fde *f = &b->fdes[i];
        if (f->start < vaddr || f->start - vaddr > n || n - (f->start - vaddr) < f->len ||
            !cmn_cfi_loads_sp(text + (f->start - vaddr), f->len))
            continue;
        const uint32_t stop = cmn_uw_rule(CMN_UW_STOP, 0, 0, 0);
        for (uint32_t r = 0; r < f->n; r++)
            b->rows[f->first + r].rule = stop;
        stopped++;
        uint32_t calls[2];
        unsigned k = cmn_cfi_go_cgo_calls(text + (f->start - vaddr), f->len, calls);
        if (k == 0 || f->n != 1 || b->rows[f->first].off != 0)
            continue;
        /* The FDE's one row becomes five (or three), appended: STOP, then each call. */
        if (!CMN_GROW(b->rows, b->cap_rows, b->n_rows + 1 + 2 * k, 1024)) {
            b->out_of_memory = true;
            return stopped;
        }
        uint32_t first = (uint32_t)b->n_rows;
        b->rows[b->n_rows++] = (struct cmn_cfi_row){0, stop};
        for (unsigned c = 0; c < k; c++) {
            b->rows[b->n_rows++] =
                (struct cmn_cfi_row){calls[c], cmn_uw_rule(CMN_UW_GO_CGO, 0, 0, 0)};
            b->rows[b->n_rows++] = (struct cmn_cfi_row){calls[c] + 2, stop};
        }
        b->fdes[i].first = first;
        b->fdes[i].n = 1 + 2 * k;
    }
    return stopped;
}

/* The C runtime's _init (glibc's crti.o and crtn.o, x86_64): the first code of the
 * executable segment of most modules, the first a library runs once mapped (its first
 * page fault: samples land there), and with no FDE. Only these bytes, exactly (an
 * optional endbr64; `sub $8,%rsp`; `mov __gmon_start__@GOTPCREL(%rip),%rax` with any
 * displacement; `test %rax,%rax; je +2; call *%rax`; `add $8,%rsp; ret`). */
#define CMN_CFI_CRT_INIT_MAX 27u /* bytes the recogniser looks at */

/* When code (n bytes at link-time address vaddr) is the C runtime's _init, adds an FDE
 * for it, read after every other (an FDE of the module that covers it wins): its frame is
 * 8 bytes from `sub` to `add`, its return address at the CFA minus 8. It complements the
 * module's own FDEs: to a build without any it adds nothing (the module has no table). 1
 * when added. */
static inline int cmn_cfi_add_crt_init(struct cmn_cfi_build *b, uint64_t vaddr,
                                       const uint8_t *code, size_t n)
{
    static const uint8_t endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
    static const uint8_t head[] = {0x48, 0x83, 0xec, 0x08, 0x48, 0x8b, 0x05};
    static const uint8_t tail[] = {0x48, 0x85, 0xc0, 0x74, 0x02, 0xff, 0xd0,
                                   0x48, 0x83, 0xc4, 0x08, 0xc3};
    if (!b->regs.is_x86_64 || b->n_fdes == 0 || vaddr == 0 || n < 23)
        return 0;
    size_t e = n >= 27 && memcmp(code, endbr64, 4) == 0 ? 4 : 0;
    if (memcmp(code + e, head, sizeof(head)) != 0 || memcmp(code + e + 11, tail, sizeof(tail)) != 0)
        return 0;
    if (!CMN_GROW(b->fdes, b->cap_fdes, b->n_fdes + 1, 256) ||
        !CMN_GROW(b->rows, b->cap_rows, b->n_rows + 3, 1024)) {
        b->out_of_memory = true;
        return 0;
    }
    uint32_t at_sub = (uint32_t)e, at_ret = (uint32_t)e + 22;
    const struct cmn_cfi_row rows[] = {
        {0, cmn_uw_rule(CMN_UW_CFA_SP, CMN_UW_REG_SAME, 1, 1)},          /* CFA = sp + 8 */
        {at_sub + 4, cmn_uw_rule(CMN_UW_CFA_SP, CMN_UW_REG_SAME, 1, 2)}, /* after sub: 16 */
        {at_ret, cmn_uw_rule(CMN_UW_CFA_SP, CMN_UW_REG_SAME, 1, 1)},     /* at ret: 8 */
    };
    b->fdes[b->n_fdes] = (struct cmn_cfi_fde){vaddr, at_ret + 1, (uint32_t)b->n_rows, 3,
                                              (uint32_t)b->n_fdes};
    memcpy(b->rows + b->n_rows, rows, sizeof(rows));
    b->n_rows += 3;
    b->n_fdes++;
    return 1;
}

static inline int cmn_cfi_fde_cmp(const void *va, const void *vb)
{
    const struct cmn_cfi_fde *a = va, *b = vb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* Merges the rows of the sorted FDEs into one run: overlaps go to the FDE read first, a
 * gap between FDEs gets a CMN_UW_NONE row, equal neighbours merge. With pc and rule NULL
 * it only counts; else it writes offsets from lo and rules. Returns the rows; *hi: the end
 * of the last FDE kept. */
static inline size_t cmn_cfi_merge(const struct cmn_cfi_build *b, uint64_t lo, uint32_t *pc,
                                   uint32_t *rule, uint64_t *hi)
{
    size_t n = 0;
    uint32_t last_rule = 0, last_pc = 0;
    *hi = lo;
    for (size_t i = 0; i < b->n_fdes; i++) {
        const struct cmn_cfi_fde *f = &b->fdes[i];
        if (f->start < *hi || f->start + f->len - lo >= CMN_CFI_MAX_SPAN)
            continue; /* overlaps one kept, or too far from the first */
        if (f->start > *hi && n > 0 && last_rule != 0) {
            last_pc = (uint32_t)(*hi - lo); /* a gap: no information */
            last_rule = 0;
            if (pc) {
                pc[n] = last_pc;
                rule[n] = 0;
            }
            n++;
        }
        for (uint32_t k = 0; k < f->n; k++) {
            const struct cmn_cfi_row *row = &b->rows[f->first + k];
            uint32_t at = (uint32_t)(f->start + row->off - lo);
            if (n > 0 && last_rule == row->rule)
                continue;
            if (n == 0 || last_pc != at)
                n++;
            last_pc = at;
            last_rule = row->rule;
            if (pc) {
                pc[n - 1] = at;
                rule[n - 1] = row->rule;
            }
        }
        *hi = f->start + f->len;
    }
    if (n > 0 && last_rule != 0) {
        if (pc) {
            pc[n] = (uint32_t)(*hi - lo);
            rule[n] = 0;
        }
        n++;
    }
    return n;
}

/* Not async-signal-safe. Assembles the rows of every FDE added into a table, in memory
 * from alloc(ctx, bytes) (4-byte aligned; NULL fails). Returns the table, or NULL when
 * there are no rows or memory ran out (b->out_of_memory then). */
static inline struct cmn_uw_table *cmn_cfi_table(struct cmn_cfi_build *b,
                                                 void *(*alloc)(void *ctx, uint64_t bytes),
                                                 void *ctx)
{
    if (b->n_fdes == 0 || b->out_of_memory)
        return NULL;
    for (size_t i = 1; i < b->n_fdes; i++) {
        if (cmn_cfi_fde_cmp(&b->fdes[i - 1], &b->fdes[i]) > 0) {
            qsort(b->fdes, b->n_fdes, sizeof(b->fdes[0]), cmn_cfi_fde_cmp);
            break;
        }
    }
    uint64_t lo = b->fdes[0].start & ~(uint64_t)((1u << CMN_UW_PAGE_SHIFT) - 1), hi;
    size_t n = cmn_cfi_merge(b, lo, NULL, NULL, &hi);
    if (n == 0 || n > UINT32_MAX)
        return NULL;
    void *mem = alloc(ctx, cmn_uw_table_bytes(n, hi - lo));
    if (mem == NULL) {
        b->out_of_memory = true;
        return NULL;
    }
    struct cmn_uw_table *t = cmn_uw_table_layout(mem, lo, hi - lo, (uint32_t)n);
    cmn_cfi_merge(b, lo, (uint32_t *)((char *)t + t->pcs_at),
                  (uint32_t *)((char *)t + t->rules_at), &hi);
    cmn_uw_table_index(t);
    return t;
}

static inline void cmn_cfi_build_free(struct cmn_cfi_build *b)
{
    free(b->rows);
    free(b->fdes);
    b->rows = NULL;
    b->fdes = NULL;
    b->n_rows = b->cap_rows = b->n_fdes = b->cap_fdes = 0;
}

#endif
