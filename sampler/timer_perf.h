/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The perf_event source: one perf_event_open() counter per thread (a software clock by
 * default, PERF_COUNT_SW_TASK_CLOCK, or a hardware event where the machine has a PMU),
 * whose overflow sends a chosen signal to the owning thread (O_ASYNC, F_SETSIG,
 * F_SETOWN_EX with F_OWNER_TID). Software clocks run on high-resolution timers, so they
 * deliver the requested rate, above the scheduler tick. Each overflow disables the counter
 * (PERF_EVENT_IOC_REFRESH with a limit of one); the handler re-arms it with the same
 * ioctl on the descriptor the kernel names in si_fd, so a thread that stops handling
 * signals stops being signalled.
 *
 * Counters count user space only (exclude_kernel): an overflow, and so our signal, happens
 * only while the thread runs its own code, never inside a system call, which a signal
 * would cut short (a blocking pipe write returns a partial count when a handler runs in
 * its middle, SA_RESTART or not). The time a thread spends in the kernel is not lost: the
 * handler weighs each sample by the thread's CPU time since its last one
 * (sampler/handler.c), so a system call's time is charged to the stack it returns to.
 *
 * Which descriptors are ours, for the handler: smp_perf_fds[fd] holds the tid of the
 * thread whose counter fd is (set before the counter is enabled), SMP_PERF_FD_LATE once
 * that counter was closed (a signal it queued may still arrive and must not be taken for
 * the application's), 0 for a number never ours. The handler issues its ioctl only on a
 * descriptor that is its own thread's counter, never on one the application may have
 * reused. The descriptors are close-on-exec, numbered 3 or above, below SMP_PERF_FD_MAX.
 */
#ifndef PROF_SAMPLER_TIMER_PERF_H
#define PROF_SAMPLER_TIMER_PERF_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

/* Events (PROF_EVENT). */
#define SMP_PERF_TASK_CLOCK 0u  /* software: the thread's CPU time */
#define SMP_PERF_CPU_CLOCK 1u   /* software: CPU time, per-CPU clock */
#define SMP_PERF_CYCLES 2u      /* hardware */
#define SMP_PERF_INSTRUCTIONS 3u /* hardware */

#define SMP_PERF_FD_MAX 65536u        /* counters take descriptors below this */
#define SMP_PERF_FD_LATE 0xffffffffu  /* smp_perf_fds[]: a counter of ours, closed */

/* smp_perf_fds[fd]: see the file comment. Written by the functions below (application and
 * writer threads), read by handlers; defined with the handler's state. */
extern _Atomic uint32_t smp_perf_fds[SMP_PERF_FD_MAX];

/* Not async-signal-safe. Opens and arms a counter of `event` on thread tid that signals
 * signo to tid hz times per second of the event's time (for the clocks), or about hz
 * times per second of CPU time (hardware events, in frequency mode). Returns the
 * descriptor or -errno (-ENOENT/-EOPNOTSUPP: no such event here; -EACCES/-EPERM: not
 * permitted by perf_event_paranoid; -EMFILE: no descriptor below SMP_PERF_FD_MAX).
 * *id_out gets the counter's kernel id, which names it for smp_timer_perf_close(). */
int smp_timer_perf_open(pid_t tid, int signo, unsigned hz, unsigned event, uint64_t *id_out);
/* Not async-signal-safe. 1 when descriptor fd is still the counter with kernel id `id`
 * (the application may have closed ours and got the number back for a file of its own). */
int smp_timer_perf_is(int fd, uint64_t id);
/* Not async-signal-safe. Closes counter `id` at fd when fd is still that counter; marks
 * the number late either way. */
void smp_timer_perf_close(int fd, uint64_t id);
/* Not async-signal-safe. Forgets descriptor fd as ours without touching it: after fork (the
 * parent's counter), or when it is no longer our counter. */
void smp_timer_perf_forget(int fd);

#endif
