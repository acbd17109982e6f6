/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The differential profile (see diff.h). rep_diff_compute() makes one pass over each run's
 * stacks to get per-id self and total weights of that run (a per-id stamp of the last
 * stack counted keeps recursion from counting a function twice in one stack, as in
 * out_top.c), sums them per side, then builds one row per function seen on either side
 * with its shares and p-values. The per-run weights stay only for the Welch tests.
 *
 * Student's t distribution needs the regularized incomplete beta function, computed here
 * by its continued fraction (the modified Lentz method) with lgamma() for the prefactor;
 * the normal tail is erfc(). Reporter thread only.
 */
#include "reporter/compare/diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/err.h"
#include "common/grow.h"

#define BETA_MAX_ITERS 300
#define BETA_EPS 1e-15
#define BETA_TINY 1e-300

int rep_diff_init(struct rep_diff *d)
{
    memset(d, 0, sizeof(*d));
    return CMN_OK;
}

void rep_diff_fini(struct rep_diff *d)
{
    if (d == NULL)
        return;
    for (int s = 0; s < 2; s++) {
        for (size_t i = 0; i < d->sides[s].n_runs; i++)
            rep_agg_fini(&d->sides[s].runs[i]);
        free(d->sides[s].runs);
    }
    free(d->fns);
    memset(d, 0, sizeof(*d));
}

int rep_diff_new_run(struct rep_diff *d, int side, struct rep_agg **run)
{
    assert(side == REP_DIFF_BASE || side == REP_DIFF_NEW);
    struct rep_diff_side *sd = &d->sides[side];
    if (!CMN_GROW(sd->runs, sd->cap_runs, sd->n_runs + 1, 4))
        return CMN_E_NOMEM;
    *run = &sd->runs[sd->n_runs++];
    return rep_agg_init(*run);
}

int rep_diff_add_profile(struct rep_diff *d, int side, struct rep_sym *sym,
                         const struct rep_profile *p)
{
    struct rep_agg *run;
    if (rep_diff_new_run(d, side, &run) != CMN_OK)
        return CMN_E_NOMEM;
    return rep_agg_add_profile(run, sym, p);
}

/* ---- Statistics ---- */

/* The continued fraction of the incomplete beta function I_x(a, b), for x < (a+1)/(a+b+2),
 * where it converges fast. */
static double beta_fraction(double a, double b, double x)
{
    double c = 1.0, dd = 1.0 - (a + b) * x / (a + 1.0);
    if (fabs(dd) < BETA_TINY)
        dd = BETA_TINY;
    dd = 1.0 / dd;
    double h = dd;
    for (int m = 1; m <= BETA_MAX_ITERS; m++) {
        /* Two steps per m: the even term, then the odd one. */
        for (int odd = 0; odd < 2; odd++) {
            double num = odd ? -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
                             : m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
            dd = 1.0 + num * dd;
            if (fabs(dd) < BETA_TINY)
                dd = BETA_TINY;
            c = 1.0 + num / c;
            if (fabs(c) < BETA_TINY)
                c = BETA_TINY;
            dd = 1.0 / dd;
            double delta = dd * c;
            h *= delta;
            if (odd && fabs(delta - 1.0) < BETA_EPS)
                return h;
        }
    }
    return h;
}

/* The regularized incomplete beta function I_x(a, b), for a, b > 0 and x in [0, 1]. */
static double beta_regularized(double a, double b, double x)
{
    if (x <= 0.0)
        return 0.0;
    if (x >= 1.0)
        return 1.0;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1.0) / (a + b + 2.0))
        return front * beta_fraction(a, b, x) / a;
    return 1.0 - front * beta_fraction(b, a, 1.0 - x) / b;
}

double rep_diff_t_sf(double t, double df)
{
    double tail = 0.5 * beta_regularized(df / 2.0, 0.5, df / (df + t * t));
    return t >= 0 ? tail : 1.0 - tail;
}

double rep_diff_p_counts(uint64_t x1, uint64_t n1, uint64_t x2, uint64_t n2)
{
    if (n1 == 0 || n2 == 0)
        return 1.0;
    double p1 = (double)x1 / (double)n1, p2 = (double)x2 / (double)n2;
    double p = (double)(x1 + x2) / (double)(n1 + n2);
    if (p1 == p2 || p <= 0.0 || p >= 1.0)
        return 1.0;
    double se = sqrt(p * (1.0 - p) * (1.0 / (double)n1 + 1.0 / (double)n2));
    return 0.5 * erfc(fabs(p2 - p1) / se / M_SQRT2);
}

double rep_diff_p_above(uint64_t x, uint64_t n, double p0)
{
    if (n == 0 || (double)x / (double)n <= p0)
        return 1.0;
    if (p0 <= 0.0)
        return 0.0;
    double se = sqrt(p0 * (1.0 - p0) / (double)n);
    return 0.5 * erfc(((double)x / (double)n - p0) / se / M_SQRT2);
}

static void mean_sd(const double *v, size_t n, double *mean, double *sd)
{
    double m = 0.0, ss = 0.0;
    for (size_t i = 0; i < n; i++)
        m += v[i];
    m = n ? m / (double)n : 0.0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - m) * (v[i] - m);
    *mean = m;
    *sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
}

double rep_diff_p_welch(const double *a, size_t n1, const double *b, size_t n2)
{
    if (n1 < 2 || n2 < 2)
        return REP_DIFF_NO_P;
    double m1, s1, m2, s2;
    mean_sd(a, n1, &m1, &s1);
    mean_sd(b, n2, &m2, &s2);
    double v1 = s1 * s1 / (double)n1, v2 = s2 * s2 / (double)n2;
    if (m1 == m2)
        return 1.0;
    /* No spread on either side: any difference of the means is real. */
    if (v1 + v2 <= 0.0)
        return 0.0;
    double t = fabs(m2 - m1) / sqrt(v1 + v2);
    double df = (v1 + v2) * (v1 + v2) / (v1 * v1 / (double)(n1 - 1) + v2 * v2 / (double)(n2 - 1));
    return rep_diff_t_sf(t, df);
}

/* ---- The per-function table ---- */

/* Per-id self and total weights of one run, into self and total (n_names each, zeroed by
 * the caller); stamp is scratch of n_names entries, zeroed by the caller. */
static void weigh_run(const struct rep_agg *a, uint64_t *self, uint64_t *total, size_t *stamp)
{
    for (size_t i = 0; i < a->n_stacks; i++) {
        const struct rep_stack *st = &a->stacks[i];
        const uint32_t *ids = rep_agg_stack_ids(a, i);
        self[ids[st->n_ids - 1]] += st->weight;
        for (uint32_t f = 0; f < st->n_ids; f++) {
            if (stamp[ids[f]] == i + 1)
                continue;
            stamp[ids[f]] = i + 1;
            total[ids[f]] += st->weight;
        }
    }
}

static double share(uint64_t part, uint64_t whole)
{
    return whole ? (double)part / (double)whole : 0.0;
}

/* The Welch p-value and per-side spreads of one function's per-run shares. w holds the
 * per-run weights of every run, base runs first, n_names apart. */
static double run_test(const struct rep_diff *d, const uint64_t *w, size_t n_names, uint32_t id,
                       double *tmp, double sd[2])
{
    size_t n0 = d->sides[0].n_runs, n1 = d->sides[1].n_runs;
    for (size_t r = 0; r < n0 + n1; r++) {
        const struct rep_agg *a = r < n0 ? &d->sides[0].runs[r] : &d->sides[1].runs[r - n0];
        tmp[r] = share(w[r * n_names + id], a->total_weight);
    }
    double mean;
    mean_sd(tmp, n0, &mean, &sd[0]);
    mean_sd(tmp + n0, n1, &mean, &sd[1]);
    return rep_diff_p_welch(tmp, n0, tmp + n0, n1);
}

static double change_size(const struct rep_diff_fn *f)
{
    double ds = fabs(f->self_share[1] - f->self_share[0]);
    double dt = fabs(f->total_share[1] - f->total_share[0]);
    return ds > dt ? ds : dt;
}

static int cmp_fn(const void *va, const void *vb)
{
    const struct rep_diff_fn *a = va, *b = vb;
    double ca = change_size(a), cb = change_size(b);
    if (ca != cb)
        return ca > cb ? -1 : 1;
    if (a->total[1] != b->total[1])
        return a->total[1] > b->total[1] ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

static void compute_time(struct rep_diff *d, double *tmp)
{
    struct rep_diff_time *t = &d->time;
    size_t n[2] = {d->sides[0].n_runs, d->sides[1].n_runs};
    memset(t, 0, sizeof(*t));
    t->p = REP_DIFF_NO_P;
    bool known = n[0] > 0 && n[1] > 0;
    for (int s = 0; s < 2; s++) {
        for (size_t r = 0; r < n[s]; r++) {
            const struct rep_agg *a = &d->sides[s].runs[r];
            known = known && !a->is_time_partial;
            tmp[s * n[0] + r] = a->seconds;
        }
        mean_sd(tmp + s * n[0], n[s], &t->mean[s], &t->sd[s]);
    }
    t->is_known = known && t->mean[0] > 0.0;
    if (!t->is_known)
        return;
    t->change = t->mean[1] / t->mean[0] - 1.0;
    t->p = rep_diff_p_welch(tmp, n[0], tmp + n[0], n[1]);
}

/* Fills d->fns from the per-run weights w_self and w_total (see run_test). */
static int build_rows(struct rep_diff *d, const uint64_t *w_self, const uint64_t *w_total,
                      uint32_t n_names, double *tmp)
{
    size_t n0 = d->sides[0].n_runs, n_all = n0 + d->sides[1].n_runs;
    free(d->fns);
    d->fns = calloc(n_names ? n_names : 1, sizeof(*d->fns));
    d->n_fns = 0;
    if (d->fns == NULL)
        return CMN_E_NOMEM;
    for (uint32_t id = 0; id < n_names; id++) {
        struct rep_diff_fn f = {.id = id};
        for (size_t r = 0; r < n_all; r++) {
            f.self[r >= n0] += w_self[r * n_names + id];
            f.total[r >= n0] += w_total[r * n_names + id];
        }
        if (f.total[0] + f.total[1] == 0)
            continue;
        for (int s = 0; s < 2; s++) {
            f.self_share[s] = share(f.self[s], d->sides[s].total_weight);
            f.total_share[s] = share(f.total[s], d->sides[s].total_weight);
        }
        uint64_t n_base = d->sides[0].total_weight, n_new = d->sides[1].total_weight;
        f.self_p_count = rep_diff_p_counts(f.self[0], n_base, f.self[1], n_new);
        f.total_p_count = rep_diff_p_counts(f.total[0], n_base, f.total[1], n_new);
        f.self_p_runs = run_test(d, w_self, n_names, id, tmp, f.self_sd_runs);
        f.total_p_runs = run_test(d, w_total, n_names, id, tmp, f.total_sd_runs);
        d->fns[d->n_fns++] = f;
    }
    qsort(d->fns, d->n_fns, sizeof(*d->fns), cmp_fn);
    return CMN_OK;
}

int rep_diff_compute(struct rep_diff *d, uint32_t n_names)
{
    size_t n_all = d->sides[0].n_runs + d->sides[1].n_runs;
    size_t cells = n_all * (size_t)n_names;
    uint64_t *w_self = calloc(cells ? cells : 1, sizeof(*w_self));
    uint64_t *w_total = calloc(cells ? cells : 1, sizeof(*w_total));
    size_t *stamp = calloc(n_names ? n_names : 1, sizeof(*stamp));
    double *tmp = calloc(n_all ? n_all : 1, sizeof(*tmp));
    int rc = CMN_E_NOMEM;
    if (w_self == NULL || w_total == NULL || stamp == NULL || tmp == NULL)
        goto out;
    size_t r = 0;
    for (int s = 0; s < 2; s++) {
        struct rep_diff_side *sd = &d->sides[s];
        sd->total_weight = 0;
        sd->seconds = 0.0;
        sd->is_time_known = sd->n_runs > 0;
        for (size_t i = 0; i < sd->n_runs; i++, r++) {
            const struct rep_agg *a = &sd->runs[i];
            memset(stamp, 0, (n_names ? n_names : 1) * sizeof(*stamp));
            weigh_run(a, w_self + r * n_names, w_total + r * n_names, stamp);
            sd->total_weight += a->total_weight;
            sd->seconds += a->seconds;
            sd->is_time_known = sd->is_time_known && !a->is_time_partial;
        }
    }
    rc = build_rows(d, w_self, w_total, n_names, tmp);
    if (rc == CMN_OK)
        compute_time(d, tmp);
out:
    free(w_self);
    free(w_total);
    free(stamp);
    free(tmp);
    return rc;
}
