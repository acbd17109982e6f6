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

#include "include/prof_format.h"
#include "reporter/aggregate.h"
#include "reporter/err.h"
#include "reporter/names.h"
#include "reporter/out_folded.h"
#include "reporter/out_top.h"
#include "reporter/profile.h"
#include "reporter/read.h"
#include "reporter/record_cmd.h"
#include "reporter/symbols.h"

#define PROF_VERSION_STRING "0.1.0"

#define EXIT_INTERNAL 1
#define EXIT_USAGE 2

enum report_format { FORMAT_TOP, FORMAT_FOLDED };

struct report_opts {
    enum report_format format;
    struct rep_top_opts top;
    const char *output; /* -o, NULL for stdout */
    bool is_offline;    /* --no-symbols */
    char **files;       /* the profiles */
    int n_files;
};

static const char usage_text[] =
    "usage: prof report [options] FILE...   print a profile (several files are merged)\n"
    "       prof record [options] [--] COMMAND [ARG]...   run COMMAND under libprof\n"
    "       prof --help | --version\n"
    "\n"
    "report options:\n"
    "  -f, --format FORMAT  folded (default): one 'root;...;leaf COUNT' line per stack,\n"
    "                       sorted, for flamegraph.pl, inferno or speedscope;\n"
    "                       top: a table of functions by flat/cum weight\n"
    "  -n, --limit N        top: show the first N functions only (0: all, the default)\n"
    "  -s, --sort KEY       top: sort by flat (default) or cum\n"
    "  -o, --output FILE    write to FILE instead of standard output\n"
    "      --no-symbols     name frames module+0xOFFSET without reading any binary\n"
    "  Each file's counts (samples, dropped, truncated) are printed on standard error.\n"
    "\n"
    "record options:\n"
    "  -o, --output PATH    profile to write (PROF_OUTPUT; %p is the pid)\n"
    "  -F, --freq HZ        sampling frequency (PROF_FREQ)\n"
    "  -d, --depth N        frames per sample at most (PROF_DEPTH)\n"
    "  The library is $PROF_LIBRARY, else libprof.so next to prof or in ../lib.\n"
    "\n"
    "exit status: 0 success; 1 internal failure (out of memory, output write error);\n"
    "  2 bad usage or bad input; record: the command's status (128+N if killed by\n"
    "  signal N), 127 if it was not found, 126 if it could not be run.\n";

static void errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warnf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("prof: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void warnf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("prof: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int exit_status_of(int rc)
{
    switch (rc) {
    case REP_OK:
        return 0;
    case REP_E_INPUT:
        return EXIT_USAGE;
    case REP_E_NOCMD:
        return 127;
    case REP_E_NOEXEC:
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
    uint64_t by_reason[PROF_STOP_N + 1] = {0};
    uint64_t truncated = 0;
    for (size_t i = 0; i < p->n_samples; i++) {
        uint8_t r = p->samples[i].stop_reason;
        if (r == PROF_STOP_END)
            continue;
        truncated++;
        by_reason[r < PROF_STOP_N ? r : PROF_STOP_N]++;
    }
    char dropped[64];
    if (p->has_stats)
        snprintf(dropped, sizeof(dropped), "%" PRIu64 " dropped", p->stats[PROF_STAT_DROPPED]);
    else
        snprintf(dropped, sizeof(dropped), "dropped unknown (no stats record)");
    fprintf(stderr, "prof: %s: %zu samples, %s, %" PRIu64 " truncated", p->name, p->n_samples,
            dropped, truncated);
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
        warnf("%s is cut short: it ends inside a record (the process was probably killed); "
              "read %zu samples",
              p->name, p->n_samples);
    else if (!p->has_end)
        warnf("%s has no end record: the run did not finish cleanly; read %zu samples", p->name,
              p->n_samples);
    if (p->has_stats && p->stats[PROF_STAT_DROPPED] > 0)
        warnf("%s: %" PRIu64 " samples were dropped because the sample buffer was full; "
              "the profile under-counts",
              p->name, p->stats[PROF_STAT_DROPPED]);
    if (p->has_stats && p->stats[PROF_STAT_WRITE_ERRORS] > 0)
        warnf("%s: writing the profile failed %" PRIu64 " times; records are missing", p->name,
              p->stats[PROF_STAT_WRITE_ERRORS]);
    if (p->n_unknown_records > 0)
        warnf("%s: skipped %zu records of unknown types (from a newer libprof?)", p->name,
              p->n_unknown_records);
}

static void print_sym_warnings(const struct rep_sym *sym, size_t *n_printed)
{
    for (; *n_printed < sym->n_warnings; (*n_printed)++)
        warnf("%s", sym->warnings[*n_printed]);
}

/* Reads, reports on, symbolizes and aggregates each file in turn, so that one profile's
 * bytes at most are in memory. */
static int read_all(const struct report_opts *o, struct rep_sym *sym, struct rep_agg *agg,
                    struct rep_err *err)
{
    size_t n_printed = 0;
    for (int i = 0; i < o->n_files; i++) {
        struct rep_profile p;
        int rc = rep_read_file(o->files[i], &p, err);
        if (rc == REP_OK) {
            print_file_warnings(&p);
            print_file_stats(&p);
            rc = rep_sym_use_profile(sym, &p);
            if (rc == REP_OK)
                rc = rep_agg_add_profile(agg, sym, &p);
            if (rc == REP_E_NOMEM)
                rep_err_nomem(err);
            print_sym_warnings(sym, &n_printed);
        }
        rep_profile_fini(&p);
        if (rc != REP_OK)
            return rc;
    }
    return REP_OK;
}

static int write_output(const struct report_opts *o, const struct rep_agg *agg,
                        const struct rep_names *names, struct rep_err *err)
{
    const char *name = o->output != NULL ? o->output : "standard output";
    FILE *out = stdout;
    if (o->output != NULL && (out = fopen(o->output, "w")) == NULL)
        return rep_err_set(err, REP_E_INPUT, "%s: %s", o->output, strerror(errno));
    int rc = o->format == FORMAT_FOLDED ? rep_out_folded(out, agg, names)
                                        : rep_out_top(out, agg, names, &o->top);
    if (o->output != NULL && fclose(out) != 0 && rc == REP_OK)
        rc = REP_E_IO;
    if (rc == REP_E_NOMEM)
        return rep_err_nomem(err);
    if (rc == REP_E_IO)
        return rep_err_set(err, REP_E_IO, "%s: write error: %s", name, strerror(errno));
    return rc;
}

static int run_report(const struct report_opts *o, struct rep_err *err)
{
    struct rep_names names;
    struct rep_sym sym;
    struct rep_agg agg;
    rep_names_init(&names);
    rep_sym_init(&sym, &names);
    rep_agg_init(&agg);
    sym.is_offline = o->is_offline;
    int rc = read_all(o, &sym, &agg, err);
    if (rc == REP_OK) {
        if (o->n_files > 1)
            fprintf(stderr, "prof: %d files: %" PRIu64 " samples merged\n", o->n_files,
                    agg.n_samples);
        if (agg.n_samples == 0)
            warnf("no samples: the program used too little CPU time to be sampled");
        rc = write_output(o, &agg, &names, err);
    }
    rep_agg_fini(&agg);
    rep_sym_fini(&sym);
    rep_names_fini(&names);
    return rc;
}

/* The message for getopt's '?': optopt names a short option, else argv[optind - 1] is
 * the long one. */
static int unknown_option(struct rep_err *err, const char *cmd, char **argv)
{
    if (optopt != 0)
        return rep_err_set(err, REP_E_INPUT, "%s: unknown option -%c (see prof --help)", cmd,
                           optopt);
    return rep_err_set(err, REP_E_INPUT, "%s: unknown option %s (see prof --help)", cmd,
                       argv[optind - 1]);
}

static int parse_report(int argc, char **argv, struct report_opts *o, struct rep_err *err)
{
    enum { OPT_NO_SYMBOLS = 256 };
    static const struct option longs[] = {
        {"format", required_argument, NULL, 'f'},
        {"limit", required_argument, NULL, 'n'},
        {"sort", required_argument, NULL, 's'},
        {"output", required_argument, NULL, 'o'},
        {"no-symbols", no_argument, NULL, OPT_NO_SYMBOLS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    unsigned long limit;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":f:n:s:o:h", longs, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (strcmp(optarg, "top") == 0)
                o->format = FORMAT_TOP;
            else if (strcmp(optarg, "folded") == 0)
                o->format = FORMAT_FOLDED;
            else
                return rep_err_set(err, REP_E_INPUT, "unknown format '%s' (top, folded)", optarg);
            break;
        case 'n':
            if (!parse_number(optarg, 0, SIZE_MAX, &limit))
                return rep_err_set(err, REP_E_INPUT, "--limit: '%s' is not a number", optarg);
            o->top.limit = limit;
            break;
        case 's':
            if (strcmp(optarg, "flat") != 0 && strcmp(optarg, "cum") != 0)
                return rep_err_set(err, REP_E_INPUT, "unknown sort key '%s' (flat, cum)", optarg);
            o->top.is_by_cum = strcmp(optarg, "cum") == 0;
            break;
        case 'o':
            o->output = optarg;
            break;
        case OPT_NO_SYMBOLS:
            o->is_offline = true;
            break;
        case 'h':
            fputs(usage_text, stdout);
            exit(0);
        case ':':
            return rep_err_set(err, REP_E_INPUT, "report: %s needs a value", argv[optind - 1]);
        default:
            return unknown_option(err, "report", argv);
        }
    }
    o->files = argv + optind;
    o->n_files = argc - optind;
    if (o->n_files == 0)
        return rep_err_set(err, REP_E_INPUT, "report: no profile given (see prof --help)");
    return REP_OK;
}

static int parse_record(int argc, char **argv, struct rep_record_opts *o, struct rep_err *err)
{
    static const struct option longs[] = {
        {"output", required_argument, NULL, 'o'},
        {"freq", required_argument, NULL, 'F'},
        {"depth", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    unsigned long v;
    int c;
    opterr = 0;
    /* '+': options end at the command, whose own options are its business. */
    while ((c = getopt_long(argc, argv, "+:o:F:d:h", longs, NULL)) != -1) {
        switch (c) {
        case 'o':
            o->output = optarg;
            break;
        case 'F':
            if (!parse_number(optarg, 1, 1000000, &v))
                return rep_err_set(err, REP_E_INPUT, "--freq: '%s' is not a frequency in Hz",
                                   optarg);
            o->freq = optarg;
            break;
        case 'd':
            if (!parse_number(optarg, 1, UINT16_MAX, &v))
                return rep_err_set(err, REP_E_INPUT, "--depth: '%s' is not a depth", optarg);
            o->depth = optarg;
            break;
        case 'h':
            fputs(usage_text, stdout);
            exit(0);
        case ':':
            return rep_err_set(err, REP_E_INPUT, "record: %s needs a value", argv[optind - 1]);
        default:
            return unknown_option(err, "record", argv);
        }
    }
    if (optind == argc)
        return rep_err_set(err, REP_E_INPUT, "record: no command given (see prof --help)");
    o->argv = argv + optind;
    return REP_OK;
}

int main(int argc, char **argv)
{
    struct rep_err err = {0};
    const char *cmd = argc > 1 ? argv[1] : NULL;
    int rc;
    if (cmd == NULL) {
        errorf("no command given: prof report FILE..., prof record CMD... (see prof --help)");
        return EXIT_USAGE;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        puts("prof " PROF_VERSION_STRING);
        return 0;
    }
    if (strcmp(cmd, "report") == 0) {
        struct report_opts o = {.format = FORMAT_FOLDED};
        rc = parse_report(argc - 1, argv + 1, &o, &err);
        if (rc == REP_OK)
            rc = run_report(&o, &err);
    } else if (strcmp(cmd, "record") == 0) {
        struct rep_record_opts o = {0};
        int status = 0;
        rc = parse_record(argc - 1, argv + 1, &o, &err);
        if (rc == REP_OK)
            rc = rep_record_run(&o, &status, &err);
        if (rc == REP_OK)
            return status;
    } else {
        rc = rep_err_set(&err, REP_E_INPUT, "unknown command '%s' (see prof --help)", cmd);
    }
    if (rc != REP_OK)
        errorf("%s", err.msg);
    return exit_status_of(rc);
}
