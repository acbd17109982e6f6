/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The call tree as a hash table of nodes keyed by (parent node, name id), each with its
 * weight. A first pass over the stacks builds it and sums the weights; a second walks each
 * stack down the tree until it meets a node under the threshold and adds the prefix above
 * it to the new aggregate. Memory grows with the distinct nodes. Reporter thread only.
 */
#include "reporter/stacks/prune.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reporter/stacks/aggregate.h"
#include "common/err.h"
#include "common/hash.h"
#include "reporter/symbols/names.h"

struct prune_node {
    uint64_t parent; /* index + 1 of the parent node, 0 for a root */
    uint32_t id;     /* the frame's name id */
    uint64_t weight; /* of the stacks through this node */
};

struct prune_tree {
    struct prune_node *nodes;
    size_t n_nodes;
    size_t cap_nodes;
    size_t *table; /* node index + 1, 0 empty; a power of two, at most half full */
    size_t table_cap;
};

static uint64_t node_hash(uint64_t parent, uint32_t id)
{
    return cmn_hash_word(parent * 0x9e3779b97f4a7c15ull ^ id);
}

static int tree_grow(struct prune_tree *t)
{
    if (t->n_nodes == t->cap_nodes) {
        size_t cap = t->cap_nodes ? t->cap_nodes * 2 : 1024;
        struct prune_node *n = realloc(t->nodes, cap * sizeof(*n));
        if (n == NULL)
            return CMN_E_NOMEM;
        t->nodes = n;
        t->cap_nodes = cap;
    }
    if ((t->n_nodes + 1) * 2 > t->table_cap) {
        size_t cap = t->table_cap ? t->table_cap * 2 : 2048;
        size_t *table = calloc(cap, sizeof(*table));
        if (table == NULL)
            return CMN_E_NOMEM;
        for (size_t i = 0; i < t->n_nodes; i++) {
            size_t j = node_hash(t->nodes[i].parent, t->nodes[i].id) & (cap - 1);
            while (table[j] != 0)
                j = (j + 1) & (cap - 1);
            table[j] = i + 1;
        }
        free(t->table);
        t->table = table;
        t->table_cap = cap;
    }
    return CMN_OK;
}

/* The index + 1 of node (parent, id) in *node, created if new. CMN_OK or CMN_E_NOMEM. */
static int tree_node(struct prune_tree *t, uint64_t parent, uint32_t id, uint64_t *node)
{
    if (tree_grow(t) != CMN_OK)
        return CMN_E_NOMEM;
    size_t mask = t->table_cap - 1;
    size_t j = node_hash(parent, id) & mask;
    for (; t->table[j] != 0; j = (j + 1) & mask) {
        const struct prune_node *n = &t->nodes[t->table[j] - 1];
        if (n->parent == parent && n->id == id) {
            *node = t->table[j];
            return CMN_OK;
        }
    }
    t->nodes[t->n_nodes] = (struct prune_node){.parent = parent, .id = id};
    t->table[j] = ++t->n_nodes;
    *node = t->n_nodes;
    return CMN_OK;
}

static void tree_fini(struct prune_tree *t)
{
    free(t->nodes);
    free(t->table);
}

/* Builds the tree of in's stacks with their weights. */
static int build(struct prune_tree *t, const struct rep_agg *in)
{
    for (size_t s = 0; s < in->n_stacks; s++) {
        const uint32_t *ids = rep_agg_stack_ids(in, s);
        uint64_t node = 0;
        for (size_t k = 0; k < in->stacks[s].n_ids; k++) {
            if (tree_node(t, node, ids[k], &node) != CMN_OK)
                return CMN_E_NOMEM;
            t->nodes[node - 1].weight += in->stacks[s].weight;
        }
    }
    return CMN_OK;
}

/* Adds every stack of in, cut at the first node under threshold, to out. */
static int cut(struct prune_tree *t, const struct rep_agg *in, struct rep_names *names,
               double threshold, struct rep_agg *out)
{
    for (size_t s = 0; s < in->n_stacks; s++) {
        const uint32_t *ids = rep_agg_stack_ids(in, s);
        uint64_t node = 0;
        size_t k = 0;
        for (; k < in->stacks[s].n_ids; k++) {
            if (tree_node(t, node, ids[k], &node) != CMN_OK)
                return CMN_E_NOMEM;
            if ((double)t->nodes[node - 1].weight < threshold)
                break;
        }
        uint32_t pruned;
        if (k == 0 && rep_names_intern(names, "[pruned]", 8, &pruned) != CMN_OK)
            return CMN_E_NOMEM;
        if (rep_agg_add(out, k == 0 ? &pruned : ids, k == 0 ? 1 : k, in->stacks[s].weight) !=
            CMN_OK)
            return CMN_E_NOMEM;
    }
    return CMN_OK;
}

int rep_prune(struct rep_agg *in, struct rep_names *names, double percent,
              struct rep_agg *out /* out */)
{
    rep_agg_init(out);
    struct prune_tree t = {0};
    double threshold = (double)in->total_weight * percent / 100.0;
    int rc = build(&t, in);
    if (rc == CMN_OK)
        rc = cut(&t, in, names, threshold, out);
    tree_fini(&t);
    if (rc != CMN_OK) {
        rep_agg_fini(out);
        return rc;
    }
    /* The totals are in's: nothing was dropped, only moved up the tree. */
    out->total_weight = in->total_weight;
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
    in->locs = NULL;
    in->n_locs = 0;
    in->maps = NULL;
    in->n_maps = in->cap_maps = 0;
    return CMN_OK;
}
