/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `--prune P` (formerly `--min-percent`): pruning the call tree of an aggregate. Every
 * stack prefix (root to some frame) is a node of the call tree whose weight is the summed
 * weight of the stacks through it. A node under P % of the total weight is cut with
 * everything below it, and its weight goes to its parent: a stack through it ends at the
 * last frame above it, so that frame's self weight grows. A stack whose root itself is under P % becomes the one
 * frame "[pruned]". The total weight, and every kept function's total, do not change; a
 * function whose every node is under P % disappears from every output. main() calls it
 * between aggregation and output; reporter thread only.
 */
#ifndef PROF_REPORTER_STACKS_PRUNE_H
#define PROF_REPORTER_STACKS_PRUNE_H

struct rep_agg;
struct rep_names;

/* Not async-signal-safe. */
/* Fills out (which this initializes; free it with rep_agg_fini) with the stacks of in
 * pruned at percent (0..100) of in's total weight, and in's totals. The locations and
 * mappings of in (with is_locs) move to out. CMN_OK or CMN_E_NOMEM (out then freed). */
int rep_prune(struct rep_agg *in, struct rep_names *names, double percent,
              struct rep_agg *out /* out */);

#endif
