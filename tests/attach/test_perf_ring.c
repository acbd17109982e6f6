/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the perf_event rings of `prof record -p` (attach/perf_ring.c) without the
 * kernel: records built by hand in the kernel's layouts of its counters are decoded into
 * their structs (common/perf_record.h: whole, cut short, or without what makes them
 * usable), and a ring laid out in plain memory, with a record that wraps around its end,
 * is read record by record.
 */
#include <criterion/criterion.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attach/perf_ring.h"
#include "common/perf_record.h"

#define TIME_NS 123456789ull
#define ID 77u
#define PID 4242u
#define TID 4243u

/* The layouts of prof record -p's counters: by default, and with --unwind kernel. */
#define SAMPLE_TYPE                                                                                \
    (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER |         \
     PERF_SAMPLE_STACK_USER)
#define SAMPLE_TYPE_CHAIN                                                                          \
    (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN)

/* Decodes the sample r holds, of size bytes, in layout type. */
static bool decode_sample(const unsigned char *r, size_t size, uint64_t type,
                          struct cmn_perf_sample *d)
{
    const size_t h = sizeof(struct perf_event_header);
    return cmn_perf_decode_sample(r + h, size - h, type, d);
}

/* A record being built, in the kernel's layout. */
struct rec {
    unsigned char b[1024];
    size_t n;
};

static void put(struct rec *r, const void *v, size_t n)
{
    cr_assert_leq(r->n + n, sizeof(r->b));
    memcpy(r->b + r->n, v, n);
    r->n += n;
}

static void put_u64(struct rec *r, uint64_t v)
{
    put(r, &v, sizeof(v));
}

static void put_u32s(struct rec *r, uint32_t a, uint32_t b)
{
    uint32_t v[2] = {a, b};
    put(r, v, sizeof(v));
}

/* Starts a record of type type: room for its header, which end() fills in. */
static void begin(struct rec *r, uint32_t type)
{
    r->n = 0;
    struct perf_event_header h = {.type = type};
    put(r, &h, sizeof(h));
}

static struct perf_event_header end(struct rec *r, uint16_t misc)
{
    struct perf_event_header h;
    memcpy(&h, r->b, sizeof(h));
    h.misc = misc;
    h.size = (uint16_t)r->n;
    memcpy(r->b, &h, sizeof(h));
    return h;
}

/* The fixed part of a sample: id, pid tid, time. */
static void begin_sample(struct rec *r)
{
    begin(r, PERF_RECORD_SAMPLE);
    put_u64(r, ID);
    put_u32s(r, PID, TID);
    put_u64(r, TIME_NS);
}

/* The trailer of a side-band record (sample_id_all): pid tid, time, id. */
static void put_trailer(struct rec *r)
{
    put_u32s(r, PID, TID);
    put_u64(r, TIME_NS);
    put_u64(r, ID);
}

/* The user registers, in the kernel's order for this architecture: the system call's
 * return register, the first argument's (x86_64), fp, sp, pc (and lr). */
static void put_regs(struct rec *r, uint64_t fp, uint64_t sp, uint64_t pc)
{
#if defined(__x86_64__)
    put_u64(r, 42); /* ax */
    put_u64(r, 0x401234); /* di */
    put_u64(r, fp); /* bp */
    put_u64(r, sp);
    put_u64(r, pc); /* ip */
#elif defined(__aarch64__)
    put_u64(r, 42);     /* x0 */
    put_u64(r, fp);     /* x29 */
    put_u64(r, 0x1234); /* lr */
    put_u64(r, sp);
    put_u64(r, pc);
#endif
}

Test(perf_ring, decodes_a_sample_with_registers_and_a_stack_copy)
{
    struct rec r;
    begin_sample(&r);
    put_u64(&r, PERF_SAMPLE_REGS_ABI_64);
    put_regs(&r, 0x7000, 0x6000, 0x401000);
    put_u64(&r, 32); /* size of the copy */
    for (uint64_t i = 0; i < 4; i++)
        put_u64(&r, 0xa0 + i);
    put_u64(&r, 24); /* dyn_size: what the kernel could copy */
    struct perf_event_header h = end(&r, 0);

    struct cmn_perf_sample d;
    cr_assert(decode_sample(r.b, h.size, SAMPLE_TYPE, &d));
    cr_expect_eq(d.id, ID);
    cr_expect_eq(d.pid, PID);
    cr_expect_eq(d.tid, TID);
    cr_expect_eq(d.time_ns, TIME_NS);
    cr_assert(d.is_whole);
    cr_expect_eq(d.regs_abi, PERF_SAMPLE_REGS_ABI_64);
    cr_expect_eq(d.regs.fp, 0x7000);
    cr_expect_eq(d.regs.sp, 0x6000);
    cr_expect_eq(d.regs.pc, 0x401000);
    cr_expect(d.regs.ret_known && d.regs.ret == 42, "the return register: %d %lu",
              d.regs.ret_known, (unsigned long)d.regs.ret);
#if defined(__x86_64__)
    cr_expect(d.regs.arg_known && d.regs.arg == 0x401234, "the first argument's register");
#endif
    cr_expect_eq(d.stack_len, 24);
    uint64_t word;
    memcpy(&word, d.stack, sizeof(word));
    cr_expect_eq(word, 0xa0);
}

Test(perf_ring, keeps_a_stack_copy_within_its_size)
{
    struct rec r;
    begin_sample(&r);
    put_u64(&r, PERF_SAMPLE_REGS_ABI_64);
    put_regs(&r, 0x7000, 0x6000, 0x401000);
    put_u64(&r, 8);
    put_u64(&r, 0xa0);
    put_u64(&r, 4096); /* more than the copy holds */
    struct perf_event_header h = end(&r, 0);

    struct cmn_perf_sample d;
    cr_assert(decode_sample(r.b, h.size, SAMPLE_TYPE, &d));
    cr_assert(d.is_whole);
    cr_expect_eq(d.stack_len, 8);
}

Test(perf_ring, marks_a_sample_without_user_registers_or_cut_short)
{
    struct rec r;
    struct cmn_perf_sample d;
    begin_sample(&r);
    put_u64(&r, PERF_SAMPLE_REGS_ABI_NONE);
    struct perf_event_header h = end(&r, 0);
    cr_assert(decode_sample(r.b, h.size, SAMPLE_TYPE, &d));
    cr_expect_not(d.is_whole, "no user registers");

    begin_sample(&r);
    put_u64(&r, PERF_SAMPLE_REGS_ABI_64);
    put_regs(&r, 0x7000, 0x6000, 0x401000);
    put_u64(&r, 64); /* a copy of 64 bytes, of which 8 are there */
    put_u64(&r, 0xa0);
    h = end(&r, 0);
    cr_assert(decode_sample(r.b, h.size, SAMPLE_TYPE, &d));
    cr_expect_not(d.is_whole, "the stack copy is cut");
    cr_expect_eq(d.tid, TID);

    begin(&r, PERF_RECORD_SAMPLE);
    put_u64(&r, ID);
    h = end(&r, 0);
    cr_expect_not(decode_sample(r.b, h.size, SAMPLE_TYPE, &d), "the fixed part is cut");
}

Test(perf_ring, decodes_a_kernel_callchain)
{
    struct rec r;
    begin_sample(&r);
    put_u64(&r, 3);
    put_u64(&r, (uint64_t)PERF_CONTEXT_USER);
    put_u64(&r, 0x401000);
    put_u64(&r, 0x402000);
    struct perf_event_header h = end(&r, 0);

    struct cmn_perf_sample d;
    cr_assert(decode_sample(r.b, h.size, SAMPLE_TYPE_CHAIN, &d));
    cr_assert(d.is_whole);
    cr_assert_eq(d.n_ips, 3);
    uint64_t ip;
    memcpy(&ip, d.ips + 2 * sizeof(ip), sizeof(ip));
    cr_expect_eq(ip, 0x402000);

    begin_sample(&r);
    put_u64(&r, 5); /* five addresses, one there */
    put_u64(&r, 0x401000);
    h = end(&r, 0);
    cr_assert(decode_sample(r.b, h.size, SAMPLE_TYPE_CHAIN, &d));
    cr_expect_not(d.is_whole);
}

Test(perf_ring, decodes_side_band_records_with_their_trailer)
{
    struct rec r;
    begin(&r, PERF_RECORD_COMM);
    put_u32s(&r, PID, TID);
    put(&r, "worker\0\0", 8);
    put_trailer(&r);
    struct perf_event_header h = end(&r, 0);
    struct cmn_perf_comm c;
    cr_assert(cmn_perf_decode_comm(&h, r.b + sizeof(h), SAMPLE_TYPE, &c));
    cr_expect(c.pid == PID && c.tid == TID && !c.is_exec && c.time_ns == TIME_NS);
    cr_assert_not_null(c.comm);
    cr_expect_str_eq(c.comm, "worker");

    begin(&r, PERF_RECORD_COMM);
    put_u32s(&r, PID, TID);
    put(&r, "workerXX", 8); /* not terminated before the trailer */
    put_trailer(&r);
    h = end(&r, PERF_RECORD_MISC_COMM_EXEC);
    cr_assert(cmn_perf_decode_comm(&h, r.b + sizeof(h), SAMPLE_TYPE, &c));
    cr_expect(c.is_exec);
    cr_expect_null(c.comm);

    begin(&r, PERF_RECORD_FORK);
    put_u32s(&r, PID, PID); /* pid, ppid */
    put_u32s(&r, TID, PID); /* tid, ptid */
    put_u64(&r, TIME_NS + 1);
    put_trailer(&r);
    h = end(&r, 0);
    struct cmn_perf_task t;
    cr_assert(cmn_perf_decode_task(&h, r.b + sizeof(h), &t));
    cr_expect(t.pid == PID && t.ppid == PID && t.tid == TID && t.ptid == PID);
    cr_expect_eq(t.time_ns, TIME_NS + 1);

    begin(&r, PERF_RECORD_MMAP2);
    put_u32s(&r, PID, TID);
    put_u64(&r, 0x10000); /* addr */
    put_u64(&r, 0x2000);  /* len */
    put_u64(&r, 0x1000);  /* pgoff */
    put_u32s(&r, 8, 1);   /* maj, min */
    put_u64(&r, 99);      /* ino */
    put_u64(&r, 0);       /* ino_generation */
    put_u32s(&r, 5, 2);   /* prot: PROT_READ | PROT_EXEC, flags */
    put(&r, "/lib/x.so\0\0\0\0\0\0\0", 16);
    put_trailer(&r);
    h = end(&r, 0);
    struct cmn_perf_mmap m;
    cr_assert(cmn_perf_decode_mmap(&h, r.b + sizeof(h), SAMPLE_TYPE, &m));
    cr_expect(m.pid == PID && m.addr == 0x10000 && m.len == 0x2000 && m.pgoff == 0x1000);
    cr_expect_eq(m.prot, 5);
    cr_expect_eq(m.time_ns, TIME_NS);
    cr_assert_not_null(m.path);
    cr_expect_str_eq(m.path, "/lib/x.so");

    begin(&r, PERF_RECORD_LOST);
    put_u64(&r, ID);
    put_u64(&r, 17);
    put_trailer(&r);
    h = end(&r, 0);
    cr_expect_eq(cmn_perf_decode_lost(&h, r.b + sizeof(h)), 17);
    h.size = sizeof(h) + 8;
    cr_expect_eq(cmn_perf_decode_lost(&h, r.b + sizeof(h)), 0, "cut");
    cr_expect_not(cmn_perf_decode_task(&h, r.b + sizeof(h), &t), "cut");
}

/* A ring of data_bytes in plain memory, as the kernel lays it out, in a att_pring of one
 * CPU. The descriptor is never used by the reader; it only says the ring is mapped. */
struct fake {
    struct perf_event_mmap_page meta;
    unsigned char data[256];
    struct att_pring_buf buf;
    struct att_pring p;
};

static void fake_init(struct fake *f, uint64_t tail)
{
    memset(f, 0, sizeof(*f));
    f->meta.data_tail = tail;
    f->meta.data_head = tail;
    f->buf = (struct att_pring_buf){
        .fd = 1000, .meta = &f->meta, .data = f->data, .data_bytes = sizeof(f->data)};
    f->p.n_cpus = 1;
    f->p.rings = &f->buf;
    f->p.wrap = malloc(ATT_PRING_RECORD_MAX);
    cr_assert_not_null(f->p.wrap);
}

/* Appends a record as the kernel does, wrapping at the end of the data area. */
static void fake_write(struct fake *f, const struct rec *r)
{
    for (size_t i = 0; i < r->n; i++)
        f->data[(f->meta.data_head + i) % sizeof(f->data)] = r->b[i];
    f->meta.data_head += r->n;
}

/* A COMM record of 8-aligned size n whose name is filled with c. */
static void make_comm(struct rec *r, size_t n, char c)
{
    begin(r, PERF_RECORD_COMM);
    put_u32s(r, PID, TID);
    size_t name = n - r->n - 24;
    char buf[256];
    memset(buf, c, name - 1);
    buf[name - 1] = '\0';
    put(r, buf, name);
    put_trailer(r);
    end(r, 0);
}

Test(perf_ring, reads_a_record_that_wraps_around_the_ring)
{
    struct fake f;
    fake_init(&f, 1000 * 256 + 200); /* 56 bytes before the end of the area */
    struct rec a, b;
    make_comm(&a, 96, 'a'); /* 56 bytes at the end, 40 at the start */
    make_comm(&b, 48, 'b');
    fake_write(&f, &a);
    fake_write(&f, &b);

    struct att_pring_reader rd;
    cr_assert(att_pring_read_begin(&f.p, 0, &rd));
    struct perf_event_header h;
    const unsigned char *p = att_pring_read_next(&rd, &h);
    cr_assert_not_null(p);
    cr_expect_eq(p, f.p.wrap, "a record that wraps is made whole in the wrap buffer");
    cr_expect_eq(h.type, PERF_RECORD_COMM);
    cr_expect_eq(h.size, 96);
    cr_expect_eq(memcmp(p, a.b, a.n), 0);
    struct cmn_perf_comm c;
    cr_assert(cmn_perf_decode_comm(&h, p + sizeof(h), SAMPLE_TYPE, &c));
    cr_expect_eq(strlen(c.comm), 96 - 16 - 24 - 1);

    p = att_pring_read_next(&rd, &h);
    cr_assert_not_null(p);
    cr_expect_eq(p, f.data + 40, "the next one is read in place");
    cr_expect_eq(memcmp(p, b.b, b.n), 0);
    cr_expect_null(att_pring_read_next(&rd, &h));
    att_pring_read_end(&rd);
    cr_expect_eq(f.meta.data_tail, f.meta.data_head, "all of it is given back");
    free(f.p.wrap);
}

Test(perf_ring, skips_what_is_not_a_record)
{
    struct fake f;
    fake_init(&f, 0);
    struct rec a;
    make_comm(&a, 48, 'a');
    fake_write(&f, &a);
    f.meta.data_head += 64; /* zeroes: a header of size 0 */

    struct att_pring_reader rd;
    cr_assert(att_pring_read_begin(&f.p, 0, &rd));
    struct perf_event_header h;
    cr_assert_not_null(att_pring_read_next(&rd, &h));
    cr_expect_null(att_pring_read_next(&rd, &h));
    att_pring_read_end(&rd);
    cr_expect_eq(f.meta.data_tail, 48 + 64, "the rest is skipped");

    f.buf.fd = -1;
    cr_expect_not(att_pring_read_begin(&f.p, 0, &rd), "a ring not mapped is not read");
    free(f.p.wrap);
}
