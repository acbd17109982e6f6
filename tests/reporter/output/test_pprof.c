/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the pprof output (reporter/output/pprof.c): the output is gunzipped with zlib and
 * its top-level fields decoded by a small reader written here, to check the parts of
 * profile.proto that go tool pprof relies on: the string table starting with "", the two
 * sample types, one sample per stack with its locations leaf first and its two values,
 * the period, and an inlined frame as a line of its caller's location.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/err.h"
#include "reporter/output/pprof.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/symbols/names.h"

struct field {
    uint32_t num;
    uint32_t wire;
    uint64_t v;             /* a varint's value */
    const unsigned char *p; /* a length-delimited field's bytes */
    size_t n;
};

static uint64_t get_varint(const unsigned char **p, const unsigned char *end)
{
    uint64_t v = 0;
    for (int shift = 0; *p < end; shift += 7) {
        unsigned char c = *(*p)++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return v;
    }
    cr_assert_fail("varint runs past the end");
    return 0;
}

/* Reads the next field of [*p, end); 0 at the end. */
static int next_field(const unsigned char **p, const unsigned char *end, struct field *f)
{
    if (*p >= end)
        return 0;
    uint64_t tag = get_varint(p, end);
    f->num = (uint32_t)(tag >> 3);
    f->wire = (uint32_t)(tag & 7);
    cr_assert(f->wire == 0 || f->wire == 2, "wire type %u", f->wire);
    if (f->wire == 0) {
        f->v = get_varint(p, end);
    } else {
        f->n = get_varint(p, end);
        cr_assert_leq(f->n, (size_t)(end - *p));
        f->p = *p;
        *p += f->n;
    }
    return 1;
}

/* The gunzipped bytes of a gzip file. */
static unsigned char *gunzip(const char *path, size_t *n)
{
    gzFile g = gzopen(path, "rb");
    cr_assert_not_null(g);
    size_t cap = 1 << 20;
    unsigned char *buf = malloc(cap);
    int k = gzread(g, buf, (unsigned)cap);
    cr_assert_geq(k, 0);
    gzclose(g);
    *n = (size_t)k;
    return buf;
}

Test(out_pprof, writes_a_gzipped_profile_with_samples_strings_and_types)
{
    struct rep_names names;
    struct rep_agg agg;
    rep_names_init(&names);
    rep_agg_init(&agg);
    uint32_t main_id, f_id, g_id;
    rep_names_intern(&names, "main", 4, &main_id);
    rep_names_intern(&names, "f (a.c:12)", 10, &f_id);
    rep_names_intern(&names, "g (b.c:7) [inlined]", 19, &g_id);
    cr_assert_eq(rep_agg_add(&agg, (uint32_t[]){main_id, f_id}, 2, 3), CMN_OK);
    cr_assert_eq(rep_agg_add(&agg, (uint32_t[]){main_id, f_id, g_id}, 3, 4), CMN_OK);
    agg.seconds = 0.07;
    agg.timed_weight = 7; /* 10 ms per sample */

    char path[] = "/tmp/prof-test-pprof-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *out = fdopen(fd, "w");
    cr_assert_eq(rep_out_pprof(out, &agg, &names), CMN_OK);
    fclose(out);
    size_t n;
    unsigned char *msg = gunzip(path, &n);
    unlink(path);

    const char *strs[64];
    size_t strl[64], n_strs = 0, n_samples = 0, n_types = 0, n_funcs = 0;
    uint64_t period = 0, values_sum[2] = {0, 0};
    uint64_t leaf_loc = 0, n_locs_of_inlined = 0;
    uint64_t lines_of[8][4]; /* per location id: its lines' function ids, lines_of[id][0] */
    memset(lines_of, 0, sizeof(lines_of));
    const unsigned char *p = msg, *end = msg + n;
    struct field f;
    while (next_field(&p, end, &f)) {
        if (f.num == 6) {
            cr_assert_lt(n_strs, 64);
            strs[n_strs] = (const char *)f.p;
            strl[n_strs++] = f.n;
        } else if (f.num == 1) {
            n_types++;
        } else if (f.num == 5) {
            n_funcs++;
        } else if (f.num == 4) {
            const unsigned char *q = f.p, *qend = f.p + f.n;
            struct field s;
            uint64_t id = 0;
            while (next_field(&q, qend, &s)) {
                if (s.num == 1)
                    id = s.v;
                if (s.num != 4 || id == 0 || id >= 8)
                    continue;
                const unsigned char *r = s.p, *rend = s.p + s.n;
                struct field l;
                while (next_field(&r, rend, &l)) {
                    if (l.num == 1 && lines_of[id][0] < 3)
                        lines_of[id][1 + lines_of[id][0]++] = l.v;
                }
            }
        } else if (f.num == 12) {
            period = f.v;
        } else if (f.num == 2) {
            n_samples++;
            const unsigned char *q = f.p, *qend = f.p + f.n;
            struct field s;
            while (next_field(&q, qend, &s)) {
                const unsigned char *r = s.p, *rend = s.p + s.n;
                if (s.num == 1) {
                    uint64_t first = get_varint(&r, rend), k = 1;
                    for (; r < rend; k++)
                        get_varint(&r, rend);
                    if (k == 2) {
                        leaf_loc = first;
                        n_locs_of_inlined = k;
                    }
                } else if (s.num == 2) {
                    values_sum[0] += get_varint(&r, rend);
                    values_sum[1] += get_varint(&r, rend);
                }
            }
        }
    }
    cr_assert_gt(n_strs, 0);
    cr_assert_eq(strl[0], 0, "the string table must start with \"\"");
    cr_assert_eq(n_types, 2);
    cr_assert_eq(n_samples, 2);
    cr_assert_eq(n_funcs, 3);
    /* main;f;g [inlined]: two locations, leaf first: g inlined into f, then main. */
    cr_assert_eq(n_locs_of_inlined, 2, "the inlined frame is not part of its caller's location");
    cr_assert(leaf_loc > 0 && leaf_loc < 8);
    cr_assert_eq(lines_of[leaf_loc][0], 2, "the leaf location has %lu lines",
                 (unsigned long)lines_of[leaf_loc][0]);
    cr_assert_eq(lines_of[leaf_loc][1], (uint64_t)g_id + 1, "the inlined function is not first");
    cr_assert_eq(lines_of[leaf_loc][2], (uint64_t)f_id + 1);
    cr_assert_eq(values_sum[0], 7);
    cr_assert_eq(period, 10000000);
    cr_assert_eq(values_sum[1], 7 * period);
    int has_f = 0, has_file = 0;
    for (size_t i = 0; i < n_strs; i++) {
        has_f |= strl[i] == 1 && strs[i][0] == 'f';
        has_file |= strl[i] == 3 && memcmp(strs[i], "a.c", 3) == 0;
    }
    cr_assert(has_f && has_file, "'f (a.c:12)' was not split into function and file");
    free(msg);
    rep_agg_fini(&agg);
    rep_names_fini(&names);
}
