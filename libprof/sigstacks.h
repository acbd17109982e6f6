/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The stacks libprof's handlers take samples on (sampler/sigstack.h): one per thread that
 * libprof starts, which becomes the thread's alternate signal stack when the thread has
 * none, and one spare for threads without their own. Each is SMP_SIGSTACK_BYTES with a
 * guard page below; they come from a pool of LP_SIGSTACKS_POOL slots, each mapped the first
 * time a thread takes it and never unmapped (a handler may be on it), handed back when its
 * thread exits; threads beyond the pool map their own and unmap it at their exit. Slots are
 * taken and handed back with one compare-and-swap each, so a fork at any moment leaves the
 * pool whole; in the child the slots of the threads that did not follow are free again.
 * Called on application threads (their start and exit, in libprof's trampolines and
 * thread-exit hook) and by the session's start, never from a handler.
 */
#ifndef PROF_LIBPROF_SIGSTACKS_H
#define PROF_LIBPROF_SIGSTACKS_H

#define LP_SIGSTACKS_POOL 256u

/* Not async-signal-safe. Maps the spare stack and enables lp_sigstacks_enter(); before it,
 * threads get no stack of libprof's (nothing of libprof's samples them). 0 or -errno (the
 * spare could not be mapped: threads without their own are not sampled). Idempotent. */
int lp_sigstacks_init(void);

/* Not async-signal-safe; on the thread itself, with libprof's signals blocked. Gives the
 * calling thread its stack (smp_sigstack_self) and makes it the thread's alternate signal
 * stack unless the thread has one (then the handler runs there when it has room, else
 * switches to this one). 0, or -errno when no stack could be had (the thread's samples then
 * use the spare). */
int lp_sigstacks_enter(void);

/* Not async-signal-safe; on the thread itself, with libprof's signals blocked, after its
 * last sample. Turns the alternate stack off when it is still libprof's and hands the
 * stack back. */
void lp_sigstacks_leave(void);

#endif
