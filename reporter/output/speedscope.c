/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The speedscope writer: a frame index per name id in order of first use (an array
 * indexed by id), then per thread its stacks sorted by name and written as frame-index
 * arrays with their weights. Reporter thread only.
 */
#include "reporter/output/speedscope.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "reporter/output/escape.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/stacks/per_thread.h"
#include "reporter/symbols/names.h"

#define NO_FRAME UINT32_MAX

/* qsort has no context argument: the aggregate and names being sorted over. */
static const struct rep_agg *sort_agg;
static const struct rep_names *sort_names;

/* Stacks compared frame by frame by name, a stack before the longer ones it starts. */
static int cmp_stack(const void *va, const void *vb)
{
    size_t ia = *(const size_t *)va, ib = *(const size_t *)vb;
    const uint32_t *a = rep_agg_stack_ids(sort_agg, ia), *b = rep_agg_stack_ids(sort_agg, ib);
    uint32_t na = sort_agg->stacks[ia].n_ids, nb = sort_agg->stacks[ib].n_ids;
    for (uint32_t i = 0; i < na && i < nb; i++) {
        if (a[i] == b[i])
            continue;
        int c = strcmp(rep_names_get(sort_names, a[i]), rep_names_get(sort_names, b[i]));
        if (c != 0)
            return c;
    }
    return na < nb ? -1 : na > nb;
}

/* Gives every name id used by a stack a frame index; writes the frames array. */
static void put_frames(FILE *out, const struct rep_per_thread *t, const struct rep_names *names,
                       uint32_t *frame_of)
{
    uint32_t n_frames = 0;
    fputs("\"shared\":{\"frames\":[", out);
    for (size_t th = 0; th < t->n_threads; th++) {
        const struct rep_agg *a = &t->threads[th].agg;
        for (size_t i = 0; i < a->n_ids; i++) {
            uint32_t id = a->ids[i];
            if (frame_of[id] != NO_FRAME)
                continue;
            frame_of[id] = n_frames++;
            fputs(n_frames > 1 ? ",{\"name\":" : "{\"name\":", out);
            rep_escape_json(out, rep_names_get(names, id));
            fputc('}', out);
        }
    }
    fputs("]},", out);
}

static bool is_multi_process(const struct rep_per_thread *t)
{
    for (size_t i = 1; i < t->n_threads; i++)
        if (t->threads[i].pid != t->threads[0].pid)
            return true;
    return false;
}

static void put_thread_name(FILE *out, const struct rep_thread_agg *th, bool with_pid)
{
    char id[64];
    if (with_pid)
        snprintf(id, sizeof(id), "pid %" PRIu32 ", tid %" PRIu32, th->pid, th->tid);
    else
        snprintf(id, sizeof(id), "tid %" PRIu32, th->tid);
    size_t len = (th->name ? strlen(th->name) : 0) + strlen(id) + 4;
    char *name = malloc(len);
    if (name == NULL) {
        rep_escape_json(out, id);
        return;
    }
    if (th->name != NULL)
        snprintf(name, len, "%s (%s)", th->name, id);
    else
        snprintf(name, len, "%s", id);
    rep_escape_json(out, name);
    free(name);
}

/* One sampled profile: the stacks of a in the order of order[0..n). */
static void put_profile(FILE *out, const struct rep_agg *a, const size_t *order, size_t n,
                        const uint32_t *frame_of)
{
    uint64_t end = 0;
    for (size_t k = 0; k < n; k++)
        end += a->stacks[order[k]].weight;
    fprintf(out, ",\"unit\":\"none\",\"startValue\":0,\"endValue\":%" PRIu64 ",\"samples\":[", end);
    for (size_t k = 0; k < n; k++) {
        const uint32_t *ids = rep_agg_stack_ids(a, order[k]);
        fputs(k > 0 ? ",[" : "[", out);
        for (uint32_t f = 0; f < a->stacks[order[k]].n_ids; f++)
            fprintf(out, f > 0 ? ",%" PRIu32 : "%" PRIu32, frame_of[ids[f]]);
        fputc(']', out);
    }
    fputs("],\"weights\":[", out);
    for (size_t k = 0; k < n; k++)
        fprintf(out, k > 0 ? ",%" PRIu64 : "%" PRIu64, a->stacks[order[k]].weight);
    fputs("]}", out);
}

/* The threads' profiles; a thread whose samples all had no frame, or were filtered out,
 * has none. */
static int put_profiles(FILE *out, const struct rep_per_thread *t, const struct rep_names *names,
                        const uint32_t *frame_of)
{
    bool with_pid = is_multi_process(t);
    size_t n_put = 0;
    fputs("\"profiles\":[", out);
    for (size_t th = 0; th < t->n_threads; th++) {
        const struct rep_agg *a = &t->threads[th].agg;
        if (a->n_stacks == 0)
            continue;
        size_t *order = malloc(a->n_stacks * sizeof(*order));
        if (order == NULL)
            return CMN_E_NOMEM;
        for (size_t i = 0; i < a->n_stacks; i++)
            order[i] = i;
        sort_agg = a;
        sort_names = names;
        qsort(order, a->n_stacks, sizeof(*order), cmp_stack);
        fputs(n_put++ > 0 ? ",{\"type\":\"sampled\",\"name\":" : "{\"type\":\"sampled\",\"name\":",
              out);
        put_thread_name(out, &t->threads[th], with_pid);
        put_profile(out, a, order, a->n_stacks, frame_of);
        free(order);
    }
    if (n_put == 0)
        fputs("{\"type\":\"sampled\",\"name\":\"all threads\",\"unit\":\"none\","
              "\"startValue\":0,\"endValue\":0,\"samples\":[],\"weights\":[]}",
              out);
    fputs("],", out);
    return CMN_OK;
}

int rep_out_speedscope(FILE *out, const struct rep_per_thread *t, const struct rep_names *names,
                       const char *name)
{
    uint32_t *frame_of = malloc((names->n_names ? names->n_names : 1) * sizeof(*frame_of));
    if (frame_of == NULL)
        return CMN_E_NOMEM;
    for (uint32_t id = 0; id < names->n_names; id++)
        frame_of[id] = NO_FRAME;
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",", out);
    put_frames(out, t, names, frame_of);
    int rc = put_profiles(out, t, names, frame_of);
    free(frame_of);
    if (rc != CMN_OK)
        return rc;
    fputs("\"name\":", out);
    rep_escape_json(out, name != NULL ? name : "prof");
    fputs(",\"activeProfileIndex\":0,\"exporter\":\"prof\"}\n", out);
    return fflush(out) == 0 && !ferror(out) ? CMN_OK : CMN_E_IO;
}
