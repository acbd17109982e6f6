/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A minimal protocol-buffers encoder, enough for pprof's profile.proto: varint fields
 * (wire type 0), length-delimited fields (wire type 2: strings, bytes, embedded messages
 * and packed repeated varints). A message is appended to a growing byte buffer; an embedded
 * message is encoded into its own buffer first and then appended whole, since its length
 * comes before it. A failed allocation sets is_failed and makes every later call a no-op,
 * so a writer checks once at the end. Used by reporter/output/pprof.c; reporter thread only.
 */
#ifndef PROF_REPORTER_OUTPUT_PB_H
#define PROF_REPORTER_OUTPUT_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rep_pb {
    unsigned char *data; /* the encoded bytes; owned */
    size_t n;            /* bytes in use */
    size_t cap;          /* bytes allocated */
    bool is_failed;      /* an allocation failed; data is incomplete */
};

/* Not async-signal-safe. */
/* Makes b an empty buffer. Returns CMN_OK. */
int rep_pb_init(struct rep_pb *b);
/* Frees what b owns. Accepts NULL. */
void rep_pb_fini(struct rep_pb *b);
/* Empties b, keeping its memory. */
void rep_pb_clear(struct rep_pb *b);
/* Appends v as a bare varint (no tag). */
void rep_pb_raw_varint(struct rep_pb *b, uint64_t v);
/* Field `field` as a varint (int64 and uint64 alike; a negative int64 is its two's
 * complement, ten bytes). */
void rep_pb_varint(struct rep_pb *b, uint32_t field, uint64_t v);
/* Field `field` as n bytes at p (a string, bytes, or an encoded message). */
void rep_pb_bytes(struct rep_pb *b, uint32_t field, const void *p, size_t n);
/* Field `field` as a packed repeated varint of n values. */
void rep_pb_packed(struct rep_pb *b, uint32_t field, const uint64_t *v, size_t n);

#endif
