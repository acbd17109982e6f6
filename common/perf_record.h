/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Decoding the records the kernel writes into a perf_event ring (common/perf_ring.h reads
 * them out): a PERF_RECORD_SAMPLE in the layout its counter's sample_type asks for, and
 * the side-band records COMM, FORK/EXIT, MMAP2 and LOST with the sample_id trailer
 * (sample_id_all) that sample_type gives them. One decoder for `prof record -p`'s counters
 * (attach/record_pid.c: IDENTIFIER | TID | TIME, then CALLCHAIN, or REGS_USER |
 * STACK_USER) and for libprof's kernel-time and wall-clock rings (libprof/ksamples.c,
 * libprof/wall.c: TID | TIME | CALLCHAIN | REGS_USER | STACK_USER). The layout of a sample,
 * its fields in the kernel's order:
 *
 *   identifier u64 | pid u32 tid u32 | time u64 | nr u64 ips[nr] |
 *   abi u64 regs[ARCH_PERF_N_REGS] | size u64 stack[size] dyn_size u64 (when size != 0)
 *
 * A decoder takes a record's body (what follows its header: h->size - sizeof(*h) bytes,
 * contiguous) and reads nothing outside it; the pointers in its result point into it. A
 * record cut short, or missing what makes it usable, is said so, never guessed at: the
 * kernel writes neither, but the bytes are checked as if anyone could have. Pure
 * functions, header-only, never installed.
 *
 * Signal handler's path: not allowed (the kernel's rings are read by the writer thread and
 * by prof; its checks assert in debug builds).
 */
#ifndef PROF_COMMON_PERF_RECORD_H
#define PROF_COMMON_PERF_RECORD_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arch/arch.h"
#include "common/check.h"
#include "common/fp_step.h"

/* The sample_type bits these decoders read; a layout with any other is not decoded. */
#define CMN_PERF_SAMPLE_TYPES                                                                      \
    (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN |         \
     PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

/* A PERF_RECORD_SAMPLE. The pointers point into the body decoded. */
struct cmn_perf_sample {
    uint64_t id;      /* with PERF_SAMPLE_IDENTIFIER: the counter's (also an inherited
                       * copy's), else 0 */
    uint32_t pid;     /* the process of the thread sampled */
    uint32_t tid;     /* the thread sampled */
    uint64_t time_ns; /* on the counter's clock */
    bool is_whole;    /* what follows the fixed fields (the chain, the registers, the stack
                       * copy: what sample_type asks for) is whole, with user registers; a
                       * sample without it has no stack to walk */
    /* With PERF_SAMPLE_CALLCHAIN: */
    const unsigned char *ips; /* n_ips u64 addresses, unaligned, PERF_CONTEXT_* included */
    uint64_t n_ips;
    /* With PERF_SAMPLE_REGS_USER (the mask ARCH_PERF_REGS_MASK) and _STACK_USER: */
    uint64_t regs_abi;          /* PERF_SAMPLE_REGS_ABI_32 or _64 */
    struct cmn_fp_regs regs;    /* the thread's user registers */
    const unsigned char *stack; /* a copy of its user stack from regs.sp up ... */
    size_t stack_len;           /* ... this many bytes of it (what the kernel could copy) */
};

/* A PERF_RECORD_COMM: a thread's new name, or the process called exec. */
struct cmn_perf_comm {
    uint32_t pid, tid;
    bool is_exec;     /* PERF_RECORD_MISC_COMM_EXEC: the process called exec */
    const char *comm; /* the name, NUL-terminated, in the record; NULL when it is cut */
    uint64_t time_ns; /* from the trailer; 0 when the record carries no time */
};

/* A PERF_RECORD_FORK or PERF_RECORD_EXIT: a thread started or ended. */
struct cmn_perf_task {
    uint32_t pid, ppid; /* its process, and its creator's */
    uint32_t tid, ptid; /* the thread, and its creator */
    uint64_t time_ns;
};

/* A PERF_RECORD_MMAP2: a mapping made. */
struct cmn_perf_mmap {
    uint32_t pid, tid;
    uint64_t addr, len, pgoff; /* [addr, addr + len) maps the file from pgoff */
    uint64_t dev, ino;         /* the file's device ((major << 32) | minor) and inode; 0 when
                                * the record carries a build-id instead */
    uint32_t prot;             /* PROT_* */
    const char *path;          /* NUL-terminated, in the record ("//anon" for anonymous
                                * memory); NULL when it is cut */
    uint64_t time_ns;          /* from the trailer; 0 when the record carries no time */
};

/* Not async-signal-safe. */
/* Reading a body, field after field. */
struct cmn_perf_cursor {
    const unsigned char *at, *end;
};

/* Copies the next n bytes into out; false (nothing taken) when fewer are left. */
static inline bool cmn_perf_take(struct cmn_perf_cursor *c, void *out, size_t n)
{
    if ((size_t)(c->end - c->at) < n)
        return false;
    memcpy(out, c->at, n);
    c->at += n;
    return true;
}

/* Whether the n bytes at p (NULL: none) lie in the len bytes at body. */
static inline bool cmn_perf_within(const unsigned char *body, size_t len, const unsigned char *p,
                                   uint64_t n)
{
    if (p == NULL)
        return n == 0;
    return p >= body && (size_t)(p - body) <= len && n <= len - (size_t)(p - body);
}

/* The kernel's callchain of a sample; false when it is cut. */
static inline bool cmn_perf_take_chain(struct cmn_perf_cursor *c, struct cmn_perf_sample *out)
{
    uint64_t nr;
    if (!cmn_perf_take(c, &nr, sizeof(nr)) || nr > (size_t)(c->end - c->at) / sizeof(uint64_t))
        return false;
    out->ips = c->at;
    out->n_ips = nr;
    c->at += nr * sizeof(uint64_t);
    return true;
}

/* The user registers of a sample; false when they are cut or the sample has none. */
static inline bool cmn_perf_take_regs(struct cmn_perf_cursor *c, struct cmn_perf_sample *out)
{
    uint64_t abi, regs[ARCH_PERF_N_REGS];
    if (!cmn_perf_take(c, &abi, sizeof(abi)) || abi == PERF_SAMPLE_REGS_ABI_NONE ||
        !cmn_perf_take(c, regs, sizeof(regs)))
        return false;
    out->regs_abi = abi;
    out->regs = (struct cmn_fp_regs){.ret_known = 1, .arg_known = 1};
    arch_perf_regs(regs, &out->regs.pc, &out->regs.sp, &out->regs.fp, &out->regs.lr, &out->regs.ret,
                   &out->regs.arg);
    return true;
}

/* The copy of the user stack of a sample (size, the bytes, what of them the kernel could
 * copy); false when it is cut. */
static inline bool cmn_perf_take_stack(struct cmn_perf_cursor *c, struct cmn_perf_sample *out)
{
    uint64_t size, dyn_size = 0;
    if (!cmn_perf_take(c, &size, sizeof(size)))
        return false;
    out->stack = c->at;
    if (size > 0) {
        size_t left = (size_t)(c->end - c->at);
        if (size > left || left - size < sizeof(dyn_size))
            return false;
        c->at += size;
        cmn_perf_take(c, &dyn_size, sizeof(dyn_size));
        if (dyn_size > size)
            dyn_size = size;
    }
    out->stack_len = (size_t)dyn_size;
    return true;
}

/* Decodes the body of a PERF_RECORD_SAMPLE (len bytes) written in the layout sample_type
 * names. False when sample_type holds a field this decoder does not read, or when the
 * fixed fields (identifier, pid and tid, time) are cut; out->is_whole says whether the
 * rest is there. */
static inline bool cmn_perf_decode_sample(const unsigned char *body, size_t len,
                                          uint64_t sample_type, struct cmn_perf_sample *out)
{
    struct cmn_perf_cursor c = {body, body + len};
    uint32_t ids[2] = {0, 0}; /* pid, tid */
    memset(out, 0, sizeof(*out));
    if ((sample_type & ~(uint64_t)CMN_PERF_SAMPLE_TYPES) != 0 ||
        ((sample_type & PERF_SAMPLE_IDENTIFIER) && !cmn_perf_take(&c, &out->id, sizeof(out->id))) ||
        ((sample_type & PERF_SAMPLE_TID) && !cmn_perf_take(&c, ids, sizeof(ids))) ||
        ((sample_type & PERF_SAMPLE_TIME) &&
         !cmn_perf_take(&c, &out->time_ns, sizeof(out->time_ns))))
        return false;
    out->pid = ids[0];
    out->tid = ids[1];
    out->is_whole = (!(sample_type & PERF_SAMPLE_CALLCHAIN) || cmn_perf_take_chain(&c, out)) &&
                    (!(sample_type & PERF_SAMPLE_REGS_USER) || cmn_perf_take_regs(&c, out)) &&
                    (!(sample_type & PERF_SAMPLE_STACK_USER) || cmn_perf_take_stack(&c, out));
    /* What was handed out lies in the body. */
    if (PROF_NEVER(c.at > c.end ||
                   !cmn_perf_within(body, len, out->ips, out->n_ips * sizeof(uint64_t)) ||
                   !cmn_perf_within(body, len, out->stack, out->stack_len)))
        out->is_whole = false;
    return true;
}

/* The bytes of the sample_id trailer that sample_type gives a side-band record, and how
 * far before its end the time is (0 without one). */
static inline size_t cmn_perf_trailer_bytes(uint64_t sample_type, size_t *time_from_end)
{
    static const uint64_t after_time =
        PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
    size_t n = (size_t)__builtin_popcountll(sample_type &
                                            (after_time | PERF_SAMPLE_TID | PERF_SAMPLE_TIME));
    *time_from_end = (sample_type & PERF_SAMPLE_TIME)
                         ? 8 * (size_t)__builtin_popcountll(sample_type & after_time) + 8
                         : 0;
    return 8 * n;
}

/* The time in the trailer of a side-band record's body (len bytes); 0 when it has none. */
static inline uint64_t cmn_perf_trailer_time(const unsigned char *body, size_t len,
                                             uint64_t sample_type)
{
    size_t from_end;
    uint64_t t = 0;
    if (cmn_perf_trailer_bytes(sample_type, &from_end) <= len && from_end != 0)
        memcpy(&t, body + len - from_end, sizeof(t));
    return t;
}

/* The NUL-terminated string at offset at of a side-band record's body (len bytes), or
 * NULL when it does not end before the trailer. */
static inline const char *cmn_perf_string(const unsigned char *body, size_t len, size_t at,
                                          uint64_t sample_type)
{
    size_t from_end, trailer = cmn_perf_trailer_bytes(sample_type, &from_end);
    if (len < at + trailer || memchr(body + at, '\0', len - at - trailer) == NULL)
        return NULL;
    return (const char *)(body + at);
}

/* The decoders of side-band records: h is the record's header, body its h->size -
 * sizeof(*h) bytes, sample_type its counter's (for the trailer). False when the record is
 * too short for the struct's fixed fields. */
static inline bool cmn_perf_decode_comm(const struct perf_event_header *h,
                                        const unsigned char *body, uint64_t sample_type,
                                        struct cmn_perf_comm *out)
{
    uint32_t ids[2]; /* pid, tid */
    if (h->size < sizeof(*h) + sizeof(ids))
        return false;
    size_t len = h->size - sizeof(*h);
    memcpy(ids, body, sizeof(ids));
    *out = (struct cmn_perf_comm){
        .pid = ids[0],
        .tid = ids[1],
        .is_exec = (h->misc & PERF_RECORD_MISC_COMM_EXEC) != 0,
        .comm = cmn_perf_string(body, len, sizeof(ids), sample_type),
        .time_ns = cmn_perf_trailer_time(body, len, sample_type),
    };
    return true;
}

static inline bool cmn_perf_decode_task(const struct perf_event_header *h,
                                        const unsigned char *body, struct cmn_perf_task *out)
{
    struct {
        uint32_t pid, ppid, tid, ptid;
        uint64_t time_ns;
    } rec;
    if (h->size < sizeof(*h) + sizeof(rec))
        return false;
    memcpy(&rec, body, sizeof(rec));
    *out = (struct cmn_perf_task){
        .pid = rec.pid, .ppid = rec.ppid, .tid = rec.tid, .ptid = rec.ptid, .time_ns = rec.time_ns};
    return true;
}

static inline bool cmn_perf_decode_mmap(const struct perf_event_header *h,
                                        const unsigned char *body, uint64_t sample_type,
                                        struct cmn_perf_mmap *out)
{
    struct {
        uint32_t pid, tid;
        uint64_t addr, len, pgoff;
        uint32_t maj, min; /* or the build-id's size and bytes with MISC_MMAP_BUILD_ID */
        uint64_t ino, ino_generation;
        uint32_t prot, flags;
    } rec;
    if (h->size < sizeof(*h) + sizeof(rec))
        return false;
    size_t len = h->size - sizeof(*h);
    memcpy(&rec, body, sizeof(rec));
    *out = (struct cmn_perf_mmap){
        .pid = rec.pid,
        .tid = rec.tid,
        .addr = rec.addr,
        .len = rec.len,
        .pgoff = rec.pgoff,
        .prot = rec.prot,
        .path = cmn_perf_string(body, len, sizeof(rec), sample_type),
        .time_ns = cmn_perf_trailer_time(body, len, sample_type),
    };
    if (!(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
        out->dev = (uint64_t)rec.maj << 32 | rec.min;
        out->ino = rec.ino;
    }
    return true;
}

/* The records a PERF_RECORD_LOST says the kernel could not write; 0 when it is cut. */
static inline uint64_t cmn_perf_decode_lost(const struct perf_event_header *h,
                                            const unsigned char *body)
{
    uint64_t lost[2]; /* id, count */
    if (h->size < sizeof(*h) + sizeof(lost))
        return 0;
    memcpy(lost, body, sizeof(lost));
    return lost[1];
}

#endif
