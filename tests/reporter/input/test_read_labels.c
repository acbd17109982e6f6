/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of reading thread labels and traces (reporter/input/read.c): label sets named
 * by stacks and full samples, traces named per entry of a batch, the same read as a stream,
 * the labels a sample has over its process's, and the names a corrupt file gets wrong. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/record.h"
#include "reporter/input/profile.h"
#include "reporter/input/read.h"

static unsigned char file[8192];
static size_t len;

static void put_header(void)
{
    len = cmn_record_file_header(file, sizeof(file));
}

static void put_labels(const char *strs, size_t n_bytes, uint32_t n)
{
    len += cmn_record_labels(file + len, sizeof(file) - len, n, strs, n_bytes);
}

static void put_set(uint32_t id, const char *strs, size_t n_bytes, uint32_t n)
{
    len += cmn_record_label_set(file + len, sizeof(file) - len, id, n, strs, n_bytes);
}

static void put_trace(uint32_t id, uint8_t fill)
{
    uint8_t t[16], s[8];
    memset(t, fill, sizeof(t));
    memset(s, fill + 1, sizeof(s));
    len += cmn_record_trace(file + len, sizeof(file) - len, id, 1, t, s);
}

static void put_stack(uint32_t id, uint64_t frame, uint32_t label_set)
{
    struct prof_rec_stack st = {.id = id, .n_frames = 1};
    len += cmn_record_stack_ctx(file + len, sizeof(file) - len, &st, &frame, 0, label_set);
}

/* A batch of n entries, entry i naming stack ids[i] at base + i, each with its trace
 * (traces NULL: no PROF_REC_SAMPLE_TRACES). */
static void put_batch(const uint32_t *ids, const uint32_t *traces, uint32_t n)
{
    unsigned char e[256], t[64];
    size_t elen = 0, tlen = 0;
    for (uint32_t i = 0; i < n; i++) {
        elen += cmn_record_samples_entry(e + elen, i ? 1 : 0, 9, ids[i], 1);
        if (traces)
            tlen += cmn_record_uleb(t + tlen, traces[i]);
    }
    if (traces)
        len += cmn_record_sample_traces(file + len, sizeof(file) - len, n, t, tlen);
    len += cmn_record_samples(file + len, sizeof(file) - len, 1000, n, e, elen);
}

/* A profile: PROF_LABELS service=api,tenant=all; set 7 {endpoint=/a, tenant=t1}; set 3
 * {endpoint=/b}; two traces; stacks of each set and none; a batch; a full sample. */
static void put_profile(void)
{
    static const char process[] = "service\0api\0tenant\0all";
    static const char set7[] = "endpoint\0/a\0tenant\0t1";
    static const char set3[] = "endpoint\0/b";
    put_header();
    put_labels(process, sizeof(process), 2);
    put_set(7, set7, sizeof(set7), 2);
    put_set(3, set3, sizeof(set3), 1);
    put_trace(1, 0x11);
    put_trace(2, 0x22);
    put_stack(0, 0x1000, 7);
    put_stack(1, 0x1000, 3);
    put_stack(2, 0x1000, 0);
    uint32_t ids[] = {0, 1, 2, 0}, traces[] = {1, 0, 2, 1};
    put_batch(ids, traces, 4);
    struct prof_rec_sample s = {.time_ns = 5000, .tid = 9, .weight = 2, .n_frames = 1};
    struct prof_sample_ctx ctx = {.label_set = 3, .trace = 2};
    uint64_t frame = 0x2000;
    len += cmn_record_sample_ctx(file + len, sizeof(file) - len, &s, &frame, &ctx);
    len += cmn_record_end(file + len, sizeof(file) - len);
}

static void expect_profile(const struct rep_profile *p)
{
    cr_assert_eq(p->n_samples, 5);
    cr_expect_eq(p->n_label_sets, 2);
    cr_expect_eq(p->n_traces, 2);
    const uint32_t sets[] = {7, 3, 0, 7, 3}, traces[] = {1, 0, 2, 1, 2};
    for (size_t i = 0; i < 5; i++) {
        cr_expect_eq(p->samples[i].label_set, sets[i], "sample %zu", i);
        cr_expect_eq(p->samples[i].trace, traces[i], "sample %zu", i);
    }
    /* The thread's labels over the process's. */
    cr_expect_str_eq(rep_profile_label(p, &p->samples[0], "endpoint"), "/a");
    cr_expect_str_eq(rep_profile_label(p, &p->samples[0], "tenant"), "t1");
    cr_expect_str_eq(rep_profile_label(p, &p->samples[1], "tenant"), "all");
    cr_expect_str_eq(rep_profile_label(p, &p->samples[2], "service"), "api");
    cr_expect_null(rep_profile_label(p, &p->samples[2], "endpoint"));
    const struct rep_trace *t = rep_profile_trace(p, &p->samples[2]);
    cr_assert_not_null(t);
    cr_expect(t->trace_id[0] == 0x22 && t->span_id[7] == 0x23 && t->flags == 1);
    cr_expect_null(rep_profile_trace(p, &p->samples[1]));
}

Test(read_labels, samples_name_their_label_sets_and_traces)
{
    put_profile();
    struct rep_profile p;
    struct cmn_err err = {0};
    cr_assert_eq(rep_read_buffer(file, len, "t", &p, &err), CMN_OK, "%s", err.msg);
    expect_profile(&p);
    rep_profile_fini(&p);
}

struct stream {
    struct rep_profile copy; /* the samples of every batch, as a profile of them */
};

static int on_ready(struct rep_profile *p, void *ctx)
{
    (void)p;
    (void)ctx;
    return CMN_OK;
}

static int on_batch(struct rep_profile *p, void *ctx)
{
    struct stream *s = ctx;
    for (size_t i = 0; i < p->n_samples; i++)
        cr_assert_eq(rep_profile_add_sample(&s->copy, &p->samples[i]), CMN_OK);
    return CMN_OK;
}

/* Read as a stream, the definitions come from the first walk, the samples from the
 * second: the same names. */
Test(read_labels, a_stream_reads_the_same_names)
{
    put_profile();
    char path[] = "/tmp/prof-read-labels-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, file, len), (ssize_t)len);
    close(fd);
    struct rep_profile p;
    struct stream s;
    rep_profile_init(&s.copy, "copy");
    struct cmn_err err = {0};
    int rc = rep_read_file_stream(path, &p, on_ready, on_batch, &s, &err);
    unlink(path);
    cr_assert_eq(rc, CMN_OK, "%s", err.msg);
    /* The copy's samples with the stream's definitions. */
    struct rep_sample *samples = s.copy.samples;
    size_t n = s.copy.n_samples;
    p.samples = samples;
    p.n_samples = n;
    expect_profile(&p);
    p.samples = NULL;
    p.n_samples = 0;
    rep_profile_fini(&p);
    rep_profile_fini(&s.copy);
}

/* Reads the file; CMN_E_INPUT expected, with what in the message. */
static void expect_corrupt(const char *what)
{
    struct rep_profile p;
    struct cmn_err err = {0};
    cr_expect_eq(rep_read_buffer(file, len, "t", &p, &err), CMN_E_INPUT, "read a corrupt file");
    cr_expect(strstr(err.msg, what) != NULL, "message: %s", err.msg);
}

Test(read_labels, a_stack_naming_an_undefined_set_is_corrupt)
{
    put_header();
    put_stack(0, 0x1000, 5);
    expect_corrupt("label set not defined");
}

Test(read_labels, a_set_defined_twice_or_with_id_0_is_corrupt)
{
    static const char set[] = "k\0v";
    put_header();
    put_set(4, set, sizeof(set), 1);
    put_set(4, set, sizeof(set), 1);
    expect_corrupt("defined twice");
    put_header();
    put_set(0, set, sizeof(set), 1);
    expect_corrupt("id of 0");
}

Test(read_labels, a_set_whose_strings_run_out_is_corrupt)
{
    static const char set[] = "k\0v";
    put_header();
    put_set(4, set, sizeof(set), 9);
    expect_corrupt("more than the record holds");
    put_header();
    put_set(4, set, 1, 1); /* "k" then zero padding: no value string */
    struct rep_profile p;
    struct cmn_err err = {0};
    /* The padding's NULs make an empty value: read, not corrupt. */
    cr_expect_eq(rep_read_buffer(file, len, "t", &p, &err), CMN_OK, "%s", err.msg);
    rep_profile_fini(&p);
}

Test(read_labels, traces_out_of_sequence_or_undefined_are_corrupt)
{
    put_header();
    put_trace(2, 0x11);
    expect_corrupt("trace ids out of sequence");
    put_header();
    put_trace(1, 0x11);
    put_stack(0, 0x1000, 0);
    uint32_t ids[] = {0}, traces[] = {2};
    put_batch(ids, traces, 1);
    expect_corrupt("a trace not defined");
}

Test(read_labels, traces_for_another_batch_are_corrupt)
{
    put_header();
    put_stack(0, 0x1000, 0);
    uint32_t ids[] = {0, 0}, traces[] = {0, 0};
    unsigned char t[2] = {0, 0};
    len += cmn_record_sample_traces(file + len, sizeof(file) - len, 3, t, 2);
    put_batch(ids, NULL, 2);
    expect_corrupt("another number of samples");
    /* Traces not followed by their batch. */
    put_header();
    put_batch(ids, traces, 0);
    len += cmn_record_sample_traces(file + len, sizeof(file) - len, 1, t, 1);
    len += cmn_record_end(file + len, sizeof(file) - len);
    expect_corrupt("not followed by their samples");
}

/* A file of the version before labels: stacks with a state and a reserved 0, samples
 * without a context. */
Test(read_labels, older_files_have_no_labels)
{
    put_header();
    struct prof_rec_stack st = {.id = 0, .n_frames = 1};
    uint64_t frame = 0x1000;
    len += cmn_record_stack_state(file + len, sizeof(file) - len, &st, &frame, 3);
    uint32_t ids[] = {0};
    put_batch(ids, NULL, 1);
    struct rep_profile p;
    struct cmn_err err = {0};
    cr_assert_eq(rep_read_buffer(file, len, "t", &p, &err), CMN_OK, "%s", err.msg);
    cr_assert_eq(p.n_samples, 1);
    cr_expect_eq(p.samples[0].state, 3);
    cr_expect_eq(p.samples[0].label_set, 0);
    cr_expect_eq(p.samples[0].trace, 0);
    rep_profile_fini(&p);
}
