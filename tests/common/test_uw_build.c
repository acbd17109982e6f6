/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the unwind-table compiler (common/uw_build.h) and the table's lookup
 * (common/uw_table.h), on call-frame information written byte by byte here: the rules a
 * walk needs come out right (prologues, epilogues, remembered states, the PLT's and the
 * realigned frame's expressions, the signal trampoline, the outermost frame), and input
 * that is truncated, loops, lies about its lengths or holds unknown instructions gives
 * rows that stop walks, never a crash or a hang. The register numbers are x86_64's; the
 * compiler itself knows no architecture. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/uw_build.h"
#include "common/uw_table.h"

/* An .eh_frame being written. */
struct emit {
    uint8_t b[4096];
    size_t n;
    size_t rec_at; /* the open record's length field */
};

static void u8(struct emit *e, unsigned v)
{
    cr_assert_lt(e->n, sizeof(e->b));
    e->b[e->n++] = (uint8_t)v;
}

static void u32(struct emit *e, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        u8(e, (v >> (8 * i)) & 0xffu);
}

static void uleb(struct emit *e, uint64_t v)
{
    do {
        uint8_t byte = v & 0x7fu;
        v >>= 7;
        u8(e, byte | (v ? 0x80u : 0));
    } while (v);
}

static void sleb(struct emit *e, int64_t v)
{
    for (;;) {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        if ((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40))) {
            u8(e, byte);
            return;
        }
        u8(e, byte | 0x80u);
    }
}

static void begin(struct emit *e)
{
    e->rec_at = e->n;
    u32(e, 0);
}

static void end(struct emit *e)
{
    while ((e->n - e->rec_at) % 4)
        u8(e, 0); /* DW_CFA_nop */
    uint32_t len = (uint32_t)(e->n - e->rec_at - 4);
    memcpy(e->b + e->rec_at, &len, 4);
}

/* A CIE like GCC's on x86_64: "zR" (or with more letters), pc-relative 4-byte pointers,
 * CFA = rsp + 8, return address at CFA - 8. Returns its offset. */
static size_t cie(struct emit *e, const char *aug)
{
    size_t at = e->n;
    begin(e);
    u32(e, 0);
    u8(e, 1);
    for (const char *p = aug; *p; p++)
        u8(e, (uint8_t)*p);
    u8(e, 0);
    uleb(e, 1);
    sleb(e, -8);
    u8(e, 16);
    uleb(e, 1);
    u8(e, 0x1b); /* 'R': pcrel | sdata4 */
    u8(e, 0x0c); /* def_cfa rsp 8 */
    uleb(e, 7);
    uleb(e, 8);
    u8(e, 0x90); /* offset rip, cfa-8 */
    uleb(e, 1);
    end(e);
    return at;
}

/* Opens an FDE of the CIE at cie_at for [start, start + len); the section's address is
 * SECTION_VADDR. Write instructions, then end(). */
#define SECTION_VADDR 0x10000u
static void fde(struct emit *e, size_t cie_at, uint32_t start, uint32_t len)
{
    begin(e);
    u32(e, (uint32_t)(e->n - cie_at));
    u32(e, (uint32_t)(start - (SECTION_VADDR + e->n)));
    u32(e, len);
    uleb(e, 0);
}

static void *alloc(void *ctx, uint64_t n)
{
    (void)ctx;
    return malloc(n);
}

static struct cmn_uw_table *build(const struct emit *e, struct cmn_cfi_build *out)
{
    struct cmn_cfi_build b = {.regs = {7, 6, 16, 1}};
    struct cmn_cfi_section s = {e->b, e->n, SECTION_VADDR, 0, false};
    cmn_cfi_add_section(&b, &s);
    struct cmn_uw_table *t = cmn_cfi_table(&b, alloc, NULL);
    if (out)
        *out = b;
    else
        cmn_cfi_build_free(&b);
    return t;
}

static uint32_t rule_sp(int off, unsigned fp)
{
    return cmn_uw_rule(CMN_UW_CFA_SP, fp, 1, off / 8);
}

Test(uw_build, a_prologue_and_epilogue_give_a_rule_per_instruction)
{
    struct emit e = {0};
    size_t c = cie(&e, "zR");
    fde(&e, c, 0x1000, 0x20);
    u8(&e, 0x41);              /* advance 1: after push %rbp */
    u8(&e, 0x0e), uleb(&e, 16); /* def_cfa_offset 16 */
    u8(&e, 0x86), uleb(&e, 2); /* rbp at cfa-16 */
    u8(&e, 0x43);              /* advance 3: after mov %rsp,%rbp */
    u8(&e, 0x0d), uleb(&e, 6); /* def_cfa_register rbp */
    u8(&e, 0x4a);              /* advance 10: after leave */
    u8(&e, 0x0c), uleb(&e, 7), uleb(&e, 8);
    end(&e);
    struct cmn_uw_table *t = build(&e, NULL);
    cr_assert_not_null(t);
    cr_assert_eq(cmn_uw_lookup(t, 0x1000), rule_sp(8, 0));
    cr_assert_eq(cmn_uw_lookup(t, 0x1001), rule_sp(16, 2));
    cr_assert_eq(cmn_uw_lookup(t, 0x1003), rule_sp(16, 2));
    cr_assert_eq(cmn_uw_lookup(t, 0x1004), cmn_uw_rule(CMN_UW_CFA_FP, 2, 1, 2));
    cr_assert_eq(cmn_uw_lookup(t, 0x100d), cmn_uw_rule(CMN_UW_CFA_FP, 2, 1, 2));
    cr_assert_eq(cmn_uw_lookup(t, 0x100e), rule_sp(8, 2), "rbp's rule stays as written");
    cr_assert_eq(cmn_uw_lookup(t, 0x101f), rule_sp(8, 2));
    cr_assert_eq(cmn_uw_lookup(t, 0x1020), 0, "past the FDE: no information");
    cr_assert_eq(cmn_uw_lookup(t, 0xfff), 0);
    free(t);
}

Test(uw_build, restore_state_brings_back_the_cfa_after_a_mid_function_return)
{
    struct emit e = {0};
    size_t c = cie(&e, "zR");
    fde(&e, c, 0x2000, 0x40);
    u8(&e, 0x41), u8(&e, 0x0e), uleb(&e, 48); /* body: CFA = rsp + 48 */
    u8(&e, 0x0a);                             /* remember_state */
    u8(&e, 0x45), u8(&e, 0x0e), uleb(&e, 8);  /* epilogue: CFA = rsp + 8; ret */
    u8(&e, 0x41), u8(&e, 0x0b);               /* restore_state: the body again */
    end(&e);
    struct cmn_uw_table *t = build(&e, NULL);
    cr_assert_not_null(t);
    cr_assert_eq(cmn_uw_lookup(t, 0x2003), rule_sp(48, 0));
    cr_assert_eq(cmn_uw_lookup(t, 0x2006), rule_sp(8, 0));
    cr_assert_eq(cmn_uw_lookup(t, 0x2007), rule_sp(48, 0));
    cr_assert_eq(cmn_uw_lookup(t, 0x203f), rule_sp(48, 0));
    free(t);
}

Test(uw_build, the_linkers_plt_expression_and_a_realigned_frame_are_recognised)
{
    static const uint8_t plt[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a,
                                  0x3b, 0x2a, 0x33, 0x24, 0x22};
    struct emit e = {0};
    size_t c = cie(&e, "zR");
    fde(&e, c, 0x3000, 0x40);
    u8(&e, 0x0f), uleb(&e, sizeof(plt));
    for (size_t i = 0; i < sizeof(plt); i++)
        u8(&e, plt[i]);
    end(&e);
    fde(&e, c, 0x3100, 0x20);
    u8(&e, 0x44);
    u8(&e, 0x0f), uleb(&e, 3), u8(&e, 0x76), sleb(&e, -8), u8(&e, 0x06); /* *(rbp - 8) */
    u8(&e, 0x10), uleb(&e, 6), uleb(&e, 2), u8(&e, 0x76), sleb(&e, 0); /* rbp at [rbp] */
    end(&e);
    struct cmn_uw_table *t = build(&e, NULL);
    cr_assert_not_null(t);
    uint32_t r = cmn_uw_lookup(t, 0x3010);
    cr_assert_eq(cmn_uw_kind(r), CMN_UW_PLT);
    cr_assert_eq(cmn_uw_off(r), 11);
    r = cmn_uw_lookup(t, 0x3104);
    cr_assert_eq(cmn_uw_kind(r), CMN_UW_CFA_FP_DEREF);
    cr_assert_eq(cmn_uw_off(r), -8);
    cr_assert_eq(cmn_uw_fp(r), CMN_UW_FP_AT_FP);
    free(t);
}

Test(uw_build, other_expressions_and_registers_give_stop_rows)
{
    struct emit e = {0};
    size_t c = cie(&e, "zR");
    fde(&e, c, 0x4000, 0x10);
    u8(&e, 0x0c), uleb(&e, 10), uleb(&e, 0); /* CFA = r10 */
    u8(&e, 0x44);
    u8(&e, 0x0f), uleb(&e, 2), u8(&e, 0x77), u8(&e, 0x06); /* *(rsp + 0): not followed */
    u8(&e, 0x44);
    u8(&e, 0x0c), uleb(&e, 7), uleb(&e, 12); /* rsp + 12: not a multiple of 8 */
    u8(&e, 0x44);
    u8(&e, 0x09), uleb(&e, 16), uleb(&e, 5); /* return address in rdi */
    end(&e);
    struct cmn_uw_table *t = build(&e, NULL);
    cr_assert_not_null(t);
    for (uint64_t pc = 0x4000; pc < 0x4010; pc += 4)
        cr_assert_eq(cmn_uw_kind(cmn_uw_lookup(t, pc)), CMN_UW_STOP, "at %#lx", pc);
    free(t);
}

Test(uw_build, signal_trampolines_and_outermost_frames_are_marked)
{
    struct emit e = {0};
    size_t sig = cie(&e, "zRS");
    size_t c = cie(&e, "zR");
    fde(&e, sig, 0x5000, 0x10);
    end(&e);
    fde(&e, c, 0x5100, 0x10);
    u8(&e, 0x07), uleb(&e, 16); /* undefined rip */
    end(&e);
    struct cmn_uw_table *t = build(&e, NULL);
    cr_assert_not_null(t);
    cr_assert_eq(cmn_uw_kind(cmn_uw_lookup(t, 0x5004)), CMN_UW_SIGNAL);
    cr_assert_eq(cmn_uw_kind(cmn_uw_lookup(t, 0x5104)), CMN_UW_END);
    cr_assert_eq(cmn_uw_lookup(t, 0x5080), 0, "the gap between them");
    free(t);
}

Test(uw_build, fdes_out_of_order_overlapping_and_discarded)
{
    struct emit e = {0};
    size_t c = cie(&e, "zR");
    fde(&e, c, 0x7000, 0x100);
    u8(&e, 0x0e), uleb(&e, 32);
    end(&e);
    fde(&e, c, 0x6000, 0x100);
    end(&e);
    fde(&e, c, 0x7080, 0x100); /* overlaps the first read: dropped */
    u8(&e, 0x0e), uleb(&e, 64);
    end(&e);
    fde(&e, c, 0, 0x100); /* the linker discarded its code */
    end(&e);
    struct cmn_cfi_build b;
    struct cmn_uw_table *t = build(&e, &b);
    cr_assert_not_null(t);
    cr_assert_eq(t->base, 0x6000);
    cr_assert_eq(cmn_uw_lookup(t, 0x6050), rule_sp(8, 0));
    cr_assert_eq(cmn_uw_lookup(t, 0x6150), 0);
    cr_assert_eq(cmn_uw_lookup(t, 0x70f0), rule_sp(32, 0));
    cr_assert_eq(cmn_uw_lookup(t, 0x7150), 0);
    cmn_cfi_build_free(&b);
    free(t);
}

Test(uw_build, debug_frame_has_absolute_addresses_and_its_own_cie_ids)
{
    uint8_t d[64] = {0};
    size_t n = 0;
    /* CIE: length, id 0xffffffff, version 1, "", code 1, data -8, ra 16, def_cfa rsp 8,
     * offset rip 1 */
    const uint8_t cie_bytes[] = {0x10, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 1, 0, 1, 0x78, 16,
                                 0x0c, 7, 8, 0x90, 1, 0, 0};
    memcpy(d, cie_bytes, sizeof(cie_bytes));
    n = sizeof(cie_bytes);
    const uint8_t fde_bytes[] = {0x18, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x90, 0, 0, 0, 0, 0, 0,
                                 0x20, 0, 0, 0, 0, 0, 0, 0, 0x41, 0x0e, 16, 0};
    memcpy(d + n, fde_bytes, sizeof(fde_bytes));
    n += sizeof(fde_bytes);
    struct cmn_cfi_build b = {.regs = {7, 6, 16, 1}};
    struct cmn_cfi_section s = {d, n, 0, 0, true};
    cmn_cfi_add_section(&b, &s);
    struct cmn_uw_table *t = cmn_cfi_table(&b, alloc, NULL);
    cr_assert_not_null(t);
    cr_assert_eq(cmn_uw_lookup(t, 0x9000), rule_sp(8, 0));
    cr_assert_eq(cmn_uw_lookup(t, 0x9001), rule_sp(16, 0));
    cmn_cfi_build_free(&b);
    free(t);
}

/* Hostile input: every prefix of a good section, a CIE pointer at itself, at an FDE, far
 * outside, lengths beyond the end, an unknown opcode, runaway LEBs. Nothing may crash,
 * and every table built looks up safely. */
Test(uw_build, hostile_sections_never_crash_or_hang)
{
    struct emit e = {0};
    size_t c = cie(&e, "zR");
    fde(&e, c, 0x1000, 0x40);
    u8(&e, 0x41), u8(&e, 0x0e), uleb(&e, 16), u8(&e, 0x0a), u8(&e, 0x42), u8(&e, 0x0b);
    end(&e);
    for (size_t cut = 0; cut <= e.n; cut++) {
        struct emit p = e;
        p.n = cut;
        struct cmn_uw_table *t = build(&p, NULL);
        if (t)
            cmn_uw_lookup(t, 0x1010);
        free(t);
    }
    /* Each byte of the FDE replaced by each interesting value. */
    static const uint8_t values[] = {0x00, 0x01, 0x0a, 0x0b, 0x0f, 0x10, 0x16, 0x3f,
                                     0x7f, 0x80, 0xc0, 0xfe, 0xff};
    for (size_t at = c; at < e.n; at++) {
        for (size_t v = 0; v < sizeof(values); v++) {
            struct emit p = e;
            p.b[at] = values[v];
            struct cmn_uw_table *t = build(&p, NULL);
            if (t)
                cmn_uw_lookup(t, 0x1010);
            free(t);
        }
    }
    /* Twenty remember_states: past the nesting followed, the FDE stops. */
    struct emit deep = {0};
    c = cie(&deep, "zR");
    fde(&deep, c, 0x1000, 0x40);
    for (int i = 0; i < 20; i++)
        u8(&deep, 0x0a);
    u8(&deep, 0x41), u8(&deep, 0x0e), uleb(&deep, 16);
    end(&deep);
    struct cmn_cfi_build b;
    struct cmn_uw_table *t = build(&deep, &b);
    cr_assert_eq(b.n_stop, 1);
    cr_assert_eq(cmn_uw_kind(cmn_uw_lookup(t, 0x1004)), CMN_UW_STOP);
    cmn_cfi_build_free(&b);
    free(t);
}

/* Offsets whose product with the data alignment factor overflows (found by the fuzz
 * target): no undefined behaviour (UBSan in make asan), and rules that no walk follows. */
Test(uw_build, offsets_that_overflow_give_rules_no_walk_follows)
{
    struct emit e = {0};
    size_t c = cie(&e, "zR");
    fde(&e, c, 0x1000, 0x40);
    u8(&e, 0x41), u8(&e, 0x86), uleb(&e, 0x8000000000000001ull); /* offset rbp: huge */
    u8(&e, 0x41), u8(&e, 0x12), uleb(&e, 7), sleb(&e, INT64_MIN / 2); /* def_cfa_sf */
    u8(&e, 0x41), u8(&e, 0x13), sleb(&e, INT64_MAX / 4);             /* def_cfa_offset_sf */
    u8(&e, 0x41), u8(&e, 0x2f), uleb(&e, 16), uleb(&e, UINT64_MAX);  /* negative rip */
    u8(&e, 0x41), u8(&e, 0x11), uleb(&e, 6), sleb(&e, INT64_MIN);    /* offset_sf rbp */
    end(&e);
    struct cmn_uw_table *t = build(&e, NULL);
    cr_assert_not_null(t);
    cr_expect_eq(cmn_uw_fp(cmn_uw_lookup(t, 0x1001)), CMN_UW_REG_UNKNOWN);
    for (uint32_t pc = 0x1002; pc < 0x1006; pc++)
        cr_expect_eq(cmn_uw_kind(cmn_uw_lookup(t, pc)), CMN_UW_STOP, "pc %#x", pc);
    free(t);
}

/* glibc's _init (crti.o and crtn.o) as linked into a library, with and without endbr64:
 * the first code a library runs once mapped, described by no FDE. */
static const uint8_t crt_init[] = {0x48, 0x83, 0xec, 0x08, 0x48, 0x8b, 0x05, 0xcd, 0x9f, 0x02,
                                   0x00, 0x48, 0x85, 0xc0, 0x74, 0x02, 0xff, 0xd0, 0x48, 0x83,
                                   0xc4, 0x08, 0xc3};

/* A build of x86_64 (rsp 7, rbp 6, rip 16) holding one FDE of the module's own, at start
 * for len bytes, with a CFA offset from its start (0: the CIE's, sp + 8). */
static void with_module_fde(struct cmn_cfi_build *b, uint32_t start, uint32_t len, unsigned cfa)
{
    struct emit e = {0};
    size_t c = cie(&e, "zR");
    fde(&e, c, start, len);
    if (cfa != 0)
        u8(&e, 0x0e), uleb(&e, cfa);
    end(&e);
    *b = (struct cmn_cfi_build){.regs = {7, 6, 16, 1}};
    struct cmn_cfi_section s = {e.b, e.n, SECTION_VADDR, 0, false};
    cmn_cfi_add_section(b, &s);
}

Test(uw_build, the_c_runtimes_init_is_recognised_by_its_bytes_alone)
{
    struct cmn_cfi_build b;
    with_module_fde(&b, 0x5000, 0x100, 0); /* the module's own code, after _init */
    cr_assert_eq(cmn_cfi_add_crt_init(&b, 0x4000, crt_init, sizeof(crt_init)), 1);
    struct cmn_uw_table *t = cmn_cfi_table(&b, alloc, NULL);
    cr_assert_not_null(t);
    cr_assert_eq(cmn_uw_lookup(t, 0x4000), rule_sp(8, 0), "at the entry");
    cr_assert_eq(cmn_uw_lookup(t, 0x4003), rule_sp(8, 0), "inside sub");
    cr_assert_eq(cmn_uw_lookup(t, 0x4004), rule_sp(16, 0), "after sub");
    cr_assert_eq(cmn_uw_lookup(t, 0x4012), rule_sp(16, 0), "at add, not yet run");
    cr_assert_eq(cmn_uw_lookup(t, 0x4016), rule_sp(8, 0), "at ret");
    cr_assert_eq(cmn_uw_lookup(t, 0x4017), 0, "past it");
    cr_assert_eq(cmn_uw_lookup(t, 0x5010), rule_sp(8, 0), "the module's own rows stay");
    cmn_cfi_build_free(&b);
    free(t);

    uint8_t cet[sizeof(crt_init) + 4] = {0xf3, 0x0f, 0x1e, 0xfa};
    memcpy(cet + 4, crt_init, sizeof(crt_init));
    b = (struct cmn_cfi_build){.regs = {7, 6, 16, 1}};
    cr_assert_eq(cmn_cfi_add_crt_init(&b, 0x4000, cet, sizeof(cet)), 0,
                 "a module without call-frame information of its own gets no table");
    with_module_fde(&b, 0x5000, 0x100, 0);
    cr_assert_eq(cmn_cfi_add_crt_init(&b, 0x4000, cet, sizeof(cet)), 1);
    t = cmn_cfi_table(&b, alloc, NULL);
    cr_assert_eq(cmn_uw_lookup(t, 0x4007), rule_sp(8, 0), "endbr64, then sub");
    cr_assert_eq(cmn_uw_lookup(t, 0x4008), rule_sp(16, 0));
    cr_assert_eq(cmn_uw_lookup(t, 0x401a), rule_sp(8, 0), "at ret");
    cmn_cfi_build_free(&b);
    free(t);
}

Test(uw_build, code_that_is_not_exactly_the_c_runtimes_init_gets_no_rows)
{
    struct cmn_cfi_build b;
    with_module_fde(&b, 0x5000, 0x100, 0);
    uint8_t code[sizeof(crt_init)];
    for (size_t i = 0; i < sizeof(code); i++) {
        if (i >= 7 && i < 11)
            continue; /* the displacement may be anything */
        memcpy(code, crt_init, sizeof(code));
        code[i] ^= 0x01;
        cr_assert_eq(cmn_cfi_add_crt_init(&b, 0x4000, code, sizeof(code)), 0, "byte %zu", i);
    }
    cr_assert_eq(cmn_cfi_add_crt_init(&b, 0x4000, crt_init, sizeof(crt_init) - 1), 0,
                 "cut short");
    b.regs.is_x86_64 = 0;
    cr_assert_eq(cmn_cfi_add_crt_init(&b, 0x4000, crt_init, sizeof(crt_init)), 0,
                 "x86_64's code only");
    cr_assert_eq(b.n_fdes, 1, "the module's own FDE alone");
    cmn_cfi_build_free(&b);
}

/* Where the module's own FDE covers _init, it wins: the FDE added for it comes last. */
Test(uw_build, an_fde_of_the_module_over_init_wins)
{
    struct cmn_cfi_build b;
    with_module_fde(&b, 0x4000, 0x40, 32);
    cr_assert_eq(cmn_cfi_add_crt_init(&b, 0x4000, crt_init, sizeof(crt_init)), 1);
    struct cmn_uw_table *t = cmn_cfi_table(&b, alloc, NULL);
    cr_assert_eq(cmn_uw_lookup(t, 0x4008), rule_sp(32, 0));
    cmn_cfi_build_free(&b);
    free(t);
}

Test(uw_table, lookup_agrees_with_a_scan_across_pages)
{
    enum { N = 500 };
    uint32_t pcs[N], rules[N];
    uint32_t pc = 0x10;
    for (unsigned i = 0; i < N; i++) {
        pcs[i] = pc;
        rules[i] = rule_sp(8 * (int)(i % 7 + 1), i % 3);
        pc += 1 + (i * 37) % 300;
    }
    uint64_t size = pc + 5;
    struct cmn_uw_table *t = malloc(cmn_uw_table_bytes(N, size));
    cmn_uw_table_layout(t, 0x400000, size, N);
    memcpy((char *)t + t->pcs_at, pcs, sizeof(pcs));
    memcpy((char *)t + t->rules_at, rules, sizeof(rules));
    cmn_uw_table_index(t);
    unsigned row = 0;
    for (uint64_t off = 0; off < size + 100; off++) {
        while (row + 1 < N && pcs[row + 1] <= off)
            row++;
        uint32_t want = off < pcs[0] || off >= size ? 0 : rules[row];
        cr_assert_eq(cmn_uw_lookup(t, 0x400000 + off), want, "at offset %#lx", off);
    }
    cr_assert_eq(cmn_uw_lookup(t, 0x3fffff), 0);
    free(t);
}

/* Go's runtime.asmcgocall (go 1.19, amd64) as linked: `mov 0x38(%rsi),%rsp` switches to
 * the scheduler's stack, after which its rules (one stack assumed) would read that stack
 * for a return address. Its FDE gets STOP rows; a function without such a load keeps its
 * own; a register move into %rsp (an epilogue's `mov %rbp,%rsp`) is no switch. */
Test(uw_build, functions_that_load_the_stack_pointer_from_memory_get_stop_rows)
{
    static const uint8_t asmcgocall[] = {0x48, 0x8b, 0x44, 0x24, 0x08, 0x48, 0x8b, 0x5c, 0x24,
                                         0x10, 0x48, 0x89, 0xe2, 0x48, 0x8b, 0x66, 0x38, 0x48,
                                         0x83, 0xec, 0x40, 0xff, 0xd0, 0xc3};
    static const uint8_t epilogue[] = {0x55, 0x48, 0x89, 0xe5, 0x90, 0x48, 0x89, 0xec, 0x5d, 0xc3};
    cr_assert_eq(cmn_cfi_loads_sp(asmcgocall, sizeof(asmcgocall)), 1);
    cr_assert_eq(cmn_cfi_loads_sp(epilogue, sizeof(epilogue)), 0);
    uint8_t text[0x200] = {0};
    memcpy(text, asmcgocall, sizeof(asmcgocall));
    memcpy(text + 0x100, epilogue, sizeof(epilogue));
    struct cmn_cfi_build b;
    with_module_fde(&b, 0x5000, sizeof(asmcgocall), 0);
    struct emit e = {0};
    size_t c = cie(&e, "zR");
    fde(&e, c, 0x5100, sizeof(epilogue));
    end(&e);
    struct cmn_cfi_section s = {e.b, e.n, SECTION_VADDR, 0, false};
    cmn_cfi_add_section(&b, &s);
    cr_assert_eq(cmn_cfi_stop_stack_switches(&b, text, 0x5000, sizeof(text)), 1);
    struct cmn_uw_table *t = cmn_cfi_table(&b, alloc, NULL);
    cr_assert_not_null(t);
    cr_assert_eq(cmn_uw_kind(cmn_uw_lookup(t, 0x5016)), CMN_UW_STOP, "after the switch");
    cr_assert_eq(cmn_uw_kind(cmn_uw_lookup(t, 0x5000)), CMN_UW_STOP, "the whole function");
    cr_assert_eq(cmn_uw_lookup(t, 0x5104), rule_sp(8, 0), "the other function keeps its rows");
    cmn_cfi_build_free(&b);
    free(t);
}

/* Go 1.19's runtime.asmcgocall whole (amd64, as linked): its two calls of the C function,
 * after the switch to the system stack and without one, get CMN_UW_GO_CGO rows of their
 * two bytes, the rest of the function STOP rows; a function that switches stacks some
 * other way gets STOP rows only. */
Test(uw_build, go_s_cgo_calls_get_rows_of_their_own)
{
    static const uint8_t head[] = {0x48, 0x8b, 0x44, 0x24, 0x08, 0x48, 0x8b, 0x5c, 0x24, 0x10,
                                   0x48, 0x89, 0xe2, 0x48, 0x8b, 0x66, 0x38, 0x48, 0x83, 0xec,
                                   0x40, 0x48, 0x83, 0xe4, 0xf0};
    static const uint8_t ret[] = {0x48, 0x8b, 0x74, 0x24, 0x28, 0x48, 0x89, 0xf4, 0xc3};
    uint8_t fn[0x80] = {0}, text[0x200] = {0};
    size_t n = 0;
    memcpy(fn + n, head, sizeof(head));
    n += sizeof(head);
    memcpy(fn + n, cmn_cfi_go_cgo_switched, sizeof(cmn_cfi_go_cgo_switched));
    n += sizeof(cmn_cfi_go_cgo_switched);
    uint32_t call1 = (uint32_t)n - 2;
    memcpy(fn + n, ret, sizeof(ret));
    n += sizeof(ret);
    memcpy(fn + n, cmn_cfi_go_cgo_nosave, sizeof(cmn_cfi_go_cgo_nosave));
    n += sizeof(cmn_cfi_go_cgo_nosave);
    uint32_t call2 = (uint32_t)n - 2;
    memcpy(fn + n, ret, sizeof(ret));
    n += sizeof(ret);
    uint32_t calls[2];
    cr_assert_eq(cmn_cfi_go_cgo_calls(fn, n, calls), 2);
    cr_assert_eq(calls[0], call1);
    cr_assert_eq(calls[1], call2);
    memcpy(text, fn, n);
    memcpy(text + 0x100, head, sizeof(head)); /* a switch without the C call */
    struct cmn_cfi_build b;
    with_module_fde(&b, 0x5000, (uint32_t)n, 0);
    struct emit e = {0};
    size_t c = cie(&e, "zR");
    fde(&e, c, 0x5100, sizeof(head));
    end(&e);
    struct cmn_cfi_section s = {e.b, e.n, SECTION_VADDR, 0, false};
    cmn_cfi_add_section(&b, &s);
    cr_assert_eq(cmn_cfi_stop_stack_switches(&b, text, 0x5000, sizeof(text)), 2);
    struct cmn_uw_table *t = cmn_cfi_table(&b, alloc, NULL);
    cr_assert_not_null(t);
    for (uint32_t off = 0; off < n; off++) {
        int in_call = (off >= call1 && off < call1 + 2) || (off >= call2 && off < call2 + 2);
        cr_assert_eq(cmn_uw_kind(cmn_uw_lookup(t, 0x5000 + off)),
                     in_call ? CMN_UW_GO_CGO : CMN_UW_STOP, "at +%#x", off);
    }
    for (uint32_t off = 0; off < sizeof(head); off++)
        cr_assert_eq(cmn_uw_kind(cmn_uw_lookup(t, 0x5100 + off)), CMN_UW_STOP);
    cmn_cfi_build_free(&b);
    free(t);
}
