/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Stack aggregation: an open-addressing hash table from a stack's ids to its entry in an
 * array of stacks, whose ids live back to back in one growing array. A sample is
 * symbolized leaf first, as recorded, into a scratch array filled from its end, so that
 * it reads root first without a second pass. Reporter thread only.
 */
#include "reporter/aggregate.h"

#include <stdlib.h>
#include <string.h>

#include "reporter/err.h"
#include "reporter/hash.h"
#include "reporter/profile.h"
#include "reporter/symbols.h"

int rep_agg_init(struct rep_agg *a)
{
    memset(a, 0, sizeof(*a));
    return REP_OK;
}

void rep_agg_fini(struct rep_agg *a)
{
    if (a == NULL)
        return;
    free(a->ids);
    free(a->stacks);
    free(a->table);
    free(a->scratch);
    memset(a, 0, sizeof(*a));
}

static void table_insert(size_t *table, size_t cap, uint64_t hash, size_t index)
{
    size_t i = hash & (cap - 1);
    while (table[i] != 0)
        i = (i + 1) & (cap - 1);
    table[i] = index + 1;
}

/* Room for one more stack of n ids. */
static int reserve(struct rep_agg *a, size_t n)
{
    if (a->n_ids + n > a->cap_ids) {
        size_t cap = a->cap_ids ? a->cap_ids : 4096;
        while (cap < a->n_ids + n)
            cap *= 2;
        uint32_t *ids = realloc(a->ids, cap * sizeof(*ids));
        if (ids == NULL)
            return REP_E_NOMEM;
        a->ids = ids;
        a->cap_ids = cap;
    }
    if (a->n_stacks == a->cap_stacks) {
        size_t cap = a->cap_stacks ? a->cap_stacks * 2 : 256;
        struct rep_stack *st = realloc(a->stacks, cap * sizeof(*st));
        if (st == NULL)
            return REP_E_NOMEM;
        a->stacks = st;
        a->cap_stacks = cap;
    }
    if ((a->n_stacks + 1) * 2 > a->table_cap) {
        size_t cap = a->table_cap ? a->table_cap * 2 : 512;
        size_t *table = calloc(cap, sizeof(*table));
        if (table == NULL)
            return REP_E_NOMEM;
        for (size_t i = 0; i < a->n_stacks; i++)
            table_insert(table, cap, a->stacks[i].hash, i);
        free(a->table);
        a->table = table;
        a->table_cap = cap;
    }
    return REP_OK;
}

int rep_agg_add(struct rep_agg *a, const uint32_t *ids, size_t n, uint64_t weight)
{
    a->n_samples++;
    a->total_weight += weight;
    if (n == 0) {
        a->n_empty++;
        return REP_OK;
    }
    uint64_t hash = rep_hash_bytes(ids, n * sizeof(*ids));
    if (a->table_cap != 0) {
        for (size_t i = hash & (a->table_cap - 1); a->table[i] != 0;
             i = (i + 1) & (a->table_cap - 1)) {
            struct rep_stack *st = &a->stacks[a->table[i] - 1];
            if (st->hash == hash && st->n_ids == n &&
                memcmp(a->ids + st->ids_at, ids, n * sizeof(*ids)) == 0) {
                st->weight += weight;
                return REP_OK;
            }
        }
    }
    if (reserve(a, n) != REP_OK) {
        a->n_samples--;
        a->total_weight -= weight;
        return REP_E_NOMEM;
    }
    memcpy(a->ids + a->n_ids, ids, n * sizeof(*ids));
    a->stacks[a->n_stacks] = (struct rep_stack){
        .ids_at = a->n_ids, .n_ids = (uint32_t)n, .weight = weight, .hash = hash};
    table_insert(a->table, a->table_cap, hash, a->n_stacks);
    a->n_ids += n;
    a->n_stacks++;
    return REP_OK;
}

/* Records the rate of p's samples, to turn weights into seconds. */
static void add_time(struct rep_agg *a, const struct rep_profile *p, uint64_t weight)
{
    double hz = rep_profile_hz(p);
    uint32_t requested = p->has_process ? p->process.requested_hz : 0;
    a->requested_hz = a->n_profiles == 0 || a->requested_hz == requested ? requested : 0;
    a->n_profiles++;
    if (hz <= 0) {
        a->is_time_partial = a->is_time_partial || weight > 0;
        return;
    }
    a->seconds += (double)weight / hz;
    a->timed_weight += weight;
}

/* Symbolizes sample smp into ids, root first; *n gets their count. When the leaf had not
 * pushed anything (rep_sym_ra_at_sp), the frame-pointer walk skipped its caller, whose
 * return address is the sample's sp_word: it goes in as the leaf's caller. */
static int symbolize(struct rep_agg *a, struct rep_sym *sym, const struct rep_sample *smp,
                     size_t *n)
{
    size_t n_frames = smp->n_frames;
    bool has_extra = false;
    if (n_frames > 0 && smp->sp_word != 0 &&
        (n_frames == 1 || rep_sample_frame(smp, 1) != smp->sp_word)) {
        if (rep_sym_ra_at_sp(sym, rep_sample_frame(smp, 0), smp->time_ns, &has_extra) != REP_OK)
            return REP_E_NOMEM;
    }
    *n = n_frames + (has_extra ? 1 : 0);
    uint32_t *out = a->scratch + *n; /* filled backwards: the leaf is last */
    for (size_t f = 0; f < n_frames; f++) {
        if (rep_sym_frame(sym, rep_sample_frame(smp, f), f > 0, smp->time_ns, --out) != REP_OK)
            return REP_E_NOMEM;
        if (f == 0 && has_extra &&
            rep_sym_frame(sym, smp->sp_word, true, smp->time_ns, --out) != REP_OK)
            return REP_E_NOMEM;
    }
    return REP_OK;
}

int rep_agg_add_profile(struct rep_agg *a, struct rep_sym *sym, const struct rep_profile *p)
{
    /* A sample has at most UINT16_MAX frames, plus the one recovered from sp_word. */
    const size_t max_ids = (size_t)UINT16_MAX + 1;
    if (a->cap_scratch < max_ids) {
        uint32_t *s = realloc(a->scratch, max_ids * sizeof(*s));
        if (s == NULL)
            return REP_E_NOMEM;
        a->scratch = s;
        a->cap_scratch = max_ids;
    }
    uint64_t weight = 0;
    for (size_t i = 0; i < p->n_samples; i++) {
        const struct rep_sample *smp = &p->samples[i];
        size_t n;
        if (symbolize(a, sym, smp, &n) != REP_OK ||
            rep_agg_add(a, a->scratch, n, smp->weight) != REP_OK)
            return REP_E_NOMEM;
        weight += smp->weight;
    }
    add_time(a, p, weight);
    return REP_OK;
}
