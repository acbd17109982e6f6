/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Label sets as the reporter holds them across profiles: a set is its key=value pairs as
 * rep_names ids (reporter/symbols/names.h), sorted by key bytes, and one set is one id (1,
 * 2, ...; 0 is the empty set) whatever file it came from. The aggregate gives each sample
 * the set of its labels (its thread's, over its process's PROF_LABELS, and its trace), so
 * that the pprof output can write them on its samples. Owns its arrays; the strings are
 * the names table's. Reporter thread only.
 */
#ifndef PROF_REPORTER_STACKS_LSETS_H
#define PROF_REPORTER_STACKS_LSETS_H

#include <stddef.h>
#include <stdint.h>

#include "common/hashtab.h"

struct rep_lset {
    size_t at;     /* its first id in rep_lsets.ids: key, value, key, value, ... */
    uint32_t n;    /* pairs */
    uint64_t hash; /* of its ids */
};

struct rep_lsets {
    struct rep_lset *sets; /* id - 1 */
    size_t n_sets, cap_sets;
    uint32_t *ids;         /* every set's pairs, back to back */
    size_t n_ids, cap_ids;
    struct cmn_hashtab table; /* the sets by their ids (common/hashtab.h) */
};

/* Not async-signal-safe. */
/* Makes s empty. Returns CMN_OK. */
int rep_lsets_init(struct rep_lsets *s);
/* Frees what s owns. Accepts NULL. */
void rep_lsets_fini(struct rep_lsets *s);
/* The id of the set of n pairs kv (2n name ids, sorted by key), added if new; 0 for n 0.
 * CMN_OK or CMN_E_NOMEM. */
int rep_lsets_intern(struct rep_lsets *s, const uint32_t *kv, size_t n, uint32_t *id /* out */);
/* The pairs of set id (2 * *n name ids), NULL and *n 0 for 0 or an unknown id. */
const uint32_t *rep_lsets_get(const struct rep_lsets *s, uint32_t id, size_t *n /* out */);

#endif
