/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The speedscope writer: a frame index per name id in order of first use (an array
 * indexed by id), then per thread (and --by-label value) its samples in the order of the
 * run, each weighing the time it stands for, a run of samples of one stack written as one:
 * speedscope's "Time Order" view is then the thread's timeline. Reporter thread only.
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

/* Ticks in time order, the order they were added in for equal times. */
static int cmp_tick(const void *va, const void *vb)
{
    const struct rep_agg_tick *a = va, *b = vb;
    if (a->time_ns != b->time_ns)
        return a->time_ns < b->time_ns ? -1 : 1;
    return a < b ? -1 : a > b;
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
    size_t len = (th->name ? strlen(th->name) : 0) + (th->group ? strlen(th->group) : 0) +
                 strlen(id) + 8;
    char *name = malloc(len);
    if (name == NULL) {
        rep_escape_json(out, id);
        return;
    }
    int at = th->group != NULL ? snprintf(name, len, "%s: ", th->group) : 0;
    if (th->name != NULL)
        snprintf(name + at, len - (size_t)at, "%s (%s)", th->name, id);
    else
        snprintf(name + at, len - (size_t)at, "%s", id);
    rep_escape_json(out, name);
    free(name);
}

/* One sampled profile: the samples of a's timeline in time order, a run of one stack as
 * one sample, in nanoseconds. */
static int put_profile(FILE *out, const struct rep_agg *a, const uint32_t *frame_of)
{
    struct rep_agg_tick *tl = malloc((a->n_timeline ? a->n_timeline : 1) * sizeof(*tl));
    if (tl == NULL)
        return CMN_E_NOMEM;
    if (a->n_timeline > 0)
        memcpy(tl, a->timeline, a->n_timeline * sizeof(*tl));
    qsort(tl, a->n_timeline, sizeof(*tl), cmp_tick);
    size_t n = 0;
    uint64_t end = 0;
    for (size_t k = 0; k < a->n_timeline; k++) {
        end += tl[k].span_ns;
        /* Merged into the run before it: the tick at n - 1. */
        if (n > 0 && tl[n - 1].stack == tl[k].stack) {
            tl[n - 1].span_ns += tl[k].span_ns;
            continue;
        }
        tl[n++] = tl[k];
    }
    fprintf(out, ",\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":%" PRIu64
            ",\"samples\":[", end);
    for (size_t k = 0; k < n; k++) {
        const uint32_t *ids = rep_agg_stack_ids(a, tl[k].stack);
        fputs(k > 0 ? ",[" : "[", out);
        for (uint32_t f = 0; f < a->stacks[tl[k].stack].n_ids; f++)
            fprintf(out, f > 0 ? ",%" PRIu32 : "%" PRIu32, frame_of[ids[f]]);
        fputc(']', out);
    }
    fputs("],\"weights\":[", out);
    for (size_t k = 0; k < n; k++)
        fprintf(out, k > 0 ? ",%" PRIu64 : "%" PRIu64, tl[k].span_ns);
    fputs("]}", out);
    free(tl);
    return CMN_OK;
}

/* The threads' profiles; a thread whose samples all had no frame, or were filtered out,
 * has none. */
static int put_profiles(FILE *out, const struct rep_per_thread *t, const uint32_t *frame_of)
{
    bool with_pid = is_multi_process(t);
    size_t n_put = 0;
    fputs("\"profiles\":[", out);
    for (size_t th = 0; th < t->n_threads; th++) {
        const struct rep_agg *a = &t->threads[th].agg;
        if (a->n_stacks == 0)
            continue;
        fputs(n_put++ > 0 ? ",{\"type\":\"sampled\",\"name\":" : "{\"type\":\"sampled\",\"name\":",
              out);
        put_thread_name(out, &t->threads[th], with_pid);
        if (put_profile(out, a, frame_of) != CMN_OK)
            return CMN_E_NOMEM;
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
    int rc = put_profiles(out, t, frame_of);
    free(frame_of);
    if (rc != CMN_OK)
        return rc;
    fputs("\"name\":", out);
    rep_escape_json(out, name != NULL ? name : "prof");
    fputs(",\"activeProfileIndex\":0,\"exporter\":\"prof\"}\n", out);
    return fflush(out) == 0 && !ferror(out) ? CMN_OK : CMN_E_IO;
}
