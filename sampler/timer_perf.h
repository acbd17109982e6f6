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
 * The descriptors are close-on-exec, numbered 3 or above.
 */
#ifndef PROF_SAMPLER_TIMER_PERF_H
#define PROF_SAMPLER_TIMER_PERF_H

#include <stdint.h>
#include <sys/types.h>

/* Events (PROF_EVENT). */
#define SMP_PERF_TASK_CLOCK 0u  /* software: the thread's CPU time */
#define SMP_PERF_CPU_CLOCK 1u   /* software: CPU time, per-CPU clock */
#define SMP_PERF_CYCLES 2u      /* hardware */
#define SMP_PERF_INSTRUCTIONS 3u /* hardware */

/* Not async-signal-safe. Opens and arms a counter of `event` on thread tid that signals
 * signo to tid hz times per second of the event's time (for the clocks), or about hz
 * times per second of CPU time (hardware events, in frequency mode). Returns the
 * descriptor or -errno (-ENOENT/-EOPNOTSUPP: no such event here; -EACCES/-EPERM: not
 * permitted by perf_event_paranoid). */
int smp_timer_perf_open(pid_t tid, int signo, unsigned hz, unsigned event);
/* Not async-signal-safe. Closes a counter. */
void smp_timer_perf_close(int fd);

#endif
