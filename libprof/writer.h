/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The profile file and the writer thread. The file is written through one buffer that has
 * exactly one owner at a time: the thread that opens the profile (the constructor) writes
 * the first records, the writer thread then drains the sample ring into it every
 * LP_WRITER_PERIOD_MS until stopped, and the thread that finishes the profile writes the
 * last records. The writer thread blocks every signal for its whole life but the snapshot
 * signal (unblock_signo), so the profiling signal never lands on it.
 *
 * Before each write the descriptor is checked to still be our file (device and inode): an
 * application that closed it and got the same number back for a file of its own is never
 * written into; the profile is reopened for appending instead.
 *
 * No two processes ever write one file: the writer holds an exclusive flock() on its
 * profile, and a path another live process holds, or that an earlier image of this
 * process wrote before an exec, is refused (-EBUSY); libprof/session.c then picks the
 * next name.
 */
#ifndef PROF_LIBPROF_WRITER_H
#define PROF_LIBPROF_WRITER_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "common/hashtab.h"
#include "include/libprof/prof_format.h"
#include "libprof/intern.h"

#define LP_WRITER_BUF_BYTES (256u * 1024u)
#define LP_WRITER_PERIOD_MS 50u
#define LP_WRITER_BUSY_PERIOD_MS 5u
#define LP_WRITER_DRAW_SAMPLES 50u /* samples a period holds at most at the rate asked (a
                                    * shorter period at rates above 1000 Hz) */
#define LP_WRITER_POST_MAX (4u * 1024u * 1024u)
#define LP_WRITER_BATCH_BYTES (64u * 1024u)    /* entries of one PROF_REC_SAMPLES at most */
#define LP_WRITER_INTERN_FRAMES (1u << 20)     /* 8 MiB of interned frames at most */
#define LP_WRITER_STACK_BYTES (128u * 1024u) /* the thread calls little: no 8 MiB stack */
#define LP_WRITER_START_SLACK_NS 50000000ull  /* a process's start time is known to 10 ms */
#define LP_WRITER_EMPTY_MAX_BYTES (1u << 20) /* an earlier image's profile looked through
                                              * for samples; a larger one has some */

/* What on_period() asks of the writer thread. */
#define LP_WRITER_BUSY 1u   /* samples come fast: drain again soon */
#define LP_WRITER_FINISH 2u /* no application thread is left: finish the profile and end */

struct smp_ring;
struct lp_label_ctx;

/* A trace written into the current file (PROF_REC_TRACE), found again by its ids. */
struct lp_writer_trace {
    uint64_t hash;
    uint8_t ids[24]; /* trace id, span id */
};

/* The largest provisional tail (lp_writer_set_tail()): a STATS record. */
#define LP_WRITER_TAIL_BYTES 512u

/* A function run on the writer thread for another thread (lp_writer_call()). */
typedef void lp_writer_call_fn(void *arg);

struct lp_writer {
    char path[PATH_MAX];   /* absolute path of the profile; set by open */
    unsigned period_ms;    /* the writer's period, 0: LP_WRITER_PERIOD_MS */
    int fd;                /* the profile, >= 3, close-on-exec; -1 when closed */
    dev_t dev;             /* identity of the file behind fd, from open */
    ino_t ino;
    int failed;            /* a write failed: output stopped, reported once */
    unsigned char *buf;    /* pending bytes; owned by the current owner (see above) */
    size_t len;            /* bytes pending in buf */
    uint64_t bytes_written; /* to the file so far */
    uint64_t n_samples;    /* samples put in the current file */
    uint32_t n_in_buf;     /* of those, samples in buf (whole records) not yet written */
    _Atomic uint64_t n_written; /* samples of the current file written to it; the owner
                            * writes, the thread that ends a run when the writer is stuck
                            * reads (lp_writer_unwritten()) */
    struct smp_ring *ring; /* drained by the thread; set by start */
    int (*on_period)(void); /* called by the thread every period, or NULL; set before start;
                             * returns LP_WRITER_* chores */
    void (*on_finish)(void); /* called by the thread for LP_WRITER_FINISH: it owns the buffer
                              * and finishes the profile; the thread then ends */
    /* Walks again the stack kept for a sample (sampler/defer.h: `deferred`, its number)
     * and updates rec and frames (cap of them) where the walk gets further; or NULL. Set
     * before start; called by whoever drains a ring, which then frees the stack. */
    void (*rewalk)(struct prof_rec_sample *rec, uint64_t *frames, unsigned cap,
                   uint32_t deferred);
    int unblock_signo;     /* the one signal the thread does not block (the snapshot
                            * signal), 0 = none; set before start */
    pthread_t thread;      /* the writer thread, when running */
    pid_t tid;             /* its kernel thread id, known once lp_writer_start() returns */
    int running;           /* the thread was started and serves the buffer (not stopped, its
                            * buffer not taken); owner thread only */
    pthread_mutex_t mu;    /* protects stop, busy, taken, the flush counts and the call,
                            * with cv */
    pthread_cond_t cv;
    int stop;              /* asks the thread to exit */
    int busy;              /* the thread works on the buffer or the file (its period's
                            * chores, a call), outside mu */
    int taken;             /* another thread took the buffer: the thread never touches it
                            * again and ends when it next wakes */
    lp_writer_call_fn *call_fn; /* a call asked of the thread (lp_writer_call()), not yet
                            * taken; mu */
    void *call_arg;        /* its argument; mu */
    int call_busy;         /* the thread runs the call it took; mu */
    uint64_t calls_done;   /* calls the thread ran; mu */
    uint64_t flush_req;    /* flush requests made (prof_flush) */
    uint64_t flush_done;   /* flush requests served */
    pthread_mutex_t post_mu; /* protects the post queue below */
    unsigned char *posted; /* records posted by application threads, not yet buffered */
    size_t posted_len;     /* bytes in posted */
    size_t posted_cap;     /* bytes allocated for posted */
    struct cmn_intern intern; /* stacks written so far; the buffer's owner */
    unsigned char *batch;  /* entries of the PROF_REC_SAMPLES being built; the owner */
    size_t batch_len;      /* bytes in batch */
    uint32_t batch_n;      /* entries in batch */
    uint64_t batch_base_ns; /* time of its first entry */
    uint64_t batch_prev_ns; /* time of its last entry */
    uint32_t *batch_traces; /* the trace of each entry of the batch (0 none); the owner */
    int batch_has_trace;   /* some entry of the batch has one */
    uint8_t *sets_defined; /* a bit per thread label set id (libprof/labels.h) whose
                            * PROF_REC_LABEL_SET the current file has; the owner */
    struct lp_writer_trace *traces; /* the current file's PROF_REC_TRACEs, id - 1; the owner */
    size_t n_traces, cap_traces;
    struct cmn_hashtab trace_table; /* traces by their ids (common/hashtab.h) */
    unsigned char tail[LP_WRITER_TAIL_BYTES]; /* the provisional tail to write after the
                            * period's records (lp_writer_set_tail()); the owner */
    size_t tail_len;       /* its bytes, 0 none */
    int tail_fresh;        /* set since it was last written */
    uint64_t provisional_at; /* where a provisional tail written to the file begins */
    size_t provisional_len; /* its bytes, 0 none: cut off before the next write */
};

/* Not async-signal-safe; application or writer thread as described above. */

/* Creates the profile at path (truncating what was there) and buffers its file header,
 * unless another process owns path: one that holds it open (its writer's lock), or an
 * earlier image of this process that took samples (before an exec; known by its PROCESS
 * record: this pid, started at or after process_start_real_ns, CLOCK_REALTIME; 0 skips that
 * check). 0, -EBUSY when path is taken, or -errno. */
int lp_writer_open(struct lp_writer *w, const char *path, uint64_t process_start_real_ns);
/* The buffer's owner, with the file's last records buffered: writes what is buffered to
 * the current file and closes it, then claims path (as lp_writer_open does) and goes on
 * there with a new file header and no stack known yet (each file stands alone: PROF_INTERVAL).
 * 0; -EBUSY when path is taken, or -errno, the current file left open then. */
int lp_writer_reopen(struct lp_writer *w, const char *path, uint64_t process_start_real_ns);
/* Room for at least `need` bytes at the end of the buffer, flushing first if needed; NULL
 * when need exceeds the buffer. Follow with lp_writer_commit(). */
void *lp_writer_reserve(struct lp_writer *w, size_t need);
void lp_writer_commit(struct lp_writer *w, size_t n);
/* Any thread but the owner (see above): queues whole records (mappings after dlopen, a
 * thread's name at its exit) for the owner to write. Up to LP_WRITER_POST_MAX bytes wait;
 * beyond that a record is dropped and counted. 0 or -ENOSPC. */
int lp_writer_post(struct lp_writer *w, const void *records, size_t len);
/* Owner only: copies whole records (len bytes of them, as the encoders of record.h make
 * them) into the buffer, flushing as needed. */
void lp_writer_put_records(struct lp_writer *w, const unsigned char *records, size_t len);
/* Owner only: moves posted records into the buffer. */
void lp_writer_take_posts(struct lp_writer *w);
/* Owner only: one sample (its stack interned), into the batch being built; then
 * lp_writer_end_samples() writes the batch. Its thread's labels and trace are those its
 * history says it had at rec->time_ns (libprof/labels.h). */
void lp_writer_put_sample(struct lp_writer *w, const struct prof_rec_sample *rec,
                          const uint64_t *frames);
/* The same with the labels and trace given (ctx), such as those of the moment a wait
 * began (libprof/wall.c). */
void lp_writer_put_sample_ctx(struct lp_writer *w, const struct prof_rec_sample *rec,
                              const uint64_t *frames, const struct lp_label_ctx *ctx);
void lp_writer_end_samples(struct lp_writer *w);
/* Moves every published sample out of the ring into the buffer. Returns samples moved. */
size_t lp_writer_drain(struct lp_writer *w, struct smp_ring *ring);
/* Writes the buffer to the file. 0 or -errno (also counted and reported once). */
int lp_writer_flush(struct lp_writer *w);
/* The buffer's owner. Records (len <= LP_WRITER_TAIL_BYTES) that end the file for now: the
 * writer thread writes them after its period's records, and cuts them off again before
 * it writes more, then writes them (or fresher ones) after that again; the file's last
 * records, written by lp_writer_flush() after the thread stopped, replace them. A
 * process that ends without libprof seeing it (killed; a Go program's exit_group) leaves a
 * file that ends with them: the run's counters as of its last period. */
void lp_writer_set_tail(struct lp_writer *w, const void *records, size_t len);
/* Starts the writer thread draining ring. 0 or -errno. */
int lp_writer_start(struct lp_writer *w, struct smp_ring *ring);
/* Asks the writer thread for a drain and flush, and waits up to timeout_ms for it. */
int lp_writer_sync(struct lp_writer *w, unsigned timeout_ms);
/* Runs fn(arg) on the writer thread, which then owns the buffer and the descriptor, and
 * waits for it: the thread serves it before its next period's work. 0; -ESRCH when no
 * writer thread runs; -ETIMEDOUT when the thread did not take the call within timeout_ms
 * (it is withdrawn then: fn never runs). One call at a time: the callers serialize. */
int lp_writer_call(struct lp_writer *w, lp_writer_call_fn *fn, void *arg, unsigned timeout_ms);
/* The buffer's owner (or the writer thread in a call): changes the profile's owner, after
 * making sure the descriptor is still the profile (reopening it as the flush does when the
 * application closed our number). The owner before into *was (may be NULL). 0 or -errno. */
int lp_writer_chown(struct lp_writer *w, uid_t uid, gid_t gid, struct stat *was /* out */);
/* Async-signal-safe. Samples of the current file taken (`taken`, the count since it began)
 * that are not in it yet. */
uint64_t lp_writer_unwritten(const struct lp_writer *w, uint64_t taken);
/* Stops and joins the writer thread (waiting at most timeout_ms; -ETIMEDOUT then, and the
 * caller must not touch the buffer). 0 when no thread runs. */
int lp_writer_stop(struct lp_writer *w, unsigned timeout_ms);
/* Takes the buffer from the writer thread without waking or joining it: waits (at most
 * timeout_ms) while the thread works on the buffer, then the caller owns it and the thread,
 * parked, never touches it again: it ends when it next wakes, or with the process (an
 * exit, an exec). 0 when no thread runs; -ETIMEDOUT when the thread stayed busy (the
 * caller must not touch the buffer). Application thread, not a handler. */
int lp_writer_take(struct lp_writer *w, unsigned timeout_ms);
/* Flushes and closes the file and frees the buffer. Accepts a writer never opened. */
void lp_writer_close(struct lp_writer *w);
/* Async-signal-safe (system calls only): claims path as lp_writer_open() does (without the
 * look for an earlier image's samples: a whole file of another image keeps its name only
 * while its process holds it) and writes len bytes of records to it, a whole profile (its
 * file header first), then closes it: the profile of a session that never started, written
 * by the thread that ends the process. 0, -EBUSY when path is taken, or -errno. */
int lp_writer_write_file_sigsafe(const char *path, const void *records, size_t len);
/* pthread_atfork() handlers (libprof/session.c calls them from its own): the post
 * queue's lock is held across the fork. */
void lp_writer_fork_prepare(struct lp_writer *w);
void lp_writer_fork_parent(struct lp_writer *w);
void lp_writer_fork_child(struct lp_writer *w);
/* After fork, in the child, after lp_writer_fork_child(): forgets the parent's file and
 * thread without touching them: the child's copy of the descriptor is closed; memory the
 * writer thread owned is left alone (see writer.c). */
void lp_writer_forget(struct lp_writer *w);

#endif
