/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Reading a perf_event ring that the kernel fills (data_head) and its reader empties
 * (data_tail), record by record: the writer thread's reader of libprof's kernel-time rings
 * (libprof/ksamples.c) and of the wall-clock rings (libprof/wall.c), and prof record -p's
 * of its counters' rings (attach/perf_ring.c). A record's body is copied out of the data
 * area where the caller wants it (cmn_pring_copy), or the whole record is had in place,
 * copied only when it wraps around the area's end (cmn_pring_record). Bytes that are no
 * record the kernel writes (a size below a header's, or past data_head; more than the
 * area holds) end the read and are skipped: they are given back with the rest. The
 * records are decoded by common/perf_record.h. Header-only, never installed.
 *
 *     struct cmn_pring pr;
 *     struct perf_event_header h;
 *     uint64_t at;
 *     if (cmn_pring_begin(&pr, map, map_bytes, page)) {
 *         while (cmn_pring_next(&pr, &h, &at))
 *             cmn_pring_copy(&pr, at, buf, h.size - sizeof(h));   (the body, if it fits)
 *         cmn_pring_end(&pr);
 *     }
 *
 * Signal handler's path: not allowed (only the writer thread and prof read the kernel's
 * rings; its checks assert in debug builds).
 */
#ifndef PROF_COMMON_PERF_RING_H
#define PROF_COMMON_PERF_RING_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/check.h"

struct cmn_pring {
    struct perf_event_mmap_page *meta; /* the ring's first page */
    const unsigned char *data;         /* its data area */
    uint64_t size;                     /* bytes in the data area */
    uint64_t head, tail;               /* what the kernel wrote; what was read of it */
};

/* Starts reading the ring whose metadata page is meta and whose data area is the size
 * bytes at data. false when there is nothing to read. */
static inline bool cmn_pring_begin_at(struct cmn_pring *r, struct perf_event_mmap_page *meta,
                                      const unsigned char *data, uint64_t size)
{
    r->meta = meta;
    r->data = data;
    r->size = size;
    r->head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    r->tail = meta->data_tail;
    /* More than the area holds is no ring the kernel writes: skipped. */
    if (PROF_NEVER(r->head - r->tail > size))
        r->tail = r->head;
    return r->head != r->tail;
}

/* Starts reading the ring mapped at map (map_bytes: the metadata page of page bytes, then
 * the data area). false when there is nothing to read. */
static inline bool cmn_pring_begin(struct cmn_pring *r, void *map, size_t map_bytes,
                                   size_t page)
{
    struct perf_event_mmap_page *meta = map;
    uint64_t size = meta->data_size ? meta->data_size : map_bytes - page;
    const unsigned char *data =
        (const unsigned char *)map + (meta->data_offset ? meta->data_offset : page);
    return cmn_pring_begin_at(r, meta, data, size);
}

/* Copies n bytes (at most the area's size) at ring position pos out of the data area,
 * across its end. */
static inline void cmn_pring_copy(const struct cmn_pring *r, uint64_t pos, void *dst, size_t n)
{
    if (PROF_NEVER(n > r->size))
        n = (size_t)r->size;
    size_t at = (size_t)(pos % r->size), first = r->size - at < n ? r->size - at : n;
    memcpy(dst, r->data + at, first);
    memcpy((unsigned char *)dst + first, r->data, n - first);
}

/* The n bytes at ring position pos where they lie in one piece in the data area, else NULL
 * (the record wraps around the data area's end: cmn_pring_copy() it). */
static inline const unsigned char *cmn_pring_at(const struct cmn_pring *r, uint64_t pos, size_t n)
{
    size_t at = (size_t)(pos % r->size);
    return r->size - at >= n ? r->data + at : NULL;
}

/* The next record: its header in *h and its body's position in *body (h->size -
 * sizeof(*h) bytes, for cmn_pring_copy), the record counted as read. false at the end, and
 * at bytes that are no record, which are then skipped. */
static inline bool cmn_pring_next(struct cmn_pring *r, struct perf_event_header *h,
                                  uint64_t *body)
{
    if (r->tail + sizeof(*h) > r->head) {
        r->tail = r->head;
        return false;
    }
    cmn_pring_copy(r, r->tail, h, sizeof(*h));
    if (h->size < sizeof(*h) || r->tail + h->size > r->head) {
        r->tail = r->head;
        return false;
    }
    *body = r->tail + sizeof(*h);
    r->tail += h->size;
    return true;
}

/* The whole record that cmn_pring_next() gave (header h, body at body), contiguous: in
 * place in the data area, or copied into wrap (room for h->size bytes) when it wraps
 * around the area's end. Valid until the caller's next use of wrap, or cmn_pring_end(). */
static inline const unsigned char *cmn_pring_record(const struct cmn_pring *r,
                                                    const struct perf_event_header *h,
                                                    uint64_t body, unsigned char *wrap)
{
    uint64_t pos = body - sizeof(*h);
    size_t at = (size_t)(pos % r->size);
    if (at + h->size <= r->size)
        return r->data + at;
    cmn_pring_copy(r, pos, wrap, h->size);
    return wrap;
}

/* Gives what was read back to the kernel. */
static inline void cmn_pring_end(struct cmn_pring *r)
{
    __atomic_store_n(&r->meta->data_tail, r->tail, __ATOMIC_RELEASE);
}

#endif
