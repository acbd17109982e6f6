/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The diff command (see diff.h): its own options, the output formats; the sides it
 * compares are read as check's are (reporter/cmd/sides.h). Reporter thread only.
 */
#include "reporter/cmd/diff.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "common/parse.h"
#include "reporter/cmd/cmd.h"
#include "reporter/cmd/sides.h"
#include "reporter/compare/check.h"
#include "reporter/output/diff.h"
#include "reporter/output/escape.h"

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
    "      --label KEY=VALUE  compare the samples whose thread label KEY was VALUE\n"
    "                       (repeatable: values of a key are alternatives)\n"
    "      --by-label KEY   compare each value of label KEY apart (text, markdown:\n"
    "                       a section each; json: {\"by_label\", \"values\": [{\"value\",\n"
    "                       \"diff\"}]})\n"
    "  -o, --output FILE    write the output to FILE (default: standard output)\n"
    "      --no-symbols     name frames module+0xOFFSET, reading no binary\n"
    "  -h, --help           this help\n";

static int parse_format(const char *s, struct rep_diff_out_opts *o, struct cmn_err *err)
{
    if (strcmp(s, "text") == 0)
        o->format = REP_DIFF_TEXT;
    else if (strcmp(s, "json") == 0)
        o->format = REP_DIFF_JSON;
    else if (strcmp(s, "markdown") == 0 || strcmp(s, "md") == 0)
        o->format = REP_DIFF_MARKDOWN;
    else if (strcmp(s, "svg") == 0)
        o->format = REP_DIFF_SVG;
    else
        return cmn_err_set(err, CMN_E_INPUT, "unknown diff format '%s' (text, json, markdown, svg)",
                           s);
    return CMN_OK;
}

/* One of diff's own options (rep_sides_option_fn); ctx is the output's options. */
static int parse_option(void *ctx, int c, const char *arg, struct cmn_err *err)
{
    struct rep_diff_out_opts *o = ctx;
    double v;
    switch (c) {
    case 'f':
        return parse_format(arg, o, err);
    case 'n':
        if (!cmn_parse_double(arg, 0, 1e9, &v) || v != (double)(size_t)v)
            return cmn_err_set(err, CMN_E_INPUT, "--limit: '%s' is not a number", arg);
        o->limit = (size_t)v;
        return CMN_OK;
    default:
        return cmn_err_set(err, CMN_E_INPUT, "diff: unknown option (see prof diff --help)");
    }
}

/* The diff of each group: one without --by-label; with it, each value with a heading (a
 * JSON object per value in an array, for json). */
static int write_groups(FILE *f, const struct rep_sides *s, const struct rep_sides_data *data,
                        const struct rep_diff_out_opts *out)
{
    if (s->by_label == NULL)
        return rep_out_diff(f, &data->groups[0].diff, &data->names, out);
    bool is_json = out->format == REP_DIFF_JSON;
    if (is_json) {
        fputs("{\"by_label\":", f);
        rep_escape_json(f, s->by_label);
        fputs(",\"values\":[", f);
    }
    int rc = CMN_OK;
    for (size_t i = 0; rc == CMN_OK && i < data->n_groups; i++) {
        const struct rep_sides_group *g = &data->groups[i];
        const char *v = g->value ? g->value : "(none)";
        if (is_json) {
            fputs(i ? ",{\"value\":" : "{\"value\":", f);
            rep_escape_json(f, v);
            fputs(",\"diff\":", f);
        } else {
            fprintf(f, out->format == REP_DIFF_MARKDOWN ? "%s### %s=%s\n\n" : "%s== %s=%s\n",
                    i ? "\n" : "", s->by_label, v);
        }
        rc = rep_out_diff(f, &g->diff, &data->names, out);
        if (is_json)
            fputc('}', f);
    }
    if (is_json)
        fputs("]}\n", f);
    return rc;
}

int rep_cmd_diff(int argc, char **argv, int *exit_status, struct cmn_err *err)
{
    struct rep_check_opts defaults;
    rep_check_defaults(&defaults);
    struct rep_sides s = {.is_check = false, .confidence = defaults.confidence};
    struct rep_diff_out_opts out = {0};
    *exit_status = 0;
    int rc = rep_sides_parse(&s, argc, argv, ":f:n:o:h", parse_option, &out, err);
    if (rc != CMN_OK || s.is_help) {
        *exit_status = s.is_help ? REP_CMD_HELP : 0;
        rep_sides_clear(&s);
        return rc;
    }
    out.confidence = s.confidence;
    if (s.by_label != NULL && out.format == REP_DIFF_SVG) {
        rep_sides_clear(&s);
        return cmn_err_set(err, CMN_E_INPUT,
                           "diff: one graph per value: give --label KEY=VALUE with -f svg, not "
                           "--by-label");
    }
    struct rep_sides_data data;
    rc = rep_sides_load(&s, &data, err);
    if (rc == CMN_OK) {
        FILE *f;
        rc = rep_cmd_open_output(s.output, &f, err);
        if (rc == CMN_OK)
            rc = rep_cmd_close_output(s.output, f, write_groups(f, &s, &data, &out), err);
    }
    rep_sides_fini(&data);
    rep_sides_clear(&s);
    return rc;
}
