/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `prof record -p PID` (see record_pid.h). The phases:
 *
 *   attach   Open the counters of one thread (the kernel's permission check), read the
 *            process's mappings, create the output and write its head, then open the
 *            counters of each other thread, rescanning /proc/PID/task until a scan finds no
 *            thread without them. A thread started meanwhile by a thread whose counters were
 *            all open has inherited them, which the kernel says with a PERF_RECORD_FORK: the
 *            rings are drained before each rescan so that such a thread gets no second set.
 *            Last, the mappings are read again for those made while attaching.
 *   sample   Wait (poll) for a sample, at most POLL_MS, then drain every ring: samples
 *            become stacks (interned: a PROF_REC_STACK once, then PROF_REC_SAMPLES
 *            entries) and draw their counter's next interval (attach/jitter.h), MMAP2 and
 *            COMM records become MAP and THREAD records; every POLL_MS the batch, the
 *            notes of modules without an unwind table and the file are written out. A
 *            counter whose poll says HUP has no thread left (its own and every one that
 *            inherited it are gone); when all have, the process has exited, or called
 *            exec (the kernel removes the counters then: remove_on_exec), and sampling
 *            ends.
 *   finish   Drain once more, read the CPU time the counters saw, write STATS and END,
 *            close the counters: the process runs on without them.
 *
 * The counters, one per thread and CPU, and the ring of each CPU are attach/perf_ring.h's.
 * Every record carries the id of the counter that was opened, also a record of a thread
 * that inherited it, so each record says through whose counters it came. A thread can be
 * counted by two sets: its own, opened by a rescan, and inherited ones, when its FORK
 * record was not readable yet at the rescan, or when it started while its creator's
 * counters were being opened and so inherited only some CPUs' (on_task()). So each tid is
 * bound to one set, the one known to cover all CPUs (its own, or the one its creator had
 * complete when it started), else the first to deliver a sample of it, and its records
 * through any other set are dropped: no sample counts twice. A tid is unbound at its EXIT
 * record, since the kernel may give the number to a new thread. Child processes do not
 * inherit the counters (inherit_thread); on kernels before 5.13, which lack it, their
 * samples are dropped by pid.
 *
 * Single-threaded; the session owns all memory and descriptors until session_fini().
 */
#include "attach/record_pid.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "attach/jitter.h"
#include "attach/perf_ring.h"
#include "attach/procmaps.h"
#include "attach/procstat.h"
#include "attach/remote_walk.h"
#include "attach/uwtables.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/grow.h"
#include "common/hash.h"
#include "common/hashtab.h"
#include "common/intern.h"
#include "common/perf_record.h"
#include "common/proc.h"
#include "common/record.h"
#include "include/libprof/prof_format.h"

#define POLL_MS 100u               /* longest wait between drains: what a killed prof loses */
#define BATCH_BYTES (64u * 1024u)  /* entries of one PROF_REC_SAMPLES at most */
#define INTERN_FRAMES (1u << 20)   /* 8 MiB of interned frames, then samples in full */
#define ATTACH_ROUNDS 64u          /* rescans of /proc/PID/task at most */
#define START_CODE_BYTES 512u      /* stack the C library's start code may use above main()
                                    * (frame-pointer walks only) */
#define INHERIT_MARGIN_NS 1000000u /* from copying a creator's counters to its FORK record */
#define EXE_MAX 4096u

/* What prof knows of a thread id; found by tid through a hash table. */
struct tid_info {
    pid_t tid;           /* the thread id */
    pid_t counted_by;    /* whose counters its samples are taken from; 0: not bound yet */
    uint64_t full_since; /* from then on, counted_by's counters cover it on every CPU; 0:
                          * not known to (it needs counters of its own while attaching) */
    bool is_named;       /* its name was looked up (and written when it could be read) */
    bool is_sampled;     /* it had a sample (for the summary) */
};

enum stop_why { STOP_NONE, STOP_DURATION, STOP_SIGNAL, STOP_EXITED, STOP_EXEC };

struct session {
    pid_t pid;                /* the process */
    unsigned hz;              /* samples per CPU-second asked for */
    unsigned max_depth;       /* frames per sample at most */
    bool is_kernel_callchain; /* --unwind kernel */
    enum att_rwalk_mode unwind; /* how prof's walks step frames */
    struct att_uwtables tables; /* the target's unwind tables, built as samples need them */
    FILE *out;                /* the profile; NULL until created */
    struct att_pring perf;    /* the counters and the rings they write into */
    struct att_jitter jitter; /* each counter's next interval, drawn (attach/jitter.h) */

    struct tid_info *tids; /* in order of first sight */
    size_t n_tids, cap_tids, n_sampled;
    struct cmn_hashtab tid_table;      /* tids by tid (common/hashtab.h) */
    struct att_rwalk_code_cache *code; /* code bytes the walks read; emptied when code is
                                        * mapped anew */
    uint64_t n_ignored; /* samples not counted: another process's, through a counter set the
                         * thread is not bound to, or after exec */

    struct att_maps maps;     /* the process's mappings, with those added since */
    struct cmn_intern intern; /* the stacks written so far */
    unsigned char *batch;      /* the PROF_REC_SAMPLES entries being gathered */
    size_t batch_len;
    uint32_t batch_n;
    uint64_t batch_base_ns, batch_prev_ns;

    uint64_t *frames;   /* one sample's frames, max_depth of them */
    unsigned char *rec; /* one encoded record */
    size_t rec_cap;

    uint64_t counters_stat[PROF_STAT_N]; /* the STATS record's */
    uint64_t cpu_ns;                     /* task-clock the counters saw, read at the end */
    uint64_t start_ns, start_real_ns;
    uint64_t start_stack; /* where the main thread's stack starts (stat's startstack), 0 unknown */
    uint64_t exec_ns;     /* when a COMM record said the process called exec; 0: it did not */
    int rc;               /* the first failure while sampling (CMN_E_NOMEM, CMN_E_IO), or CMN_OK */
    int io_errno;         /* with CMN_E_IO */
};

static volatile sig_atomic_t got_signal; /* SIGINT or SIGTERM came; set by on_signal */

static void on_signal(int sig)
{
    got_signal = sig;
}

/* ---- the thread table ---- */

static uint64_t tid_hash(const void *ctx, uint32_t i)
{
    return cmn_hash_word((uint64_t)((const struct session *)ctx)->tids[i].tid);
}

static bool is_tid(const void *ctx, uint32_t i, const void *tid)
{
    return ((const struct session *)ctx)->tids[i].tid == *(const pid_t *)tid;
}

/* The entry of tid, added when missing if add is set; NULL when it is missing (or cannot be
 * added: s->rc is then CMN_E_NOMEM). A pointer returned is dead after the next call that
 * adds. */
static struct tid_info *tid_get(struct session *s, pid_t tid, bool add)
{
    uint64_t hash = cmn_hash_word((uint64_t)tid);
    uint32_t i = cmn_hashtab_find(&s->tid_table, hash, is_tid, s, &tid);
    if (i != CMN_HASHTAB_NONE)
        return &s->tids[i];
    if (!add)
        return NULL;
    if (!CMN_GROW(s->tids, s->cap_tids, s->n_tids + 1, 64) ||
        cmn_hashtab_reserve(&s->tid_table, tid_hash, s) != 0) {
        s->rc = CMN_E_NOMEM;
        return NULL;
    }
    s->tids[s->n_tids] = (struct tid_info){.tid = tid};
    cmn_hashtab_insert(&s->tid_table, hash, (uint32_t)s->n_tids);
    return &s->tids[s->n_tids++];
}

/* ---- writing the profile ---- */

static void put(struct session *s, const void *rec, size_t n)
{
    if (s->rc == CMN_OK && n > 0 && fwrite(rec, 1, n, s->out) != n) {
        s->rc = CMN_E_IO;
        s->io_errno = errno;
    }
}

static void put_map(struct session *s, const struct att_map *m, uint64_t time_ns)
{
    if (s->rc == CMN_OK && m != NULL && att_maps_write_one(m, time_ns, s->out, NULL) != CMN_OK) {
        s->rc = CMN_E_IO;
        s->io_errno = errno;
    }
}

/* Writes a THREAD record with the thread's current name, once per thread (again after a
 * FORK or EXIT record for its tid). A thread already gone stays unnamed. */
static void name_thread(struct session *s, pid_t tid, uint64_t time_ns)
{
    struct tid_info *t = tid_get(s, tid, true);
    if (t == NULL || t->is_named)
        return;
    t->is_named = true;
    char name[PROF_THREAD_NAME_MAX];
    att_proc_task_name(s->pid, tid, name);
    if (name[0] != '\0')
        put(s, s->rec, cmn_record_thread(s->rec, s->rec_cap, time_ns, (uint32_t)tid, name));
}

static void flush_batch(struct session *s)
{
    if (s->batch_n == 0)
        return;
    put(s, s->rec,
        cmn_record_samples(s->rec, s->rec_cap, s->batch_base_ns, s->batch_n, s->batch,
                            s->batch_len));
    s->batch_n = 0;
    s->batch_len = 0;
}

/* One sample of s->frames: counted, its stack interned (a PROF_REC_STACK the first time)
 * and an entry in the batch; written in full when the stack table is full. */
static void put_sample(struct session *s, uint64_t time_ns, uint32_t tid, unsigned n_frames,
                       uint8_t stop_reason, uint8_t flags)
{
    /* Counted as libprof's handler counts them (sampler/handler.c). The word at the stack
     * pointer is never kept: the walk proves the leaf's caller itself (sp_word 0). */
    const uint64_t sp_word = 0;
    uint64_t *c = s->counters_stat;
    c[PROF_STAT_SAMPLES]++;
    c[PROF_STAT_WEIGHT]++;
    if (stop_reason != PROF_STOP_END) {
        flags |= PROF_SAMPLE_TRUNCATED;
        c[PROF_STAT_TRUNCATED]++;
        if (stop_reason >= PROF_STOP_DEPTH && stop_reason < PROF_STOP_N)
            c[PROF_STAT_STOP_OF(stop_reason)]++;
    }
    uint32_t id;
    int is_new;
    if (cmn_intern_stack(&s->intern, s->frames, (uint16_t)n_frames, stop_reason, flags, sp_word,
                          &id, &is_new) != 0) {
        struct prof_rec_sample r = {.time_ns = time_ns,
                                    .tid = tid,
                                    .weight = 1,
                                    .n_frames = (uint16_t)n_frames,
                                    .stop_reason = stop_reason,
                                    .flags = flags,
                                    .sp_word = sp_word};
        put(s, s->rec, cmn_record_sample(s->rec, s->rec_cap, &r, s->frames));
        return;
    }
    if (is_new) {
        struct prof_rec_stack st = {.id = id,
                                    .n_frames = (uint16_t)n_frames,
                                    .stop_reason = stop_reason,
                                    .flags = flags,
                                    .sp_word = sp_word};
        put(s, s->rec, cmn_record_stack(s->rec, s->rec_cap, &st, s->frames));
    }
    if (s->batch_len + CMN_RECORD_ENTRY_MAX > BATCH_BYTES)
        flush_batch(s);
    if (s->batch_n == 0)
        s->batch_base_ns = s->batch_prev_ns = time_ns;
    /* Samples of several rings are not in time order: steps are signed. */
    int64_t step = (int64_t)(time_ns - s->batch_prev_ns);
    s->batch_prev_ns = time_ns;
    s->batch_len += cmn_record_samples_entry(s->batch + s->batch_len, step, tid, id, 1);
    s->batch_n++;
}

/* ---- perf records into profile records ---- */

/*
 * Whether a frame-pointer walk (--unwind fp) of the main thread that ended at return
 * address ret reached its root; the unwind tables need no such guess, since the C
 * library's start code says in its own rows where the stack ends. The C library's start
 * code below main() keeps no frame pointer (glibc's leaves argc where main() saves it),
 * so the chain always breaks there, where libprof's trampoline ends it in-process. Only that code lies between main()'s frame and the stack's start: when ret
 * is stored within START_CODE_BYTES of the start, the walk is complete. A chain broken by
 * a function without a frame pointer is still reported as such unless that function's
 * frame lies there too.
 */
static bool reached_start(const struct session *s, const unsigned char *stack, uint64_t sp,
                          size_t len, uint64_t ret)
{
    if (s->start_stack <= START_CODE_BYTES)
        return false;
    uint64_t lo = s->start_stack - START_CODE_BYTES, hi = s->start_stack;
    lo = lo > sp ? lo : sp;
    hi = hi < sp + len ? hi : sp + len;
    for (uint64_t at = (lo + 7u) & ~(uint64_t)7u; at + sizeof(ret) <= hi; at += sizeof(ret)) {
        uint64_t word;
        memcpy(&word, stack + (at - sp), sizeof(word));
        if (word == ret)
            return true;
    }
    return false;
}

/* The registers and the stack copy of a sample of thread tid, walked with libprof's
 * walk. Returns the number of frames. */
static unsigned walk_copy(struct session *s, pid_t tid, const struct cmn_perf_sample *d,
                          uint8_t *stop_reason, uint8_t *flags)
{
    const unsigned char *stack = d->stack;
    size_t len = d->stack_len;
    struct cmn_fp_regs r = d->regs;
    if (d->regs_abi != PERF_SAMPLE_REGS_ABI_64) {
        /* A 32-bit thread: the walk knows 64-bit frames only. */
        s->frames[0] = r.pc;
        *stop_reason = PROF_STOP_NO_STACK;
        *flags = 0;
        return 1;
    }
    struct att_rwalk w;
    att_rwalk_init(&w, s->pid, &s->maps, stack, r.sp, len);
    att_rwalk_use_cache(&w, s->code);
    att_rwalk_use_tables(&w, &s->tables, s->unwind);
    unsigned n = att_rwalk(&w, &r, s->frames, s->max_depth, stop_reason, flags);
    s->counters_stat[PROF_STAT_FRAMES_TABLE] += w.n_by_table;
    s->counters_stat[PROF_STAT_FRAMES_FP] += w.n_by_fp;
    if (s->unwind == ATT_RWALK_FP && tid == s->pid && n > 1 && *stop_reason != PROF_STOP_END &&
        *stop_reason != PROF_STOP_DEPTH && reached_start(s, stack, r.sp, len, s->frames[n - 1]))
        *stop_reason = PROF_STOP_END;
    return n;
}

/* The kernel's callchain of a sample. It walks the frame pointers without our checks, so
 * its chain is cut, like the stepper's, at the first return address outside code (the walk
 * went through a frame without a frame pointer, or below the root). */
static unsigned kernel_chain(struct session *s, const struct cmn_perf_sample *d,
                             uint8_t *stop_reason)
{
    unsigned n = 0;
    *stop_reason = PROF_STOP_END;
    for (uint64_t i = 0; i < d->n_ips && *stop_reason == PROF_STOP_END; i++) {
        uint64_t ip;
        memcpy(&ip, d->ips + i * sizeof(ip), sizeof(ip));
        if (ip >= (uint64_t)PERF_CONTEXT_MAX)
            continue; /* PERF_CONTEXT_USER and the like: where a part of the chain starts */
        if (n > 0 && ip == 0)
            break;
        if (n > 0 && !att_maps_is_code(&s->maps, ip))
            *stop_reason = PROF_STOP_BOUNDS;
        else if (n == s->max_depth)
            *stop_reason = PROF_STOP_DEPTH;
        else
            s->frames[n++] = ip;
    }
    /* At kernel.perf_event_max_stack frames the kernel stops without saying whether more
     * followed: such a chain counts as cut. */
    if (n == s->perf.max_stack && *stop_reason == PROF_STOP_END)
        *stop_reason = PROF_STOP_DEPTH;
    return n;
}

/* Whether a sample of tid through the counters of thread by may be kept (see the file
 * comment). */
static bool is_counted_by(struct session *s, pid_t tid, pid_t by)
{
    struct tid_info *t = tid_get(s, tid, true);
    if (t == NULL)
        return false;
    if (t->counted_by == 0)
        t->counted_by = by;
    if (!t->is_sampled) {
        t->is_sampled = true;
        s->n_sampled++;
    }
    return t->counted_by == by;
}

static void on_sample(struct session *s, const unsigned char *p, size_t size)
{
    struct cmn_perf_sample d;
    if (!cmn_perf_decode_sample(p + sizeof(struct perf_event_header),
                                size - sizeof(struct perf_event_header), s->perf.attr.sample_type,
                                &d))
        return;
    const struct att_pring_counter *by = att_pring_counter_of(&s->perf, d.id);
    if (d.pid != (uint32_t)s->pid || by == NULL || (s->exec_ns && d.time_ns >= s->exec_ns) ||
        !is_counted_by(s, (pid_t)d.tid, by->tid)) {
        s->n_ignored++; /* said in the summary: a count that explains a thin profile */
        return;
    }
    s->counters_stat[PROF_STAT_SIGNALS]++;
    uint8_t stop_reason = PROF_STOP_END, flags = 0;
    /* A sample cut short, or without user registers, has no frames. */
    unsigned n = 0;
    if (d.is_whole)
        n = s->is_kernel_callchain ? kernel_chain(s, &d, &stop_reason)
                                   : walk_copy(s, (pid_t)d.tid, &d, &stop_reason, &flags);
    if (n == 0) {
        s->counters_stat[PROF_STAT_DROPPED]++;
        return;
    }
    name_thread(s, (pid_t)d.tid, d.time_ns);
    put_sample(s, d.time_ns, d.tid, n, stop_reason, flags);
    if (d.tid == (uint32_t)by->tid && !att_jitter_sampled(&s->jitter, by->fd, by->id, by->tid))
        s->rc = CMN_E_NOMEM;
}

static void on_comm(struct session *s, const unsigned char *p, const struct perf_event_header *h)
{
    struct cmn_perf_comm d;
    if (!cmn_perf_decode_comm(h, p + sizeof(*h), s->perf.attr.sample_type, &d) ||
        d.pid != (uint32_t)s->pid)
        return;
    if (d.is_exec) {
        /* Only kernels without remove_on_exec (before 5.13) get here: the process is
         * another program from now on, whose samples must not be read with these maps. */
        if (s->exec_ns == 0)
            s->exec_ns = d.time_ns;
        return;
    }
    struct tid_info *t = tid_get(s, (pid_t)d.tid, true);
    if (d.comm == NULL || t == NULL)
        return;
    t->is_named = true;
    put(s, s->rec, cmn_record_thread(s->rec, s->rec_cap, d.time_ns, d.tid, d.comm));
}

/*
 * FORK and EXIT: a tid starts or ends. A thread started by one whose counters covered every
 * CPU inherited them all, and counts through the same ones. One started while its
 * creator's counters were still being opened, CPU after CPU, inherited only some: it gets
 * counters of its own at the next rescan, and its records through the others are dropped
 * from then on. The kernel copies the counters some microseconds before it writes the
 * FORK record, hence the margin.
 */
static void on_task(struct session *s, const unsigned char *p, const struct perf_event_header *h)
{
    struct cmn_perf_task body;
    if (!cmn_perf_decode_task(h, p + sizeof(*h), &body))
        return;
    if (body.pid != (uint32_t)s->pid)
        return; /* a child process: not ours to sample */
    const struct tid_info *parent = tid_get(s, (pid_t)body.ptid, false);
    pid_t full_by = parent != NULL && parent->full_since != 0 &&
                            body.time_ns > parent->full_since + INHERIT_MARGIN_NS
                        ? parent->counted_by
                        : 0;
    struct tid_info *t = tid_get(s, (pid_t)body.tid, true);
    if (t == NULL)
        return;
    bool is_fork = h->type == PERF_RECORD_FORK;
    /* A FORK record read only after a rescan gave the thread counters of its own: those
     * stay. Any other record begins or ends a thread. */
    if (t->counted_by != t->tid || body.time_ns >= t->full_since) {
        t->counted_by = is_fork ? full_by : 0;
        t->full_since = is_fork && full_by != 0 ? body.time_ns : 0;
    }
    t->is_named = false;
    if (is_fork) {
        name_thread(s, (pid_t)body.tid, body.time_ns);
        /* Its creator's counters have a copy in it now: their intervals stay fixed. */
        att_jitter_inherited(&s->jitter, (pid_t)body.ptid);
        if (parent != NULL && parent->counted_by != 0)
            att_jitter_inherited(&s->jitter, parent->counted_by);
    }
}

static void on_mmap(struct session *s, const unsigned char *p, const struct perf_event_header *h)
{
    struct cmn_perf_mmap body;
    if (!cmn_perf_decode_mmap(h, p + sizeof(*h), s->perf.attr.sample_type, &body))
        return;
    const char *path = body.path;
    if (body.pid != (uint32_t)s->pid || path == NULL || body.len == 0)
        return;
    struct att_map m = {
        .start = body.addr,
        .end = body.addr + body.len,
        .offset = body.pgoff,
        .dev = body.dev,
        .inode = body.ino,
        .prot = (body.prot & PROT_READ ? PROF_MAP_READ : 0u) |
                (body.prot & PROT_WRITE ? PROF_MAP_WRITE : 0u) |
                (body.prot & PROT_EXEC ? PROF_MAP_EXEC : 0u),
        /* The kernel names anonymous memory "//anon"; /proc/PID/maps leaves it blank. */
        .path = (char *)(strcmp(path, "//anon") == 0 ? "" : path),
    };
    if (s->code != NULL && (m.prot & PROF_MAP_EXEC))
        memset(s->code, 0, sizeof(*s->code)); /* new code where old code may have been */
    if (att_maps_add(&s->maps, s->pid, &m) != CMN_OK) {
        s->rc = CMN_E_NOMEM;
        return;
    }
    put_map(s, att_maps_find(&s->maps, m.start), body.time_ns);
}

static void on_record(struct session *s, const unsigned char *p, const struct perf_event_header *h)
{
    uint64_t n_lost;
    switch (h->type) {
    case PERF_RECORD_SAMPLE:
        on_sample(s, p, h->size);
        break;
    case PERF_RECORD_LOST:
        /* The ring was full: the kernel counts what it could not write (samples, but for
         * the rare side-band record). */
        n_lost = cmn_perf_decode_lost(h, p + sizeof(*h));
        s->counters_stat[PROF_STAT_SIGNALS] += n_lost;
        s->counters_stat[PROF_STAT_DROPPED] += n_lost;
        break;
    case PERF_RECORD_COMM:
        on_comm(s, p, h);
        break;
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT:
        on_task(s, p, h);
        break;
    case PERF_RECORD_MMAP2:
        on_mmap(s, p, h);
        break;
    default:
        break; /* throttling and the like: nothing the profile keeps */
    }
}

/* Consumes every whole record in the ring of CPU k. */
static void drain_ring(struct session *s, size_t k)
{
    struct att_pring_reader rd;
    if (!att_pring_read_begin(&s->perf, k, &rd))
        return;
    const unsigned char *p;
    struct perf_event_header h;
    while (s->rc == CMN_OK && (p = att_pring_read_next(&rd, &h)) != NULL)
        on_record(s, p, &h);
    att_pring_read_end(&rd);
}

static void drain_all(struct session *s)
{
    for (size_t i = 0; i < s->perf.n_cpus; i++)
        drain_ring(s, i);
}

/* ---- attaching ---- */

/* Opens thread tid's counters, one per CPU. CMN_OK; CMN_E_NOTFOUND when the thread is
 * gone; CMN_E_INPUT with the reason; CMN_E_NOMEM. */
static int add_thread(struct session *s, pid_t tid, struct cmn_err *err)
{
    for (size_t k = 0; k < s->perf.n_cpus; k++) {
        int rc = att_pring_open(&s->perf, tid, k, err);
        if (rc == CMN_E_NOTFOUND) /* it ended: the counters opened so far hang up */
            return k == 0 ? CMN_E_NOTFOUND : CMN_OK;
        if (rc != CMN_OK)
            return rc;
    }
    /* Its own counters are complete: it counts through them, and so do the threads it
     * starts from now on. */
    struct tid_info *t = tid_get(s, tid, true);
    if (t == NULL)
        return cmn_err_nomem(err);
    t->counted_by = tid;
    t->full_since = cmn_clock_ns(CLOCK_MONOTONIC);
    return CMN_OK;
}

/* The thread ids in /proc/PID/task. */
static int list_tids(pid_t pid, int **tids, size_t *n)
{
    struct cmn_proc_tasks it;
    size_t cap = 0;
    *tids = NULL;
    *n = 0;
    int rc = cmn_proc_tasks_open(&(struct cmn_proc){.pid = pid}, &it);
    for (pid_t tid; rc == 0 && (tid = cmn_proc_tasks_next(&it)) > 0;)
        rc = att_pring_push_int(tids, n, &cap, (int)tid);
    cmn_proc_tasks_close(&it);
    return rc;
}

/* Where pid's main thread's stack starts: field 28 of /proc/PID/stat; 0 when unknown. */
static uint64_t read_start_stack(pid_t pid)
{
    char buf[CMN_PROC_STAT_BYTES];
    const struct cmn_proc proc = {.pid = pid};
    const char *start = cmn_proc_read_file(&proc, 0, "stat", buf, sizeof(buf)) > 0
                            ? cmn_proc_stat_field(buf, 28)
                            : NULL;
    return start != NULL ? strtoull(start, NULL, 10) : 0;
}

/* That pid names a process prof may try: it exists, it is not a thread of another, and it
 * is not prof. */
static int check_process(pid_t pid, struct cmn_err *err)
{
    char v[64];
    if (pid == getpid())
        return cmn_err_set(err, CMN_E_INPUT, "cannot sample process %d: it is prof itself",
                           (int)pid);
    if (!att_proc_status_field(pid, "Tgid", v, sizeof(v)))
        return cmn_err_set(err, CMN_E_INPUT, "no process %d", (int)pid);
    if (atol(v) != (long)pid)
        return cmn_err_set(err, CMN_E_INPUT, "%d is a thread of process %ld: give -p %ld", (int)pid,
                           atol(v), atol(v));
    char state = att_proc_task_state(pid, pid);
    if (state == 'Z' || state == 'X')
        return cmn_err_set(err, CMN_E_INPUT, "process %d has exited (a zombie)", (int)pid);
    return CMN_OK;
}

/* Opens the counters of the first thread still there: where the kernel says whether prof
 * may sample the process at all. */
static int attach_first(struct session *s, struct cmn_err *err)
{
    int *tids;
    size_t n;
    int e = list_tids(s->pid, &tids, &n);
    if (e == -ENOENT)
        return cmn_err_set(err, CMN_E_INPUT, "no process %d", (int)s->pid);
    if (e == -ENOMEM)
        return cmn_err_nomem(err);
    if (e != 0)
        return cmn_err_set(err, CMN_E_INPUT, "cannot sample process %d: /proc/%d/task: %s",
                           (int)s->pid, (int)s->pid, strerror(-e));
    int rc = CMN_E_NOTFOUND;
    for (size_t i = 0; i < n && rc == CMN_E_NOTFOUND; i++)
        rc = add_thread(s, tids[i], err);
    free(tids);
    if (rc == CMN_E_NOTFOUND)
        return cmn_err_set(err, CMN_E_INPUT, "process %d has exited", (int)s->pid);
    return rc;
}

/* Opens counters on the threads that have none, until a scan finds none such (see the
 * file comment); each gets its THREAD record. */
static int attach_rest(struct session *s, struct cmn_err *err)
{
    for (unsigned round = 0; round < ATTACH_ROUNDS; round++) {
        int *tids;
        size_t n;
        if (list_tids(s->pid, &tids, &n) != 0)
            return CMN_OK; /* gone: the sampling loop sees the counters hang up */
        drain_all(s);
        size_t n_added = 0;
        int rc = s->rc;
        for (size_t i = 0; i < n && rc == CMN_OK; i++) {
            const struct tid_info *t = tid_get(s, tids[i], false);
            if (t != NULL && t->full_since != 0)
                continue;
            rc = add_thread(s, tids[i], err);
            if (rc == CMN_OK) {
                name_thread(s, tids[i], cmn_clock_ns(CLOCK_MONOTONIC));
                n_added++;
            } else if (rc == CMN_E_NOTFOUND) {
                rc = CMN_OK;
            }
        }
        free(tids);
        if (rc != CMN_OK || n_added == 0)
            return rc;
    }
    return CMN_OK;
}

/* Mappings made while prof attached, by threads whose counters were not open yet, have no
 * MMAP2 record: the maps are read again and what is new is added. */
static void refresh_maps(struct session *s)
{
    struct att_maps now;
    if (att_maps_read(s->pid, &now, NULL) != CMN_OK)
        return;
    uint64_t time_ns = cmn_clock_ns(CLOCK_MONOTONIC);
    for (size_t i = 0; i < now.n && s->rc == CMN_OK; i++) {
        const struct att_map *m = &now.v[i];
        const struct att_map *old = att_maps_find(&s->maps, m->start);
        if (!(m->prot & PROF_MAP_EXEC) ||
            (old != NULL && old->start == m->start && old->end == m->end &&
             old->offset == m->offset && old->dev == m->dev && old->inode == m->inode &&
             old->prot == m->prot && strcmp(old->path, m->path) == 0))
            continue;
        if (att_maps_add(&s->maps, s->pid, m) != CMN_OK)
            s->rc = CMN_E_NOMEM;
        else
            put_map(s, att_maps_find(&s->maps, m->start), time_ns);
    }
    att_maps_free(&now);
}

/* The file header, the PROCESS record, the MAP records and the first thread's name. */
static void write_head(struct session *s)
{
    char exe[EXE_MAX];
    att_proc_exe(s->pid, exe, sizeof(exe));
    struct prof_rec_process p = {
        .pid = (uint32_t)s->pid,
        .ppid = (uint32_t)att_proc_ppid(s->pid),
        .start_mono_ns = s->start_ns,
        .start_real_ns = s->start_real_ns,
        .requested_hz = s->hz,
        .effective_hz = s->hz, /* a fixed period of 1/hz: the kernel delivers it exactly */
        .timer_source = PROF_TIMER_PERF,
        .unwinder = s->is_kernel_callchain || s->unwind == ATT_RWALK_FP ? PROF_UNWIND_FP
                    : s->unwind == ATT_RWALK_DWARF                     ? PROF_UNWIND_DWARF
                                                                       : PROF_UNWIND_AUTO,
        .max_depth = (uint16_t)s->max_depth,
    };
    unsigned char buf[sizeof(p) + EXE_MAX + PROF_REC_ALIGN];
    put(s, buf, cmn_record_file_header(buf, sizeof(buf)));
    put(s, buf, cmn_record_process(buf, sizeof(buf), &p, exe));
    if (s->rc == CMN_OK && att_maps_write(&s->maps, s->start_ns, s->out, NULL) != CMN_OK) {
        s->rc = CMN_E_IO;
        s->io_errno = errno;
    }
    name_thread(s, s->perf.counters[0].tid, s->start_ns);
}

/* A NOTE record per module whose unwind table could not be built since the last call. */
static void put_notes(struct session *s)
{
    const struct att_uw_module *mod;
    while (s->rc == CMN_OK && (mod = att_uwtables_failed(&s->tables)) != NULL) {
        char text[496]; /* a NOTE's text at most (docs/FORMAT.md) */
        snprintf(text, sizeof(text), "no unwind table for %s (%s): %s", mod->path, mod->why,
                 s->unwind == ATT_RWALK_DWARF ? "its frames end the walks"
                                              : "its frames are walked by frame pointer");
        put(s, s->rec, cmn_record_note(s->rec, s->rec_cap, cmn_clock_ns(CLOCK_MONOTONIC), text));
    }
}

/* ---- sampling ---- */

/* Whether to stop now, and why. */
static enum stop_why should_stop(const struct session *s, uint64_t deadline)
{
    if (got_signal)
        return STOP_SIGNAL;
    if (s->exec_ns != 0)
        return STOP_EXEC;
    if (s->perf.n_live == 0) {
        /* No thread left to sample: the process exited, or exec removed the counters. An
         * exiting process hangs its counters up before it is a zombie: it gets a moment
         * to become one before a live process is taken to have called exec. */
        for (int tries = 0; tries < 20; tries++) {
            char state = att_proc_task_state(s->pid, s->pid);
            if (state == 0 || state == 'Z' || state == 'X')
                return STOP_EXITED;
            struct timespec pause = {0, 10000000};
            nanosleep(&pause, NULL);
        }
        return STOP_EXEC;
    }
    if (deadline != 0 && cmn_clock_ns(CLOCK_MONOTONIC) >= deadline)
        return STOP_DURATION;
    return STOP_NONE;
}

/* Waits and drains until a reason to stop; returns it. */
static enum stop_why sample(struct session *s, double duration_s, const sigset_t *wait_mask)
{
    uint64_t deadline = duration_s > 0 ? s->start_ns + (uint64_t)(duration_s * 1e9) : 0;
    struct pollfd *fds = malloc((s->perf.n_counters + 1) * sizeof(*fds));
    size_t *which = malloc((s->perf.n_counters + 1) * sizeof(*which));
    enum stop_why why = STOP_NONE;
    if (fds == NULL || which == NULL)
        s->rc = CMN_E_NOMEM;
    uint64_t flush_at = 0;
    while (why == STOP_NONE && s->rc == CMN_OK) {
        uint64_t wait_ns = (uint64_t)POLL_MS * 1000000u, now = cmn_clock_ns(CLOCK_MONOTONIC);
        if (deadline != 0 && deadline - now < wait_ns)
            wait_ns = deadline > now ? deadline - now : 0;
        /* Each sample wakes prof, which draws its counter's next interval at once; the
         * file is written every POLL_MS. */
        att_pring_wait(&s->perf, fds, which, wait_ns, wait_mask);
        drain_all(s);
        now = cmn_clock_ns(CLOCK_MONOTONIC);
        if (now >= flush_at) {
            flush_at = now + (uint64_t)POLL_MS * 1000000u;
            flush_batch(s);
            put_notes(s);
            if (s->rc == CMN_OK && fflush(s->out) != 0) {
                s->rc = CMN_E_IO;
                s->io_errno = errno;
            }
        }
        why = should_stop(s, deadline);
    }
    free(fds);
    free(which);
    return why;
}

/* The last records: what the rings still hold, STATS (with the CPU time the counters
 * saw), END. The counters are closed. */
static void finish(struct session *s)
{
    drain_all(s);
    flush_batch(s);
    put_notes(s);
    s->cpu_ns += att_pring_close(&s->perf);
    uint64_t *c = s->counters_stat;
    c[PROF_STAT_DURATION_NS] = cmn_clock_ns(CLOCK_MONOTONIC) - s->start_ns;
    c[PROF_STAT_CPU_NS] = s->cpu_ns;
    c[PROF_STAT_UNWIND_BYTES] = s->tables.bytes;
    c[PROF_STAT_UNWIND_MODULES] = s->tables.n_tables;
    put(s, s->rec, cmn_record_stats(s->rec, s->rec_cap, c, PROF_STAT_N));
    put(s, s->rec, cmn_record_end(s->rec, s->rec_cap));
}

static const char *why_text(enum stop_why why)
{
    switch (why) {
    case STOP_DURATION:
        return "for the duration asked";
    case STOP_SIGNAL:
        return "until interrupted";
    case STOP_EXITED:
        return "until it exited";
    case STOP_EXEC:
        return "until it called exec (the new program is not sampled)";
    default:
        return "";
    }
}

/* ---- the session ---- */

static int session_init(struct session *s, const struct att_record_pid_opts *o, struct cmn_err *err)
{
    memset(s, 0, sizeof(*s));
    s->pid = o->pid;
    s->hz = o->hz != 0 ? o->hz : ATT_RECORD_PID_HZ;
    s->max_depth = o->max_depth != 0 ? o->max_depth : ATT_RECORD_PID_DEPTH;
    s->is_kernel_callchain = o->is_kernel_callchain;
    s->unwind = o->unwind;
    att_uwtables_init(&s->tables, s->pid);
    cmn_intern_init(&s->intern, INTERN_FRAMES);
    att_jitter_init(&s->jitter, 1000000000ull / s->hz);
    int rc = att_pring_init(&s->perf, s->pid, s->hz, &s->max_depth, s->is_kernel_callchain, err);
    if (rc != CMN_OK)
        return rc;
    s->rec_cap = sizeof(struct prof_rec_samples) + BATCH_BYTES + sizeof(struct prof_rec_sample) +
                 (size_t)s->max_depth * sizeof(uint64_t);
    s->rec = malloc(s->rec_cap);
    s->batch = malloc(BATCH_BYTES);
    s->frames = malloc((size_t)s->max_depth * sizeof(uint64_t));
    s->code = calloc(1, sizeof(*s->code)); /* without it, walks read the target each time */
    if (s->rec == NULL || s->batch == NULL || s->frames == NULL)
        return cmn_err_nomem(err);
    return CMN_OK;
}

static void session_fini(struct session *s)
{
    att_pring_fini(&s->perf);
    att_jitter_fini(&s->jitter);
    free(s->tids);
    cmn_hashtab_fini(&s->tid_table);
    att_maps_free(&s->maps);
    cmn_intern_fini(&s->intern);
    free(s->rec);
    free(s->batch);
    free(s->frames);
    free(s->code);
    att_uwtables_fini(&s->tables);
}

/* The session's failure while sampling as the command's. */
static int sampling_error(const struct session *s, const char *output, struct cmn_err *err)
{
    if (s->rc == CMN_E_IO)
        return cmn_err_set(err, CMN_E_IO, "%s: write error: %s", output, strerror(s->io_errno));
    return cmn_err_nomem(err);
}

/* Attaches and creates the output; the output is removed again when attaching fails. */
static int attach(struct session *s, const char *output, struct cmn_err *err)
{
    s->start_ns = cmn_clock_ns(CLOCK_MONOTONIC);
    s->start_real_ns = cmn_clock_ns(CLOCK_REALTIME);
    int rc = attach_first(s, err);
    if (rc == CMN_OK)
        rc = att_maps_read(s->pid, &s->maps, err);
    if (rc != CMN_OK)
        return rc;
    s->start_stack = read_start_stack(s->pid);
    s->out = fopen(output, "we");
    if (s->out == NULL)
        return cmn_err_set(err, CMN_E_INPUT, "%s: %s", output, strerror(errno));
    write_head(s);
    rc = attach_rest(s, err);
    if (rc == CMN_OK)
        refresh_maps(s);
    if (rc == CMN_OK && s->rc != CMN_OK)
        rc = sampling_error(s, output, err);
    if (rc != CMN_OK) {
        fclose(s->out);
        s->out = NULL;
        unlink(output);
    }
    return rc;
}

/* Attaches, samples and finishes, then says how it went on log. */
static int record(struct session *s, const struct att_record_pid_opts *o, const sigset_t *wait_mask,
                  FILE *log, struct cmn_err *err)
{
    int rc = attach(s, o->output, err);
    if (rc != CMN_OK)
        return rc;
    if (o->duration_s <= 0)
        fprintf(log, "prof: sampling process %d; stop with Ctrl-C\n", (int)s->pid);
    enum stop_why why = sample(s, o->duration_s, wait_mask);
    if (s->rc == CMN_OK)
        finish(s);
    if (fclose(s->out) != 0 && s->rc == CMN_OK) {
        s->rc = CMN_E_IO;
        s->io_errno = errno;
    }
    s->out = NULL;
    if (s->rc != CMN_OK)
        return sampling_error(s, o->output, err);
    const uint64_t *c = s->counters_stat;
    char ignored[96] = "";
    if (s->n_ignored > 0)
        snprintf(ignored, sizeof(ignored), " (%" PRIu64 " more not counted: seen twice, or not "
                 "the process's)", s->n_ignored);
    char tables[128] = "";
    if (s->tables.n_mods > 0)
        snprintf(tables, sizeof(tables), ", unwind tables of %u module%s (%.1f MiB, built in "
                 "%.0f ms)", s->tables.n_tables, s->tables.n_tables == 1 ? "" : "s",
                 (double)s->tables.bytes / (1 << 20), (double)s->tables.build_ns / 1e6);
    fprintf(log,
            "prof: process %d sampled %s: %" PRIu64 " samples of %zu thread%s in %.2f s, %" PRIu64
            " lost%s%s; wrote %s\n",
            (int)s->pid, why_text(why), c[PROF_STAT_SAMPLES], s->n_sampled,
            s->n_sampled == 1 ? "" : "s", (double)c[PROF_STAT_DURATION_NS] / 1e9,
            c[PROF_STAT_DROPPED], ignored, tables, o->output);
    return CMN_OK;
}

int att_record_pid_run(const struct att_record_pid_opts *o, FILE *log, struct cmn_err *err)
{
    struct session s;
    int rc = session_init(&s, o, err);
    if (rc == CMN_OK)
        rc = check_process(o->pid, err);
    if (rc != CMN_OK) {
        session_fini(&s);
        return rc;
    }
    /* SIGINT and SIGTERM end the recording, not prof: they are blocked but while prof
     * waits in ppoll, so that one arriving at any other moment is seen at the next wait. */
    struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
    sigemptyset(&sa.sa_mask);
    sigset_t block, old_mask, wait_mask;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    got_signal = 0;
    sigprocmask(SIG_BLOCK, &block, &old_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    wait_mask = old_mask;
    sigdelset(&wait_mask, SIGINT);
    sigdelset(&wait_mask, SIGTERM);

    rc = record(&s, o, &wait_mask, log, err);

    session_fini(&s);
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return rc;
}
