/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Label sets of the reporter (see lsets.h): a hash table over arrays of name ids. */
#include "reporter/stacks/lsets.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"
#include "common/hash.h"

int rep_lsets_init(struct rep_lsets *s)
{
    memset(s, 0, sizeof(*s));
    return CMN_OK;
}

void rep_lsets_fini(struct rep_lsets *s)
{
    if (s == NULL)
        return;
    free(s->sets);
    free(s->ids);
    cmn_hashtab_fini(&s->table);
    memset(s, 0, sizeof(*s));
}

struct lset_key {
    const uint32_t *kv;
    size_t n;
    uint64_t hash;
};

static uint64_t hash_of(const void *ctx, uint32_t i)
{
    return ((const struct rep_lsets *)ctx)->sets[i].hash;
}

static bool is_set(const void *ctx, uint32_t i, const void *key)
{
    const struct rep_lsets *s = ctx;
    const struct lset_key *k = key;
    const struct rep_lset *e = &s->sets[i];
    return e->hash == k->hash && e->n == k->n &&
           memcmp(s->ids + e->at, k->kv, 2 * k->n * sizeof(*k->kv)) == 0;
}

int rep_lsets_intern(struct rep_lsets *s, const uint32_t *kv, size_t n, uint32_t *id)
{
    *id = 0;
    if (n == 0)
        return CMN_OK;
    struct lset_key k = {kv, n, cmn_hash_bytes(kv, 2 * n * sizeof(*kv))};
    uint32_t i = cmn_hashtab_find(&s->table, k.hash, is_set, s, &k);
    if (i != CMN_HASHTAB_NONE) {
        *id = i + 1;
        return CMN_OK;
    }
    if (!CMN_GROW(s->ids, s->cap_ids, s->n_ids + 2 * n, 256) ||
        !CMN_GROW(s->sets, s->cap_sets, s->n_sets + 1, 64) ||
        cmn_hashtab_reserve(&s->table, hash_of, s) != 0)
        return CMN_E_NOMEM;
    memcpy(s->ids + s->n_ids, kv, 2 * n * sizeof(*kv));
    s->sets[s->n_sets] = (struct rep_lset){.at = s->n_ids, .n = (uint32_t)n, .hash = k.hash};
    cmn_hashtab_insert(&s->table, k.hash, (uint32_t)s->n_sets);
    s->n_ids += 2 * n;
    *id = (uint32_t)++s->n_sets;
    return CMN_OK;
}

const uint32_t *rep_lsets_get(const struct rep_lsets *s, uint32_t id, size_t *n)
{
    if (id == 0 || id > s->n_sets) {
        *n = 0;
        return NULL;
    }
    *n = s->sets[id - 1].n;
    return s->ids + s->sets[id - 1].at;
}
