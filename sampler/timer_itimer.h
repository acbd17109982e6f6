/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The process CPU-time timer source: setitimer(ITIMER_PROF), which sends SIGPROF to the
 * process each time it has used `interval` of CPU time; the kernel picks a running thread.
 * It can only fire on a scheduler tick, so it delivers at most CONFIG_HZ signals per
 * CPU-second whatever rate is asked. An interval timer is not inherited across fork but
 * survives execve, so it must be disarmed before an exec.
 */
#ifndef PROF_SAMPLER_TIMER_ITIMER_H
#define PROF_SAMPLER_TIMER_ITIMER_H

/* Async-signal-safe (setitimer is a plain system call). Return 0 or -errno. */
int smp_timer_itimer_arm(unsigned hz);
int smp_timer_itimer_disarm(void);

#endif
