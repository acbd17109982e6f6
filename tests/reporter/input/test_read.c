/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the profile reader (reporter/input/read.c): profiles are built in memory with the
 * library's own encoders (libprof/record.c), then read back whole, cut short, or with one
 * field broken on purpose.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/record.h"
#include "include/libprof/prof_format.h"
#include "reporter/input/profile.h"
#include "reporter/input/read.h"

struct buf {
    unsigned char data[1 << 16];
    size_t n;
};

static void put_header(struct buf *b)
{
    b->n += cmn_record_file_header(b->data + b->n, sizeof(b->data) - b->n);
}

static size_t put_process(struct buf *b, uint32_t hz, const char *exe)
{
    struct prof_rec_process p = {
        .pid = 42,
        .ppid = 1,
        .start_mono_ns = 1000,
        .start_real_ns = 2000,
        .requested_hz = hz,
        .effective_hz = hz,
        .timer_source = PROF_TIMER_ITIMER,
        .unwinder = PROF_UNWIND_FP,
        .max_depth = 128,
    };
    size_t at = b->n;
    b->n += cmn_record_process(b->data + b->n, sizeof(b->data) - b->n, &p, exe);
    return at;
}

static size_t put_map(struct buf *b, uint64_t time_ns, uint64_t start, uint64_t end, uint64_t off,
                      const char *path)
{
    struct prof_rec_map m = {.time_ns = time_ns,
                             .start = start,
                             .end = end,
                             .file_offset = off,
                             .prot = PROF_MAP_READ | PROF_MAP_EXEC,
                             .build_id_len = 3,
                             .build_id = {0xab, 0xcd, 0xef}};
    size_t at = b->n;
    b->n += cmn_record_map(b->data + b->n, sizeof(b->data) - b->n, &m, path);
    return at;
}

static size_t put_thread(struct buf *b, uint64_t time_ns, uint32_t tid, const char *name)
{
    size_t at = b->n;
    b->n += cmn_record_thread(b->data + b->n, sizeof(b->data) - b->n, time_ns, tid, name);
    return at;
}

static size_t put_sample(struct buf *b, uint32_t tid, uint32_t weight, const uint64_t *frames,
                         uint16_t n, uint8_t stop)
{
    struct prof_rec_sample s = {.time_ns = 5000,
                                .tid = tid,
                                .weight = weight,
                                .n_frames = n,
                                .stop_reason = stop,
                                .flags = stop ? PROF_SAMPLE_TRUNCATED : 0};
    size_t at = b->n;
    b->n += cmn_record_sample(b->data + b->n, sizeof(b->data) - b->n, &s, frames);
    return at;
}

static size_t put_stats(struct buf *b, const uint64_t *counters, uint32_t n)
{
    size_t at = b->n;
    b->n += cmn_record_stats(b->data + b->n, sizeof(b->data) - b->n, counters, n);
    return at;
}

static size_t put_end(struct buf *b)
{
    size_t at = b->n;
    b->n += cmn_record_end(b->data + b->n, sizeof(b->data) - b->n);
    return at;
}

/* Overwrites the 32-bit field at byte off of the buffer. */
static void poke_u32(struct buf *b, size_t off, uint32_t v)
{
    memcpy(b->data + off, &v, sizeof(v));
}

static void poke_u16(struct buf *b, size_t off, uint16_t v)
{
    memcpy(b->data + off, &v, sizeof(v));
}

static const uint64_t frames3[] = {0x1010, 0x2020, 0x3030};

/* A profile holding one record of every type. */
static void build_full(struct buf *b)
{
    put_header(b);
    put_process(b, 250, "/usr/bin/app");
    put_map(b, 10, 0x1000, 0x2000, 0x0, "/usr/bin/app");
    put_map(b, 10, 0x7000, 0x8000, 0x3000, "/lib/libc.so.6");
    put_thread(b, 20, 42, "main");
    put_sample(b, 42, 1, frames3, 3, PROF_STOP_END);
    put_sample(b, 43, 2, frames3, 2, PROF_STOP_DEPTH);
    uint64_t counters[PROF_STAT_N] = {[PROF_STAT_SAMPLES] = 2,
                                      [PROF_STAT_DROPPED] = 7,
                                      [PROF_STAT_TRUNCATED] = 1,
                                      [PROF_STAT_STOP_DEPTH] = 1};
    put_stats(b, counters, PROF_STAT_N);
    put_end(b);
}

Test(read, round_trips_every_record_type)
{
    struct buf b = {0};
    build_full(&b);
    struct rep_profile p;
    struct cmn_err err = {0};
    cr_assert_eq(rep_read_buffer(b.data, b.n, "full", &p, &err), CMN_OK, "%s", err.msg);

    cr_assert(p.has_process);
    cr_assert_eq(p.process.pid, 42);
    cr_assert_eq(p.process.ppid, 1);
    cr_assert_eq(p.process.start_mono_ns, 1000);
    cr_assert_eq(p.process.start_real_ns, 2000);
    cr_assert_eq(p.process.requested_hz, 250);
    cr_assert_eq(p.process.effective_hz, 250);
    cr_assert_eq(p.process.max_depth, 128);
    cr_assert_str_eq(p.process.exe, "/usr/bin/app");

    cr_assert_eq(p.n_maps, 2);
    cr_assert_eq(p.maps[0].start, 0x1000);
    cr_assert_eq(p.maps[0].end, 0x2000);
    cr_assert_str_eq(p.maps[0].path, "/usr/bin/app");
    cr_assert_eq(p.maps[1].file_offset, 0x3000);
    cr_assert_eq(p.maps[1].build_id_len, 3);
    cr_assert_eq(p.maps[1].build_id[2], 0xef);
    cr_assert_str_eq(p.maps[1].path, "/lib/libc.so.6");

    cr_assert_eq(p.n_threads, 1);
    cr_assert_str_eq(rep_profile_thread_name(&p, 42), "main");
    cr_assert_null(rep_profile_thread_name(&p, 43));

    cr_assert_eq(p.n_samples, 2);
    cr_assert_eq(p.samples[0].tid, 42);
    cr_assert_eq(p.samples[0].weight, 1);
    cr_assert_eq(p.samples[0].n_frames, 3);
    cr_assert_eq(p.samples[0].time_ns, 5000);
    cr_assert_eq(rep_sample_frame(&p.samples[0], 0), 0x1010);
    cr_assert_eq(rep_sample_frame(&p.samples[0], 2), 0x3030);
    cr_assert_eq(p.samples[1].stop_reason, PROF_STOP_DEPTH);
    cr_assert_eq(p.samples[1].flags, PROF_SAMPLE_TRUNCATED);
    cr_assert_eq(p.samples[1].n_frames, 2);

    cr_assert(p.has_stats);
    cr_assert_eq(p.stats[PROF_STAT_DROPPED], 7);
    cr_assert_eq(p.stats[PROF_STAT_STOP_DEPTH], 1);
    cr_assert(p.has_end);
    cr_assert_not(p.is_torn);
    cr_assert_eq(p.n_unknown_records, 0);
    rep_profile_fini(&p);
}

Test(read, reads_a_file_like_a_buffer)
{
    struct buf b = {0};
    build_full(&b);
    char path[] = "/tmp/test_read_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, b.data, b.n), (ssize_t)b.n);
    close(fd);
    struct rep_profile p;
    struct cmn_err err = {0};
    int rc = rep_read_file(path, &p, &err);
    unlink(path);
    cr_assert_eq(rc, CMN_OK, "%s", err.msg);
    cr_assert_eq(p.n_samples, 2);
    cr_assert_eq(p.n_maps, 2);
    cr_assert(p.has_end);
    cr_assert_str_eq(p.name, path);
    rep_profile_fini(&p);
}

Test(read, keeps_samples_before_a_record_cut_short)
{
    struct buf b = {0};
    put_header(&b);
    put_process(&b, 100, "/bin/x");
    put_sample(&b, 1, 1, frames3, 3, PROF_STOP_END);
    put_sample(&b, 1, 1, frames3, 3, PROF_STOP_END);
    size_t cut = put_sample(&b, 1, 1, frames3, 3, PROF_STOP_END);
    struct rep_profile p;
    struct cmn_err err = {0};
    /* Cut inside the third sample's frames, then inside its header. */
    cr_assert_eq(rep_read_buffer(b.data, cut + 20, "cut", &p, &err), CMN_OK, "%s", err.msg);
    cr_assert_eq(p.n_samples, 2);
    cr_assert(p.is_torn);
    cr_assert_eq(p.torn_offset, cut);
    cr_assert_not(p.has_end);
    rep_profile_fini(&p);
    cr_assert_eq(rep_read_buffer(b.data, cut + 5, "cut", &p, &err), CMN_OK, "%s", err.msg);
    cr_assert_eq(p.n_samples, 2);
    cr_assert(p.is_torn);
    rep_profile_fini(&p);
}

Test(read, takes_a_tail_of_zeros_for_a_cut)
{
    struct buf b = {0};
    put_header(&b);
    put_sample(&b, 1, 1, frames3, 3, PROF_STOP_END);
    b.n += 4096; /* the buffer is zeroed */
    struct rep_profile p;
    struct cmn_err err = {0};
    cr_assert_eq(rep_read_buffer(b.data, b.n, "zeros", &p, &err), CMN_OK, "%s", err.msg);
    cr_assert_eq(p.n_samples, 1);
    cr_assert(p.is_torn);
    rep_profile_fini(&p);
}

Test(read, marks_a_run_without_end_record)
{
    struct buf b = {0};
    put_header(&b);
    put_sample(&b, 1, 1, frames3, 3, PROF_STOP_END);
    struct rep_profile p;
    struct cmn_err err = {0};
    cr_assert_eq(rep_read_buffer(b.data, b.n, "noend", &p, &err), CMN_OK, "%s", err.msg);
    cr_assert_not(p.has_end);
    cr_assert_not(p.is_torn);
    rep_profile_fini(&p);

    /* A header alone is a run killed before its first record. */
    cr_assert_eq(rep_read_buffer(b.data, 16, "bare", &p, &err), CMN_OK, "%s", err.msg);
    cr_assert_eq(p.n_samples, 0);
    cr_assert_not(p.has_end);
    rep_profile_fini(&p);
}

/* Reads b and expects an input error whose message contains want. */
static void expect_error(const struct buf *b, size_t n, const char *want)
{
    struct rep_profile p;
    struct cmn_err err = {0};
    cr_assert_eq(rep_read_buffer(b->data, n, "bad.prof", &p, &err), CMN_E_INPUT);
    cr_assert(strstr(err.msg, want) != NULL, "message '%s' lacks '%s'", err.msg, want);
    cr_assert(strncmp(err.msg, "bad.prof: ", 10) == 0, "message '%s'", err.msg);
    cr_assert_null(strchr(err.msg, '\n'));
    cr_assert_eq(p.n_samples, 0);
    rep_profile_fini(&p);
}

Test(read, rejects_a_size_that_is_not_a_multiple_of_8)
{
    struct buf b = {0};
    put_header(&b);
    size_t at = put_sample(&b, 1, 1, frames3, 3, PROF_STOP_END);
    put_end(&b);
    poke_u32(&b, at + 4, 44);
    expect_error(&b, b.n, "at byte 16");
    expect_error(&b, b.n, "multiple of 8");
}

Test(read, rejects_a_size_of_zero)
{
    struct buf b = {0};
    put_header(&b);
    put_sample(&b, 1, 1, frames3, 3, PROF_STOP_END);
    size_t at = put_sample(&b, 1, 1, frames3, 3, PROF_STOP_END);
    put_end(&b);
    poke_u32(&b, at + 4, 0);
    char want[64];
    snprintf(want, sizeof(want), "at byte %zu", at);
    expect_error(&b, b.n, want);
}

Test(read, rejects_a_size_above_the_maximum)
{
    struct buf b = {0};
    put_header(&b);
    size_t at = put_sample(&b, 1, 1, frames3, 3, PROF_STOP_END);
    put_end(&b);
    poke_u32(&b, at + 4, PROF_REC_MAX_BYTES + 8);
    expect_error(&b, b.n, "PROF_REC_MAX_BYTES");
}

Test(read, rejects_more_frames_than_the_record_holds)
{
    struct buf b = {0};
    put_header(&b);
    size_t at = put_sample(&b, 1, 1, frames3, 3, PROF_STOP_END);
    put_end(&b);
    poke_u16(&b, at + offsetof(struct prof_rec_sample, n_frames), 4);
    expect_error(&b, b.n, "more frames");
}

Test(read, rejects_a_record_smaller_than_its_fixed_fields)
{
    struct buf b = {0};
    put_header(&b);
    size_t at = put_sample(&b, 1, 1, frames3, 0, PROF_STOP_END);
    put_end(&b);
    poke_u32(&b, at + 4, 16);
    expect_error(&b, b.n, "fixed fields");
}

Test(read, rejects_a_string_without_nul)
{
    struct buf b = {0};
    put_header(&b);
    size_t at = put_thread(&b, 1, 7, "abcdefg"); /* 24 fixed + 8 of "abcdefg\0" */
    put_end(&b);
    b.data[at + 24 + 7] = 'h';
    expect_error(&b, b.n, "NUL");
}

Test(read, rejects_more_counters_than_the_record_holds)
{
    struct buf b = {0};
    put_header(&b);
    uint64_t counters[2] = {1, 2};
    size_t at = put_stats(&b, counters, 2);
    put_end(&b);
    poke_u32(&b, at + offsetof(struct prof_rec_stats, n_counters), 3);
    expect_error(&b, b.n, "more counters");
}

Test(read, treats_missing_trailing_counters_as_zero)
{
    struct buf b = {0};
    put_header(&b);
    uint64_t full[PROF_STAT_N];
    for (int i = 0; i < PROF_STAT_N; i++)
        full[i] = 100 + i;
    put_stats(&b, full, PROF_STAT_N);
    uint64_t counters[3] = {1, 2, 3};
    put_stats(&b, counters, 3); /* the last one read wins, whole */
    put_end(&b);
    struct rep_profile p;
    struct cmn_err err = {0};
    cr_assert_eq(rep_read_buffer(b.data, b.n, "stats", &p, &err), CMN_OK, "%s", err.msg);
    cr_assert_eq(p.stats[PROF_STAT_DROPPED], 3);
    cr_assert_eq(p.stats[PROF_STAT_TRUNCATED], 0);
    cr_assert_eq(p.stats[PROF_STAT_CPU_NS], 0);
    rep_profile_fini(&p);
}

Test(read, rejects_bad_magic)
{
    struct buf b = {0};
    put_header(&b);
    put_end(&b);
    b.data[0] = 'X';
    expect_error(&b, b.n, "not a libprof profile (bad magic)");
    const char text[] = "#!/bin/sh\necho hello\n";
    memcpy(b.data, text, sizeof(text));
    expect_error(&b, sizeof(text), "bad magic");
    expect_error(&b, 3, "bad magic");
}

Test(read, rejects_an_empty_file)
{
    struct buf b = {0};
    expect_error(&b, 0, "empty");
}

Test(read, rejects_a_header_cut_short)
{
    struct buf b = {0};
    put_header(&b);
    expect_error(&b, 12, "file header cut short");
    expect_error(&b, 5, "file header cut short"); /* "LIBPR": the magic so far */
}

Test(read, rejects_a_missing_file)
{
    struct rep_profile p;
    struct cmn_err err = {0};
    cr_assert_eq(rep_read_file("/nonexistent/x.prof", &p, &err), CMN_E_INPUT);
    cr_assert_str_eq(err.msg, "/nonexistent/x.prof: No such file or directory");
    rep_profile_fini(&p);
    cr_assert_eq(rep_read_file("/tmp", &p, &err), CMN_E_INPUT);
    cr_assert(strstr(err.msg, "directory") != NULL, "%s", err.msg);
    rep_profile_fini(&p);
}

Test(read, rejects_a_future_version)
{
    struct buf b = {0};
    put_header(&b);
    put_end(&b);
    poke_u32(&b, offsetof(struct prof_file_header, version), PROF_FILE_VERSION + 1);
    expect_error(&b, b.n, "format version 3 is newer than this prof reads (2)");
    poke_u32(&b, offsetof(struct prof_file_header, version), 0);
    expect_error(&b, b.n, "version 0");
}

Test(read, rejects_a_bad_header_size)
{
    struct buf b = {0};
    put_header(&b);
    put_end(&b);
    poke_u32(&b, offsetof(struct prof_file_header, header_bytes), 8);
    expect_error(&b, b.n, "header_bytes 8");
    poke_u32(&b, offsetof(struct prof_file_header, header_bytes), 4096);
    expect_error(&b, b.n, "header_bytes 4096");
}

Test(read, skips_unknown_record_types_and_fields)
{
    struct buf b = {0};
    put_header(&b);
    /* A record type from the future, 24 bytes long. */
    struct prof_rec_hdr h = {.type = 99, .size_bytes = 24};
    memcpy(b.data + b.n, &h, sizeof(h));
    memset(b.data + b.n + 8, 0x5a, 16);
    b.n += 24;
    /* A sample with 8 bytes more than this reader knows of. */
    size_t at = put_sample(&b, 1, 3, frames3, 1, PROF_STOP_END);
    b.n += 8;
    poke_u32(&b, at + 4, (uint32_t)(b.n - at));
    put_end(&b);
    struct rep_profile p;
    struct cmn_err err = {0};
    cr_assert_eq(rep_read_buffer(b.data, b.n, "future", &p, &err), CMN_OK, "%s", err.msg);
    cr_assert_eq(p.n_unknown_records, 1);
    cr_assert_eq(p.n_samples, 1);
    cr_assert_eq(p.samples[0].weight, 3);
    cr_assert(p.has_end);
    rep_profile_fini(&p);
}

Test(read, merges_the_map_set_written_twice)
{
    struct buf b = {0};
    put_header(&b);
    put_map(&b, 10, 0x7000, 0x8000, 0x3000, "/lib/libc.so.6");
    put_map(&b, 10, 0x1000, 0x2000, 0x0, "/usr/bin/app");
    put_map(&b, 99, 0x1000, 0x2000, 0x0, "/usr/bin/app");
    put_map(&b, 99, 0x7000, 0x8000, 0x3000, "/lib/libc.so.6");
    put_map(&b, 99, 0x9000, 0xa000, 0x0, "/lib/late.so"); /* dlopen'ed during the run */
    put_end(&b);
    struct rep_profile p;
    struct cmn_err err = {0};
    cr_assert_eq(rep_read_buffer(b.data, b.n, "maps", &p, &err), CMN_OK, "%s", err.msg);
    cr_assert_eq(p.n_maps, 3);
    cr_assert_eq(p.maps[0].start, 0x1000);
    cr_assert_eq(p.maps[0].time_ns, 10); /* the first sighting */
    cr_assert_eq(p.maps[1].start, 0x7000);
    cr_assert_str_eq(p.maps[2].path, "/lib/late.so");
    rep_profile_fini(&p);
}

Test(read, keeps_the_latest_thread_name)
{
    struct buf b = {0};
    put_header(&b);
    put_thread(&b, 10, 5, "worker");
    put_thread(&b, 10, 3, "main");
    put_thread(&b, 30, 5, "renamed");
    put_thread(&b, 20, 5, "older");
    put_thread(&b, 30, 5, "same-time-later");
    put_end(&b);
    struct rep_profile p;
    struct cmn_err err = {0};
    cr_assert_eq(rep_read_buffer(b.data, b.n, "threads", &p, &err), CMN_OK, "%s", err.msg);
    cr_assert_eq(p.n_threads, 2);
    cr_assert_str_eq(rep_profile_thread_name(&p, 3), "main");
    cr_assert_str_eq(rep_profile_thread_name(&p, 5), "same-time-later");
    rep_profile_fini(&p);
}

Test(read, end_record_counts_only_when_last)
{
    struct buf b = {0};
    put_header(&b);
    put_end(&b);
    put_sample(&b, 1, 1, frames3, 1, PROF_STOP_END);
    struct rep_profile p;
    struct cmn_err err = {0};
    cr_assert_eq(rep_read_buffer(b.data, b.n, "after", &p, &err), CMN_OK, "%s", err.msg);
    cr_assert_not(p.has_end);
    cr_assert_eq(p.n_samples, 1);
    rep_profile_fini(&p);
}

Test(read, handles_an_unaligned_buffer_and_header_size)
{
    /* header_bytes 20: every record, and so every frame array, starts misaligned. */
    struct buf b = {0};
    put_header(&b);
    poke_u32(&b, offsetof(struct prof_file_header, header_bytes), 20);
    b.n = 20;
    put_sample(&b, 1, 1, frames3, 3, PROF_STOP_END);
    put_end(&b);
    struct rep_profile p;
    struct cmn_err err = {0};
    cr_assert_eq(rep_read_buffer(b.data, b.n, "odd", &p, &err), CMN_OK, "%s", err.msg);
    cr_assert_eq(p.n_samples, 1);
    cr_assert_eq(rep_sample_frame(&p.samples[0], 1), 0x2020);
    cr_assert(p.has_end);
    rep_profile_fini(&p);
}

/* What a streamed read saw. */
struct stream_seen {
    int n_ready;             /* ready callbacks */
    size_t samples_at_ready; /* p->n_samples then (must be 0) */
    size_t read_at_ready;    /* p->n_samples_read then */
    size_t n_maps_at_ready;  /* p->n_maps then */
    size_t n_batches;
    size_t n_samples;       /* over every batch */
    size_t max_batch;       /* the largest batch */
    uint32_t next_tid;      /* the tid the next sample must have: file order */
    int is_out_of_order;
    int stop_after;         /* > 0: return CMN_E_NOMEM from that batch on */
};

static int on_ready(struct rep_profile *p, void *ctx)
{
    struct stream_seen *s = ctx;
    s->n_ready++;
    s->samples_at_ready = p->n_samples;
    s->read_at_ready = p->n_samples_read;
    s->n_maps_at_ready = p->n_maps;
    return CMN_OK;
}

static int on_batch(struct rep_profile *p, void *ctx)
{
    struct stream_seen *s = ctx;
    s->n_batches++;
    s->n_samples += p->n_samples;
    if (p->n_samples > s->max_batch)
        s->max_batch = p->n_samples;
    for (size_t i = 0; i < p->n_samples; i++) {
        if (p->samples[i].tid != s->next_tid || rep_sample_frame(&p->samples[i], 2) != 0x3030)
            s->is_out_of_order = 1;
        s->next_tid++;
    }
    return s->stop_after > 0 && (int)s->n_batches >= s->stop_after ? CMN_E_NOMEM : CMN_OK;
}

/* Writes a profile of n samples (tids 0, 1, 2, ...) to a new temporary file; its path in
 * path. With is_cut, the last record is cut short. */
static void write_many(char *path, size_t n, int is_cut)
{
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "wb");
    struct buf b = {.n = 0};
    put_header(&b);
    put_process(&b, 1000, "/bin/many");
    put_map(&b, 0, 0x1000, 0x2000, 0, "/bin/many");
    for (size_t i = 0; i < n; i++) {
        put_sample(&b, (uint32_t)i, 1, frames3, 3, PROF_STOP_END);
        if (b.n > sizeof(b.data) - 256) {
            fwrite(b.data, 1, b.n, f);
            b.n = 0;
        }
    }
    put_end(&b);
    fwrite(b.data, 1, is_cut ? b.n - 4 : b.n, f);
    cr_assert_eq(fclose(f), 0);
}

Test(read, streams_samples_in_bounded_batches_after_the_rest)
{
    char path[] = "/tmp/prof-test-stream-XXXXXX";
    const size_t n = 2 * REP_READ_BATCH + 123;
    write_many(path, n, 0);
    struct rep_profile p;
    struct cmn_err err = {0};
    struct stream_seen s = {0};
    int rc = rep_read_file_stream(path, &p, on_ready, on_batch, &s, &err);
    unlink(path);
    cr_assert_eq(rc, CMN_OK, "%s", err.msg);
    cr_assert_eq(s.n_ready, 1);
    cr_assert_eq(s.samples_at_ready, 0, "samples were kept before ready");
    cr_assert_eq(s.read_at_ready, n);
    cr_assert_eq(s.n_maps_at_ready, 1);
    cr_assert_eq(s.n_samples, n);
    cr_assert_eq(s.n_batches, 3);
    cr_assert_eq(s.max_batch, REP_READ_BATCH);
    cr_assert(!s.is_out_of_order, "samples out of file order or damaged");
    cr_assert(p.has_end && !p.is_torn);
    cr_assert_eq(p.n_stopped[PROF_STOP_END], n);
    rep_profile_fini(&p);
}

Test(read, stream_keeps_what_came_before_a_cut_and_stops_on_a_callback_error)
{
    char path[] = "/tmp/prof-test-stream-XXXXXX";
    write_many(path, 1000, 1);
    struct rep_profile p;
    struct cmn_err err = {0};
    struct stream_seen s = {0};
    cr_assert_eq(rep_read_file_stream(path, &p, on_ready, on_batch, &s, &err), CMN_OK);
    cr_assert(p.is_torn, "a file cut short is not marked torn");
    cr_assert_eq(s.n_samples, 1000);
    rep_profile_fini(&p);

    unlink(path);
    char path2[] = "/tmp/prof-test-stream-XXXXXX";
    write_many(path2, REP_READ_BATCH * 3, 0);
    struct stream_seen stop = {.stop_after = 1};
    cr_assert_eq(rep_read_file_stream(path2, &p, on_ready, on_batch, &stop, &err), CMN_E_NOMEM);
    cr_assert_eq(stop.n_batches, 1);
    rep_profile_fini(&p);
    unlink(path2);
}

Test(read, stream_reports_a_missing_file_like_a_whole_read)
{
    struct rep_profile p;
    struct cmn_err err = {0};
    struct stream_seen s = {0};
    cr_assert_eq(rep_read_file_stream("/nonexistent/x.prof", &p, on_ready, on_batch, &s, &err),
                 CMN_E_INPUT);
    cr_assert(strstr(err.msg, "No such file") != NULL, "%s", err.msg);
    cr_assert_eq(s.n_ready, 0);
    rep_profile_fini(&p);
}

/* Wall profiles: the mode in PROCESS, the state of a full sample, the state after a
 * STACK's frames (and none after a plain one), and the labels. */
Test(read, reads_wall_states_mode_and_labels)
{
    struct buf b = {0};
    put_header(&b);
    size_t at = put_process(&b, 100, "/usr/bin/app");
    poke_u16(&b, at + offsetof(struct prof_rec_process, mode), PROF_MODE_WALL);
    static const char strs[] = "service\0api\0version\0" "1.2";
    b.n += cmn_record_labels(b.data + b.n, sizeof(b.data) - b.n, 2, strs, sizeof(strs));
    uint32_t futex = PROF_STATE_MAKE(PROF_STATE_SLEEPING, 202);
    struct prof_rec_sample s = {.time_ns = 7, .tid = 9, .weight = 2, .n_frames = 2,
                                .state = PROF_STATE_RUNNABLE};
    b.n += cmn_record_sample(b.data + b.n, sizeof(b.data) - b.n, &s, frames3);
    struct prof_rec_stack st = {.id = 0, .n_frames = 3};
    b.n += cmn_record_stack_state(b.data + b.n, sizeof(b.data) - b.n, &st, frames3, futex);
    st.id = 1;
    b.n += cmn_record_stack_state(b.data + b.n, sizeof(b.data) - b.n, &st, frames3, 0);
    unsigned char entries[2 * CMN_RECORD_ENTRY_MAX];
    size_t n = cmn_record_samples_entry(entries, 0, 9, 0, 40);
    n += cmn_record_samples_entry(entries + n, 5, 9, 1, 1);
    b.n += cmn_record_samples(b.data + b.n, sizeof(b.data) - b.n, 100, 2, entries, n);
    put_end(&b);

    struct rep_profile p;
    struct cmn_err err = {0};
    cr_assert_eq(rep_read_buffer(b.data, b.n, "wall", &p, &err), CMN_OK, "%s", err.msg);
    cr_assert_eq(p.process.mode, PROF_MODE_WALL);
    cr_assert_eq(p.n_labels, 2);
    cr_assert_str_eq(p.labels[0].key, "service");
    cr_assert_str_eq(p.labels[0].value, "api");
    cr_assert_str_eq(p.labels[1].key, "version");
    cr_assert_str_eq(p.labels[1].value, "1.2");
    cr_assert_eq(p.n_samples, 3);
    cr_assert_eq(p.samples[0].state, PROF_STATE_RUNNABLE);
    cr_assert_eq(p.samples[1].state, futex);
    cr_assert_eq(PROF_STATE_KIND(p.samples[1].state), PROF_STATE_SLEEPING);
    cr_assert_eq(PROF_STATE_CALL(p.samples[1].state), 202);
    cr_assert_eq(p.samples[1].weight, 40);
    cr_assert_eq(p.samples[1].n_frames, 3);
    cr_assert_eq(p.samples[2].state, 0);
    cr_assert_eq(PROF_STATE_CALL(p.samples[2].state), -1);
    cr_assert_str_eq(rep_state_name(PROF_STATE_KIND(futex)), "sleeping");
    rep_profile_fini(&p);
}

Test(read, rejects_a_label_without_nul)
{
    struct buf b = {0};
    put_header(&b);
    size_t at = b.n;
    static const char strs[] = "key\0value";
    b.n += cmn_record_labels(b.data + b.n, sizeof(b.data) - b.n, 1, strs, sizeof(strs));
    /* Two labels claimed, one there: the second key runs into the padding and the end. */
    poke_u32(&b, at + offsetof(struct prof_rec_labels, n_labels), 2);
    memset(b.data + at + sizeof(struct prof_rec_labels) + sizeof(strs) - 1, 'x',
           b.n - at - sizeof(struct prof_rec_labels) - sizeof(strs) + 1);
    expect_error(&b, b.n, "label");
}
