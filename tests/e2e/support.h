/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Helpers shared by the end-to-end tests (tests/e2e/test_*.c): a private temporary
 * directory per test, running a program with a chosen environment and capturing what it
 * writes, reading `prof report` output (folded stacks and the top table) and scanning a
 * profile file record by record. They run in the Criterion test process, one test at a
 * time; failures are reported with cr_assert, which ends the test.
 *
 * Paths under the build directory come from BUILD_DIR, which the Makefile defines.
 */
#ifndef PROF_TESTS_E2E_SUPPORT_H
#define PROF_TESTS_E2E_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "include/libprof/prof_format.h"

#ifndef BUILD_DIR
#error "BUILD_DIR must name the build directory (the Makefile defines it)"
#endif

#define E2E_LIB BUILD_DIR "/libprof.so"
#define E2E_PROF BUILD_DIR "/prof"
#define E2E_WORKLOAD(name) BUILD_DIR "/workloads/" name
#define E2E_TIMEOUT_S 60.0 /* default limit for one program run */

/* A NULL-terminated argument vector from a list of strings. */
#define E2E_ARGV(...) ((const char *const[]){__VA_ARGS__, NULL})

/* How to run a program. Zero-initialize and set what matters. */
struct e2e_opts {
    const char *cwd;        /* working directory; NULL: the test's temporary dir */
    const char *const *env; /* extra "NAME=value" entries, NULL-terminated; may be NULL */
    int preload;            /* nonzero: add LD_PRELOAD=<build>/libprof.so */
    int close_stdin;        /* nonzero: start with fd 0 closed (else /dev/null) */
    double timeout_s;       /* kill the program after this long; 0: E2E_TIMEOUT_S */
    double kill_after_s;    /* > 0: send SIGKILL after this long, on purpose */
};

/* What a run produced. Free with e2e_proc_free. */
struct e2e_proc {
    int status;     /* exit code, or 128 + signal number if killed */
    int timed_out;  /* nonzero if it was killed for running past timeout_s */
    char *out;      /* stdout, NUL-terminated */
    size_t out_len; /* bytes in out before the NUL */
    char *err;      /* stderr, NUL-terminated */
    size_t err_len; /* bytes in err before the NUL */
};

/* One line of folded output: "a;b;c COUNT". */
struct e2e_stack {
    char *frames; /* "a;b;c", root first; owned */
    long count;   /* samples (weights) with this stack */
};

struct e2e_folded {
    struct e2e_stack *stacks; /* in output order; owned */
    size_t n_stacks;          /* entries in stacks */
    long total;               /* sum of the counts */
};

/* What a scan of a profile file found. */
#define E2E_MAX_TIDS 64
#define E2E_MAX_NAMES 64
struct e2e_scan {
    int header_ok;                     /* magic and version as expected */
    size_t n_records;                  /* whole records read */
    size_t n_samples;                  /* PROF_REC_SAMPLE records */
    uint64_t weight_sum;               /* sum of their weights */
    size_t n_maps;                     /* PROF_REC_MAP records */
    size_t n_maps_again;               /* of those, mappings named before (same start, end and
                                        * offset): a file's closing mappings */
    int has_process;                   /* a PROF_REC_PROCESS record was seen */
    uint32_t pid;                      /* from it */
    uint32_t requested_hz;             /* from it */
    uint32_t effective_hz;             /* from it */
    int has_stats;                     /* a PROF_REC_STATS record was seen */
    uint64_t stat_signals;             /* its PROF_STAT_SIGNALS counter */
    uint64_t stat_kernel_samples;      /* its PROF_STAT_KERNEL_SAMPLES counter */
    uint64_t stat_ring_samples;        /* its PROF_STAT_RING_SAMPLES counter */
    uint64_t stat_samples;             /* its PROF_STAT_SAMPLES counter */
    int has_end;                       /* the last record is PROF_REC_END */
    size_t trailing_bytes;             /* bytes after the last whole record */
    uint32_t tids[E2E_MAX_TIDS];       /* distinct sample tids, in order of appearance */
    uint64_t tid_weights[E2E_MAX_TIDS]; /* summed sample weights of each of them */
    size_t n_truncated;                /* samples whose walk did not reach the root */
    size_t n_oracle;                   /* libunwind's twins (PROF_UNWIND=check): not samples */
    size_t n_kernel;                   /* samples of time in the kernel (PROF_SAMPLE_KERNEL) */
    size_t n_kernel_truncated;         /* and of those, the truncated ones */
    uint64_t stats[PROF_STAT_N];       /* the STATS record's counters, 0 for those it lacks */
    uint32_t timer_source;             /* from the process record */
    uint32_t unwinder;                 /* from the process record (PROF_UNWIND_*) */
    uint64_t start_mono_ns;            /* from the process record */
    uint64_t first_time_ns;            /* earliest sample time */
    uint64_t last_time_ns;             /* latest sample time */
    size_t n_tids;                     /* entries in tids */
    char names[E2E_MAX_NAMES][17];     /* thread names from PROF_REC_THREAD records */
    uint32_t name_tids[E2E_MAX_NAMES]; /* and their tids */
    size_t n_names;                    /* entries in names and name_tids */
    size_t sample_offsets[2];          /* file offsets of the first and the middle record that
                                        * holds samples (PROF_REC_SAMPLE or _SAMPLES) */
};

/* The test's private directory, made by e2e_setup (a Criterion .init) under /tmp and
 * removed with everything in it by e2e_teardown (.fini). */
void e2e_setup(void);
void e2e_teardown(void);
const char *e2e_dir(void);

/* Returns a path inside the test directory; the string lives until the test ends. */
const char *e2e_path(const char *name);

/* Returns "NAME=value"; the string lives until the test ends. */
const char *e2e_env(const char *name, const char *value);

/* Runs argv (argv[0] an absolute path) with the environment of the test minus LD_PRELOAD,
 * PROF_* and CPUPROFILE*, plus o->env, all other fds closed. Asserts that it could start. */
void e2e_run(struct e2e_proc *p, const struct e2e_opts *o, const char *const argv[]);
/* e2e_run() under the library, profiling into e2e_path(profile), with the extra settings
 * env (NULL-terminated, at most 14; may be NULL) and timeout_s (0: E2E_TIMEOUT_S). */
void e2e_run_profiled(struct e2e_proc *p, const char *profile, const char *const *env,
                      double timeout_s, const char *const argv[]);
void e2e_proc_free(struct e2e_proc *p);

/* Reads a whole file; NULL if it cannot be read. Free the result with free(). */
char *e2e_read_file(const char *path, size_t *len /* out, may be NULL */);
/* Writes len bytes to path, asserting success. */
void e2e_write_file(const char *path, const void *data, size_t len);

/* The files in the test directory whose names start with prefix and end with suffix,
 * sorted; returns how many (at most cap) and their full paths in paths (strings live until
 * the test ends). */
size_t e2e_find_files(const char *prefix, const char *suffix, const char **paths, size_t cap);

/* Parses folded stacks; asserts on a malformed line. Free with e2e_folded_free. */
void e2e_folded_parse(struct e2e_folded *f, const char *text);
void e2e_folded_free(struct e2e_folded *f);
/* Sum of the counts of the stacks that have frame `name` anywhere. */
long e2e_folded_containing(const struct e2e_folded *f, const char *name);
/* The same, of the stacks whose outermost frame is root; the others are logged (a warning
 * each), as stacks that did not reach it. */
long e2e_folded_containing_from(const struct e2e_folded *f, const char *name, const char *root);
/* Sum of the counts of the stacks that end with `path` ("a;b;c", leaf last), either the
 * whole stack or preceded by more frames. */
long e2e_folded_ending(const struct e2e_folded *f, const char *path);

/* Sum of the counts of the stacks that are exactly `stack`. */
long e2e_folded_exactly(const struct e2e_folded *f, const char *stack);
/* A module's unwind table is built at the first sample that needs it: that sample, and
 * any other taken before the table is there, ends at the frame that needed it
 * (PROF_STOP_PENDING). Tests that expect every sample whole allow this many. */
#define E2E_PENDING_MAX 3

/* Runs `prof report --format folded FILE`, asserts exit 0, parses stdout into f. */
void e2e_report_folded(struct e2e_folded *f, const char *profile);

/* Reads the rows of a top table: the names of the first cap rows in order. Returns the
 * number of rows found; names are strdup'ed (free each). */
size_t e2e_top_names(const char *text, char **names, size_t cap);

/* Scans a profile file; asserts it could be read. */
void e2e_scan_file(struct e2e_scan *s, const char *path);

/* The number of lines in text (a last line without '\n' counts) and how many of them
 * start with prefix. */
size_t e2e_count_lines(const char *text, const char *prefix, size_t *n_with_prefix /* out */);

/* Reads "name value" lines of a truth file written by the shares workload. */
double e2e_truth_value(const char *truth_text, const char *name);

#endif
