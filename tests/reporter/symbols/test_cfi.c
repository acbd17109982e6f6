/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the .eh_frame reader (reporter/symbols/cfi.c) on a section built byte by byte: the CFA
 * rule as a typical `push %rbp; mov %rsp,%rbp` function changes it, remembered states,
 * expressions, and damaged sections, which must give "unknown" without reading outside
 * the bytes.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "reporter/symbols/cfi.h"

#define SECTION_VMA 0x1000u

struct bytes {
    uint8_t data[512];
    size_t n;
};

static void put(struct bytes *b, const uint8_t *p, size_t n)
{
    memcpy(b->data + b->n, p, n);
    b->n += n;
}

static void put_u32(struct bytes *b, uint32_t v)
{
    put(b, (const uint8_t *)&v, 4);
}

/* Starts a record; returns where its length goes, filled by end_record. */
static size_t begin_record(struct bytes *b)
{
    size_t at = b->n;
    put_u32(b, 0);
    return at;
}

static void end_record(struct bytes *b, size_t at)
{
    while ((b->n - at) % 4 != 0)
        b->data[b->n++] = 0; /* DW_CFA_nop */
    uint32_t len = (uint32_t)(b->n - at - 4);
    memcpy(b->data + at, &len, 4);
}

/* A CIE like gcc's: "zR", code alignment 1, data alignment -8, return address in r16,
 * FDE pointers pc-relative sdata4; CFA = rsp + 8, return address at CFA - 8. */
static size_t put_cie(struct bytes *b)
{
    size_t at = begin_record(b);
    put_u32(b, 0);
    static const uint8_t body[] = {1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1};
    put(b, body, sizeof(body));
    end_record(b, at);
    return at;
}

static void put_fde(struct bytes *b, size_t cie_at, uint32_t start, uint32_t range,
                    const uint8_t *insns, size_t n)
{
    size_t at = begin_record(b);
    put_u32(b, (uint32_t)(b->n - cie_at));
    put_u32(b, (uint32_t)(start - (SECTION_VMA + b->n)));
    put_u32(b, range);
    b->data[b->n++] = 0; /* no augmentation data */
    put(b, insns, n);
    end_record(b, at);
}

static void build(struct bytes *b)
{
    b->n = 0;
    size_t cie = put_cie(b);
    static const uint8_t prologue[] = {
        0x41,        /* advance 1: after push %rbp */
        0x0e, 16,    /* def_cfa_offset 16 */
        0x86, 2,     /* rbp saved at CFA - 16 */
        0x43,        /* advance 3: after mov %rsp,%rbp */
        0x0d, 6,     /* def_cfa_register rbp */
        0x0a,        /* remember_state */
        0x50,        /* advance 16: after pop %rbp, at ret */
        0x0c, 7,  8, /* def_cfa rsp, 8 */
        0x41,        /* advance 1: code after the ret */
        0x0b,        /* restore_state */
    };
    put_fde(b, cie, 0x5000, 0x20, prologue, sizeof(prologue));
    static const uint8_t expr[] = {0x0f, 2, 0x77, 8}; /* def_cfa_expression */
    put_fde(b, cie, 0x6000, 0x10, expr, sizeof(expr));
    put_u32(b, 0); /* terminator */
}

static void expect_rule(const struct rep_cfi *c, uint64_t pc, unsigned reg, int64_t off)
{
    unsigned r;
    int64_t o;
    cr_assert_eq(rep_cfi_cfa_at(c, pc, &r, &o), CMN_OK, "pc %#lx", (unsigned long)pc);
    cr_assert(r == reg && o == off, "pc %#lx: CFA r%u%+ld, expected r%u%+ld", (unsigned long)pc, r,
              (long)o, reg, (long)off);
}

static void expect_unknown(const struct rep_cfi *c, uint64_t pc)
{
    unsigned r;
    int64_t o;
    cr_assert_eq(rep_cfi_cfa_at(c, pc, &r, &o), CMN_E_NOTFOUND, "pc %#lx", (unsigned long)pc);
}

Test(cfi, follows_the_cfa_through_prologue_and_epilogue)
{
    struct bytes b;
    build(&b);
    struct rep_cfi c;
    cr_assert_eq(rep_cfi_init(&c, b.data, b.n, SECTION_VMA), CMN_OK);
    cr_assert_eq(c.n_fdes, 2);
    expect_rule(&c, 0x5000, 7, 8);
    expect_rule(&c, 0x5001, 7, 16);
    expect_rule(&c, 0x5003, 7, 16);
    expect_rule(&c, 0x5004, 6, 16);
    expect_rule(&c, 0x5013, 6, 16);
    expect_rule(&c, 0x5014, 7, 8);
    expect_rule(&c, 0x5015, 6, 16); /* the remembered state */
    expect_rule(&c, 0x501f, 6, 16);
    expect_unknown(&c, 0x5020);
    expect_unknown(&c, 0x4fff);
    expect_unknown(&c, 0x6004); /* an expression */
    rep_cfi_fini(&c);
    rep_cfi_fini(NULL);
}

Test(cfi, survives_damaged_sections)
{
    struct bytes b;
    build(&b);
    uint8_t *copy = malloc(b.n);
    cr_assert_not_null(copy);
    /* Every cut, and every byte set to a few hostile values, read from an exact-size heap
     * copy so that a sanitizer build catches any read past the end. */
    for (size_t len = 0; len <= b.n; len++) {
        for (size_t at = 0; at < len; at += 3) {
            static const uint8_t values[] = {0x00, 0x7f, 0x80, 0xff};
            for (size_t v = 0; v < sizeof(values); v++) {
                memcpy(copy, b.data, len);
                copy[at] = values[v];
                struct rep_cfi c;
                cr_assert_eq(rep_cfi_init(&c, copy, len, SECTION_VMA), CMN_OK);
                unsigned r;
                int64_t o;
                for (uint64_t pc = 0x4ffe; pc < 0x5024; pc += 3)
                    (void)rep_cfi_cfa_at(&c, pc, &r, &o);
                rep_cfi_fini(&c);
            }
        }
    }
    free(copy);
}

Test(cfi, indexes_nothing_from_an_empty_section)
{
    struct rep_cfi c;
    cr_assert_eq(rep_cfi_init(&c, NULL, 0, SECTION_VMA), CMN_OK);
    cr_assert_eq(c.n_fdes, 0);
    expect_unknown(&c, 0x5000);
    rep_cfi_fini(&c);
}
