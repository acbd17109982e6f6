/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The options of `prof report` that choose what is counted and how frames are named:
 * --lines, --tid, --thread, --select-pid, --from, --to, --state, --label, --trace, --focus,
 * --ignore, --prune, --threads, --processes, --by-label, --unwind-check (--pid and --min-percent are the old names of
 * --select-pid and --prune, still taken). main() passes each such option it meets to
 * rep_sel_option(),
 * then hands the symbolizer and the aggregate to rep_sel_apply() before reading, and the
 * aggregate to rep_sel_finish() after. Owns its filter; reporter thread only.
 */
#ifndef PROF_REPORTER_STACKS_SELECT_H
#define PROF_REPORTER_STACKS_SELECT_H

#include <stdbool.h>

#include "reporter/stacks/filter.h"

struct rep_agg;
struct cmn_err;
struct rep_names;
struct rep_sym;

/* getopt_long values of the options, one each. */
enum {
    REP_SEL_LINES = 0x1000,
    REP_SEL_TID,
    REP_SEL_THREAD,
    REP_SEL_PID,
    REP_SEL_FROM,
    REP_SEL_TO,
    REP_SEL_FOCUS,
    REP_SEL_IGNORE,
    REP_SEL_PRUNE,
    REP_SEL_THREADS,
    REP_SEL_PROCESSES,
    REP_SEL_UNWIND_CHECK,
    REP_SEL_STATE,
    REP_SEL_LABEL,
    REP_SEL_TRACE,
    REP_SEL_BY_LABEL,
    REP_SEL_END /* one past the last */
};

/* Their getopt_long entries, for main() to list: name, has_arg, val. */
#define REP_SEL_LONG_OPTIONS                                                                  \
    {"lines", no_argument, NULL, REP_SEL_LINES}, {"tid", required_argument, NULL, REP_SEL_TID}, \
        {"thread", required_argument, NULL, REP_SEL_THREAD},                                  \
        {"select-pid", required_argument, NULL, REP_SEL_PID},                                 \
        {"pid", required_argument, NULL, REP_SEL_PID},                                        \
        {"from", required_argument, NULL, REP_SEL_FROM},                                      \
        {"to", required_argument, NULL, REP_SEL_TO},                                          \
        {"focus", required_argument, NULL, REP_SEL_FOCUS},                                    \
        {"ignore", required_argument, NULL, REP_SEL_IGNORE},                                  \
        {"prune", required_argument, NULL, REP_SEL_PRUNE},                                    \
        {"min-percent", required_argument, NULL, REP_SEL_PRUNE},                              \
        {"threads", no_argument, NULL, REP_SEL_THREADS},                                      \
        {"processes", no_argument, NULL, REP_SEL_PROCESSES},                                  \
        {"unwind-check", required_argument, NULL, REP_SEL_UNWIND_CHECK},                      \
        {"state", required_argument, NULL, REP_SEL_STATE},                                    \
        {"label", required_argument, NULL, REP_SEL_LABEL},                                    \
        {"trace", required_argument, NULL, REP_SEL_TRACE},                                    \
        {"by-label", required_argument, NULL, REP_SEL_BY_LABEL}

struct rep_sel {
    struct rep_filter filter; /* the sample and stack conditions; owned */
    bool is_lines;            /* --lines */
    bool is_threads;          /* --threads */
    bool is_processes;        /* --processes */
    double min_percent;       /* --prune, 0 when not given */
    const char **by_labels;   /* --by-label keys in order (argv's strings); owned array */
    size_t n_by_labels, cap_by_labels;
};

/* Not async-signal-safe. */
/* Makes s select everything. Returns CMN_OK. */
int rep_sel_init(struct rep_sel *s);
/* Frees what s owns. Accepts NULL. */
void rep_sel_fini(struct rep_sel *s);
/* Takes option opt (REP_SEL_*) with its argument arg (kept, not copied). CMN_OK,
 * CMN_E_INPUT for a bad value (message in err), or CMN_E_NOMEM. */
int rep_sel_option(struct rep_sel *s, int opt, const char *arg, struct cmn_err *err);
/* Sets up sym and agg (both initialized, nothing added yet) for s; is_pprof asks the
 * aggregate to keep the addresses the pprof output needs. s must outlive agg. */
void rep_sel_apply(struct rep_sel *s, struct rep_sym *sym, struct rep_agg *agg, bool is_pprof);
/* Applies --prune to *agg once everything is added: replaces it with the pruned
 * aggregate. CMN_OK or CMN_E_NOMEM (*agg is unchanged then). */
int rep_sel_finish(struct rep_sel *s, struct rep_names *names, struct rep_agg *agg);

#endif
