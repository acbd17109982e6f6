/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The differential flame graph (see out_diff_svg.h). Each side's runs are merged into one
 * call tree (reporter/stacks/flame.h) over the shared names; every NEW node is paired with the
 * BASE node of the same path by walking down from the root with rep_flame_child() (a
 * node's parent always comes before it in the node array, so one pass in index order
 * does it); then out_svg.c draws the NEW tree through the colour and note hooks.
 * Reporter thread only.
 */
#include "reporter/output/diff_svg.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/err.h"
#include "reporter/compare/diff.h"
#include "reporter/output/svg.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/stacks/flame.h"
#include "reporter/symbols/names.h"

#define NEUTRAL_RGB 0xdcdcdcu /* unchanged or within noise */
#define PALE 220.0            /* the other channels of the faintest red or blue */

/* What the hooks read. */
struct diff_svg_ctx {
    const struct rep_flame *base; /* BASE's tree */
    const uint32_t *match;        /* per NEW node: its BASE node, or REP_FLAME_NONE */
    double max_change;            /* the largest |share change| of a significant node */
    double alpha;                 /* 1 - confidence */
};

/* Merges the runs of side into f, ordered by name. */
static int build_side(struct rep_flame *f, const struct rep_diff_side *side,
                      const struct rep_names *names)
{
    if (rep_flame_init(f) != CMN_OK)
        return CMN_E_NOMEM;
    for (size_t r = 0; r < side->n_runs; r++) {
        const struct rep_agg *a = &side->runs[r];
        uint64_t stacked = 0;
        for (size_t i = 0; i < a->n_stacks; i++) {
            if (rep_flame_add(f, rep_agg_stack_ids(a, i), a->stacks[i].n_ids,
                              a->stacks[i].weight) != CMN_OK)
                return CMN_E_NOMEM;
            stacked += a->stacks[i].weight;
        }
        if (a->total_weight > stacked && rep_flame_add(f, NULL, 0, a->total_weight - stacked))
            return CMN_E_NOMEM;
    }
    f->seconds = side->is_time_known ? side->seconds : 0;
    return rep_flame_order(f, names, REP_FLAME_BY_NAME);
}

static double share_of(const struct rep_flame *f, uint32_t node)
{
    uint64_t all = f->nodes[REP_FLAME_ROOT].total;
    return node == REP_FLAME_NONE || all == 0 ? 0.0 : (double)f->nodes[node].total / (double)all;
}

/* The change of node's share, and whether it is beyond noise. */
static double change_of(const struct diff_svg_ctx *c, const struct rep_flame *f, uint32_t node,
                        bool *is_significant)
{
    uint32_t m = c->match[node];
    uint64_t base_x = m == REP_FLAME_NONE ? 0 : c->base->nodes[m].total;
    uint64_t base_n = c->base->nodes[REP_FLAME_ROOT].total;
    uint64_t new_n = f->nodes[REP_FLAME_ROOT].total;
    *is_significant = rep_diff_p_counts(base_x, base_n, f->nodes[node].total, new_n) < c->alpha;
    return share_of(f, node) - share_of(c->base, m);
}

static void color_hook(void *ctx, const struct rep_flame *f, uint32_t node, uint32_t *rgb)
{
    const struct diff_svg_ctx *c = ctx;
    bool is_sig;
    double change = change_of(c, f, node, &is_sig);
    if (!is_sig || change == 0.0 || c->max_change <= 0.0) {
        *rgb = NEUTRAL_RGB;
        return;
    }
    double depth = fabs(change) / c->max_change; /* 0..1 */
    uint32_t pale = (uint32_t)lround(PALE * (1.0 - depth));
    *rgb = change > 0 ? 0xff0000u | pale << 8 | pale : pale << 16 | pale << 8 | 0xffu;
}

static size_t note_hook(void *ctx, const struct rep_flame *f, uint32_t node, char *buf, size_t cap)
{
    const struct diff_svg_ctx *c = ctx;
    bool is_sig;
    double change = change_of(c, f, node, &is_sig);
    int n = snprintf(buf, cap, "base %.2f %% -> new %.2f %% (%+.2f points%s)",
                     100.0 * share_of(c->base, c->match[node]), 100.0 * share_of(f, node),
                     100.0 * change, is_sig ? "" : ", within noise");
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* Pairs NEW's nodes with BASE's and finds the largest significant change. */
static int pair_nodes(struct diff_svg_ctx *c, const struct rep_flame *now, uint32_t **match)
{
    *match = malloc((now->n_nodes ? now->n_nodes : 1) * sizeof(**match));
    if (*match == NULL)
        return CMN_E_NOMEM;
    c->match = *match;
    (*match)[REP_FLAME_ROOT] = REP_FLAME_ROOT;
    for (uint32_t i = 1; i < now->n_nodes; i++) {
        uint32_t parent = (*match)[now->nodes[i].parent];
        (*match)[i] = parent == REP_FLAME_NONE
                          ? REP_FLAME_NONE
                          : rep_flame_child(c->base, parent, now->nodes[i].name_id);
    }
    for (uint32_t i = 1; i < now->n_nodes; i++) {
        bool is_sig;
        double change = fabs(change_of(c, now, i, &is_sig));
        if (is_sig && change > c->max_change)
            c->max_change = change;
    }
    return CMN_OK;
}

int rep_out_diff_svg(FILE *out, const struct rep_diff *d, const struct rep_names *names,
                     double confidence)
{
    struct rep_flame base = {0}, now = {0};
    struct diff_svg_ctx c = {.base = &base, .alpha = 1.0 - confidence};
    uint32_t *match = NULL;
    int rc = build_side(&base, &d->sides[REP_DIFF_BASE], names);
    if (rc == CMN_OK)
        rc = build_side(&now, &d->sides[REP_DIFF_NEW], names);
    if (rc == CMN_OK)
        rc = pair_nodes(&c, &now, &match);
    if (rc == CMN_OK) {
        char subtitle[256];
        snprintf(subtitle, sizeof(subtitle),
                 "NEW (%" PRIu64 " samples) against BASE (%" PRIu64
                 " samples): red grew, blue shrank, grey within noise",
                 now.nodes[REP_FLAME_ROOT].total, base.nodes[REP_FLAME_ROOT].total);
        struct rep_flame_opts o = {
            .title = "Differential flame graph",
            .subtitle = subtitle,
            .color = color_hook,
            .note = note_hook,
            .hook_ctx = &c,
        };
        rc = rep_out_svg(out, &now, names, &o);
    }
    free(match);
    rep_flame_fini(&now);
    rep_flame_fini(&base);
    return rc;
}
