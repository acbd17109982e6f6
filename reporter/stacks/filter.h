/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Sample selection for `prof report`: which samples of which profiles go into the
 * aggregate. By sample: thread ids (--tid), thread names (--thread, the latest name the
 * profile's THREAD records give the tid, compared whole), a time window in seconds from the
 * profile's start (--from, --to: from <= t < to), the thread's state (--state,
 * reporter/stacks/states.h), the thread's labels (--label KEY=VALUE: the label the thread
 * had, or else the process's PROF_LABELS; values of one key are alternatives, keys all
 * apply), its trace (--trace HEX, a trace id or its start). By profile: process ids
 * (--pid). By
 * symbolized stack: --focus keeps the stacks with at least one frame whose name matches a
 * POSIX extended regular expression, --ignore drops those with one; both are decided once
 * per name id and remembered. Each kind of condition is off until given; conditions of one
 * kind are alternatives (any tid of the list), kinds combine (all must hold). main() fills
 * one from the options; the aggregate (reporter/stacks/aggregate.c) asks it about every sample.
 * Owns its lists and compiled expressions; reporter thread only.
 */
#ifndef PROF_REPORTER_STACKS_FILTER_H
#define PROF_REPORTER_STACKS_FILTER_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reporter/stacks/states.h"

struct cmn_err;
struct rep_names;
struct rep_profile;
struct rep_sample;

/* A --label condition. */
struct rep_label_cond {
    const char *key;   /* argv's, cut at '=' into name: key_len bytes */
    size_t key_len;
    const char *value; /* after the '=' (argv's); NULL: the key is there, whatever value */
};

/* A --trace condition: a trace id or its first n bytes. */
struct rep_trace_cond {
    uint8_t id[16];
    size_t n;
};

struct rep_filter {
    uint32_t *tids; /* --tid values; owned */
    size_t n_tids, cap_tids;
    const char **thread_names; /* --thread values; the strings are not owned (argv) */
    size_t n_thread_names, cap_thread_names;
    uint32_t *pids; /* --pid values; owned */
    size_t n_pids, cap_pids;
    bool has_from; /* --from was given */
    bool has_to;   /* --to was given */
    uint64_t from_ns; /* window start, nanoseconds after the profile's start */
    uint64_t to_ns;   /* window end (excluded), nanoseconds after the profile's start */
    bool has_focus;   /* --focus was given: focus is compiled */
    regex_t focus;
    bool has_ignore; /* --ignore was given: ignore is compiled */
    regex_t ignore;
    uint8_t *verdicts; /* per name id: FILTER_* bits, 0 when not yet decided */
    size_t cap_verdicts;
    unsigned unwind_check; /* REP_FILTER_CHECK_* (--unwind-check) */
    struct rep_state_sel states; /* --state; empty keeps every state */
    struct rep_label_cond *labels; /* --label; owned, their strings argv's */
    size_t n_labels, cap_labels;
    struct rep_trace_cond *traces; /* --trace; owned */
    size_t n_traces, cap_traces;
};

/* Which samples of a PROF_UNWIND=check profile count: the profile's own (libunwind's
 * twins left out), or only the walks libunwind disagreed with, by the tables or by
 * libunwind. */
#define REP_FILTER_CHECK_NONE 0u
#define REP_FILTER_CHECK_TABLES 1u
#define REP_FILTER_CHECK_LIBUNWIND 2u

/* Not async-signal-safe. */
/* Makes f a filter that keeps everything. Returns CMN_OK. */
int rep_filter_init(struct rep_filter *f);
/* Frees what f owns. Accepts NULL. */
void rep_filter_fini(struct rep_filter *f);
/* Add one condition. CMN_OK, CMN_E_NOMEM, or CMN_E_INPUT for a regular expression that
 * does not compile (message in err). name must outlive f. */
int rep_filter_add_tid(struct rep_filter *f, uint32_t tid);
int rep_filter_add_thread(struct rep_filter *f, const char *name);
int rep_filter_add_pid(struct rep_filter *f, uint32_t pid);
/* KEY=VALUE (the samples whose label KEY is VALUE; KEY= those without it), or KEY (those
 * with it). CMN_E_INPUT for an empty key. */
int rep_filter_add_label(struct rep_filter *f, const char *arg, struct cmn_err *err);
/* A trace id in hex, whole (32 digits) or its start (an even number of digits). */
int rep_filter_add_trace(struct rep_filter *f, const char *hex, struct cmn_err *err);
int rep_filter_set_focus(struct rep_filter *f, const char *regex, struct cmn_err *err);
int rep_filter_set_ignore(struct rep_filter *f, const char *regex, struct cmn_err *err);
/* Whether any condition on stacks (focus, ignore) is set. */
bool rep_filter_has_stack_rules(const struct rep_filter *f);
/* Whether p's samples may be kept at all (its pid; a profile without a PROCESS record has
 * no pid and is dropped by --pid). */
bool rep_filter_keeps_profile(const struct rep_filter *f, const struct rep_profile *p);
/* Whether sample s of p passes the tid, thread name and time conditions. */
bool rep_filter_keeps_sample(const struct rep_filter *f, const struct rep_profile *p,
                             const struct rep_sample *s);
/* Whether the stack of n name ids passes --focus and --ignore. CMN_OK with *keep, or
 * CMN_E_NOMEM. */
int rep_filter_keeps_stack(struct rep_filter *f, const struct rep_names *names,
                           const uint32_t *ids, size_t n, bool *keep /* out */);

#endif
