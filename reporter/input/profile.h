/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A profile as the reporter holds it in memory: what one file said about one run. The
 * reader (reporter/input/read.c) fills it; the symbolizer and the aggregate read it. It owns a
 * copy of the file's bytes, and the strings (executable, mapping paths, thread names, labels)
 * and the frame arrays of samples point into that copy instead of being copied again, so a
 * profile costs about its file size plus 48 bytes per sample. Read as a stream
 * (rep_read_file_stream), the bytes are a mapping of the file whose pages are given back as
 * it is walked, and samples holds one batch at a time. Everything dies with
 * rep_profile_fini(). Reporter thread only.
 *
 * Mappings come out sorted by start and free of duplicates (the library writes the map
 * set at start and again at exit); threads come out sorted by tid, one per tid, the latest
 * name winning.
 */
#ifndef PROF_REPORTER_INPUT_PROFILE_H
#define PROF_REPORTER_INPUT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/check.h"
#include "common/hashtab.h"
#include "include/libprof/prof_format.h"

struct rep_process {
    uint32_t pid;
    uint32_t ppid;
    uint64_t start_mono_ns; /* CLOCK_MONOTONIC at the start; sample times count from it */
    uint64_t start_real_ns; /* CLOCK_REALTIME at the same moment */
    uint32_t requested_hz;  /* PROF_FREQ */
    uint32_t effective_hz;  /* what the timer could deliver, 0 if unknown */
    uint16_t timer_source;  /* PROF_TIMER_* */
    uint16_t unwinder;      /* PROF_UNWIND_* */
    uint16_t max_depth;     /* frames per sample at most */
    uint16_t mode;          /* PROF_MODE_* (CPU or wall time) */
    const char *exe;        /* the executable's path, into the profile's bytes */
};

struct rep_map {
    uint64_t time_ns;     /* CLOCK_MONOTONIC when first seen (the earliest of duplicates) */
    uint64_t start;       /* first address */
    uint64_t end;         /* one past the last address */
    uint64_t file_offset; /* offset in the file of the byte at start */
    uint32_t prot;        /* PROF_MAP_* */
    uint8_t build_id_len; /* bytes of build_id in use, 0 if none */
    uint8_t build_id[PROF_BUILD_ID_MAX];
    const char *path; /* the file, "[vdso]" and the like, or "" for anonymous memory */
};

struct rep_thread {
    uint64_t time_ns; /* CLOCK_MONOTONIC when the name was read */
    uint32_t tid;
    const char *name; /* into the profile's bytes */
    size_t seq;       /* order among the thread records read; set by rep_profile_add_thread */
};

struct rep_sample {
    uint64_t time_ns;            /* CLOCK_MONOTONIC when the signal was handled */
    uint32_t tid;                /* kernel thread id */
    uint32_t weight;             /* timer ticks this sample stands for */
    uint16_t n_frames;           /* frames at frames_le */
    uint8_t stop_reason;         /* PROF_STOP_*, maybe one this reader does not know */
    uint8_t flags;               /* PROF_SAMPLE_* */
    uint32_t state;              /* PROF_STATE_* with its call; 0 in CPU profiles */
    uint32_t label_set;          /* the thread's labels: a rep_label_set id, 0 none */
    uint32_t trace;              /* the thread's trace: index + 1 in traces, 0 none */
    uint64_t sp_word;            /* the word at the interrupted stack pointer, 0 if unread */
    const unsigned char *frames; /* n_frames little-endian uint64, leaf first; may be
                                  * unaligned; read them with rep_sample_frame() */
};

/* A thread of an all-thread snapshot (PROF_REC_SNAPSHOT). */
struct rep_snap_thread {
    uint64_t time_ns; /* when the snapshot was requested */
    uint32_t tid;
    uint8_t status;   /* PROF_SNAP_*, maybe one this reader does not know */
    char run_state;   /* the kernel's state letter, 0 when unknown */
    uint16_t syscall; /* PROF_SNAP_NOT_ASKED: the system call it waits in */
};

/* A label of the profile (PROF_REC_LABELS): strings into the profile's bytes. */
struct rep_label {
    const char *key;
    const char *value;
};

/* A thread label set (PROF_REC_LABEL_SET): pairs sorted by key, into the profile's bytes. */
struct rep_label_set {
    uint32_t id;                   /* as samples name it (rep_sample.label_set) */
    uint32_t n;                    /* pairs */
    struct rep_label *pairs;       /* strings into the profile's bytes; the array owned */
};

/* A trace and span (PROF_REC_TRACE). */
struct rep_trace {
    uint8_t trace_id[16];
    uint8_t span_id[8];
    uint8_t flags; /* the W3C trace-flags byte, 0 unknown */
};

struct rep_profile {
    const char *name;     /* the file's name for messages; not owned */
    unsigned char *bytes; /* the whole file; owned */
    size_t n_bytes;

    bool has_process;           /* a PROF_REC_PROCESS was read */
    struct rep_process process; /* the last one read */

    struct rep_map *maps; /* sorted by start, then end, offset, path; no duplicates */
    size_t n_maps;
    size_t cap_maps;

    struct rep_thread *threads; /* sorted by tid, one each */
    size_t n_threads;
    size_t cap_threads;

    struct rep_sample *samples; /* in file order */
    size_t n_samples;
    size_t cap_samples;

    struct rep_snap_thread *snap_threads; /* in file order: the threads a snapshot listed */
    size_t n_snap_threads;
    size_t cap_snap_threads;

    struct rep_label *labels;    /* PROF_REC_LABELS pairs, the last record's; into bytes */
    size_t n_labels;
    struct rep_label_set *label_sets; /* PROF_REC_LABEL_SETs in file order */
    size_t n_label_sets;
    size_t cap_label_sets;
    struct cmn_hashtab label_set_table; /* label_sets by id (common/hashtab.h) */
    struct rep_trace *traces;         /* PROF_REC_TRACEs, id - 1 */
    size_t n_traces;
    size_t cap_traces;
    const char **notes;          /* PROF_REC_NOTE texts in file order, into bytes */
    size_t n_notes;
    size_t cap_notes;
    bool has_stats;              /* a PROF_REC_STATS was read */
    uint64_t stats[PROF_STAT_N]; /* the last one read; counters it lacked are 0 */
    bool has_end;                /* the last record read was PROF_REC_END */
    bool is_torn;                /* the file ends inside a record (cut short) */
    uint64_t torn_offset;        /* where that record starts, when is_torn */
    size_t n_unknown_records;    /* records of types this reader skipped */

    bool is_mapped;           /* bytes is a read-only mapping of the file (munmap, not free);
                               * set by rep_read_file_stream */
    uint32_t owner_uid;       /* the file's owner (the profiled process's user, for its perf
                               * map); the reader's own user for a buffer */
    size_t n_samples_read;    /* SAMPLE records read, also those a stream let go of */
    uint64_t n_stopped[PROF_STOP_N + 1]; /* of those, by stop reason (PROF_STOP_N: any
                                          * reason this reader does not know) */
};

/* Not async-signal-safe. */
/* Makes p an empty profile named name (kept, not copied). Returns CMN_OK. */
int rep_profile_init(struct rep_profile *p, const char *name);
/* Frees what p owns, including the bytes that strings and frames point into. Accepts
 * NULL; p is an empty profile afterwards. */
void rep_profile_fini(struct rep_profile *p);
/* Append one item; CMN_OK or CMN_E_NOMEM. Strings must point into p->bytes (or outlive
 * p). Call rep_profile_finish() after the last one. */
int rep_profile_add_map(struct rep_profile *p, const struct rep_map *m);
int rep_profile_add_thread(struct rep_profile *p, const struct rep_thread *t);
int rep_profile_add_sample(struct rep_profile *p, const struct rep_sample *s);
int rep_profile_add_snap_thread(struct rep_profile *p, const struct rep_snap_thread *t);
int rep_profile_add_note(struct rep_profile *p, const char *text);
/* Sorts the mappings and threads and removes duplicates as described above. */
void rep_profile_finish(struct rep_profile *p);
/* The latest name of thread tid, or NULL. After rep_profile_finish(). */
const char *rep_profile_thread_name(const struct rep_profile *p, uint32_t tid);

/* Adds a label set (id, n pairs; pairs is taken over: freed with p). CMN_OK, CMN_E_NOMEM,
 * or CMN_E_INPUT when id is 0 or p has it already. */
int rep_profile_add_label_set(struct rep_profile *p, uint32_t id, struct rep_label *pairs,
                              uint32_t n);
/* The label set of id, NULL for 0 or an id p does not define. */
const struct rep_label_set *rep_profile_label_set(const struct rep_profile *p, uint32_t id);
/* The value of label key on sample s: the thread's label (its set), else the process's
 * (PROF_LABELS); NULL when neither has it. */
const char *rep_profile_label(const struct rep_profile *p, const struct rep_sample *s,
                              const char *key);
/* Adds a trace (PROF_REC_TRACE), its id the next. CMN_OK or CMN_E_NOMEM. */
int rep_profile_add_trace(struct rep_profile *p, const struct rep_trace *t);
/* The trace of sample s, NULL when it has none. */
const struct rep_trace *rep_profile_trace(const struct rep_profile *p, const struct rep_sample *s);

/* The sampling rate p's samples were taken at, in timer ticks per CPU second: the rate
 * the timer delivered, from the stats (signals over CPU time), else the effective rate
 * the library knew in advance, else the requested one; 0 when none is known. For a wall
 * profile, the requested rate: its weights are periods of it, on CPU and off. */
double rep_profile_hz(const struct rep_profile *p);

/* Frame i (0 is the leaf) of sample s. */
static inline uint64_t rep_sample_frame(const struct rep_sample *s, size_t i)
{
    assert(i < s->n_frames);
    uint64_t v;
    memcpy(&v, s->frames + i * sizeof(v), sizeof(v));
    return v;
}

/* The short name of stop reason r ("depth", "bounds", ...), as the counts print it;
 * "other" for one this reader does not know. */
const char *rep_stop_name(unsigned r);

/* The name of state kind k (PROF_STATE_KIND of a sample's state): "running", "runnable",
 * "sleeping", "disk", "stopped", "waiting"; "" for PROF_STATE_NONE, "other" for a kind
 * this reader does not know. */
const char *rep_state_name(unsigned kind);

#endif
