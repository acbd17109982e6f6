/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The text output of `prof stacks`: a snapshot's threads grouped by identical stack
 * (reporter/stacks/snap_groups.h), printed the way pstack and eu-stack print a stack, leaf
 * first, one frame a line:
 *
 *   process 4242 (server): 9 threads, 3 distinct stacks (ptrace)
 *
 *   6 threads: 4245 worker, 4246 worker, 4247 worker, ...  [S sleeping]
 *     #0  0x000055d0c8a01234 wait_for_job (queue.c:88)
 *     #1  0x000055d0c8a01300 worker_main (worker.c:41)
 *     #2  0x00007f3e2a894143 start_thread
 *
 *   1 thread: 4244 loader  [R running]
 *     ...
 *     ... truncated: a frame pointer left the stack or a return address is in no code (...)
 *
 *   threads without a stack (1):
 *     4248 blocker  [S sleeping]  did not answer in time (the signal blocked, or ...)
 *
 * A group's frames and addresses are those of its first thread (the lowest tid); the
 * others name the same functions and lines. Called by stacks_cmd.c; reporter thread.
 */
#ifndef PROF_REPORTER_OUTPUT_STACKS_H
#define PROF_REPORTER_OUTPUT_STACKS_H

#include <stdio.h>

struct rep_names;
struct rep_profile;
struct rep_snap_groups;

/* Not async-signal-safe. */
/* Writes the groups g of snapshot p, their frames named in names, to out. how says how
 * the snapshot was taken ("ptrace", "libprof snapshot", "from FILE"), for the first line.
 * CMN_OK, or CMN_E_IO when writing failed (errno says why); out is flushed, not closed. */
int rep_out_stacks(FILE *out, const struct rep_profile *p, const struct rep_snap_groups *g,
                   const struct rep_names *names, const char *how);
/* The kernel's word for a thread state letter ("sleeping" for 'S'), NULL when unknown. */
const char *rep_out_stacks_state_word(char state);

#endif
