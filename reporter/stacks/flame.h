/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The flame graph's call tree: the stacks of an aggregate merged from the root, so that
 * every distinct call path is one node with its self weight (samples where it is the
 * leaf) and total weight (samples that pass through it). Recursion stays as it is in the
 * stacks: main;f;f is the node f under the node f under main, so a total never counts a
 * sample twice. Node 0 is the root "all", whose total is every sample's weight, empty
 * samples included (they are its self weight). The graph outputs (out_svg.c, out_html.c,
 * out_json.c) read it, and so can `prof diff`: it builds one tree per side over the same
 * rep_names, pairs nodes with rep_flame_child(), and draws through the hooks of struct
 * rep_flame_opts (a colour and an extra tooltip line per node). After
 * rep_flame_order() the children of every node are a sibling list in the chosen order
 * and every node has its start, the weight to its left in the graph.
 * The tree owns its memory; reporter thread only.
 */
#ifndef PROF_REPORTER_STACKS_FLAME_H
#define PROF_REPORTER_STACKS_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hashtab.h"

struct rep_agg;
struct rep_names;

#define REP_FLAME_ROOT 0u         /* index of the root node, "all" */
#define REP_FLAME_NONE UINT32_MAX /* no node */
#define REP_FLAME_MIN_WIDTH 0.001 /* default: frames under 0.1 % of the total are not drawn */

struct rep_flame_node {
    uint32_t name_id;      /* rep_names id of the function; unused for the root */
    uint32_t parent;       /* node index; REP_FLAME_NONE for the root */
    uint32_t first_child;  /* node index, REP_FLAME_NONE for a leaf; see rep_flame_order */
    uint32_t next_sibling; /* node index, REP_FLAME_NONE for the last child */
    uint32_t depth;        /* 0 for the root, 1 for the outermost functions */
    uint64_t self;         /* weight of the stacks that end here */
    uint64_t total;        /* weight of the stacks that pass through here, self included */
    uint64_t off;          /* of total, the weight off CPU (wall profiles) */
    uint64_t start;        /* weight left of this frame in the graph; set by rep_flame_order */
};

struct rep_flame {
    struct rep_flame_node *nodes; /* n_nodes entries, the root first */
    size_t n_nodes;
    size_t cap_nodes;
    struct cmn_hashtab table; /* the nodes but the root by (parent, name_id)
                               * (common/hashtab.h) */
    uint32_t max_depth; /* of any node */
    double seconds;     /* CPU seconds the total stands for, 0 if unknown */
};

enum rep_flame_sort {
    REP_FLAME_BY_NAME,  /* children by name, bytewise (as flamegraph.pl draws them) */
    REP_FLAME_BY_TOTAL, /* children by total, largest first, then by name */
};

/*
 * Drawing hooks, for a differential flame graph. Both are optional (NULL). color writes
 * the fill of node as 0xRRGGBB into *rgb; without it a frame gets a warm colour from a
 * hash of its name, the same in every graph. note writes at most cap bytes (NUL
 * included) of text for one more tooltip line of node, e.g. "+12 samples (+1.5 %)", and
 * returns its length, 0 for none. ctx is rep_flame_opts.hook_ctx.
 */
typedef void rep_flame_color_fn(void *ctx, const struct rep_flame *f, uint32_t node,
                                uint32_t *rgb /* out */);
typedef size_t rep_flame_note_fn(void *ctx, const struct rep_flame *f, uint32_t node,
                                 char *buf /* out */, size_t cap);

/* How out_svg.c and out_html.c draw a tree. Zero-initialized means the defaults. */
struct rep_flame_opts {
    const char *title;         /* NULL: "Flame graph" */
    const char *subtitle;      /* NULL: the total in samples (and seconds when known) */
    bool is_icicle;            /* root at the top instead of the bottom */
    double min_width;          /* fraction of the total under which frames are not drawn;
                                * 0: REP_FLAME_MIN_WIDTH, negative: draw every frame */
    rep_flame_color_fn *color; /* optional, see above */
    rep_flame_note_fn *note;   /* optional, see above */
    void *hook_ctx;            /* passed to color and note */
};

/* Not async-signal-safe; not re-entrant (rep_flame_order sorts with a static context). */
/* Makes f a tree with the root alone. CMN_OK or CMN_E_NOMEM. */
int rep_flame_init(struct rep_flame *f);
/* Frees what f owns. Accepts NULL. */
void rep_flame_fini(struct rep_flame *f);
/* Adds weight along the path of n ids (root first; n may be 0: the root's self).
 * CMN_OK or CMN_E_NOMEM (the tree keeps the part of the path already added, with its
 * weights unchanged). Call rep_flame_order() again before reading start or siblings. */
int rep_flame_add(struct rep_flame *f, const uint32_t *ids, size_t n, uint64_t weight);
/* The same, off_weight of it off CPU. */
int rep_flame_add_split(struct rep_flame *f, const uint32_t *ids, size_t n, uint64_t weight,
                        uint64_t off_weight);
/* rep_flame_init, then every stack of a, the empty samples as the root's self, the
 * seconds of a (when every profile had a rate), then rep_flame_order by name. On failure
 * f is empty (fini'd). CMN_OK or CMN_E_NOMEM. */
int rep_flame_build(struct rep_flame *f, const struct rep_agg *a, const struct rep_names *names);
/* Sorts every node's children by `by` and sets every node's start. CMN_OK or
 * CMN_E_NOMEM (then the order is unchanged). */
int rep_flame_order(struct rep_flame *f, const struct rep_names *names, enum rep_flame_sort by);
/* The child of node named name_id, or REP_FLAME_NONE. */
uint32_t rep_flame_child(const struct rep_flame *f, uint32_t node, uint32_t name_id);

#endif
