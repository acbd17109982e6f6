/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Per-thread setup for the sampler, and thread names for the profile. A thread's stack
 * bounds must be known before the handler walks its stack: lp_thread_enter() captures them
 * on the thread itself (the main thread from the constructor, every other thread from the
 * pthread_create wrapper before the application's start routine runs).
 */
#ifndef PROF_LIBPROF_THREADS_H
#define PROF_LIBPROF_THREADS_H

#include <stdint.h>

struct lp_writer;

/* Not async-signal-safe (pthread_getattr_np allocates); with libprof's signals blocked.
 * Fills in smp_self for the calling thread and gives it a stack for libprof's handlers
 * (libprof/sigstacks.h). 0 or -errno (then the thread is sampled leaf-only). */
int lp_thread_enter(void);

/* Not async-signal-safe; on an exiting thread, with libprof's signals blocked, after its
 * last sample: hands back its stack for libprof's handlers. */
void lp_thread_leave(void);

/* Not async-signal-safe. Appends a PROF_REC_THREAD record for every live thread of the
 * process (from /proc/self/task). Returns the number written. */
int lp_threads_write_names(struct lp_writer *w, uint64_t time_ns);

#endif
