/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Reading a perf_event ring that the kernel fills (data_head) and its reader empties
 * (data_tail), record by record, each copied out of the data area where it wraps: the
 * writer thread's reader of libprof's kernel-time rings (libprof/ksamples.c) and of the
 * wall-clock rings (libprof/wall.c). Bytes that are no record the kernel writes (a size
 * below a header's, or past data_head) end the read there. Not for the signal handler.
 * Header-only, never installed.
 *
 *     struct cmn_pring pr;
 *     struct perf_event_header h;
 *     uint64_t at;
 *     if (cmn_pring_begin(&pr, map, map_bytes, page)) {
 *         while (cmn_pring_next(&pr, &h, &at))
 *             cmn_pring_copy(&pr, at, buf, h.size - sizeof(h));   (the body, if it fits)
 *         cmn_pring_end(&pr);
 *     }
 */
#ifndef PROF_COMMON_PERF_RING_H
#define PROF_COMMON_PERF_RING_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct cmn_pring {
    struct perf_event_mmap_page *meta; /* the ring's first page */
    const unsigned char *data;         /* its data area */
    uint64_t size;                     /* bytes in the data area */
    uint64_t head, tail;               /* what the kernel wrote; what was read of it */
};

/* Starts reading the ring mapped at map (map_bytes: the metadata page of page bytes, then
 * the data area). false when there is nothing to read. */
static inline bool cmn_pring_begin(struct cmn_pring *r, void *map, size_t map_bytes,
                                   size_t page)
{
    r->meta = map;
    r->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
    r->tail = r->meta->data_tail;
    if (r->head == r->tail)
        return false;
    r->size = r->meta->data_size ? r->meta->data_size : map_bytes - page;
    r->data = (const unsigned char *)map + (r->meta->data_offset ? r->meta->data_offset : page);
    return true;
}

/* Copies n bytes at ring position pos out of the data area, across its end. */
static inline void cmn_pring_copy(const struct cmn_pring *r, uint64_t pos, void *dst, size_t n)
{
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
 * sizeof(*h) bytes, for cmn_pring_copy), the record counted as read. false at the end or
 * at bytes that are no record. */
static inline bool cmn_pring_next(struct cmn_pring *r, struct perf_event_header *h,
                                  uint64_t *body)
{
    if (r->tail + sizeof(*h) > r->head)
        return false;
    cmn_pring_copy(r, r->tail, h, sizeof(*h));
    if (h->size < sizeof(*h) || r->tail + h->size > r->head)
        return false;
    *body = r->tail + sizeof(*h);
    r->tail += h->size;
    return true;
}

/* Gives what was read back to the kernel. */
static inline void cmn_pring_end(struct cmn_pring *r)
{
    __atomic_store_n(&r->meta->data_tail, r->tail, __ATOMIC_RELEASE);
}

#endif
