/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The text, JSON and Markdown outputs of a differential profile (see out_diff.h). They
 * share the per-row values (shares in percent, changes in points, whether each change is
 * significant), computed once per row by row_of(); only the printing differs. Names are
 * made safe for each output: control characters become spaces in text, JSON escapes
 * quotes, backslashes and control characters, Markdown escapes '|' so that a row stays a
 * row. Reporter thread only.
 */
#include "reporter/output/diff.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "common/err.h"
#include "reporter/compare/diff.h"
#include "reporter/output/diff_svg.h"
#include "reporter/symbols/names.h"

/* One function's values as printed. */
struct diff_row {
    double share[2][2]; /* [self or total][base or new], percent */
    double change[2];   /* [self or total], percentage points */
    double p[2];        /* [self or total], the deciding one-sided p-value */
    bool is_sig[2];     /* [self or total] */
};

static double deciding_p(double p_count, double p_runs)
{
    return p_runs != REP_DIFF_NO_P && p_runs > p_count ? p_runs : p_count;
}

static struct diff_row row_of(const struct rep_diff_fn *f, double confidence)
{
    struct diff_row r;
    for (int s = 0; s < 2; s++) {
        r.share[0][s] = 100.0 * f->self_share[s];
        r.share[1][s] = 100.0 * f->total_share[s];
    }
    r.p[0] = deciding_p(f->self_p_count, f->self_p_runs);
    r.p[1] = deciding_p(f->total_p_count, f->total_p_runs);
    for (int k = 0; k < 2; k++) {
        r.change[k] = r.share[k][1] - r.share[k][0];
        r.is_sig[k] = r.p[k] < 1.0 - confidence;
    }
    return r;
}

static size_t rows_shown(const struct rep_diff *d, const struct rep_diff_out_opts *o)
{
    return o->limit != 0 && o->limit < d->n_fns ? o->limit : d->n_fns;
}

/* "N runs, M samples, S s CPU a run" for one side. */
static void print_side(FILE *out, const struct rep_diff *d, int s)
{
    const struct rep_diff_side *sd = &d->sides[s];
    fprintf(out, "%zu run%s, %" PRIu64 " samples", sd->n_runs, sd->n_runs == 1 ? "" : "s",
            sd->total_weight);
    if (sd->is_time_known && sd->n_runs > 0)
        fprintf(out, ", %.3f s CPU a run", d->time.mean[s]);
}

/* ---- Text ---- */

static void text_name(FILE *out, const char *name)
{
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        fputc(*c < 0x20 || *c == 0x7f ? ' ' : *c, out);
    fputc('\n', out);
}

static void out_text(FILE *out, const struct rep_diff *d, const struct rep_names *names,
                     const struct rep_diff_out_opts *o)
{
    fputs("base: ", out);
    print_side(out, d, REP_DIFF_BASE);
    fputs("; new: ", out);
    print_side(out, d, REP_DIFF_NEW);
    if (d->time.is_known)
        fprintf(out, " (%+.1f %%)", 100.0 * d->time.change);
    fputc('\n', out);
    size_t shown = rows_shown(d, o);
    if (shown < d->n_fns)
        fprintf(out, "Showing %zu of %zu functions, by size of change\n", shown, d->n_fns);
    fprintf(out, "'*': a change that sampling noise does not explain (one-sided p < %g)\n",
            1.0 - o->confidence);
    fprintf(out, "%10s %10s %10s %10s %10s %10s  %s\n", "self base", "self new", "change",
            "total base", "total new", "change", "function");
    for (size_t i = 0; i < shown; i++) {
        struct diff_row r = row_of(&d->fns[i], o->confidence);
        for (int k = 0; k < 2; k++)
            fprintf(out, "%8.2f %% %8.2f %% %+9.2f%c ", r.share[k][0], r.share[k][1], r.change[k],
                    r.is_sig[k] ? '*' : ' ');
        fputc(' ', out);
        text_name(out, rep_names_get(names, d->fns[i].id));
    }
}

/* ---- JSON ---- */

static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20 || *c == 0x7f)
            fprintf(out, "\\u%04x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

static void json_side(FILE *out, const struct rep_diff *d, int s)
{
    const struct rep_diff_side *sd = &d->sides[s];
    fprintf(out, "{\"runs\": %zu, \"samples\": %" PRIu64 ", \"cpu_seconds\": [", sd->n_runs,
            sd->total_weight);
    for (size_t r = 0; r < sd->n_runs; r++)
        fprintf(out, "%s%.6f", r ? ", " : "", sd->runs[r].seconds);
    fputs("]", out);
    if (sd->is_time_known && sd->n_runs > 0)
        fprintf(out, ", \"cpu_seconds_mean\": %.6f, \"cpu_seconds_sd\": %.6f", d->time.mean[s],
                d->time.sd[s]);
    else
        fputs(", \"cpu_seconds_mean\": null, \"cpu_seconds_sd\": null", out);
    fputs("}", out);
}

static void json_p(FILE *out, double p)
{
    if (p == REP_DIFF_NO_P)
        fputs("null", out);
    else
        fprintf(out, "%.6g", p);
}

static void json_fn(FILE *out, const struct rep_diff_fn *f, const char *name, double confidence)
{
    static const char *const kinds[2] = {"self", "total"};
    struct diff_row r = row_of(f, confidence);
    fputs("    {\"name\": ", out);
    json_string(out, name);
    for (int k = 0; k < 2; k++) {
        const uint64_t *w = k == 0 ? f->self : f->total;
        fprintf(out,
                ", \"%s_samples_base\": %" PRIu64 ", \"%s_samples_new\": %" PRIu64
                ", \"%s_base\": %.4f, \"%s_new\": %.4f, \"%s_change\": %.4f, \"%s_p\": ",
                kinds[k], w[0], kinds[k], w[1], kinds[k], r.share[k][0], kinds[k], r.share[k][1],
                kinds[k], r.change[k], kinds[k]);
        json_p(out, r.p[k]);
        fprintf(out, ", \"%s_significant\": %s", kinds[k], r.is_sig[k] ? "true" : "false");
    }
    fputs("}", out);
}

static void out_json(FILE *out, const struct rep_diff *d, const struct rep_names *names,
                     const struct rep_diff_out_opts *o)
{
    fprintf(out, "{\n  \"format\": \"prof-diff\", \"version\": %d, \"confidence\": %g,\n",
            REP_OUT_DIFF_JSON_VERSION, o->confidence);
    fputs("  \"base\": ", out);
    json_side(out, d, REP_DIFF_BASE);
    fputs(",\n  \"new\": ", out);
    json_side(out, d, REP_DIFF_NEW);
    fputs(",\n  \"cpu_time\": ", out);
    if (d->time.is_known) {
        fprintf(out, "{\"change_percent\": %.4f, \"p\": ", 100.0 * d->time.change);
        json_p(out, d->time.p);
        fputs("}", out);
    } else {
        fputs("null", out);
    }
    size_t shown = rows_shown(d, o);
    fprintf(out, ",\n  \"n_functions\": %zu,\n  \"functions\": [\n", d->n_fns);
    for (size_t i = 0; i < shown; i++) {
        json_fn(out, &d->fns[i], rep_names_get(names, d->fns[i].id), o->confidence);
        fputs(i + 1 < shown ? ",\n" : "\n", out);
    }
    fputs("  ]\n}\n", out);
}

/* ---- Markdown ---- */

/* A name as inline code in a table cell: '|' escaped, control characters as spaces, and
 * a longer fence when the name holds a backtick. */
static void md_name(FILE *out, const char *name)
{
    bool has_tick = strchr(name, '`') != NULL;
    fputs(has_tick ? "`` " : "`", out);
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
        if (*c == '|')
            fputs("\\|", out);
        else
            fputc(*c < 0x20 || *c == 0x7f ? ' ' : *c, out);
    }
    fputs(has_tick ? " ``" : "`", out);
}

static void out_markdown(FILE *out, const struct rep_diff *d, const struct rep_names *names,
                         const struct rep_diff_out_opts *o)
{
    fputs("**prof diff**: base ", out);
    print_side(out, d, REP_DIFF_BASE);
    fputs("; new ", out);
    print_side(out, d, REP_DIFF_NEW);
    if (d->time.is_known)
        fprintf(out, " (CPU time %+.1f %%)", 100.0 * d->time.change);
    fputs("\n\n", out);
    fputs("| function | self base | self new | self change | total base | total new "
          "| total change |\n",
          out);
    fputs("|:---|---:|---:|---:|---:|---:|---:|\n", out);
    size_t shown = rows_shown(d, o);
    for (size_t i = 0; i < shown; i++) {
        struct diff_row r = row_of(&d->fns[i], o->confidence);
        fputs("| ", out);
        md_name(out, rep_names_get(names, d->fns[i].id));
        for (int k = 0; k < 2; k++) {
            const char *b = r.is_sig[k] ? "**" : "";
            fprintf(out, " | %.2f %% | %.2f %% | %s%+.2f%s", r.share[k][0], r.share[k][1], b,
                    r.change[k], b);
        }
        fputs(" |\n", out);
    }
    fputc('\n', out);
    if (shown < d->n_fns)
        fprintf(out, "Showing %zu of %zu functions, by size of change. ", shown, d->n_fns);
    fprintf(out,
            "Shares are percent of each side's samples, changes in percentage points; "
            "**bold**: a change that sampling noise does not explain (one-sided p < %g).\n",
            1.0 - o->confidence);
}

int rep_out_diff(FILE *out, const struct rep_diff *d, const struct rep_names *names,
                 const struct rep_diff_out_opts *o)
{
    switch (o->format) {
    case REP_DIFF_SVG:
        return rep_out_diff_svg(out, d, names, o->confidence);
    case REP_DIFF_JSON:
        out_json(out, d, names, o);
        break;
    case REP_DIFF_MARKDOWN:
        out_markdown(out, d, names, o);
        break;
    default:
        out_text(out, d, names, o);
        break;
    }
    return fflush(out) == 0 && !ferror(out) ? CMN_OK : CMN_E_IO;
}
