/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The call tree (reporter/stacks/flame.h, the flame graph's), each node with its total
 * weight. A first pass over the stacks builds it and sums the weights; a second walks each
 * stack down the tree until it meets a node under the threshold and adds the prefix above
 * it to the new aggregate. Memory grows with the distinct nodes. Reporter thread only.
 */
#include "reporter/stacks/prune.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/stacks/flame.h"
#include "reporter/symbols/names.h"

/* The call tree of in's stacks with their weights. */
static int build(struct rep_flame *t, const struct rep_agg *in)
{
    for (size_t s = 0; s < in->n_stacks; s++)
        if (rep_flame_add(t, rep_agg_stack_ids(in, s), in->stacks[s].n_ids,
                          in->stacks[s].weight) != CMN_OK)
            return CMN_E_NOMEM;
    return CMN_OK;
}

/* Adds every stack of in, cut at the first node under threshold, to out (with its labels);
 * in's timeline names out's stacks then. */
static int cut(const struct rep_flame *t, struct rep_agg *in, struct rep_names *names,
               double threshold, struct rep_agg *out)
{
    uint32_t *to = in->n_timeline > 0 ? malloc(in->n_stacks * sizeof(*to)) : NULL;
    if (in->n_timeline > 0 && to == NULL)
        return CMN_E_NOMEM;
    for (size_t s = 0; s < in->n_stacks; s++) {
        const uint32_t *ids = rep_agg_stack_ids(in, s);
        uint32_t node = REP_FLAME_ROOT;
        size_t k = 0;
        for (; k < in->stacks[s].n_ids; k++) {
            node = rep_flame_child(t, node, ids[k]);
            assert(node != REP_FLAME_NONE); /* build() added every stack */
            if ((double)t->nodes[node].total < threshold)
                break;
        }
        uint32_t pruned;
        if ((k == 0 && rep_names_intern(names, "[pruned]", 8, &pruned) != CMN_OK) ||
            rep_agg_add_labeled(out, k == 0 ? &pruned : ids, k == 0 ? 1 : k,
                                in->stacks[s].weight, in->stacks[s].off_weight,
                                in->stacks[s].labels) != CMN_OK) {
            free(to);
            return CMN_E_NOMEM;
        }
        if (to != NULL)
            to[s] = out->last_stack;
    }
    /* The samples of the timeline go with their stacks. */
    for (size_t i = 0; to != NULL && i < in->n_timeline; i++)
        in->timeline[i].stack = to[in->timeline[i].stack];
    free(to);
    return CMN_OK;
}

int rep_prune(struct rep_agg *in, struct rep_names *names, double percent,
              struct rep_agg *out /* out */)
{
    rep_agg_init(out);
    struct rep_flame t;
    double threshold = (double)in->total_weight * percent / 100.0;
    int rc = rep_flame_init(&t);
    if (rc == CMN_OK)
        rc = build(&t, in);
    if (rc == CMN_OK)
        rc = cut(&t, in, names, threshold, out);
    rep_flame_fini(&t);
    if (rc != CMN_OK) {
        rep_agg_fini(out);
        return rc;
    }
    /* The totals are in's: nothing was dropped, only moved up the tree. */
    out->total_weight = in->total_weight;
    out->off_weight = in->off_weight;
    out->is_wall = in->is_wall;
    out->n_samples = in->n_samples;
    out->n_empty = in->n_empty;
    out->seconds = in->seconds;
    out->timed_weight = in->timed_weight;
    out->n_profiles = in->n_profiles;
    out->requested_hz = in->requested_hz;
    out->is_time_partial = in->is_time_partial;
    out->start_real_ns = in->start_real_ns;
    out->duration_ns = in->duration_ns;
    out->n_filtered = in->n_filtered;
    out->filtered_weight = in->filtered_weight;
    out->is_locs = in->is_locs;
    out->locs = in->locs;
    out->n_locs = in->n_locs;
    out->maps = in->maps;
    out->n_maps = in->n_maps;
    out->cap_maps = in->cap_maps;
    out->is_state = in->is_state;
    out->n_is_state = in->n_is_state;
    out->labels = in->labels;
    out->n_labels = in->n_labels;
    out->has_labels = in->has_labels;
    /* The pruned stacks keep their label sets' ids and their samples' places in time. */
    out->is_label_sets = in->is_label_sets;
    out->lsets = in->lsets;
    memset(&in->lsets, 0, sizeof(in->lsets));
    out->is_timeline = in->is_timeline;
    out->timeline = in->timeline;
    out->n_timeline = in->n_timeline;
    out->cap_timeline = in->cap_timeline;
    in->timeline = NULL;
    in->n_timeline = in->cap_timeline = 0;
    in->locs = NULL;
    in->n_locs = 0;
    in->maps = NULL;
    in->n_maps = in->cap_maps = 0;
    in->is_state = NULL;
    in->n_is_state = 0;
    in->labels = NULL;
    in->n_labels = 0;
    return CMN_OK;
}
