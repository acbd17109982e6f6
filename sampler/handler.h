/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The profiling signal handler and the state it reads. The handler takes one sample of the
 * interrupted thread: registers from the ucontext, a frame-pointer walk bounded by the
 * thread's stack, written straight into a ring slot. It never blocks, allocates or locks;
 * when the ring is full it counts the drop.
 *
 * A signal that our timer did not send (its si_code tells) belongs to the application:
 * it is handed to the action the application asked for (smp_sampler.app_actions), if any.
 *
 * State, and who writes it:
 *  - smp_sampler (global): libprof/ sets ring and max_frames before the first arm and
 *    changes them only while no handler can run (timer disarmed, in_flight == 0); it flips
 *    `active` to start and stop sampling. Counters are bumped by handlers, read by libprof/.
 *  - smp_self (per thread, initial-exec TLS so the handler reaches it without a call):
 *    libprof/ fills it in on the thread itself before the thread runs application code.
 *    stack_hi == 0 means "bounds unknown": the handler then records the leaf only.
 */
#ifndef PROF_SAMPLER_HANDLER_H
#define PROF_SAMPLER_HANDLER_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <ucontext.h>

#include "include/prof_format.h"

struct smp_ring;

struct smp_sampler {
    _Atomic int active;                        /* 1 while samples are taken; libprof/ */
    unsigned source;                           /* PROF_TIMER_*, set before the handler is
                                                * installed; tells our signals by origin */
    _Atomic int app_action_at;                 /* which app_actions[] is current, -1 none;
                                                * libprof/ fills the other, then flips it */
    struct sigaction app_actions[2];           /* the action the application set for our
                                                * signal: signals not from our timer are
                                                * handed to it */
    _Atomic int in_flight;                     /* handlers running now; handlers */
    struct smp_ring *ring;                     /* the shared ring: for threads without a
                                                * ring of their own, or whose ring is full;
                                                * libprof/, see above */
    unsigned max_frames;                       /* walk depth limit, <= the ring's */
    _Atomic uint64_t counters[PROF_STAT_N];    /* PROF_STAT_*; handlers add, libprof reads */
};

struct smp_thread {
    uintptr_t stack_lo; /* lowest address of this thread's stack */
    uintptr_t stack_hi; /* one past its highest address; 0 = unknown */
    uintptr_t root_fp;  /* frame of libprof's entry trampoline on this stack, 0 = none */
    struct smp_ring *ring; /* this thread's own ring, NULL = use the shared one; libprof/
                            * sets it at thread start and clears it at exit */
    uint32_t tid;       /* kernel thread id, 0 = not known yet */
};

extern struct smp_sampler smp_sampler;
extern __thread struct smp_thread smp_self __attribute__((tls_model("initial-exec")));

/* Async-signal-safe: the handler itself, for sigaction with SA_SIGINFO. Saves and
 * restores errno. */
void smp_handler(int sig, siginfo_t *info, void *ucontext);

/* Async-signal-safe, on the thread that was interrupted (in a handler of ours). Walks the
 * stack of the context uc with the configured stepper, bounded by smp_self's stack (or the
 * alternate signal stack it runs on): writes frames (smp_sampler.max_frames at most) and
 * rec's n_frames, flags and sp_word, and returns the stop reason (PROF_STOP_*). */
uint8_t smp_take_stack(struct prof_rec_sample *rec, uint64_t *frames, const ucontext_t *uc);

#endif
