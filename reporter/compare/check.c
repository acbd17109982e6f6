/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The check's thresholds, budget and verdict (see check.h). Every candidate that crosses a
 * threshold becomes a finding; the significant ones are moved to the front, in the order
 * found (functions by size of change, then the time, then the budget), so that the report
 * prints regressions first. Reporter thread only.
 */
#include "reporter/compare/check.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"
#include "reporter/compare/budget.h"
#include "reporter/compare/diff.h"
#include "reporter/symbols/names.h"

void rep_check_defaults(struct rep_check_opts *o)
{
    *o = (struct rep_check_opts){
        .max_points = REP_CHECK_DEFAULT_POINTS,
        .max_ratio = REP_CHECK_DEFAULT_RATIO,
        .min_ratio_percent = REP_CHECK_DEFAULT_RATIO_MIN,
        .max_time_percent = REP_CHECK_DEFAULT_TIME,
        .time_cv = REP_CHECK_DEFAULT_TIME_CV,
        .confidence = REP_CHECK_DEFAULT_CONFIDENCE,
    };
}

void rep_check_fini(struct rep_check *c)
{
    if (c == NULL)
        return;
    free(c->items);
    memset(c, 0, sizeof(*c));
}

static int add_finding(struct rep_check *c, const struct rep_check_finding *f)
{
    if (!CMN_GROW(c->items, c->cap_items, c->n_items + 1, 16))
        return CMN_E_NOMEM;
    c->items[c->n_items++] = *f;
    return CMN_OK;
}

/* The larger of a count test's and a run test's p-value; the run test may be missing. */
static double deciding_p(double p_count, double p_runs)
{
    return p_runs != REP_DIFF_NO_P && p_runs > p_count ? p_runs : p_count;
}

/* Whether a share going from base to now (0..1) crosses a threshold; *is_ratio when only
 * the ratio one does. */
static bool over_threshold(double base, double now, const struct rep_check_opts *o, bool *is_ratio)
{
    *is_ratio = false;
    if (o->max_points >= 0 && 100.0 * (now - base) > o->max_points)
        return true;
    if (o->max_ratio > 0 && now > base && 100.0 * now >= o->min_ratio_percent &&
        (base <= 0.0 || now / base > o->max_ratio)) {
        *is_ratio = true;
        return true;
    }
    return false;
}

/* A function's self or total share, as a finding when it crossed a threshold. */
static int check_share(struct rep_check *c, const struct rep_diff_fn *fn, bool is_self,
                       const struct rep_check_opts *o)
{
    const double *sh = is_self ? fn->self_share : fn->total_share;
    struct rep_check_finding f = {
        .what = is_self ? REP_CHECK_SELF : REP_CHECK_TOTAL,
        .id = fn->id,
        .base = sh[REP_DIFF_BASE],
        .now = sh[REP_DIFF_NEW],
    };
    if (!over_threshold(f.base, f.now, o, &f.is_ratio))
        return CMN_OK;
    f.p = is_self ? deciding_p(fn->self_p_count, fn->self_p_runs)
                  : deciding_p(fn->total_p_count, fn->total_p_runs);
    f.is_significant = f.p < 1.0 - o->confidence;
    return add_finding(c, &f);
}

static int check_time(struct rep_check *c, const struct rep_diff *d, const struct rep_check_opts *o)
{
    const struct rep_diff_time *t = &d->time;
    if (!t->is_known || o->max_time_percent < 0 || 100.0 * t->change <= o->max_time_percent)
        return CMN_OK;
    struct rep_check_finding f = {
        .what = REP_CHECK_TIME,
        .base = t->mean[REP_DIFF_BASE],
        .now = t->mean[REP_DIFF_NEW],
        .p = t->p,
    };
    if (f.p == REP_DIFF_NO_P) {
        /* One run a side gives no spread to test against: the difference of two runs
         * that each vary by time_cv has a spread of time_cv * sqrt(2). */
        f.is_assumed = true;
        f.p = o->time_cv > 0 ? 0.5 * erfc(t->change / (o->time_cv * M_SQRT2) / M_SQRT2) : 0.0;
    }
    f.is_significant = f.p < 1.0 - o->confidence;
    return add_finding(c, &f);
}

static int check_budget(struct rep_check *c, const struct rep_diff *d,
                        const struct rep_names *names, const struct rep_check_opts *o)
{
    uint64_t n = d->sides[REP_DIFF_NEW].total_weight;
    for (size_t r = 0; r < o->budget->n_rules; r++) {
        const struct rep_budget_rule *rule = &o->budget->rules[r];
        double limit = rule->max_percent / 100.0;
        for (size_t i = 0; i < d->n_fns; i++) {
            const struct rep_diff_fn *fn = &d->fns[i];
            uint64_t x = rule->is_self ? fn->self[REP_DIFF_NEW] : fn->total[REP_DIFF_NEW];
            if (n == 0 || (double)x / (double)n <= limit ||
                !rep_budget_matches(rule, rep_names_get(names, fn->id)))
                continue;
            struct rep_check_finding f = {
                .what = REP_CHECK_BUDGET,
                .id = fn->id,
                .base = limit,
                .now = (double)x / (double)n,
                .p = rep_diff_p_above(x, n, limit),
                .rule = rule,
            };
            f.is_significant = f.p < 1.0 - o->confidence;
            if (add_finding(c, &f) != CMN_OK)
                return CMN_E_NOMEM;
        }
    }
    return CMN_OK;
}

/* Moves the significant findings to the front, each group keeping its order. */
static int partition(struct rep_check *c)
{
    struct rep_check_finding *tmp = malloc((c->n_items ? c->n_items : 1) * sizeof(*tmp));
    if (tmp == NULL)
        return CMN_E_NOMEM;
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < c->n_items; i++)
            if (c->items[i].is_significant == (pass == 0))
                tmp[n++] = c->items[i];
    for (size_t i = 0; i < c->n_items; i++)
        c->n_regressions += c->items[i].is_significant;
    if (c->n_items)
        memcpy(c->items, tmp, c->n_items * sizeof(*tmp));
    free(tmp);
    return CMN_OK;
}

int rep_check_run(struct rep_check *c, const struct rep_diff *d, const struct rep_names *names,
                  const struct rep_check_opts *o)
{
    memset(c, 0, sizeof(*c));
    /* Without a baseline only the budget applies. */
    bool has_base = d->sides[REP_DIFF_BASE].n_runs > 0;
    for (size_t i = 0; has_base && i < d->n_fns; i++) {
        if (check_share(c, &d->fns[i], true, o) != CMN_OK ||
            check_share(c, &d->fns[i], false, o) != CMN_OK)
            return CMN_E_NOMEM;
    }
    if (has_base && check_time(c, d, o) != CMN_OK)
        return CMN_E_NOMEM;
    if (o->budget != NULL && check_budget(c, d, names, o) != CMN_OK)
        return CMN_E_NOMEM;
    return partition(c);
}

/* Prints a name with control characters as spaces, so that a finding stays one line. */
static void print_name(FILE *out, const char *name)
{
    for (const unsigned char *ch = (const unsigned char *)name; *ch; ch++)
        fputc(*ch < 0x20 || *ch == 0x7f ? ' ' : *ch, out);
}

static void print_p(FILE *out, double p)
{
    fprintf(out, "p = %.2g", p);
}

static void print_finding(FILE *out, const struct rep_check_finding *f,
                          const struct rep_names *names)
{
    fputs(f->is_significant ? (f->what == REP_CHECK_BUDGET ? "over budget: " : "regression: ")
                            : "within noise: ",
          out);
    if (f->what == REP_CHECK_TIME) {
        fprintf(out, "CPU time per run %.3f s -> %.3f s (%+.1f %%; ", f->base, f->now,
                100.0 * (f->now / f->base - 1.0));
        print_p(out, f->p);
        fputs(f->is_assumed ? ", one run a side: spread assumed)\n" : ")\n", out);
        return;
    }
    print_name(out, rep_names_get(names, f->id));
    const char *kind =
        f->what == REP_CHECK_SELF || (f->rule && f->rule->is_self) ? "self" : "total";
    if (f->what == REP_CHECK_BUDGET) {
        fprintf(out, ": %s share %.2f %% > %g %% (budget line %u, '%s'; ", kind, 100.0 * f->now,
                f->rule->max_percent, f->rule->line, f->rule->pattern);
    } else {
        fprintf(out, ": %s share %.2f %% -> %.2f %% (%+.2f points", kind, 100.0 * f->base,
                100.0 * f->now, 100.0 * (f->now - f->base));
        if (f->is_ratio && f->base > 0)
            fprintf(out, ", x%.2f", f->now / f->base);
        fputs("; ", out);
    }
    print_p(out, f->p);
    fputs(")\n", out);
}

int rep_check_print(FILE *out, const struct rep_check *c, const struct rep_diff *d,
                    const struct rep_names *names, const struct rep_check_opts *o)
{
    for (size_t i = 0; i < c->n_items; i++)
        print_finding(out, &c->items[i], names);
    const struct rep_diff_side *b = &d->sides[REP_DIFF_BASE], *n = &d->sides[REP_DIFF_NEW];
    if (c->n_regressions == 0)
        fputs("prof check: ok, nothing regressed", out);
    else
        fprintf(out, "prof check: FAILED, %zu regression%s", c->n_regressions,
                c->n_regressions == 1 ? "" : "s");
    fprintf(out,
            " (base %zu run%s, %" PRIu64 " samples; new %zu run%s, %" PRIu64
            " samples; confidence %g %%",
            b->n_runs, b->n_runs == 1 ? "" : "s", b->total_weight, n->n_runs,
            n->n_runs == 1 ? "" : "s", n->total_weight, 100.0 * o->confidence);
    if (c->n_items > c->n_regressions)
        fprintf(out, "; %zu within noise", c->n_items - c->n_regressions);
    fputs(")\n", out);
    return fflush(out) == 0 && !ferror(out) ? CMN_OK : CMN_E_IO;
}
