/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The diff and check commands (see diff_cmd.h). The command line is split at the first
 * "--" before getopt sees it: options and BASE files come before it, NEW files after it.
 * Without "--", two files are BASE and NEW, and one file (check with --budget only) is
 * NEW. Profiles are read one at a time, like `report` does, so that one file's bytes at
 * most are in memory; each becomes one run of its side. Reporter thread only.
 */
#include "reporter/cmd/diff.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/parse.h"
#include "include/libprof/prof_format.h"
#include "reporter/base/warn.h"
#include "reporter/cmd/cmd.h"
#include "reporter/compare/budget.h"
#include "reporter/compare/check.h"
#include "reporter/compare/diff.h"
#include "reporter/input/profile.h"
#include "reporter/input/read.h"
#include "reporter/input/warnings.h"
#include "reporter/output/diff.h"
#include "reporter/symbols/names.h"
#include "reporter/symbols/symbols.h"

const char rep_cmd_diff_help[] =
    "usage: prof diff [options] BASE NEW\n"
    "       prof diff [options] BASE... -- NEW...\n"
    "\n"
    "Compares two sides function by function: self and total shares of the\n"
    "samples, their change, and whether it is more than sampling noise. Several\n"
    "runs a side are pooled. See docs/CI.md.\n"
    "\n"
    "  -f, --format FORMAT  text, json, markdown, or svg: a differential flame graph,\n"
    "                       NEW's shape, red where a share grew, blue where it\n"
    "                       shrank (default: text)\n"
    "  -n, --limit N        the first N functions by size of change (default: 0,\n"
    "                       all)\n"
    "      --confidence PCT the one-sided confidence for a change to count,\n"
    "                       50..99.9999 (default: 99.9)\n"
    "  -o, --output FILE    write the output to FILE (default: standard output)\n"
    "      --no-symbols     name frames module+0xOFFSET, reading no binary\n"
    "  -h, --help           this help\n";

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
    "  -o, --output FILE    write the verdict to FILE (default: standard output)\n"
    "      --no-symbols     name frames module+0xOFFSET, reading no binary\n"
    "  -h, --help           this help\n";

struct diff_cmd_opts {
    bool is_check;
    struct rep_diff_out_opts out;
    struct rep_check_opts check;
    const char *output;      /* -o, NULL for stdout */
    const char *budget_path; /* --budget, NULL for none */
    bool is_offline;         /* --no-symbols */
    char **files[2];         /* [REP_DIFF_BASE], [REP_DIFF_NEW] */
    int n_files[2];
    bool is_help;            /* -h, --help */
};

static int parse_format(const char *s, struct diff_cmd_opts *o, struct cmn_err *err)
{
    if (strcmp(s, "text") == 0)
        o->out.format = REP_DIFF_TEXT;
    else if (strcmp(s, "json") == 0)
        o->out.format = REP_DIFF_JSON;
    else if (strcmp(s, "markdown") == 0 || strcmp(s, "md") == 0)
        o->out.format = REP_DIFF_MARKDOWN;
    else if (strcmp(s, "svg") == 0)
        o->out.format = REP_DIFF_SVG;
    else
        return cmn_err_set(err, CMN_E_INPUT, "unknown diff format '%s' (text, json, markdown, svg)",
                           s);
    return CMN_OK;
}

/* One option of either command; c is getopt's return value. */
static int parse_option(int c, const char *cmd, struct diff_cmd_opts *o, struct cmn_err *err)
{
    double v;
    switch (c) {
    case 'f':
        return parse_format(optarg, o, err);
    case 'n':
        if (!cmn_parse_double(optarg, 0, 1e9, &v) || v != (double)(size_t)v)
            return cmn_err_set(err, CMN_E_INPUT, "--limit: '%s' is not a number", optarg);
        o->out.limit = (size_t)v;
        return CMN_OK;
    case 'o':
        o->output = optarg;
        return CMN_OK;
    case 'c':
        if (!cmn_parse_double(optarg, 50.0, 99.9999, &v))
            return cmn_err_set(err, CMN_E_INPUT,
                               "--confidence: '%s' is not a percentage in 50..99.9999", optarg);
        o->out.confidence = o->check.confidence = v / 100.0;
        return CMN_OK;
    case 'P':
        if (!cmn_parse_double(optarg, -1.0, 100.0, &o->check.max_points))
            return cmn_err_set(err, CMN_E_INPUT, "--points: '%s' is not in -1..100", optarg);
        return CMN_OK;
    case 'R':
        if (!cmn_parse_double(optarg, 0.0, 1e6, &o->check.max_ratio) ||
            (o->check.max_ratio > 0 && o->check.max_ratio <= 1.0))
            return cmn_err_set(err, CMN_E_INPUT, "--ratio: '%s' is not 0 or a factor above 1",
                               optarg);
        return CMN_OK;
    case 'M':
        if (!cmn_parse_double(optarg, 0.0, 100.0, &o->check.min_ratio_percent))
            return cmn_err_set(err, CMN_E_INPUT, "--ratio-min: '%s' is not in 0..100", optarg);
        return CMN_OK;
    case 'T':
        if (!cmn_parse_double(optarg, -1.0, 1e6, &o->check.max_time_percent))
            return cmn_err_set(err, CMN_E_INPUT, "--time: '%s' is not a percentage", optarg);
        return CMN_OK;
    case 'V':
        if (!cmn_parse_double(optarg, 0.0, 1000.0, &v))
            return cmn_err_set(err, CMN_E_INPUT, "--time-noise: '%s' is not a percentage", optarg);
        o->check.time_cv = v / 100.0;
        return CMN_OK;
    case 'B':
        o->budget_path = optarg;
        return CMN_OK;
    case 'S':
        o->is_offline = true;
        return CMN_OK;
    default:
        return cmn_err_set(err, CMN_E_INPUT, "%s: unknown option (see prof %s --help)", cmd, cmd);
    }
}

/* Splits the file arguments between the sides. */
static int assign_files(char **before, int n_before, char **after, int n_after, bool has_dash,
                        struct diff_cmd_opts *o, struct cmn_err *err)
{
    const char *cmd = o->is_check ? "check" : "diff";
    if (has_dash) {
        o->files[REP_DIFF_BASE] = before;
        o->n_files[REP_DIFF_BASE] = n_before;
        o->files[REP_DIFF_NEW] = after;
        o->n_files[REP_DIFF_NEW] = n_after;
    } else if (n_before == 2) {
        o->files[REP_DIFF_BASE] = before;
        o->n_files[REP_DIFF_BASE] = 1;
        o->files[REP_DIFF_NEW] = before + 1;
        o->n_files[REP_DIFF_NEW] = 1;
    } else if (n_before == 1 && o->budget_path != NULL) {
        o->files[REP_DIFF_NEW] = before;
        o->n_files[REP_DIFF_NEW] = 1;
    } else {
        return cmn_err_set(err, CMN_E_INPUT,
                           "%s: give BASE NEW, or BASE... -- NEW... for several runs a side "
                           "(see prof %s --help)",
                           cmd, cmd);
    }
    if (o->n_files[REP_DIFF_NEW] == 0)
        return cmn_err_set(err, CMN_E_INPUT, "%s: no NEW profile given after --", cmd);
    if (o->n_files[REP_DIFF_BASE] == 0 && !(o->is_check && o->budget_path != NULL))
        return cmn_err_set(err, CMN_E_INPUT, "%s: no BASE profile given before --", cmd);
    return CMN_OK;
}

static const char *long_name(const struct option *longs, int c)
{
    for (; longs->name != NULL; longs++)
        if (longs->val == c)
            return longs->name;
    return "?";
}

static int parse_args(int argc, char **argv, struct diff_cmd_opts *o, struct cmn_err *err)
{
    static const struct option longs[] = {
        {"format", required_argument, NULL, 'f'},
        {"limit", required_argument, NULL, 'n'},
        {"output", required_argument, NULL, 'o'},
        {"confidence", required_argument, NULL, 'c'},
        {"points", required_argument, NULL, 'P'},
        {"ratio", required_argument, NULL, 'R'},
        {"ratio-min", required_argument, NULL, 'M'},
        {"time", required_argument, NULL, 'T'},
        {"time-noise", required_argument, NULL, 'V'},
        {"budget", required_argument, NULL, 'B'},
        {"no-symbols", no_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = o->is_check ? "check" : "diff";
    int dash = 1;
    while (dash < argc && strcmp(argv[dash], "--") != 0)
        dash++;
    bool has_dash = dash < argc;
    int c;
    opterr = 0;
    /* getopt sees only what is before "--"; it moves the files after the options. */
    while ((c = getopt_long(dash, argv, o->is_check ? ":o:h" : ":f:n:o:h", longs, NULL)) != -1) {
        if (c == 'h') {
            o->is_help = true;
            return CMN_OK;
        }
        if (c == ':')
            return cmn_err_set(err, CMN_E_INPUT, "%s: %s needs a value", cmd, argv[optind - 1]);
        if (c == '?')
            return rep_cmd_unknown_option(err, cmd, argv);
        bool check_only = c == 'P' || c == 'R' || c == 'M' || c == 'T' || c == 'V' || c == 'B';
        bool diff_only = c == 'f' || c == 'n';
        if ((check_only && !o->is_check) || (diff_only && o->is_check))
            return cmn_err_set(err, CMN_E_INPUT, "%s: --%s is an option of prof %s", cmd,
                               long_name(longs, c), o->is_check ? "diff" : "check");
        int rc = parse_option(c, cmd, o, err);
        if (rc != CMN_OK)
            return rc;
    }
    return assign_files(argv + optind, dash - optind, argv + dash + has_dash,
                        argc - dash - has_dash, has_dash, o, err);
}

/* Reads every file of both sides into d. */
static int read_sides(const struct diff_cmd_opts *o, struct rep_sym *sym, struct rep_diff *d,
                      struct cmn_err *err)
{
    size_t n_printed = 0;
    for (int s = 0; s < 2; s++) {
        for (int i = 0; i < o->n_files[s]; i++) {
            struct rep_profile p;
            int rc = rep_read_file(o->files[s][i], &p, err);
            if (rc == CMN_OK) {
                rep_profile_warn(&p);
                rc = rep_sym_use_profile(sym, &p);
                if (rc == CMN_OK)
                    rc = rep_diff_add_profile(d, s, sym, &p);
                if (rc == CMN_E_NOMEM)
                    cmn_err_nomem(err);
                rep_sym_warn(sym, &n_printed);
            }
            rep_profile_fini(&p);
            if (rc != CMN_OK)
                return rc;
        }
    }
    return CMN_OK;
}

/* Refuses a side without samples: shares of nothing mean nothing. */
static int check_sides(const struct diff_cmd_opts *o, const struct rep_diff *d, struct cmn_err *err)
{
    static const char *const side_name[2] = {"BASE", "NEW"};
    for (int s = 0; s < 2; s++) {
        if (o->n_files[s] == 0 || d->sides[s].total_weight > 0)
            continue;
        if (o->is_check)
            return cmn_err_set(err, CMN_E_INPUT,
                               "the %s profiles hold no samples: nothing to compare", side_name[s]);
        rep_warnf("the %s profiles hold no samples", side_name[s]);
    }
    return CMN_OK;
}

static int write_result(const struct diff_cmd_opts *o, const struct rep_diff *d,
                        const struct rep_names *names, bool *regressed, struct cmn_err *err)
{
    FILE *out;
    int rc = rep_cmd_open_output(o->output, &out, err);
    if (rc != CMN_OK)
        return rc;
    if (o->is_check) {
        struct rep_check c;
        rc = rep_check_run(&c, d, names, &o->check);
        if (rc == CMN_OK) {
            rc = rep_check_print(out, &c, d, names, &o->check);
            *regressed = c.n_regressions > 0;
        }
        rep_check_fini(&c);
    } else {
        rc = rep_out_diff(out, d, names, &o->out);
    }
    return rep_cmd_close_output(o->output, out, rc, err);
}

/* prof diff (is_check false) or prof check. */
static int run(int argc, char **argv, bool is_check, bool *regressed, bool *is_help,
               struct cmn_err *err)
{
    struct diff_cmd_opts o = {.is_check = is_check};
    rep_check_defaults(&o.check);
    o.out.confidence = o.check.confidence;
    *regressed = false;
    *is_help = false;
    int rc = parse_args(argc, argv, &o, err);
    if (rc != CMN_OK)
        return rc;
    if (o.is_help) {
        *is_help = true;
        return CMN_OK;
    }

    struct rep_budget budget;
    struct rep_names names;
    struct rep_sym sym;
    struct rep_diff d;
    rep_budget_init(&budget);
    rep_names_init(&names);
    rep_sym_init(&sym, &names);
    rep_diff_init(&d);
    sym.is_offline = o.is_offline;
    if (o.budget_path != NULL) {
        rc = rep_budget_load(&budget, o.budget_path, err);
        o.check.budget = &budget;
    }
    if (rc == CMN_OK)
        rc = read_sides(&o, &sym, &d, err);
    if (rc == CMN_OK && rep_diff_compute(&d, names.n_names) != CMN_OK)
        rc = cmn_err_nomem(err);
    if (rc == CMN_OK)
        rc = check_sides(&o, &d, err);
    if (rc == CMN_OK)
        rc = write_result(&o, &d, &names, regressed, err);
    rep_diff_fini(&d);
    rep_sym_fini(&sym);
    rep_names_fini(&names);
    rep_budget_fini(&budget);
    return rc;
}

int rep_cmd_diff(int argc, char **argv, int *exit_status, struct cmn_err *err)
{
    bool regressed, is_help;
    int rc = run(argc, argv, false, &regressed, &is_help, err);
    *exit_status = is_help ? REP_CMD_HELP : 0;
    return rc;
}

int rep_cmd_check(int argc, char **argv, int *exit_status, struct cmn_err *err)
{
    bool regressed, is_help;
    int rc = run(argc, argv, true, &regressed, &is_help, err);
    *exit_status = is_help ? REP_CMD_HELP : regressed ? REP_CMD_REGRESSED : 0;
    return rc;
}
