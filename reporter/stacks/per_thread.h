/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Stacks summed per thread: one aggregate (reporter/stacks/aggregate.h) per thread of each
 * process, for the outputs that show threads apart (out_speedscope.c), with its samples in
 * a timeline (rep_agg.timeline). A profile is split by sample tid, and each part goes
 * through rep_agg_add_profile() as a profile of its own, so that a thread's stacks are
 * symbolized exactly as the merged ones are. Threads are keyed by (pid, tid): files of one
 * process (an exec) add to the same thread; with the merged aggregate's --by-label keys,
 * by their values too ("endpoint=/api"): one part per thread and value. main() feeds it every profile, next to the merged aggregate, while the
 * profile is alive; the thread names are copied. Owns its memory; reporter thread only.
 */
#ifndef PROF_REPORTER_STACKS_PER_THREAD_H
#define PROF_REPORTER_STACKS_PER_THREAD_H

#include <stddef.h>
#include <stdint.h>

#include "reporter/stacks/aggregate.h"

struct rep_profile;
struct rep_sample;
struct rep_sym;

struct rep_thread_agg {
    uint32_t pid;       /* of the process, 0 when the profile had no process record */
    uint32_t tid;       /* kernel thread id */
    char *name;         /* the thread's latest name, NULL if unknown; owned */
    char *group;        /* the values of the --by-label keys, "k=v,k=v"; NULL without; owned */
    struct rep_agg agg; /* its stacks */
};

struct rep_per_thread {
    struct rep_thread_agg *threads; /* file order, then by tid within a file */
    size_t n_threads;
    size_t cap_threads;
    struct rep_sample *scratch; /* one profile's samples, grouped by tid */
    size_t cap_scratch;
    const struct rep_agg *like; /* the merged aggregate, whose filter the threads' share */
};

/* Not async-signal-safe. */
/* Makes t empty; its aggregates will keep the samples that like's filter keeps (like is
 * not owned, may be NULL, and must outlive t). Returns CMN_OK. */
int rep_per_thread_init(struct rep_per_thread *t, const struct rep_agg *like);
/* Frees what t owns. Accepts NULL. */
void rep_per_thread_fini(struct rep_per_thread *t);
/* Adds every sample of p to its thread's aggregate, symbolized with sym (already switched
 * to p, as for rep_agg_add_profile). CMN_OK or CMN_E_NOMEM. */
int rep_per_thread_add_profile(struct rep_per_thread *t, struct rep_sym *sym,
                               const struct rep_profile *p);

#endif
