/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Protocol-buffers encoding: a tag is (field << 3) | wire type as a varint; a varint is
 * 7 bits a byte, least significant first, the high bit set on every byte but the last.
 * Reporter thread only.
 */
#include "reporter/output/pb.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"

#define PB_WIRE_VARINT 0u
#define PB_WIRE_LEN 2u

int rep_pb_init(struct rep_pb *b)
{
    memset(b, 0, sizeof(*b));
    return CMN_OK;
}

void rep_pb_fini(struct rep_pb *b)
{
    if (b == NULL)
        return;
    free(b->data);
    memset(b, 0, sizeof(*b));
}

void rep_pb_clear(struct rep_pb *b)
{
    b->n = 0;
}

static bool reserve(struct rep_pb *b, size_t more)
{
    if (b->is_failed)
        return false;
    if (!CMN_GROW(b->data, b->cap, b->n + more, 256))
        b->is_failed = true;
    return !b->is_failed;
}

void rep_pb_raw_varint(struct rep_pb *b, uint64_t v)
{
    if (!reserve(b, 10))
        return;
    while (v >= 0x80) {
        b->data[b->n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    b->data[b->n++] = (unsigned char)v;
}

void rep_pb_varint(struct rep_pb *b, uint32_t field, uint64_t v)
{
    rep_pb_raw_varint(b, (uint64_t)field << 3 | PB_WIRE_VARINT);
    rep_pb_raw_varint(b, v);
}

void rep_pb_bytes(struct rep_pb *b, uint32_t field, const void *p, size_t n)
{
    rep_pb_raw_varint(b, (uint64_t)field << 3 | PB_WIRE_LEN);
    rep_pb_raw_varint(b, n);
    if (n > 0 && reserve(b, n)) {
        memcpy(b->data + b->n, p, n);
        b->n += n;
    }
}

/* Bytes of v as a varint. */
static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

void rep_pb_packed(struct rep_pb *b, uint32_t field, const uint64_t *v, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += varint_len(v[i]);
    rep_pb_raw_varint(b, (uint64_t)field << 3 | PB_WIRE_LEN);
    rep_pb_raw_varint(b, len);
    for (size_t i = 0; i < n; i++)
        rep_pb_raw_varint(b, v[i]);
}
