/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Stack aggregation: a hash table (common/hashtab.h) from a stack's ids to its entry in an
 * array of stacks, whose ids live back to back in one growing array. A sample is
 * symbolized leaf first, as recorded, into a scratch array filled from its end, so that
 * it reads root first without a second pass. Reporter thread only.
 */
#include "reporter/stacks/aggregate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"
#include "common/hash.h"
#include "reporter/base/progress.h"
#include "reporter/input/profile.h"
#include "reporter/stacks/filter.h"
#include "reporter/stacks/states.h"
#include "reporter/symbols/names.h"
#include "reporter/symbols/symbols.h"

int rep_agg_init(struct rep_agg *a)
{
    memset(a, 0, sizeof(*a));
    cmn_hashtab_init(&a->table, 512);
    return CMN_OK;
}

void rep_agg_fini(struct rep_agg *a)
{
    if (a == NULL)
        return;
    free(a->ids);
    free(a->stacks);
    cmn_hashtab_fini(&a->table);
    free(a->scratch);
    for (size_t i = 0; i < a->n_maps; i++)
        free(a->maps[i].path);
    free(a->maps);
    free(a->locs);
    free(a->is_state);
    for (size_t i = 0; i < a->n_labels; i++) {
        free(a->labels[i].key);
        free(a->labels[i].value);
    }
    free(a->labels);
    rep_lsets_fini(&a->lsets);
    free(a->label_scratch);
    free(a->timeline);
    memset(a, 0, sizeof(*a));
}

/* A stack's ids, as looked up, and their hash. */
struct stack_key {
    const uint32_t *ids;
    size_t n;
    uint64_t hash;
    uint32_t labels;
};

static uint64_t stack_hash(const void *ctx, uint32_t i)
{
    const struct rep_agg *a = ctx;
    return a->stacks[i].hash;
}

static bool is_stack(const void *ctx, uint32_t i, const void *key)
{
    const struct rep_agg *a = ctx;
    const struct stack_key *k = key;
    const struct rep_stack *st = &a->stacks[i];
    return st->hash == k->hash && st->n_ids == k->n && st->labels == k->labels &&
           memcmp(a->ids + st->ids_at, k->ids, k->n * sizeof(*k->ids)) == 0;
}

/* Room for one more stack of n ids. */
static int reserve(struct rep_agg *a, size_t n)
{
    if (!CMN_GROW(a->ids, a->cap_ids, a->n_ids + n, 4096))
        return CMN_E_NOMEM;
    if (!CMN_GROW(a->stacks, a->cap_stacks, a->n_stacks + 1, 256))
        return CMN_E_NOMEM;
    return cmn_hashtab_reserve(&a->table, stack_hash, a) == 0 ? CMN_OK : CMN_E_NOMEM;
}

int rep_agg_add(struct rep_agg *a, const uint32_t *ids, size_t n, uint64_t weight)
{
    bool is_off = n > 0 && rep_agg_is_state(a, ids[n - 1]);
    return rep_agg_add_split(a, ids, n, weight, is_off ? weight : 0);
}

int rep_agg_add_split(struct rep_agg *a, const uint32_t *ids, size_t n, uint64_t weight,
                      uint64_t off_weight)
{
    return rep_agg_add_labeled(a, ids, n, weight, off_weight, 0);
}

int rep_agg_add_labeled(struct rep_agg *a, const uint32_t *ids, size_t n, uint64_t weight,
                        uint64_t off_weight, uint32_t labels)
{
    a->n_samples++;
    a->total_weight += weight;
    a->off_weight += off_weight;
    a->last_stack = UINT32_MAX;
    if (n == 0) {
        a->n_empty++;
        return CMN_OK;
    }
    uint64_t hash = cmn_hash_bytes(ids, n * sizeof(*ids)) ^ cmn_hash_word(labels);
    struct stack_key key = {ids, n, hash, labels};
    uint32_t i = cmn_hashtab_find(&a->table, hash, is_stack, a, &key);
    if (i != CMN_HASHTAB_NONE) {
        a->stacks[i].weight += weight;
        a->stacks[i].off_weight += off_weight;
        a->last_stack = i;
        return CMN_OK;
    }
    if (reserve(a, n) != CMN_OK) {
        a->n_samples--;
        a->total_weight -= weight;
        a->off_weight -= off_weight;
        return CMN_E_NOMEM;
    }
    memcpy(a->ids + a->n_ids, ids, n * sizeof(*ids));
    a->stacks[a->n_stacks] = (struct rep_stack){.ids_at = a->n_ids,
                                                .n_ids = (uint32_t)n,
                                                .weight = weight,
                                                .off_weight = off_weight,
                                                .hash = hash,
                                                .labels = labels};
    cmn_hashtab_insert(&a->table, hash, (uint32_t)a->n_stacks);
    a->last_stack = (uint32_t)a->n_stacks;
    a->n_ids += n;
    a->n_stacks++;
    return CMN_OK;
}

/* Keeps of a's labels those p has too, with the same value (the first profile's are all
 * kept). */
static void narrow_labels(struct rep_agg *a, const struct rep_profile *p)
{
    if (!a->has_labels) {
        a->has_labels = true;
        a->labels = calloc(p->n_labels ? p->n_labels : 1, sizeof(*a->labels));
        for (size_t i = 0; a->labels && i < p->n_labels; i++) {
            char *k = strdup(p->labels[i].key), *v = strdup(p->labels[i].value);
            if (!k || !v) {
                free(k);
                free(v);
                continue;
            }
            a->labels[a->n_labels++] = (struct rep_agg_label){.key = k, .value = v};
        }
        return;
    }
    size_t kept = 0;
    for (size_t i = 0; i < a->n_labels; i++) {
        bool is_there = false;
        for (size_t j = 0; j < p->n_labels && !is_there; j++)
            is_there = strcmp(p->labels[j].key, a->labels[i].key) == 0 &&
                       strcmp(p->labels[j].value, a->labels[i].value) == 0;
        if (is_there) {
            a->labels[kept++] = a->labels[i];
        } else {
            free(a->labels[i].key);
            free(a->labels[i].value);
        }
    }
    a->n_labels = kept;
}

/* Records the rate of p's samples, to turn weights into seconds. */
static void add_time(struct rep_agg *a, const struct rep_profile *p, uint64_t weight)
{
    narrow_labels(a, p);
    if (p->has_process && p->process.mode == PROF_MODE_WALL)
        a->is_wall = true;
    double hz = rep_profile_hz(p);
    uint32_t requested = p->has_process ? p->process.requested_hz : 0;
    a->requested_hz = a->n_profiles == 0 || a->requested_hz == requested ? requested : 0;
    a->n_profiles++;
    if (p->has_process && p->process.start_real_ns != 0 &&
        (a->start_real_ns == 0 || p->process.start_real_ns < a->start_real_ns))
        a->start_real_ns = p->process.start_real_ns;
    if (p->has_stats && p->stats[PROF_STAT_DURATION_NS] > a->duration_ns)
        a->duration_ns = p->stats[PROF_STAT_DURATION_NS];
    if (hz <= 0) {
        a->is_time_partial = a->is_time_partial || weight > 0;
        return;
    }
    a->seconds += (double)weight / hz;
    a->timed_weight += weight;
}

/* Makes room for n more ids in the scratch array after the first used. */
static int scratch_room(struct rep_agg *a, size_t used, size_t n)
{
    return CMN_GROW(a->scratch, a->cap_scratch, used + n, 1024) ? CMN_OK : CMN_E_NOMEM;
}

/* The index + 1 in a->maps of a copy of m, added if new. */
static int map_index(struct rep_agg *a, const struct rep_map *m, uint32_t *plus /* out */)
{
    for (size_t i = 0; i < a->n_maps; i++) {
        const struct rep_agg_map *c = &a->maps[i];
        if (c->start == m->start && c->end == m->end && c->file_offset == m->file_offset &&
            strcmp(c->path, m->path) == 0) {
            *plus = (uint32_t)i + 1;
            return CMN_OK;
        }
    }
    if (!CMN_GROW(a->maps, a->cap_maps, a->n_maps + 1, 16))
        return CMN_E_NOMEM;
    struct rep_agg_map *c = &a->maps[a->n_maps];
    *c = (struct rep_agg_map){.start = m->start, .end = m->end, .file_offset = m->file_offset,
                              .build_id_len = m->build_id_len};
    memcpy(c->build_id, m->build_id, sizeof(c->build_id));
    if ((c->path = strdup(m->path)) == NULL)
        return CMN_E_NOMEM;
    *plus = (uint32_t)++a->n_maps;
    return CMN_OK;
}

/* Remembers, for the pprof output, where name ids first came from. */
static int note_locs(struct rep_agg *a, struct rep_sym *sym, uint64_t addr, bool is_caller,
                     uint64_t time_ns, const uint32_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t id = ids[i];
        if (id >= a->n_locs) {
            size_t old = a->n_locs;
            if (!CMN_GROW(a->locs, a->n_locs, (size_t)id + 1, 1024))
                return CMN_E_NOMEM;
            memset(a->locs + old, 0, (a->n_locs - old) * sizeof(*a->locs));
        }
        if (a->locs[id].addr != 0)
            continue;
        const struct rep_map *m = rep_sym_map_at(sym, addr, is_caller, time_ns);
        a->locs[id].addr = addr;
        if (m != NULL && map_index(a, m, &a->locs[id].map_plus) != CMN_OK)
            return CMN_E_NOMEM;
    }
    return CMN_OK;
}

/* Appends the frames of address addr to the scratch array after *n ids. */
static int push_frames(struct rep_agg *a, struct rep_sym *sym, uint64_t addr, bool is_caller,
                       uint64_t time_ns, size_t *n)
{
    const uint32_t *ids;
    size_t k;
    if (rep_sym_frames(sym, addr, is_caller, time_ns, &ids, &k) != CMN_OK ||
        scratch_room(a, *n, k) != CMN_OK)
        return CMN_E_NOMEM;
    memcpy(a->scratch + *n, ids, k * sizeof(*ids));
    if (a->is_locs && note_locs(a, sym, addr, is_caller, time_ns, a->scratch + *n, k) != CMN_OK)
        return CMN_E_NOMEM;
    *n += k;
    return CMN_OK;
}

/* Appends the name "label (number)" to the scratch array after *n ids. */
static int push_label(struct rep_agg *a, struct rep_names *names, const char *label,
                      uint32_t number, size_t *n)
{
    char buf[300];
    int len = snprintf(buf, sizeof(buf), "%.250s (%u)", label, (unsigned)number);
    if (scratch_room(a, *n, 1) != CMN_OK ||
        rep_names_intern(names, buf, (size_t)len, &a->scratch[*n]) != CMN_OK)
        return CMN_E_NOMEM;
    (*n)++;
    return CMN_OK;
}

/* Appends the frame of a thread state off CPU ("[sleep: futex]") after *n ids, and
 * remembers its id as a state's. */
static int push_state(struct rep_agg *a, struct rep_names *names, uint32_t state, size_t *n)
{
    char buf[64];
    size_t len = rep_state_frame(state, buf, sizeof(buf));
    uint32_t id;
    if (scratch_room(a, *n, 1) != CMN_OK || rep_names_intern(names, buf, len, &id) != CMN_OK)
        return CMN_E_NOMEM;
    if (id >= a->n_is_state) {
        size_t old = a->n_is_state;
        if (!CMN_GROW(a->is_state, a->n_is_state, (size_t)id + 1, 256))
            return CMN_E_NOMEM;
        memset(a->is_state + old, 0, (a->n_is_state - old) * sizeof(*a->is_state));
    }
    a->is_state[id] = true;
    a->scratch[(*n)++] = id;
    return CMN_OK;
}

/* Appends the frame "key=value" of sample smp's label key ("key=(none)" without one) after
 * *n ids. */
static int push_by_label(struct rep_agg *a, struct rep_names *names, const struct rep_profile *p,
                         const struct rep_sample *smp, const char *key, size_t *n)
{
    char buf[600];
    const char *value = rep_profile_label(p, smp, key);
    int len = snprintf(buf, sizeof(buf), "%.250s=%.300s", key, value ? value : "(none)");
    if (len < 0 || scratch_room(a, *n, 1) != CMN_OK ||
        rep_names_intern(names, buf, (size_t)len < sizeof(buf) ? (size_t)len : sizeof(buf) - 1,
                         &a->scratch[*n]) != CMN_OK)
        return CMN_E_NOMEM;
    (*n)++;
    return CMN_OK;
}

/* Sets pair i of the label scratch to key, value (interned). */
static int put_pair(struct rep_agg *a, struct rep_names *names, size_t i, const char *key,
                    size_t key_len, const char *value, size_t value_len)
{
    if (!CMN_GROW(a->label_scratch, a->cap_label_scratch, 2 * i + 2, 64) ||
        rep_names_intern(names, key, key_len, &a->label_scratch[2 * i]) != CMN_OK ||
        rep_names_intern(names, value, value_len, &a->label_scratch[2 * i + 1]) != CMN_OK)
        return CMN_E_NOMEM;
    return CMN_OK;
}

static const struct rep_names *sort_names; /* by_key_name()'s table: one sort at a time */

static int by_key_name(const void *va, const void *vb)
{
    const uint32_t *x = va, *y = vb;
    return strcmp(rep_names_get(sort_names, x[0]), rep_names_get(sort_names, y[0]));
}

static void hex(char *out, const uint8_t *b, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
}

/* The labels of sample smp as a set of a->lsets: its process's (PROF_LABELS), its thread's
 * over them, and its trace and span ids as trace_id and span_id. */
static int labels_of(struct rep_agg *a, struct rep_names *names, const struct rep_profile *p,
                     const struct rep_sample *smp, uint32_t *id)
{
    size_t n = 0;
    const struct rep_label_set *set = rep_profile_label_set(p, smp->label_set);
    for (size_t i = 0; i < p->n_labels; i++) {
        bool is_thread_s = false;
        for (uint32_t j = 0; set != NULL && j < set->n && !is_thread_s; j++)
            is_thread_s = strcmp(set->pairs[j].key, p->labels[i].key) == 0;
        if (!is_thread_s && put_pair(a, names, n++, p->labels[i].key, strlen(p->labels[i].key),
                                     p->labels[i].value, strlen(p->labels[i].value)) != CMN_OK)
            return CMN_E_NOMEM;
    }
    for (uint32_t j = 0; set != NULL && j < set->n; j++)
        if (put_pair(a, names, n++, set->pairs[j].key, strlen(set->pairs[j].key),
                     set->pairs[j].value, strlen(set->pairs[j].value)) != CMN_OK)
            return CMN_E_NOMEM;
    const struct rep_trace *t = rep_profile_trace(p, smp);
    if (t != NULL) {
        char tid[32], sid[16];
        hex(tid, t->trace_id, sizeof(t->trace_id));
        hex(sid, t->span_id, sizeof(t->span_id));
        if (put_pair(a, names, n++, "trace_id", 8, tid, sizeof(tid)) != CMN_OK ||
            put_pair(a, names, n++, "span_id", 7, sid, sizeof(sid)) != CMN_OK)
            return CMN_E_NOMEM;
    }
    sort_names = names;
    if (n > 1)
        qsort(a->label_scratch, n, 2 * sizeof(uint32_t), by_key_name);
    return rep_lsets_intern(&a->lsets, a->label_scratch, n, id);
}

/* Symbolizes sample smp into the scratch array, root first; *n gets the count of ids.
 * The ids are gathered leaf first, then reversed. (Profiles of older versions carry the
 * word at the leaf's stack pointer, sp_word, which an older reporter added as the leaf's
 * caller where the leaf's unwind information put its return address there: the walks now
 * prove that caller themselves, and sp_word is ignored.) */
static int symbolize(struct rep_agg *a, struct rep_sym *sym, const struct rep_profile *p,
                     const struct rep_sample *smp, size_t *n)
{
    size_t n_frames = smp->n_frames;
    *n = 0;
    /* The state of a thread off CPU is the leaf. */
    if (rep_state_is_off_cpu(smp->state) && push_state(a, sym->names, smp->state, n) != CMN_OK)
        return CMN_E_NOMEM;
    for (size_t f = 0; f < n_frames; f++) {
        if (push_frames(a, sym, rep_sample_frame(smp, f), f > 0, smp->time_ns, n) != CMN_OK)
            return CMN_E_NOMEM;
    }
    if (a->filter != NULL && rep_filter_has_stack_rules(a->filter)) {
        bool keep;
        if (rep_filter_keeps_stack(a->filter, sym->names, a->scratch, *n, &keep) != CMN_OK)
            return CMN_E_NOMEM;
        if (!keep)
            return CMN_E_NOTFOUND;
    }
    if (a->is_threads) {
        const char *name = rep_profile_thread_name(p, smp->tid);
        if (push_label(a, sym->names, name != NULL ? name : "?", smp->tid, n) != CMN_OK)
            return CMN_E_NOMEM;
    }
    if (a->is_processes) {
        const char *exe = p->has_process && p->process.exe[0] ? p->process.exe : "?";
        const char *slash = strrchr(exe, '/');
        uint32_t pid = p->has_process ? p->process.pid : 0;
        if (push_label(a, sym->names, slash ? slash + 1 : exe, pid, n) != CMN_OK)
            return CMN_E_NOMEM;
    }
    for (size_t i = a->n_by_labels; i-- > 0;)
        if (push_by_label(a, sym->names, p, smp, a->by_labels[i], n) != CMN_OK)
            return CMN_E_NOMEM;
    for (size_t i = 0, j = *n; i + 1 < j; i++, j--) {
        uint32_t t = a->scratch[i];
        a->scratch[i] = a->scratch[j - 1];
        a->scratch[j - 1] = t;
    }
    return CMN_OK;
}

/* Appends the last sample added (time time_ns, weight) to the timeline. */
static int note_tick(struct rep_agg *a, const struct rep_profile *p, uint64_t time_ns,
                     uint64_t weight)
{
    if (a->last_stack == UINT32_MAX)
        return CMN_OK;
    if (!CMN_GROW(a->timeline, a->cap_timeline, a->n_timeline + 1, 1024))
        return CMN_E_NOMEM;
    double hz = rep_profile_hz(p);
    /* A profile's weights and rate are read, not trusted: the span saturates. */
    double span = hz > 0 ? (double)weight * 1e9 / hz + 0.5 : (double)weight;
    a->timeline[a->n_timeline++] = (struct rep_agg_tick){
        .time_ns = time_ns, .stack = a->last_stack,
        .weight = weight > UINT32_MAX ? UINT32_MAX : (uint32_t)weight,
        .span_ns = span >= 0x1p64 ? UINT64_MAX : (uint64_t)span};
    return CMN_OK;
}

int rep_agg_add_samples(struct rep_agg *a, struct rep_sym *sym, const struct rep_profile *p)
{
    bool keeps_profile = a->filter == NULL || rep_filter_keeps_profile(a->filter, p);
    for (size_t i = 0; i < p->n_samples; i++) {
        const struct rep_sample *smp = &p->samples[i];
        size_t n;
        int rc = CMN_E_NOTFOUND;
        if ((i & 0xffff) == 0 && a->progress != NULL)
            rep_progress_update(a->progress, p->name, a->profile_samples + i,
                                p->n_samples_read);
        if (keeps_profile && (a->filter == NULL || rep_filter_keeps_sample(a->filter, p, smp)))
            rc = symbolize(a, sym, p, smp, &n);
        if (rc == CMN_E_NOTFOUND) {
            a->n_filtered++;
            a->filtered_weight += smp->weight;
            continue;
        }
        uint32_t labels = 0;
        if (rc == CMN_OK && a->is_label_sets && labels_of(a, sym->names, p, smp, &labels) != CMN_OK)
            return CMN_E_NOMEM;
        bool is_off = n > 0 && rep_agg_is_state(a, a->scratch[n - 1]);
        if (rc != CMN_OK || rep_agg_add_labeled(a, a->scratch, n, smp->weight,
                                                is_off ? smp->weight : 0, labels) != CMN_OK)
            return CMN_E_NOMEM;
        if (a->is_timeline && note_tick(a, p, smp->time_ns, smp->weight) != CMN_OK)
            return CMN_E_NOMEM;
        a->profile_weight += smp->weight;
    }
    a->profile_samples += p->n_samples;
    return CMN_OK;
}

void rep_agg_end_profile(struct rep_agg *a, const struct rep_profile *p)
{
    add_time(a, p, a->profile_weight);
    a->profile_weight = 0;
    a->profile_samples = 0;
}

int rep_agg_add_profile(struct rep_agg *a, struct rep_sym *sym, const struct rep_profile *p)
{
    int rc = rep_agg_add_samples(a, sym, p);
    if (rc == CMN_OK)
        rep_agg_end_profile(a, p);
    return rc;
}
