/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The flame graph's call tree: nodes in one growing array, found by (parent, name id) in
 * a hash table (common/hashtab.h), linked to their parent and, once ordered, to their first
 * child and next sibling. Ordering gathers each node's children, sorts them with qsort
 * and relinks them, then walks the tree top down to give every node its start. Reporter
 * thread only.
 */
#include "reporter/stacks/flame.h"

#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/err.h"
#include "common/grow.h"
#include "common/hash.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/symbols/names.h"

static uint64_t key_hash(uint32_t parent, uint32_t name_id)
{
    return cmn_hash_word(((uint64_t)parent << 32) | name_id);
}

static uint64_t node_hash(const void *ctx, uint32_t node)
{
    const struct rep_flame_node *nd = &((const struct rep_flame *)ctx)->nodes[node];
    return key_hash(nd->parent, nd->name_id);
}

/* What a node is found by: its parent and its name. */
struct node_key {
    uint32_t parent;
    uint32_t name_id;
};

static bool is_node(const void *ctx, uint32_t node, const void *key)
{
    const struct rep_flame_node *nd = &((const struct rep_flame *)ctx)->nodes[node];
    const struct node_key *k = key;
    return nd->parent == k->parent && nd->name_id == k->name_id;
}

/* Room for one more node. */
static int reserve(struct rep_flame *f)
{
    if (f->n_nodes >= REP_FLAME_NONE - 1)
        return CMN_E_NOMEM;
    if (!CMN_GROW(f->nodes, f->cap_nodes, f->n_nodes + 1, 256))
        return CMN_E_NOMEM;
    return cmn_hashtab_reserve(&f->table, node_hash, f) == 0 ? CMN_OK : CMN_E_NOMEM;
}

int rep_flame_init(struct rep_flame *f)
{
    memset(f, 0, sizeof(*f));
    cmn_hashtab_init(&f->table, 512);
    if (reserve(f) != CMN_OK)
        return CMN_E_NOMEM;
    f->nodes[0] = (struct rep_flame_node){.name_id = 0,
                                          .parent = REP_FLAME_NONE,
                                          .first_child = REP_FLAME_NONE,
                                          .next_sibling = REP_FLAME_NONE};
    f->n_nodes = 1;
    return CMN_OK;
}

void rep_flame_fini(struct rep_flame *f)
{
    if (f == NULL)
        return;
    free(f->nodes);
    cmn_hashtab_fini(&f->table);
    memset(f, 0, sizeof(*f));
}

uint32_t rep_flame_child(const struct rep_flame *f, uint32_t node, uint32_t name_id)
{
    assert(node < f->n_nodes);
    struct node_key key = {node, name_id};
    uint32_t child = cmn_hashtab_find(&f->table, key_hash(node, name_id), is_node, f, &key);
    return child == CMN_HASHTAB_NONE ? REP_FLAME_NONE : child;
}

/* The child of parent named name_id, made (first in its parent's list) if new. */
static int find_or_add(struct rep_flame *f, uint32_t parent, uint32_t name_id, uint32_t *node)
{
    *node = rep_flame_child(f, parent, name_id);
    if (*node != REP_FLAME_NONE)
        return CMN_OK;
    if (reserve(f) != CMN_OK)
        return CMN_E_NOMEM;
    uint32_t n = (uint32_t)f->n_nodes++;
    f->nodes[n] = (struct rep_flame_node){.name_id = name_id,
                                          .parent = parent,
                                          .first_child = REP_FLAME_NONE,
                                          .next_sibling = f->nodes[parent].first_child,
                                          .depth = f->nodes[parent].depth + 1};
    f->nodes[parent].first_child = n;
    cmn_hashtab_insert(&f->table, key_hash(parent, name_id), n);
    if (f->nodes[n].depth > f->max_depth)
        f->max_depth = f->nodes[n].depth;
    *node = n;
    return CMN_OK;
}

int rep_flame_add(struct rep_flame *f, const uint32_t *ids, size_t n, uint64_t weight)
{
    return rep_flame_add_split(f, ids, n, weight, 0);
}

int rep_flame_add_split(struct rep_flame *f, const uint32_t *ids, size_t n, uint64_t weight,
                        uint64_t off_weight)
{
    /* The nodes are made first and weighed after, so that a failure leaves every weight
     * as it was. */
    uint32_t node = REP_FLAME_ROOT;
    for (size_t i = 0; i < n; i++)
        if (find_or_add(f, node, ids[i], &node) != CMN_OK)
            return CMN_E_NOMEM;
    f->nodes[node].self += weight;
    for (; node != REP_FLAME_NONE; node = f->nodes[node].parent) {
        f->nodes[node].total += weight;
        f->nodes[node].off += off_weight;
    }
    return CMN_OK;
}

int rep_flame_build(struct rep_flame *f, const struct rep_agg *a, const struct rep_names *names)
{
    if (rep_flame_init(f) != CMN_OK)
        return CMN_E_NOMEM;
    uint64_t stacked = 0;
    for (size_t i = 0; i < a->n_stacks; i++) {
        const struct rep_stack *st = &a->stacks[i];
        if (rep_flame_add_split(f, rep_agg_stack_ids(a, i), st->n_ids, st->weight,
                                st->off_weight) != CMN_OK)
            goto fail;
        stacked += st->weight;
    }
    /* The samples without frames belong to the whole only. */
    if (a->total_weight > stacked && rep_flame_add(f, NULL, 0, a->total_weight - stacked) != CMN_OK)
        goto fail;
    f->seconds = a->is_time_partial ? 0 : a->seconds;
    if (rep_flame_order(f, names, REP_FLAME_BY_NAME) != CMN_OK)
        goto fail;
    return CMN_OK;
fail:
    rep_flame_fini(f);
    return CMN_E_NOMEM;
}

/* qsort has no context argument: the tree and names being sorted over. */
static const struct rep_flame *sort_flame;
static const struct rep_names *sort_names;

static int cmp_by_name(const void *va, const void *vb)
{
    const struct rep_flame_node *a = &sort_flame->nodes[*(const uint32_t *)va];
    const struct rep_flame_node *b = &sort_flame->nodes[*(const uint32_t *)vb];
    return strcmp(rep_names_get(sort_names, a->name_id), rep_names_get(sort_names, b->name_id));
}

static int cmp_by_total(const void *va, const void *vb)
{
    const struct rep_flame_node *a = &sort_flame->nodes[*(const uint32_t *)va];
    const struct rep_flame_node *b = &sort_flame->nodes[*(const uint32_t *)vb];
    if (a->total != b->total)
        return a->total > b->total ? -1 : 1;
    return cmp_by_name(va, vb);
}

/* Sorts the children of node, with kids as scratch room for them, and relinks them. */
static void sort_children(struct rep_flame *f, uint32_t node, uint32_t *kids,
                          int (*cmp)(const void *, const void *))
{
    size_t n = 0;
    for (uint32_t c = f->nodes[node].first_child; c != REP_FLAME_NONE; c = f->nodes[c].next_sibling)
        kids[n++] = c;
    if (n < 2)
        return;
    qsort(kids, n, sizeof(*kids), cmp);
    f->nodes[node].first_child = kids[0];
    for (size_t i = 0; i < n; i++)
        f->nodes[kids[i]].next_sibling = i + 1 < n ? kids[i + 1] : REP_FLAME_NONE;
}

int rep_flame_order(struct rep_flame *f, const struct rep_names *names, enum rep_flame_sort by)
{
    uint32_t *kids = malloc(f->n_nodes * sizeof(*kids));
    if (kids == NULL)
        return CMN_E_NOMEM;
    sort_flame = f;
    sort_names = names;
    for (size_t i = 0; i < f->n_nodes; i++)
        sort_children(f, (uint32_t)i, kids, by == REP_FLAME_BY_NAME ? cmp_by_name : cmp_by_total);
    free(kids);
    /* Starts, top down: a parent is always made before its children, so one pass in
     * index order sees every parent's start before its children need it. */
    f->nodes[REP_FLAME_ROOT].start = 0;
    for (size_t i = 0; i < f->n_nodes; i++) {
        uint64_t at = f->nodes[i].start;
        for (uint32_t c = f->nodes[i].first_child; c != REP_FLAME_NONE;
             c = f->nodes[c].next_sibling) {
            assert(c > i); /* made after its parent */
            f->nodes[c].start = at;
            at += f->nodes[c].total;
        }
        /* The children and the node's own samples fill it exactly. */
        assert(at + f->nodes[i].self == f->nodes[i].start + f->nodes[i].total);
    }
    return CMN_OK;
}
