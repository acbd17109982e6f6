/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Record encoders. Every record is a prof_rec_hdr, a fixed part, and a variable tail
 * (a string or an array), zero-padded to PROF_REC_ALIGN so that the next record starts
 * aligned. Called by the writer thread and by tests; never from a signal handler.
 */
#include "libprof/record.h"

#include <string.h>

static size_t pad_to_align(size_t n)
{
    return (n + PROF_REC_ALIGN - 1) & ~(size_t)(PROF_REC_ALIGN - 1);
}

size_t lp_record_size_str(size_t fixed_bytes, size_t str_len)
{
    return pad_to_align(fixed_bytes + str_len + 1);
}

/* Writes fixed (whose first member is a prof_rec_hdr) then tail, padded. */
static size_t put_record(void *buf, size_t cap, uint32_t type, const void *fixed,
                         size_t fixed_bytes, const void *tail, size_t tail_bytes)
{
    size_t total = pad_to_align(fixed_bytes + tail_bytes);
    if (total > cap || total > PROF_REC_MAX_BYTES)
        return 0;
    unsigned char *p = buf;
    memcpy(p, fixed, fixed_bytes);
    struct prof_rec_hdr hdr = { .type = type, .size_bytes = (uint32_t)total };
    memcpy(p, &hdr, sizeof(hdr));
    if (tail_bytes)
        memcpy(p + fixed_bytes, tail, tail_bytes);
    memset(p + fixed_bytes + tail_bytes, 0, total - fixed_bytes - tail_bytes);
    return total;
}

size_t lp_record_file_header(void *buf, size_t cap)
{
    struct prof_file_header h = { .version = PROF_FILE_VERSION,
                                  .header_bytes = sizeof(struct prof_file_header) };
    if (cap < sizeof(h))
        return 0;
    memcpy(h.magic, PROF_FILE_MAGIC, sizeof(h.magic));
    memcpy(buf, &h, sizeof(h));
    return sizeof(h);
}

size_t lp_record_process(void *buf, size_t cap, const struct prof_rec_process *p,
                         const char *exe)
{
    const char *s = exe ? exe : "";
    return put_record(buf, cap, PROF_REC_PROCESS, p, sizeof(*p), s, strlen(s) + 1);
}

size_t lp_record_map(void *buf, size_t cap, const struct prof_rec_map *m, const char *path)
{
    const char *s = path ? path : "";
    return put_record(buf, cap, PROF_REC_MAP, m, sizeof(*m), s, strlen(s) + 1);
}

size_t lp_record_thread(void *buf, size_t cap, uint64_t time_ns, uint32_t tid,
                        const char *name)
{
    struct prof_rec_thread t = { .time_ns = time_ns, .tid = tid };
    const char *s = name ? name : "";
    return put_record(buf, cap, PROF_REC_THREAD, &t, sizeof(t), s, strlen(s) + 1);
}

size_t lp_record_sample(void *buf, size_t cap, const struct prof_rec_sample *s,
                        const uint64_t *frames)
{
    return put_record(buf, cap, PROF_REC_SAMPLE, s, sizeof(*s), frames,
                      (size_t)s->n_frames * sizeof(uint64_t));
}

size_t lp_record_stack(void *buf, size_t cap, const struct prof_rec_stack *st,
                       const uint64_t *frames)
{
    return put_record(buf, cap, PROF_REC_STACK, st, sizeof(*st), frames,
                      (size_t)st->n_frames * sizeof(uint64_t));
}

size_t lp_record_samples(void *buf, size_t cap, uint64_t base_time_ns, uint32_t n_samples,
                         const void *entries, size_t entries_len)
{
    struct prof_rec_samples b = { .base_time_ns = base_time_ns, .n_samples = n_samples };
    return put_record(buf, cap, PROF_REC_SAMPLES, &b, sizeof(b), entries, entries_len);
}

/* Unsigned LEB128: 7 bits a byte, low first, the top bit set on all but the last. */
static size_t put_uleb(unsigned char *out, uint64_t v)
{
    size_t n = 0;
    do {
        unsigned char byte = v & 0x7f;
        v >>= 7;
        out[n++] = byte | (v ? 0x80 : 0);
    } while (v);
    return n;
}

size_t lp_record_samples_entry(unsigned char *out, int64_t time_delta_ns, uint32_t tid,
                               uint32_t stack_id, uint32_t weight)
{
    /* Zigzag: 0, -1, 1, -2, ... as 0, 1, 2, 3, ... so small steps of either sign are short. */
    uint64_t zz = ((uint64_t)time_delta_ns << 1) ^ (uint64_t)(time_delta_ns >> 63);
    size_t n = put_uleb(out, zz);
    n += put_uleb(out + n, tid);
    n += put_uleb(out + n, stack_id);
    n += put_uleb(out + n, weight ? weight - 1 : 0);
    return n;
}

size_t lp_record_stats(void *buf, size_t cap, const uint64_t *counters, uint32_t n_counters)
{
    struct prof_rec_stats st = { .n_counters = n_counters };
    return put_record(buf, cap, PROF_REC_STATS, &st, sizeof(st), counters,
                      (size_t)n_counters * sizeof(uint64_t));
}

size_t lp_record_end(void *buf, size_t cap)
{
    struct prof_rec_hdr h = { 0 };
    return put_record(buf, cap, PROF_REC_END, &h, sizeof(h), NULL, 0);
}
