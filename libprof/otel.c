/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The OpenTelemetry thread context (see otel.h). The key names are read from the process
 * context when a record names a key index not known yet (keys are only ever appended),
 * at most once every LP_OTEL_REREAD_NS: /proc/self/maps for the OTEL_CTX mapping, its
 * header, its payload. Every read of the program's memory goes through process_vm_readv(),
 * so a payload pointer that lies is an error, not a fault.
 */
#include "libprof/otel.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "libprof/labels.h"
#include "sampler/handler.h"
#include "sampler/ring.h"

#define LP_OTEL_REREAD_NS 100000000ull /* key names read again at most this often */
#define LP_OTEL_PAYLOAD_MAX (1u << 20) /* a larger process context is not read */
#define LP_OTEL_HEADER_BYTES 32u

/* The key names, as last read; the writer buffer's owner. */
static struct {
    uint8_t *payload;           /* a copy of the process context's payload, owned */
    const char *names[LP_OTEL_KEYS_MAX];
    uint32_t len[LP_OTEL_KEYS_MAX];
    unsigned n;                 /* names known */
    uint64_t read_ns;           /* when they were read, 0 never */
} keys;

int lp_otel_init(void)
{
    smp_sampler.otel_tls_off = 0;
    void *at = dlsym(RTLD_DEFAULT, "otel_thread_ctx_v1");
    if (at == NULL)
        return 0;
    /* Found now, as the program starts, the variable is in static TLS: at the same offset
     * from every thread's pointer. */
    smp_sampler.otel_tls_off = (intptr_t)((uintptr_t)at - (uintptr_t)__builtin_thread_pointer());
    return smp_sampler.otel_tls_off != 0;
}

/* n bytes of this process's memory at addr; 0, or -1 where it cannot be read. */
static int read_self(void *dst, uint64_t addr, size_t n)
{
    struct iovec local = {dst, n}, remote = {(void *)(uintptr_t)addr, n};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* One varint from [*at, end); 0 past the end. */
static uint64_t varint(const uint8_t **at, const uint8_t *end, int *ok)
{
    uint64_t v = 0;
    for (unsigned shift = 0; *at < end && shift < 64; shift += 7) {
        uint8_t b = *(*at)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    *ok = 0;
    return 0;
}

/* The next field of a message in [*at, end): its number, and for a length-delimited one
 * its bytes; other wire types are skipped (*body NULL). 0 at the end or on bad bytes. */
static uint32_t field(const uint8_t **at, const uint8_t *end, const uint8_t **body, uint64_t *len)
{
    int ok = 1;
    *body = NULL;
    while (*at < end) {
        uint64_t tag = varint(at, end, &ok);
        unsigned type = (unsigned)(tag & 7);
        if (!ok)
            return 0;
        if (type == 2) {
            uint64_t n = varint(at, end, &ok);
            if (!ok || n > (uint64_t)(end - *at))
                return 0;
            *body = *at;
            *len = n;
            *at += n;
            return (uint32_t)(tag >> 3);
        }
        if (type == 0)
            varint(at, end, &ok);
        else if (type == 1 && end - *at >= 8)
            *at += 8;
        else if (type == 5 && end - *at >= 4)
            *at += 4;
        else
            return 0;
        if (!ok)
            return 0;
        return (uint32_t)(tag >> 3);
    }
    return 0;
}

/* The strings of an AnyValue holding an ArrayValue of string values. */
static unsigned array_strings(const uint8_t *any, uint64_t n, const char **names, uint32_t *len)
{
    const uint8_t *at = any, *end = any + n, *body, *arr = NULL;
    uint64_t blen, alen = 0;
    uint32_t f;
    while ((f = field(&at, end, &body, &blen)) != 0)
        if (f == 5 && body) {
            arr = body;
            alen = blen;
        }
    unsigned count = 0;
    const uint8_t *a = arr, *aend = arr ? arr + alen : NULL;
    while (a && count < LP_OTEL_KEYS_MAX && (f = field(&a, aend, &body, &blen)) != 0) {
        if (f != 1 || !body)
            continue;
        /* One AnyValue: its string_value (field 1), or an empty name. */
        const uint8_t *v = body, *vend = body + blen, *s;
        uint64_t slen;
        names[count] = "";
        len[count] = 0;
        uint32_t g;
        while ((g = field(&v, vend, &s, &slen)) != 0)
            if (g == 1 && s) {
                names[count] = (const char *)s;
                len[count] = (uint32_t)slen;
            }
        count++;
    }
    return count;
}

unsigned lp_otel_parse_keys(const uint8_t *payload, uint64_t n, const char **names, uint32_t *len)
{
    static const char want[] = "threadlocal.attribute_key_map";
    const uint8_t *at = payload, *end = payload + n, *body;
    uint64_t blen;
    uint32_t f;
    while ((f = field(&at, end, &body, &blen)) != 0) {
        if (f != 2 || !body)
            continue;
        /* One KeyValue: key (1), value (2). */
        const uint8_t *kv = body, *kvend = body + blen, *b, *key = NULL, *value = NULL;
        uint64_t l, key_len = 0, value_len = 0;
        uint32_t g;
        while ((g = field(&kv, kvend, &b, &l)) != 0) {
            if (g == 1 && b) {
                key = b;
                key_len = l;
            } else if (g == 2 && b) {
                value = b;
                value_len = l;
            }
        }
        if (key && value && key_len == sizeof(want) - 1 && memcmp(key, want, key_len) == 0)
            return array_strings(value, value_len, names, len);
    }
    return 0;
}

/* The address of the OTEL_CTX mapping's header, from /proc/self/maps; 0 none. */
static uint64_t find_header(void)
{
    FILE *f = fopen("/proc/self/maps", "re");
    char line[512];
    uint64_t at = 0;
    while (f && at == 0 && fgets(line, sizeof(line), f)) {
        unsigned long long lo;
        if (strstr(line, "OTEL_CTX") != NULL && sscanf(line, "%llx-", &lo) == 1)
            at = lo;
    }
    if (f)
        fclose(f);
    return at;
}

/* Reads the key names again from the process context. */
static void read_keys(void)
{
    uint64_t now = cmn_clock_ns(CLOCK_MONOTONIC);
    if (keys.read_ns != 0 && now - keys.read_ns < LP_OTEL_REREAD_NS)
        return;
    keys.read_ns = now;
    uint64_t at = find_header();
    uint8_t h[LP_OTEL_HEADER_BYTES];
    if (at == 0 || read_self(h, at, sizeof(h)) != 0 || memcmp(h, "OTEL_CTX", 8) != 0)
        return;
    uint32_t size;
    uint64_t published, payload;
    memcpy(&size, h + 12, 4);
    memcpy(&published, h + 16, 8);
    memcpy(&payload, h + 24, 8);
    if (published == 0 || size == 0 || size > LP_OTEL_PAYLOAD_MAX)
        return; /* being updated, or none */
    uint8_t *copy = malloc(size);
    if (copy == NULL || read_self(copy, payload, size) != 0) {
        free(copy);
        return;
    }
    free(keys.payload);
    keys.payload = copy;
    keys.n = lp_otel_parse_keys(copy, size, keys.names, keys.len);
}

/* The record's attributes merged into set `base`: each entry names its key by index
 * (entries of unknown indexes are left out, once the names were read again). */
static uint32_t merge_attrs(uint32_t base, const uint8_t *a, unsigned n)
{
    const char *k[LP_LABELS_MAX_PAIRS], *v[LP_LABELS_MAX_PAIRS];
    size_t kl[LP_LABELS_MAX_PAIRS], vl[LP_LABELS_MAX_PAIRS];
    size_t m = 0;
    for (unsigned at = 0; at + 2 <= n && m < LP_LABELS_MAX_PAIRS;) {
        unsigned idx = a[at], len = a[at + 1];
        if (at + 2 + len > n)
            break; /* an entry cut short: the rest is not read */
        if (idx >= keys.n)
            read_keys();
        if (idx < keys.n && keys.len[idx] > 0) {
            /* The same key twice: the last one counts. */
            size_t j = 0;
            while (j < m && !(kl[j] == keys.len[idx] && memcmp(k[j], keys.names[idx], kl[j]) == 0))
                j++;
            k[j] = keys.names[idx];
            kl[j] = keys.len[idx];
            v[j] = (const char *)a + at + 2;
            vl[j] = len;
            if (j == m)
                m++;
        }
        at += 2 + len;
    }
    return m ? lp_labels_merge(base, k, kl, v, vl, m) : base;
}

void lp_otel_ctx(const struct smp_sample_ctx *c, struct lp_label_ctx *out)
{
    memset(out, 0, sizeof(*out));
    out->label_set = c->label_set;
    const struct smp_trace *t = c->has_otel ? &c->otel : c->trace.is_set ? &c->trace : NULL;
    static const uint8_t zero[16];
    if (t != NULL && memcmp(t->trace_id, zero, sizeof(zero)) != 0) {
        out->has_trace = 1;
        out->trace_flags = t->flags;
        memcpy(out->trace_id, t->trace_id, sizeof(out->trace_id));
        memcpy(out->span_id, t->span_id, sizeof(out->span_id));
    }
    if (c->has_otel && c->otel_len > 0)
        out->label_set = merge_attrs(c->label_set, c->otel_attrs,
                                     c->otel_len < SMP_OTEL_ATTRS_MAX ? c->otel_len
                                                                      : SMP_OTEL_ATTRS_MAX);
}
