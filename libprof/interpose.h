/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The libc entry points the library interposes (exported under their libc names):
 * __libc_start_main and pthread_create, so that main() and every thread's start routine
 * run above a frame of ours that ends stack walks cleanly (libc's own start code keeps no
 * frame pointer), and every new thread has its stack bounds captured before it runs
 * application code; pthread_setname_np, dlopen and dlclose, to record thread names and
 * mapping changes when they happen; and the exec family, so that the profile is finished and the
 * interval timer disarmed before the process image is replaced (an interval timer
 * survives execve, and the new program would be killed by its first SIGPROF before it
 * could install a handler). The real functions are libprof/libc.h's.
 */
#ifndef PROF_LIBPROF_INTERPOSE_H
#define PROF_LIBPROF_INTERPOSE_H

/* Not async-signal-safe. Resolves the real functions (libprof/libc.h) and the thread-exit
 * hook; called from the constructor, and lazily by a wrapper that runs earlier (another
 * library's constructor). */
void lp_interpose_init(void);

#endif
