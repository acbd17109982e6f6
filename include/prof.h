/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libprof's public API, for applications that want to control the profiler they run
 * under (LD_PRELOAD=libprof.so) or that link libprof.so directly. Without these calls the
 * library profiles the whole run, configured by PROF_* environment variables (README.md).
 * Declare the functions weak to make a program that also runs without libprof:
 *     #pragma weak prof_start
 *     if (prof_start) prof_start();
 */
#ifndef PROF_INCLUDE_PROF_H
#define PROF_INCLUDE_PROF_H

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

#ifdef __cplusplus
}
#endif

#endif
