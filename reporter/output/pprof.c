/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Building the profile.proto message field by field (reporter/output/pb.c) into one buffer, then
 * gzip (zlib's deflate with a gzip wrapper, windowBits 31) straight to the output. The
 * string table is a second interning table whose ids are the string indexes, "" first as
 * the format requires. Function and mapping ids are the name id + 1 and the mapping index
 * + 1 (0 means none in profile.proto). A location is one frame address: a function and
 * the functions inlined into it there, which the stacks hold as frames of their own, each
 * inlined one named "func [inlined]" right below (leafward of) the function it was inlined
 * into. Each distinct such run of name ids, innermost first, is one Location whose Lines
 * are those functions, innermost first, as profile.proto wants inlined frames; the runs
 * are interned in a third table as decimal text ("12,5"), whose ids + 1 are the location
 * ids. Reporter thread only.
 */
#include "reporter/output/pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/err.h"
#include "reporter/output/pb.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/symbols/names.h"

/* profile.proto field numbers. */
#define PF_SAMPLE_TYPE 1
#define PF_SAMPLE 2
#define PF_SAMPLE_LABEL 3 /* in a Sample */
#define PF_MAPPING 3
#define PF_LOCATION 4
#define PF_FUNCTION 5
#define PF_STRING_TABLE 6
#define PF_TIME_NANOS 9
#define PF_DURATION_NANOS 10
#define PF_PERIOD_TYPE 11
#define PF_PERIOD 12

struct pprof_ctx {
    struct rep_pb msg;       /* the Profile message */
    struct rep_pb sub;       /* one embedded message while it is built */
    struct rep_pb line;      /* one Line inside a Location, or a Label inside a Sample */
    struct rep_names strs;   /* the string table: id = index */
    struct rep_names runs;   /* the locations: id + 1 = location id, text "id,id,..." */
    bool *is_inlined;        /* per name id: its name ends in " [inlined]" */
    const struct rep_agg *a;
    const struct rep_names *names;
};

#define INLINED_MARK " [inlined]"
/* Frames in one location at most; a deeper inline chain goes on in a second location. */
#define PPROF_MAX_RUN 32

/* The string-table index of len bytes at s. */
static uint64_t str_index(struct pprof_ctx *c, const char *s, size_t len)
{
    uint32_t id = 0;
    if (rep_names_intern(&c->strs, s, len, &id) != CMN_OK)
        c->msg.is_failed = true;
    return id;
}

static uint64_t str_of(struct pprof_ctx *c, const char *s)
{
    return str_index(c, s, strlen(s));
}

/* Splits a frame name "func (file:123)" or "func (file:123) [inlined]" into its parts;
 * a name without them is all function. */
static void split_name(const char *name, size_t *func_len, const char **file, size_t *file_len,
                       uint64_t *line)
{
    size_t n = strlen(name);
    *func_len = n;
    *file = NULL;
    *file_len = 0;
    *line = 0;
    size_t end = n;
    const char *inl = INLINED_MARK;
    if (n > strlen(inl) && strcmp(name + n - strlen(inl), inl) == 0)
        *func_len = end = n - strlen(inl);
    if (end == 0 || name[end - 1] != ')')
        return;
    size_t open = end - 1;
    while (open > 0 && name[open] != '(')
        open--;
    if (open < 1 || name[open] != '(' || name[open - 1] != ' ')
        return;
    size_t colon = end - 1;
    while (colon > open && name[colon] != ':')
        colon--;
    if (colon == open || colon + 1 >= end - 1)
        return;
    uint64_t v = 0;
    for (size_t i = colon + 1; i < end - 1; i++) {
        if (name[i] < '0' || name[i] > '9')
            return;
        v = v * 10 + (uint64_t)(name[i] - '0');
    }
    *func_len = open - 1;
    *file = name + open + 1;
    *file_len = colon - open - 1;
    *line = v;
}

static void put_value_type(struct pprof_ctx *c, uint32_t field, const char *type,
                           const char *unit)
{
    rep_pb_clear(&c->sub);
    rep_pb_varint(&c->sub, 1, str_of(c, type));
    rep_pb_varint(&c->sub, 2, str_of(c, unit));
    rep_pb_bytes(&c->msg, field, c->sub.data, c->sub.n);
}

/* The sampling period in nanoseconds, from the aggregate's time and weight. */
static uint64_t period_ns(const struct rep_agg *a)
{
    if (a->timed_weight > 0 && a->seconds > 0)
        return (uint64_t)(a->seconds * 1e9 / (double)a->timed_weight + 0.5);
    return a->requested_hz > 0 ? 1000000000u / a->requested_hz : 0;
}

/* The location id of the frames ids[0..n) (innermost first): interned as decimal text. */
static uint64_t run_location(struct pprof_ctx *c, const uint32_t *ids, size_t n)
{
    char buf[512];
    size_t len = 0;
    for (size_t i = 0; i < n && len + 12 < sizeof(buf); i++)
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%u", i ? "," : "", ids[i]);
    uint32_t id = 0;
    if (rep_names_intern(&c->runs, buf, len, &id) != CMN_OK)
        c->msg.is_failed = true;
    return (uint64_t)id + 1;
}

/* The location ids of a stack of n name ids (root first) into locs, leaf first; *n_locs
 * gets their count. An inlined frame joins the frames rootward of it up to the first that
 * is not inlined, the function they were inlined into. */
static void stack_locations(struct pprof_ctx *c, const uint32_t *ids, size_t n, uint64_t *locs,
                            uint32_t *run, size_t *n_locs)
{
    *n_locs = 0;
    size_t i = n;
    while (i > 0) {
        size_t k = 0;
        do {
            run[k++] = ids[--i];
        } while (c->is_inlined[run[k - 1]] && i > 0 && k < PPROF_MAX_RUN);
        locs[(*n_locs)++] = run_location(c, run, k);
    }
}

static void put_samples(struct pprof_ctx *c, uint64_t period)
{
    const struct rep_agg *a = c->a;
    uint64_t *locs = NULL;
    uint32_t *run = NULL;
    size_t cap = 0;
    for (size_t s = 0; s < a->n_stacks && !c->msg.is_failed; s++) {
        size_t n = a->stacks[s].n_ids, n_locs;
        if (n > cap) {
            free(locs);
            free(run);
            locs = malloc(n * sizeof(*locs));
            run = malloc(n * sizeof(*run));
            cap = n;
            if (locs == NULL || run == NULL) {
                c->msg.is_failed = true;
                break;
            }
        }
        stack_locations(c, rep_agg_stack_ids(a, s), n, locs, run, &n_locs);
        uint64_t values[2] = {a->stacks[s].weight, a->stacks[s].weight * period};
        rep_pb_clear(&c->sub);
        rep_pb_packed(&c->sub, 1, locs, n_locs);
        rep_pb_packed(&c->sub, 2, values, 2);
        /* The sample's labels: its process's (PROF_LABELS: what a continuous-profiling
         * service files the profile under), its thread's, its trace (go tool pprof -tags,
         * -tagfocus); an aggregate that kept none per stack gives the profiles' common
         * ones to every sample. */
        size_t n_kv = 0;
        const uint32_t *kv = rep_lsets_get(&a->lsets, a->stacks[s].labels, &n_kv);
        for (size_t l = 0; l < n_kv; l++) {
            rep_pb_clear(&c->line);
            rep_pb_varint(&c->line, 1, str_of(c, rep_names_get(c->names, kv[2 * l])));
            rep_pb_varint(&c->line, 2, str_of(c, rep_names_get(c->names, kv[2 * l + 1])));
            rep_pb_bytes(&c->sub, PF_SAMPLE_LABEL, c->line.data, c->line.n);
        }
        for (size_t l = 0; !a->is_label_sets && l < a->n_labels; l++) {
            rep_pb_clear(&c->line);
            rep_pb_varint(&c->line, 1, str_of(c, a->labels[l].key));
            rep_pb_varint(&c->line, 2, str_of(c, a->labels[l].value));
            rep_pb_bytes(&c->sub, PF_SAMPLE_LABEL, c->line.data, c->line.n);
        }
        rep_pb_bytes(&c->msg, PF_SAMPLE, c->sub.data, c->sub.n);
    }
    free(locs);
    free(run);
}

/* Marks the name ids some stack uses, and which of them are inlined frames. */
static bool *used_ids(struct pprof_ctx *c)
{
    const struct rep_agg *a = c->a;
    size_t n_names = c->names->n_names ? c->names->n_names : 1;
    bool *used = calloc(n_names, sizeof(*used));
    c->is_inlined = calloc(n_names, sizeof(*c->is_inlined));
    if (used == NULL || c->is_inlined == NULL) {
        free(used);
        return NULL;
    }
    size_t mark = strlen(INLINED_MARK);
    for (uint32_t id = 0; id < c->names->n_names; id++) {
        uint32_t len = rep_names_len(c->names, id);
        c->is_inlined[id] =
            len > mark && memcmp(rep_names_get(c->names, id) + len - mark, INLINED_MARK, mark) == 0;
    }
    for (size_t i = 0; i < a->n_ids; i++)
        used[a->ids[i]] = true;
    return used;
}

static void put_functions(struct pprof_ctx *c, const bool *used)
{
    for (uint32_t id = 0; id < c->names->n_names && !c->msg.is_failed; id++) {
        if (!used[id])
            continue;
        const char *name = rep_names_get(c->names, id);
        size_t func_len, file_len;
        const char *file;
        uint64_t line;
        split_name(name, &func_len, &file, &file_len, &line);
        rep_pb_clear(&c->sub);
        rep_pb_varint(&c->sub, 1, (uint64_t)id + 1);
        uint64_t fname = str_index(c, name, func_len);
        rep_pb_varint(&c->sub, 2, fname);
        rep_pb_varint(&c->sub, 3, fname);
        if (file != NULL)
            rep_pb_varint(&c->sub, 4, str_index(c, file, file_len));
        rep_pb_bytes(&c->msg, PF_FUNCTION, c->sub.data, c->sub.n);
    }
}

/* Adds a Line for name id to the Location being built in c->sub. */
static void put_line(struct pprof_ctx *c, uint32_t id)
{
    size_t func_len, file_len;
    const char *file;
    uint64_t line;
    split_name(rep_names_get(c->names, id), &func_len, &file, &file_len, &line);
    rep_pb_clear(&c->line);
    rep_pb_varint(&c->line, 1, (uint64_t)id + 1);
    if (line != 0)
        rep_pb_varint(&c->line, 2, line);
    rep_pb_bytes(&c->sub, 4, c->line.data, c->line.n);
    if (c->line.is_failed)
        c->msg.is_failed = true;
}

/* One Location per run of frames, with the address and mapping where its outermost
 * function was first seen. */
static void put_locations(struct pprof_ctx *c)
{
    const struct rep_agg *a = c->a;
    for (uint32_t r = 0; r < c->runs.n_names && !c->msg.is_failed; r++) {
        uint32_t ids[PPROF_MAX_RUN];
        size_t n = 0;
        for (const char *p = rep_names_get(&c->runs, r); *p != '\0' && n < PPROF_MAX_RUN;
             p += *p == ',') {
            char *end;
            ids[n++] = (uint32_t)strtoul(p, &end, 10);
            p = end;
        }
        assert(n > 0);
        uint32_t outer = ids[n - 1];
        const struct rep_agg_loc *loc = outer < a->n_locs ? &a->locs[outer] : NULL;
        rep_pb_clear(&c->sub);
        rep_pb_varint(&c->sub, 1, (uint64_t)r + 1);
        if (loc != NULL && loc->map_plus != 0)
            rep_pb_varint(&c->sub, 2, loc->map_plus);
        if (loc != NULL && loc->addr != 0)
            rep_pb_varint(&c->sub, 3, loc->addr);
        for (size_t i = 0; i < n; i++)
            put_line(c, ids[i]);
        rep_pb_bytes(&c->msg, PF_LOCATION, c->sub.data, c->sub.n);
    }
}

static void put_mappings(struct pprof_ctx *c)
{
    const struct rep_agg *a = c->a;
    for (size_t i = 0; i < a->n_maps; i++) {
        const struct rep_agg_map *m = &a->maps[i];
        char hex[2 * sizeof(m->build_id) + 1];
        for (size_t k = 0; k < m->build_id_len && k < sizeof(m->build_id); k++)
            snprintf(hex + 2 * k, 3, "%02x", m->build_id[k]);
        hex[2 * (m->build_id_len < sizeof(m->build_id) ? m->build_id_len : sizeof(m->build_id))] =
            '\0';
        rep_pb_clear(&c->sub);
        rep_pb_varint(&c->sub, 1, i + 1);
        rep_pb_varint(&c->sub, 2, m->start);
        rep_pb_varint(&c->sub, 3, m->end);
        rep_pb_varint(&c->sub, 4, m->file_offset);
        rep_pb_varint(&c->sub, 5, str_of(c, m->path));
        if (m->build_id_len > 0)
            rep_pb_varint(&c->sub, 6, str_of(c, hex));
        rep_pb_varint(&c->sub, 7, 1); /* has_functions */
        rep_pb_bytes(&c->msg, PF_MAPPING, c->sub.data, c->sub.n);
    }
}

/* gzips n bytes at data to out. */
static int write_gzip(FILE *out, const unsigned char *data, size_t n)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return CMN_E_NOMEM;
    unsigned char buf[65536];
    int rc = CMN_OK, zrc;
    z.next_in = (unsigned char *)data;
    z.avail_in = (uInt)n; /* a profile message is far below 4 GiB */
    do {
        z.next_out = buf;
        z.avail_out = sizeof(buf);
        zrc = deflate(&z, Z_FINISH);
        size_t have = sizeof(buf) - z.avail_out;
        if (have > 0 && fwrite(buf, 1, have, out) != have) {
            rc = CMN_E_IO;
            break;
        }
    } while (zrc == Z_OK);
    if (rc == CMN_OK && zrc != Z_STREAM_END)
        rc = CMN_E_NOMEM;
    deflateEnd(&z);
    if (rc == CMN_OK && fflush(out) != 0)
        rc = CMN_E_IO;
    return rc;
}

int rep_out_pprof(FILE *out, const struct rep_agg *a, const struct rep_names *names)
{
    struct pprof_ctx c = {.a = a, .names = names};
    rep_pb_init(&c.msg);
    rep_pb_init(&c.sub);
    rep_pb_init(&c.line);
    rep_names_init(&c.strs);
    rep_names_init(&c.runs);
    str_of(&c, ""); /* index 0 */
    uint64_t period = period_ns(a);
    /* A wall profile's weights are wall time, on CPU and off. */
    const char *kind = a->is_wall ? "wall" : "cpu";
    put_value_type(&c, PF_SAMPLE_TYPE, "samples", "count");
    put_value_type(&c, PF_SAMPLE_TYPE, kind, "nanoseconds");
    bool *used = used_ids(&c);
    if (used == NULL) {
        c.msg.is_failed = true;
    } else {
        put_samples(&c, period);
        put_mappings(&c);
        put_functions(&c, used);
        put_locations(&c);
    }
    free(used);
    free(c.is_inlined);
    if (a->start_real_ns != 0)
        rep_pb_varint(&c.msg, PF_TIME_NANOS, a->start_real_ns);
    if (a->duration_ns != 0)
        rep_pb_varint(&c.msg, PF_DURATION_NANOS, a->duration_ns);
    put_value_type(&c, PF_PERIOD_TYPE, kind, "nanoseconds");
    rep_pb_varint(&c.msg, PF_PERIOD, period);
    /* The string table goes last, once every string has its index. */
    for (uint32_t i = 0; i < c.strs.n_names; i++)
        rep_pb_bytes(&c.msg, PF_STRING_TABLE, rep_names_get(&c.strs, i), rep_names_len(&c.strs, i));
    bool is_failed = c.msg.is_failed || c.sub.is_failed;
    int rc = is_failed ? CMN_E_NOMEM : write_gzip(out, c.msg.data, c.msg.n);
    rep_names_fini(&c.runs);
    rep_names_fini(&c.strs);
    rep_pb_fini(&c.line);
    rep_pb_fini(&c.sub);
    rep_pb_fini(&c.msg);
    return rc;
}
