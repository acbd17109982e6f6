/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the per-thread aggregates (reporter/stacks/per_thread.c) and the speedscope output
 * (reporter/output/speedscope.c): the exact file for a hand-made profile of two threads,
 * read and symbolized end to end, several processes, hostile names, no samples.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/record.h"
#include "include/libprof/prof_format.h"
#include "reporter/input/profile.h"
#include "reporter/input/read.h"
#include "reporter/output/speedscope.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/stacks/per_thread.h"
#include "reporter/symbols/names.h"
#include "reporter/symbols/symbols.h"

static char *speedscope(const struct rep_per_thread *t, const struct rep_names *names)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    cr_assert_eq(rep_out_speedscope(out, t, names, "run"), CMN_OK);
    fclose(out);
    return text;
}

/* Encodes a profile of process pid: thread 11 "main" and thread 12 "worker" (unnamed
 * when !is_named), with frames in a program whose file does not exist (so names are
 * app+0xOFFSET). Returns its size in buf. */
static size_t encode(unsigned char *buf, size_t cap, uint32_t pid, bool is_named)
{
    size_t n = cmn_record_file_header(buf, cap);
    struct prof_rec_process proc = {.pid = pid, .requested_hz = 100, .effective_hz = 100};
    n += cmn_record_process(buf + n, cap - n, &proc, "/nonexistent/app");
    struct prof_rec_map app = {.start = 0x400000, .end = 0x401000, .file_offset = 0x1000};
    n += cmn_record_map(buf + n, cap - n, &app, "/nonexistent/app");
    const uint64_t f_main[] = {0x400010, 0x400201}; /* leaf first */
    const uint64_t f_work[] = {0x400110, 0x400301};
    /* Out of time order in the file: the output puts them in order. */
    struct prof_rec_sample s = {.weight = 1, .n_frames = 2, .tid = 12, .time_ns = 300};
    n += cmn_record_sample(buf + n, cap - n, &s, f_work);
    s.tid = 11;
    s.time_ns = 100;
    n += cmn_record_sample(buf + n, cap - n, &s, f_main);
    s.tid = 12;
    s.weight = 2;
    n += cmn_record_sample(buf + n, cap - n, &s, f_work);
    s.n_frames = 1;
    s.time_ns = 200;
    n += cmn_record_sample(buf + n, cap - n, &s, f_work + 1);
    n += cmn_record_thread(buf + n, cap - n, 5, 11, "main");
    if (is_named)
        n += cmn_record_thread(buf + n, cap - n, 5, 12, "worker");
    n += cmn_record_end(buf + n, cap - n);
    return n;
}

struct fixture {
    struct rep_names names;
    struct rep_sym sym;
    struct rep_agg agg;
    struct rep_per_thread threads;
};

static void setup(struct fixture *fx)
{
    rep_names_init(&fx->names);
    rep_sym_init(&fx->sym, &fx->names);
    rep_agg_init(&fx->agg);
    rep_per_thread_init(&fx->threads, &fx->agg);
}

static void teardown(struct fixture *fx)
{
    rep_per_thread_fini(&fx->threads);
    rep_agg_fini(&fx->agg);
    rep_sym_fini(&fx->sym);
    rep_names_fini(&fx->names);
}

static void add(struct fixture *fx, uint32_t pid, bool is_named)
{
    static unsigned char buf[8192];
    size_t n = encode(buf, sizeof(buf), pid, is_named);
    struct rep_profile p;
    struct cmn_err err = {0};
    cr_assert_eq(rep_read_buffer(buf, n, "hand.prof", &p, &err), CMN_OK, "%s", err.msg);
    cr_assert_eq(rep_sym_use_profile(&fx->sym, &p), CMN_OK);
    cr_assert_eq(rep_agg_add_profile(&fx->agg, &fx->sym, &p), CMN_OK);
    cr_assert_eq(rep_per_thread_add_profile(&fx->threads, &fx->sym, &p), CMN_OK);
    rep_profile_fini(&p);
}

/* Each thread's samples in the order of the run (the file has them out of order), each
 * weighing the time it stands for at the profile's 100 Hz. */
Test(out_speedscope, writes_one_sampled_profile_per_thread)
{
    struct fixture fx;
    setup(&fx);
    add(&fx, 7, true);
    cr_assert_eq(fx.threads.n_threads, 2);
    cr_expect_eq(fx.threads.threads[0].tid, 11);
    cr_expect_eq(fx.threads.threads[0].agg.total_weight, 1);
    cr_expect_eq(fx.threads.threads[1].agg.total_weight, 5);
    char *text = speedscope(&fx.threads, &fx.names);
    cr_assert_str_eq(text,
                     "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
                     "\"shared\":{\"frames\":[{\"name\":\"app+0x1201\"},{\"name\":\"app+0x1010\"},"
                     "{\"name\":\"app+0x1301\"},{\"name\":\"app+0x1110\"}]},"
                     "\"profiles\":["
                     "{\"type\":\"sampled\",\"name\":\"main (tid 11)\","
                     "\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":10000000,"
                     "\"samples\":[[0,1]],\"weights\":[10000000]},"
                     "{\"type\":\"sampled\",\"name\":\"worker (tid 12)\","
                     "\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":50000000,"
                     "\"samples\":[[2,3],[2],[2,3]],"
                     "\"weights\":[20000000,20000000,10000000]}],"
                     "\"name\":\"run\",\"activeProfileIndex\":0,\"exporter\":\"prof\"}\n");
    free(text);
    teardown(&fx);
}

Test(out_speedscope, names_threads_by_pid_when_processes_differ)
{
    struct fixture fx;
    setup(&fx);
    add(&fx, 7, true);
    add(&fx, 7, false); /* the same process again (an exec): same threads */
    add(&fx, 8, false);
    cr_assert_eq(fx.threads.n_threads, 4);
    cr_expect_eq(fx.threads.threads[1].agg.total_weight, 10);
    char *text = speedscope(&fx.threads, &fx.names);
    cr_expect(strstr(text, "\"name\":\"main (pid 7, tid 11)\"") != NULL, "%s", text);
    cr_expect(strstr(text, "\"name\":\"worker (pid 7, tid 12)\"") != NULL);
    cr_expect(strstr(text, "\"name\":\"pid 8, tid 12\"") != NULL);
    free(text);
    teardown(&fx);
}

Test(out_speedscope, writes_an_empty_profile_without_samples)
{
    struct rep_names names;
    struct rep_per_thread t;
    rep_names_init(&names);
    rep_per_thread_init(&t, NULL);
    char *text = speedscope(&t, &names);
    cr_assert_str_eq(text, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
                           "\"shared\":{\"frames\":[]},\"profiles\":[{\"type\":\"sampled\","
                           "\"name\":\"all threads\",\"unit\":\"none\",\"startValue\":0,"
                           "\"endValue\":0,\"samples\":[],\"weights\":[]}],"
                           "\"name\":\"run\",\"activeProfileIndex\":0,\"exporter\":\"prof\"}\n");
    free(text);
    rep_per_thread_fini(&t);
    rep_names_fini(&names);
}

Test(out_speedscope, escapes_hostile_frame_and_thread_names)
{
    struct rep_names names;
    struct rep_per_thread t;
    rep_names_init(&names);
    rep_per_thread_init(&t, NULL);
    uint32_t id;
    const char *evil = "f\"\\\n\xfe";
    cr_assert_eq(rep_names_intern(&names, evil, strlen(evil), &id), CMN_OK);
    struct rep_thread_agg th = {.pid = 1, .tid = 2, .name = strdup("t\"1")};
    rep_agg_init(&th.agg);
    cr_assert_eq(rep_agg_add(&th.agg, &id, 1, 4), CMN_OK);
    t.threads = &th;
    t.n_threads = 1;
    char *text = speedscope(&t, &names);
    cr_expect(strstr(text, "{\"name\":\"f\\\"\\\\\\u000a\xef\xbf\xbd\"}") != NULL, "%s", text);
    cr_expect(strstr(text, "\"name\":\"t\\\"1 (tid 2)\"") != NULL, "%s", text);
    free(text);
    free(th.name);
    rep_agg_fini(&th.agg);
    rep_names_fini(&names);
}

Test(out_speedscope, leaves_out_threads_without_stacks)
{
    struct rep_names names;
    struct rep_per_thread t;
    rep_names_init(&names);
    rep_per_thread_init(&t, NULL);
    uint32_t id;
    cr_assert_eq(rep_names_intern(&names, "f", 1, &id), CMN_OK);
    struct rep_thread_agg th[2] = {{.pid = 1, .tid = 2}, {.pid = 1, .tid = 3}};
    rep_agg_init(&th[0].agg);
    rep_agg_init(&th[1].agg);
    cr_assert_eq(rep_agg_add(&th[0].agg, NULL, 0, 4), CMN_OK); /* no frames: no stack */
    cr_assert_eq(rep_agg_add(&th[1].agg, &id, 1, 1), CMN_OK);
    t.threads = th;
    t.n_threads = 2;
    char *text = speedscope(&t, &names);
    cr_expect(strstr(text, "\"profiles\":[{\"type\":\"sampled\",\"name\":\"tid 3\",") != NULL,
              "%s", text);
    cr_expect(strstr(text, "tid 2") == NULL, "%s", text);
    free(text);
    t.n_threads = 1;
    text = speedscope(&t, &names);
    cr_expect(strstr(text, "\"name\":\"all threads\"") != NULL, "%s", text);
    free(text);
    rep_agg_fini(&th[0].agg);
    rep_agg_fini(&th[1].agg);
    rep_names_fini(&names);
}
