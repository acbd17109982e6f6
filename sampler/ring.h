/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A bounded multi-producer, single-consumer ring of fixed-size sample slots. Producers are
 * signal handlers on any thread: they reserve a slot with one compare-and-swap, fill it in
 * place (the stack walk writes straight into it) and publish it. The consumer is the writer
 * thread: it takes published slots in order and releases them for reuse. A full ring makes
 * smp_ring_reserve() fail at once, so a handler never waits; the caller counts the drop.
 *
 * Each slot carries a sequence number (the classic bounded-queue scheme): seq == pos means
 * free for the producer reserving position pos, seq == pos + 1 means published for the
 * consumer at pos, and releasing sets seq = pos + n_slots for the next lap. A slot stores
 * seq minus its own index, so that zeroed memory is an empty ring: init touches no slot,
 * and a short-lived process never faults in the pages it does not use.
 *
 *   mem: | slot 0 | slot 1 | ... | slot n-1 |     n a power of two
 *   slot: | seq | pos | deferred | ctx | prof_rec_sample | frames[max_frames] |
 *
 * The memory is the caller's (mapped by libprof/ before any signal can arrive, never
 * unmapped while a handler may run); the ring only lays slots out in it.
 */
#ifndef PROF_SAMPLER_RING_H
#define PROF_SAMPLER_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "include/libprof/prof_format.h"

#define SMP_RING_MIN_SLOTS 2u
#define SMP_OTEL_ATTRS_MAX 120u /* bytes of an OpenTelemetry context record's attributes a
                                 * sample keeps */

/* A trace and span id pair (W3C trace context), as the program set it. */
struct smp_trace {
    uint8_t trace_id[16];
    uint8_t span_id[8];
    uint8_t flags;  /* the W3C trace-flags byte, 0 unknown */
    uint8_t is_set; /* 0: no trace */
    uint8_t pad[6];
};

/* What the thread said it was doing when the sample was taken (libprof/labels.h). */
struct smp_sample_ctx {
    uint32_t label_set;     /* the thread's label set id, 0 none */
    uint16_t otel_len;      /* bytes of otel_attrs */
    uint8_t has_otel;       /* the thread's OpenTelemetry context record was valid: its ids
                             * are otel, its attributes otel_attrs */
    uint8_t pad;
    struct smp_trace trace; /* the thread's trace (prof_trace_set()) */
    struct smp_trace otel;  /* the OpenTelemetry record's trace and span */
    uint8_t otel_attrs[SMP_OTEL_ATTRS_MAX]; /* its attrs-data, as the record holds it */
};

struct smp_slot {
    _Atomic uint64_t seq;       /* sequence minus slot index (file comment); all sides */
    uint64_t pos;               /* ring position this slot was reserved at; its producer */
    uint32_t deferred;          /* a stack kept for a later walk (sampler/defer.h), 0 none;
                                 * set by its producer, freed by the consumer */
    struct smp_sample_ctx ctx;  /* the thread's labels and trace; filled by the producer */
    struct prof_rec_sample rec; /* sample header; filled by the producer */
    uint64_t frames[];          /* rec.n_frames used, the ring's max_frames available */
};

struct smp_ring {
    _Atomic uint64_t head;   /* next position to reserve; producers, by CAS */
    char pad_head[56];       /* keeps head alone on its cache line */
    uint64_t tail;           /* next position to consume; the consumer only */
    uint64_t mask;           /* n_slots - 1; set by init, read-only after */
    size_t slot_bytes;       /* bytes per slot; set by init, read-only after */
    unsigned max_frames;     /* frames a slot holds; set by init, read-only after */
    unsigned char *slots;    /* the caller's memory; set by init, read-only after */
};

/* Async-signal-safe, re-entrant: any thread, any signal handler. */
/* A free slot with *pos set, or NULL when the ring is full. */
struct smp_slot *smp_ring_reserve(struct smp_ring *r);
/* Makes a reserved slot visible to the consumer. */
void smp_ring_publish(struct smp_ring *r, struct smp_slot *s);

/* Async-signal-safe but not re-entrant: the single consumer only. */
/* The oldest published slot, or NULL when the ring is empty or that slot is still being
 * filled. The slot stays valid until smp_ring_release(). */
struct smp_slot *smp_ring_peek(struct smp_ring *r);
void smp_ring_release(struct smp_ring *r, struct smp_slot *s);
/* Slots reserved and not yet consumed (published or not). */
uint64_t smp_ring_used(const struct smp_ring *r);

/* Not async-signal-safe with respect to the ring: call before any producer can run. */
/* Bytes one slot takes for max_frames frames. */
size_t smp_ring_slot_bytes(unsigned max_frames);
/* Lays out the largest power-of-two number of slots that fits in size_bytes of mem, which
 * must be 8-aligned and zeroed (fresh anonymous memory is). 0, or -EINVAL when fewer than
 * SMP_RING_MIN_SLOTS fit. */
int smp_ring_init(struct smp_ring *r, void *mem, size_t size_bytes, unsigned max_frames);
/* Number of slots, after init. */
uint64_t smp_ring_capacity(const struct smp_ring *r);

#endif
