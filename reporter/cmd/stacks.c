/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The stacks command (see stacks_cmd.h): options, the choice between asking libprof and
 * attaching with ptrace, --save, and the output. The ptrace snapshot is written into memory
 * (open_memstream) and read back with the ordinary reader, so that both ways end as a
 * struct rep_profile holding the file's bytes, which is also what --save writes.
 */
#include "reporter/cmd/stacks.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach/procstat.h"
#include "attach/ptrace_snap.h"
#include "attach/ptrace_unwind.h"
#include "attach/snap_signal.h"
#include "common/err.h"
#include "common/parse.h"
#include "include/libprof/prof_format.h"
#include "reporter/base/warn.h"
#include "reporter/cmd/cmd.h"
#include "reporter/input/profile.h"
#include "reporter/input/read.h"
#include "reporter/output/folded.h"
#include "reporter/output/stacks.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/stacks/snap_groups.h"
#include "reporter/symbols/names.h"
#include "reporter/symbols/symbols.h"

#define DEFAULT_TIMEOUT_S 5.0

const char rep_cmd_stacks_help[] =
    "usage: prof stacks [options] PID | FILE\n"
    "\n"
    "Prints the current stack of every thread of process PID, grouped by identical\n"
    "stack, largest group first; FILE: a snapshot kept with --save. Under libprof\n"
    "the library is asked (its snapshot signal); otherwise, or when it does not\n"
    "answer, prof reads the process with ptrace, read-only, for a few milliseconds:\n"
    "the process runs on as before.\n"
    "\n"
    "  -f, --format FORMAT  text: 'K threads: TID name, ...  [state]', then the\n"
    "                       frames '#N  ADDRESS function (file.c:LINE)', leaf\n"
    "                       first; folded: 'root;...;leaf THREADS' lines\n"
    "                       (default: text)\n"
    "      --threads        folded: a 'name (tid)' root frame for each thread\n"
    "  -o, --output FILE    write the output to FILE (default: standard output)\n"
    "      --save FILE      also write the snapshot itself, a profile file (what\n"
    "                       record -o writes), to FILE\n"
    "      --no-symbols     name frames module+0xOFFSET, reading no binary\n"
    "      --ptrace         read the process with ptrace even under libprof\n"
    "      --signal SIG     the signal that asks libprof (default: the process's\n"
    "                       PROF_SNAPSHOT_SIGNAL, else RTMAX-3); off: use ptrace\n"
    "      --timeout TIME   wait up to TIME for libprof's answer, then for the\n"
    "                       threads to stop under ptrace: 500ms, 5s; a bare number\n"
    "                       is seconds (default: 5s)\n"
    "      --unwind MODE    how ptrace walks the stacks: dwarf (unwind tables\n"
    "                       built from the modules' .eh_frame or .debug_frame),\n"
    "                       fp (frame pointers), auto (the tables, frame pointers\n"
    "                       where a module has none), libunwind (libunwind's\n"
    "                       remote unwinder, slower) (default: auto)\n"
    "  -h, --help           this help\n"
    "\n"
    "States: R running, S sleeping, D disk sleep, T stopped, t tracing stop,\n"
    "Z zombie.\n";

struct stacks_opts {
    bool is_folded;                /* -f folded */
    bool is_threads;               /* --threads */
    const char *output;            /* -o, NULL for stdout */
    const char *save;              /* --save, NULL for none */
    bool is_offline;               /* --no-symbols */
    bool is_ptrace;                /* --ptrace, or --signal off */
    bool has_signal;               /* --signal given */
    int signal;                    /* its value */
    double timeout_s;              /* --timeout */
    enum att_ptrace_unwind unwind; /* --unwind */
    const char *target;            /* the PID or FILE argument */
    pid_t pid;                     /* the process, 0 when target is a file */
    char name[64];                 /* "process PID": the profile's name in messages */
    char how[300];                 /* how the snapshot was taken, for the output's first line */
    bool is_help;                  /* -h, --help */
};

/* A process id: a whole decimal number from 1. */
static bool is_pid(const char *s, pid_t *pid)
{
    unsigned long v;
    if (!cmn_parse_ulong(s, 1, 0x3fffffff, &v))
        return false;
    *pid = (pid_t)v;
    return true;
}

/* --unwind's value. */
static int parse_unwind(const char *s, enum att_ptrace_unwind *out, struct cmn_err *err)
{
    if (strcmp(s, "auto") == 0)
        *out = ATT_PTRACE_UNWIND_AUTO;
    else if (strcmp(s, "fp") == 0)
        *out = ATT_PTRACE_UNWIND_FP;
    else if (strcmp(s, "libunwind") == 0)
        *out = ATT_PTRACE_UNWIND_LIBUNWIND;
    else if (strcmp(s, "dwarf") == 0)
        *out = ATT_PTRACE_UNWIND_DWARF;
    else
        return cmn_err_set(err, CMN_E_INPUT,
                           "--unwind: unknown '%s' (auto, dwarf, fp, libunwind)", s);
    if (*out == ATT_PTRACE_UNWIND_LIBUNWIND && !att_punw_is_built())
        return cmn_err_set(err, CMN_E_INPUT,
                           "--unwind libunwind: prof was built without libunwind (install "
                           "libunwind-dev and rebuild)");
    return CMN_OK;
}

static int parse_option(int c, struct stacks_opts *o, struct cmn_err *err)
{
    uint64_t timeout_ns;
    switch (c) {
    case 'f':
        if (strcmp(optarg, "text") != 0 && strcmp(optarg, "folded") != 0)
            return cmn_err_set(err, CMN_E_INPUT, "stacks: unknown format '%s' (text, folded)",
                               optarg);
        o->is_folded = strcmp(optarg, "folded") == 0;
        return CMN_OK;
    case 'o':
        o->output = optarg;
        return CMN_OK;
    case 'S':
        o->save = optarg;
        return CMN_OK;
    case 'N':
        o->is_offline = true;
        return CMN_OK;
    case 'T':
        o->is_threads = true;
        return CMN_OK;
    case 'P':
        o->is_ptrace = true;
        return CMN_OK;
    case 'G':
        o->has_signal = true;
        return att_snap_signal_parse(optarg, &o->signal, err);
    case 'U':
        return parse_unwind(optarg, &o->unwind, err);
    case 'W':
        if (!cmn_parse_duration(optarg, 3600 * CMN_NS_PER_S, &timeout_ns))
            return cmn_err_set(err, CMN_E_INPUT,
                               "--timeout: '%s' is not a duration up to an hour (500ms, 5s; a "
                               "bare number is seconds)",
                               optarg);
        o->timeout_s = (double)timeout_ns / 1e9;
        return CMN_OK;
    default:
        return cmn_err_set(err, CMN_E_INPUT, "stacks: unknown option (see prof stacks --help)");
    }
}

static int parse_args(int argc, char **argv, struct stacks_opts *o, struct cmn_err *err)
{
    static const struct option longs[] = {
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"save", required_argument, NULL, 'S'},
        {"no-symbols", no_argument, NULL, 'N'},
        {"threads", no_argument, NULL, 'T'},
        {"ptrace", no_argument, NULL, 'P'},
        {"signal", required_argument, NULL, 'G'},
        {"timeout", required_argument, NULL, 'W'},
        {"unwind", required_argument, NULL, 'U'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":f:o:h", longs, NULL)) != -1) {
        if (c == 'h') {
            o->is_help = true;
            return CMN_OK;
        }
        if (c == ':')
            return cmn_err_set(err, CMN_E_INPUT, "stacks: %s needs a value", argv[optind - 1]);
        if (c == '?')
            return rep_cmd_unknown_option(err, "stacks", argv);
        int rc = parse_option(c, o, err);
        if (rc != CMN_OK)
            return rc;
    }
    if (optind + 1 != argc)
        return cmn_err_set(err, CMN_E_INPUT, "stacks: %s (see prof stacks --help)",
                           optind == argc ? "no PID or FILE given" : "give one PID or FILE");
    if (o->is_threads && !o->is_folded)
        return cmn_err_set(err, CMN_E_INPUT, "stacks: --threads goes with --format folded");
    if (o->has_signal && o->signal == 0)
        o->is_ptrace = true;
    o->target = argv[optind];
    return CMN_OK;
}

/* Asks libprof in the process for its snapshot when it can answer. CMN_OK with p read;
 * CMN_E_NOTFOUND when ptrace must do it (a warning said why, where that is news). */

/* The answer to a snapshot signal, read into p (a struct rep_profile) once it is whole:
 * its header written and its end record there. */
static bool read_answer(const char *path, void *ctx)
{
    struct rep_profile *p = ctx;
    const char *name = p->name;
    struct cmn_err ignored = {0};
    rep_profile_fini(p);
    if (rep_profile_init(p, name) != CMN_OK || rep_read_file(path, p, &ignored) != CMN_OK)
        return false; /* the header is not whole yet */
    return p->has_end && !p->is_torn;
}
static int ask_libprof(struct stacks_opts *o, struct rep_profile *p, struct cmn_err *err)
{
    pid_t pid = o->pid;
    int sig = o->has_signal ? o->signal : att_snap_signal_of(pid);
    char state = att_proc_task_state(pid, pid);
    if (sig == 0)
        return CMN_E_NOTFOUND; /* snapshots are off in the process */
    if (state == 'T' || state == 't') {
        rep_warnf("process %d is stopped and cannot answer the snapshot signal; reading its stacks "
                  "with ptrace",
                  (int)pid);
        return CMN_E_NOTFOUND;
    }
    if (!att_snap_signal_is_caught(pid, sig)) {
        /* Sending it would kill the process: its libprof takes no snapshots on sig. */
        rep_warnf("process %d runs under libprof but has no handler for signal %d (a libprof "
                  "without snapshots?); reading its stacks with ptrace",
                  (int)pid, sig);
        return CMN_E_NOTFOUND;
    }
    struct cmn_err why = {0};
    rep_profile_init(p, o->name);
    int rc = att_snap_signal_ask(pid, sig, o->timeout_s, read_answer, p, &why);
    p->name = o->name;
    if (rc == CMN_OK) {
        snprintf(o->how, sizeof(o->how), "libprof snapshot");
        return CMN_OK;
    }
    rep_profile_fini(p);
    if (rc == CMN_E_NOMEM)
        return cmn_err_nomem(err);
    if (rc == CMN_E_NOTFOUND)
        rep_warnf("process %d did not answer the snapshot signal within %g s; reading its stacks "
                  "with ptrace",
                  (int)pid, o->timeout_s);
    else
        rep_warnf("cannot ask process %d for a snapshot (%s); reading its stacks with ptrace",
                  (int)pid, why.msg);
    return CMN_E_NOTFOUND;
}

static int take_ptrace(struct stacks_opts *o, struct rep_profile *p, struct cmn_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (mem == NULL)
        return cmn_err_nomem(err);
    int rc = att_ptrace_snap_unwind(o->pid, o->timeout_s, o->unwind, mem, err);
    if (fclose(mem) != 0 && rc == CMN_OK)
        rc = cmn_err_nomem(err);
    if (rc == CMN_OK)
        rc = rep_read_buffer(buf, len, o->name, p, err);
    free(buf);
    snprintf(o->how, sizeof(o->how), "ptrace");
    return rc;
}

/* Whether the library's snapshot left a thread unasked (PROF_SNAP_NOT_ASKED). */
static bool has_unasked(const struct rep_profile *p)
{
    for (size_t i = 0; i < p->n_snap_threads; i++)
        if (p->snap_threads[i].status == PROF_SNAP_NOT_ASKED)
            return true;
    return false;
}

static int take_snapshot(struct stacks_opts *o, struct rep_profile *p, struct cmn_err *err)
{
    char path[64], tgid[32];
    snprintf(path, sizeof(path), "/proc/%d", (int)o->pid);
    if (access(path, F_OK) != 0)
        return cmn_err_set(err, CMN_E_INPUT, "no process %d", (int)o->pid);
    /* A thread's id names its process too: the snapshot is of the whole process. */
    if (att_proc_status_field(o->pid, "Tgid", tgid, sizeof(tgid)) && atoi(tgid) > 0)
        o->pid = (pid_t)atoi(tgid);
    if (o->pid == getpid())
        return cmn_err_set(err, CMN_E_INPUT, "process %d is prof itself", (int)o->pid);
    snprintf(o->name, sizeof(o->name), "process %d", (int)o->pid);
    rep_profile_init(p, o->name);
    if (!o->is_ptrace && att_snap_signal_has_libprof(o->pid)) {
        int rc = ask_libprof(o, p, err);
        if (rc != CMN_E_NOTFOUND && (rc != CMN_OK || !has_unasked(p)))
            return rc;
        if (rc == CMN_OK) {
            /* The library left threads alone that a signal would have woken early: ptrace
             * reads them without that; when it may not, the library's answer stands. */
            struct rep_profile traced;
            struct cmn_err ignored = {0};
            rep_profile_init(&traced, o->name);
            if (take_ptrace(o, &traced, &ignored) != CMN_OK) {
                rep_profile_fini(&traced);
                snprintf(o->how, sizeof(o->how), "libprof snapshot");
                return CMN_OK;
            }
            rep_profile_fini(p);
            *p = traced;
            snprintf(o->how, sizeof(o->how),
                     "ptrace: libprof's snapshot left out threads waiting in calls a signal "
                     "would cut short");
            return CMN_OK;
        }
    }
    return take_ptrace(o, p, err);
}

static int read_snapshot_file(struct stacks_opts *o, struct rep_profile *p, struct cmn_err *err)
{
    int rc = rep_read_file(o->target, p, err);
    if (rc != CMN_OK)
        return rc;
    if (p->n_snap_threads == 0)
        return cmn_err_set(err, CMN_E_INPUT,
                           "%s: not a snapshot (it lists no threads); prof report reads profiles",
                           o->target);
    if (!p->has_end)
        rep_warnf("%s is incomplete (no end record); showing what it holds", o->target);
    snprintf(o->how, sizeof(o->how), "from %.280s", o->target);
    return CMN_OK;
}

static int save(const struct stacks_opts *o, const struct rep_profile *p, struct cmn_err *err)
{
    FILE *f = fopen(o->save, "w");
    if (f == NULL)
        return cmn_err_set(err, CMN_E_INPUT, "%s: %s", o->save, strerror(errno));
    bool ok = fwrite(p->bytes, 1, p->n_bytes, f) == p->n_bytes;
    if (fclose(f) != 0 || !ok)
        return cmn_err_set(err, CMN_E_IO, "%s: write error: %s", o->save, strerror(errno));
    return CMN_OK;
}

/* The grouped text, or the folded stacks through the report's own aggregate. */
static int write_format(FILE *out, const struct stacks_opts *o, const struct rep_profile *p,
                        struct rep_sym *sym)
{
    int rc;
    if (o->is_folded) {
        struct rep_agg agg;
        rep_agg_init(&agg);
        agg.is_threads = o->is_threads;
        rc = rep_agg_add_profile(&agg, sym, p);
        if (rc == CMN_OK)
            rc = rep_out_folded(out, &agg, sym->names);
        rep_agg_fini(&agg);
        return rc;
    }
    struct rep_snap_groups g;
    rc = rep_snap_groups_build(&g, sym, p);
    if (rc == CMN_OK)
        rc = rep_out_stacks(out, p, &g, sym->names, o->how);
    rep_snap_groups_fini(&g);
    return rc;
}

static int write_output(const struct stacks_opts *o, const struct rep_profile *p,
                        struct cmn_err *err)
{
    struct rep_names names;
    struct rep_sym sym;
    rep_names_init(&names);
    rep_sym_init(&sym, &names);
    sym.is_offline = o->is_offline;
    sym.is_lines = !o->is_folded; /* the text names file:line; folded, like report, not */
    FILE *out = NULL;
    int rc = rep_sym_use_profile(&sym, p);
    if (rc == CMN_OK && (rc = rep_cmd_open_output(o->output, &out, err)) == CMN_OK) {
        rc = write_format(out, o, p, &sym);
        rc = rep_cmd_close_output(o->output, out, rc, err);
    } else if (rc == CMN_E_NOMEM) {
        rc = cmn_err_nomem(err);
    }
    size_t n_printed = 0;
    rep_sym_warn(&sym, &n_printed);
    rep_sym_fini(&sym);
    rep_names_fini(&names);
    return rc;
}

int rep_cmd_stacks(int argc, char **argv, int *exit_status, struct cmn_err *err)
{
    struct stacks_opts o = {.timeout_s = DEFAULT_TIMEOUT_S};
    struct rep_profile p;
    *exit_status = 0;
    int rc = parse_args(argc, argv, &o, err);
    if (rc == CMN_OK && o.is_help) {
        *exit_status = REP_CMD_HELP;
        return CMN_OK;
    }
    rep_profile_init(&p, NULL);
    if (rc == CMN_OK) {
        rc = is_pid(o.target, &o.pid) ? take_snapshot(&o, &p, err)
                                         : read_snapshot_file(&o, &p, err);
    }
    if (rc == CMN_OK && o.save != NULL)
        rc = save(&o, &p, err);
    if (rc == CMN_OK)
        rc = write_output(&o, &p, err);
    rep_profile_fini(&p);
    return rc;
}
