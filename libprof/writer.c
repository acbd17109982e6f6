/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The profile writer (see writer.h). The thread's loop: wait LP_WRITER_PERIOD_MS
 * (LP_WRITER_BUSY_PERIOD_MS while samples come fast enough to fill the ring; or until
 * woken by a flush request or stop), drain the ring into the buffer, write the buffer out.
 * A short period bounds what a killed process loses; the cost is one write(2) per period.
 */
#include "libprof/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/check.h"
#include "common/clock.h"
#include "common/grow.h"
#include "common/hash.h"
#include "common/record.h"
#include "libprof/fd.h"
#include "libprof/labels.h"
#include "libprof/libc.h"
#include "libprof/log.h"
#include "libprof/otel.h"
#include "sampler/codemap.h"
#include "sampler/defer.h"
#include "sampler/fd_high.h"
#include "sampler/handler.h"
#include "sampler/ring.h"

/* 1 when the profile in fd holds a sample, or may (it is too large to look through). */
static int has_samples(int fd)
{
    unsigned char *all = malloc(LP_WRITER_EMPTY_MAX_BYTES);
    ssize_t n = all ? pread(fd, all, LP_WRITER_EMPTY_MAX_BYTES, 0) : -1;
    int yes = n < 0 || n == (ssize_t)LP_WRITER_EMPTY_MAX_BYTES;
    for (size_t off = sizeof(struct prof_file_header); !yes && off + 8 <= (size_t)n;) {
        struct prof_rec_hdr h;
        memcpy(&h, all + off, sizeof(h));
        if (h.size_bytes < sizeof(h) || h.size_bytes % PROF_REC_ALIGN)
            break;
        yes = h.type == PROF_REC_SAMPLE || h.type == PROF_REC_STACK ||
              h.type == PROF_REC_SAMPLES;
        off += h.size_bytes;
    }
    free(all);
    return yes;
}

/* 1 when the profile in fd was written by an earlier image of this process (same pid,
 * started after this process did: an exec keeps the pid and the file) and holds samples.
 * An earlier image's profile without any (a fork child that execs at once, the usual
 * fork and exec) gives its name to the program it executed. */
static int is_earlier_image(int fd, uint64_t process_start_real_ns)
{
    unsigned char head[sizeof(struct prof_file_header) + sizeof(struct prof_rec_process)];
    if (process_start_real_ns == 0 || pread(fd, head, sizeof(head), 0) != (ssize_t)sizeof(head) ||
        memcmp(head, PROF_FILE_MAGIC, 8) != 0)
        return 0;
    struct prof_rec_process p;
    memcpy(&p, head + sizeof(struct prof_file_header), sizeof(p));
    /* The process's start is known to a clock tick (10 ms with USER_HZ = 100). */
    return p.hdr.type == PROF_REC_PROCESS && p.pid == (uint32_t)getpid() &&
           p.start_real_ns + LP_WRITER_START_SLACK_NS >= process_start_real_ns &&
           has_samples(fd);
}

/* 1 when fd holds a libprof profile: its file header's magic. */
static int is_profile(int fd)
{
    char magic[8];
    return pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
           memcmp(magic, PROF_FILE_MAGIC, sizeof(magic)) == 0;
}

/* Opens path for the profile, unless another process owns it: the file is locked
 * (flock, exclusive) for as long as we write it; a lock we cannot get means a live
 * process writes there. Only a regular file is ever opened (never through a link, never a
 * FIFO or a device: lp_fd_open_regular()), and a file already there is truncated only when
 * it is a libprof profile of this process's user that no live process writes and no
 * earlier image of this process wrote samples into; another user's file is taken (-EBUSY:
 * the next name), and a file that is not a profile is never written (-EEXIST). The
 * descriptor (the file's identity in *st), or -EBUSY, -EEXIST, -ELOOP (a link), -EINVAL
 * (not a regular file), -errno. A file found empty is not truncated: on ext4 a truncated
 * file's close waits for its data to be written out (the filesystem's guard for files
 * replaced by truncation), a cost every short process would pay. */
static int claim_stat(const char *path, uint64_t process_start_real_ns, struct stat *st)
{
    int created = 0;
    int fd = lp_fd_create(path, O_RDWR, st, &created);
    struct stat there;
    if ((fd == -EACCES || fd == -EPERM) && lstat(path, &there) == 0)
        return -EBUSY; /* another user's file (this process changed its uid): taken */
    if (fd < 0)
        return fd;
    fd = smp_fd_move_high(fd);
    if (fd < 0)
        return fd;
    int rc = 0;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0)
        rc = errno == EWOULDBLOCK ? -EBUSY : 0; /* no locks here (a filesystem without): go on */
    if (rc == 0 && !created && !lp_fd_is_ours(st))
        rc = -EBUSY;
    if (rc == 0 && st->st_size > 0 && !is_profile(fd))
        rc = -EEXIST;
    if (rc == 0 && st->st_size > 0 && is_earlier_image(fd, process_start_real_ns))
        rc = -EBUSY;
    if (rc == 0 && st->st_size > 0 && ftruncate(fd, 0) != 0)
        rc = -errno;
    if (rc != 0) {
        lp_fd_close(fd);
        return rc;
    }
    st->st_size = 0;
    return fd;
}

/* The thread of a session that ended with its buffer taken (lp_writer_take()), parked
 * until it wakes: made to wake, and joined, before a writer is opened or started again (an
 * exec that failed starts the session again): it must never find its lp_writer in a new
 * session's state. Kept here, not in the lp_writer, which lp_writer_open() takes
 * uninitialized. One session's writer at a time. */
static pthread_t taken_thread;
static int is_taken_unjoined;

static void join_taken(void)
{
    if (!is_taken_unjoined)
        return;
    smp_writer_wake_up();
    pthread_join(taken_thread, NULL);
    is_taken_unjoined = 0;
}

int lp_writer_open(struct lp_writer *w, const char *path, uint64_t process_start_real_ns)
{
    join_taken();
    memset(w, 0, sizeof(*w));
    w->fd = -1;
    if (strlen(path) >= sizeof(w->path))
        return -ENAMETOOLONG;
    strcpy(w->path, path);
    struct stat st;
    int fd = claim_stat(path, process_start_real_ns, &st);
    if (fd < 0)
        return fd;
    w->buf = malloc(LP_WRITER_BUF_BYTES);
    if (!w->buf) {
        lp_fd_close(fd);
        return -ENOMEM;
    }
    w->batch = malloc(LP_WRITER_BATCH_BYTES); /* without it, samples are written in full */
    /* An entry takes 4 bytes at least: a trace for each fits, and its encoding after. */
    w->batch_traces = malloc(LP_WRITER_BATCH_BYTES / 4 * (sizeof(uint32_t) + 5));
    if (!w->batch_traces) {
        free(w->batch);
        w->batch = NULL;
    }
    w->sets_defined = calloc(LP_LABELS_MAX_SETS / 8 + 1, 1);
    cmn_intern_init(&w->intern, LP_WRITER_INTERN_FRAMES);
    w->fd = fd;
    w->dev = st.st_dev;
    w->ino = st.st_ino;
    pthread_mutex_init(&w->mu, NULL);
    pthread_mutex_init(&w->post_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cv, &ca);
    pthread_condattr_destroy(&ca);
    /* The header goes out at once: a file without it, whose process was killed as it
     * started, is all a reader could not tell from garbage. */
    w->len = cmn_record_file_header(w->buf, LP_WRITER_BUF_BYTES);
    lp_writer_flush(w);
    return 0;
}

static void flush_batch(struct lp_writer *w);

/* A new file defines its label sets and traces afresh: each file stands alone. */
static void forget_contexts(struct lp_writer *w)
{
    if (w->sets_defined)
        memset(w->sets_defined, 0, LP_LABELS_MAX_SETS / 8 + 1);
    free(w->traces);
    w->traces = NULL;
    w->n_traces = w->cap_traces = 0;
    cmn_hashtab_fini(&w->trace_table);
}

int lp_writer_reopen(struct lp_writer *w, const char *path, uint64_t process_start_real_ns)
{
    if (!w->buf || strlen(path) >= sizeof(w->path))
        return w->buf ? -ENAMETOOLONG : -EBADF;
    struct stat st;
    int fd = claim_stat(path, process_start_real_ns, &st);
    if (fd < 0)
        return fd;
    /* Everything of the old file goes to it; then the new one starts afresh: its own
     * header, its own stacks. */
    flush_batch(w);
    lp_writer_flush(w);
    if (w->fd >= 0)
        lp_fd_close(w->fd);
    strcpy(w->path, path);
    w->fd = fd;
    w->dev = st.st_dev;
    w->ino = st.st_ino;
    w->failed = 0;
    w->bytes_written = 0;
    w->n_samples = 0;
    w->tail_len = w->provisional_len = 0;
    w->tail_fresh = 0;
    atomic_store_explicit(&w->n_written, 0, memory_order_relaxed);
    cmn_intern_fini(&w->intern);
    cmn_intern_init(&w->intern, LP_WRITER_INTERN_FRAMES);
    forget_contexts(w);
    w->len = cmn_record_file_header(w->buf, LP_WRITER_BUF_BYTES);
    lp_writer_flush(w);
    return 0;
}

/* A write that failed stops the output. It is said (on stderr, or PROF_LOG) when samples
 * are lost; a session that took none (a fork child that changed its user and closed our
 * descriptor before its exec) loses nothing, and the program hears nothing. */
static void fail(struct lp_writer *w, int err, const char *what)
{
    atomic_fetch_add_explicit(&smp_sampler.counters[PROF_STAT_WRITE_ERRORS], 1,
                              memory_order_relaxed);
    int lost = atomic_load_explicit(&smp_sampler.counters[PROF_STAT_SAMPLES],
                                    memory_order_relaxed) > 0;
    if (!w->failed && lost)
        lp_log("cannot %s %s: %s; profile output stopped", what, w->path, strerror(-err));
    w->failed = 1;
}

/* Makes sure fd is still our file; reopens the profile for appending if the application
 * closed our descriptor (its number may now be one of the application's files). */
static int check_fd(struct lp_writer *w)
{
    struct stat st;
    if (w->fd >= 0 && fstat(w->fd, &st) == 0 && st.st_dev == w->dev && st.st_ino == w->ino)
        return 0;
    int fd = lp_fd_open_regular(w->path, O_WRONLY | O_APPEND, 0, &st, NULL);
    if (fd >= 0)
        fd = smp_fd_move_high(fd);
    if (fd < 0)
        return fd;
    if (st.st_dev != w->dev || st.st_ino != w->ino) {
        lp_fd_close(fd); /* the profile was replaced or removed: do not write elsewhere */
        return -ESTALE;
    }
    /* Our old number belongs to the application now (or is closed): leave it alone. The
     * lock went with our old descriptor; the new one takes it again. */
    flock(fd, LOCK_EX | LOCK_NB);
    w->fd = fd;
    return 0;
}

/* The provisional tail written last is cut off the file, which goes on from where it
 * began. One that cannot be cut stays where it is: a later STATS supersedes it. */
static void cut_provisional(struct lp_writer *w)
{
    if (w->provisional_len == 0)
        return;
    w->provisional_len = 0;
    if (ftruncate(w->fd, (off_t)w->provisional_at) == 0)
        (void)lseek(w->fd, (off_t)w->provisional_at, SEEK_SET);
}

/* The provisional tail goes after everything written, the file ends with it: a fresh one,
 * or the last one again once a write cut it off. */
static void write_provisional(struct lp_writer *w)
{
    if ((!w->tail_fresh && w->provisional_len != 0) || w->tail_len == 0 || w->failed ||
        w->fd < 0 || w->len != 0 || check_fd(w) != 0)
        return;
    cut_provisional(w);
    off_t at = lseek(w->fd, 0, SEEK_END);
    w->tail_fresh = 0;
    if (at < 0 || lp_fd_write_all(w->fd, w->tail, w->tail_len) != 0) {
        if (at >= 0 && ftruncate(w->fd, at) == 0)
            (void)lseek(w->fd, at, SEEK_SET);
        return;
    }
    w->provisional_at = (uint64_t)at;
    w->provisional_len = w->tail_len;
}

void lp_writer_set_tail(struct lp_writer *w, const void *records, size_t len)
{
    if (len > sizeof(w->tail))
        return;
    memcpy(w->tail, records, len);
    w->tail_len = len;
    w->tail_fresh = 1;
}

int lp_writer_flush(struct lp_writer *w)
{
    if (w->len == 0 || !w->buf)
        return 0;
    if (w->failed) {
        w->len = 0;
        w->n_in_buf = 0;
        return -EIO;
    }
    int rc = check_fd(w);
    if (rc != 0) {
        fail(w, rc, "reopen");
    } else {
        cut_provisional(w);
        rc = lp_fd_write_all(w->fd, w->buf, w->len);
        if (rc != 0) {
            fail(w, rc, "write");
        } else {
            w->bytes_written += w->len;
            atomic_fetch_add_explicit(&w->n_written, w->n_in_buf, memory_order_relaxed);
        }
    }
    w->len = 0;
    w->n_in_buf = 0;
    return rc;
}

void *lp_writer_reserve(struct lp_writer *w, size_t need)
{
    if (PROF_NEVER(w->len > LP_WRITER_BUF_BYTES) || !w->buf || need > LP_WRITER_BUF_BYTES)
        return NULL;
    if (LP_WRITER_BUF_BYTES - w->len < need)
        lp_writer_flush(w);
    return w->buf + w->len;
}

void lp_writer_commit(struct lp_writer *w, size_t n)
{
    /* Never past what lp_writer_reserve() gave: the profile would be corrupt from here. */
    if (PROF_NEVER(n % PROF_REC_ALIGN != 0 || w->len + n > LP_WRITER_BUF_BYTES))
        return;
    w->len += n;
}

/* Writes the batch being built as one PROF_REC_SAMPLES, after the PROF_REC_SAMPLE_TRACES
 * that names its entries' traces when one has a trace. */
static void flush_batch(struct lp_writer *w)
{
    if (w->batch_n == 0)
        return;
    unsigned char *traces = (unsigned char *)(w->batch_traces + LP_WRITER_BATCH_BYTES / 4);
    size_t traces_len = 0;
    if (w->batch_has_trace)
        for (uint32_t i = 0; i < w->batch_n; i++)
            traces_len += cmn_record_uleb(traces + traces_len, w->batch_traces[i]);
    size_t need_traces =
        w->batch_has_trace ? sizeof(struct prof_rec_sample_traces) + traces_len + PROF_REC_ALIGN
                           : 0;
    size_t need = sizeof(struct prof_rec_samples) + w->batch_len + PROF_REC_ALIGN;
    unsigned char *dst = lp_writer_reserve(w, need_traces + need);
    if (dst) {
        size_t n = need_traces ? cmn_record_sample_traces(dst, need_traces, w->batch_n, traces,
                                                          traces_len)
                               : 0;
        n += cmn_record_samples(dst + n, need, w->batch_base_ns, w->batch_n, w->batch,
                                w->batch_len);
        lp_writer_commit(w, n);
        w->n_in_buf += w->batch_n;
    }
    w->batch_n = 0;
    w->batch_len = 0;
    w->batch_has_trace = 0;
}

/* Writes the PROF_REC_LABEL_SET of set id unless the current file has it. */
static void define_set(struct lp_writer *w, uint32_t id)
{
    if (id == 0 || id > LP_LABELS_MAX_SETS || !w->sets_defined ||
        (w->sets_defined[id / 8] & (1u << (id % 8))))
        return;
    char pairs[LP_LABELS_MAX_PAIRS * 2 * (LP_LABELS_MAX_STR + 1)];
    size_t len;
    uint32_t n = lp_labels_pack(id, pairs, sizeof(pairs), &len);
    size_t need = sizeof(struct prof_rec_label_set) + len + PROF_REC_ALIGN;
    void *dst = n > 0 ? lp_writer_reserve(w, need) : NULL;
    if (dst) {
        lp_writer_commit(w, cmn_record_label_set(dst, need, id, n, pairs, len));
        w->sets_defined[id / 8] |= (uint8_t)(1u << (id % 8));
    }
}

static bool same_trace(const void *ctx, uint32_t entry, const void *key)
{
    const struct lp_writer *w = ctx;
    return memcmp(w->traces[entry].ids, key, sizeof(w->traces[entry].ids)) == 0;
}

static uint64_t trace_hash_of(const void *ctx, uint32_t entry)
{
    return ((const struct lp_writer *)ctx)->traces[entry].hash;
}

/* The current file's id of the trace of ctx, its PROF_REC_TRACE written the first time; 0
 * for none, or when it cannot be kept. */
static uint32_t trace_id(struct lp_writer *w, const struct lp_label_ctx *ctx)
{
    if (!ctx->has_trace)
        return 0;
    uint8_t ids[24];
    memcpy(ids, ctx->trace_id, 16);
    memcpy(ids + 16, ctx->span_id, 8);
    uint64_t h = cmn_hash_bytes(ids, sizeof(ids));
    uint32_t found = cmn_hashtab_find(&w->trace_table, h, same_trace, w, ids);
    if (found != CMN_HASHTAB_NONE)
        return found + 1;
    if (!CMN_GROW(w->traces, w->cap_traces, w->n_traces + 1, 256) ||
        cmn_hashtab_reserve(&w->trace_table, trace_hash_of, w) != 0)
        return 0;
    uint32_t id = (uint32_t)w->n_traces + 1;
    size_t need = sizeof(struct prof_rec_trace);
    void *dst = lp_writer_reserve(w, need);
    if (!dst)
        return 0;
    lp_writer_commit(w, cmn_record_trace(dst, need, id, ctx->trace_flags, ctx->trace_id,
                                         ctx->span_id));
    struct lp_writer_trace *t = &w->traces[w->n_traces++];
    t->hash = h;
    memcpy(t->ids, ids, sizeof(ids));
    cmn_hashtab_insert(&w->trace_table, h, id - 1);
    return id;
}

/* One sample: its stack interned with its thread's label set (a PROF_REC_STACK the first
 * time, after the set's PROF_REC_LABEL_SET) and an entry in the batch with its trace; or,
 * when the stack cannot be interned, a full PROF_REC_SAMPLE. */
static void put_sample(struct lp_writer *w, const struct prof_rec_sample *rec,
                       const uint64_t *frames, const struct lp_label_ctx *ctx)
{
    uint64_t sp = lp_intern_filter_sp(rec->sp_word);
    uint32_t id;
    int is_new;
    uint32_t set = ctx->label_set;
    if (ctx->is_lost)
        atomic_fetch_add_explicit(&smp_sampler.counters[PROF_STAT_LABELS_LOST], 1,
                                  memory_order_relaxed);
    define_set(w, set);
    if (set != 0 && (set > LP_LABELS_MAX_SETS || !w->sets_defined ||
                     !(w->sets_defined[set / 8] & (1u << (set % 8)))))
        set = 0; /* a set the file could not define is named by no sample */
    uint32_t trace = trace_id(w, ctx);
    w->n_samples++;
    if (!w->batch || cmn_intern_stack_ctx(&w->intern, frames, rec->n_frames, rec->stop_reason,
                                          rec->flags, sp, rec->state, set, &id, &is_new) != 0) {
        struct prof_sample_ctx sc = {.label_set = set, .trace = trace};
        size_t need = sizeof(*rec) + (size_t)rec->n_frames * sizeof(uint64_t) + sizeof(sc);
        void *dst = lp_writer_reserve(w, need);
        if (dst) {
            lp_writer_commit(w, cmn_record_sample_ctx(dst, need, rec, frames, &sc));
            w->n_in_buf++;
        }
        return;
    }
    if (is_new) {
        struct prof_rec_stack st = { .id = id, .n_frames = rec->n_frames,
                                     .stop_reason = rec->stop_reason, .flags = rec->flags,
                                     .sp_word = sp };
        size_t need = sizeof(st) + (size_t)rec->n_frames * sizeof(uint64_t) +
                      sizeof(struct prof_stack_state);
        void *dst = lp_writer_reserve(w, need);
        if (dst)
            lp_writer_commit(w, cmn_record_stack_ctx(dst, need, &st, frames, rec->state, set));
    }
    if (w->batch_len + CMN_RECORD_ENTRY_MAX > LP_WRITER_BATCH_BYTES)
        flush_batch(w);
    if (w->batch_n == 0)
        w->batch_base_ns = w->batch_prev_ns = rec->time_ns;
    /* Samples of several threads need not come in time order: steps are signed. */
    int64_t delta = (int64_t)(rec->time_ns - w->batch_prev_ns);
    w->batch_prev_ns = rec->time_ns;
    w->batch_len += cmn_record_samples_entry(w->batch + w->batch_len, delta, rec->tid, id,
                                            rec->weight);
    w->batch_traces[w->batch_n] = trace;
    w->batch_has_trace |= trace != 0;
    w->batch_n++;
}

int lp_writer_post(struct lp_writer *w, const void *records, size_t len)
{
    int rc = 0;
    pthread_mutex_lock(&w->post_mu);
    /* The queue holds LP_WRITER_POST_MAX bytes at most. */
    if (w->posted_len + len <= LP_WRITER_POST_MAX &&
        CMN_GROW(w->posted, w->posted_cap, w->posted_len + len, 16384)) {
        memcpy(w->posted + w->posted_len, records, len);
        w->posted_len += len;
    } else {
        atomic_fetch_add_explicit(&smp_sampler.counters[PROF_STAT_POSTS_DROPPED], 1,
                                  memory_order_relaxed);
        rc = -ENOSPC;
    }
    pthread_mutex_unlock(&w->post_mu);
    return rc;
}

void lp_writer_put_records(struct lp_writer *w, const unsigned char *records, size_t len)
{
    for (size_t off = 0; off + sizeof(struct prof_rec_hdr) <= len;) {
        struct prof_rec_hdr h;
        memcpy(&h, records + off, sizeof(h));
        if (h.size_bytes < sizeof(h) || h.size_bytes > len - off)
            break; /* our own encoders never make one: stop rather than read past */
        void *dst = lp_writer_reserve(w, h.size_bytes);
        if (dst) {
            memcpy(dst, records + off, h.size_bytes);
            lp_writer_commit(w, h.size_bytes);
        }
        off += h.size_bytes;
    }
}

void lp_writer_take_posts(struct lp_writer *w)
{
    pthread_mutex_lock(&w->post_mu);
    lp_writer_put_records(w, w->posted, w->posted_len);
    w->posted_len = 0;
    pthread_mutex_unlock(&w->post_mu);
}

void lp_writer_put_sample(struct lp_writer *w, const struct prof_rec_sample *rec,
                          const uint64_t *frames)
{
    struct lp_label_ctx ctx;
    lp_labels_ctx_at(rec->tid, rec->time_ns, &ctx);
    put_sample(w, rec, frames, &ctx);
}

void lp_writer_put_sample_ctx(struct lp_writer *w, const struct prof_rec_sample *rec,
                              const uint64_t *frames, const struct lp_label_ctx *ctx)
{
    put_sample(w, rec, frames, ctx);
}

void lp_writer_end_samples(struct lp_writer *w)
{
    flush_batch(w);
}

size_t lp_writer_drain(struct lp_writer *w, struct smp_ring *ring)
{
    size_t moved = 0;
    struct smp_slot *s;
    while ((s = smp_ring_peek(ring)) != NULL) {
        if (s->deferred != 0) {
            if (w->rewalk)
                w->rewalk(&s->rec, s->frames, ring->max_frames, s->deferred);
            smp_defer_release(s->deferred);
        }
        struct lp_label_ctx ctx;
        lp_otel_ctx(&s->ctx, &ctx);
        put_sample(w, &s->rec, s->frames, &ctx);
        smp_ring_release(ring, s);
        moved++;
    }
    flush_batch(w);
    return moved;
}

/* Runs the call another thread asked for, if any (lp_writer_call()); mu held, dropped for
 * the call. 1 when there was one. */
static int serve_call(struct lp_writer *w)
{
    lp_writer_call_fn *fn = w->call_fn;
    if (!fn)
        return 0;
    void *arg = w->call_arg;
    w->call_fn = NULL;
    w->call_busy = 1;
    w->busy = 1;
    pthread_mutex_unlock(&w->mu);
    fn(arg);
    pthread_mutex_lock(&w->mu);
    w->call_busy = 0;
    w->busy = 0;
    w->calls_done++;
    pthread_cond_broadcast(&w->cv);
    return 1;
}

static void *writer_main(void *arg)
{
    struct lp_writer *w = arg;
    if (w->unblock_signo > 0) {
        /* The one signal it takes: requests for a snapshot sent to it by name, so that no
         * application thread is woken by the request (sampler/snapshot.h). */
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, w->unblock_signo);
        lp_sigmask(SIG_UNBLOCK, &one, NULL);
    }
    /* Its own name, by one system call (pthread_setname_np() from another thread goes
     * through /proc). */
    prctl(PR_SET_NAME, "libprof-writer", 0, 0, 0);
    pthread_mutex_lock(&w->mu);
    w->tid = (pid_t)syscall(SYS_gettid);
    pthread_cond_broadcast(&w->cv);
    unsigned long_ms = w->period_ms ? w->period_ms : LP_WRITER_PERIOD_MS;
    unsigned period_ms = long_ms;
    /* The thread sleeps on smp_writer_wake, which handlers can bump (a module's unwind
     * table asked for) as well as the other threads here: a bump after `seen` was read
     * ends the next sleep at once, so a request made during a period's work is served
     * right after it. */
    uint32_t seen = atomic_load(&smp_writer_wake);
    uint64_t period_end = cmn_clock_ns(CLOCK_MONOTONIC) + period_ms * 1000000ull;
    for (;;) {
        int stop = w->stop;
        uint64_t req = w->flush_req;
        uint64_t now = cmn_clock_ns(CLOCK_MONOTONIC);
        if (!stop && req == w->flush_done && !w->call_fn && now < period_end) {
            pthread_mutex_unlock(&w->mu);
            uint64_t left = period_end - now;
            struct timespec rel = {(time_t)(left / 1000000000ull), (long)(left % 1000000000ull)};
            syscall(SYS_futex, &smp_writer_wake, FUTEX_WAIT_PRIVATE, seen, &rel, NULL, 0);
            pthread_mutex_lock(&w->mu);
            stop = w->stop;
            req = w->flush_req;
        }
        if (w->taken)
            break; /* the buffer is another thread's now (lp_writer_take()) */
        int called = serve_call(w);
        seen = atomic_load(&smp_writer_wake);
        /* A call alone (a set*id call's, one per request in a server that switches its
         * user per request) is no reason for the period's chores: back to sleep. */
        if (called && !stop && req == w->flush_done &&
            cmn_clock_ns(CLOCK_MONOTONIC) < period_end)
            continue;
        w->busy = 1;
        pthread_mutex_unlock(&w->mu);
        int chores = w->on_period ? w->on_period() : 0;
        int busy = chores & LP_WRITER_BUSY;
        if (chores & LP_WRITER_FINISH) {
            /* No application thread is left: the profile is finished from here, and this
             * thread, the process's last, ends it as glibc ends a process whose last
             * thread exits (exit(0)). A thread that would take the buffer meanwhile waits
             * (busy stays set): the profile is this thread's to end. */
            w->on_finish();
            return NULL;
        }
        lp_writer_take_posts(w);
        size_t moved = lp_writer_drain(w, w->ring);
        lp_writer_flush(w);
        write_provisional(w);
        /* A ring a quarter full after one period would overflow at a little more: drain
         * more often while the rate is that high. */
        period_ms = busy || moved * 4 > smp_ring_capacity(w->ring) ? LP_WRITER_BUSY_PERIOD_MS
                                                                   : long_ms;
        period_end = cmn_clock_ns(CLOCK_MONOTONIC) + period_ms * 1000000ull;
        pthread_mutex_lock(&w->mu);
        w->busy = 0;
        pthread_cond_broadcast(&w->cv);
        if (req != w->flush_done) {
            w->flush_done = req;
            pthread_cond_broadcast(&w->cv);
        }
        if (stop)
            break;
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int lp_writer_start(struct lp_writer *w, struct smp_ring *ring)
{
    sigset_t all, old;
    sigfillset(&all);
    join_taken();
    w->ring = ring;
    w->stop = 0;
    w->busy = 0;
    w->taken = 0;
    w->tid = 0;
    /* The thread inherits this mask: every signal blocked for its whole life. */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, LP_WRITER_STACK_BYTES);
    lp_sigmask(SIG_SETMASK, &all, &old);
    /* libc's own: our wrapper's trampoline would give the thread a ring and a timer. */
    lp_libc_init();
    int rc = lp_libc.pthread_create(&w->thread, &attr, writer_main, w);
    lp_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0)
        return -rc;
    w->running = 1;
    /* Timers are armed per thread by tid: the writer's must be known so it gets none. */
    pthread_mutex_lock(&w->mu);
    while (w->tid == 0)
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
    return 0;
}

static void deadline_in(struct timespec *ts, unsigned ms, clockid_t clk)
{
    clock_gettime(clk, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

int lp_writer_sync(struct lp_writer *w, unsigned timeout_ms)
{
    if (!w->running)
        return -ESRCH;
    struct timespec until;
    deadline_in(&until, timeout_ms, CLOCK_MONOTONIC);
    int rc = 0;
    pthread_mutex_lock(&w->mu);
    uint64_t ticket = ++w->flush_req;
    pthread_cond_broadcast(&w->cv);
    smp_writer_wake_up();
    while (w->flush_done < ticket && rc == 0)
        rc = pthread_cond_timedwait(&w->cv, &w->mu, &until);
    pthread_mutex_unlock(&w->mu);
    return rc == 0 ? 0 : -rc;
}

int lp_writer_call(struct lp_writer *w, lp_writer_call_fn *fn, void *arg, unsigned timeout_ms)
{
    if (!w->running)
        return -ESRCH;
    struct timespec until;
    deadline_in(&until, timeout_ms, CLOCK_MONOTONIC);
    pthread_mutex_lock(&w->mu);
    if (PROF_NEVER(w->call_fn != NULL || w->call_busy)) {
        pthread_mutex_unlock(&w->mu);
        return -EBUSY;
    }
    uint64_t ticket = w->calls_done + 1;
    w->call_fn = fn;
    w->call_arg = arg;
    pthread_cond_broadcast(&w->cv);
    smp_writer_wake_up();
    int rc = 0;
    while (w->calls_done < ticket && rc == 0)
        rc = pthread_cond_timedwait(&w->cv, &w->mu, &until);
    if (rc != 0 && w->call_fn == fn) {
        w->call_fn = NULL; /* not taken: withdrawn, it never runs */
        pthread_mutex_unlock(&w->mu);
        return -ETIMEDOUT;
    }
    /* Taken: it runs now and is short; its argument must live until it is done. */
    while (w->calls_done < ticket)
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
    return 0;
}

int lp_writer_chown(struct lp_writer *w, uid_t uid, gid_t gid, struct stat *was)
{
    struct stat st;
    int rc = check_fd(w);
    if (rc == 0 && fstat(w->fd, &st) != 0)
        rc = -errno;
    if (rc == 0 && was)
        *was = st;
    if (rc == 0 && fchown(w->fd, uid, gid) != 0)
        rc = -errno;
    return rc;
}

uint64_t lp_writer_unwritten(const struct lp_writer *w, uint64_t taken)
{
    uint64_t written = atomic_load_explicit(&w->n_written, memory_order_relaxed);
    return taken > written ? taken - written : 0;
}

int lp_writer_stop(struct lp_writer *w, unsigned timeout_ms)
{
    if (!w->running)
        return 0;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_broadcast(&w->cv);
    smp_writer_wake_up();
    pthread_mutex_unlock(&w->mu);
    struct timespec until;
    deadline_in(&until, timeout_ms, CLOCK_REALTIME);
    int rc = pthread_timedjoin_np(w->thread, NULL, &until);
    if (rc != 0)
        return -rc;
    w->running = 0;
    return 0;
}

int lp_writer_write_file_sigsafe(const char *path, const void *records, size_t len)
{
    struct stat st;
    int fd = claim_stat(path, 0, &st);
    if (fd < 0)
        return fd;
    int rc = lp_fd_write_all(fd, records, len);
    lp_fd_close(fd);
    return rc;
}

int lp_writer_take(struct lp_writer *w, unsigned timeout_ms)
{
    if (!w->running)
        return 0;
    struct timespec until;
    deadline_in(&until, timeout_ms, CLOCK_MONOTONIC);
    int rc = 0;
    pthread_mutex_lock(&w->mu);
    while (w->busy && rc == 0)
        rc = pthread_cond_timedwait(&w->cv, &w->mu, &until);
    if (!w->busy) {
        w->taken = 1;
        w->stop = 1;
        rc = 0;
    }
    pthread_mutex_unlock(&w->mu);
    if (rc != 0)
        return -rc;
    w->running = 0;
    taken_thread = w->thread;
    is_taken_unjoined = 1;
    return 0;
}

void lp_writer_close(struct lp_writer *w)
{
    if (w->buf)
        lp_writer_flush(w);
    if (w->fd >= 0)
        lp_fd_close(w->fd);
    w->fd = -1;
    free(w->buf);
    w->buf = NULL;
    pthread_mutex_lock(&w->post_mu);
    free(w->posted);
    w->posted = NULL;
    w->posted_len = w->posted_cap = 0;
    pthread_mutex_unlock(&w->post_mu);
    free(w->batch);
    w->batch = NULL;
    free(w->batch_traces);
    w->batch_traces = NULL;
    free(w->sets_defined);
    w->sets_defined = NULL;
    forget_contexts(w);
    cmn_intern_fini(&w->intern);
}

void lp_writer_fork_prepare(struct lp_writer *w)
{
    pthread_mutex_lock(&w->post_mu);
}

void lp_writer_fork_parent(struct lp_writer *w)
{
    pthread_mutex_unlock(&w->post_mu);
}

void lp_writer_fork_child(struct lp_writer *w)
{
    pthread_mutex_unlock(&w->post_mu);
}

void lp_writer_forget(struct lp_writer *w)
{
    /* The buffer, the batch and the stack table belonged to the writer thread, which may
     * have been growing one of them (realloc) at the fork: their pointers may be stale.
     * They are left as they are (copy-on-write pages the child never touches), never
     * freed. The post queue is whole (lp_writer_fork_prepare held its lock). */
    w->buf = NULL;
    w->batch = NULL;
    w->batch_n = 0;
    w->batch_len = 0;
    w->batch_traces = NULL;
    w->sets_defined = NULL;
    w->traces = NULL;
    w->n_traces = w->cap_traces = 0;
    memset(&w->trace_table, 0, sizeof(w->trace_table));
    memset(&w->intern, 0, sizeof(w->intern));
    free(w->posted);
    w->posted = NULL;
    w->posted_len = w->posted_cap = 0;
    /* The child's copy of the descriptor, when the number is still our file. */
    struct stat st;
    if (w->fd >= 0 && fstat(w->fd, &st) == 0 && st.st_dev == w->dev && st.st_ino == w->ino)
        lp_fd_close(w->fd);
    w->fd = -1;
    w->running = 0;
    is_taken_unjoined = 0; /* the parent's thread: the child has none */
    w->tid = 0;
    w->len = 0;
    w->failed = 1;
}
