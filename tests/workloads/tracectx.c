/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Trace context for tests/e2e/test_labels.c: a thread that works for three traces in turn.
 * The first two it publishes as an OpenTelemetry SDK would (OTEP 4947): an exported TLS
 * variable otel_thread_ctx_v1 pointing at its context record, and the names of the
 * record's attribute keys in a process context (OTEP 4719: a mapping named OTEL_CTX whose
 * header points to a protobuf ProcessContext with "threadlocal.attribute_key_map"). The
 * third it sets with libprof's own prof_trace_set() and prof_label_set().
 *
 *   otel_checkout  trace 0x11.., span 0x21.., http_route=/checkout
 *   otel_search    trace 0x12.., span 0x22.., http_route=/search, user_id=u42
 *   own_trace      trace 0x13.., span 0x23.., phase=mine (libprof's API)
 *
 * Each runs SECONDS/3 of CPU (argument 1, default 0.6). Built with the variable in the
 * dynamic symbol table (Makefile).
 */
#define _GNU_SOURCE
#include <libprof/prof_weak.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

__attribute__((visibility("default"))) __thread void *otel_thread_ctx_v1;

/* A context record: 28 bytes, then attrs-data. */
struct __attribute__((packed, aligned(2))) otel_record {
    uint8_t trace_id[16];
    uint8_t span_id[8];
    uint8_t valid;
    uint8_t trace_flags;
    uint16_t attrs_size;
    uint8_t attrs[64];
};

static struct otel_record checkout, search;
static volatile uint64_t sink;

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void spin(double s)
{
    double end = cpu_s() + s;
    uint64_t x = sink | 1;
    while (cpu_s() < end)
        for (int i = 0; i < 20000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = x;
}

__attribute__((noinline)) static void otel_checkout(double s) { spin(s); }
__attribute__((noinline)) static void otel_search(double s) { spin(s); }
__attribute__((noinline)) static void own_trace(double s) { spin(s); }

static size_t put_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    do {
        out[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

/* A length-delimited field. */
static size_t put_bytes(uint8_t *out, unsigned field, const void *b, size_t n)
{
    size_t at = put_varint(out, (uint64_t)field << 3 | 2);
    at += put_varint(out + at, n);
    memcpy(out + at, b, n);
    return at + n;
}

/* AnyValue{string_value: s}. */
static size_t any_string(uint8_t *out, const char *s)
{
    return put_bytes(out, 1, s, strlen(s));
}

/* The ProcessContext payload: attributes schema_version and attribute_key_map. */
static size_t payload(uint8_t *out)
{
    uint8_t any[64], kv[256], arr[128], vals[128];
    size_t at = 0, n, m = 0;
    n = put_bytes(kv, 1, "threadlocal.schema_version", 26);
    n += put_bytes(kv + n, 2, any, any_string(any, "tls_v1"));
    at += put_bytes(out + at, 2, kv, n);
    m += put_bytes(vals + m, 1, any, any_string(any, "http_route"));
    m += put_bytes(vals + m, 1, any, any_string(any, "user_id"));
    size_t a = put_bytes(arr, 5, vals, m); /* AnyValue{array_value: ArrayValue{values}} */
    n = put_bytes(kv, 1, "threadlocal.attribute_key_map", 29);
    n += put_bytes(kv + n, 2, arr, a);
    at += put_bytes(out + at, 2, kv, n);
    return at;
}

/* As OTEP 4719 publishes it: a memfd named OTEL_CTX, mapped (it shows in /proc/PID/maps as
 * /memfd:OTEL_CTX), else anonymous memory named so. */
static void publish_process_context(void)
{
    int fd = memfd_create("OTEL_CTX", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    uint8_t *m = MAP_FAILED;
    if (fd >= 0 && ftruncate(fd, 4096) == 0)
        m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (fd >= 0)
        close(fd);
    if (m == MAP_FAILED)
        m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        exit(1);
    uint32_t version = 2, size = (uint32_t)payload(m + 64);
    uint64_t at = (uint64_t)(uintptr_t)(m + 64), published;
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    published = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    memcpy(m, "OTEL_CTX", 8);
    memcpy(m + 8, &version, 4);
    memcpy(m + 12, &size, 4);
    memcpy(m + 24, &at, 8);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    memcpy(m + 16, &published, 8);
    prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, m, 4096, "OTEL_CTX");
}

static void attr(struct otel_record *r, uint8_t key, const char *value)
{
    size_t n = strlen(value);
    r->attrs[r->attrs_size] = key;
    r->attrs[r->attrs_size + 1] = (uint8_t)n;
    memcpy(r->attrs + r->attrs_size + 2, value, n);
    r->attrs_size = (uint16_t)(r->attrs_size + 2 + n);
}

static void fill(struct otel_record *r, uint8_t t, uint8_t s)
{
    memset(r->trace_id, t, sizeof(r->trace_id));
    memset(r->span_id, s, sizeof(r->span_id));
    r->trace_flags = 1;
    r->valid = 1;
}

int main(int argc, char **argv)
{
    double third = (argc > 1 ? atof(argv[1]) : 0.6) / 3;
    publish_process_context();
    fill(&checkout, 0x11, 0x21);
    attr(&checkout, 0, "/checkout");
    fill(&search, 0x12, 0x22);
    attr(&search, 0, "/search");
    attr(&search, 1, "u42");

    otel_thread_ctx_v1 = &checkout;
    otel_checkout(third);
    otel_thread_ctx_v1 = &search;
    otel_search(third);
    otel_thread_ctx_v1 = NULL;

    unsigned char trace[16], span[8];
    memset(trace, 0x13, sizeof(trace));
    memset(span, 0x23, sizeof(span));
    prof_trace_set(trace, span);
    prof_label_set("phase", "mine");
    own_trace(third);
    prof_trace_clear();
    prof_labels_clear();
    return 0;
}
