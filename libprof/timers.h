/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The timer source of the session: which one, on which signal, and the per-thread timers
 * of the `ring`, `perf` and `thread` sources (a registry of tid -> timer, counter or ring
 * counter, so that all can be disarmed at stop, at finish and after fork). The `itimer`
 * source has one process timer. A `ring` thread starts on a CPU-time timer and gets its
 * counter from the writer thread once that fired (lp_timers_tend()). Application threads
 * (constructor, thread start and exit, prof_start/stop, fork child) and the writer thread;
 * never a signal handler. The registry has its own lock.
 */
#ifndef PROF_LIBPROF_TIMERS_H
#define PROF_LIBPROF_TIMERS_H

#include <stdint.h>
#include <sys/types.h>

struct lp_config;
struct lp_ksamples_ends;
struct lp_writer;

/* What lp_timers_choose() settled on. */
struct lp_timer_choice {
    unsigned source;       /* PROF_TIMER_* */
    int signo;             /* the signal the source sends */
    unsigned event;        /* SMP_PERF_* for the perf source */
    unsigned effective_hz; /* the rate it can deliver: the request, or the tick rate */
    uint64_t period_ns;    /* the mean period of CPU time, for sample weights (perf clocks and
                            * the CPU-time timers); 0: weights count ticks */
    uint64_t interval_ns;  /* the mean each interval is drawn around (sampler/jitter.h); 0:
                            * fixed by the source (hardware events) */
};

/* Not async-signal-safe. Picks the source for cfg (auto: ring where perf_event_open is
 * permitted, perf with an unwinder that walks in the handler, else per-thread CPU timers),
 * checks that it works on this thread, and records
 * the choice for the functions below. Problems (a source or event not available here, a
 * rate the source cannot reach) are logged once each. 0 or -errno (nothing works). */
int lp_timers_choose(const struct lp_config *cfg, struct lp_timer_choice *out);
/* In a fork child: the parent's choice for the same settings, without trying the sources
 * again (same kernel, same credentials), with the same notes; else lp_timers_choose(). */
int lp_timers_choose_inherited(const struct lp_config *cfg, struct lp_timer_choice *out);

/* lp_timers_choose() keeps the perf source's trial counters (paused) for the thread
 * that chose: arming it takes them over. This closes them when that did not happen. */
void lp_timers_drop_spare(void);
/* The calling thread's timer (thread start; no-op for itimer). 0 or -errno. */
int lp_timers_arm_self(void);
/* Every thread of the process that has no timer yet (from /proc/self/task), or the process
 * timer. `skip` is a tid never to arm (the writer thread). Returns threads armed. */
int lp_timers_arm_all(pid_t skip);
/* The calling thread's timer, at its exit. */
void lp_timers_disarm_self(void);
/* Stops sampling every thread, keeping the perf counters and rings of the perf and ring
 * sources for lp_timers_arm_all() to start again (prof_stop(), the toggle signal); the
 * rings' samples stay to be drained. Signals already sent may still arrive. */
void lp_timers_pause_all(void);
/* Every timer. Signals already sent may still arrive. */
void lp_timers_disarm_all(void);
/* pthread_atfork() handlers (libprof/session.c calls them from its own): prepare holds
 * the registry's lock across the fork; parent releases it; child releases it after
 * forgetting the parent's timers (POSIX timers are not inherited; the counters'
 * descriptors are closed without touching the parent's counters, the thread timers' ids
 * are taken out of smp_timer_owner) and the forking thread's random-interval state (its
 * generator is seeded again); the choice stays for lp_timers_choose_inherited(). */
void lp_timers_fork_prepare(void);
void lp_timers_fork_parent(void);
void lp_timers_fork_child(void);
/* Checks that perf counters' descriptors are still ours (an application that closes all
 * its descriptors closes ours too) and opens a new counter where one is not: a few entries
 * each call, in turn, so that its cost does not grow with the threads. Returns the number
 * replaced. The writer thread calls it every period. */
int lp_timers_check(void);
/* The writer buffer's owner: moves the kernel-time samples of every thread's kernel-only
 * counter into w (libprof/ksamples.h). Returns the samples moved; *busy (may be NULL) set
 * when a ring was filling (lp_ksamples_drain()). */
size_t lp_timers_drain_kernel(struct lp_writer *w, const struct lp_ksamples_ends *ends,
                              unsigned max_frames, int *busy);
/* The writer thread, each period, after lp_timers_drain_kernel(): the ring source's next
 * interval for every thread that was sampled since the last draw (sampler/jitter.h,
 * smp_jitter_window(); window_ns: the time since the last draw, the next one's expected
 * length); and a thread whose stack went past
 * the kernel's copy of it moves to the perf source's signal, whose handler walks it all. */
void lp_timers_tend(uint64_t window_ns);
/* Stops every kernel-only counter counting, their rings left to drain (before finish). */
void lp_timers_pause_kernel(void);
/* Number of per-thread timers armed now (tests and stats). */
int lp_timers_count(void);

/* The scheduler tick rate, from the coarse clock's resolution (CPU-time timers fire on
 * ticks). */
unsigned lp_timers_tick_hz(void);

#endif
