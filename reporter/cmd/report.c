/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `prof report`: reads every file (printing its warnings and counts), symbolizes,
 * aggregates under the selection, and writes one output. Reporter thread only.
 */
#include "reporter/cmd/report.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/grow.h"
#include "common/parse.h"
#include "include/libprof/prof_format.h"
#include "reporter/base/progress.h"
#include "reporter/base/warn.h"
#include "reporter/cmd/cmd.h"
#include "reporter/input/family.h"
#include "reporter/input/profile.h"
#include "reporter/input/read.h"
#include "reporter/input/warnings.h"
#include "reporter/output/folded.h"
#include "reporter/output/html.h"
#include "reporter/output/json.h"
#include "reporter/output/pprof.h"
#include "reporter/output/speedscope.h"
#include "reporter/output/svg.h"
#include "reporter/output/top.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/stacks/flame.h"
#include "reporter/stacks/per_thread.h"
#include "reporter/stacks/select.h"
#include "reporter/symbols/names.h"
#include "reporter/symbols/symbols.h"

const char rep_cmd_report_help[] =
    "usage: prof report [options] FILE...\n"
    "\n"
    "Reads profiles (several are merged), names every frame and writes one output.\n"
    "Each file's counts (samples, dropped, truncated walks) go to standard error.\n"
    "\n"
    "output:\n"
    "  -f, --format FORMAT  top: functions by self (flat) and total (cum) samples;\n"
    "                       folded: 'main;f;g COUNT' lines, for flamegraph.pl,\n"
    "                       inferno or speedscope; svg, html: a flame graph (click\n"
    "                       to zoom, search); json: the call tree; speedscope: one\n"
    "                       profile per thread; pprof: gzipped profile.proto for\n"
    "                       go tool pprof (docs/OUTPUTS.md). Default: top on a\n"
    "                       terminal, folded into a pipe or a file\n"
    "  -o, --output FILE    write the output to FILE (default: standard output)\n"
    "  -n, --limit N        top: the first N functions only (default: 0, all; 30\n"
    "                       when top is chosen for a terminal)\n"
    "  -s, --sort KEY       top: flat or cum (default: flat)\n"
    "      --title TEXT     svg, html: the title (default: \"Flame graph\")\n"
    "      --icicle         svg, html: the root at the top, callees below\n"
    "      --min-width PCT  svg: draw no frame narrower than PCT % of the total;\n"
    "                       counts do not change (default: 0.1; 0: all); html\n"
    "                       draws all, the narrowest merged per caller\n"
    "      --lines          name frames 'func (file.c:LINE)'; a function inlined\n"
    "                       into another is a frame of its own, ' [inlined]'\n"
    "      --no-symbols     name frames module+0xOFFSET, reading no binary\n"
    "\n"
    "selection (a repeated option adds alternatives; different options all apply):\n"
    "      --tid N          the samples of thread N\n"
    "      --thread NAME    the samples of the threads named NAME\n"
    "      --select-pid N   the profiles of process N (formerly --pid)\n"
    "      --from S         the samples taken S seconds after the start or later\n"
    "      --to S           the samples taken before S seconds after the start\n"
    "      --state LIST     wall profiles: the samples in these thread states,\n"
    "                       comma-separated: running, runnable, sleeping, disk,\n"
    "                       stopped, wait, waiting (sleeping, disk, wait), off-cpu,\n"
    "                       or a system call: futex, read, poll, ... (default: all)\n"
    "      --focus REGEX    the stacks with a frame matching REGEX (POSIX ERE)\n"
    "      --ignore REGEX   not the stacks with a frame matching REGEX\n"
    "      --prune PCT      cut call-tree nodes under PCT % of the total, their\n"
    "                       weight going to the frame above; totals do not change\n"
    "                       (default: 0, none; formerly --min-percent)\n"
    "      --label KEY=VALUE  the samples whose thread label KEY was VALUE\n"
    "      --trace ID       the samples taken under trace ID (hex: its 32 digits\n"
    "                       or their start)\n"
    "      --by-label KEY   a 'KEY=VALUE' root frame for each value of label KEY\n"
    "      --threads        a 'name (tid)' root frame for each thread\n"
    "      --processes      an 'exe (pid)' root frame for each process\n"
    "      --family         also read the other profiles of the run that wrote\n"
    "                       FILE: its child processes' FILE.PID files\n"
    "  -h, --help           this help\n";

#define TERMINAL_TOP_LIMIT 30 /* the top table's rows on a terminal, unless -n says */

enum report_format {
    FORMAT_TOP,
    FORMAT_FOLDED,
    FORMAT_SVG,
    FORMAT_HTML,
    FORMAT_JSON,
    FORMAT_SPEEDSCOPE,
    FORMAT_PPROF,
};

struct report_opts {
    enum report_format format;
    struct rep_top_opts top;
    struct rep_flame_opts flame; /* svg, html: --title, --icicle; svg: --min-width */
    const char *output; /* -o, NULL for stdout */
    bool is_offline;    /* --no-symbols */
    bool is_no_inline;  /* --no-inline */
    double dbgd_budget_s; /* --debuginfod-budget, < 0 when not given */
    const char *perf_map_dir; /* --perf-map-dir, NULL when not given */
    struct rep_sel sel; /* --lines and the selection options (reporter/stacks/select.h) */
    char **files;       /* the profiles: argv's, or family_files */
    int n_files;
    bool has_format;    /* -f given */
    bool has_limit;     /* -n given */
    bool is_family;     /* --family */
    char **family_files; /* with --family: the files and their families; owned */
    bool is_help;       /* -h, --help */
};

/* How the library's walks went: frames stepped by unwind table and by frame pointer, the
 * tables' memory. Printed when the profile has those counts (PROF_UNWIND=auto|dwarf). */
static void print_unwind_stats(const struct rep_profile *p)
{
    const uint64_t *c = p->stats;
    if (p->has_stats && c[PROF_STAT_CHECK_SAME] + c[PROF_STAT_CHECK_DIFF] > 0)
        fprintf(stderr,
                "prof: %s: unwind check: %" PRIu64 " walks as libunwind's, %" PRIu64
                " not (prof report --unwind-check tables|libunwind shows them)\n",
                p->name, c[PROF_STAT_CHECK_SAME], c[PROF_STAT_CHECK_DIFF]);
    if (!p->has_stats || c[PROF_STAT_FRAMES_TABLE] + c[PROF_STAT_UNWIND_MODULES] == 0)
        return;
    fprintf(stderr,
            "prof: %s: frames by unwind table %" PRIu64 ", by frame pointer %" PRIu64
            "; %" PRIu64 " tables, %.1f MiB\n",
            p->name, c[PROF_STAT_FRAMES_TABLE], c[PROF_STAT_FRAMES_FP],
            c[PROF_STAT_UNWIND_MODULES], (double)c[PROF_STAT_UNWIND_BYTES] / (1 << 20));
}

/* The per-file line of counts, then warnings about how the run ended. */
static void print_file_stats(const struct rep_profile *p)
{
    /* The reader counted the samples by stop reason, also those it did not keep. */
    const uint64_t *by_reason = p->n_stopped;
    uint64_t truncated = p->n_samples_read - p->n_stopped[PROF_STOP_END];
    if (p->has_process && p->process.timer_source == PROF_TIMER_NONE) {
        /* A snapshot: one stack per thread that answered, no counters. */
        fprintf(stderr, "prof: %s: a snapshot of %zu threads, %zu stacks, %" PRIu64 " truncated\n",
                p->name, p->n_snap_threads, p->n_samples_read, truncated);
        return;
    }
    char dropped[64];
    if (p->has_stats)
        snprintf(dropped, sizeof(dropped), "%" PRIu64 " dropped", p->stats[PROF_STAT_DROPPED]);
    else
        snprintf(dropped, sizeof(dropped), "dropped unknown (no stats record)");
    char in_kernel[64] = "";
    if (p->has_stats && p->stats[PROF_STAT_KERNEL_SAMPLES] > 0)
        snprintf(in_kernel, sizeof(in_kernel), " (%" PRIu64 " in system calls)",
                 p->stats[PROF_STAT_KERNEL_SAMPLES]);
    fprintf(stderr, "prof: %s: %zu samples%s, %s, %" PRIu64 " truncated", p->name,
            p->n_samples_read, in_kernel, dropped, truncated);
    /* The reasons that stopped a walk, those that did only. */
    const char *sep = " (";
    for (unsigned r = PROF_STOP_END + 1; r <= PROF_STOP_N; r++) {
        if (by_reason[r] == 0)
            continue;
        fprintf(stderr, "%s%s %" PRIu64, sep, rep_stop_name(r), by_reason[r]);
        sep = ", ";
    }
    if (truncated > 0)
        fputc(')', stderr);
    fputc('\n', stderr);
    print_unwind_stats(p);
    const uint64_t *c = p->stats;
    if (p->has_process && p->process.mode == PROF_MODE_WALL)
        fprintf(stderr,
                "prof: %s: wall-clock profile: %" PRIu64 " samples off CPU, %" PRIu64
                " context switches lost\n",
                p->name, c[PROF_STAT_OFFCPU_SAMPLES], c[PROF_STAT_SWITCHES_LOST]);
    if (p->n_labels == 0)
        return;
    fprintf(stderr, "prof: %s: labels", p->name);
    for (size_t i = 0; i < p->n_labels; i++)
        fprintf(stderr, "%s %s=%s", i == 0 ? "" : ",", p->labels[i].key, p->labels[i].value);
    fputc('\n', stderr);
}

/* What the callbacks of a streamed read need. */
struct read_ctx {
    struct rep_sym *sym;
    struct rep_agg *agg;
};

/* A streamed file is read but for its samples: report on it, get ready to symbolize. */
static int on_profile_ready(struct rep_profile *p, void *ctx)
{
    struct read_ctx *c = ctx;
    rep_progress_fini(c->agg->progress);
    rep_profile_warn(p);
    print_file_stats(p);
    return rep_sym_use_profile(c->sym, p);
}

static int on_samples(struct rep_profile *p, void *ctx)
{
    struct read_ctx *c = ctx;
    return rep_agg_add_samples(c->agg, c->sym, p);
}

/* Reads, reports on, symbolizes and aggregates each file in turn, so that one profile's
 * bytes at most are in memory. Among several files, one whose process died before it wrote
 * anything is skipped with a warning (a family of profiles read with a glob); alone, it is
 * bad input. */
static int read_all(const struct report_opts *o, struct rep_sym *sym, struct rep_agg *agg,
                    struct rep_per_thread *threads, struct cmn_err *err)
{
    size_t n_printed = 0;
    int n_read = 0;
    for (int i = 0; i < o->n_files; i++) {
        struct rep_profile p;
        if (o->n_files > 1 && rep_read_is_stillborn(o->files[i])) {
            rep_warnf("%s is empty: its process ended before it wrote anything; skipped",
                      o->files[i]);
            continue;
        }
        n_read++;
        rep_progress_update(agg->progress, o->files[i], 0, 0);
        if (threads == NULL) {
            /* Streamed: memory grows with the distinct stacks, not with the samples. */
            struct read_ctx c = {.sym = sym, .agg = agg};
            int rc = rep_read_file_stream(o->files[i], &p, on_profile_ready, on_samples, &c, err);
            rep_progress_fini(agg->progress);
            if (rc == CMN_OK)
                rep_agg_end_profile(agg, &p);
            if (rc == CMN_E_NOMEM)
                cmn_err_nomem(err);
            rep_sym_warn(sym, &n_printed);
            rep_profile_fini(&p);
            if (rc != CMN_OK)
                return rc;
            continue;
        }
        int rc = rep_read_file(o->files[i], &p, err);
        rep_progress_fini(agg->progress);
        if (rc == CMN_OK) {
            rep_profile_warn(&p);
            print_file_stats(&p);
            rc = rep_sym_use_profile(sym, &p);
            if (rc == CMN_OK)
                rc = rep_agg_add_profile(agg, sym, &p);
            if (rc == CMN_OK && threads != NULL)
                rc = rep_per_thread_add_profile(threads, sym, &p);
            if (rc == CMN_E_NOMEM)
                cmn_err_nomem(err);
            rep_sym_warn(sym, &n_printed);
        }
        rep_profile_fini(&p);
        if (rc != CMN_OK)
            return rc;
    }
    if (n_read == 0)
        return cmn_err_set(err, CMN_E_INPUT, "none of the %d files holds a profile", o->n_files);
    return CMN_OK;
}

/* The graph outputs and json draw the merged call tree. */
static int write_flame(FILE *out, const struct report_opts *o, const struct rep_agg *agg,
                       const struct rep_names *names)
{
    struct rep_flame f;
    if (rep_flame_build(&f, agg, names) != CMN_OK)
        return CMN_E_NOMEM;
    int rc = o->format == FORMAT_SVG ? rep_out_svg(out, &f, names, &o->flame)
                                     : rep_out_json(out, &f, names);
    rep_flame_fini(&f);
    return rc;
}

static int write_format(FILE *out, const struct report_opts *o, const struct rep_agg *agg,
                        const struct rep_per_thread *threads, const struct rep_names *names)
{
    switch (o->format) {
    case FORMAT_FOLDED:
        return rep_out_folded(out, agg, names);
    case FORMAT_TOP:
        return rep_out_top(out, agg, names, &o->top);
    case FORMAT_SPEEDSCOPE:
        return rep_out_speedscope(out, threads, names, o->flame.title);
    case FORMAT_PPROF:
        return rep_out_pprof(out, agg, names);
    case FORMAT_HTML:
        return rep_out_html(out, agg, names, &o->flame,
                            o->sel.n_by_labels > 0 ? o->sel.by_labels[0] : NULL);
    default:
        return write_flame(out, o, agg, names);
    }
}

static int write_output(const struct report_opts *o, const struct rep_agg *agg,
                        const struct rep_per_thread *threads, const struct rep_names *names,
                        struct cmn_err *err)
{
    FILE *out;
    int rc = rep_cmd_open_output(o->output, &out, err);
    if (rc != CMN_OK)
        return rc;
    rc = write_format(out, o, agg, threads, names);
    return rep_cmd_close_output(o->output, out, rc, err);
}

static int run_report(const struct report_opts *o, struct cmn_err *err)
{
    struct rep_names names;
    struct rep_sym sym;
    struct rep_agg agg;
    struct rep_per_thread threads;
    rep_names_init(&names);
    rep_sym_init(&sym, &names);
    rep_agg_init(&agg);
    rep_per_thread_init(&threads, &agg);
    sym.is_offline = o->is_offline;
    sym.is_no_inline = o->is_no_inline;
    if (o->dbgd_budget_s >= 0)
        sym.dbgd.budget_s = o->dbgd_budget_s;
    sym.perf_map_dir = o->perf_map_dir;
    /* The selection's filter remembers its verdicts as it goes: it is written to. */
    struct rep_sel *sel = (struct rep_sel *)&o->sel;
    rep_sel_apply(sel, &sym, &agg, o->format == FORMAT_PPROF);
    agg.is_timeline = o->format == FORMAT_HTML; /* its strip of the run over time */
    struct rep_progress progress;
    rep_progress_init(&progress, stderr, rep_progress_input_bytes(o->files, (size_t)o->n_files),
                      false);
    agg.progress = &progress;
    bool is_per_thread = o->format == FORMAT_SPEEDSCOPE;
    int rc = read_all(o, &sym, &agg, is_per_thread ? &threads : NULL, err);
    rep_progress_fini(&progress);
    if (rc == CMN_OK && (rc = rep_sel_finish(sel, &names, &agg)) != CMN_OK)
        cmn_err_nomem(err);
    if (rc == CMN_OK && agg.n_filtered > 0)
        fprintf(stderr, "prof: selection: %" PRIu64 " of %" PRIu64 " samples kept\n",
                agg.n_samples, agg.n_samples + agg.n_filtered);
    if (rc == CMN_OK) {
        if (o->n_files > 1)
            fprintf(stderr, "prof: %d files: %" PRIu64 " samples merged\n", o->n_files,
                    agg.n_samples);
        if (agg.n_samples == 0)
            rep_warnf("no samples: the program used too little CPU time to be sampled");
        rc = write_output(o, &agg, &threads, &names, err);
    }
    rep_per_thread_fini(&threads);
    rep_agg_fini(&agg);
    rep_sym_fini(&sym);
    rep_names_fini(&names);
    rep_sel_fini(sel);
    return rc;
}

static bool parse_format(const char *s, enum report_format *format)
{
    static const char *const names[] = {
        [FORMAT_TOP] = "top",   [FORMAT_FOLDED] = "folded", [FORMAT_SVG] = "svg",
        [FORMAT_HTML] = "html", [FORMAT_JSON] = "json",     [FORMAT_SPEEDSCOPE] = "speedscope",
        [FORMAT_PPROF] = "pprof",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(s, names[i]) == 0) {
            *format = (enum report_format)i;
            return true;
        }
    }
    return false;
}

/* --min-width: a percentage in [0, 100]; 0 draws every frame. */
static bool parse_min_width(const char *s, double *fraction)
{
    double v;
    if (!cmn_parse_double(s, 0, 100, &v))
        return false;
    *fraction = v == 0 ? -1.0 : v / 100.0;
    return true;
}

static int parse_report(int argc, char **argv, struct report_opts *o, struct cmn_err *err)
{
    enum { OPT_NO_SYMBOLS = 256, OPT_TITLE, OPT_ICICLE, OPT_MIN_WIDTH, OPT_NO_INLINE,
           OPT_DBGD_BUDGET, OPT_PERF_MAP_DIR, OPT_FAMILY };
    static const struct option longs[] = {
        {"format", required_argument, NULL, 'f'},
        {"limit", required_argument, NULL, 'n'},
        {"sort", required_argument, NULL, 's'},
        {"output", required_argument, NULL, 'o'},
        {"no-symbols", no_argument, NULL, OPT_NO_SYMBOLS},
        {"no-inline", no_argument, NULL, OPT_NO_INLINE},
        {"debuginfod-budget", required_argument, NULL, OPT_DBGD_BUDGET},
        {"perf-map-dir", required_argument, NULL, OPT_PERF_MAP_DIR},
        REP_SEL_LONG_OPTIONS,
        {"title", required_argument, NULL, OPT_TITLE},
        {"icicle", no_argument, NULL, OPT_ICICLE},
        {"min-width", required_argument, NULL, OPT_MIN_WIDTH},
        {"family", no_argument, NULL, OPT_FAMILY},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    unsigned long limit;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":f:n:s:o:h", longs, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (!parse_format(optarg, &o->format))
                return cmn_err_set(err, CMN_E_INPUT,
                                   "unknown format '%s' (top, folded, svg, html, json, "
                                   "speedscope, pprof)",
                                   optarg);
            o->has_format = true;
            break;
        case 'n':
            if (!cmn_parse_ulong(optarg, 0, SIZE_MAX, &limit))
                return cmn_err_set(err, CMN_E_INPUT, "--limit: '%s' is not a number", optarg);
            o->top.limit = limit;
            o->has_limit = true;
            break;
        case 's':
            if (strcmp(optarg, "flat") != 0 && strcmp(optarg, "cum") != 0)
                return cmn_err_set(err, CMN_E_INPUT, "unknown sort key '%s' (flat, cum)", optarg);
            o->top.is_by_cum = strcmp(optarg, "cum") == 0;
            break;
        case 'o':
            o->output = optarg;
            break;
        case OPT_NO_SYMBOLS:
            o->is_offline = true;
            break;
        case OPT_NO_INLINE:
            o->is_no_inline = true;
            break;
        case OPT_DBGD_BUDGET:
            if (!cmn_parse_double(optarg, 0, 3600, &o->dbgd_budget_s))
                return cmn_err_set(err, CMN_E_INPUT,
                                   "--debuginfod-budget: '%s' is not a number of seconds", optarg);
            break;
        case OPT_PERF_MAP_DIR:
            o->perf_map_dir = optarg;
            break;
        case REP_SEL_LINES ... REP_SEL_END - 1: {
            int rc = rep_sel_option(&o->sel, c, optarg, err);
            if (rc != CMN_OK)
                return rc;
            break;
        }
        case OPT_TITLE:
            o->flame.title = optarg;
            break;
        case OPT_ICICLE:
            o->flame.is_icicle = true;
            break;
        case OPT_MIN_WIDTH:
            if (!parse_min_width(optarg, &o->flame.min_width))
                return cmn_err_set(err, CMN_E_INPUT, "--min-width: '%s' is not a percentage",
                                   optarg);
            break;
        case OPT_FAMILY:
            o->is_family = true;
            break;
        case 'h':
            o->is_help = true;
            return CMN_OK;
        case ':':
            return cmn_err_set(err, CMN_E_INPUT, "report: %s needs a value", argv[optind - 1]);
        default:
            return rep_cmd_unknown_option(err, "report", argv);
        }
    }
    o->files = argv + optind;
    o->n_files = argc - optind;
    if (o->n_files == 0)
        return cmn_err_set(err, CMN_E_INPUT, "report: no profile given (see prof report --help)");
    return CMN_OK;
}

/* The format when -f is not given: the top table for a person at a terminal, folded
 * stacks for a program reading a pipe or a file. */
static void choose_default_format(struct report_opts *o)
{
    if (o->has_format || o->output != NULL || !isatty(STDOUT_FILENO))
        return;
    o->format = FORMAT_TOP;
    if (!o->has_limit)
        o->top.limit = TERMINAL_TOP_LIMIT;
}

/* Whether path names the same file as one of the first n of files. */
static bool is_listed(char **files, int n, const char *path)
{
    char *real = realpath(path, NULL);
    bool is_in = false;
    for (int i = 0; i < n && !is_in; i++) {
        char *other = realpath(files[i], NULL);
        is_in = real != NULL && other != NULL ? strcmp(real, other) == 0
                                              : strcmp(path, files[i]) == 0;
        free(other);
    }
    free(real);
    return is_in;
}

/* Appends path to o->family_files (o->n_files of them) unless it is there. */
static int add_family_file(struct report_opts *o, size_t *cap, const char *path)
{
    if (is_listed(o->family_files, o->n_files, path))
        return CMN_OK;
    char *copy = strdup(path);
    if (copy == NULL || !CMN_GROW(o->family_files, *cap, (size_t)o->n_files + 1, 16)) {
        free(copy);
        return CMN_E_NOMEM;
    }
    o->family_files[o->n_files++] = copy;
    return CMN_OK;
}

/* --family: every file given, then the rest of its family (reporter/input/family.h). */
static int expand_family(struct report_opts *o, struct cmn_err *err)
{
    char **given = o->files;
    int n_given = o->n_files;
    size_t cap = 0;
    int rc = CMN_OK;
    o->n_files = 0;
    for (int i = 0; i < n_given && rc == CMN_OK; i++) {
        struct rep_family_member head = {0};
        struct rep_family f;
        rep_family_init(&f);
        rc = add_family_file(o, &cap, given[i]);
        if (rc == CMN_OK && rep_family_read_head(given[i], &head) == CMN_OK)
            rc = rep_family_find(&f, given[i], head.pid, 0);
        for (size_t k = 0; rc == CMN_OK && k < f.n; k++)
            rc = add_family_file(o, &cap, f.members[k].path);
        rep_family_fini(&f);
    }
    o->files = o->family_files;
    return rc == CMN_OK ? CMN_OK : cmn_err_nomem(err);
}

static void free_family_files(struct report_opts *o)
{
    for (int i = 0; o->family_files != NULL && i < o->n_files; i++)
        free(o->family_files[i]);
    free(o->family_files);
    o->family_files = NULL;
}

/* One profile of a family read alone: one line says that the others exist, and how to
 * read them all. */
static void note_family(const struct report_opts *o)
{
    struct rep_family_member head = {0};
    if (o->is_family || o->n_files != 1 || rep_family_read_head(o->files[0], &head) != CMN_OK)
        return;
    struct rep_family f;
    rep_family_init(&f);
    if (rep_family_find(&f, o->files[0], head.pid, 0) == CMN_OK && f.n > 1) {
        fprintf(stderr, "prof: %s is one of %zu profiles that one run wrote (", o->files[0],
                f.n);
        size_t shown = 0;
        for (size_t i = 0; i < f.n && shown < 3; i++)
            if (!is_listed(o->files, 1, f.members[i].path))
                fprintf(stderr, "%s%s", shown++ > 0 ? ", " : "", f.members[i].path);
        fprintf(stderr, "%s); prof report --family %s reads them all\n",
                f.n > 4 ? ", ..." : "", o->files[0]);
    }
    rep_family_fini(&f);
}

int rep_cmd_report(int argc, char **argv, int *exit_status, struct cmn_err *err)
{
    struct report_opts o = {.format = FORMAT_FOLDED, .dbgd_budget_s = -1};
    int rc = parse_report(argc, argv, &o, err);
    *exit_status = o.is_help ? REP_CMD_HELP : 0;
    if (rc != CMN_OK || o.is_help)
        return rc;
    choose_default_format(&o);
    if (o.is_family)
        rc = expand_family(&o, err);
    if (rc == CMN_OK)
        rc = run_report(&o, err);
    if (rc == CMN_OK)
        note_family(&o);
    free_family_files(&o);
    return rc;
}
