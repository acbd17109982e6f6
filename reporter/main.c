/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The `prof` command: parses the command line, runs `report` (read every file, print its
 * stats, symbolize, aggregate, write one output) or `record` (reporter/record_cmd.c), and
 * is the only place that prints an error or picks the exit status:
 *   0 success; 1 internal failure (out of memory, an output that cannot be written);
 *   2 bad usage or bad input (one line on stderr); for `record`, the command's own status,
 *   127 when it does not exist and 126 when it cannot be run.
 * Single-threaded.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "include/libprof/prof_format.h"
#include "reporter/aggregate.h"
#include "reporter/diff_cmd.h"
#include "common/err.h"
#include "reporter/warn.h"
#include "reporter/flame.h"
#include "reporter/names.h"
#include "reporter/out_folded.h"
#include "reporter/out_html.h"
#include "reporter/out_json.h"
#include "reporter/out_pprof.h"
#include "reporter/out_speedscope.h"
#include "reporter/out_svg.h"
#include "reporter/out_top.h"
#include "reporter/per_thread.h"
#include "reporter/profile.h"
#include "reporter/progress.h"
#include "reporter/read.h"
#include "reporter/record_cmd.h"
#include "attach/record_pid.h"
#include "reporter/select.h"
#include "reporter/stacks_cmd.h"
#include "reporter/symbolize_cmd.h"
#include "reporter/symbols.h"

#define PROF_VERSION_STRING "0.1.0"

#define EXIT_INTERNAL 1
#define EXIT_USAGE 2

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
    struct rep_flame_opts flame; /* svg, html: --title, --icicle, --min-width */
    const char *output; /* -o, NULL for stdout */
    bool is_offline;    /* --no-symbols */
    struct rep_sel sel; /* --lines and the selection options (reporter/select.h) */
    char **files;       /* the profiles */
    int n_files;
};

static const char usage_text[] =
    "usage: prof report [options] FILE...   print a profile (several files are merged)\n"
    "       prof record [options] [--] COMMAND [ARG]...   run COMMAND under libprof\n"
    "       prof record -p PID [-F HZ] [-d SECS] -o FILE   sample a running process\n"
    "       prof stacks [options] PID | FILE   every thread's stack now, grouped\n"
    "       prof --help | --version\n"
    "\n"
    "report options:\n"
    "  -f, --format FORMAT  folded (default): one 'root;...;leaf COUNT' line per stack,\n"
    "                       sorted, for flamegraph.pl, inferno or speedscope;\n"
    "                       top: a table of functions by flat/cum weight;\n"
    "                       svg: an interactive flame graph (zoom, search, tooltips),\n"
    "                       self-contained, for a browser; html: the same in a page;\n"
    "                       json: the call tree, {\"total\":N,\"unit\":\"samples\",\"root\":\n"
    "                       {\"name\":\"all\",\"self\":S,\"total\":T,\"children\":[...]}},\n"
    "                       children by total, largest first;\n"
    "                       speedscope: speedscope's JSON file, one profile per thread\n"
    "                       (see docs/OUTPUTS.md)\n"
    "      --title TEXT     svg, html: the graph's title (default \"Flame graph\")\n"
    "      --icicle         svg, html: root at the top, callees below\n"
    "      --min-width PCT  svg, html: leave out frames under PCT % of the total\n"
    "                       (default 0.1; 0 draws every frame)\n"
    "  -n, --limit N        top: show the first N functions only (0: all, the default)\n"
    "  -s, --sort KEY       top: sort by flat (default) or cum\n"
    "  -o, --output FILE    write to FILE instead of standard output\n"
    "      --no-symbols     name frames module+0xOFFSET without reading any binary\n"
    "  -f pprof             gzipped profile.proto for `go tool pprof` (use -o FILE)\n"
    "      --lines          fold by function and source line: 'func (file.c:123)'; a\n"
    "                       function inlined into another is a frame of its own, named\n"
    "                       'func (file.c:123) [inlined]'; the line is where the frame's\n"
    "                       address is (for callers, the call). Memory that is no file\n"
    "                       is '[anon]', a vDSO that is not prof's own '[vdso]+0xOFFSET'\n"
    "  selection (a repeated option gives alternatives; different options all apply):\n"
    "      --tid N          keep the samples of thread N (repeatable)\n"
    "      --thread NAME    keep the samples of the threads named NAME (repeatable)\n"
    "      --pid N          keep the files of process N (repeatable)\n"
    "      --from S, --to S keep the samples taken from S seconds / before S seconds\n"
    "                       after the profile's start\n"
    "      --focus REGEX    keep the stacks with a frame matching REGEX (POSIX extended)\n"
    "      --ignore REGEX   drop the stacks with a frame matching REGEX\n"
    "      --min-percent P  cut every call-tree node (a stack prefix) whose weight is\n"
    "                       under P % of the total, with all below it; its weight goes to\n"
    "                       the frame above it (a stack whose root is under P % becomes\n"
    "                       '[pruned]'); totals do not change\n"
    "      --threads        put 'thread-name (tid)' at the root of each stack\n"
    "      --processes      put 'exe (pid)' at the root of each stack, above the thread\n"
    "  Each file's counts (samples, dropped, truncated) are printed on standard error.\n"
    "\n"
    "record options:\n"
    "  -o, --output PATH    profile to write (PROF_OUTPUT; %p is the pid)\n"
    "  -F, --freq HZ        sampling frequency (PROF_FREQ)\n"
    "  -d, --depth N        frames per sample at most (PROF_DEPTH); with -p, -d is the\n"
    "                       duration (-D) and only --depth sets the depth\n"
    "  -p, --pid PID        sample the running process PID instead of running a command:\n"
    "                       perf_event task-clock counters on its threads, user space only\n"
    "                       (root, or your own process with kernel.perf_event_paranoid <= 2);\n"
    "                       -o FILE is required (no %p); sampling stops after -d, on Ctrl-C\n"
    "                       or SIGTERM, or when the process exits or execs, and the process\n"
    "                       runs on untouched; -F and --depth apply as for a command\n"
    "  -d, -D, --duration SECS  with -p: stop after SECS seconds (decimals allowed)\n"
    "      --callchain fp|kernel  with -p: fp (default) walks a copy of each sample's stack\n"
    "                       with libprof's stepper; kernel takes the kernel's frame-pointer\n"
    "                       walk (smaller samples, no leaf fixes, depth at most\n"
    "                       kernel.perf_event_max_stack)\n"
    "  The library is $PROF_LIBRARY, else libprof.so next to prof or in ../lib.\n"
    "\n"
    "exit status: 0 success; 1 internal failure (out of memory, output write error);\n"
    "  2 bad usage or bad input; record: the command's status (128+N if killed by\n"
    "  signal N), 127 if it was not found, 126 if it could not be run; record -p: 0, or 2\n"
    "  when the process does not exist or cannot be sampled (the line says why).\n";

static void errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("prof: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int exit_status_of(int rc)
{
    switch (rc) {
    case CMN_OK:
        return 0;
    case CMN_E_INPUT:
        return EXIT_USAGE;
    case CMN_E_NOCMD:
        return 127;
    case CMN_E_NOEXEC:
        return 126;
    default:
        return EXIT_INTERNAL;
    }
}

/* Parses a whole decimal number in [min, max]. */
static bool parse_number(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
    char *end;
    if (s[0] < '0' || s[0] > '9')
        return false;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return false;
    *out = v;
    return true;
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
    if (truncated > 0) {
        fprintf(stderr,
                " (depth %" PRIu64 ", bounds %" PRIu64 ", align %" PRIu64 ", order %" PRIu64
                ", no-stack %" PRIu64,
                by_reason[PROF_STOP_DEPTH], by_reason[PROF_STOP_BOUNDS], by_reason[PROF_STOP_ALIGN],
                by_reason[PROF_STOP_ORDER], by_reason[PROF_STOP_NO_STACK]);
        if (by_reason[PROF_STOP_N] > 0)
            fprintf(stderr, ", other %" PRIu64, by_reason[PROF_STOP_N]);
        fputc(')', stderr);
    }
    fputc('\n', stderr);
}

static void print_file_warnings(const struct rep_profile *p)
{
    if (p->is_torn)
        rep_warnf("%s is cut short: it ends inside a record (the process was probably killed); "
              "read %zu samples",
              p->name, p->n_samples_read);
    else if (!p->has_end)
        rep_warnf("%s has no end record: the run did not finish cleanly; read %zu samples", p->name,
              p->n_samples_read);
    if (p->has_stats && p->stats[PROF_STAT_DROPPED] > 0)
        rep_warnf("%s: %" PRIu64 " samples were dropped because the sample buffer was full; "
              "the profile under-counts",
              p->name, p->stats[PROF_STAT_DROPPED]);
    if (p->has_stats && p->stats[PROF_STAT_WRITE_ERRORS] > 0)
        rep_warnf("%s: writing the profile failed %" PRIu64 " times; records are missing", p->name,
              p->stats[PROF_STAT_WRITE_ERRORS]);
    if (p->n_unknown_records > 0)
        rep_warnf("%s: skipped %zu records of unknown types (from a newer libprof?)", p->name,
              p->n_unknown_records);
    /* What the library adapted to: said here, not on the program's stderr. */
    for (size_t i = 0; i < p->n_notes; i++)
        rep_warnf("%s: libprof: %s", p->name, p->notes[i]);
}

static void print_sym_warnings(const struct rep_sym *sym, size_t *n_printed)
{
    for (; *n_printed < sym->n_warnings; (*n_printed)++)
        rep_warnf("%s", sym->warnings[*n_printed]);
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
    print_file_warnings(p);
    print_file_stats(p);
    return rep_sym_use_profile(c->sym, p);
}

static int on_samples(struct rep_profile *p, void *ctx)
{
    struct read_ctx *c = ctx;
    return rep_agg_add_samples(c->agg, c->sym, p);
}

/* 1 when path holds nothing of a profile but, maybe, the start of its header: its
 * process was killed as it started (a profile is created, then its header written). */
static bool is_stillborn(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_size >= (off_t)sizeof(struct prof_file_header))
        return false;
    char head[sizeof(struct prof_file_header)];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(head, 1, sizeof(head), f) : 0;
    if (f)
        fclose(f);
    return (off_t)n == st.st_size && memcmp(head, PROF_FILE_MAGIC, n) == 0;
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
        if (o->n_files > 1 && is_stillborn(o->files[i])) {
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
            print_sym_warnings(sym, &n_printed);
            rep_profile_fini(&p);
            if (rc != CMN_OK)
                return rc;
            continue;
        }
        int rc = rep_read_file(o->files[i], &p, err);
        rep_progress_fini(agg->progress);
        if (rc == CMN_OK) {
            print_file_warnings(&p);
            print_file_stats(&p);
            rc = rep_sym_use_profile(sym, &p);
            if (rc == CMN_OK)
                rc = rep_agg_add_profile(agg, sym, &p);
            if (rc == CMN_OK && threads != NULL)
                rc = rep_per_thread_add_profile(threads, sym, &p);
            if (rc == CMN_E_NOMEM)
                cmn_err_nomem(err);
            print_sym_warnings(sym, &n_printed);
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
    int rc = o->format == FORMAT_SVG    ? rep_out_svg(out, &f, names, &o->flame)
             : o->format == FORMAT_HTML ? rep_out_html(out, &f, names, &o->flame)
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
    default:
        return write_flame(out, o, agg, names);
    }
}

static int write_output(const struct report_opts *o, const struct rep_agg *agg,
                        const struct rep_per_thread *threads, const struct rep_names *names,
                        struct cmn_err *err)
{
    const char *name = o->output != NULL ? o->output : "standard output";
    FILE *out = stdout;
    if (o->output != NULL && (out = fopen(o->output, "w")) == NULL)
        return cmn_err_set(err, CMN_E_INPUT, "%s: %s", o->output, strerror(errno));
    int rc = write_format(out, o, agg, threads, names);
    if (o->output != NULL && fclose(out) != 0 && rc == CMN_OK)
        rc = CMN_E_IO;
    if (rc == CMN_E_NOMEM)
        return cmn_err_nomem(err);
    if (rc == CMN_E_IO)
        return cmn_err_set(err, CMN_E_IO, "%s: write error: %s", name, strerror(errno));
    return rc;
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
    /* The selection's filter remembers its verdicts as it goes: it is written to. */
    struct rep_sel *sel = (struct rep_sel *)&o->sel;
    rep_sel_apply(sel, &sym, &agg, o->format == FORMAT_PPROF);
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

/* The message for getopt's '?': optopt names a short option, else argv[optind - 1] is
 * the long one. */
static int unknown_option(struct cmn_err *err, const char *cmd, char **argv)
{
    if (optopt != 0)
        return cmn_err_set(err, CMN_E_INPUT, "%s: unknown option -%c (see prof --help)", cmd,
                           optopt);
    return cmn_err_set(err, CMN_E_INPUT, "%s: unknown option %s (see prof --help)", cmd,
                       argv[optind - 1]);
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
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v >= 0 && v <= 100))
        return false;
    *fraction = v == 0 ? -1.0 : v / 100.0;
    return true;
}

static int parse_report(int argc, char **argv, struct report_opts *o, struct cmn_err *err)
{
    enum { OPT_NO_SYMBOLS = 256, OPT_TITLE, OPT_ICICLE, OPT_MIN_WIDTH };
    static const struct option longs[] = {
        {"format", required_argument, NULL, 'f'},
        {"limit", required_argument, NULL, 'n'},
        {"sort", required_argument, NULL, 's'},
        {"output", required_argument, NULL, 'o'},
        {"no-symbols", no_argument, NULL, OPT_NO_SYMBOLS},
        REP_SEL_LONG_OPTIONS,
        {"title", required_argument, NULL, OPT_TITLE},
        {"icicle", no_argument, NULL, OPT_ICICLE},
        {"min-width", required_argument, NULL, OPT_MIN_WIDTH},
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
                                   "unknown format '%s' (top, folded, svg, html, json, speedscope)",
                                   optarg);
            break;
        case 'n':
            if (!parse_number(optarg, 0, SIZE_MAX, &limit))
                return cmn_err_set(err, CMN_E_INPUT, "--limit: '%s' is not a number", optarg);
            o->top.limit = limit;
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
        case 'h':
            fputs(usage_text, stdout);
            exit(0);
        case ':':
            return cmn_err_set(err, CMN_E_INPUT, "report: %s needs a value", argv[optind - 1]);
        default:
            return unknown_option(err, "report", argv);
        }
    }
    o->files = argv + optind;
    o->n_files = argc - optind;
    if (o->n_files == 0)
        return cmn_err_set(err, CMN_E_INPUT, "report: no profile given (see prof --help)");
    return CMN_OK;
}

/* What goes with what: -p or a command; --duration and --callchain with -p only. */
static int check_record(int argc, char **argv, struct rep_record_opts *o, bool has_pid_only,
                        struct cmn_err *err)
{
    if (o->pid != 0 && optind < argc)
        return cmn_err_set(err, CMN_E_INPUT,
                           "record: -p samples a running process; give it or a command, not both");
    if (o->pid == 0 && has_pid_only)
        return cmn_err_set(err, CMN_E_INPUT, "record: --duration and --callchain go with -p PID");
    if (o->pid != 0 && o->output == NULL)
        return cmn_err_set(err, CMN_E_INPUT, "record: -p needs -o FILE");
    if (o->pid != 0)
        return CMN_OK;
    if (optind == argc)
        return cmn_err_set(err, CMN_E_INPUT, "record: no command given (see prof --help)");
    o->argv = argv + optind;
    return CMN_OK;
}

/* A number of seconds for --duration (or -d with -p). */
static int parse_duration(const char *opt, const char *s, double *out, struct cmn_err *err)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(*out > 0) || *out > 1e9)
        return cmn_err_set(err, CMN_E_INPUT, "%s: '%s' is not a number of seconds", opt, s);
    return CMN_OK;
}

static int parse_depth(const char *opt, const char *s, struct rep_record_opts *o,
                       struct cmn_err *err)
{
    unsigned long v;
    if (!parse_number(s, 1, UINT16_MAX, &v))
        return cmn_err_set(err, CMN_E_INPUT, "%s: '%s' is not a depth", opt, s);
    o->depth = s;
    return CMN_OK;
}

/* -d is the depth when recording a command, and the duration with -p (`prof record -p PID
 * -d SECONDS`, as perf users expect); --depth and --duration say either without doubt. */
static int parse_record(int argc, char **argv, struct rep_record_opts *o, struct cmn_err *err)
{
    enum { OPT_CALLCHAIN = 256, OPT_DEPTH };
    static const struct option longs[] = {
        {"output", required_argument, NULL, 'o'},
        {"freq", required_argument, NULL, 'F'},
        {"depth", required_argument, NULL, OPT_DEPTH},
        {"pid", required_argument, NULL, 'p'},
        {"duration", required_argument, NULL, 'D'},
        {"callchain", required_argument, NULL, OPT_CALLCHAIN},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    unsigned long v;
    const char *short_d = NULL;
    bool has_pid_only = false;
    int c, rc;
    opterr = 0;
    /* '+': options end at the command, whose own options are its business. */
    while ((c = getopt_long(argc, argv, "+:o:F:d:p:D:h", longs, NULL)) != -1) {
        switch (c) {
        case 'o':
            o->output = optarg;
            break;
        case 'F':
            if (!parse_number(optarg, 1, 1000000, &v))
                return cmn_err_set(err, CMN_E_INPUT, "--freq: '%s' is not a frequency in Hz",
                                   optarg);
            o->freq = optarg;
            break;
        case 'd':
            short_d = optarg; /* its meaning depends on -p, which may come later */
            break;
        case OPT_DEPTH:
            if ((rc = parse_depth("--depth", optarg, o, err)) != CMN_OK)
                return rc;
            break;
        case 'p':
            if (!parse_number(optarg, 1, INT32_MAX, &v))
                return cmn_err_set(err, CMN_E_INPUT, "--pid: '%s' is not a process id", optarg);
            o->pid = (pid_t)v;
            break;
        case 'D':
            if ((rc = parse_duration("--duration", optarg, &o->duration_s, err)) != CMN_OK)
                return rc;
            has_pid_only = true;
            break;
        case OPT_CALLCHAIN:
            if (strcmp(optarg, "fp") != 0 && strcmp(optarg, "kernel") != 0)
                return cmn_err_set(err, CMN_E_INPUT, "--callchain: '%s' is not fp or kernel",
                                   optarg);
            o->is_kernel_callchain = strcmp(optarg, "kernel") == 0;
            has_pid_only = true;
            break;
        case 'h':
            fputs(usage_text, stdout);
            exit(0);
        case ':':
            return cmn_err_set(err, CMN_E_INPUT, "record: %s needs a value", argv[optind - 1]);
        default:
            return unknown_option(err, "record", argv);
        }
    }
    if (short_d && o->pid != 0)
        rc = parse_duration("-d (with -p: the duration; --depth sets the depth)", short_d,
                            &o->duration_s, err);
    else if (short_d)
        rc = parse_depth("-d", short_d, o, err);
    else
        rc = CMN_OK;
    return rc == CMN_OK ? check_record(argc, argv, o, has_pid_only, err) : rc;
}

int main(int argc, char **argv)
{
    struct cmn_err err = {0};
    const char *cmd = argc > 1 ? argv[1] : NULL;
    int rc;
    if (cmd == NULL) {
        errorf("no command given: prof report FILE..., prof record CMD... (see prof --help)");
        return EXIT_USAGE;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage_text, stdout);
        fputs(rep_diff_cmd_usage, stdout);
        fputs(rep_symbolize_cmd_usage, stdout);
        fputs(rep_stacks_cmd_usage, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        puts("prof " PROF_VERSION_STRING);
        return 0;
    }
    if (strcmp(cmd, "report") == 0) {
        struct report_opts o = {.format = FORMAT_FOLDED};
        rc = parse_report(argc - 1, argv + 1, &o, &err);
        if (rc == CMN_OK)
            rc = run_report(&o, &err);
    } else if (strcmp(cmd, "record") == 0) {
        struct rep_record_opts o = {0};
        int status = 0;
        rc = parse_record(argc - 1, argv + 1, &o, &err);
        if (rc == CMN_OK && o.pid != 0) {
            struct att_record_pid_opts po = {
                .pid = o.pid,
                .output = o.output,
                .hz = o.freq ? (unsigned)strtoul(o.freq, NULL, 10) : 0,
                .max_depth = o.depth ? (unsigned)strtoul(o.depth, NULL, 10) : 0,
                .duration_s = o.duration_s,
                .is_kernel_callchain = o.is_kernel_callchain,
            };
            rc = att_record_pid_run(&po, stderr, &err);
        } else if (rc == CMN_OK) {
            rc = rep_record_run(&o, &status, &err);
            if (rc == CMN_OK)
                return status;
        }
    } else if (strcmp(cmd, "symbolize") == 0) {
        rc = rep_symbolize_cmd_run(argc - 1, argv + 1, stdout, &err);
    } else if (strcmp(cmd, "stacks") == 0) {
        rc = rep_stacks_cmd_run(argc - 1, argv + 1, &err);
    } else if (strcmp(cmd, "diff") == 0 || strcmp(cmd, "check") == 0) {
        bool regressed = false;
        rc = rep_diff_cmd_run(argc - 1, argv + 1, strcmp(cmd, "check") == 0, &regressed, &err);
        if (rc == CMN_OK && regressed)
            return 1; /* check: something regressed */
    } else {
        rc = cmn_err_set(&err, CMN_E_INPUT, "unknown command '%s' (see prof --help)", cmd);
    }
    if (rc != CMN_OK)
        errorf("%s", err.msg);
    return exit_status_of(rc);
}
