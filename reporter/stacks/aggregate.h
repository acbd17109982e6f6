/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Stacks summed: every distinct symbolized stack (a sequence of name ids, root first) with
 * the total weight of the samples that had it. Two samples whose addresses differ but
 * whose functions are the same merge; frames repeated by recursion stay, as they are
 * real. main() feeds it each profile after symbolizing; the outputs (out_folded.c,
 * out_top.c) read the stacks. It also keeps the totals the outputs print. Owns its
 * memory; reporter thread only.
 */
#ifndef PROF_REPORTER_STACKS_AGGREGATE_H
#define PROF_REPORTER_STACKS_AGGREGATE_H

#include "common/check.h"
#include "common/hashtab.h"
#include "reporter/stacks/lsets.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rep_filter;
struct rep_progress;
struct rep_profile;
struct rep_sym;

/* A mapping a location was seen in, kept across profiles for the pprof output. */
struct rep_agg_map {
    uint64_t start;       /* first address */
    uint64_t end;         /* one past the last */
    uint64_t file_offset; /* offset in the file of the byte at start */
    char *path;           /* owned */
    uint8_t build_id_len; /* bytes of build_id in use */
    uint8_t build_id[32];
};

/* Where a name id was first seen (with is_locs). */
struct rep_agg_loc {
    uint64_t addr;     /* a frame address that resolved to it, 0 when none was recorded */
    uint32_t map_plus; /* 1 + its index in rep_agg.maps, 0 when outside any mapping */
};

struct rep_stack {
    size_t ids_at;       /* index of its first (root) id in rep_agg.ids */
    uint32_t n_ids;      /* frames, at least 1 */
    uint64_t weight;     /* summed sample weights */
    uint64_t off_weight; /* of that, the weight of samples off CPU (wall profiles) */
    uint64_t hash;       /* of the ids and labels, for the table */
    uint32_t labels;     /* with is_label_sets: the samples' labels, a rep_lsets id (the
                          * same ids with other labels are another stack); else 0 */
};

/* One sample in a timeline (rep_agg.timeline): when, which stack, how much time. */
struct rep_agg_tick {
    uint64_t time_ns;  /* CLOCK_MONOTONIC, the sample's */
    uint32_t stack;    /* index in rep_agg.stacks */
    uint32_t weight;   /* the sample's weight */
    uint64_t span_ns;  /* the time it stands for: its weight in periods of its profile's
                        * rate (CPU time, or wall time in a wall profile) */
};

/* A label every profile added has (PROF_REC_LABELS), for the pprof output. */
struct rep_agg_label {
    char *key;   /* owned */
    char *value; /* owned */
};

struct rep_agg {
    uint32_t *ids; /* the frames of every stack, root first, back to back */
    size_t n_ids;
    size_t cap_ids;

    struct rep_stack *stacks; /* in order of first appearance */
    size_t n_stacks;
    size_t cap_stacks;

    struct cmn_hashtab table; /* the stacks by their ids (common/hashtab.h) */

    uint32_t *scratch; /* one sample's ids while it is built */
    size_t cap_scratch;

    uint64_t total_weight; /* of every sample added */
    uint64_t off_weight;   /* of those, the weight of samples off CPU (wall profiles) */
    bool *is_state;        /* per name id: a thread state's frame ("[sleep: futex]"); entries
                            * past n_is_state are false */
    size_t n_is_state;
    bool is_wall;          /* a profile added is a wall-clock one */
    struct rep_agg_label *labels; /* the labels all profiles added have in common */
    size_t n_labels;
    bool has_labels;       /* labels holds the first profile's, narrowed since */
    uint64_t n_samples;    /* samples added, the empty ones included */
    uint64_t n_empty;      /* samples without frames, which make no stack */
    double seconds;        /* weight over each profile's rate, for profiles with a rate */
    uint64_t timed_weight; /* the weight that seconds accounts for */
    size_t n_profiles;     /* profiles added with rep_agg_add_profile */
    uint32_t requested_hz; /* the rate asked for, 0 if unknown or not the same for all */
    bool is_time_partial;  /* some profile had no rate, so seconds misses its weight */

    /* Set by the caller before the first profile; all off after rep_agg_init. */
    struct rep_filter *filter; /* which samples to keep; NULL keeps all; not owned */
    bool is_threads;   /* each stack gets "thread-name (tid)" as its root (--threads) */
    bool is_processes; /* each stack gets "exe (pid)" as its root, above the thread's
                        * (--processes) */
    bool is_locs;      /* remember an address and mapping per name id (locs, maps) */
    bool is_label_sets; /* keep each sample's labels with its stack (lsets; pprof) */
    bool is_timeline;   /* keep every sample in timeline, in the order added */
    const char *const *by_labels; /* --by-label: each stack gets "KEY=VALUE" root frames,
                                   * one per key, the first outermost (not owned) */
    size_t n_by_labels;
    struct rep_progress *progress; /* told how far each profile is; NULL none; not owned */

    uint64_t start_real_ns;    /* CLOCK_REALTIME at the earliest profile's start, 0 unknown */
    uint64_t duration_ns;      /* the longest profile's duration (its stats), 0 unknown */
    uint64_t profile_weight;   /* kept weight of the profile being added (add_samples) */
    size_t profile_samples;    /* its samples seen so far, for the progress bar */
    uint64_t n_filtered;       /* samples the filter left out */
    uint64_t filtered_weight;  /* and their weight */
    struct rep_agg_loc *locs;  /* per name id, with is_locs; entries past n_locs are unset */
    size_t n_locs;
    struct rep_agg_map *maps; /* the mappings locs point to; owned */
    size_t n_maps;
    size_t cap_maps;
    struct rep_lsets lsets;   /* the label sets stacks name, with is_label_sets */
    struct rep_agg_tick *timeline; /* with is_timeline: every sample with frames */
    size_t n_timeline, cap_timeline;
    uint32_t last_stack;      /* the stack the last sample added went to, UINT32_MAX none */
    uint32_t *label_scratch;  /* one sample's label pairs while its set is made */
    size_t cap_label_scratch;
};

/* Not async-signal-safe. */
/* Makes a an empty aggregate. Returns CMN_OK. */
int rep_agg_init(struct rep_agg *a);
/* Frees what a owns. Accepts NULL. */
void rep_agg_fini(struct rep_agg *a);
/* Adds weight to the stack of n ids at ids (root first); n may be 0 (counted, no stack).
 * The weight is off CPU when the leaf is a state's frame. CMN_OK or CMN_E_NOMEM. */
int rep_agg_add(struct rep_agg *a, const uint32_t *ids, size_t n, uint64_t weight);
/* The same with the part of weight off CPU given (off_weight <= weight). */
int rep_agg_add_split(struct rep_agg *a, const uint32_t *ids, size_t n, uint64_t weight,
                      uint64_t off_weight);
/* The same with the samples' labels (a rep_lsets id of a->lsets, 0 none). */
int rep_agg_add_labeled(struct rep_agg *a, const uint32_t *ids, size_t n, uint64_t weight,
                        uint64_t off_weight, uint32_t labels);
/* Whether name id is a thread state's frame. */
static inline bool rep_agg_is_state(const struct rep_agg *a, uint32_t id)
{
    return id < a->n_is_state && a->is_state[id];
}
/* Symbolizes every sample of p that a->filter keeps with sym (already switched to p) and
 * adds it, with the root frames is_threads and is_processes ask for. CMN_OK or
 * CMN_E_NOMEM. */
int rep_agg_add_profile(struct rep_agg *a, struct rep_sym *sym, const struct rep_profile *p);
/* The same in parts, for a profile read as a stream (rep_read_file_stream): add the
 * samples p holds now, as many times as there are batches, then end the profile once, which
 * accounts its time. CMN_OK or CMN_E_NOMEM. */
int rep_agg_add_samples(struct rep_agg *a, struct rep_sym *sym, const struct rep_profile *p);
void rep_agg_end_profile(struct rep_agg *a, const struct rep_profile *p);

/* The ids of stack i, root first. */
static inline const uint32_t *rep_agg_stack_ids(const struct rep_agg *a, size_t i)
{
    assert(i < a->n_stacks);
    return a->ids + a->stacks[i].ids_at;
}

#endif
