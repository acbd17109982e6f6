/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `prof record`: its options, run as a command under the library (reporter/cmd/launch.h)
 * or, with -p, as the sampling of a running process (attach/record_pid.h). Reporter
 * thread only.
 *
 * The options are checked here as far as prof can (durations, numbers, signals); the
 * library checks what only it knows (--timer, --event, --unwind: their words change with
 * the library). Options whose meaning depends on -p (-d, --unwind) are kept until every
 * option is read. When the command ends, the profiles its processes wrote are found by
 * their names and process links (reporter/input/family.h) and listed on stderr.
 */
#include "reporter/cmd/record.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attach/record_pid.h"
#include "common/err.h"
#include "common/parse.h"
#include "reporter/cmd/cmd.h"
#include "reporter/cmd/launch.h"
#include "reporter/input/family.h"

const char rep_cmd_record_help[] =
    "usage: prof record [options] [--] COMMAND [ARG]...\n"
    "       prof record -p PID -o FILE [options]\n"
    "\n"
    "Runs COMMAND under libprof.so and exits with its status. Every process writes\n"
    "a profile of its own, listed on standard error at the end. An option sets the\n"
    "libprof variable in parentheses (libprof(7)), whose value the library checks.\n"
    "\n"
    "  -o, --output PATH    the profile (PROF_OUTPUT; default: prof.%p.prof, %p the\n"
    "                       pid); children write PATH.PID when PATH has no %p\n"
    "  -F, --freq HZ        samples per CPU-second (PROF_FREQ; default: 250)\n"
    "  -d, --duration TIME  sample the first TIME only, then let the program run\n"
    "                       on: 500ms, 10s, 5m, 1h; a bare number is seconds\n"
    "                       (PROF_DURATION; default: until the program ends)\n"
    "      --depth N        frames per sample at most (PROF_DEPTH; default: 256)\n"
    "      --mode MODE      cpu: CPU time; wall: wall time, each thread running or\n"
    "                       not, waits with their state (PROF_MODE; default: cpu)\n"
    "      --interval TIME  a new profile file every TIME, each complete: 60s, 5m\n"
    "                       (PROF_INTERVAL; default: one file)\n"
    "      --keep N         keep the newest N interval files (PROF_KEEP; default:\n"
    "                       0, all)\n"
    "      --labels LIST    key=value,... in every profile and its pprof samples\n"
    "                       (PROF_LABELS; default: none)\n"
    "      --timer SOURCE   auto, perf, thread or itimer (PROF_TIMER; default: auto)\n"
    "  -e, --event EVENT    the perf source's event: task-clock, cpu-clock, cycles,\n"
    "                       instructions (PROF_EVENT; default: task-clock)\n"
    "      --unwind MODE    how stacks are walked: auto, fp, dwarf, libunwind,\n"
    "                       check (PROF_UNWIND; default: auto)\n"
    "      --signal SIG     the sampling signal (PROF_SIGNAL; default: RTMAX-2)\n"
    "      --snapshot-signal SIG\n"
    "                       the snapshot signal, off for none\n"
    "                       (PROF_SNAPSHOT_SIGNAL; default: RTMAX-3)\n"
    "      --toggle-signal SIG\n"
    "                       a signal that turns sampling off and on\n"
    "                       (PROF_TOGGLE_SIGNAL; default: none)\n"
    "      --buffer KIB     the sample buffer (PROF_BUFFER_KB; default: 4096)\n"
    "      --no-follow      leave fork children and exec'd programs unprofiled\n"
    "                       (PROF_FOLLOW=0; default: profile them)\n"
    "      --start-idle     sample once the program calls prof_start()\n"
    "                       (PROF_START=0; default: from the start)\n"
    "      --log FILE       libprof's messages (PROF_LOG; default: standard error)\n"
    "  -q, --quiet          do not list the profiles written\n"
    "  -h, --help           this help\n"
    "\n"
    "a running process, from outside (perf_event counters, user space only; root,\n"
    "or your own process with kernel.perf_event_paranoid <= 2):\n"
    "  -p, --pid PID        sample process PID until -d passes, Ctrl-C, or its exit\n"
    "                       or exec; it runs on untouched. -o FILE is required and\n"
    "                       taken literally; -F, -d and --depth apply\n"
    "      --unwind MODE    with -p: auto (libprof's walk over a copy of the stack,\n"
    "                       by the unwind tables of the process's modules, by frame\n"
    "                       pointer where one has none), dwarf (the tables only),\n"
    "                       fp (frame pointers only) or kernel (the kernel's\n"
    "                       frame-pointer walk: smaller samples, no leaf fixes)\n"
    "                       (default: auto; --callchain is its former name)\n"
    "\n"
    "The library is $PROF_LIBRARY, else libprof.so next to prof (a build tree) or in\n"
    "../lib (an installed tree).\n";

#define LIST_MAX 8 /* profiles listed one a line at the end; beyond, a count */

/* The command's PROF_* variables, from the options (NULL: left as they are). */
static size_t launch_vars(const struct rep_record_opts *o, struct rep_launch_var *v)
{
    const struct rep_launch_var vars[] = {
        {"PROF_OUTPUT", o->output},
        {"PROF_FREQ", o->freq},
        {"PROF_DEPTH", o->depth},
        {"PROF_DURATION", o->duration},
        {"PROF_TIMER", o->timer},
        {"PROF_EVENT", o->event},
        {"PROF_UNWIND", o->unwind},
        {"PROF_SIGNAL", o->signal},
        {"PROF_SNAPSHOT_SIGNAL", o->snapshot_signal},
        {"PROF_BUFFER_KB", o->buffer_kb},
        {"PROF_LOG", o->log},
        {"PROF_MODE", o->mode},
        {"PROF_INTERVAL", o->interval},
        {"PROF_KEEP", o->keep},
        {"PROF_TOGGLE_SIGNAL", o->toggle_signal},
        {"PROF_LABELS", o->labels},
        {"PROF_FOLLOW", o->is_no_follow ? "0" : NULL},
        {"PROF_START", o->is_start_idle ? "0" : NULL},
    };
    _Static_assert(sizeof(vars) / sizeof(vars[0]) == REP_RECORD_N_VARS, "REP_RECORD_N_VARS");
    memcpy(v, vars, sizeof(vars));
    return sizeof(vars) / sizeof(vars[0]);
}

int rep_record_run(const struct rep_record_opts *o, int *status /* out */, pid_t *child /* out */,
                   struct cmn_err *err)
{
    struct rep_launch_var vars[REP_RECORD_N_VARS];
    size_t n = launch_vars(o, vars);
    return rep_launch_run(o->argv, vars, n, status, child, err);
}

/* What record's parse keeps for the end: options whose meaning depends on -p, which may
 * come after them, and the first option that goes with one way of recording only. */
struct pending {
    const char *duration;     /* -d, --duration */
    const char *unwind;       /* --unwind */
    const char *command_only; /* the first option that needs a command, not -p */
    const char *pid_only;     /* the first option that needs -p (--callchain) */
};

/* What goes with what: -p or a command, and the options of each. */
static int check_record(int argc, char **argv, struct rep_record_opts *o,
                        const struct pending *pd, struct cmn_err *err)
{
    if (o->pid != 0 && optind < argc)
        return cmn_err_set(err, CMN_E_INPUT,
                           "record: -p samples a running process; give it or a command, not both");
    if (o->pid == 0 && pd->pid_only != NULL)
        return cmn_err_set(err, CMN_E_INPUT, "record: %s goes with -p PID", pd->pid_only);
    if (o->pid != 0 && pd->command_only != NULL)
        return cmn_err_set(err, CMN_E_INPUT, "record: %s goes with a command, not with -p",
                           pd->command_only);
    if (o->pid != 0 && o->output == NULL)
        return cmn_err_set(err, CMN_E_INPUT, "record: -p needs -o FILE");
    if (o->pid != 0)
        return CMN_OK;
    if (optind == argc)
        return cmn_err_set(err, CMN_E_INPUT, "record: no command given (see prof record --help)");
    o->argv = argv + optind;
    return CMN_OK;
}

/* -d: the same duration for PROF_DURATION (a command) or for -p. */
static int parse_duration(const char *s, struct rep_record_opts *o, struct cmn_err *err)
{
    uint64_t ns;
    if (!cmn_parse_duration(s, CMN_DURATION_MAX_NS, &ns))
        return cmn_err_set(err, CMN_E_INPUT,
                           "--duration: '%s' is not a duration (500ms, 10s, 5m, 1h; a bare "
                           "number is seconds)",
                           s);
    o->duration = s;
    o->duration_s = (double)ns / 1e9;
    return CMN_OK;
}

/* The walks of -p's --unwind (and --callchain, its former name). */
static bool parse_pid_unwind(const char *s, enum att_rwalk_mode *mode, bool *is_kernel)
{
    static const struct {
        const char *name;
        enum att_rwalk_mode mode;
    } modes[] = {
        {"auto", ATT_RWALK_AUTO},
        {"dwarf", ATT_RWALK_DWARF},
        {"fp", ATT_RWALK_FP},
        {"kernel", ATT_RWALK_AUTO},
    };
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        if (strcmp(s, modes[i].name) == 0) {
            *mode = modes[i].mode;
            *is_kernel = strcmp(s, "kernel") == 0;
            return true;
        }
    }
    return false;
}

/* --unwind: verbatim for the library, which checks it; with -p, auto, dwarf, fp or
 * kernel. */
static int parse_unwind(const char *s, struct rep_record_opts *o, struct cmn_err *err)
{
    if (o->pid == 0) {
        o->unwind = s;
        return CMN_OK;
    }
    if (!parse_pid_unwind(s, &o->pid_unwind, &o->is_kernel_callchain))
        return cmn_err_set(err, CMN_E_INPUT,
                           "--unwind: with -p, '%s' is not auto, dwarf, fp or kernel", s);
    return CMN_OK;
}

/* --signal and --snapshot-signal: a signal libprof may take (common/parse.h). */
static int parse_signal(const char *opt, const char *s, bool may_be_off, const char **out,
                        struct cmn_err *err)
{
    bool is_off = may_be_off && (strcmp(s, "off") == 0 || strcmp(s, "0") == 0);
    int sig = cmn_parse_signal(s);
    if (!is_off && (sig == 0 || cmn_signal_is_refused(sig)))
        return cmn_err_set(err, CMN_E_INPUT,
                           "%s: '%s' is not a signal libprof can use (a number, PROF, USR1, "
                           "RTMIN+N, RTMAX-N%s)",
                           opt, s, may_be_off ? ", off" : "");
    *out = s;
    return CMN_OK;
}

/* A whole number in [min, max] kept as typed, for a PROF_* variable. */
static int parse_whole(const char *opt, const char *s, unsigned long min, unsigned long max,
                       const char **out, struct cmn_err *err)
{
    unsigned long v;
    if (!cmn_parse_ulong(s, min, max, &v))
        return cmn_err_set(err, CMN_E_INPUT, "%s: '%s' is not a whole number in %lu..%lu", opt,
                           s, min, max);
    *out = s;
    return CMN_OK;
}

enum {
    OPT_DEPTH = 256,
    OPT_TIMER,
    OPT_UNWIND,
    OPT_CALLCHAIN,
    OPT_SIGNAL,
    OPT_SNAPSHOT_SIGNAL,
    OPT_BUFFER,
    OPT_LOG,
    OPT_NO_FOLLOW,
    OPT_START_IDLE,
    OPT_MODE,
    OPT_INTERVAL,
    OPT_KEEP,
    OPT_TOGGLE_SIGNAL,
    OPT_LABELS,
};

static const struct option record_longs[] = {
    {"output", required_argument, NULL, 'o'},
    {"freq", required_argument, NULL, 'F'},
    {"duration", required_argument, NULL, 'd'},
    {"depth", required_argument, NULL, OPT_DEPTH},
    {"timer", required_argument, NULL, OPT_TIMER},
    {"event", required_argument, NULL, 'e'},
    {"unwind", required_argument, NULL, OPT_UNWIND},
    {"callchain", required_argument, NULL, OPT_CALLCHAIN},
    {"signal", required_argument, NULL, OPT_SIGNAL},
    {"snapshot-signal", required_argument, NULL, OPT_SNAPSHOT_SIGNAL},
    {"buffer", required_argument, NULL, OPT_BUFFER},
    {"log", required_argument, NULL, OPT_LOG},
    {"no-follow", no_argument, NULL, OPT_NO_FOLLOW},
    {"start-idle", no_argument, NULL, OPT_START_IDLE},
    {"mode", required_argument, NULL, OPT_MODE},
    {"interval", required_argument, NULL, OPT_INTERVAL},
    {"keep", required_argument, NULL, OPT_KEEP},
    {"toggle-signal", required_argument, NULL, OPT_TOGGLE_SIGNAL},
    {"labels", required_argument, NULL, OPT_LABELS},
    {"quiet", no_argument, NULL, 'q'},
    {"pid", required_argument, NULL, 'p'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* The options that set a variable of the library only (not with -p). */
static int parse_library_option(int c, const char *arg, struct rep_record_opts *o,
                                struct cmn_err *err)
{
    switch (c) {
    case OPT_TIMER:
        o->timer = arg;
        return CMN_OK;
    case 'e':
        o->event = arg;
        return CMN_OK;
    case OPT_SIGNAL:
        return parse_signal("--signal", arg, false, &o->signal, err);
    case OPT_SNAPSHOT_SIGNAL:
        return parse_signal("--snapshot-signal", arg, true, &o->snapshot_signal, err);
    case OPT_BUFFER:
        return parse_whole("--buffer", arg, 1, UINT32_MAX, &o->buffer_kb, err);
    case OPT_LOG:
        o->log = arg;
        return CMN_OK;
    case OPT_NO_FOLLOW:
        o->is_no_follow = true;
        return CMN_OK;
    case OPT_MODE:
        if (strcmp(arg, "cpu") != 0 && strcmp(arg, "wall") != 0)
            return cmn_err_set(err, CMN_E_INPUT, "--mode: '%s' is not cpu or wall", arg);
        o->mode = arg;
        return CMN_OK;
    case OPT_INTERVAL: {
        uint64_t ns;
        if (!cmn_parse_duration(arg, CMN_DURATION_MAX_NS, &ns) || ns < 100000000ull)
            return cmn_err_set(err, CMN_E_INPUT,
                               "--interval: '%s' is not a duration of 100ms or more (500ms, "
                               "60s, 5m, 1h; a bare number is seconds)",
                               arg);
        o->interval = arg;
        return CMN_OK;
    }
    case OPT_KEEP:
        return parse_whole("--keep", arg, 0, 1000000, &o->keep, err);
    case OPT_TOGGLE_SIGNAL:
        return parse_signal("--toggle-signal", arg, false, &o->toggle_signal, err);
    case OPT_LABELS:
        o->labels = arg;
        return CMN_OK;
    default: /* OPT_START_IDLE */
        o->is_start_idle = true;
        return CMN_OK;
    }
}

/* One option (getopt's c); the name it was given as is argv[optind - 1]. */
static int parse_option(int c, const char *arg, const char *given, struct rep_record_opts *o,
                        struct pending *pd, struct cmn_err *err)
{
    unsigned long v;
    switch (c) {
    case 'o':
        o->output = arg;
        return CMN_OK;
    case 'F':
        return parse_whole("--freq", arg, 1, 1000000, &o->freq, err);
    case 'd':
    case 'D': /* its former spelling */
        pd->duration = arg; /* checked at the end, once -p is known */
        return CMN_OK;
    case OPT_DEPTH:
        return parse_whole("--depth", arg, 1, UINT16_MAX, &o->depth, err);
    case OPT_UNWIND:
        pd->unwind = arg;
        return CMN_OK;
    case OPT_CALLCHAIN: /* --unwind's former name, for -p only */
        if (!parse_pid_unwind(arg, &o->pid_unwind, &o->is_kernel_callchain))
            return cmn_err_set(err, CMN_E_INPUT,
                               "--callchain: '%s' is not auto, dwarf, fp or kernel", arg);
        pd->unwind = arg;
        pd->pid_only = pd->pid_only != NULL ? pd->pid_only : "--callchain";
        return CMN_OK;
    case 'q':
        o->is_quiet = true;
        return CMN_OK;
    case 'p':
        if (!cmn_parse_ulong(arg, 1, INT32_MAX, &v))
            return cmn_err_set(err, CMN_E_INPUT, "--pid: '%s' is not a process id", arg);
        o->pid = (pid_t)v;
        return CMN_OK;
    default:
        pd->command_only = pd->command_only != NULL ? pd->command_only : given;
        return parse_library_option(c, arg, o, err);
    }
}

static int parse_record(int argc, char **argv, struct rep_record_opts *o, struct cmn_err *err)
{
    struct pending pd = {0};
    int c, rc = CMN_OK;
    opterr = 0;
    /* '+': options end at the command, whose own options are its business. */
    while (rc == CMN_OK &&
           (c = getopt_long(argc, argv, "+:o:F:d:D:e:p:qh", record_longs, NULL)) != -1) {
        if (c == 'h') {
            o->is_help = true;
            return CMN_OK;
        }
        if (c == ':')
            return cmn_err_set(err, CMN_E_INPUT, "record: %s needs a value", argv[optind - 1]);
        if (c == '?')
            return rep_cmd_unknown_option(err, "record", argv);
        rc = parse_option(c, optarg, argv[optind - 1], o, &pd, err);
    }
    if (rc == CMN_OK && pd.duration != NULL)
        rc = parse_duration(pd.duration, o, err);
    if (rc == CMN_OK && pd.unwind != NULL)
        rc = parse_unwind(pd.unwind, o, err);
    return rc == CMN_OK ? check_record(argc, argv, o, &pd, err) : rc;
}

/* `prof record -p`: the out-of-process producer (attach/record_pid.h). */
static int record_pid(const struct rep_record_opts *o, struct cmn_err *err)
{
    unsigned long hz = 0, depth = 0;
    if (o->freq != NULL)
        (void)cmn_parse_ulong(o->freq, 1, 1000000, &hz); /* checked by parse_record() */
    if (o->depth != NULL)
        (void)cmn_parse_ulong(o->depth, 1, UINT16_MAX, &depth);
    struct att_record_pid_opts po = {
        .pid = o->pid,
        .output = o->output,
        .hz = (unsigned)hz,
        .max_depth = (unsigned)depth,
        .duration_s = o->duration_s,
        .is_kernel_callchain = o->is_kernel_callchain,
        .unwind = o->pid_unwind,
    };
    return att_record_pid_run(&po, stderr, err);
}

/* The path the output template gives process pid: %p is the pid, %% a percent sign (as
 * libprof expands it); malloc'd, NULL when out of memory. */
static char *expand_output(const char *tmpl, pid_t pid)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (f == NULL)
        return NULL;
    for (const char *p = tmpl; *p != '\0'; p++) {
        if (p[0] == '%' && p[1] == 'p')
            fprintf(f, "%d", (int)pid);
        else if (p[0] == '%' && p[1] == '%')
            fputc('%', f);
        else
            fputc(*p, f);
        if (p[0] == '%' && (p[1] == 'p' || p[1] == '%'))
            p++;
    }
    if (fclose(f) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* Says on stderr where the profiles of the run went: the command's process's and those of
 * the processes it started (reporter/input/family.h), written since `since`. */
static void list_profiles(const struct rep_record_opts *o, pid_t pid, time_t since)
{
    const char *tmpl = o->output != NULL ? o->output : getenv("PROF_OUTPUT");
    char *path = expand_output(tmpl != NULL && tmpl[0] != '\0' ? tmpl : "prof.%p.prof", pid);
    struct rep_family f;
    rep_family_init(&f);
    if (path == NULL || rep_family_find(&f, path, (uint32_t)pid, since) != CMN_OK) {
        free(path);
        return;
    }
    if (f.n == 0)
        fprintf(stderr, "prof: no profile was written (libprof said why, or PROF_LOG has it; a "
                        "static program cannot load libprof)\n");
    for (size_t i = 0; i < f.n && i < LIST_MAX; i++)
        fprintf(stderr, "prof: profile %s (pid %u, %s)\n", f.members[i].path, f.members[i].pid,
                f.members[i].exe);
    if (f.n > LIST_MAX)
        fprintf(stderr, "prof: ... and %zu more profiles\n", f.n - LIST_MAX);
    size_t n_pids = 0;
    for (size_t i = 0; i < f.n; i++) {
        bool is_new = true;
        for (size_t j = 0; j < i && is_new; j++)
            is_new = f.members[j].pid != f.members[i].pid;
        n_pids += is_new;
    }
    if (f.n > 1)
        fprintf(stderr, "prof: %zu profiles, %s: prof report --family %s reads them all\n", f.n,
                n_pids == f.n ? "one per process"
                              : "a process's intervals (PROF_INTERVAL) and its children's",
                f.members[0].path);
    rep_family_fini(&f);
    free(path);
}

int rep_cmd_record(int argc, char **argv, int *exit_status, struct cmn_err *err)
{
    struct rep_record_opts o = {0};
    int rc = parse_record(argc, argv, &o, err);
    *exit_status = o.is_help ? REP_CMD_HELP : 0;
    if (rc != CMN_OK || o.is_help)
        return rc;
    if (o.pid != 0)
        return record_pid(&o, err);
    time_t since = time(NULL) - 1;
    pid_t child = 0;
    rc = rep_record_run(&o, exit_status, &child, err);
    if (rc == CMN_OK && !o.is_quiet)
        list_profiles(&o, child, since);
    return rc;
}
