/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the OpenTelemetry thread context (libprof/otel.c): the key names of a
 * process context payload (protobuf), and a context record's trace and attributes turned
 * into a trace and labels, the key names read from the OTEL_CTX mapping this test
 * publishes; entries cut short or of unknown keys left out. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "libprof/labels.h"
#include "libprof/otel.h"
#include "sampler/handler.h"
#include "sampler/ring.h"

static size_t put_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    do {
        out[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

static size_t put_bytes(uint8_t *out, unsigned field, const void *b, size_t n)
{
    size_t at = put_varint(out, (uint64_t)field << 3 | 2);
    at += put_varint(out + at, n);
    memcpy(out + at, b, n);
    return at + n;
}

/* A ProcessContext: a resource (skipped), an int attribute (skipped), the key map. */
static size_t payload(uint8_t *out)
{
    uint8_t any[64], kv[256], arr[128], vals[128];
    size_t at = put_bytes(out, 1, "\x0a\x00", 2), n, m = 0;
    n = put_bytes(kv, 1, "pid", 3);
    n += put_bytes(kv + n, 2, "\x18\x2a", 2); /* AnyValue{int_value: 42} */
    at += put_bytes(out + at, 2, kv, n);
    static const char *const keys[] = {"http_route", "user_id", ""};
    for (int i = 0; i < 3; i++) {
        size_t a = put_bytes(any, 1, keys[i], strlen(keys[i]));
        m += put_bytes(vals + m, 1, any, a);
    }
    size_t a = put_bytes(arr, 5, vals, m);
    n = put_bytes(kv, 1, "threadlocal.attribute_key_map", 29);
    n += put_bytes(kv + n, 2, arr, a);
    at += put_bytes(out + at, 2, kv, n);
    return at;
}

Test(otel, reads_the_key_names_of_a_process_context)
{
    uint8_t p[512];
    size_t n = payload(p);
    const char *names[LP_OTEL_KEYS_MAX];
    uint32_t len[LP_OTEL_KEYS_MAX];
    cr_assert_eq(lp_otel_parse_keys(p, n, names, len), 3);
    cr_expect(len[0] == 10 && memcmp(names[0], "http_route", 10) == 0);
    cr_expect(len[1] == 7 && memcmp(names[1], "user_id", 7) == 0);
    cr_expect_eq(len[2], 0);
    /* Cut anywhere, the payload is read as far as it is whole, never past its end. */
    for (size_t cut = 0; cut < n; cut++)
        lp_otel_parse_keys(p, cut, names, len);
}

/* Publishes the process context as an SDK does (OTEP 4719): a mapping named OTEL_CTX. */
static void publish(void)
{
    int fd = memfd_create("OTEL_CTX", MFD_CLOEXEC);
    cr_assert(fd >= 0);
    cr_assert_eq(ftruncate(fd, 4096), 0);
    uint8_t *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    close(fd);
    cr_assert_neq(m, MAP_FAILED);
    uint32_t version = 2, size = (uint32_t)payload(m + 64);
    uint64_t at = (uint64_t)(uintptr_t)(m + 64), published = 1;
    memcpy(m, "OTEL_CTX", 8);
    memcpy(m + 8, &version, 4);
    memcpy(m + 12, &size, 4);
    memcpy(m + 24, &at, 8);
    memcpy(m + 16, &published, 8);
}

static void attr(struct smp_sample_ctx *c, uint8_t key, const char *value)
{
    size_t n = strlen(value);
    c->otel_attrs[c->otel_len] = key;
    c->otel_attrs[c->otel_len + 1] = (uint8_t)n;
    memcpy(c->otel_attrs + c->otel_len + 2, value, n);
    c->otel_len = (uint16_t)(c->otel_len + 2 + n);
}

/* The pairs of set id as "k=v,k=v". */
static const char *pairs(uint32_t id)
{
    static char buf[256];
    size_t len;
    uint32_t n = lp_labels_pack(id, buf, sizeof(buf), &len);
    unsigned k = 0;
    for (size_t i = 0; n > 0 && i + 1 < len; i++)
        if (buf[i] == '\0')
            buf[i] = k++ % 2 ? ',' : '=';
    return n ? buf : "";
}

Test(otel, a_records_trace_and_attributes_become_the_samples)
{
    publish();
    lp_labels_set("phase", "p1");
    struct smp_sample_ctx c = {.label_set = smp_self.label_set};
    memset(c.otel.trace_id, 0x42, 16);
    memset(c.otel.span_id, 0x43, 8);
    c.otel.flags = 1;
    c.otel.is_set = 1;
    c.has_otel = 1;
    attr(&c, 1, "u7");
    attr(&c, 0, "/x");
    attr(&c, 9, "unknown key");
    attr(&c, 0, "/y"); /* a key again: the last counts */
    c.otel_attrs[c.otel_len] = 1;
    c.otel_attrs[c.otel_len + 1] = 40; /* an entry cut short: left out */
    c.otel_len = (uint16_t)(c.otel_len + 4);
    struct lp_label_ctx out;
    lp_otel_ctx(&c, &out);
    cr_expect(out.has_trace && out.trace_id[0] == 0x42 && out.span_id[7] == 0x43 &&
              out.trace_flags == 1);
    /* pack's pairs, NULs shown: key=value,key=value */
    cr_expect_str_eq(pairs(out.label_set), "http_route=/y,phase=p1,user_id=u7");
    /* Without a record, the thread's own. */
    struct smp_sample_ctx none = {.label_set = c.label_set};
    lp_otel_ctx(&none, &out);
    cr_expect_eq(out.label_set, c.label_set);
    cr_expect_eq(out.has_trace, 0);
}
