/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The check command (see check.h): its own options, the budget, the verdict; the sides it
 * compares are read as diff's are (reporter/cmd/sides.h). Reporter thread only.
 */
#include "reporter/cmd/check.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/err.h"
#include "common/parse.h"
#include "reporter/cmd/cmd.h"
#include "reporter/cmd/sides.h"
#include "reporter/compare/budget.h"
#include "reporter/compare/check.h"

const char rep_cmd_check_help[] =
    "usage: prof check [options] BASE NEW\n"
    "       prof check [options] BASE... -- NEW...\n"
    "       prof check --budget FILE [options] [--] NEW...\n"
    "\n"
    "Exits 1 when NEW regressed against BASE or broke a budget, 0 when it did not,\n"
    "2 on bad input. A change counts when it crosses a threshold and the test says\n"
    "it is not sampling noise. Several runs a side are pooled. See docs/CI.md.\n"
    "\n"
    "      --points N       a self or total share grew by more than N points\n"
    "                       (default: 1; -1: off)\n"
    "      --ratio R        a share grew by more than a factor R (default: 0, off)\n"
    "      --ratio-min PCT  --ratio passes over functions whose new share is under\n"
    "                       PCT % (default: 1)\n"
    "      --time PCT       the CPU time of a run grew by more than PCT %\n"
    "                       (default: 5; -1: off)\n"
    "      --time-noise PCT the run-to-run spread of CPU time assumed with one run\n"
    "                       a side (default: 10)\n"
    "      --budget FILE    'GLOB MAX_PERCENT [self|total]' lines: limits on NEW's\n"
    "                       shares (default: none)\n"
    "      --confidence PCT the one-sided confidence for a change to count,\n"
    "                       50..99.9999 (default: 99.9)\n"
    "      --label KEY=VALUE  compare the samples whose thread label KEY was VALUE\n"
    "                       (repeatable: values of a key are alternatives)\n"
    "      --by-label KEY   judge each value of label KEY apart (a benchmark phase,\n"
    "                       a test case): fails when any value regressed\n"
    "  -o, --output FILE    write the verdict to FILE (default: standard output)\n"
    "      --no-symbols     name frames module+0xOFFSET, reading no binary\n"
    "  -h, --help           this help\n";

/* check's command line beyond the sides. */
struct check_opts {
    struct rep_sides *sides;
    struct rep_check_opts check;
    const char *budget_path; /* --budget, NULL for none */
};

/* One of check's own options (rep_sides_option_fn); ctx is its struct check_opts. */
static int parse_option(void *ctx, int c, const char *arg, struct cmn_err *err)
{
    struct check_opts *o = ctx;
    double v;
    switch (c) {
    case 'P':
        if (!cmn_parse_double(arg, -1.0, 100.0, &o->check.max_points))
            return cmn_err_set(err, CMN_E_INPUT, "--points: '%s' is not in -1..100", arg);
        return CMN_OK;
    case 'R':
        if (!cmn_parse_double(arg, 0.0, 1e6, &o->check.max_ratio) ||
            (o->check.max_ratio > 0 && o->check.max_ratio <= 1.0))
            return cmn_err_set(err, CMN_E_INPUT, "--ratio: '%s' is not 0 or a factor above 1", arg);
        return CMN_OK;
    case 'M':
        if (!cmn_parse_double(arg, 0.0, 100.0, &o->check.min_ratio_percent))
            return cmn_err_set(err, CMN_E_INPUT, "--ratio-min: '%s' is not in 0..100", arg);
        return CMN_OK;
    case 'T':
        if (!cmn_parse_double(arg, -1.0, 1e6, &o->check.max_time_percent))
            return cmn_err_set(err, CMN_E_INPUT, "--time: '%s' is not a percentage", arg);
        return CMN_OK;
    case 'V':
        if (!cmn_parse_double(arg, 0.0, 1000.0, &v))
            return cmn_err_set(err, CMN_E_INPUT, "--time-noise: '%s' is not a percentage", arg);
        o->check.time_cv = v / 100.0;
        return CMN_OK;
    case 'B':
        o->budget_path = arg;
        o->sides->is_new_alone = true;
        return CMN_OK;
    default:
        return cmn_err_set(err, CMN_E_INPUT, "check: unknown option (see prof check --help)");
    }
}

/* Judges one group of the sides read and writes its verdict; *regressed is set when
 * something in it did. */
static int judge(FILE *out, const struct check_opts *o, const struct rep_sides_data *data,
                 const struct rep_sides_group *g, bool *regressed)
{
    struct rep_check c;
    int rc = rep_check_run(&c, &g->diff, &data->names, &o->check);
    if (rc == CMN_OK) {
        rc = rep_check_print(out, &c, &g->diff, &data->names, &o->check);
        *regressed = *regressed || c.n_regressions > 0;
    }
    rep_check_fini(&c);
    return rc;
}

/* Judges the sides read and writes the verdict: with --by-label, each value apart (one it
 * has on NEW only, by its budget), then the values that regressed. *regressed says
 * whether anything did. */
static int write_verdict(const struct check_opts *o, const struct rep_sides_data *data,
                         bool *regressed, struct cmn_err *err)
{
    FILE *out;
    int rc = rep_cmd_open_output(o->sides->output, &out, err);
    if (rc != CMN_OK)
        return rc;
    const char *key = o->sides->by_label;
    size_t n_judged = 0, n_failed = 0;
    bool *failed = calloc(data->n_groups ? data->n_groups : 1, sizeof(*failed));
    if (failed == NULL)
        rc = CMN_E_NOMEM;
    for (size_t i = 0; rc == CMN_OK && i < data->n_groups; i++) {
        const struct rep_sides_group *g = &data->groups[i];
        bool is_base = o->sides->n_files[REP_DIFF_BASE] > 0;
        if (key != NULL && (g->diff.sides[REP_DIFF_NEW].n_runs == 0 ||
                            (is_base && g->diff.sides[REP_DIFF_BASE].n_runs == 0)))
            continue; /* on one side only: said when read */
        bool was = false;
        if (key != NULL)
            fprintf(out, "== %s=%s\n", key, g->value ? g->value : "(none)");
        rc = judge(out, o, data, g, &was);
        n_judged++;
        n_failed += was;
        failed[i] = was;
        *regressed = *regressed || was;
    }
    if (rc == CMN_OK && key != NULL) {
        fprintf(out, "prof check: %zu values of %s judged, %zu regressed", n_judged, key,
                n_failed);
        for (size_t i = 0, k = 0; i < data->n_groups; i++)
            if (failed[i])
                fprintf(out, "%s%s", k++ ? ", " : ": ",
                        data->groups[i].value ? data->groups[i].value : "(none)");
        fputc('\n', out);
    }
    free(failed);
    if (rc == CMN_E_NOMEM)
        cmn_err_nomem(err);
    return rep_cmd_close_output(o->sides->output, out, rc, err);
}

int rep_cmd_check(int argc, char **argv, int *exit_status, struct cmn_err *err)
{
    struct rep_sides s = {.is_check = true};
    struct check_opts o = {.sides = &s};
    rep_check_defaults(&o.check);
    s.confidence = o.check.confidence;
    *exit_status = 0;
    int rc = rep_sides_parse(&s, argc, argv, ":o:h", parse_option, &o, err);
    if (rc != CMN_OK || s.is_help) {
        *exit_status = s.is_help ? REP_CMD_HELP : 0;
        rep_sides_clear(&s);
        return rc;
    }
    o.check.confidence = s.confidence;
    struct rep_budget budget;
    rep_budget_init(&budget);
    if (o.budget_path != NULL) {
        rc = rep_budget_load(&budget, o.budget_path, err);
        o.check.budget = &budget;
    }
    bool regressed = false;
    if (rc == CMN_OK) {
        struct rep_sides_data data;
        rc = rep_sides_load(&s, &data, err);
        if (rc == CMN_OK)
            rc = write_verdict(&o, &data, &regressed, err);
        rep_sides_fini(&data);
    }
    rep_budget_fini(&budget);
    rep_sides_clear(&s);
    *exit_status = regressed ? REP_CMD_REGRESSED : 0;
    return rc;
}
