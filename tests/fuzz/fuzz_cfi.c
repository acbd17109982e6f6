/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the unwind-table compiler (common/uw_build.h), which reads what
 * the loader mapped into a profiled program and the files of another process: arbitrary
 * bytes go in as an .eh_frame and as a .debug_frame section (cmn_cfi_add_section), the
 * rows come out as a table (cmn_cfi_table), every row is looked up and checked against a
 * scan of the rows (cmn_uw_lookup), and a walk (cmn_uw_walk) steps a small stack made of
 * the input's bytes by the table's rules. AddressSanitizer and UBSan turn any
 * out-of-bounds read, overflow or leak into a crash; a hang is caught by libFuzzer's
 * timeout. Built and run by scripts/fuzz.sh; single-threaded.
 *
 * An input: a flags byte (bit 0: the section is a .debug_frame; bit 1: add it a second
 * time as the other kind too; bit 2: the walk is told that code without a row is
 * anonymous, where it looks for known stubs; bit 3: the walk keeps both ends of a deep
 * stack, as the sampler's does), the section's address as 4 little-endian bytes (where
 * pc-relative pointers count from), then the section's bytes. The walk reads the input's
 * bytes as code too, round and round.
 *
 * With PROF_FUZZ_SEEDS=DIR in the environment the binary writes a few valid sections into
 * DIR and exits: the script's seed corpus (it adds real ones taken from binaries).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/uw_build.h"
#include "common/uw_step.h"
#include "common/uw_table.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HEAD_BYTES 5u
#define STACK_WORDS 64u

/* ---- seeds ---- */

struct emit {
    uint8_t b[1024];
    size_t n, rec_at;
};

static void u8(struct emit *e, unsigned v)
{
    if (e->n < sizeof(e->b))
        e->b[e->n++] = (uint8_t)v;
}

static void u32(struct emit *e, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        u8(e, (v >> (8 * i)) & 0xffu);
}

static void begin(struct emit *e)
{
    e->rec_at = e->n;
    u32(e, 0);
}

static void end(struct emit *e)
{
    while ((e->n - e->rec_at) % 4)
        u8(e, 0);
    uint32_t len = (uint32_t)(e->n - e->rec_at - 4);
    memcpy(e->b + e->rec_at, &len, 4);
}

/* An .eh_frame like GCC's for x86_64: a "zR" CIE, then an FDE of a function with a
 * frame-pointer prologue, a remember/restore pair and an epilogue. */
static void eh_frame_seed(struct emit *e, uint32_t vaddr)
{
    e->n = 0;
    u8(e, 0x00); /* flags: .eh_frame */
    u32(e, vaddr);
    size_t cie = e->n;
    begin(e);
    u32(e, 0);                   /* CIE id */
    u8(e, 1);                    /* version */
    u8(e, 'z'), u8(e, 'R'), u8(e, 0);
    u8(e, 1);                    /* code alignment */
    u8(e, 0x78);                 /* data alignment -8 */
    u8(e, 16);                   /* return address column */
    u8(e, 1), u8(e, 0x1b);       /* augmentation: pcrel sdata4 */
    u8(e, 0x0c), u8(e, 7), u8(e, 8); /* def_cfa rsp+8 */
    u8(e, 0x90), u8(e, 1);       /* rip at cfa-8 */
    end(e);
    begin(e);
    u32(e, (uint32_t)(e->n - cie)); /* CIE pointer */
    uint32_t field = vaddr + (uint32_t)(e->n - HEAD_BYTES);
    u32(e, 0x1000 - field);      /* start: 0x1000, pc-relative */
    u32(e, 0x40);                /* range */
    u8(e, 0);                    /* augmentation data */
    u8(e, 0x41), u8(e, 0x0e), u8(e, 16), u8(e, 0x86), u8(e, 2); /* push rbp */
    u8(e, 0x43), u8(e, 0x0d), u8(e, 6);                         /* mov rsp,rbp */
    u8(e, 0x0a), u8(e, 0x50), u8(e, 0x0c), u8(e, 7), u8(e, 8), u8(e, 0x0b); /* ret mid-way */
    u8(e, 0x44), u8(e, 0x0c), u8(e, 7), u8(e, 8);               /* leave */
    end(e);
    u32(e, 0); /* terminator */
}

static void write_seed(const char *dir, const char *name, const uint8_t *b, size_t n)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(b, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "fuzz_cfi: cannot write %s\n", path);
        exit(1);
    }
}

static void write_seeds(const char *dir)
{
    static struct emit e;
    eh_frame_seed(&e, 0x2000);
    write_seed(dir, "cfi_eh_frame", e.b, e.n);
    e.b[0] = 0x02; /* also as a .debug_frame */
    write_seed(dir, "cfi_both", e.b, e.n);
    write_seed(dir, "cfi_cut", e.b, e.n - 11);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = getenv("PROF_FUZZ_SEEDS");
    if (dir != NULL) {
        write_seeds(dir);
        exit(0);
    }
    return 0;
}

/* ---- the checks ---- */

static void *alloc_table(void *ctx, uint64_t bytes)
{
    (void)ctx;
    return bytes <= (64u << 20) ? malloc((size_t)bytes) : NULL;
}

/* The rule a scan of the rows gives for offset off from the table's base. */
static uint32_t scan_rule(const struct cmn_uw_table *t, uint64_t off)
{
    const uint32_t *pc = cmn_uw_pcs(t), *rule = cmn_uw_rules(t);
    uint32_t r = 0;
    for (uint32_t i = 0; i < t->n_rows && pc[i] <= off; i++)
        r = rule[i];
    return r;
}

static void check_table(const struct cmn_uw_table *t)
{
    const uint32_t *pc = cmn_uw_pcs(t);
    if (t->magic != CMN_UW_MAGIC || t->n_rows == 0 ||
        t->total_bytes != cmn_uw_table_bytes(t->n_rows, t->size))
        abort();
    for (uint32_t i = 0; i < t->n_rows; i++) {
        if ((i > 0 && pc[i] <= pc[i - 1]) || pc[i] >= t->size + 1)
            abort(); /* rows strictly increasing, inside what the table covers */
        uint64_t at[3] = {pc[i], pc[i] + 1, pc[i] > 0 ? pc[i] - 1 : 0};
        for (int k = 0; k < 3; k++) {
            uint32_t want = at[k] < t->size ? scan_rule(t, at[k]) : 0;
            if (cmn_uw_lookup(t, t->base + at[k]) != want)
                abort();
        }
    }
    if (cmn_uw_lookup(t, t->base - 1) != 0 || cmn_uw_lookup(t, t->base + t->size) != 0)
        abort();
}

/* A walk over a stack of the input's words, every pc in the table's range. */
struct fuzz_mem {
    struct cmn_uw_mem base;
    const struct cmn_uw_table *t;
    const uint8_t *data; /* code bytes at any address: the input's, round and round */
    size_t size;
    unsigned info;       /* what the table accessor says besides the table (CMN_UW_*) */
};

static int stack_word(const struct cmn_fp_mem *m, uintptr_t addr, uintptr_t *out)
{
    (void)m;
    memcpy(out, (const void *)addr, sizeof(*out));
    return 1;
}

static int code(const struct cmn_fp_mem *m, uintptr_t addr, uint8_t *out, unsigned n)
{
    const struct fuzz_mem *f = (const struct fuzz_mem *)m;
    for (unsigned i = 0; i < n; i++)
        out[i] = f->data[(addr + i) % f->size];
    return 0;
}

static int is_code(const struct cmn_fp_mem *m, uintptr_t addr)
{
    const struct cmn_uw_table *t = ((const struct fuzz_mem *)m)->t;
    return addr >= t->base && addr - t->base < t->size;
}

static const struct cmn_uw_table *table_of(const struct cmn_uw_mem *m, uintptr_t pc,
                                           uintptr_t *bias, unsigned *info)
{
    (void)pc;
    *bias = 0;
    *info = ((const struct fuzz_mem *)m)->info;
    return ((const struct fuzz_mem *)m)->t;
}

/* size >= 1. */
static void walk(const struct cmn_uw_table *t, const uint8_t *data, size_t size, uint8_t flags)
{
    static uintptr_t stack[STACK_WORDS];
    memset(stack, 0, sizeof(stack));
    memcpy(stack, data, size < sizeof(stack) ? size : sizeof(stack));
    uintptr_t lo = (uintptr_t)stack, hi = (uintptr_t)(stack + STACK_WORDS);
    for (uint32_t i = 0; i < STACK_WORDS; i++) /* code addresses where rows are */
        if (i % 3 == 0)
            stack[i] = t->base + cmn_uw_pcs(t)[(stack[i] & 0xffff) % t->n_rows] + 1;
    struct fuzz_mem m = {.base = {.fp = {stack_word, code, is_code}, .table = table_of},
                         .t = t,
                         .data = data,
                         .size = size,
                         .info = flags & 4 ? CMN_UW_ANON : 0};
    uint64_t frames[32];
    struct cmn_fp_regs regs = {.pc = t->base + cmn_uw_pcs(t)[0], .sp = lo + 8 * (data[0] % 8),
                               .fp = lo + 8 * (data[size - 1] % STACK_WORDS)};
    struct cmn_uw_walk w = {.lo = lo, .hi = hi, .frames = frames, .max_frames = 32};
    if (flags & 8) { /* a short ring, so that stacks of the input's size wrap it */
        w.max_frames = 8;
        w.keep_outer = 3;
        w.walk_cap = 4 * STACK_WORDS;
    }
    unsigned n = cmn_uw_walk(&m.base, &regs, &w);
    if (n < 1 || n > w.max_frames || w.stop_reason >= PROF_STOP_N)
        abort();
    unsigned marker = w.max_frames - w.keep_outer - 1;
    if ((w.flags & PROF_SAMPLE_ELIDED) &&
        (n != w.max_frames || !PROF_FRAME_IS_ELIDED(frames[marker]) || w.n_elided == 0))
        abort(); /* the marker of the frames left out between the two ends */
}

/* Compiles the section once, as the flags say. */
static void compile(const uint8_t *data, size_t size, uint8_t flags, uint32_t vaddr)
{
    struct cmn_cfi_build b = {.regs = {7, 6, 16, 1}}; /* x86_64's DWARF rsp, rbp, rip */
    struct cmn_cfi_section s = {data, size, vaddr, 0, (flags & 1) != 0};
    cmn_cfi_add_section(&b, &s);
    if (flags & 2) {
        s.is_debug_frame = !s.is_debug_frame;
        cmn_cfi_add_section(&b, &s);
    }
    struct cmn_uw_table *t = cmn_cfi_table(&b, alloc_table, NULL);
    cmn_cfi_build_free(&b);
    if (t == NULL)
        return;
    check_table(t);
    if (size > 0)
        walk(t, data, size, flags);
    free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < HEAD_BYTES)
        return 0;
    uint8_t flags = data[0];
    uint32_t vaddr;
    memcpy(&vaddr, data + 1, 4);
    /* The section in a buffer of its own size, so that a read past it is caught. */
    size_t n = size - HEAD_BYTES;
    uint8_t *section = malloc(n ? n : 1);
    if (section == NULL)
        return 0;
    memcpy(section, data + HEAD_BYTES, n);
    compile(section, n, flags, vaddr);
    free(section);
    return 0;
}
