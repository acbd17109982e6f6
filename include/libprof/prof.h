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

#include <stdint.h>

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

/*
 * Thread labels: what the calling thread is doing now (which endpoint, which tenant, which
 * phase), attached to every sample of this thread until changed, in CPU and wall profiles
 * (a wait carries the labels of the moment it began): `prof report --label KEY=VALUE`,
 * `--by-label KEY`, `-f pprof` (go tool pprof -tags, -tagfocus), `prof check --by-label
 * KEY`. PROF_LABELS stays the process's labels; a thread's own win on the same key.
 *
 * Meant for every request: no system call, no lock, no allocation once the thread has seen
 * the key, the value and the resulting set (a small cache per thread checks the strings'
 * contents, so a buffer reused for another value is right); tens of nanoseconds. The
 * strings are copied; at most 16 labels a thread, 255 bytes a key or value, 65536
 * distinct sets a process. A new thread starts with the labels of the thread that created
 * it; a fork child's thread keeps its parent thread's, as a copy. The calling thread only;
 * not async-signal-safe (a signal handler must not change the labels of the thread it
 * interrupts). Return 0, or -1 when the label cannot be set (an empty key, a string too
 * long, too many labels or sets, no memory): the thread's labels are unchanged then.
 *
 * A program that should also run without libprof includes <libprof/prof_weak.h> instead:
 * the same calls, no-ops when the library is not loaded.
 */

/* Sets the calling thread's label key to value (a value NULL or "" removes the key). */
PROF_API int prof_label_set(const char *key, const char *value);

/* Removes every label of the calling thread. */
PROF_API int prof_labels_clear(void);

/* What prof_label_push() returns: the labels to go back to. */
typedef uint64_t prof_label_token;

/* The scoped form: sets key to value as prof_label_set() does and returns a token that
 * prof_label_pop() takes to restore the labels the thread had before, whatever was set in
 * between (a request handled on a pool thread leaves nothing of its labels behind). Pushes
 * nest; pop them in reverse order. A push that fails changes nothing and its token still
 * restores. */
PROF_API prof_label_token prof_label_push(const char *key, const char *value);
PROF_API int prof_label_pop(prof_label_token token);

/* The calling thread works for this trace and span from now on (W3C trace context: a
 * 16-byte trace id, an 8-byte span id; an all-zero trace id clears): written with the
 * samples they cover, `prof report --trace ID` selects them. prof_trace_clear(): none. */
PROF_API int prof_trace_set(const unsigned char trace_id[16], const unsigned char span_id[8]);
PROF_API int prof_trace_clear(void);

#ifdef __cplusplus
}
#endif

#endif
