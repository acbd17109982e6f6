/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the reporter's input side: arbitrary bytes go to the profile
 * reader from memory, and whatever it accepts goes on through symbolization (offline, so
 * that paths inside the input open no file), aggregation and both outputs, written to
 * /dev/null. AddressSanitizer and UBSan turn any out-of-bounds read, overflow or leak into
 * a crash. Built and run by scripts/fuzz.sh; single-threaded.
 *
 * With PROF_FUZZ_SEEDS=DIR in the environment the binary writes a few valid profiles,
 * made with the library's own encoders, into DIR and exits: the script's seed corpus.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/record.h"
#include "include/libprof/prof_format.h"
#include "reporter/input/profile.h"
#include "reporter/input/read.h"
#include "reporter/output/folded.h"
#include "reporter/output/html.h"
#include "reporter/output/top.h"
#include "reporter/stacks/flame.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/symbols/names.h"
#include "reporter/symbols/symbols.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *sink;

struct seed {
    unsigned char data[8192];
    size_t n;
};

static void seed_common(struct seed *s, uint64_t base)
{
    s->n = cmn_record_file_header(s->data, sizeof(s->data));
    struct prof_rec_process proc = {.pid = 100, .requested_hz = 250, .effective_hz = 250};
    s->n += cmn_record_process(s->data + s->n, sizeof(s->data) - s->n, &proc, "/bin/app");
    struct prof_rec_map m = {.start = base,
                             .end = base + 0x10000,
                             .file_offset = 0x1000,
                             .build_id_len = 4,
                             .build_id = {1, 2, 3, 4}};
    s->n += cmn_record_map(s->data + s->n, sizeof(s->data) - s->n, &m, "/bin/app");
    m.start = base + 0x100000;
    m.end = m.start + 0x2000;
    s->n += cmn_record_map(s->data + s->n, sizeof(s->data) - s->n, &m, "[vdso]");
    s->n += cmn_record_thread(s->data + s->n, sizeof(s->data) - s->n, 5, 100, "main");
    for (uint16_t i = 0; i < 8; i++) {
        uint64_t frames[4] = {base + 0x10 * i, base + 0x205, base + 0x305, base + 0x100010};
        struct prof_rec_sample smp = {.time_ns = i,
                                      .tid = 100,
                                      .weight = 1,
                                      .n_frames = i % 5,
                                      .stop_reason = (uint8_t)(i % PROF_STOP_N)};
        s->n += cmn_record_sample(s->data + s->n, sizeof(s->data) - s->n, &smp, frames);
    }
}

static void write_seed(const char *dir, const char *name, const struct seed *s, size_t n)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(s->data, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "fuzz_read: cannot write %s\n", path);
        exit(1);
    }
}

static void write_seeds(const char *dir)
{
    static struct seed s;
    seed_common(&s, 0x400000);
    uint64_t counters[PROF_STAT_N] = {[PROF_STAT_SAMPLES] = 8, [PROF_STAT_TRUNCATED] = 6};
    s.n += cmn_record_stats(s.data + s.n, sizeof(s.data) - s.n, counters, PROF_STAT_N);
    s.n += cmn_record_end(s.data + s.n, sizeof(s.data) - s.n);
    write_seed(dir, "clean.prof", &s, s.n);
    write_seed(dir, "cut.prof", &s, s.n - 13);

    /* Thread labels and traces: sets named by stacks and by a full sample, traces by the
     * entries of a batch. */
    seed_common(&s, 0x400000);
    static const char labels[] = "service\0api";
    static const char set5[] = "endpoint\0/a\0tenant\0t1";
    s.n += cmn_record_labels(s.data + s.n, sizeof(s.data) - s.n, 1, labels, sizeof(labels));
    s.n += cmn_record_label_set(s.data + s.n, sizeof(s.data) - s.n, 5, 2, set5, sizeof(set5));
    uint8_t trace[16] = {1, 2, 3}, span[8] = {4};
    s.n += cmn_record_trace(s.data + s.n, sizeof(s.data) - s.n, 1, 1, trace, span);
    uint64_t frame = 0x400010;
    struct prof_rec_stack st = {.id = 0, .n_frames = 1};
    s.n += cmn_record_stack_ctx(s.data + s.n, sizeof(s.data) - s.n, &st, &frame, 0, 5);
    st.id = 1;
    s.n += cmn_record_stack_ctx(s.data + s.n, sizeof(s.data) - s.n, &st, &frame, 3, 0);
    unsigned char entries[64], traces[8];
    size_t elen = 0, tlen = 0;
    for (unsigned i = 0; i < 4; i++) {
        elen += cmn_record_samples_entry(entries + elen, 1000, 100, i % 2, 1 + i);
        tlen += cmn_record_uleb(traces + tlen, i % 2);
    }
    s.n += cmn_record_sample_traces(s.data + s.n, sizeof(s.data) - s.n, 4, traces, tlen);
    s.n += cmn_record_samples(s.data + s.n, sizeof(s.data) - s.n, 5000, 4, entries, elen);
    struct prof_rec_sample smp = {.time_ns = 9000, .tid = 100, .weight = 1, .n_frames = 1};
    struct prof_sample_ctx ctx = {.label_set = 5, .trace = 1};
    s.n += cmn_record_sample_ctx(s.data + s.n, sizeof(s.data) - s.n, &smp, &frame, &ctx);
    s.n += cmn_record_end(s.data + s.n, sizeof(s.data) - s.n);
    write_seed(dir, "labels.prof", &s, s.n);

    seed_common(&s, 0x7f0000000000);
    struct prof_rec_hdr future = {.type = 77, .size_bytes = 16};
    memcpy(s.data + s.n, &future, sizeof(future));
    memset(s.data + s.n + 8, 0xee, 8);
    s.n += 16;
    write_seed(dir, "unknown_record.prof", &s, s.n);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = getenv("PROF_FUZZ_SEEDS");
    if (dir != NULL) {
        write_seeds(dir);
        exit(0);
    }
    sink = fopen("/dev/null", "w");
    if (sink == NULL)
        abort();
    return 0;
}

/* Symbolizes, aggregates and prints an accepted profile, as `prof report` would. */
static void report(const struct rep_profile *p)
{
    struct rep_names names;
    struct rep_sym sym;
    struct rep_agg agg;
    rep_names_init(&names);
    rep_sym_init(&sym, &names);
    rep_agg_init(&agg);
    sym.is_offline = true;
    /* Each sample's labels, a root frame per value, its place in time: the paths of
     * pprof, --by-label and the HTML page. */
    static const char *const by[] = {"endpoint", "service"};
    agg.is_label_sets = true;
    agg.is_timeline = true;
    agg.by_labels = by;
    agg.n_by_labels = 2;
    if (rep_sym_use_profile(&sym, p) == CMN_OK && rep_agg_add_profile(&agg, &sym, p) == CMN_OK) {
        struct rep_top_opts opts = {.limit = 5};
        struct rep_flame_opts flame = {0};
        rep_out_folded(sink, &agg, &names);
        rep_out_top(sink, &agg, &names, &opts);
        rep_out_html(sink, &agg, &names, &flame, "endpoint");
    }
    for (size_t i = 0; i < p->n_samples; i++)
        (void)rep_profile_trace(p, &p->samples[i]);
    for (size_t i = 0; i < p->n_threads; i++)
        (void)rep_profile_thread_name(p, p->threads[i].tid);
    rep_agg_fini(&agg);
    rep_sym_fini(&sym);
    rep_names_fini(&names);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rep_profile p;
    struct cmn_err err = {0};
    if (rep_read_buffer(data, size, "fuzz", &p, &err) == CMN_OK)
        report(&p);
    else if (strchr(err.msg, '\n') != NULL || strncmp(err.msg, "fuzz: ", 6) != 0)
        abort(); /* an error is one line that names the input */
    rep_profile_fini(&p);
    return 0;
}
