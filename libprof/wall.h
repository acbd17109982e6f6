/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Wall-clock profiles (PROF_MODE=wall): the time threads spend off CPU, with their states
 * and stacks, added to the CPU-time samples (which the handler tags running). No thread is
 * ever signalled for it: a thread off CPU is blocked or sleeping, and a signal would wake
 * it early or cut its system call short.
 *
 * The kernel tells. One perf_event per CPU, opened on the session's first thread and
 * inherited by every thread it and they start (inherit, inherit_thread; not by child
 * processes; removed at exec), records each context switch of the process's threads
 * (context_switch: PERF_RECORD_SWITCH, out or in, with preemption marked) and their ends
 * (task: PERF_RECORD_EXIT), into a ring per CPU. Where the kernel lets us (root,
 * CAP_PERFMON or perf_event_paranoid <= 1) the event is the context-switch counter itself,
 * sampling every switch with the user registers and the top of the user stack at that
 * moment: the stack of the thread as it leaves the CPU, which it keeps unchanged until it
 * comes back, walked by the unwind tables (libprof/ksamples.h). Elsewhere the records come
 * alone and an episode's stack is the user pc /proc/self/task/TID/syscall gives while the
 * thread waits: the leaf only.
 *
 * An episode off CPU runs from a switch out to the next switch in of the same thread. Its
 * time, exactly, becomes weight (periods of 1/PROF_FREQ, rounded at random so that short
 * episodes count in expectation), when it ends or at the latest every second while it
 * lasts (a thread parked for minutes costs one sample a second), on its stack, with its
 * state: runnable (it was preempted) or, for a thread that left the CPU by itself, what
 * /proc/self/task/TID/stat and /syscall said while it was off (sleeping, disk or stopped,
 * in which system call); an episode over before the writer looked at it is `waiting`, call
 * unknown. Records the kernel could not write (its ring was full: counted) may hide the
 * end of an episode: after a loss, before each second's weight of a long one, the thread's
 * CPU clock is read, and a thread that ran since it was looked at has its episode ended
 * there. /proc is read once per episode that outlives a writer period (50 ms; 5 ms while
 * episodes end before they are looked at), and its
 * answer, taken at a known time, is given to the episode that time falls in, so that a
 * thread that ran and blocked again meanwhile never gets a label that was not its own.
 * The cost grows with context switches, not with threads: a parked thread costs nothing
 * until it wakes.
 *
 * Records of several rings are merged by time; those of the last millisecond wait for the
 * next period, so that a switch in on one CPU is never seen before the switch out it ends
 * on another. Owned by the writer buffer's owner (the writer thread, or the thread that
 * finishes the profile); setup and teardown by the session (libprof/session.c).
 */
#ifndef PROF_LIBPROF_WALL_H
#define PROF_LIBPROF_WALL_H

#include <stdint.h>
#include <sys/types.h>

struct lp_ksamples_ends;
struct lp_writer;

/* Not async-signal-safe. */
/* Opens the context-switch events on the calling thread (the session's first) for a
 * profile at hz, stacks max_frames deep, walked with ends; writer_tid is never counted.
 * 0, or -errno when the kernel refuses them (the session then notes that wall time is off
 * CPU only on the threads' own samples). *with_stacks says whether the kernel records the
 * stacks (privileged) or /proc gives the leaf. */
int lp_wall_start(unsigned hz, unsigned max_frames, const struct lp_ksamples_ends *ends,
                  int *with_stacks);
/* The writer thread's tid, not counted (known once it runs). */
void lp_wall_set_writer(pid_t writer_tid);
/* The buffer's owner, every writer period: reads the rings, ends and labels episodes,
 * writes the weight of those ended and of those that have lasted a second; with `all`,
 * every episode's weight up to now (the end of an interval's file, the end of the
 * profile). sampling: whether samples are taken now (paused: time passes unweighted).
 * *busy (may be NULL) is set when a ring was more than a quarter full or waits ended
 * before they could be looked at (look sooner). Returns the samples written. */
unsigned lp_wall_serve(struct lp_writer *w, int sampling, int all, int *busy);
/* Closes the events and unmaps the rings (the end of the session). */
void lp_wall_stop(void);
/* In a fork child (the child handler): the parent's events and rings are forgotten (the
 * child's copies of the descriptors closed, the rings were not inherited), its state left
 * as the writer thread may have left it. */
void lp_wall_fork_child(void);

#endif
