/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Random sampling intervals for `prof record -p` (attach/record_pid.h), as libprof draws
 * them in-process (sampler/jitter.h), by the same arithmetic (common/jitter.h): after each
 * sample through a counter, that counter's next interval is drawn uniformly between half
 * and one and a half times the period, so that a program whose work repeats at the
 * sampling period is not sampled at the same phases of every round. PERF_EVENT_IOC_PERIOD
 * starts the counter's interval afresh: what it counted since its overflow (prof reads the
 * counter; prof learns of the sample some time after it, and the counter ran on) comes off
 * the interval drawn, so that the intervals between overflows are the ones drawn and the
 * mean rate stays the one asked for.
 *
 * What cannot be drawn so: a counter other threads inherited (threads started by its
 * thread, or by those, since prof attached). PERF_EVENT_IOC_PERIOD applies to every
 * inheriting copy too and would throw away their progress towards their next sample: a
 * thread that runs less than a period between two samples of another would never be
 * sampled. Such a counter keeps its fixed period from the first FORK record that names a
 * thread started under it. Reporter thread only; the state is the caller's.
 */
#ifndef PROF_ATTACH_JITTER_H
#define PROF_ATTACH_JITTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/hashtab.h"
#include "common/jitter.h"

/* Per counter: where it should next overflow, in its own count. */
struct att_jitter_plan {
    uint64_t id;                 /* the counter's kernel id */
    struct cmn_jitter_plan plan; /* its planned overflow (common/jitter.h) */
};

struct att_jitter {
    uint64_t mean_ns;              /* the period asked for */
    uint64_t rng;                  /* the generator's state (cmn_jitter_random) */
    struct att_jitter_plan *plans; /* one per counter sampled, in order of first sample */
    size_t n_plans, cap_plans;
    struct cmn_hashtab plan_table; /* plans by id (common/hashtab.h) */
    pid_t *inherited;              /* threads whose counters others inherited: never drawn */
    size_t n_inherited, cap_inherited;
    uint64_t n_drawn;              /* intervals drawn */
};

/* Not async-signal-safe. */
/* An empty state for counters of mean period mean_ns (0: draw nothing). */
void att_jitter_init(struct att_jitter *j, uint64_t mean_ns);
void att_jitter_fini(struct att_jitter *j);
/* A FORK record: a thread started under the counters of thread `counted_by` (its own or
 * those it inherited, see record_pid.c): they are no longer drawn. */
void att_jitter_inherited(struct att_jitter *j, pid_t counted_by);
/* After a sample through counter fd (kernel id id) of thread tid: draws the counter's
 * next interval, unless others inherit it. false when the memory for its plan ran out. */
bool att_jitter_sampled(struct att_jitter *j, int fd, uint64_t id, pid_t tid);

#endif
