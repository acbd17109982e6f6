/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The profiling signal handler and the state it reads. The handler takes one sample of the
 * interrupted thread: registers from the ucontext, a walk bounded by the thread's stack
 * (sampler/walk.h), written straight into a ring slot. It never blocks, allocates or locks;
 * when the ring is full it counts the drop. Nothing asynchronous interrupts it
 * (sampler/install.h): it always runs to its end.
 *
 * A signal that our timer did not send (its si_code tells, and for the perf source the
 * descriptor it names) belongs to the application: it is delivered to the action the
 * application asked for (smp_sampler.app, sampler/app_action.h), as the kernel would.
 *
 * State, and who writes it:
 *  - smp_sampler (global): libprof/ sets ring, max_frames, source and period_ns before the
 *    first arm and changes them only while no handler can run (timer disarmed, in_flight
 *    == 0); it flips `active` to start and stop sampling and bumps `epoch` when it arms
 *    every thread's timer again. Counters are bumped by handlers, read by libprof/.
 *  - smp_self (per thread, initial-exec TLS so the handler reaches it without a call):
 *    libprof/ fills in the stack bounds and the ring on the thread itself before the thread
 *    runs application code; the handler alone keeps the CPU-time fields.
 *    stack_hi == 0 means "bounds unknown": the handler then records the leaf only.
 */
#ifndef PROF_SAMPLER_HANDLER_H
#define PROF_SAMPLER_HANDLER_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <ucontext.h>

#include "include/libprof/prof_format.h"
#include "sampler/app_action.h"
#include "sampler/jitter.h"
#include "sampler/ring.h"
#include "sampler/walk.h"

struct smp_sampler {
    _Atomic int active;                        /* 1 while samples are taken; libprof/ */
    unsigned source;                           /* PROF_TIMER_*, set before the handler is
                                                * installed; tells our signals by origin */
    struct smp_app_action app;                 /* the application's action for our signal;
                                                * libprof/ stores, handlers deliver */
    _Atomic int in_flight;                     /* handlers between their entry and exit,
                                                * sampling; handlers */
    struct smp_ring *ring;                     /* the shared ring: for threads without a
                                                * ring of their own, or whose ring is full;
                                                * libprof/, see above */
    unsigned max_frames;                       /* walk depth limit, <= the ring's */
    unsigned walk_mode;                        /* SMP_WALK_* (PROF_UNWIND); libprof/ */
    int check_unwind;                          /* PROF_UNWIND=check: each walk is compared
                                                * with libunwind's; libprof/ */
    uintptr_t root_lo, root_hi;                /* libprof's entry trampolines' code: a
                                                * return address there ends a walk,
                                                * complete; libprof/ before the first arm */
    uint64_t period_ns;                        /* the timer's mean period of CPU time: a
                                                * sample weighs the CPU time since its
                                                * thread's last one (the process's, for
                                                * itimer) in periods; 0: every sample weighs
                                                * 1 (or its timer's overruns); libprof/ */
    intptr_t otel_tls_off;                     /* where a thread's otel_thread_ctx_v1 is,
                                                * from its thread pointer (the OpenTelemetry
                                                * thread context); 0 none; libprof/ before
                                                * the first arm */
    uint32_t running_state;                    /* the state a sample of ours carries:
                                               * PROF_STATE_RUNNING in wall profiles, else
                                               * 0; libprof/ before the first arm */
    uint64_t interval_ns;                      /* the mean interval each sample's next one is
                                                * drawn around (sampler/jitter.h); 0: the
                                                * timer's own period (hardware events in
                                                * frequency mode); libprof/ */
    _Atomic int itimer_owned;                  /* 1 while ITIMER_PROF is libprof's: the
                                                * handler may re-arm it; libprof/ clears it
                                                * and waits out the handlers in flight
                                                * before anyone else arms it */
    _Atomic uint64_t itimer_cpu_ns;            /* itimer: the process CPU time at the last
                                                * sample; handlers */
    _Atomic unsigned itimer_epoch;             /* itimer: epoch of itimer_cpu_ns; handlers */
    _Atomic int64_t itimer_carry_ns;           /* itimer: CPU time counted but not yet given
                                                * out as weight; handlers */
    _Atomic uint64_t itimer_drawn_ns;          /* itimer: the interval last drawn, 0 none;
                                                * handlers */
    _Atomic unsigned epoch;                    /* bumped by libprof/ when it arms every
                                                * thread: a CPU-time mark of an older epoch
                                                * is stale */
    _Atomic uint64_t counters[PROF_STAT_N];    /* PROF_STAT_*; handlers add, libprof reads */
    _Atomic unsigned n_ripe;                   /* ring source: bumped with smp_timer_ripe;
                                                * handlers, read by the writer thread */
};

struct smp_thread {
    uintptr_t stack_lo; /* lowest address of this thread's stack */
    uintptr_t stack_hi; /* one past its highest address; 0 = unknown */
    uintptr_t root_fp;  /* frame of libprof's entry trampoline on this stack, 0 = none */
    struct smp_ring *ring; /* this thread's own ring, NULL = use the shared one; libprof/
                            * sets it at thread start and clears it at exit */
    uint32_t tid;       /* kernel thread id, 0 = not known yet */
    unsigned cpu_epoch; /* smp_sampler.epoch when cpu_ns was taken; the handler */
    uint64_t cpu_ns;    /* the thread's CPU time at its last sample; the handler */
    int64_t cpu_carry_ns; /* CPU time counted but not yet given out as weight; the handler */
    uint64_t rng;       /* the random intervals' generator state (sampler/jitter.h), 0 = not
                         * seeded yet; the handler */
    struct smp_jitter_plan plan; /* the perf counter's next overflow; the handler */
    uint64_t timer_drawn_ns; /* the CPU timer's interval last drawn, 0 none; the handler */
    int app_blocked;    /* the per-thread sampling signal when the application blocks it
                         * on this thread, in its view (the kernel does not), else 0
                         * (libprof/interpose.c) */
    int app_held;       /* an instance of the application's own is held pending: the
                         * signal is blocked for real until the application unblocks it */
    uint32_t label_set; /* the thread's labels (libprof/labels.h), 0 none: the thread
                         * writes it in one store, its handler reads it */
    uint8_t trace_cur;  /* which of trace[] is the thread's trace: 0 none, 1 or 2; the
                         * thread fills the other one, then flips this byte */
    struct smp_trace trace[2]; /* the thread's trace and span ids; the thread */
    uint8_t is_own_wait; /* libprof makes this thread wait for its writer at _exit: its
                          * samples are libprof's time, counted (PROF_STAT_OWN_WAIT), not
                          * taken; set by the thread, never cleared */
};

#define SMP_CHECK_FRAMES 256u /* frames PROF_UNWIND=check compares at most */

/* smp_timer_ripe[id]: the ring source arms a thread with a CPU-time timer first, cheap to
 * make, and gives it a ring counter once the timer fired (the thread ran a period: one that
 * never runs, a short process, costs no ring). Set by handlers, taken back by
 * libprof/timers.c. */
extern _Atomic uint8_t smp_timer_ripe[SMP_TIMER_ID_MAX];

extern struct smp_sampler smp_sampler;
extern __thread struct smp_thread smp_self __attribute__((tls_model("initial-exec")));

/* Async-signal-safe: the handler itself, for sigaction with SA_SIGINFO. Saves and
 * restores errno (but for a signal it hands to the application's action, whose effect on
 * errno stays, as it would without us). */
void smp_handler(int sig, siginfo_t *info, void *ucontext);

/* Async-signal-safe, on the thread that was interrupted (in a handler of ours). Walks the
 * stack of the context uc with the configured stepper, bounded by smp_self's stack (or the
 * alternate signal stack it runs on): writes frames (smp_sampler.max_frames at most),
 * rec's n_frames and flags (sp_word 0) and *out, and returns the stop reason
 * (PROF_STOP_*). keep: a walk stopped at a module whose table is pending keeps its stack
 * for a later walk (sampler/defer.h; out->deferred), which its consumer frees. */
uint8_t smp_take_stack(struct prof_rec_sample *rec, uint64_t *frames, const ucontext_t *uc,
                       int keep, struct smp_walk_out *out);

/* Where a signal on our signal came from (smp_signal_origin()). */
#define SMP_SIGNAL_OURS 0 /* one of our timers sent it: a sample */
#define SMP_SIGNAL_LATE 1 /* one of our timers that no longer exists sent it: dropped */
#define SMP_SIGNAL_APP 2  /* not ours: the application's */

/* Async-signal-safe. SMP_SIGNAL_* for a signal of the sampling signal's number, by its
 * si_code and what it names (the timer's sigev_value, the perf counter's descriptor); in a
 * handler, or on the thread that dequeued it. */
int smp_signal_origin(const siginfo_t *info);

/* Async-signal-safe. Clock clk in nanoseconds, read by system call (the vDSO's rdtsc
 * faults in a thread that turned the TSC off). */
uint64_t smp_clock_ns(clockid_t clk);

/* Async-signal-safe. This thread's kernel id (cached in smp_self). */
uint32_t smp_self_tid(void);

#endif
