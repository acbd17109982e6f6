/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Debug files fetched by build-id from debuginfod servers, as gdb and perf fetch them:
 * for a module that has no DWARF and no debug file on this machine, the symbolizer asks
 * the servers of $DEBUGINFOD_URLS through elfutils' libdebuginfod, which keeps what it
 * fetched (and what the servers did not have) in its own cache
 * (~/.cache/debuginfod_client), so that a later report asks nothing. The library is
 * loaded with dlopen() on first need: prof runs without it, and without $DEBUGINFOD_URLS
 * it is never loaded.
 *
 * Time is bounded: each query by $DEBUGINFOD_TIMEOUT (which libdebuginfod honours) and by
 * what is left of a budget for the whole report (budget_s, `report --debuginfod-budget`);
 * once the budget is spent no more queries are made. The build-ids that could not be
 * named are gathered with their file and reason, for one warning (rep_sym_dbgd_take).
 * Reporter thread only; owns its client and strings.
 */
#ifndef PROF_REPORTER_SYMBOLS_DEBUGINFOD_H
#define PROF_REPORTER_SYMBOLS_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The whole report's time for debuginfod queries, by default, in seconds. */
#define REP_SYM_DBGD_BUDGET_S 10.0

struct rep_sym_dbgd_fns;

struct rep_sym_dbgd {
    double budget_s;              /* seconds for all queries, set before the first; 0: none */
    bool is_started;              /* the environment was read and the library loaded (or not) */
    bool is_off;                  /* no $DEBUGINFOD_URLS, no library, or the budget is spent */
    void *lib;                    /* dlopen handle, or NULL; never closed */
    void *client;                 /* the libdebuginfod client, or NULL */
    struct rep_sym_dbgd_fns *fns; /* its entry points; owned */
    double spent_s;               /* seconds spent in queries so far */
    uint64_t deadline_ns;         /* CLOCK_MONOTONIC end of the query in progress */
    bool is_timed_out;            /* the query in progress ran out of time */
    char *why_off;                /* why no query is made, for the warning, or NULL; owned */
    char *unnamed;                /* "ID (FILE: REASON), ..." not yet reported, or NULL; owned */
};

/* Not async-signal-safe. */
/* Makes d ask nothing yet; budget_s is REP_SYM_DBGD_BUDGET_S. Returns CMN_OK. */
int rep_sym_dbgd_init(struct rep_sym_dbgd *d);
/* Ends the client and frees what d owns (the library stays loaded). Accepts NULL. */
void rep_sym_dbgd_fini(struct rep_sym_dbgd *d);
/* The path of the debug file of the module at module_path with build-id id (n bytes),
 * fetched (or found in libdebuginfod's cache): CMN_OK with *path (malloc'd, free it),
 * CMN_E_NOTFOUND when there is none (no server, not found, out of time: then the build-id
 * joins the unnamed list when a server was asked or would have been), or CMN_E_NOMEM. */
int rep_sym_dbgd_find(struct rep_sym_dbgd *d, const char *module_path, const uint8_t *id, size_t n,
                      char **path /* out */);
/* The unnamed list gathered since the last call, as one line without "prof: warning: ",
 * in *line (malloc'd, free it), or NULL when it is empty; the list starts again empty.
 * CMN_OK or CMN_E_NOMEM. */
int rep_sym_dbgd_take(struct rep_sym_dbgd *d, char **line /* out */);

#endif
