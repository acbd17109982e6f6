/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Kernel-time samples (see ksamples.h). The ring is the kernel's: a metadata page, then
 * data pages that the kernel appends records to (data_head) and this reader consumes
 * (data_tail). A PERF_RECORD_SAMPLE with the sample type sampler/timer_perf.c asks for:
 *
 *   header | pid u32 | tid u32 | time u64 | nr u64 | ips[nr] u64 | size u64 | data[size]
 *   | dyn_size u64 (when size != 0)
 *
 * ips start with the PERF_CONTEXT_USER marker, then the pc the thread returns to, then the
 * return addresses of its frame-pointer chain.
 */
#include "libprof/ksamples.h"

#include <linux/perf_event.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "include/libprof/prof_format.h"
#include "libprof/writer.h"
#include "sampler/codemap.h"
#include "sampler/handler.h"
#include "sampler/probe.h"
#include "sampler/timer_perf.h"

#define LP_KSAMPLE_MAX_BYTES 4096u /* a record this reader takes; larger ones are skipped */

static void count(unsigned idx, uint64_t n)
{
    atomic_fetch_add_explicit(&smp_sampler.counters[idx], n, memory_order_relaxed);
}

/* Copies n bytes at ring position pos (wrapping) out of the data area. */
static void copy_out(const unsigned char *data, uint64_t size, uint64_t pos, void *dst, size_t n)
{
    size_t at = (size_t)(pos % size), first = size - at < n ? size - at : n;
    memcpy(dst, data + at, first);
    memcpy((unsigned char *)dst + first, data, n - first);
}

/* 1 when the chain (frames, leaf first; sp_word, the return address of a leaf without a
 * frame) was taken inside one of libprof's own handlers: a frame of libprof's code on the
 * leaf's side of a return into a signal trampoline (the handler returns there). */
static int is_our_handler(const uint64_t *frames, unsigned n, uint64_t sp_word,
                          const struct lp_ksamples_ends *e)
{
    int in_self = sp_word >= e->self_lo && sp_word < e->self_hi;
    for (unsigned i = 0; i < n; i++) {
        if (frames[i] >= e->self_lo && frames[i] < e->self_hi) {
            in_self = 1;
            continue;
        }
        uint8_t code[ARCH_SIGRETURN_LEN];
        if (in_self && i > 0 && smp_probe_read(code, frames[i], sizeof(code)) == 0 &&
            arch_is_sigreturn(code))
            return 1;
    }
    return 0;
}

/* The user frames of a recorded chain into frames: context markers left out; it ends at a
 * return address into the entry trampolines (complete), at one that is not code (the
 * kernel's frame-pointer walk went through code that keeps none: truncated, as our own
 * stepper would stop), at max_frames, or where the kernel stopped (its limit: depth; else
 * bounds). */
static unsigned chain_frames(const unsigned char *ips, uint64_t nr, unsigned kernel_cap,
                             const struct lp_ksamples_ends *ends, unsigned max_frames,
                             uint64_t *frames, uint8_t *why)
{
    unsigned n = 0, n_user = 0;
    struct smp_codemap_view map;
    smp_codemap_enter(&map);
    *why = PROF_STOP_BOUNDS;
    for (uint64_t i = 0; i < nr; i++) {
        uint64_t ip;
        memcpy(&ip, ips + i * 8, 8);
        if (ip >= (uint64_t)PERF_CONTEXT_MAX)
            continue; /* a context marker */
        n_user++;
        if (ip >= ends->lo && ip < ends->hi) {
            *why = PROF_STOP_END;
            break;
        }
        if (n > 0 && !smp_codemap_view_contains(&map, ip))
            break;
        if (n >= max_frames) {
            *why = PROF_STOP_DEPTH;
            break;
        }
        frames[n++] = ip;
    }
    smp_codemap_leave(&map);
    if (*why == PROF_STOP_BOUNDS && n_user >= kernel_cap)
        *why = PROF_STOP_DEPTH;
    return n;
}

/* A sample record's body (after its header) into one sample of w. */
static void put_record(struct lp_writer *w, const unsigned char *b, size_t len,
                       const struct lp_ksamples_ends *ends, unsigned kernel_cap,
                       unsigned max_frames, uint32_t weight)
{
    uint32_t pid_tid[2];
    uint64_t time_ns, nr;
    if (len < 24)
        return;
    memcpy(pid_tid, b, 8);
    memcpy(&time_ns, b + 8, 8);
    memcpy(&nr, b + 16, 8);
    size_t at = 24;
    if (nr > (len - at) / 8)
        return;
    uint64_t frames[LP_KSAMPLE_MAX_BYTES / 8];
    uint8_t why;
    if (max_frames > sizeof(frames) / sizeof(frames[0]))
        max_frames = sizeof(frames) / sizeof(frames[0]);
    unsigned n = chain_frames(b + at, nr, kernel_cap, ends, max_frames, frames, &why);
    at += nr * 8;
    uint64_t sp_word = 0, size = 0, dyn = 0;
    if (at + 8 <= len)
        memcpy(&size, b + at, 8);
    if (size >= 8 && at + 8 + size + 8 <= len) {
        memcpy(&dyn, b + at + 8 + size, 8);
        if (dyn >= 8)
            memcpy(&sp_word, b + at + 8, 8);
    }
    if (n == 0)
        return;
    if (is_our_handler(frames, n, sp_word, ends)) {
        count(PROF_STAT_KERNEL_SELF, 1);
        return;
    }
    if (sp_word >= ends->lo && sp_word < ends->hi)
        sp_word = 0; /* a leaf called by the trampoline: its caller is never shown */
    struct prof_rec_sample rec = {.time_ns = time_ns,
                                  .tid = pid_tid[1],
                                  .weight = weight,
                                  .n_frames = (uint16_t)n,
                                  .stop_reason = why,
                                  .flags = why == PROF_STOP_END ? 0 : PROF_SAMPLE_TRUNCATED,
                                  .sp_word = sp_word};
    lp_writer_put_sample(w, &rec, frames);
    count(PROF_STAT_SAMPLES, 1);
    count(PROF_STAT_KERNEL_SAMPLES, 1);
    count(PROF_STAT_WEIGHT, weight);
    if (why != PROF_STOP_END) {
        count(PROF_STAT_TRUNCATED, 1);
        count(PROF_STAT_STOP_DEPTH + why - PROF_STOP_DEPTH, 1);
    }
}

size_t lp_ksamples_drain(struct lp_writer *w, struct smp_perf_kring *k,
                         const struct lp_ksamples_ends *ends, unsigned kernel_cap,
                         unsigned max_frames, uint32_t weight)
{
    if (!k->map)
        return 0;
    struct perf_event_mmap_page *meta = k->map;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uint64_t size = meta->data_size ? meta->data_size : k->map_bytes - page;
    const unsigned char *data = (const unsigned char *)k->map +
                                (meta->data_offset ? meta->data_offset : page);
    uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = meta->data_tail;
    size_t moved = 0;
    unsigned char rec[LP_KSAMPLE_MAX_BYTES];
    while (tail + sizeof(struct perf_event_header) <= head) {
        struct perf_event_header h;
        copy_out(data, size, tail, &h, sizeof(h));
        if (h.size < sizeof(h) || tail + h.size > head)
            break;
        size_t body = h.size - sizeof(h);
        if (h.type == PERF_RECORD_SAMPLE && body <= sizeof(rec)) {
            copy_out(data, size, tail + sizeof(h), rec, body);
            put_record(w, rec, body, ends, kernel_cap, max_frames, weight);
            moved++;
        } else if (h.type == PERF_RECORD_LOST && body >= 16) {
            uint64_t lost[2];
            copy_out(data, size, tail + sizeof(h), lost, sizeof(lost));
            count(PROF_STAT_DROPPED, lost[1]);
        }
        tail += h.size;
    }
    __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
    if (moved)
        lp_writer_end_samples(w);
    return moved;
}
