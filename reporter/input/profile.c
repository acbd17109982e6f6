/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The in-memory profile: growable arrays for mappings, threads and samples, and the
 * clean-up pass that sorts mappings and threads and removes their duplicates once the
 * reader has seen the whole file. Reporter thread only.
 */
#include "reporter/input/profile.h"

#include <unistd.h>

#include <stdlib.h>
#include <sys/mman.h>

#include "common/check.h"
#include "common/err.h"
#include "common/grow.h"
#include "common/ranges.h"

const char *rep_stop_name(unsigned r)
{
    static const char *const names[PROF_STOP_N] = {
        [PROF_STOP_END] = "complete", [PROF_STOP_DEPTH] = "depth",
        [PROF_STOP_BOUNDS] = "bounds", [PROF_STOP_ALIGN] = "align",
        [PROF_STOP_ORDER] = "order",   [PROF_STOP_NO_STACK] = "no-stack",
        [PROF_STOP_RULE] = "rule",     [PROF_STOP_CODE] = "not-code",
        [PROF_STOP_NO_INFO] = "no-info", [PROF_STOP_PENDING] = "table-pending",
    };
    return r < PROF_STOP_N && names[r] ? names[r] : "other";
}

const char *rep_state_name(unsigned kind)
{
    static const char *const names[PROF_STATE_N] = {
        [PROF_STATE_NONE] = "",          [PROF_STATE_RUNNING] = "running",
        [PROF_STATE_RUNNABLE] = "runnable", [PROF_STATE_SLEEPING] = "sleeping",
        [PROF_STATE_DISK] = "disk",      [PROF_STATE_STOPPED] = "stopped",
        [PROF_STATE_WAITING] = "waiting",
    };
    return kind < PROF_STATE_N ? names[kind] : "other";
}

int rep_profile_init(struct rep_profile *p, const char *name)
{
    memset(p, 0, sizeof(*p));
    p->name = name;
    p->owner_uid = (uint32_t)getuid();
    return CMN_OK;
}

void rep_profile_fini(struct rep_profile *p)
{
    if (p == NULL)
        return;
    const char *name = p->name;
    if (p->is_mapped)
        munmap(p->bytes, p->n_bytes);
    else
        free(p->bytes);
    free(p->maps);
    free(p->threads);
    free(p->snap_threads);
    free(p->notes);
    free(p->labels);
    for (size_t i = 0; i < p->n_label_sets; i++)
        free(p->label_sets[i].pairs);
    free(p->label_sets);
    cmn_hashtab_fini(&p->label_set_table);
    free(p->traces);
    free(p->samples);
    rep_profile_init(p, name);
}

int rep_profile_add_map(struct rep_profile *p, const struct rep_map *m)
{
    if (!CMN_GROW(p->maps, p->cap_maps, p->n_maps + 1, 64))
        return CMN_E_NOMEM;
    p->maps[p->n_maps++] = *m;
    return CMN_OK;
}

int rep_profile_add_thread(struct rep_profile *p, const struct rep_thread *t)
{
    if (!CMN_GROW(p->threads, p->cap_threads, p->n_threads + 1, 64))
        return CMN_E_NOMEM;
    p->threads[p->n_threads] = *t;
    p->threads[p->n_threads].seq = p->n_threads;
    p->n_threads++;
    return CMN_OK;
}

int rep_profile_add_sample(struct rep_profile *p, const struct rep_sample *s)
{
    if (!CMN_GROW(p->samples, p->cap_samples, p->n_samples + 1, 64))
        return CMN_E_NOMEM;
    p->samples[p->n_samples++] = *s;
    return CMN_OK;
}

int rep_profile_add_snap_thread(struct rep_profile *p, const struct rep_snap_thread *t)
{
    if (!CMN_GROW(p->snap_threads, p->cap_snap_threads, p->n_snap_threads + 1, 64))
        return CMN_E_NOMEM;
    p->snap_threads[p->n_snap_threads++] = *t;
    return CMN_OK;
}

static uint64_t set_hash(uint32_t id)
{
    return id * 0x9e3779b97f4a7c15ull;
}

static uint64_t set_hash_of(const void *ctx, uint32_t entry)
{
    return set_hash(((const struct rep_profile *)ctx)->label_sets[entry].id);
}

static bool same_set(const void *ctx, uint32_t entry, const void *key)
{
    return ((const struct rep_profile *)ctx)->label_sets[entry].id == *(const uint32_t *)key;
}

int rep_profile_add_label_set(struct rep_profile *p, uint32_t id, struct rep_label *pairs,
                              uint32_t n)
{
    if (id == 0 || rep_profile_label_set(p, id) != NULL) {
        free(pairs);
        return CMN_E_INPUT;
    }
    if (!CMN_GROW(p->label_sets, p->cap_label_sets, p->n_label_sets + 1, 16) ||
        cmn_hashtab_reserve(&p->label_set_table, set_hash_of, p) != 0) {
        free(pairs);
        return CMN_E_NOMEM;
    }
    p->label_sets[p->n_label_sets] = (struct rep_label_set){.id = id, .n = n, .pairs = pairs};
    cmn_hashtab_insert(&p->label_set_table, set_hash(id), (uint32_t)p->n_label_sets);
    p->n_label_sets++;
    return CMN_OK;
}

const struct rep_label_set *rep_profile_label_set(const struct rep_profile *p, uint32_t id)
{
    if (id == 0)
        return NULL;
    uint32_t i = cmn_hashtab_find(&p->label_set_table, set_hash(id), same_set, p, &id);
    return i == CMN_HASHTAB_NONE ? NULL : &p->label_sets[i];
}

const char *rep_profile_label(const struct rep_profile *p, const struct rep_sample *s,
                              const char *key)
{
    const struct rep_label_set *set = rep_profile_label_set(p, s->label_set);
    for (uint32_t i = 0; set != NULL && i < set->n; i++)
        if (strcmp(set->pairs[i].key, key) == 0)
            return set->pairs[i].value;
    for (size_t i = p->n_labels; i-- > 0;)
        if (strcmp(p->labels[i].key, key) == 0)
            return p->labels[i].value;
    return NULL;
}

int rep_profile_add_trace(struct rep_profile *p, const struct rep_trace *t)
{
    if (!CMN_GROW(p->traces, p->cap_traces, p->n_traces + 1, 64))
        return CMN_E_NOMEM;
    p->traces[p->n_traces++] = *t;
    return CMN_OK;
}

const struct rep_trace *rep_profile_trace(const struct rep_profile *p, const struct rep_sample *s)
{
    return s->trace != 0 && s->trace <= p->n_traces ? &p->traces[s->trace - 1] : NULL;
}

int rep_profile_add_note(struct rep_profile *p, const char *text)
{
    if (!CMN_GROW(p->notes, p->cap_notes, p->n_notes + 1, 64))
        return CMN_E_NOMEM;
    p->notes[p->n_notes++] = text;
    return CMN_OK;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return a < b ? -1 : a > b;
}

/* Orders mappings by identity (start, end, offset, path), then by time, so that the first
 * of a run of duplicates is the earliest. */
static int cmp_map(const void *va, const void *vb)
{
    const struct rep_map *a = va, *b = vb;
    int c = cmp_u64(a->start, b->start);
    if (c == 0)
        c = cmp_u64(a->end, b->end);
    if (c == 0)
        c = cmp_u64(a->file_offset, b->file_offset);
    if (c == 0)
        c = strcmp(a->path, b->path);
    if (c == 0)
        c = cmp_u64(a->time_ns, b->time_ns);
    return c;
}

static bool same_map(const struct rep_map *a, const struct rep_map *b)
{
    return a->start == b->start && a->end == b->end && a->file_offset == b->file_offset &&
           strcmp(a->path, b->path) == 0;
}

/* Threads by tid, then time, then the order they were read in. */
static int cmp_thread(const void *va, const void *vb)
{
    const struct rep_thread *a = va, *b = vb;
    int c = cmp_u64(a->tid, b->tid);
    if (c == 0)
        c = cmp_u64(a->time_ns, b->time_ns);
    return c ? c : cmp_u64(a->seq, b->seq);
}

void rep_profile_finish(struct rep_profile *p)
{
    if (p->n_maps > 1) {
        qsort(p->maps, p->n_maps, sizeof(*p->maps), cmp_map);
        size_t kept = 1;
        for (size_t i = 1; i < p->n_maps; i++)
            if (!same_map(&p->maps[kept - 1], &p->maps[i]))
                p->maps[kept++] = p->maps[i];
        p->n_maps = kept;
    }
    if (p->n_threads > 1) {
        /* The latest name of a tid wins: sort by (tid, time, order read) and keep the
         * last of each tid. */
        struct rep_thread *t = p->threads;
        qsort(t, p->n_threads, sizeof(*t), cmp_thread);
        size_t kept = 0;
        for (size_t i = 0; i < p->n_threads; i++) {
            if (kept > 0 && t[kept - 1].tid == t[i].tid)
                t[kept - 1] = t[i];
            else
                t[kept++] = t[i];
        }
        p->n_threads = kept;
    }
}

const char *rep_profile_thread_name(const struct rep_profile *p, uint32_t tid)
{
    /* Sorted by tid, one entry a tid (rep_profile_finish()). */
    size_t i = CMN_RANGE_UPPER(p->threads, p->n_threads, tid, tid);
    assert(i == p->n_threads || p->threads[i].tid > tid);
    if (i > 0 && p->threads[i - 1].tid == tid)
        return p->threads[i - 1].name;
    return NULL;
}

double rep_profile_hz(const struct rep_profile *p)
{
    /* A wall profile's weights are periods of the rate asked for, on CPU and off. */
    if (p->has_process && p->process.mode == PROF_MODE_WALL && p->process.requested_hz)
        return p->process.requested_hz;
    /* Weight, not signals: a per-thread timer's sample may stand for several periods. */
    uint64_t ticks = p->stats[PROF_STAT_WEIGHT]    ? p->stats[PROF_STAT_WEIGHT]
                     : p->stats[PROF_STAT_SIGNALS] ? p->stats[PROF_STAT_SIGNALS]
                                                   : p->stats[PROF_STAT_SAMPLES];
    if (p->has_stats && ticks > 0 && p->stats[PROF_STAT_CPU_NS] > 0)
        return (double)ticks * 1e9 / (double)p->stats[PROF_STAT_CPU_NS];
    if (!p->has_process)
        return 0;
    return p->process.effective_hz ? p->process.effective_hz : p->process.requested_hz;
}
