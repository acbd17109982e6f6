/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The per-thread CPU-time timer source: one POSIX timer per thread on that thread's CPU
 * clock (timer_create), delivering its signal to that thread alone (SIGEV_THREAD_ID), so
 * that each thread is sampled in proportion to its own CPU time. Like every CPU-time timer
 * it fires on scheduler ticks, so it delivers at most CONFIG_HZ signals per CPU-second;
 * ticks it could not deliver are reported in si_overrun and count as sample weight. Timers
 * are not inherited by fork and are deleted by exec.
 */
#ifndef PROF_SAMPLER_TIMER_THREAD_H
#define PROF_SAMPLER_TIMER_THREAD_H

#include <sys/types.h>
#include <time.h>

/* The sigev_value our timers carry, so that the handler can tell their signals from those
 * of the application's own timers on the same signal. */
#define SMP_TIMER_COOKIE ((void *)0x6c70726f66UL)

/* Not async-signal-safe. Creates and arms a timer on thread tid's CPU clock sending signo
 * to tid every 1/hz CPU-seconds. 0 or -errno. */
int smp_timer_thread_create(pid_t tid, int signo, unsigned hz, timer_t *out);
/* Not async-signal-safe. Deletes a timer made by smp_timer_thread_create(). */
void smp_timer_thread_delete(timer_t timer);

#endif
