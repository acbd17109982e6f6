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
 * libprof's own frame-pointer stepper (reporter/remote_walk.h), so that the stacks get the
 * same checks and leaf fixes as in-process ones; `--callchain kernel` takes the kernel's own
 * frame-pointer walk instead (smaller samples, no leaf fixes; it is cut at the first address
 * outside code, like the stepper's). Threads started later inherit their creator's
 * counters; mappings made later (dlopen) and thread names set later come from the kernel's
 * side-band records. Recording stops after the
 * duration, on SIGINT or SIGTERM to prof, when the process exits or when it calls exec;
 * the file is complete in every case. Closing the counters detaches: the process runs on
 * untouched. Reporter thread only; main() parses the options (struct rep_record_opts).
 */
#ifndef PROF_REPORTER_RECORD_PID_H
#define PROF_REPORTER_RECORD_PID_H

#include <stdio.h>

struct rep_err;
struct rep_record_opts;

#define REP_RECORD_PID_HZ 250u    /* -F by default: PROF_FREQ's default */
#define REP_RECORD_PID_DEPTH 256u /* -d by default: PROF_DEPTH's default */

/* Not async-signal-safe. */
/* Samples process o->pid into o->output (required) at o->freq Hz (NULL: the default) with
 * o->depth frames at most, for o->duration_s seconds (0: until the process exits or prof
 * is interrupted), then writes a one-line summary on log. Catches SIGINT and SIGTERM while
 * it runs. REP_OK (also when the process exited or exec'ed meanwhile); REP_E_INPUT with a
 * one-line message when the process does not exist or cannot be sampled (the message says
 * why: permissions, perf_event_paranoid, limits) or the output cannot be created;
 * REP_E_NOMEM; REP_E_IO when writing the output failed. */
int rep_record_pid_run(const struct rep_record_opts *o, FILE *log, struct rep_err *err);

#endif
