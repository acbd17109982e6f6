/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The two sides of `prof diff` and `prof check` (see sides.h).
 */
#include "reporter/cmd/sides.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"
#include "common/parse.h"
#include "reporter/base/warn.h"
#include "reporter/cmd/cmd.h"
#include "reporter/input/profile.h"
#include "reporter/input/read.h"
#include "reporter/input/warnings.h"

/* The long options of both commands: each refuses the other's by name. */
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
    {"label", required_argument, NULL, 'L'},
    {"by-label", required_argument, NULL, 'G'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static const char *cmd_name(const struct rep_sides *s)
{
    return s->is_check ? "check" : "diff";
}

static const char *long_name(int c)
{
    for (const struct option *o = longs; o->name != NULL; o++)
        if (o->val == c)
            return o->name;
    return "?";
}

/* An option both commands take, else the command's own; c is getopt's return value. */
static int parse_option(struct rep_sides *s, int c, rep_sides_option_fn *own, void *ctx,
                        struct cmn_err *err)
{
    double v;
    switch (c) {
    case 'o':
        s->output = optarg;
        return CMN_OK;
    case 'c':
        if (!cmn_parse_double(optarg, 50.0, 99.9999, &v))
            return cmn_err_set(err, CMN_E_INPUT,
                               "--confidence: '%s' is not a percentage in 50..99.9999", optarg);
        s->confidence = v / 100.0;
        return CMN_OK;
    case 'S':
        s->is_offline = true;
        return CMN_OK;
    case 'L':
        return rep_filter_add_label(&s->filter, optarg, err);
    case 'G':
        if (optarg[0] == '\0' || strchr(optarg, '=') != NULL)
            return cmn_err_set(err, CMN_E_INPUT, "--by-label: '%s' is not a label's key", optarg);
        s->by_label = optarg;
        return CMN_OK;
    default:
        return own(ctx, c, optarg, err);
    }
}

/* Splits the file arguments between the sides. */
static int assign_files(char **before, int n_before, char **after, int n_after, bool has_dash,
                        struct rep_sides *s, struct cmn_err *err)
{
    const char *cmd = cmd_name(s);
    if (has_dash) {
        s->files[REP_DIFF_BASE] = before;
        s->n_files[REP_DIFF_BASE] = n_before;
        s->files[REP_DIFF_NEW] = after;
        s->n_files[REP_DIFF_NEW] = n_after;
    } else if (n_before == 2) {
        s->files[REP_DIFF_BASE] = before;
        s->n_files[REP_DIFF_BASE] = 1;
        s->files[REP_DIFF_NEW] = before + 1;
        s->n_files[REP_DIFF_NEW] = 1;
    } else if (n_before == 1 && s->is_new_alone) {
        s->files[REP_DIFF_NEW] = before;
        s->n_files[REP_DIFF_NEW] = 1;
    } else {
        return cmn_err_set(err, CMN_E_INPUT,
                           "%s: give BASE NEW, or BASE... -- NEW... for several runs a side "
                           "(see prof %s --help)",
                           cmd, cmd);
    }
    if (s->n_files[REP_DIFF_NEW] == 0)
        return cmn_err_set(err, CMN_E_INPUT, "%s: no NEW profile given after --", cmd);
    if (s->n_files[REP_DIFF_BASE] == 0 && !(s->is_check && s->is_new_alone))
        return cmn_err_set(err, CMN_E_INPUT, "%s: no BASE profile given before --", cmd);
    return CMN_OK;
}

int rep_sides_parse(struct rep_sides *s, int argc, char **argv, const char *shorts,
                    rep_sides_option_fn *own, void *ctx, struct cmn_err *err)
{
    const char *cmd = cmd_name(s);
    int dash = 1;
    while (dash < argc && strcmp(argv[dash], "--") != 0)
        dash++;
    bool has_dash = dash < argc;
    int c;
    opterr = 0;
    /* getopt sees only what is before "--"; it moves the files after the options. */
    while ((c = getopt_long(dash, argv, shorts, longs, NULL)) != -1) {
        if (c == 'h') {
            s->is_help = true;
            return CMN_OK;
        }
        if (c == ':')
            return cmn_err_set(err, CMN_E_INPUT, "%s: %s needs a value", cmd, argv[optind - 1]);
        if (c == '?')
            return rep_cmd_unknown_option(err, cmd, argv);
        bool check_only = c == 'P' || c == 'R' || c == 'M' || c == 'T' || c == 'V' || c == 'B';
        bool diff_only = c == 'f' || c == 'n';
        if ((check_only && !s->is_check) || (diff_only && s->is_check))
            return cmn_err_set(err, CMN_E_INPUT, "%s: --%s is an option of prof %s", cmd,
                               long_name(c), s->is_check ? "diff" : "check");
        int rc = parse_option(s, c, own, ctx, err);
        if (rc != CMN_OK)
            return rc;
    }
    return assign_files(argv + optind, dash - optind, argv + dash + has_dash,
                        argc - dash - has_dash, has_dash, s, err);
}

void rep_sides_clear(struct rep_sides *s)
{
    rep_filter_fini(&s->filter);
}

static bool same_value(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* The group of value (NULL: no value), made when new. */
static int group_of(struct rep_sides_data *data, const char *value, struct rep_sides_group **g)
{
    size_t cap = data->n_groups;
    for (size_t i = 0; i < data->n_groups; i++) {
        if (same_value(data->groups[i].value, value)) {
            *g = &data->groups[i];
            return CMN_OK;
        }
    }
    struct rep_sides_group *more = realloc(data->groups, (cap + 1) * sizeof(*more));
    if (more == NULL)
        return CMN_E_NOMEM;
    data->groups = more;
    *g = &more[data->n_groups];
    memset(*g, 0, sizeof(**g));
    rep_diff_init(&(*g)->diff);
    data->n_groups++;
    if (value != NULL && ((*g)->value = strdup(value)) == NULL)
        return CMN_E_NOMEM;
    return CMN_OK;
}

/* Adds profile p to side: its samples the --label conditions keep, one run of each group
 * (by the --by-label value) that has some. */
static int add_profile(const struct rep_sides *s, struct rep_sides_data *data, int side,
                       const struct rep_profile *p)
{
    struct rep_sample *kept = malloc((p->n_samples ? p->n_samples : 1) * sizeof(*kept));
    bool *done = calloc(p->n_samples ? p->n_samples : 1, sizeof(*done));
    int rc = kept != NULL && done != NULL ? CMN_OK : CMN_E_NOMEM;
    /* Each pass takes the samples of the first value not taken yet. */
    for (size_t first = 0; rc == CMN_OK && first < p->n_samples; first++) {
        if (done[first])
            continue;
        const char *v = s->by_label ? rep_profile_label(p, &p->samples[first], s->by_label) : NULL;
        size_t n = 0;
        for (size_t i = first; i < p->n_samples; i++) {
            if (done[i] || (s->by_label &&
                            !same_value(v, rep_profile_label(p, &p->samples[i], s->by_label))))
                continue;
            done[i] = true;
            if (rep_filter_keeps_sample(&s->filter, p, &p->samples[i]))
                kept[n++] = p->samples[i];
        }
        struct rep_sides_group *g;
        if (n == 0 || (rc = group_of(data, v, &g)) != CMN_OK)
            continue;
        struct rep_profile part = *p;
        part.samples = kept;
        part.n_samples = n;
        part.cap_samples = n;
        rc = rep_diff_add_profile(&g->diff, side, &data->sym, &part);
    }
    free(kept);
    free(done);
    return rc;
}

/* Reads every file of both sides into data. */
static int read_sides(const struct rep_sides *s, struct rep_sides_data *data, struct cmn_err *err)
{
    size_t n_printed = 0;
    for (int side = 0; side < 2; side++) {
        for (int i = 0; i < s->n_files[side]; i++) {
            struct rep_profile p;
            int rc = rep_read_file(s->files[side][i], &p, err);
            if (rc == CMN_OK) {
                rep_profile_warn(&p);
                rc = rep_sym_use_profile(&data->sym, &p);
                if (rc == CMN_OK)
                    rc = add_profile(s, data, side, &p);
                if (rc == CMN_E_NOMEM)
                    cmn_err_nomem(err);
                rep_sym_warn(&data->sym, &n_printed);
            }
            rep_profile_fini(&p);
            if (rc != CMN_OK)
                return rc;
        }
    }
    return CMN_OK;
}

/* Groups by value, the samples without one last. */
static int cmp_group(const void *va, const void *vb)
{
    const struct rep_sides_group *a = va, *b = vb;
    if (a->value == NULL || b->value == NULL)
        return (a->value == NULL) - (b->value == NULL);
    return strcmp(a->value, b->value);
}

/* Refuses a side without samples: shares of nothing mean nothing. */
static int check_sides(const struct rep_sides *s, const struct rep_diff *d, struct cmn_err *err)
{
    static const char *const side_name[2] = {"BASE", "NEW"};
    for (int side = 0; side < 2; side++) {
        if (s->n_files[side] == 0 || d->sides[side].total_weight > 0)
            continue;
        if (s->is_check)
            return cmn_err_set(err, CMN_E_INPUT,
                               "the %s profiles hold no samples: nothing to compare",
                               side_name[side]);
        rep_warnf("the %s profiles hold no samples", side_name[side]);
    }
    return CMN_OK;
}

/* A value of the label that one side does not have is said, and compared by nothing but
 * a budget (the side without it has no runs). */
static void note_one_sided(const struct rep_sides *s, const struct rep_sides_group *g)
{
    static const char *const side_name[2] = {"BASE", "NEW"};
    for (int side = 0; side < 2; side++)
        if (s->n_files[side] > 0 && g->diff.sides[side].n_runs == 0)
            rep_warnf("%s=%s: only in the %s profiles, not compared", s->by_label,
                      g->value ? g->value : "(none)", side_name[1 - side]);
}

int rep_sides_load(const struct rep_sides *s, struct rep_sides_data *data, struct cmn_err *err)
{
    rep_names_init(&data->names);
    rep_sym_init(&data->sym, &data->names);
    data->groups = NULL;
    data->n_groups = 0;
    data->sym.is_offline = s->is_offline;
    struct rep_sides_group *all;
    int rc = s->by_label ? CMN_OK : group_of(data, NULL, &all); /* one group, even empty */
    if (rc == CMN_OK)
        rc = read_sides(s, data, err);
    else
        cmn_err_nomem(err);
    if (rc == CMN_OK && s->by_label && data->n_groups == 0)
        rc = cmn_err_set(err, CMN_E_INPUT, "no sample has label %s", s->by_label);
    if (rc == CMN_OK && data->n_groups > 1)
        qsort(data->groups, data->n_groups, sizeof(*data->groups), cmp_group);
    for (size_t i = 0; rc == CMN_OK && i < data->n_groups; i++) {
        if (rep_diff_compute(&data->groups[i].diff, data->names.n_names) != CMN_OK)
            rc = cmn_err_nomem(err);
        if (rc == CMN_OK && s->by_label)
            note_one_sided(s, &data->groups[i]);
        else if (rc == CMN_OK)
            rc = check_sides(s, &data->groups[i].diff, err);
    }
    return rc;
}

void rep_sides_fini(struct rep_sides_data *data)
{
    for (size_t i = 0; i < data->n_groups; i++) {
        rep_diff_fini(&data->groups[i].diff);
        free(data->groups[i].value);
    }
    free(data->groups);
    data->groups = NULL;
    data->n_groups = 0;
    rep_sym_fini(&data->sym);
    rep_names_fini(&data->names);
}
