/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libprof's public API, for applications that want to control the profiler they run
 * under (LD_PRELOAD=libprof.so) or that link libprof.so directly. Without these calls the
 * library profiles the whole run, configured by PROF_* environment variables (README.md).
 * Installed as <libprof/prof.h> (`make install`; `pkg-config --cflags libprof`). Declare the functions weak to make a program that also runs without libprof:
 *     #pragma weak prof_start
 *     if (prof_start) prof_start();
 */
#ifndef PROF_INCLUDE_LIBPROF_PROF_H
#define PROF_INCLUDE_LIBPROF_PROF_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PROF_API __attribute__((visibility("default")))
#else
#define PROF_API
#endif

/* Starts (or resumes) sampling. With PROF_START=0 the library loads idle and samples
 * only between prof_start() and prof_stop(). Returns 0, or -1 when this process has no
 * profile (profiling disabled by configuration, or already finished). Any thread; not
 * async-signal-safe. */
PROF_API int prof_start(void);

/* Pauses sampling; the profile stays open. Returns 0 or -1 as prof_start(). Any thread;
 * not async-signal-safe. */
PROF_API int prof_stop(void);

/* Writes every sample taken so far to the profile file, waiting at most one second.
 * Returns 0, or -1 with no profile or on timeout. Any thread; not async-signal-safe. */
PROF_API int prof_flush(void);

/* Writes the calling thread's stack into pcs: at most max addresses, innermost first,
 * after skipping the first `skip` frames of its callers (0 keeps the caller of
 * prof_backtrace() as pcs[0]). Each is a return address, except where the walk crossed a
 * signal frame: there the entry is the interrupted instruction itself (x86_64). Returns
 * the number written (0 when max <= 0). Async-signal-safe and re-entrant: meant for
 * signal handlers, crash handlers included, on the thread's stack or an alternate signal
 * stack. It steps each frame by its module's unwind table (.eh_frame) where libprof has
 * built one (a module's table is built once a sample or a backtrace has met it), by frame
 * pointer elsewhere, and reads every word through a fault-proof kernel probe, so a
 * corrupt stack ends the walk instead of faulting. Works with or without an active
 * profile (without one, by frame pointers). */
PROF_API int prof_backtrace(void **pcs, int max, int skip);

/* Writes the calling thread's stack to fd as text, one frame per line, innermost first,
 * after skipping `skip` frames as prof_backtrace():
 *     /usr/lib/x86_64-linux-gnu/libc.so.6+0x2724a
 * the file holding the code and the offset in that file of the call instruction (of the
 * interrupted instruction, across a signal frame), or "0x7f...": a bare address, when
 * the code is in no mapping libprof knows (it reads them when profiling starts and at
 * each dlopen). `prof symbolize` turns the lines into function, file and line. Allocates
 * nothing; async-signal-safe and re-entrant. Returns the number of frames written, or -1
 * when a write fails. */
PROF_API int prof_backtrace_fd(int fd, int skip);

/* Writes the current stack of every thread of the process to fd, as a snapshot file
 * (docs/FORMAT.md) that `prof stacks FILE` prints grouped by identical stack and `prof
 * report` reads like a profile. Each thread walks its own stack in its own handler of the
 * snapshot signal (PROF_SNAPSHOT_SIGNAL, SIGRTMAX-3 by default); the call waits at most one
 * second for them, and a thread that did not answer in time (it blocks the signal) is
 * listed as such. The calling thread is included: its stack shows this call. A thread
 * asleep in a system call that a signal handler would cut short (nanosleep, pause, poll,
 * select, epoll_wait, sigsuspend, ...) is not asked, so that it is not woken early, and is
 * listed as such (prof stacks PID reads it with ptrace). Returns 0, or -1
 * when this process has no profile or snapshots are off (PROF_SNAPSHOT_SIGNAL=0), or the
 * write failed. Any thread; not async-signal-safe; one snapshot at a time. */
PROF_API int prof_snapshot(int fd);

#ifdef __cplusplus
}
#endif

#endif
