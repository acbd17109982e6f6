/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The differential profile: two sides, BASE and NEW, each a set of runs (one aggregate per
 * profile file, all named through one struct rep_names), compared per function. For each
 * function it computes the self weight (samples where the function is the leaf) and the
 * total weight (samples where it is anywhere on the stack, once per stack), pooled over the
 * runs of a side, as shares of that side's samples; then whether each change can be told
 * from sampling noise:
 *
 *   - the two-proportion z-test on the pooled counts: z = (p_new - p_base) / se, with
 *     se = sqrt(p (1 - p) (1/n_base + 1/n_new)) and p the share of both sides together;
 *   - with two runs or more on each side, Welch's t-test on the per-run shares, so that
 *     run-to-run variance (phases, input, machine load) counts as well as sampling error.
 *
 * Every p-value here is one-sided in the direction of the observed change: the chance of a
 * change at least this large in this direction when nothing changed. The total CPU time
 * of a run is its weight over its sampling rate (rep_agg.seconds); with two runs or more
 * a side its change gets a Welch test too.
 *
 * main's diff and check commands (reporter/cmd/diff.c) fill it and the outputs
 * (out_diff.c, check.c) read it. Owns its aggregates and arrays; reporter thread only.
 */
#ifndef PROF_REPORTER_COMPARE_DIFF_H
#define PROF_REPORTER_COMPARE_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reporter/stacks/aggregate.h"

struct rep_profile;
struct rep_sym;

#define REP_DIFF_BASE 0
#define REP_DIFF_NEW 1
#define REP_DIFF_NO_P (-1.0) /* a p-value that could not be computed (too few runs) */

/* One side: the runs given for it, in order. */
struct rep_diff_side {
    struct rep_agg *runs;  /* one aggregate per profile; owned */
    size_t n_runs;         /* aggregates in use */
    size_t cap_runs;       /* aggregates allocated */
    uint64_t total_weight; /* of every run; set by rep_diff_compute */
    double seconds;        /* CPU seconds of every run; set by rep_diff_compute */
    bool is_time_known;    /* every run had a sampling rate; set by rep_diff_compute */
};

/* One function, after rep_diff_compute. Shares are fractions of the side's weight. */
struct rep_diff_fn {
    uint32_t id;             /* name id */
    uint64_t self[2];        /* pooled self weight, [REP_DIFF_BASE] and [REP_DIFF_NEW] */
    uint64_t total[2];       /* pooled total weight */
    double self_share[2];    /* self / the side's weight, 0..1 */
    double total_share[2];   /* total / the side's weight, 0..1 */
    double self_p_count;     /* z-test on the pooled counts, one-sided */
    double total_p_count;    /* the same for the total share */
    double self_p_runs;      /* Welch test on per-run shares, or REP_DIFF_NO_P */
    double total_p_runs;     /* the same for the total share */
    double self_sd_runs[2];  /* standard deviation of the per-run self shares, 0 for 1 run */
    double total_sd_runs[2]; /* the same for the total shares */
};

/* Total CPU time, after rep_diff_compute. */
struct rep_diff_time {
    bool is_known;  /* every run on both sides had a rate and the base took some time */
    double mean[2]; /* CPU seconds per run, mean over the side's runs */
    double sd[2];   /* standard deviation over the side's runs, 0 for one run */
    double change;  /* mean[NEW] / mean[BASE] - 1 */
    double p;       /* Welch test, one-sided; REP_DIFF_NO_P with fewer than 2 runs a side */
};

struct rep_diff {
    struct rep_diff_side sides[2]; /* [REP_DIFF_BASE], [REP_DIFF_NEW] */
    struct rep_diff_fn *fns;       /* by descending size of change; set by rep_diff_compute */
    size_t n_fns;                  /* functions with weight on either side */
    struct rep_diff_time time;     /* set by rep_diff_compute */
};

/* Not async-signal-safe. */
/* Makes d an empty comparison. Returns CMN_OK. */
int rep_diff_init(struct rep_diff *d);
/* Frees what d owns. Accepts NULL. */
void rep_diff_fini(struct rep_diff *d);
/* Adds an empty run to side (REP_DIFF_BASE or REP_DIFF_NEW); *run points to its aggregate
 * until the next call. CMN_OK or CMN_E_NOMEM. */
int rep_diff_new_run(struct rep_diff *d, int side, struct rep_agg **run /* out */);
/* Adds profile p as a run of side, symbolized with sym (already switched to p). CMN_OK or
 * CMN_E_NOMEM. */
int rep_diff_add_profile(struct rep_diff *d, int side, struct rep_sym *sym,
                         const struct rep_profile *p);
/* Computes the functions, shares, tests and time once every run is in; n_names is the
 * number of ids of the names table the runs use. May be called again after more runs.
 * CMN_OK or CMN_E_NOMEM. */
int rep_diff_compute(struct rep_diff *d, uint32_t n_names);

/* The statistics, exported for the tests and for check.c. */
/* One-sided p-value of a share of x2 in n2 against x1 in n1, in the direction of the
 * change (the two-proportion z-test). 1 when the shares are equal or a side is empty. */
double rep_diff_p_counts(uint64_t x1, uint64_t n1, uint64_t x2, uint64_t n2);
/* One-sided p-value of a share x in n being above p0 (the binomial normal approximation);
 * 1 when x/n <= p0. */
double rep_diff_p_above(uint64_t x, uint64_t n, double p0);
/* One-sided p-value of the mean of the n2 values b differing from that of the n1 values a,
 * in the direction of the change (Welch's t-test). REP_DIFF_NO_P when n1 or n2 is below 2. */
double rep_diff_p_welch(const double *a, size_t n1, const double *b, size_t n2);
/* P(T > t) for Student's t with df degrees of freedom (df > 0, not necessarily whole). */
double rep_diff_t_sf(double t, double df);

#endif
