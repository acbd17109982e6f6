/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Encoders for the profile format's records (include/libprof/prof_format.h, docs/FORMAT.md), shared
 * by everything that writes profiles: libprof's writer thread, and the prof command when it
 * writes one itself (`prof record -p`, `prof stacks`). Pure functions over a caller's
 * buffer: no globals, no allocation, no I/O. Each record is a prof_rec_hdr, a fixed part,
 * and a variable tail (a string or an array), zero-padded to PROF_REC_ALIGN so that the
 * next record starts aligned. Each encoder returns the bytes written, or 0 when the record
 * does not fit in cap (nothing is written then). Not async-signal-safe (memcpy/strlen only,
 * but not checked for it). Header-only (static inline), never installed.
 *
 * Signal handler's path: not allowed (strlen is not on its list).
 */
#ifndef PROF_COMMON_RECORD_H
#define PROF_COMMON_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "include/libprof/prof_format.h"

/* Encodes one batch entry into out (at least CMN_RECORD_ENTRY_MAX bytes). */
#define CMN_RECORD_ENTRY_MAX 40u

static inline size_t cmn_record_pad(size_t n)
{
    return (n + PROF_REC_ALIGN - 1) & ~(size_t)(PROF_REC_ALIGN - 1);
}

static inline size_t cmn_record_size_str(size_t fixed_bytes, size_t str_len)
{
    return cmn_record_pad(fixed_bytes + str_len + 1);
}

/* Writes fixed (whose first member is a prof_rec_hdr) then tail, padded. */
static inline size_t cmn_record_put(void *buf, size_t cap, uint32_t type, const void *fixed,
                                     size_t fixed_bytes, const void *tail, size_t tail_bytes)
{
    size_t total = cmn_record_pad(fixed_bytes + tail_bytes);
    if (total > cap || total > PROF_REC_MAX_BYTES)
        return 0;
    unsigned char *p = buf;
    memcpy(p, fixed, fixed_bytes);
    struct prof_rec_hdr hdr = {.type = type, .size_bytes = (uint32_t)total};
    memcpy(p, &hdr, sizeof(hdr));
    if (tail_bytes)
        memcpy(p + fixed_bytes, tail, tail_bytes);
    memset(p + fixed_bytes + tail_bytes, 0, total - fixed_bytes - tail_bytes);
    return total;
}

static inline size_t cmn_record_file_header(void *buf, size_t cap)
{
    struct prof_file_header h = {.version = PROF_FILE_VERSION,
                                 .header_bytes = sizeof(struct prof_file_header)};
    if (cap < sizeof(h))
        return 0;
    memcpy(h.magic, PROF_FILE_MAGIC, sizeof(h.magic));
    memcpy(buf, &h, sizeof(h));
    return sizeof(h);
}

static inline size_t cmn_record_process(void *buf, size_t cap, const struct prof_rec_process *p,
                                         const char *exe)
{
    const char *s = exe ? exe : "";
    return cmn_record_put(buf, cap, PROF_REC_PROCESS, p, sizeof(*p), s, strlen(s) + 1);
}

static inline size_t cmn_record_map(void *buf, size_t cap, const struct prof_rec_map *m,
                                     const char *path)
{
    const char *s = path ? path : "";
    return cmn_record_put(buf, cap, PROF_REC_MAP, m, sizeof(*m), s, strlen(s) + 1);
}

static inline size_t cmn_record_thread(void *buf, size_t cap, uint64_t time_ns, uint32_t tid,
                                        const char *name)
{
    struct prof_rec_thread t = {.time_ns = time_ns, .tid = tid};
    const char *s = name ? name : "";
    return cmn_record_put(buf, cap, PROF_REC_THREAD, &t, sizeof(t), s, strlen(s) + 1);
}

static inline size_t cmn_record_sample(void *buf, size_t cap, const struct prof_rec_sample *s,
                                        const uint64_t *frames)
{
    return cmn_record_put(buf, cap, PROF_REC_SAMPLE, s, sizeof(*s), frames,
                           (size_t)s->n_frames * sizeof(uint64_t));
}

static inline size_t cmn_record_stack(void *buf, size_t cap, const struct prof_rec_stack *st,
                                       const uint64_t *frames)
{
    return cmn_record_put(buf, cap, PROF_REC_STACK, st, sizeof(*st), frames,
                           (size_t)st->n_frames * sizeof(uint64_t));
}

/* A stack with a thread state (wall profiles) and a thread label set: both follow the
 * frames, which an older reader skips (docs/FORMAT.md); a state and a label set of 0 write a
 * plain stack. */
static inline size_t cmn_record_stack_ctx(void *buf, size_t cap, const struct prof_rec_stack *st,
                                           const uint64_t *frames, uint32_t state,
                                           uint32_t label_set)
{
    size_t n = cmn_record_stack(buf, cap, st, frames);
    if (n == 0 || (state == 0 && label_set == 0))
        return n;
    struct prof_stack_state tail = {.state = state, .label_set = label_set};
    if (n + sizeof(tail) > cap || n + sizeof(tail) > PROF_REC_MAX_BYTES)
        return 0;
    memcpy((unsigned char *)buf + n, &tail, sizeof(tail));
    struct prof_rec_hdr hdr = {.type = PROF_REC_STACK, .size_bytes = (uint32_t)(n + sizeof(tail))};
    memcpy(buf, &hdr, sizeof(hdr));
    return n + sizeof(tail);
}

/* The same without labels. */
static inline size_t cmn_record_stack_state(void *buf, size_t cap,
                                             const struct prof_rec_stack *st,
                                             const uint64_t *frames, uint32_t state)
{
    return cmn_record_stack_ctx(buf, cap, st, frames, state, 0);
}

/* A full sample whose context (label set, trace) follows its frames when either is not 0. */
static inline size_t cmn_record_sample_ctx(void *buf, size_t cap, const struct prof_rec_sample *s,
                                            const uint64_t *frames,
                                            const struct prof_sample_ctx *ctx)
{
    size_t n = cmn_record_sample(buf, cap, s, frames);
    if (n == 0 || ctx == NULL || (ctx->label_set == 0 && ctx->trace == 0))
        return n;
    if (n + sizeof(*ctx) > cap || n + sizeof(*ctx) > PROF_REC_MAX_BYTES)
        return 0;
    memcpy((unsigned char *)buf + n, ctx, sizeof(*ctx));
    struct prof_rec_hdr hdr = {.type = PROF_REC_SAMPLE, .size_bytes = (uint32_t)(n + sizeof(*ctx))};
    memcpy(buf, &hdr, sizeof(hdr));
    return n + sizeof(*ctx);
}

/* A PROF_REC_LABEL_SET: n_labels pairs packed as "key\0value\0..." in strs (str_bytes). */
static inline size_t cmn_record_label_set(void *buf, size_t cap, uint32_t id, uint32_t n_labels,
                                           const char *strs, size_t str_bytes)
{
    struct prof_rec_label_set l = {.id = id, .n_labels = n_labels};
    return cmn_record_put(buf, cap, PROF_REC_LABEL_SET, &l, sizeof(l), strs, str_bytes);
}

/* A PROF_REC_TRACE. */
static inline size_t cmn_record_trace(void *buf, size_t cap, uint32_t id, uint8_t trace_flags,
                                       const uint8_t trace_id[16], const uint8_t span_id[8])
{
    struct prof_rec_trace t = {.id = id, .trace_flags = trace_flags};
    memcpy(t.trace_id, trace_id, sizeof(t.trace_id));
    memcpy(t.span_id, span_id, sizeof(t.span_id));
    return cmn_record_put(buf, cap, PROF_REC_TRACE, &t, sizeof(t), NULL, 0);
}

/* A PROF_REC_SAMPLE_TRACES: n_samples LEB128 numbers already encoded in entries. */
static inline size_t cmn_record_sample_traces(void *buf, size_t cap, uint32_t n_samples,
                                               const void *entries, size_t entries_len)
{
    struct prof_rec_sample_traces t = {.n_samples = n_samples};
    return cmn_record_put(buf, cap, PROF_REC_SAMPLE_TRACES, &t, sizeof(t), entries, entries_len);
}

/* The size of a PROF_REC_LABELS of n pairs whose strings (NULs included) take str_bytes. */
static inline size_t cmn_record_labels_size(size_t str_bytes)
{
    return cmn_record_pad(sizeof(struct prof_rec_labels) + str_bytes);
}

/* A PROF_REC_LABELS: n_labels pairs, packed as "key\0value\0..." in strs (str_bytes bytes). */
static inline size_t cmn_record_labels(void *buf, size_t cap, uint32_t n_labels, const char *strs,
                                        size_t str_bytes)
{
    struct prof_rec_labels l = {.n_labels = n_labels};
    return cmn_record_put(buf, cap, PROF_REC_LABELS, &l, sizeof(l), strs, str_bytes);
}

static inline size_t cmn_record_samples(void *buf, size_t cap, uint64_t base_time_ns,
                                         uint32_t n_samples, const void *entries,
                                         size_t entries_len)
{
    struct prof_rec_samples b = {.base_time_ns = base_time_ns, .n_samples = n_samples};
    return cmn_record_put(buf, cap, PROF_REC_SAMPLES, &b, sizeof(b), entries, entries_len);
}

/* Unsigned LEB128: 7 bits a byte, low first, the top bit set on all but the last. */
static inline size_t cmn_record_uleb(unsigned char *out, uint64_t v)
{
    size_t n = 0;
    do {
        unsigned char byte = v & 0x7f;
        v >>= 7;
        out[n++] = byte | (v ? 0x80 : 0);
    } while (v);
    return n;
}

static inline size_t cmn_record_samples_entry(unsigned char *out, int64_t time_delta_ns,
                                               uint32_t tid, uint32_t stack_id, uint32_t weight)
{
    /* Zigzag: 0, -1, 1, -2, ... as 0, 1, 2, 3, ... so small steps of either sign are short. */
    uint64_t zz = ((uint64_t)time_delta_ns << 1) ^ (uint64_t)(time_delta_ns >> 63);
    size_t n = cmn_record_uleb(out, zz);
    n += cmn_record_uleb(out + n, tid);
    n += cmn_record_uleb(out + n, stack_id);
    n += cmn_record_uleb(out + n, weight ? weight - 1 : 0);
    return n;
}

static inline size_t cmn_record_stats(void *buf, size_t cap, const uint64_t *counters,
                                       uint32_t n_counters)
{
    struct prof_rec_stats st = {.n_counters = n_counters};
    return cmn_record_put(buf, cap, PROF_REC_STATS, &st, sizeof(st), counters,
                           (size_t)n_counters * sizeof(uint64_t));
}

static inline size_t cmn_record_end(void *buf, size_t cap)
{
    struct prof_rec_hdr h = {0};
    return cmn_record_put(buf, cap, PROF_REC_END, &h, sizeof(h), NULL, 0);
}

static inline size_t cmn_record_note(void *buf, size_t cap, uint64_t time_ns, const char *text)
{
    struct prof_rec_note n = {.time_ns = time_ns};
    const char *s = text ? text : "";
    return cmn_record_put(buf, cap, PROF_REC_NOTE, &n, sizeof(n), s, strlen(s) + 1);
}

static inline size_t cmn_record_snapshot(void *buf, size_t cap, uint64_t time_ns, uint32_t tid,
                                          uint8_t status, char run_state, uint16_t syscall)
{
    struct prof_rec_snapshot r = {.time_ns = time_ns,
                                  .tid = tid,
                                  .status = status,
                                  .run_state = run_state,
                                  .syscall = syscall};
    return cmn_record_put(buf, cap, PROF_REC_SNAPSHOT, &r, sizeof(r), NULL, 0);
}

#endif
