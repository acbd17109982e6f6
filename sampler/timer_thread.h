/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The per-thread CPU-time timer source: one POSIX timer per thread on that thread's CPU
 * clock (timer_create), delivering its signal to that thread alone (SIGEV_THREAD_ID), so
 * that each thread is sampled in proportion to its own CPU time. Like every CPU-time timer
 * it fires on scheduler ticks, so it delivers at most CONFIG_HZ signals per CPU-second.
 * The handler re-arms it at each sample for an interval drawn at random around the mean
 * (sampler/jitter.h); its period, the mean, is the backstop. Timers are not inherited by
 * fork and are deleted by exec.
 *
 * The timers are made with the raw system calls, so that the kernel's id of each is known:
 * smp_timer_owner[id] names the thread whose timer it is (sampler/jitter.h), set before the
 * timer is armed and cleared (smp_timer_thread_forget) before it is deleted.
 */
#ifndef PROF_SAMPLER_TIMER_THREAD_H
#define PROF_SAMPLER_TIMER_THREAD_H

#include <sys/types.h>

/* The sigev_value our timers carry, so that the handler can tell their signals from those
 * of the application's own timers on the same signal. */
#define SMP_TIMER_COOKIE ((void *)0x6c70726f66UL)

/* Not async-signal-safe. Creates and arms a timer on thread tid's CPU clock sending signo
 * to tid about every 1/hz CPU-seconds; *id_out gets the kernel's id of it. 0 or -errno. */
int smp_timer_thread_create(pid_t tid, int signo, unsigned hz, int *id_out);
/* Not async-signal-safe. The handler no longer re-arms timer id (the caller then waits for
 * handlers in flight before it deletes a timer another thread may be re-arming). */
void smp_timer_thread_forget(int id);
/* Not async-signal-safe. Forgets and deletes a timer made by smp_timer_thread_create(). */
void smp_timer_thread_delete(int id);

#endif
