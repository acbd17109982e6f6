/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Parsing the selection options' values and wiring them into the symbolizer and the
 * aggregate. Reporter thread only.
 */
#include "reporter/stacks/select.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"
#include "common/parse.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/stacks/prune.h"
#include "reporter/symbols/symbols.h"

int rep_sel_init(struct rep_sel *s)
{
    memset(s, 0, sizeof(*s));
    return rep_filter_init(&s->filter);
}

void rep_sel_fini(struct rep_sel *s)
{
    if (s == NULL)
        return;
    rep_filter_fini(&s->filter);
    free(s->by_labels);
    memset(s, 0, sizeof(*s));
}

int rep_sel_option(struct rep_sel *s, int opt, const char *arg, struct cmn_err *err)
{
    unsigned long u;
    double d;
    int rc = CMN_OK;
    switch (opt) {
    case REP_SEL_LINES:
        s->is_lines = true;
        break;
    case REP_SEL_THREADS:
        s->is_threads = true;
        break;
    case REP_SEL_PROCESSES:
        s->is_processes = true;
        break;
    case REP_SEL_TID:
    case REP_SEL_PID:
        if (!cmn_parse_ulong(arg, 0, UINT32_MAX, &u))
            return cmn_err_set(err, CMN_E_INPUT, "%s: '%s' is not a %s",
                               opt == REP_SEL_TID ? "--tid" : "--select-pid", arg,
                               opt == REP_SEL_TID ? "thread id" : "process id");
        rc = opt == REP_SEL_TID ? rep_filter_add_tid(&s->filter, (uint32_t)u)
                                : rep_filter_add_pid(&s->filter, (uint32_t)u);
        break;
    case REP_SEL_THREAD:
        rc = rep_filter_add_thread(&s->filter, arg);
        break;
    case REP_SEL_FROM:
    case REP_SEL_TO:
        if (!cmn_parse_double(arg, 0, 1e9, &d))
            return cmn_err_set(err, CMN_E_INPUT, "%s: '%s' is not a number of seconds",
                               opt == REP_SEL_FROM ? "--from" : "--to", arg);
        if (opt == REP_SEL_FROM) {
            s->filter.has_from = true;
            s->filter.from_ns = (uint64_t)(d * 1e9);
        } else {
            s->filter.has_to = true;
            s->filter.to_ns = (uint64_t)(d * 1e9);
        }
        break;
    case REP_SEL_STATE:
        return rep_state_sel_parse(&s->filter.states, arg, err);
    case REP_SEL_LABEL:
        return rep_filter_add_label(&s->filter, arg, err);
    case REP_SEL_TRACE:
        return rep_filter_add_trace(&s->filter, arg, err);
    case REP_SEL_BY_LABEL:
        if (arg[0] == '\0' || strchr(arg, '=') != NULL)
            return cmn_err_set(err, CMN_E_INPUT, "--by-label: '%s' is not a label's key", arg);
        if (!CMN_GROW(s->by_labels, s->cap_by_labels, s->n_by_labels + 1, 4))
            return cmn_err_nomem(err);
        s->by_labels[s->n_by_labels++] = arg;
        break;
    case REP_SEL_FOCUS:
        return rep_filter_set_focus(&s->filter, arg, err);
    case REP_SEL_IGNORE:
        return rep_filter_set_ignore(&s->filter, arg, err);
    case REP_SEL_UNWIND_CHECK:
        if (strcmp(arg, "tables") == 0)
            s->filter.unwind_check = REP_FILTER_CHECK_TABLES;
        else if (strcmp(arg, "libunwind") == 0)
            s->filter.unwind_check = REP_FILTER_CHECK_LIBUNWIND;
        else
            return cmn_err_set(err, CMN_E_INPUT,
                               "--unwind-check: '%s' is neither tables nor libunwind", arg);
        break;
    case REP_SEL_PRUNE:
        if (!cmn_parse_double(arg, 0, 100, &s->min_percent))
            return cmn_err_set(err, CMN_E_INPUT, "--prune: '%s' is not a percentage", arg);
        break;
    default:
        return cmn_err_set(err, CMN_E_INPUT, "unknown selection option");
    }
    return rc == CMN_E_NOMEM ? cmn_err_nomem(err) : rc;
}

void rep_sel_apply(struct rep_sel *s, struct rep_sym *sym, struct rep_agg *agg, bool is_pprof)
{
    sym->is_lines = s->is_lines;
    agg->filter = &s->filter;
    agg->is_threads = s->is_threads;
    agg->is_processes = s->is_processes;
    agg->is_locs = is_pprof;
    agg->is_label_sets = is_pprof;
    agg->by_labels = s->by_labels;
    agg->n_by_labels = s->n_by_labels;
}

int rep_sel_finish(struct rep_sel *s, struct rep_names *names, struct rep_agg *agg)
{
    if (s->min_percent <= 0)
        return CMN_OK;
    struct rep_agg pruned;
    int rc = rep_prune(agg, names, s->min_percent, &pruned);
    if (rc != CMN_OK)
        return rc;
    rep_agg_fini(agg);
    *agg = pruned;
    return CMN_OK;
}
