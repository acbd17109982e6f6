/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * All-thread snapshots (prof_snapshot(), PROF_SNAPSHOT_SIGNAL, `prof stacks`): the
 * requester's side. See sampler/snapshot.h for how a thread answers. A snapshot is a
 * profile file of its own: PROCESS (timer source PROF_TIMER_NONE), the mappings, the
 * threads' names, one PROF_REC_SNAPSHOT per thread and one PROF_REC_SAMPLE per thread that
 * answered, then END; `prof stacks` and `prof report` read it.
 *
 * Requests from outside are served by libprof's writer thread: `prof stacks` creates the
 * answer file /tmp/prof-stacks.PID.NONCE (owned by the process's user, empty) and names
 * NONCE in its sigqueue() value; the library opens that file without creating it and
 * writes the snapshot into it. A plain kill() writes PROFILE.snapshot.N next to the
 * profile (PROFILE being the profile's path, N the first free number from 1).
 *
 * Not async-signal-safe; any thread. One snapshot at a time per process.
 */
#ifndef PROF_LIBPROF_SNAPSHOT_H
#define PROF_LIBPROF_SNAPSHOT_H

#include <signal.h>
#include <sys/types.h>

#include "sampler/install.h"

#define LP_SNAPSHOT_WAIT_MS 1000u /* longest wait for the threads to answer */

/* Installs the snapshot handler for signo (once per process; again after a fork is a
 * no-op); the action it replaces becomes the application's. max_frames: frames per
 * stack. 0 or -errno. */
int lp_snapshot_install(int signo, unsigned max_frames, smp_sigaction_fn *sigaction_fn);
/* The application's sigaction() for signo: 1 when signo is the snapshot signal (its action
 * is kept aside, old filled from it), else 0 and the caller calls libc. The caller
 * serializes these calls, with every signal blocked on its thread. */
int lp_snapshot_app_sigaction(int signo, const struct sigaction *act, struct sigaction *old);
/* In a fork child (the child handler): a snapshot another thread of the parent was taking
 * is not the child's, nor are the requests the parent had queued, nor the readers of the
 * application's action. */
void lp_snapshot_fork_child(void);

/* Called while waiting for the threads (every millisecond or so), so that a writer thread
 * that takes a snapshot keeps draining samples. */
typedef void lp_snapshot_idle_fn(void);

/* Takes a snapshot of every thread but skip_tid (0: none) and writes it to fd, after the
 * snapshot being taken, if any. 0, -ENOSYS when snapshots are off (not installed in this
 * process), or -errno (a failed write, -ENOMEM). */
int lp_snapshot_write(int fd, pid_t skip_tid, lp_snapshot_idle_fn *idle);

/* Serves the requests that came from outside (see above); the writer thread, each period.
 * profile_path: the profile's path, for kill() requests. Returns the number served. */
int lp_snapshot_serve(const char *profile_path, pid_t self_tid, lp_snapshot_idle_fn *idle);

#endif
