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
#define LP_TIMER_AUTO 0u /* ring where permitted, else per-thread timers */
#define LP_MSG_MAX 256
#define LP_MSGS_MAX 8
#define LP_LABELS_BYTES 1024u /* PROF_LABELS: keys and values with their NULs, at most */
#define LP_LABELS_MAX 64u     /* pairs at most */
#define LP_KEEP_MAX 1000000u  /* PROF_KEEP at most */
#define LP_INTERVAL_MIN_NS 100000000ull /* PROF_INTERVAL: 100 ms at least */
#define LP_DEFAULT_FILE_MODE 0600u /* the files libprof creates: the user's alone */
#define LP_SYSCONF_MAX_BYTES 65536u /* the system configuration file, at most */
/* The system configuration file: settings for every process the library is loaded into,
 * and the only ones in secure execution (see lp_config_load_process()). */
#ifndef LP_SYSCONF_PATH
#define LP_SYSCONF_PATH "/etc/libprof.conf"
#endif

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
    unsigned mode;         /* PROF_MODE: PROF_MODE_CPU or PROF_MODE_WALL */
    uint64_t interval_ns;  /* PROF_INTERVAL: the profile is cut into a new file this often;
                            * 0 = one file */
    unsigned keep;         /* PROF_KEEP: interval files kept, the newest; 0 = all */
    int toggle_signo;      /* PROF_TOGGLE_SIGNAL: turns sampling off and on; 0 = none */
    char labels[LP_LABELS_BYTES]; /* PROF_LABELS: n_labels pairs "key\0value\0" */
    size_t labels_bytes;   /* bytes of labels in use */
    unsigned n_labels;
    unsigned file_mode;    /* PROF_FILE_MODE: permission bits of the files libprof creates
                            * (profiles, logs, snapshots), less the umask */
    int owner_real;        /* PROF_OWNER=real: the files are given to the process's real
                            * user and group (a set-user-ID program's invoker) */
    int is_secure;         /* secure execution (AT_SECURE): nothing was read from the
                            * environment */
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

/* Not async-signal-safe. The process's configuration: the system configuration file at
 * sysconf_path (one NAME=value a line, '#' comments; read only when it is a regular file
 * owned by root that nobody else may write, in a directory the same holds for) gives the
 * defaults, the environment env overrides them. In secure execution (is_secure: a
 * set-user-ID, set-group-ID or file-capability program, getauxval(AT_SECURE)) the
 * environment is not read at all, and without the file profiling is off, silently.
 * Returns the number of messages added to *msgs. */
int lp_config_load_process(struct lp_config *c, char *const *env, int is_secure,
                           const char *sysconf_path, struct lp_config_msgs *msgs);

/* What a path template's %-sequences stand for. */
struct lp_path_vars {
    pid_t pid;              /* %p */
    unsigned seq;           /* %n: the interval file's number, from 0 */
    uint64_t start_real_ns; /* %t: when the file's interval started (CLOCK_REALTIME), shown
                             * as YYYYmmdd-HHMMSS in UTC */
};

/* Expands %p (pid), %n, %t and %% in tmpl (see lp_path_vars) and makes the result
 * absolute against cwd. 0, -EINVAL for an unknown %-sequence or empty template, or
 * -ENAMETOOLONG. */
int lp_config_expand_path_vars(const char *tmpl, const struct lp_path_vars *v, const char *cwd,
                               char *out, size_t cap);
/* The same with %n 0 and %t the current time. */
int lp_config_expand_path(const char *tmpl, pid_t pid, const char *cwd, char *out,
                          size_t cap);
/* 1 when tmpl names each interval's file apart (%n or %t in it). */
int lp_config_has_seq(const char *tmpl);

#endif
