/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What `prof diff` (reporter/cmd/diff.c) and `prof check` (reporter/cmd/check.c) share: the
 * two sides of profiles they compare, given on the command line as
 *
 *   prof diff|check [options] BASE NEW               one profile a side
 *   prof diff|check [options] BASE... -- NEW...      several runs a side, pooled
 *   prof check [options] --budget FILE NEW           (or "-- NEW...") the budget alone
 *
 * with the options both take (-o, --confidence, --no-symbols, --label KEY=VALUE, --by-label
 * KEY, -h), and read into a struct rep_diff (reporter/compare/diff.h) whose shares are
 * computed: one for all the samples kept (--label selects them, as for report), or, with
 * --by-label KEY, one per value of the label (its samples only: a benchmark phase, a test
 * case compared alone). The command line is split
 * at the first "--" before getopt sees it: options and BASE files come before it, NEW
 * files after it. Profiles are read one at a time, like `report` does, so that one file's
 * bytes at most are in memory; each becomes one run of its side. Reporter thread only.
 */
#ifndef PROF_REPORTER_CMD_SIDES_H
#define PROF_REPORTER_CMD_SIDES_H

#include <stdbool.h>

#include "reporter/compare/diff.h"
#include "reporter/stacks/filter.h"
#include "reporter/symbols/names.h"
#include "reporter/symbols/symbols.h"

struct cmn_err;

/* The command line of either command, as far as both read it. */
struct rep_sides {
    bool is_check;      /* set by the caller: prof check, else prof diff */
    bool is_new_alone;  /* set by the caller's options: one file without "--" is NEW
                         * (check --budget) */
    const char *output; /* -o, NULL for standard output */
    double confidence;  /* --confidence as a fraction; the caller's default until then */
    bool is_offline;    /* --no-symbols */
    bool is_help;       /* -h, --help: nothing else was parsed */
    char **files[2];    /* [REP_DIFF_BASE], [REP_DIFF_NEW]: into argv */
    int n_files[2];
    const char *by_label; /* --by-label KEY, NULL none */
    struct rep_filter filter; /* --label KEY=VALUE conditions; rep_sides_clear() frees it */
};

/* The samples of one value of the --by-label key (or all of them), both sides. */
struct rep_sides_group {
    char *value;          /* the label's value; NULL without --by-label or for samples
                           * without the label; owned */
    struct rep_diff diff; /* both sides, computed */
};

/* The profiles of both sides, read. */
struct rep_sides_data {
    struct rep_names names;         /* the functions' names */
    struct rep_sym sym;             /* the symbolizer that named them */
    struct rep_sides_group *groups; /* one without --by-label; else by value, sorted */
    size_t n_groups;
};

/* One of the command's own options: getopt's c and its argument. CMN_OK, or CMN_E_INPUT
 * with the message. */
typedef int rep_sides_option_fn(void *ctx, int c, const char *arg, struct cmn_err *err);

/* Not async-signal-safe. */
/* Parses argv (argv[0] the command's name) into s, the command's own options (getopt's
 * short options `shorts`, its long ones among those of either command) through own(ctx).
 * An option of the other command is refused with its name. CMN_OK (s->is_help: stop
 * there) or CMN_E_INPUT with the message. */
int rep_sides_parse(struct rep_sides *s, int argc, char **argv, const char *shorts,
                    rep_sides_option_fn *own, void *ctx, struct cmn_err *err);
/* Frees what parsing kept (the --label conditions). */
void rep_sides_clear(struct rep_sides *s);
/* Reads every profile of both sides into data (initialized here; free it with
 * rep_sides_fini() in every case), printing their warnings, and computes each group's
 * diff. A side without samples is refused by check, warned about by diff; with
 * --by-label, a value on one side only is said and left out of check. CMN_OK, CMN_E_INPUT (a
 * profile, or an empty side) or CMN_E_NOMEM, with the message. */
int rep_sides_load(const struct rep_sides *s, struct rep_sides_data *data, struct cmn_err *err);
void rep_sides_fini(struct rep_sides_data *data);

#endif
