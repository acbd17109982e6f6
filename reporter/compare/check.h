/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The verdict of `prof check`: what regressed between the two sides of a struct rep_diff,
 * and which functions of the NEW side break a budget (reporter/compare/budget.h). A change is a
 * regression when it is both
 *
 *   - above a threshold: a function's self or total share grew by more than max_points
 *     percentage points, or by more than a factor max_ratio (for functions whose new share
 *     is at least min_ratio_percent); or the mean CPU time of a run grew by more than
 *     max_time_percent; and
 *   - significant: the one-sided p-value of the growth is below 1 - confidence, for the
 *     z-test on the pooled counts and, with two runs or more on each side, for the Welch
 *     test on per-run values as well (the larger p-value decides). CPU time has no
 *     sampling error of its own but varies from run to run with the machine's load: with
 *     two runs or more a side the Welch test on per-run times decides; with one run a
 *     side, whose spread cannot be measured, the runs are assumed to vary by time_cv (a
 *     coefficient of variation), so only a growth well beyond that counts.
 *
 * A budget rule is broken when a matching function's new share is above the limit and
 * the one-sided test of that share against the limit is significant at the same level.
 * Changes above a threshold that are not significant are kept as "within noise" and
 * printed after the regressions, but do not fail the check. Called by the check command
 * (reporter/cmd/diff.c) after rep_diff_compute(); reporter thread only.
 */
#ifndef PROF_REPORTER_COMPARE_CHECK_H
#define PROF_REPORTER_COMPARE_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct rep_budget;
struct rep_budget_rule;
struct rep_diff;
struct rep_names;

#define REP_CHECK_DEFAULT_POINTS 1.0       /* percentage points of share growth */
#define REP_CHECK_DEFAULT_RATIO 0.0        /* off */
#define REP_CHECK_DEFAULT_RATIO_MIN 1.0    /* percent of new share for the ratio test */
#define REP_CHECK_DEFAULT_TIME 5.0         /* percent of CPU time growth */
#define REP_CHECK_DEFAULT_TIME_CV 0.10     /* run-to-run spread assumed with one run a side */
#define REP_CHECK_DEFAULT_CONFIDENCE 0.999 /* one-sided */

struct rep_check_opts {
    double max_points;               /* share growth allowed in percentage points; < 0: no test */
    double max_ratio;                /* share growth allowed as new/base; 0: no test */
    double min_ratio_percent;        /* the ratio test skips functions whose new share is lower */
    double max_time_percent;         /* CPU time growth allowed in percent; < 0: no test */
    double time_cv;                  /* assumed sd / mean of a run's CPU time, for one run a side */
    double confidence;               /* in (0, 1): 1 - the largest p-value called significant */
    const struct rep_budget *budget; /* limits on the NEW side; NULL for none */
};

enum rep_check_what {
    REP_CHECK_SELF,   /* a function's self share grew */
    REP_CHECK_TOTAL,  /* a function's total share grew */
    REP_CHECK_TIME,   /* the CPU time of a run grew */
    REP_CHECK_BUDGET, /* a function's share is over a budget rule's limit */
};

struct rep_check_finding {
    enum rep_check_what what;
    uint32_t id;                        /* the function's name id; 0 for REP_CHECK_TIME */
    double base;                        /* share (0..1) or mean CPU seconds; the limit for
                                         * REP_CHECK_BUDGET (0..1) */
    double now;                         /* the NEW side's share or mean CPU seconds */
    double p;                           /* the deciding p-value */
    bool is_significant;                /* p < 1 - confidence */
    bool is_assumed;                    /* REP_CHECK_TIME: p from time_cv, not measured */
    bool is_ratio;                      /* only the ratio threshold was crossed */
    const struct rep_budget_rule *rule; /* REP_CHECK_BUDGET: the rule; not owned */
};

struct rep_check {
    struct rep_check_finding *items; /* regressions first, then those within noise */
    size_t n_items;
    size_t cap_items;
    size_t n_regressions; /* items[0 .. n_regressions) are significant */
};

/* Not async-signal-safe. */
/* Sets o to the defaults above, with no budget. */
void rep_check_defaults(struct rep_check_opts *o);
/* Judges d (computed) with o; c is initialized here. names gives the functions' names
 * for the budget patterns. CMN_OK or CMN_E_NOMEM. Free c with rep_check_fini(). */
int rep_check_run(struct rep_check *c /* out */, const struct rep_diff *d,
                  const struct rep_names *names, const struct rep_check_opts *o);
/* Frees what c owns. Accepts NULL. */
void rep_check_fini(struct rep_check *c);
/* Writes one line per finding, then a summary line, to out. CMN_OK or CMN_E_IO. */
int rep_check_print(FILE *out, const struct rep_check *c, const struct rep_diff *d,
                    const struct rep_names *names, const struct rep_check_opts *o);

#endif
