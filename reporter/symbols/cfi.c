/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A reader of .eh_frame (the LSB's form of DWARF call frame information) that tracks only
 * the CFA rule. Layout of the section, records back to back until a zero length:
 *
 *   CIE: length u32 (0xffffffff: u64 follows) | id u32 = 0 | version u8 | augmentation
 *        string | [v4: address and segment size] | code alignment ULEB | data alignment
 *        SLEB | return register | ['z': ULEB length, then data per letter L P R S] |
 *        initial instructions
 *   FDE: length | id u32 = offset back from this field to its CIE | pc_begin, pc_range
 *        (in the CIE's 'R' pointer encoding) | ['z': ULEB length, data] | instructions
 *
 * An FDE's rule at an address comes from running its CIE's initial instructions, then its
 * own up to the first advance past the address. Called by reporter/symbols/module.c, once per
 * module to index and once per distinct leaf address to query; reporter thread only.
 */
#include "reporter/symbols/cfi.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"

#define CFI_STATE_DEPTH 16u /* DW_CFA_remember_state nesting this reader follows */

/* Pointer encodings (DW_EH_PE_*): a format in the low nibble, an application above. */
#define PE_OMIT 0xffu
#define PE_FORMAT 0x0fu
#define PE_APPLY 0x70u
#define PE_PCREL 0x10u

struct rep_cfi_fde {
    uint64_t start;   /* first address covered */
    uint64_t end;     /* one past the last */
    size_t insns_at;  /* offset of its instructions in the section */
    size_t insns_end; /* one past them */
    size_t cie_at;    /* offset of its CIE's record */
};

/* A bounded reader over the section; any read past end sets is_bad and yields 0. */
struct cursor {
    const uint8_t *data;
    size_t at;
    size_t end;
    bool is_bad;
};

struct cie {
    uint64_t code_align;
    int64_t data_align;
    uint8_t fde_enc;   /* encoding of FDE addresses ('R'), absolute by default */
    bool has_aug_data; /* 'z': FDEs carry augmentation data to skip */
    size_t insns_at;
    size_t insns_end;
};

struct cfa_rule {
    unsigned reg;
    int64_t offset;
    bool is_known; /* false after an expression or anything not understood */
};

static uint64_t get_u(struct cursor *c, size_t n)
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

static uint64_t get_uleb(struct cursor *c)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint64_t b = get_u(c, 1);
        if (c->is_bad)
            return 0;
        if (shift < 64)
            v |= (b & 0x7f) << shift;
        if ((b & 0x80) == 0)
            return v;
    }
}

static int64_t get_sleb(struct cursor *c)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint64_t b;
    do {
        b = get_u(c, 1);
        if (c->is_bad)
            return 0;
        if (shift < 64)
            v |= (b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40))
        v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

static int64_t sign_extend(uint64_t v, unsigned bits)
{
    uint64_t m = (uint64_t)1 << (bits - 1);
    return (int64_t)((v ^ m) - m);
}

/* Reads a pointer in encoding enc; section_vma is the base of pc-relative ones. */
static uint64_t get_ptr(struct cursor *c, uint8_t enc, uint64_t section_vma)
{
    uint64_t here = section_vma + c->at, v;
    switch (enc & PE_FORMAT) {
    case 0x00:
        v = get_u(c, 8);
        break;
    case 0x01:
        v = get_uleb(c);
        break;
    case 0x02:
        v = get_u(c, 2);
        break;
    case 0x03:
        v = get_u(c, 4);
        break;
    case 0x04:
        v = get_u(c, 8);
        break;
    case 0x09:
        v = (uint64_t)get_sleb(c);
        break;
    case 0x0a:
        v = (uint64_t)sign_extend(get_u(c, 2), 16);
        break;
    case 0x0b:
        v = (uint64_t)sign_extend(get_u(c, 4), 32);
        break;
    case 0x0c:
        v = get_u(c, 8);
        break;
    default:
        c->is_bad = true;
        return 0;
    }
    switch (enc & PE_APPLY) {
    case 0x00:
        return v;
    case PE_PCREL:
        return v + here;
    default:
        c->is_bad = true;
        return 0; /* datarel, textrel, funcrel: not in .eh_frame FDEs */
    }
}

/* Reads a record's length; *end is one past the record, 0 for the terminator. */
static void get_length(struct cursor *c, size_t *end)
{
    uint64_t len = get_u(c, 4);
    if (len == 0xffffffffu)
        len = get_u(c, 8);
    *end = 0;
    if (!c->is_bad && len != 0 && len <= c->end - c->at)
        *end = c->at + (size_t)len;
    else if (len != 0)
        c->is_bad = true;
}

/* Skips the augmentation data of a CIE: 'L' and 'R' are one encoding byte, 'P' an encoding
 * byte and a pointer, 'S' and 'B' nothing. */
static void read_augmentation(struct cursor *c, const char *aug, struct cie *cie)
{
    size_t len = (size_t)get_uleb(c);
    if (c->is_bad || len > c->end - c->at) {
        c->is_bad = true;
        return;
    }
    size_t data_end = c->at + len;
    struct cursor d = {.data = c->data, .at = c->at, .end = data_end};
    for (const char *a = aug + 1; *a && !d.is_bad; a++) {
        if (*a == 'R') {
            cie->fde_enc = (uint8_t)get_u(&d, 1);
        } else if (*a == 'L') {
            get_u(&d, 1);
        } else if (*a == 'P') {
            uint8_t enc = (uint8_t)get_u(&d, 1);
            get_ptr(&d, enc & PE_FORMAT, 0);
        } else if (*a != 'S' && *a != 'B') {
            break; /* the length lets the rest be skipped */
        }
    }
    c->is_bad = c->is_bad || d.is_bad;
    c->at = data_end;
}

static bool parse_cie(const struct rep_cfi *cfi, size_t at, struct cie *cie)
{
    struct cursor c = {.data = cfi->data, .at = at, .end = cfi->n_bytes};
    size_t end;
    get_length(&c, &end);
    if (c.is_bad || end == 0)
        return false;
    c.end = end;
    uint8_t version;
    if (get_u(&c, 4) != 0 ||
        ((version = (uint8_t)get_u(&c, 1)) != 1 && version != 3 && version != 4))
        return false;
    const char *aug = (const char *)c.data + c.at;
    const uint8_t *nul = memchr(aug, '\0', c.end - c.at);
    if (nul == NULL)
        return false;
    c.at = (size_t)(nul - c.data) + 1;
    if (aug[0] != '\0' && aug[0] != 'z')
        return false; /* an old augmentation ("eh") this reader does not know */
    if (version == 4)
        get_u(&c, 2); /* address and segment selector sizes */
    /* Two reads in order: initializers of one struct are not sequenced. */
    *cie = (struct cie){0};
    cie->code_align = get_uleb(&c);
    cie->data_align = get_sleb(&c);
    if (version == 1)
        get_u(&c, 1);
    else
        get_uleb(&c);
    if (aug[0] == 'z') {
        cie->has_aug_data = true;
        read_augmentation(&c, aug, cie);
    }
    cie->insns_at = c.at;
    cie->insns_end = c.end;
    return !c.is_bad;
}

static int cmp_fde(const void *va, const void *vb)
{
    const struct rep_cfi_fde *a = va, *b = vb;
    return a->start < b->start ? -1 : a->start > b->start;
}

/* Reads the FDE whose id field is at c->at (the record ends at end) into f. */
static bool parse_fde(const struct rep_cfi *cfi, struct cursor *c, size_t end,
                      struct rep_cfi_fde *f)
{
    size_t id_at = c->at;
    uint64_t back = get_u(c, 4);
    if (c->is_bad || back > id_at)
        return false;
    struct cie cie;
    f->cie_at = id_at - (size_t)back;
    if (!parse_cie(cfi, f->cie_at, &cie))
        return false;
    f->start = get_ptr(c, cie.fde_enc, cfi->vma);
    f->end = f->start + get_ptr(c, cie.fde_enc & PE_FORMAT, 0);
    if (cie.has_aug_data) {
        size_t len = (size_t)get_uleb(c);
        if (len > end - c->at)
            return false;
        c->at += len;
    }
    f->insns_at = c->at;
    f->insns_end = end;
    return !c->is_bad && f->end > f->start;
}

int rep_cfi_init(struct rep_cfi *cfi, const uint8_t *data, size_t n, uint64_t vma)
{
    *cfi = (struct rep_cfi){.data = data, .n_bytes = n, .vma = vma};
    size_t cap = 0;
    struct cursor c = {.data = data, .end = n};
    while (n - c.at >= 4) {
        size_t end;
        get_length(&c, &end);
        if (c.is_bad || end == 0)
            break;
        struct cursor id = {.data = data, .at = c.at, .end = end};
        struct cursor body = id;
        struct rep_cfi_fde f;
        bool is_fde = get_u(&id, 4) != 0 && !id.is_bad;
        if (is_fde && parse_fde(cfi, &body, end, &f)) {
            if (!CMN_GROW(cfi->fdes, cap, cfi->n_fdes + 1, 256))
                return CMN_E_NOMEM;
            cfi->fdes[cfi->n_fdes++] = f;
        }
        c.at = end;
    }
    if (cfi->n_fdes > 1)
        qsort(cfi->fdes, cfi->n_fdes, sizeof(*cfi->fdes), cmp_fde);
    return CMN_OK;
}

void rep_cfi_fini(struct rep_cfi *cfi)
{
    if (cfi == NULL)
        return;
    free(cfi->fdes);
    cfi->fdes = NULL;
    cfi->n_fdes = 0;
}

/* The interpreter's state: the CFA rule now, the remembered ones, the location. */
struct cfa_state {
    struct cfa_rule rule;
    struct cfa_rule saved[CFI_STATE_DEPTH];
    unsigned n_saved;
    uint64_t loc;    /* the address the rule holds from */
    uint64_t target; /* stop before moving past it */
};

/* An offset in data alignment units, in bytes (wrapping, as hostile data may overflow). */
static int64_t factored(int64_t v, const struct cie *cie)
{
    return (int64_t)((uint64_t)v * (uint64_t)cie->data_align);
}

/* Moves the location by delta code units; false when that passes the target. */
static bool advance(struct cfa_state *st, const struct cie *cie, uint64_t delta)
{
    st->loc += delta * cie->code_align;
    return st->loc <= st->target;
}

/* Runs one instruction with extended opcode op. False to stop: the target was passed,
 * the data ran out, or the instruction is one this reader cannot skip. */
static bool run_one(struct cursor *c, uint8_t op, struct cfa_state *st, const struct cie *cie,
                    uint64_t vma)
{
    switch (op) {
    case 0x00: /* nop */
        return true;
    case 0x01: /* set_loc */
        st->loc = get_ptr(c, cie->fde_enc, vma);
        return st->loc <= st->target;
    case 0x02:
        return advance(st, cie, get_u(c, 1));
    case 0x03:
        return advance(st, cie, get_u(c, 2));
    case 0x04:
        return advance(st, cie, get_u(c, 4));
    case 0x05:
    case 0x09:
    case 0x14:
    case 0x2f: /* register rules with two ULEBs */
        get_uleb(c);
        get_uleb(c);
        return true;
    case 0x06:
    case 0x07:
    case 0x08:
    case 0x2e: /* one ULEB */
        get_uleb(c);
        return true;
    case 0x0a: /* remember_state */
        if (st->n_saved == CFI_STATE_DEPTH) {
            st->rule.is_known = false;
            return false;
        }
        st->saved[st->n_saved++] = st->rule;
        return true;
    case 0x0b: /* restore_state */
        if (st->n_saved == 0) {
            st->rule.is_known = false;
            return false;
        }
        st->rule = st->saved[--st->n_saved];
        return true;
    case 0x0c: /* def_cfa */
        st->rule.reg = (unsigned)get_uleb(c);
        st->rule.offset = (int64_t)get_uleb(c);
        st->rule.is_known = true;
        return true;
    case 0x0d: /* def_cfa_register */
        st->rule.reg = (unsigned)get_uleb(c);
        return true;
    case 0x0e: /* def_cfa_offset */
        st->rule.offset = (int64_t)get_uleb(c);
        return true;
    case 0x0f: { /* def_cfa_expression */
        size_t len = (size_t)get_uleb(c);
        st->rule.is_known = false;
        if (len > c->end - c->at)
            return false;
        c->at += len;
        return true;
    }
    case 0x10:
    case 0x16: { /* expression, val_expression: a register and a block */
        get_uleb(c);
        size_t len = (size_t)get_uleb(c);
        if (len > c->end - c->at) {
            st->rule.is_known = false;
            return false;
        }
        c->at += len;
        return true;
    }
    case 0x11:
    case 0x15: /* offset_extended_sf, val_offset_sf */
        get_uleb(c);
        get_sleb(c);
        return true;
    case 0x12: /* def_cfa_sf */
        st->rule.reg = (unsigned)get_uleb(c);
        st->rule.offset = factored(get_sleb(c), cie);
        st->rule.is_known = true;
        return true;
    case 0x13: /* def_cfa_offset_sf */
        st->rule.offset = factored(get_sleb(c), cie);
        return true;
    default:
        st->rule.is_known = false;
        return false;
    }
}

/* Runs the instructions in [at, end) until they move past the target. */
static void run(const struct rep_cfi *cfi, size_t at, size_t end, const struct cie *cie,
                struct cfa_state *st)
{
    struct cursor c = {.data = cfi->data, .at = at, .end = end};
    while (c.at < c.end && !c.is_bad) {
        uint8_t b = (uint8_t)get_u(&c, 1);
        switch (b >> 6) {
        case 1: /* advance_loc: delta in the low six bits */
            if (!advance(st, cie, b & 0x3f))
                return;
            break;
        case 2: /* offset: register in the low bits, ULEB offset */
            get_uleb(&c);
            break;
        case 3: /* restore: register in the low bits */
            break;
        default:
            if (!run_one(&c, b, st, cie, cfi->vma))
                return;
        }
    }
    if (c.is_bad)
        st->rule.is_known = false;
}

int rep_cfi_cfa_at(const struct rep_cfi *cfi, uint64_t pc, unsigned *reg /* out */,
                   int64_t *offset /* out */)
{
    size_t lo = 0, hi = cfi->n_fdes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cfi->fdes[mid].start <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || pc >= cfi->fdes[lo - 1].end)
        return CMN_E_NOTFOUND;
    const struct rep_cfi_fde *f = &cfi->fdes[lo - 1];
    struct cie cie;
    if (!parse_cie(cfi, f->cie_at, &cie))
        return CMN_E_NOTFOUND;
    struct cfa_state st = {.loc = f->start, .target = UINT64_MAX};
    run(cfi, cie.insns_at, cie.insns_end, &cie, &st);
    st.loc = f->start;
    st.target = pc;
    run(cfi, f->insns_at, f->insns_end, &cie, &st);
    if (!st.rule.is_known)
        return CMN_E_NOTFOUND;
    *reg = st.rule.reg;
    *offset = st.rule.offset;
    return CMN_OK;
}
