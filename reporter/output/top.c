/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The top table: flat and cum per name id in arrays indexed by id, filled in one pass
 * over the stacks (a per-id stamp of the last stack counted keeps recursion from counting
 * a function twice in one stack), then the ids that appear sorted and printed. Reporter
 * thread only.
 */
#include "reporter/output/top.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/symbols/names.h"

struct top_row {
    uint32_t id;
    uint64_t flat;
    uint64_t cum;
    uint64_t cum_off; /* of cum, off CPU (wall profiles) */
};

/* Sort context for qsort, which has none of its own. */
static const struct rep_names *sort_names;
static bool sort_by_cum;

static int cmp_row(const void *va, const void *vb)
{
    const struct top_row *a = va, *b = vb;
    uint64_t a1 = sort_by_cum ? a->cum : a->flat, b1 = sort_by_cum ? b->cum : b->flat;
    uint64_t a2 = sort_by_cum ? a->flat : a->cum, b2 = sort_by_cum ? b->flat : b->cum;
    if (a1 != b1)
        return a1 > b1 ? -1 : 1;
    if (a2 != b2)
        return a2 > b2 ? -1 : 1;
    return strcmp(rep_names_get(sort_names, a->id), rep_names_get(sort_names, b->id));
}

/* Sums flat and cum per id; *rows gets the ids with any weight, *n_rows their count. */
static int collect(const struct rep_agg *a, uint32_t n_names, struct top_row **rows, size_t *n_rows)
{
    struct top_row *all = calloc(n_names ? n_names : 1, sizeof(*all));
    size_t *stamp = calloc(n_names ? n_names : 1, sizeof(*stamp));
    if (all == NULL || stamp == NULL) {
        free(all);
        free(stamp);
        return CMN_E_NOMEM;
    }
    for (size_t i = 0; i < a->n_stacks; i++) {
        const struct rep_stack *st = &a->stacks[i];
        const uint32_t *ids = rep_agg_stack_ids(a, i);
        all[ids[st->n_ids - 1]].flat += st->weight;
        for (uint32_t f = 0; f < st->n_ids; f++) {
            if (stamp[ids[f]] == i + 1)
                continue;
            stamp[ids[f]] = i + 1;
            all[ids[f]].cum += st->weight;
            all[ids[f]].cum_off += st->off_weight;
        }
    }
    size_t n = 0;
    for (uint32_t id = 0; id < n_names; id++) {
        if (all[id].cum == 0)
            continue;
        all[id].id = id;
        all[n++] = all[id];
    }
    free(stamp);
    *rows = all;
    *n_rows = n;
    return CMN_OK;
}

/* Whether two sampling rates are the same for display: less than 1% apart. */
static bool hz_close(double a, double b)
{
    double d = a > b ? a - b : b - a;
    return d < 0.01 * (a > b ? a : b);
}

static double percent(uint64_t part, uint64_t total)
{
    return total ? 100.0 * (double)part / (double)total : 0.0;
}

static void print_header(FILE *out, const struct rep_agg *a, size_t shown, size_t n_rows,
                         bool is_by_cum)
{
    fprintf(out, "Total: %" PRIu64 " samples", a->total_weight);
    if (a->off_weight > 0)
        fprintf(out, ", %.2f%% off CPU", percent(a->off_weight, a->total_weight));
    if (a->seconds > 0 && !a->is_time_partial) {
        /* The rate shown is the one delivered, over all profiles; the timer may deliver
         * less than was asked for (the kernel's tick caps it), and then both are shown. */
        double hz = (double)a->timed_weight / a->seconds;
        fprintf(out, " (%.2f s at %.0f Hz", a->seconds, hz);
        if (a->requested_hz != 0 && !hz_close(hz, a->requested_hz))
            fprintf(out, ", %" PRIu32 " Hz requested", a->requested_hz);
        fputc(')', out);
    }
    fputc('\n', out);
    if (shown < n_rows)
        fprintf(out, "Showing %zu of %zu functions, by %s\n", shown, n_rows,
                is_by_cum ? "cum" : "flat");
    fprintf(out, "%8s %7s %7s %8s %7s", "flat", "flat%", "sum%", "cum", "cum%");
    /* A wall profile: cum split into the time on CPU and the time off it (waiting). */
    if (a->off_weight > 0)
        fprintf(out, " %8s %8s", "on-cpu", "off-cpu");
    fputc('\n', out);
}

/* Prints name with control characters as spaces, so that a row stays one line. */
static void print_name(FILE *out, const char *name)
{
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        fputc(*c < 0x20 || *c == 0x7f ? ' ' : *c, out);
    fputc('\n', out);
}

int rep_out_top(FILE *out, const struct rep_agg *a, const struct rep_names *names,
                const struct rep_top_opts *opts)
{
    struct top_row *rows;
    size_t n_rows;
    if (collect(a, names->n_names, &rows, &n_rows) != CMN_OK)
        return CMN_E_NOMEM;
    sort_names = names;
    sort_by_cum = opts->is_by_cum;
    qsort(rows, n_rows, sizeof(*rows), cmp_row);
    size_t shown = opts->limit != 0 && opts->limit < n_rows ? opts->limit : n_rows;
    print_header(out, a, shown, n_rows, opts->is_by_cum);
    uint64_t sum = 0;
    for (size_t i = 0; i < shown; i++) {
        const struct top_row *r = &rows[i];
        sum += r->flat;
        fprintf(out, "%8" PRIu64 " %6.2f%% %6.2f%% %8" PRIu64 " %6.2f%%", r->flat,
                percent(r->flat, a->total_weight), percent(sum, a->total_weight), r->cum,
                percent(r->cum, a->total_weight));
        if (a->off_weight > 0)
            fprintf(out, " %8" PRIu64 " %8" PRIu64, r->cum - r->cum_off, r->cum_off);
        fputs("  ", out);
        print_name(out, rep_names_get(names, r->id));
    }
    free(rows);
    return fflush(out) == 0 && !ferror(out) ? CMN_OK : CMN_E_IO;
}
