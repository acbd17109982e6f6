/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The profiling session of this process: set up by the library's constructor, finished at
 * normal exit by its destructor (or before an exec), forgotten in a fork child. These
 * functions are what the interposers and the public API call. None is async-signal-safe.
 */
#ifndef PROF_LIBPROF_SESSION_H
#define PROF_LIBPROF_SESSION_H

#include <signal.h>
#include <stddef.h>

/* 1 when this process has a live profile (set up, not finished, and not a fork child that
 * inherited its parent's). */
int lp_session_live(void);

/* Async-signal-safe. The signal libprof samples threads with when it is sent to each
 * thread (the perf and thread sources), once its handler is installed; else 0 (the
 * itimer source's SIGPROF goes to any thread that does not block it). */
int lp_session_thread_signo(void);
/* The application's sigaction() for signo: when signo is the signal our handler owns, its
 * action is kept aside (and old filled from it) and 1 is returned; else 0, and the caller
 * calls libc. */
int lp_session_app_sigaction(int signo, const struct sigaction *act, struct sigaction *old);
/* Before the application's setitimer(which): when it arms the timer our source uses, our
 * sampling moves to another source. Returns 1 when it did that. */
int lp_session_app_setitimer(int which);
/* On a thread started by our pthread_create, before its start routine: its own ring and
 * its timer; it counts as an application thread. */
void lp_session_thread_start(void);
/* When that thread (or the main thread, by pthread_exit()) exits: timer released, ring
 * retired, name recorded, no longer counted. */
void lp_session_thread_exit(void);
/* PROF_FOLLOW: 1 when children and exec'd programs are profiled too. */
int lp_session_follow(void);
/* The working directory the process started in (a relative PROF_OUTPUT is taken from it):
 * async-signal-safe to read, set once by the constructor. */
const char *lp_session_start_cwd(void);
/* 1 when the session is live and sampling (not paused). */
int lp_session_sampling(void);
/* Stops sampling, writes the last records and closes the profile. Idempotent; a no-op in a
 * process without a live session. */
void lp_session_finish(void);
/* Before _exit(): asks the writer thread to finish the profile (as at exit, which runs
 * our destructor; _exit() runs none) and waits for it, at most about 200 ms. Async-signal-
 * safe in the caller (atomics, a futex wake, nanosleep): _exit() may be called from a
 * signal handler. A no-op in a vfork child, in the writer thread, and without a live
 * session or a running writer thread. */
void lp_session_before_quick_exit(void);
/* Before an exec attempt: finishes the session, then consumes our signals still pending on
 * this thread (the new program would meet them with their default action). Safe in a vfork
 * child (it then only touches this thread's signals). */
void lp_session_before_exec(void);
/* After an exec that returned (failed): the profile goes on in a new file, as a session
 * started again (the exec wrappers, every signal blocked). */
void lp_session_after_failed_exec(void);
/* Resumes (1) or pauses (0) sampling. 0, or -ESRCH without a live session. */
int lp_session_set_active(int on);
/* Queues records for the profile (any application thread); dropped without a live
 * session. */
void lp_session_post(const void *records, size_t len);
/* Records the current executable mappings (after dlopen, before dlclose). */
void lp_session_post_maps(void);
/* Records the calling thread's current name. */
void lp_session_post_thread_name(void);
/* Writes everything sampled so far to the file; waits up to a second. 0 or -errno. */
int lp_session_flush(void);

/* Around the application's set*id calls (libprof/interpose.c), which glibc runs on every
 * thread, the writer thread's too, aborting the process when one fails. Before: the
 * writer thread takes on the calling thread's capabilities (libprof/creds.h) and gives the
 * profile to the effective user and group the call asks for (euid, egid; -1: unchanged),
 * after proving its descriptor is still the profile, while the process may still do so (a
 * child that drops its privileges and execs, subprocess's user=, takes its file over in
 * the program it starts). After: failed (the call's result) gives the file back. No thread
 * is stopped or started. Serialized (before takes a lock that after releases); a no-op
 * without a live session. */
void lp_session_before_setxid(uid_t euid, gid_t egid);
void lp_session_after_setxid(int failed);

/* Writes an all-thread snapshot to fd (libprof/snapshot.h). 0, -ESRCH without a live
 * session, or -errno. */
int lp_session_snapshot(int fd);

#endif
