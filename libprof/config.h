/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The library's configuration, read once from PROF_* environment variables by the
 * constructor (application thread, before any profiling state exists). A bad value never
 * stops the application: the setting falls back to its default (or profiling is turned
 * off, for an unusable output path) and one message line says which.
 */
#ifndef PROF_LIBPROF_CONFIG_H
#define PROF_LIBPROF_CONFIG_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#define LP_DEFAULT_OUTPUT "prof.%p.prof"
#define LP_DEFAULT_HZ 250u        /* the scheduler tick most distributions build with */
#define LP_MAX_HZ 100000u
#define LP_DEFAULT_DEPTH 256u
#define LP_MAX_DEPTH 4096u
#define LP_DEFAULT_BUFFER_KB 4096u /* a quarter shared, the rest 24 per-thread rings */
#define LP_DEFAULT_SNAP_RT_OFFSET 3 /* PROF_SNAPSHOT_SIGNAL default: SIGRTMAX - 3 */
#define LP_MIN_BUFFER_KB 64u
#define LP_MAX_BUFFER_KB (1024u * 1024u)
#define LP_TIMER_AUTO 0u /* perf where permitted, else per-thread timers */
#define LP_MSG_MAX 256
#define LP_MSGS_MAX 8

struct lp_config {
    char output[PATH_MAX]; /* PROF_OUTPUT: the path template, %p = pid, %% = % */
    char log[PATH_MAX];    /* PROF_LOG: diagnostics file, "" = stderr */
    unsigned freq_hz;      /* PROF_FREQ: samples per CPU-second asked for */
    unsigned max_depth;    /* PROF_DEPTH: frames per sample at most */
    unsigned buffer_kb;    /* PROF_BUFFER_KB: sample ring size */
    int start;             /* PROF_START: 1 = sample from the start, 0 = wait for prof_start() */
    unsigned timer;        /* PROF_TIMER: LP_TIMER_AUTO or a PROF_TIMER_* source */
    int signo;             /* PROF_SIGNAL: 0 = the source's default */
    int snap_signo;        /* PROF_SNAPSHOT_SIGNAL: asks for an all-thread snapshot; 0 = off */
    int follow;            /* PROF_FOLLOW: 1 = profile forked children and exec'd programs */
    unsigned event;        /* PROF_EVENT: SMP_PERF_* event of the perf source */
    unsigned unwinder;     /* PROF_UNWIND: PROF_UNWIND_AUTO (default), _FP, _DWARF or
                            * _LIBUNWIND */
    uint64_t duration_ns;  /* PROF_DURATION: wall time from the session's start after which
                            * the profile is finished while the program runs on; 0 = none */
    int enabled;           /* 0 when a value makes profiling impossible */
};

/* Problems found while loading, one line each, without the "libprof: " prefix. A bad
 * value of one of our variables goes to stderr (lp_log); is_note marks what only the
 * profile hears of (lp_note): an unknown PROF_ name. */
struct lp_config_msgs {
    int n;
    char text[LP_MSGS_MAX][LP_MSG_MAX];
    int is_note[LP_MSGS_MAX];
};

/* Not async-signal-safe. Fills *c from env (a NULL-terminated "NAME=value" array, usually
 * environ), appending one message per bad value or unknown PROF_ variable to *msgs.
 * Returns the number of messages added. */
int lp_config_load(struct lp_config *c, char *const *env, struct lp_config_msgs *msgs);

/* Expands %p (pid) and %% in tmpl and makes the result absolute against cwd. 0, -EINVAL
 * for an unknown %-sequence or empty template, or -ENAMETOOLONG. */
int lp_config_expand_path(const char *tmpl, pid_t pid, const char *cwd, char *out,
                          size_t cap);

#endif
