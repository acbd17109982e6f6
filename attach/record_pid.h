/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `prof record -p PID`: samples a process that is already running, from outside, without
 * restarting it or loading anything into it, and writes the same profile file libprof
 * writes (docs/FORMAT.md), so that `prof report` and every output read it unchanged.
 *
 * Each thread of the process gets perf_event task-clock counters (user space only, one per
 * CPU) that take a sample every 1/HZ of the thread's CPU time; the kernel writes the samples
 * into a ring buffer per CPU that prof maps and drains. By default a sample carries the
 * thread's registers and a copy of the top of its user stack, and prof walks the copy with
 * libprof's own walk (attach/remote_walk.h): by the unwind tables of the target's modules,
 * which prof builds from their files the first time a sample needs one
 * (attach/uwtables.h), and by frame pointer where a module has none, so that code built
 * without frame pointers gives whole stacks, with the leaf's caller exact; or by frame
 * pointers or tables only. `--unwind kernel` takes the kernel's own frame-pointer walk
 * instead (smaller samples, no leaf fixes; it is cut at the first address outside code).
 * Threads started later inherit their creator's counters; mappings made later (dlopen) and
 * thread names set later come from the kernel's side-band records. Recording stops after
 * the duration, on SIGINT or SIGTERM to prof, when the process exits or when it calls exec;
 * the file is complete in every case. Closing the counters detaches: the process runs on
 * untouched. Reporter thread only; main() parses the options (struct rep_record_opts).
 */
#ifndef PROF_ATTACH_RECORD_PID_H
#define PROF_ATTACH_RECORD_PID_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "attach/remote_walk.h"

struct cmn_err;

#define ATT_RECORD_PID_HZ 250u    /* -F by default: PROF_FREQ's default */
#define ATT_RECORD_PID_DEPTH 256u /* -d by default: PROF_DEPTH's default */

/* What to sample and how. */
struct att_record_pid_opts {
    pid_t pid;                /* the process */
    const char *output;       /* the profile to write (required), taken literally */
    unsigned hz;              /* samples per CPU-second; 0: ATT_RECORD_PID_HZ */
    unsigned max_depth;       /* frames per sample at most; 0: ATT_RECORD_PID_DEPTH */
    double duration_s;        /* seconds to sample; 0: until it exits or prof is interrupted */
    bool is_kernel_callchain; /* the kernel's frame-pointer walk instead of prof's walk
                               * over a copy of the stack */
    enum att_rwalk_mode unwind; /* how prof's walk steps frames; ATT_RWALK_AUTO by default */
};

/* Not async-signal-safe. */
/* Samples process o->pid into o->output at o->hz with o->max_depth frames at most, for o->duration_s seconds (0: until the process exits or prof
 * is interrupted), then writes a one-line summary on log. Catches SIGINT and SIGTERM while
 * it runs. CMN_OK (also when the process exited or exec'ed meanwhile); CMN_E_INPUT with a
 * one-line message when the process does not exist or cannot be sampled (the message says
 * why: permissions, perf_event_paranoid, limits) or the output cannot be created;
 * CMN_E_NOMEM; CMN_E_IO when writing the output failed. */
int att_record_pid_run(const struct att_record_pid_opts *o, FILE *log, struct cmn_err *err);

#endif
