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
 *   sample   Wait (poll) for at most POLL_MS, then drain every ring: samples become stacks
 *            (interned: a PROF_REC_STACK once, then PROF_REC_SAMPLES entries), MMAP2 and
 *            COMM records become MAP and THREAD records. A counter whose poll says HUP has
 *            no thread left (its own and every one that inherited it are gone); when all
 *            have, the process has exited, or called exec (the kernel removes the counters
 *            then: remove_on_exec), and sampling ends.
 *   finish   Drain once more, read the CPU time the counters saw, write STATS and END,
 *            close the counters: the process runs on without them.
 *
 * The kernel lets inherited counters write into a mapped ring only when they are bound to a
 * CPU, so a thread has one counter per CPU, and each CPU has one ring: the buffer of the
 * first counter opened on it, into which the others on that CPU are redirected
 * (PERF_EVENT_IOC_SET_OUTPUT). A ring is a metadata page, then a power-of-two data area the
 * kernel appends records to (data_head) and prof consumes (data_tail). Records:
 *
 *   sample, default            header | id | pid tid | time | abi regs[N_REGS] | size stack dyn
 *   sample, --callchain kernel header | id | pid tid | time | nr ips[nr]
 *   any other                  header | body | pid tid | time | id         (sample_id_all)
 *
 * The id is the counter's that was opened, also in the records of the threads that
 * inherited it (PERF_SAMPLE_IDENTIFIER), so each record says through whose counters it
 * came. A thread can be counted by two sets: its own, opened by a rescan, and inherited
 * ones, when its FORK record was not readable yet at the rescan, or when it started while
 * its creator's counters were being opened and so inherited only some CPUs' (on_task()).
 * So each tid is bound to one set, the one known to cover all CPUs (its own, or the one
 * its creator had complete when it started), else the first to deliver a sample of it, and
 * its records through any other set are dropped: no sample counts twice. A tid is unbound
 * at its EXIT record, since the kernel may give the number to a new thread. Child
 * processes do not inherit the counters (inherit_thread); on kernels before 5.13, which
 * lack it, their samples are dropped by pid.
 *
 * Single-threaded; the session owns all memory and descriptors until session_fini().
 */
#include "reporter/record_pid.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <asm/perf_regs.h>

#include "include/prof_format.h"
#include "include/prof_intern.h"
#include "include/prof_record.h"
#include "reporter/err.h"
#include "reporter/hash.h"
#include "reporter/procmaps.h"
#include "reporter/procstat.h"
#include "reporter/record_cmd.h"
#include "reporter/remote_walk.h"

/*
 * Bytes of user stack the kernel copies into each sample, from the stack pointer up. The
 * walk reads only this copy (the live stack has moved on by the time prof reads the
 * sample), so it bounds how deep a walk goes: 32 KiB holds the default 256 frames at 128
 * bytes a frame, which covers ordinary C and C++ code, and a walk that needs more ends
 * truncated (PROF_STOP_BOUNDS) rather than guessing. It is also the cost: the kernel copies
 * it in the thread's timer interrupt (a few microseconds at most, and less when the stack
 * mapping ends sooner) and it is most of each record, so it sets how many samples a ring
 * holds; and a record's size is a u16, which caps it below 64 KiB anyway.
 */
#define STACK_COPY_BYTES (32u * 1024u)

#define POLL_MS 100u                  /* longest wait between drains: what a killed prof loses */
#define RING_BUDGET_BYTES (64u << 20) /* all rings together, shared out over the CPUs */
#define RING_MAX_BYTES (2u << 20)     /* one ring at most: about 60 samples with stacks */
#define RING_MIN_BYTES (128u << 10)   /* one ring at least: 3 samples with stacks */
#define KERNEL_RING_DIV 16u /* --callchain kernel: samples of 1 KiB or less, rings 16x smaller */
#define BATCH_BYTES (64u * 1024u)  /* entries of one PROF_REC_SAMPLES at most */
#define INTERN_FRAMES (1u << 20)   /* 8 MiB of interned frames, then samples in full */
#define ATTACH_ROUNDS 64u          /* rescans of /proc/PID/task at most */
#define PERF_RECORD_MAX 65536u     /* a perf record's size is a u16 */
#define SAMPLE_ID_BYTES 24u        /* the trailer of side-band records: pid tid, time, id */
#define START_CODE_BYTES 512u      /* stack the C library's start code may use above main() */
#define INHERIT_MARGIN_NS 1000000u /* from copying a creator's counters to its FORK record */
#define EXE_MAX 4096u

/* The user registers a sample carries, in the kernel's order (ascending register number),
 * and how they become the stepper's. */
#if defined(__x86_64__)
#define REGS_MASK                                                                                  \
    ((1ull << PERF_REG_X86_BP) | (1ull << PERF_REG_X86_SP) | (1ull << PERF_REG_X86_IP))
#define N_REGS 3u
static struct fpstep_regs regs_from(const uint64_t *r)
{
    return (struct fpstep_regs){.fp = r[0], .sp = r[1], .pc = r[2], .lr = 0};
}
#elif defined(__aarch64__)
#define REGS_MASK                                                                                  \
    ((1ull << PERF_REG_ARM64_X29) | (1ull << PERF_REG_ARM64_LR) | (1ull << PERF_REG_ARM64_SP) |    \
     (1ull << PERF_REG_ARM64_PC))
#define N_REGS 4u
static struct fpstep_regs regs_from(const uint64_t *r)
{
    return (struct fpstep_regs){.fp = r[0], .lr = r[1], .sp = r[2], .pc = r[3]};
}
#else
#error "record_pid.c: no perf_event register layout for this architecture"
#endif

/* One counter: a thread on one CPU. */
struct counter {
    int fd;      /* -1 once closed */
    pid_t tid;   /* the thread it was opened on; the threads that inherit it count as its */
    uint64_t id; /* the kernel's id for it, which those threads' records carry too */
    bool is_hup; /* poll said HUP: its thread and all that inherited it are gone */
};

/* The ring of one CPU: the buffer of its first counter, shared by the others on it. */
struct ring {
    int fd;                            /* that counter (closed as a counter); -1: not mapped */
    struct perf_event_mmap_page *meta; /* the mapping: this page, then the data area */
    unsigned char *data;               /* the data area */
    uint64_t data_bytes;               /* its size, a power of two */
    size_t map_bytes;                  /* the whole mapping */
};

/* What prof knows of a thread id; in an open-addressing table keyed by tid. */
struct tid_info {
    pid_t tid;           /* 0: a free slot */
    pid_t counted_by;    /* whose counters its samples are taken from; 0: not bound yet */
    uint64_t full_since; /* from then on, counted_by's counters cover it on every CPU; 0:
                          * not known to (it needs counters of its own while attaching) */
    bool is_named;       /* its name was looked up (and written when it could be read) */
    bool is_sampled;     /* it had a sample (for the summary) */
};

enum stop_why { STOP_NONE, STOP_DURATION, STOP_SIGNAL, STOP_EXITED, STOP_EXEC };

struct session {
    pid_t pid;                   /* the process */
    unsigned hz;                 /* samples per CPU-second asked for */
    unsigned max_depth;          /* frames per sample at most */
    unsigned max_stack;          /* --callchain kernel: kernel.perf_event_max_stack */
    bool is_kernel_callchain;    /* --callchain kernel */
    FILE *out;                   /* the profile; NULL until created */
    struct perf_event_attr attr; /* of every counter */
    size_t page_bytes;
    size_t ring_bytes; /* the data area of the next ring; halved under the locked-memory cap */

    int *cpus;          /* the online CPUs' numbers */
    struct ring *rings; /* one per entry of cpus */
    size_t n_cpus;

    struct counter *counters; /* sorted by id (the kernel hands ids out in increasing order) */
    size_t n_counters, cap_counters, n_live; /* n_live: not HUP */

    struct tid_info *tids; /* a power of two of slots, at most half full */
    size_t n_tids, cap_tids, n_sampled;

    struct rep_pmaps maps;     /* the process's mappings, with those added since */
    struct prof_intern intern; /* the stacks written so far */
    unsigned char *batch;      /* the PROF_REC_SAMPLES entries being gathered */
    size_t batch_len;
    uint32_t batch_n;
    uint64_t batch_base_ns, batch_prev_ns;

    uint64_t *frames;   /* one sample's frames, max_depth of them */
    unsigned char *rec; /* one encoded record */
    size_t rec_cap;
    unsigned char *wrap; /* a perf record that wraps around the ring's end, made whole */

    uint64_t counters_stat[PROF_STAT_N]; /* the STATS record's */
    uint64_t cpu_ns;                     /* task-clock the counters saw, read at the end */
    uint64_t start_ns, start_real_ns;
    uint64_t start_stack; /* where the main thread's stack starts (stat's startstack), 0 unknown */
    uint64_t exec_ns;     /* when a COMM record said the process called exec; 0: it did not */
    int rc;               /* the first failure while sampling (REP_E_NOMEM, REP_E_IO), or REP_OK */
    int io_errno;         /* with REP_E_IO */
};

static volatile sig_atomic_t got_signal; /* SIGINT or SIGTERM came; set by on_signal */

static void on_signal(int sig)
{
    got_signal = sig;
}

static uint64_t clock_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* An integer from a one-line /proc file (a sysctl), or fallback. */
static long read_proc_long(const char *path, long fallback)
{
    char v[64];
    return rep_proc_read(path, v, sizeof(v)) > 0 ? strtol(v, NULL, 10) : fallback;
}

/* ---- the thread table ---- */

static bool grow_tids(struct session *s)
{
    size_t cap = s->cap_tids ? 2 * s->cap_tids : 64;
    struct tid_info *t = calloc(cap, sizeof(*t));
    if (t == NULL)
        return false;
    for (size_t i = 0; i < s->cap_tids; i++) {
        if (s->tids[i].tid == 0)
            continue;
        size_t at = rep_hash_word((uint64_t)s->tids[i].tid) & (cap - 1);
        while (t[at].tid != 0)
            at = (at + 1) & (cap - 1);
        t[at] = s->tids[i];
    }
    free(s->tids);
    s->tids = t;
    s->cap_tids = cap;
    return true;
}

/* The entry of tid, added when missing if add is set; NULL when it is missing (or cannot be
 * added: s->rc is then REP_E_NOMEM). */
static struct tid_info *tid_get(struct session *s, pid_t tid, bool add)
{
    if (add && (s->n_tids + 1) * 2 > s->cap_tids && !grow_tids(s)) {
        s->rc = REP_E_NOMEM;
        return NULL;
    }
    if (s->cap_tids == 0)
        return NULL;
    size_t mask = s->cap_tids - 1;
    for (size_t at = rep_hash_word((uint64_t)tid) & mask;; at = (at + 1) & mask) {
        if (s->tids[at].tid == tid)
            return &s->tids[at];
        if (s->tids[at].tid == 0) {
            if (!add)
                return NULL;
            s->tids[at] = (struct tid_info){.tid = tid};
            s->n_tids++;
            return &s->tids[at];
        }
    }
}

/* The counter with this id, or NULL. */
static const struct counter *counter_of(const struct session *s, uint64_t id)
{
    size_t lo = 0, hi = s->n_counters;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->counters[mid].id < id)
            lo = mid + 1;
        else if (s->counters[mid].id > id)
            hi = mid;
        else
            return &s->counters[mid];
    }
    return NULL;
}

/* ---- writing the profile ---- */

static void put(struct session *s, const void *rec, size_t n)
{
    if (s->rc == REP_OK && n > 0 && fwrite(rec, 1, n, s->out) != n) {
        s->rc = REP_E_IO;
        s->io_errno = errno;
    }
}

static void put_map(struct session *s, const struct rep_pmap *m, uint64_t time_ns)
{
    if (s->rc == REP_OK && m != NULL && rep_pmaps_write_one(m, time_ns, s->out, NULL) != REP_OK) {
        s->rc = REP_E_IO;
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
    rep_proc_task_name(s->pid, tid, name);
    if (name[0] != '\0')
        put(s, s->rec, prof_record_thread(s->rec, s->rec_cap, time_ns, (uint32_t)tid, name));
}

static void flush_batch(struct session *s)
{
    if (s->batch_n == 0)
        return;
    put(s, s->rec,
        prof_record_samples(s->rec, s->rec_cap, s->batch_base_ns, s->batch_n, s->batch,
                            s->batch_len));
    s->batch_n = 0;
    s->batch_len = 0;
}

/* One sample of s->frames: counted, its stack interned (a PROF_REC_STACK the first time)
 * and an entry in the batch; written in full when the stack table is full. */
static void put_sample(struct session *s, uint64_t time_ns, uint32_t tid, unsigned n_frames,
                       uint8_t stop_reason, uint8_t flags, uint64_t sp_word)
{
    /* Counted as libprof's handler counts them (sampler/handler.c). */
    uint64_t *c = s->counters_stat;
    c[PROF_STAT_SAMPLES]++;
    c[PROF_STAT_WEIGHT]++;
    if (stop_reason != PROF_STOP_END) {
        flags |= PROF_SAMPLE_TRUNCATED;
        c[PROF_STAT_TRUNCATED]++;
        c[PROF_STAT_STOP_DEPTH + stop_reason - PROF_STOP_DEPTH]++;
    }
    uint32_t id;
    int is_new;
    if (prof_intern_stack(&s->intern, s->frames, (uint16_t)n_frames, stop_reason, flags, sp_word,
                          &id, &is_new) != 0) {
        struct prof_rec_sample r = {.time_ns = time_ns,
                                    .tid = tid,
                                    .weight = 1,
                                    .n_frames = (uint16_t)n_frames,
                                    .stop_reason = stop_reason,
                                    .flags = flags,
                                    .sp_word = sp_word};
        put(s, s->rec, prof_record_sample(s->rec, s->rec_cap, &r, s->frames));
        return;
    }
    if (is_new) {
        struct prof_rec_stack st = {.id = id,
                                    .n_frames = (uint16_t)n_frames,
                                    .stop_reason = stop_reason,
                                    .flags = flags,
                                    .sp_word = sp_word};
        put(s, s->rec, prof_record_stack(s->rec, s->rec_cap, &st, s->frames));
    }
    if (s->batch_len + PROF_RECORD_ENTRY_MAX > BATCH_BYTES)
        flush_batch(s);
    if (s->batch_n == 0)
        s->batch_base_ns = s->batch_prev_ns = time_ns;
    /* Samples of several rings are not in time order: steps are signed. */
    int64_t step = (int64_t)(time_ns - s->batch_prev_ns);
    s->batch_prev_ns = time_ns;
    s->batch_len += prof_record_samples_entry(s->batch + s->batch_len, step, tid, id, 1);
    s->batch_n++;
}

/* ---- perf records ---- */

struct cursor {
    const unsigned char *at, *end;
};

static bool take(struct cursor *c, void *out, size_t n)
{
    if ((size_t)(c->end - c->at) < n)
        return false;
    memcpy(out, c->at, n);
    c->at += n;
    return true;
}

/*
 * Whether a walk of the main thread that ended at return address ret reached its root. The
 * C library's start code below main() keeps no frame pointer (glibc's leaves argc where
 * main() saves it), so the chain always breaks there, where libprof's trampoline ends it
 * in-process. Only that code lies between main()'s frame and the stack's start: when ret
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
 * stepper. Returns the number of frames, 0 when the sample has none (no user registers). */
static unsigned walk_copy(struct session *s, pid_t tid, struct cursor *c, uint8_t *stop_reason,
                          uint8_t *flags, uint64_t *sp_word)
{
    uint64_t abi, regs[N_REGS], size, dyn_size = 0;
    if (!take(c, &abi, sizeof(abi)) || abi == PERF_SAMPLE_REGS_ABI_NONE ||
        !take(c, regs, sizeof(regs)) || !take(c, &size, sizeof(size)))
        return 0;
    const unsigned char *stack = c->at;
    if (size > 0) {
        if ((size_t)(c->end - c->at) < size + sizeof(dyn_size))
            return 0;
        c->at += size;
        take(c, &dyn_size, sizeof(dyn_size));
        if (dyn_size > size)
            dyn_size = size;
    }
    struct fpstep_regs r = regs_from(regs);
    if (abi != PERF_SAMPLE_REGS_ABI_64) {
        /* A 32-bit thread: the stepper knows 64-bit frames only. */
        s->frames[0] = r.pc;
        *stop_reason = PROF_STOP_NO_STACK;
        return 1;
    }
    struct rep_rwalk w;
    rep_rwalk_init(&w, s->pid, &s->maps, stack, r.sp, (size_t)dyn_size);
    unsigned n = rep_rwalk(&w, &r, s->frames, s->max_depth, stop_reason, flags);
    if (tid == s->pid && n > 1 && *stop_reason != PROF_STOP_END &&
        *stop_reason != PROF_STOP_DEPTH &&
        reached_start(s, stack, r.sp, (size_t)dyn_size, s->frames[n - 1]))
        *stop_reason = PROF_STOP_END;
    /* The word at sp, as libprof keeps it: only when the stepper did not already recover
     * the leaf's caller, and only when it points into code (docs/FORMAT.md). */
    *sp_word = 0;
    if (!(*flags & PROF_SAMPLE_LEAF_CALLER) && dyn_size >= sizeof(uint64_t) && !(r.sp & 7u)) {
        memcpy(sp_word, stack, sizeof(*sp_word));
        if (!rep_pmaps_is_code(&s->maps, *sp_word))
            *sp_word = 0;
    }
    return n;
}

/* The kernel's callchain of a sample. It walks the frame pointers without our checks, so
 * its chain is cut, like the stepper's, at the first return address outside code (the walk
 * went through a frame without a frame pointer, or below the root). */
static unsigned kernel_chain(struct session *s, struct cursor *c, uint8_t *stop_reason)
{
    uint64_t nr;
    if (!take(c, &nr, sizeof(nr)) || nr > (size_t)(c->end - c->at) / sizeof(uint64_t))
        return 0;
    unsigned n = 0;
    *stop_reason = PROF_STOP_END;
    for (uint64_t i = 0; i < nr && *stop_reason == PROF_STOP_END; i++) {
        uint64_t ip;
        memcpy(&ip, c->at + i * sizeof(ip), sizeof(ip));
        if (ip >= (uint64_t)PERF_CONTEXT_MAX)
            continue; /* PERF_CONTEXT_USER and the like: where a part of the chain starts */
        if (n > 0 && ip == 0)
            break;
        if (n > 0 && !rep_pmaps_is_code(&s->maps, ip))
            *stop_reason = PROF_STOP_BOUNDS;
        else if (n == s->max_depth)
            *stop_reason = PROF_STOP_DEPTH;
        else
            s->frames[n++] = ip;
    }
    /* At kernel.perf_event_max_stack frames the kernel stops without saying whether more
     * followed: such a chain counts as cut. */
    if (n == s->max_stack && *stop_reason == PROF_STOP_END)
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
    struct cursor c = {p + sizeof(struct perf_event_header), p + size};
    uint64_t id, time_ns;
    uint32_t ids[2]; /* pid, tid */
    if (!take(&c, &id, sizeof(id)) || !take(&c, ids, sizeof(ids)) ||
        !take(&c, &time_ns, sizeof(time_ns)))
        return;
    const struct counter *by = counter_of(s, id);
    if (ids[0] != (uint32_t)s->pid || by == NULL || (s->exec_ns && time_ns >= s->exec_ns) ||
        !is_counted_by(s, (pid_t)ids[1], by->tid))
        return;
    s->counters_stat[PROF_STAT_SIGNALS]++;
    uint8_t stop_reason = PROF_STOP_END, flags = 0;
    uint64_t sp_word = 0;
    unsigned n = s->is_kernel_callchain
                     ? kernel_chain(s, &c, &stop_reason)
                     : walk_copy(s, (pid_t)ids[1], &c, &stop_reason, &flags, &sp_word);
    if (n == 0) {
        s->counters_stat[PROF_STAT_DROPPED]++;
        return;
    }
    name_thread(s, (pid_t)ids[1], time_ns);
    put_sample(s, time_ns, ids[1], n, stop_reason, flags, sp_word);
}

/* The time of a side-band record, from its sample_id trailer. */
static uint64_t trailer_time(const unsigned char *p, size_t size)
{
    uint64_t t = 0;
    if (size >= sizeof(struct perf_event_header) + SAMPLE_ID_BYTES)
        memcpy(&t, p + size - 2 * sizeof(t), sizeof(t));
    return t;
}

/* The NUL-terminated string at offset at of a side-band record, or NULL when it does not
 * end before the trailer. */
static const char *record_string(const unsigned char *p, size_t size, size_t at)
{
    if (size < at + SAMPLE_ID_BYTES || memchr(p + at, '\0', size - at - SAMPLE_ID_BYTES) == NULL)
        return NULL;
    return (const char *)(p + at);
}

static void on_comm(struct session *s, const unsigned char *p, const struct perf_event_header *h)
{
    uint32_t ids[2]; /* pid, tid */
    if (h->size < sizeof(*h) + sizeof(ids))
        return;
    memcpy(ids, p + sizeof(*h), sizeof(ids));
    if (ids[0] != (uint32_t)s->pid)
        return;
    if (h->misc & PERF_RECORD_MISC_COMM_EXEC) {
        /* Only kernels without remove_on_exec (before 5.13) get here: the process is
         * another program from now on, whose samples must not be read with these maps. */
        if (s->exec_ns == 0)
            s->exec_ns = trailer_time(p, h->size);
        return;
    }
    const char *comm = record_string(p, h->size, sizeof(*h) + sizeof(ids));
    struct tid_info *t = tid_get(s, (pid_t)ids[1], true);
    if (comm == NULL || t == NULL)
        return;
    t->is_named = true;
    put(s, s->rec, prof_record_thread(s->rec, s->rec_cap, trailer_time(p, h->size), ids[1], comm));
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
    struct {
        uint32_t pid, ppid, tid, ptid;
        uint64_t time_ns;
    } body;
    if (h->size < sizeof(*h) + sizeof(body))
        return;
    memcpy(&body, p + sizeof(*h), sizeof(body));
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
    if (is_fork)
        name_thread(s, (pid_t)body.tid, body.time_ns);
}

static void on_mmap(struct session *s, const unsigned char *p, const struct perf_event_header *h)
{
    struct {
        uint32_t pid, tid;
        uint64_t addr, len, pgoff;
        uint32_t maj, min; /* or the build-id's size and bytes with MISC_MMAP_BUILD_ID */
        uint64_t ino, ino_generation;
        uint32_t prot, flags;
    } body;
    if (h->size < sizeof(*h) + sizeof(body))
        return;
    memcpy(&body, p + sizeof(*h), sizeof(body));
    const char *path = record_string(p, h->size, sizeof(*h) + sizeof(body));
    if (body.pid != (uint32_t)s->pid || path == NULL || body.len == 0)
        return;
    struct rep_pmap m = {
        .start = body.addr,
        .end = body.addr + body.len,
        .offset = body.pgoff,
        .prot = (body.prot & PROT_READ ? PROF_MAP_READ : 0u) |
                (body.prot & PROT_WRITE ? PROF_MAP_WRITE : 0u) |
                (body.prot & PROT_EXEC ? PROF_MAP_EXEC : 0u),
        /* The kernel names anonymous memory "//anon"; /proc/PID/maps leaves it blank. */
        .path = (char *)(strcmp(path, "//anon") == 0 ? "" : path),
    };
    if (rep_pmaps_add(&s->maps, s->pid, &m) != REP_OK) {
        s->rc = REP_E_NOMEM;
        return;
    }
    put_map(s, rep_pmaps_find(&s->maps, m.start), trailer_time(p, h->size));
}

static void on_record(struct session *s, const unsigned char *p, const struct perf_event_header *h)
{
    uint64_t lost[2]; /* id, count */
    switch (h->type) {
    case PERF_RECORD_SAMPLE:
        on_sample(s, p, h->size);
        break;
    case PERF_RECORD_LOST:
        /* The ring was full: the kernel counts what it could not write (samples, but for
         * the rare side-band record). */
        if (h->size >= sizeof(*h) + sizeof(lost)) {
            memcpy(lost, p + sizeof(*h), sizeof(lost));
            s->counters_stat[PROF_STAT_SIGNALS] += lost[1];
            s->counters_stat[PROF_STAT_DROPPED] += lost[1];
        }
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

/* Consumes every whole record in ring r. */
static void drain_ring(struct session *s, struct ring *r)
{
    if (r->fd < 0)
        return;
    uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = r->meta->data_tail;
    while (tail < head && s->rc == REP_OK) {
        /* Records are 8-aligned and the area is a power of two: a header never wraps. */
        size_t at = (size_t)(tail & (r->data_bytes - 1));
        struct perf_event_header h;
        memcpy(&h, r->data + at, sizeof(h));
        if (h.size < sizeof(h) || h.size > head - tail) {
            tail = head; /* not a record the kernel writes: skip what is there */
            break;
        }
        const unsigned char *p = r->data + at;
        if (at + h.size > r->data_bytes) {
            size_t first = (size_t)(r->data_bytes - at);
            memcpy(s->wrap, r->data + at, first);
            memcpy(s->wrap + first, r->data, h.size - first);
            p = s->wrap;
        }
        on_record(s, p, &h);
        tail += h.size;
    }
    __atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

static void drain_all(struct session *s)
{
    for (size_t i = 0; i < s->n_cpus; i++)
        drain_ring(s, &s->rings[i]);
}

/* ---- counters and rings ---- */

static bool has_cap(int cap)
{
    char v[32];
    return rep_proc_status_field(getpid(), "CapEff", v, sizeof(v)) &&
           (strtoull(v, NULL, 16) >> cap & 1) != 0;
}

/* The one line that says why the kernel refused to sample the process. */
static int permission_error(pid_t pid, struct rep_err *err)
{
    long paranoid = read_proc_long("/proc/sys/kernel/perf_event_paranoid", 2);
    if (paranoid >= 3 && !has_cap(CAP_PERFMON) && !has_cap(CAP_SYS_ADMIN))
        return rep_err_set(err, REP_E_INPUT,
                           "cannot sample process %d: perf_event_paranoid is %ld (unprivileged "
                           "perf_event_open disabled); run as root or set "
                           "kernel.perf_event_paranoid to 2 or lower",
                           (int)pid, paranoid);
    char v[128];
    unsigned ruid, euid, suid;
    if (!has_cap(CAP_SYS_PTRACE) && rep_proc_status_field(pid, "Uid", v, sizeof(v)) &&
        sscanf(v, "%u %u %u", &ruid, &euid, &suid) == 3 &&
        (ruid != geteuid() || euid != geteuid() || suid != geteuid()))
        return rep_err_set(err, REP_E_INPUT,
                           "cannot sample process %d: it belongs to another user (uid %u) and "
                           "prof runs as uid %u; run prof as that user or as root",
                           (int)pid, euid, (unsigned)geteuid());
    return rep_err_set(err, REP_E_INPUT,
                       "cannot sample process %d: permission denied (a set-uid, set-capability "
                       "or non-dumpable process?); run prof as root",
                       (int)pid);
}

static int open_error(const struct session *s, int e, struct rep_err *err)
{
    if (e == EACCES || e == EPERM)
        return permission_error(s->pid, err);
    if (e == EMFILE || e == ENFILE)
        return rep_err_set(err, REP_E_INPUT,
                           "cannot sample process %d: it needs a descriptor per thread and CPU, "
                           "and prof's open-file limit is reached (ulimit -n)",
                           (int)s->pid);
    if (e == ENOENT || e == ENODEV || e == EOPNOTSUPP)
        return rep_err_set(err, REP_E_INPUT,
                           "cannot sample process %d: this kernel has no task-clock perf_event "
                           "(%s)",
                           (int)s->pid, strerror(e));
    return rep_err_set(err, REP_E_INPUT, "cannot sample process %d: perf_event_open: %s",
                       (int)s->pid, strerror(e));
}

/* Raises prof's soft open-file limit to the hard one; false when it cannot grow. */
static bool raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max)
        return false;
    rl.rlim_cur = rl.rlim_max;
    return setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

static void fill_attr(struct session *s)
{
    struct perf_event_attr *a = &s->attr;
    memset(a, 0, sizeof(*a));
    a->size = sizeof(*a);
    a->type = PERF_TYPE_SOFTWARE;
    a->config = PERF_COUNT_SW_TASK_CLOCK; /* the thread's CPU time, like libprof's timers */
    /* A clock event turns the frequency into a fixed period of 1/hz of CPU time. */
    a->freq = 1;
    a->sample_freq = s->hz;
    a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    if (s->is_kernel_callchain) {
        a->sample_type |= PERF_SAMPLE_CALLCHAIN;
        a->exclude_callchain_kernel = 1;
        /* One frame more than kept: a chain that has it was cut by the depth limit. */
        a->sample_max_stack = (uint16_t)(s->max_depth + (s->max_depth < s->max_stack));
    } else {
        a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
        a->sample_regs_user = REGS_MASK;
        a->sample_stack_user = STACK_COPY_BYTES;
    }
    a->exclude_kernel = 1; /* user-space samples only, as perf_event_paranoid 2 allows */
    a->exclude_hv = 1;
    a->inherit = 1;        /* threads started later are sampled from their first tick ... */
    a->inherit_thread = 1; /* ... but child processes are not (Linux 5.13) */
    a->remove_on_exec = 1; /* the program exec replaces it with is not sampled (5.13) */
    a->mmap = 1;           /* MMAP2 records: mappings made later (dlopen) */
    a->mmap2 = 1;
    a->comm = 1; /* COMM records: thread names set later */
    a->comm_exec = 1;
    a->task = 1;          /* FORK and EXIT records: which threads inherited, which ended */
    a->sample_id_all = 1; /* side-band records carry pid, tid, time and id too */
    a->use_clockid = 1;   /* sample times on libprof's clock */
    a->clockid = CLOCK_MONOTONIC;
    a->watermark = 1;
}

/* A counter on thread tid and CPU cpu; its descriptor, or -errno. */
static int open_counter(struct session *s, pid_t tid, int cpu)
{
    /* Wake prof when a ring is a quarter full: the rest is headroom for its latency. */
    s->attr.wakeup_watermark = (uint32_t)(s->ring_bytes / 4);
    for (;;) {
        long fd = syscall(SYS_perf_event_open, &s->attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd >= 0)
            return (int)fd;
        int e = errno;
        if (e == EINVAL && (s->attr.inherit_thread || s->attr.remove_on_exec)) {
            /* A kernel before 5.13: child processes' samples are dropped by pid, and exec
             * is seen from its COMM record. */
            s->attr.inherit_thread = 0;
            s->attr.remove_on_exec = 0;
            continue;
        }
        if (e == EMFILE && raise_fd_limit())
            continue;
        return -e;
    }
}

static size_t ring_min_bytes(const struct session *s)
{
    size_t min = s->is_kernel_callchain ? RING_MIN_BYTES / KERNEL_RING_DIV : RING_MIN_BYTES;
    return min > s->page_bytes ? min : s->page_bytes;
}

/* Maps the ring of counter fd. An unprivileged user may lock perf_event_mlock_kb per CPU,
 * then up to RLIMIT_MEMLOCK: past that the mapping fails with EPERM, and smaller rings
 * (which lose samples sooner in a burst) are tried down to the minimum. 0 or -errno. */
static int map_ring(struct session *s, struct ring *r, int fd)
{
    for (;;) {
        size_t bytes = s->page_bytes + s->ring_bytes;
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED) {
            *r = (struct ring){.fd = fd,
                               .meta = p,
                               .data = (unsigned char *)p + s->page_bytes,
                               .data_bytes = s->ring_bytes,
                               .map_bytes = bytes};
            return 0;
        }
        int e = errno;
        if ((e != EPERM && e != ENOMEM) || s->ring_bytes / 2 < ring_min_bytes(s))
            return -e;
        s->ring_bytes /= 2;
    }
}

/* Makes counter fd write into the ring of CPU k, mapping it if it is the first. 0 or an
 * REP_E_* with the message. */
static int join_ring(struct session *s, size_t k, int fd, pid_t tid, struct rep_err *err)
{
    struct ring *r = &s->rings[k];
    if (r->fd >= 0) {
        if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) == 0)
            return REP_OK;
        return rep_err_set(err, REP_E_INPUT,
                           "cannot sample process %d: PERF_EVENT_IOC_SET_OUTPUT: %s", (int)s->pid,
                           strerror(errno));
    }
    int e = map_ring(s, r, fd);
    if (e == -EPERM || e == -ENOMEM)
        return rep_err_set(err, REP_E_INPUT,
                           "cannot sample process %d: no locked memory left for the sample "
                           "buffer of CPU %d (thread %d; see kernel.perf_event_mlock_kb and "
                           "ulimit -l); run as root, or try --callchain kernel, whose buffers "
                           "are smaller",
                           (int)s->pid, s->cpus[k], (int)tid);
    if (e != 0)
        return rep_err_set(err, REP_E_INPUT, "cannot sample process %d: mmap: %s", (int)s->pid,
                           strerror(-e));
    return REP_OK;
}

/* Keeps a new counter, in id order. */
static int keep_counter(struct session *s, int fd, pid_t tid, struct rep_err *err)
{
    uint64_t id;
    if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0)
        return rep_err_set(err, REP_E_INPUT, "cannot sample process %d: PERF_EVENT_IOC_ID: %s",
                           (int)s->pid, strerror(errno));
    if (s->n_counters == s->cap_counters) {
        size_t cap = s->cap_counters ? 2 * s->cap_counters : 64;
        struct counter *v = realloc(s->counters, cap * sizeof(*v));
        if (v == NULL)
            return rep_err_nomem(err);
        s->counters = v;
        s->cap_counters = cap;
    }
    size_t at = s->n_counters;
    while (at > 0 && s->counters[at - 1].id > id)
        at--;
    memmove(&s->counters[at + 1], &s->counters[at], (s->n_counters - at) * sizeof(*s->counters));
    s->counters[at] = (struct counter){.fd = fd, .tid = tid, .id = id};
    s->n_counters++;
    s->n_live++;
    return REP_OK;
}

/* Opens thread tid's counters, one per CPU. REP_OK; REP_E_NOTFOUND when the thread is
 * gone; REP_E_INPUT with the reason; REP_E_NOMEM. */
static int add_thread(struct session *s, pid_t tid, struct rep_err *err)
{
    for (size_t k = 0; k < s->n_cpus; k++) {
        int fd = open_counter(s, tid, s->cpus[k]);
        if (fd == -ESRCH) /* it ended: the counters opened so far hang up */
            return k == 0 ? REP_E_NOTFOUND : REP_OK;
        if (fd < 0)
            return open_error(s, -fd, err);
        int rc = keep_counter(s, fd, tid, err);
        if (rc != REP_OK) {
            close(fd);
            return rc;
        }
        rc = join_ring(s, k, fd, tid, err);
        if (rc != REP_OK)
            return rc;
    }
    /* Its own counters are complete: it counts through them, and so do the threads it
     * starts from now on. */
    struct tid_info *t = tid_get(s, tid, true);
    if (t == NULL)
        return rep_err_nomem(err);
    t->counted_by = tid;
    t->full_since = clock_ns(CLOCK_MONOTONIC);
    return REP_OK;
}

/* ---- attaching ---- */

/* The numbers in a /proc or /sys directory listing (tids) or list ("0-3,8") into *out
 * (malloc'd), *n of them. 0 or -errno. */
static int push_number(int **out, size_t *n, size_t *cap, int v)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        int *bigger = realloc(*out, *cap * sizeof(**out));
        if (bigger == NULL)
            return -ENOMEM;
        *out = bigger;
    }
    (*out)[(*n)++] = v;
    return 0;
}

/* The thread ids in /proc/PID/task. */
static int list_tids(pid_t pid, int **tids, size_t *n)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    *tids = NULL;
    *n = 0;
    DIR *d = opendir(path);
    if (d == NULL)
        return -errno;
    size_t cap = 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        long tid = strtol(e->d_name, NULL, 10);
        if (tid > 0)
            rc = push_number(tids, n, &cap, (int)tid);
    }
    closedir(d);
    return rc;
}

/* The online CPUs, from /sys/devices/system/cpu/online ("0-3,8"), else 0 to the count. */
static int list_cpus(int **cpus, size_t *n)
{
    char v[4096];
    size_t cap = 0;
    int rc = 0;
    *cpus = NULL;
    *n = 0;
    if (rep_proc_read("/sys/devices/system/cpu/online", v, sizeof(v)) > 0) {
        for (char *p = v; rc == 0 && *p >= '0' && *p <= '9';) {
            long lo = strtol(p, &p, 10), hi = lo;
            if (*p == '-')
                hi = strtol(p + 1, &p, 10);
            for (long c = lo; rc == 0 && c <= hi; c++)
                rc = push_number(cpus, n, &cap, (int)c);
            if (*p == ',')
                p++;
        }
    }
    long count = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; rc == 0 && *n == 0 && c < (count > 0 ? count : 1); c++)
        rc = push_number(cpus, n, &cap, (int)c);
    return rc;
}

/* Where pid's main thread's stack starts: field 28 of /proc/PID/stat; 0 when unknown. */
static uint64_t read_start_stack(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (rep_proc_read(path, buf, sizeof(buf)) <= 0)
        return 0;
    /* The fields after "(COMM) ", which may hold spaces, start with the third. */
    const char *at = strrchr(buf, ')');
    for (int field = 2; at != NULL && field < 28; field++)
        at = strchr(at + 1, ' ');
    return at != NULL ? strtoull(at + 1, NULL, 10) : 0;
}

/* That pid names a process prof may try: it exists, it is not a thread of another, and it
 * is not prof. */
static int check_process(pid_t pid, struct rep_err *err)
{
    char v[64];
    if (pid == getpid())
        return rep_err_set(err, REP_E_INPUT, "cannot sample process %d: it is prof itself",
                           (int)pid);
    if (!rep_proc_status_field(pid, "Tgid", v, sizeof(v)))
        return rep_err_set(err, REP_E_INPUT, "no process %d", (int)pid);
    if (atol(v) != (long)pid)
        return rep_err_set(err, REP_E_INPUT, "%d is a thread of process %ld: give -p %ld", (int)pid,
                           atol(v), atol(v));
    char state = rep_proc_task_state(pid, pid);
    if (state == 'Z' || state == 'X')
        return rep_err_set(err, REP_E_INPUT, "process %d has exited (a zombie)", (int)pid);
    return REP_OK;
}

/* Opens the counters of the first thread still there: where the kernel says whether prof
 * may sample the process at all. */
static int attach_first(struct session *s, struct rep_err *err)
{
    int *tids;
    size_t n;
    int e = list_tids(s->pid, &tids, &n);
    if (e == -ENOENT)
        return rep_err_set(err, REP_E_INPUT, "no process %d", (int)s->pid);
    if (e == -ENOMEM)
        return rep_err_nomem(err);
    if (e != 0)
        return rep_err_set(err, REP_E_INPUT, "cannot sample process %d: /proc/%d/task: %s",
                           (int)s->pid, (int)s->pid, strerror(-e));
    int rc = REP_E_NOTFOUND;
    for (size_t i = 0; i < n && rc == REP_E_NOTFOUND; i++)
        rc = add_thread(s, tids[i], err);
    free(tids);
    if (rc == REP_E_NOTFOUND)
        return rep_err_set(err, REP_E_INPUT, "process %d has exited", (int)s->pid);
    return rc;
}

/* Opens counters on the threads that have none, until a scan finds none such (see the
 * file comment); each gets its THREAD record. */
static int attach_rest(struct session *s, struct rep_err *err)
{
    for (unsigned round = 0; round < ATTACH_ROUNDS; round++) {
        int *tids;
        size_t n;
        if (list_tids(s->pid, &tids, &n) != 0)
            return REP_OK; /* gone: the sampling loop sees the counters hang up */
        drain_all(s);
        size_t n_added = 0;
        int rc = s->rc;
        for (size_t i = 0; i < n && rc == REP_OK; i++) {
            const struct tid_info *t = tid_get(s, tids[i], false);
            if (t != NULL && t->full_since != 0)
                continue;
            rc = add_thread(s, tids[i], err);
            if (rc == REP_OK) {
                name_thread(s, tids[i], clock_ns(CLOCK_MONOTONIC));
                n_added++;
            } else if (rc == REP_E_NOTFOUND) {
                rc = REP_OK;
            }
        }
        free(tids);
        if (rc != REP_OK || n_added == 0)
            return rc;
    }
    return REP_OK;
}

/* Mappings made while prof attached, by threads whose counters were not open yet, have no
 * MMAP2 record: the maps are read again and what is new is added. */
static void refresh_maps(struct session *s)
{
    struct rep_pmaps now;
    if (rep_pmaps_read(s->pid, &now, NULL) != REP_OK)
        return;
    uint64_t time_ns = clock_ns(CLOCK_MONOTONIC);
    for (size_t i = 0; i < now.n && s->rc == REP_OK; i++) {
        const struct rep_pmap *m = &now.v[i];
        const struct rep_pmap *old = rep_pmaps_find(&s->maps, m->start);
        if (!(m->prot & PROF_MAP_EXEC) ||
            (old != NULL && old->start == m->start && old->end == m->end &&
             old->offset == m->offset && old->prot == m->prot && strcmp(old->path, m->path) == 0))
            continue;
        if (rep_pmaps_add(&s->maps, s->pid, m) != REP_OK)
            s->rc = REP_E_NOMEM;
        else
            put_map(s, rep_pmaps_find(&s->maps, m->start), time_ns);
    }
    rep_pmaps_free(&now);
}

/* The file header, the PROCESS record, the MAP records and the first thread's name. */
static void write_head(struct session *s)
{
    char exe[EXE_MAX];
    rep_proc_exe(s->pid, exe, sizeof(exe));
    struct prof_rec_process p = {
        .pid = (uint32_t)s->pid,
        .ppid = (uint32_t)rep_proc_ppid(s->pid),
        .start_mono_ns = s->start_ns,
        .start_real_ns = s->start_real_ns,
        .requested_hz = s->hz,
        .effective_hz = s->hz, /* a fixed period of 1/hz: the kernel delivers it exactly */
        .timer_source = PROF_TIMER_PERF,
        .unwinder = PROF_UNWIND_FP,
        .max_depth = (uint16_t)s->max_depth,
    };
    unsigned char buf[sizeof(p) + EXE_MAX + PROF_REC_ALIGN];
    put(s, buf, prof_record_file_header(buf, sizeof(buf)));
    put(s, buf, prof_record_process(buf, sizeof(buf), &p, exe));
    if (s->rc == REP_OK && rep_pmaps_write(&s->maps, s->start_ns, s->out, NULL) != REP_OK) {
        s->rc = REP_E_IO;
        s->io_errno = errno;
    }
    name_thread(s, s->counters[0].tid, s->start_ns);
}

/* ---- sampling ---- */

/* Waits up to wait_ns for a ring to fill, for a counter to hang up or for a signal. Every
 * counter that writes into a ring is woken with it, so any one of them answers; those that
 * hung up would answer at once, and are left out. fds and which have room for them all. */
static void wait_rings(struct session *s, struct pollfd *fds, size_t *which, uint64_t wait_ns,
                       const sigset_t *wait_mask)
{
    struct timespec ts = {(time_t)(wait_ns / 1000000000u), (long)(wait_ns % 1000000000u)};
    nfds_t n = 0;
    for (size_t i = 0; i < s->n_counters; i++) {
        if (!s->counters[i].is_hup) {
            fds[n] = (struct pollfd){.fd = s->counters[i].fd, .events = POLLIN};
            which[n++] = i;
        }
    }
    int ready = ppoll(fds, n, &ts, wait_mask);
    for (nfds_t k = 0; ready > 0 && k < n; k++) {
        if (fds[k].revents & POLLHUP) {
            s->counters[which[k]].is_hup = true;
            s->n_live--;
        }
    }
}

/* Whether to stop now, and why. */
static enum stop_why should_stop(const struct session *s, uint64_t deadline)
{
    if (got_signal)
        return STOP_SIGNAL;
    if (s->exec_ns != 0)
        return STOP_EXEC;
    if (s->n_live == 0) {
        /* No thread left to sample: the process exited, or exec removed the counters. */
        char state = rep_proc_task_state(s->pid, s->pid);
        return state != 0 && state != 'Z' && state != 'X' ? STOP_EXEC : STOP_EXITED;
    }
    if (deadline != 0 && clock_ns(CLOCK_MONOTONIC) >= deadline)
        return STOP_DURATION;
    return STOP_NONE;
}

/* Waits and drains until a reason to stop; returns it. */
static enum stop_why sample(struct session *s, double duration_s, const sigset_t *wait_mask)
{
    uint64_t deadline = duration_s > 0 ? s->start_ns + (uint64_t)(duration_s * 1e9) : 0;
    struct pollfd *fds = malloc((s->n_counters + 1) * sizeof(*fds));
    size_t *which = malloc((s->n_counters + 1) * sizeof(*which));
    enum stop_why why = STOP_NONE;
    if (fds == NULL || which == NULL)
        s->rc = REP_E_NOMEM;
    while (why == STOP_NONE && s->rc == REP_OK) {
        uint64_t wait_ns = (uint64_t)POLL_MS * 1000000u, now = clock_ns(CLOCK_MONOTONIC);
        if (deadline != 0 && deadline - now < wait_ns)
            wait_ns = deadline > now ? deadline - now : 0;
        wait_rings(s, fds, which, wait_ns, wait_mask);
        drain_all(s);
        flush_batch(s);
        if (s->rc == REP_OK && fflush(s->out) != 0) {
            s->rc = REP_E_IO;
            s->io_errno = errno;
        }
        why = should_stop(s, deadline);
    }
    free(fds);
    free(which);
    return why;
}

/* Closes every counter and ring, adding the CPU time each counter saw (with every thread
 * that inherited it) to s->cpu_ns. */
static void detach(struct session *s)
{
    for (size_t k = 0; k < s->n_cpus; k++) {
        if (s->rings[k].fd >= 0)
            munmap(s->rings[k].meta, s->rings[k].map_bytes);
        s->rings[k].fd = -1;
    }
    for (size_t i = 0; i < s->n_counters; i++) {
        struct counter *c = &s->counters[i];
        uint64_t task_clock_ns[1];
        if (c->fd >= 0 && read(c->fd, task_clock_ns, sizeof(task_clock_ns)) == sizeof(uint64_t))
            s->cpu_ns += task_clock_ns[0];
        if (c->fd >= 0)
            close(c->fd);
        c->fd = -1;
    }
}

/* The last records: what the rings still hold, STATS (with the CPU time the counters
 * saw), END. The counters are closed. */
static void finish(struct session *s)
{
    drain_all(s);
    flush_batch(s);
    detach(s);
    uint64_t *c = s->counters_stat;
    c[PROF_STAT_DURATION_NS] = clock_ns(CLOCK_MONOTONIC) - s->start_ns;
    c[PROF_STAT_CPU_NS] = s->cpu_ns;
    put(s, s->rec, prof_record_stats(s->rec, s->rec_cap, c, PROF_STAT_N));
    put(s, s->rec, prof_record_end(s->rec, s->rec_cap));
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

static int session_init(struct session *s, const struct rep_record_opts *o, struct rep_err *err)
{
    memset(s, 0, sizeof(*s));
    s->pid = o->pid;
    s->hz = o->freq != NULL ? (unsigned)strtoul(o->freq, NULL, 10) : REP_RECORD_PID_HZ;
    s->max_depth = o->depth != NULL ? (unsigned)strtoul(o->depth, NULL, 10) : REP_RECORD_PID_DEPTH;
    s->is_kernel_callchain = o->is_kernel_callchain;
    s->page_bytes = (size_t)sysconf(_SC_PAGESIZE);
    prof_intern_init(&s->intern, INTERN_FRAMES);
    long max_hz = read_proc_long("/proc/sys/kernel/perf_event_max_sample_rate", 100000);
    if ((long)s->hz > max_hz)
        return rep_err_set(err, REP_E_INPUT,
                           "cannot sample at %u Hz: kernel.perf_event_max_sample_rate is %ld",
                           s->hz, max_hz);
    if (s->is_kernel_callchain) {
        /* The kernel refuses a longer chain than kernel.perf_event_max_stack. */
        long max_stack = read_proc_long("/proc/sys/kernel/perf_event_max_stack", 127);
        s->max_stack = max_stack > 0 && max_stack < UINT16_MAX ? (unsigned)max_stack : 127u;
        if (s->max_depth > s->max_stack)
            s->max_depth = s->max_stack;
    }
    fill_attr(s);
    if (list_cpus(&s->cpus, &s->n_cpus) != 0)
        return rep_err_nomem(err);
    s->rings = malloc(s->n_cpus * sizeof(*s->rings));
    for (size_t k = 0; s->rings != NULL && k < s->n_cpus; k++)
        s->rings[k] = (struct ring){.fd = -1};
    /* The budget shared out over the CPUs, within the bounds. */
    size_t min = ring_min_bytes(s);
    s->ring_bytes = s->is_kernel_callchain ? RING_MAX_BYTES / KERNEL_RING_DIV : RING_MAX_BYTES;
    while (s->ring_bytes / 2 >= min && s->ring_bytes * s->n_cpus > RING_BUDGET_BYTES)
        s->ring_bytes /= 2;
    s->rec_cap = sizeof(struct prof_rec_samples) + BATCH_BYTES + sizeof(struct prof_rec_sample) +
                 (size_t)s->max_depth * sizeof(uint64_t);
    s->rec = malloc(s->rec_cap);
    s->batch = malloc(BATCH_BYTES);
    s->frames = malloc((size_t)s->max_depth * sizeof(uint64_t));
    s->wrap = malloc(PERF_RECORD_MAX);
    if (s->rings == NULL || s->rec == NULL || s->batch == NULL || s->frames == NULL ||
        s->wrap == NULL)
        return rep_err_nomem(err);
    return REP_OK;
}

static void session_fini(struct session *s)
{
    if (s->rings != NULL)
        detach(s);
    free(s->cpus);
    free(s->rings);
    free(s->counters);
    free(s->tids);
    rep_pmaps_free(&s->maps);
    prof_intern_fini(&s->intern);
    free(s->rec);
    free(s->batch);
    free(s->frames);
    free(s->wrap);
}

/* The session's failure while sampling as the command's. */
static int sampling_error(const struct session *s, const char *output, struct rep_err *err)
{
    if (s->rc == REP_E_IO)
        return rep_err_set(err, REP_E_IO, "%s: write error: %s", output, strerror(s->io_errno));
    return rep_err_nomem(err);
}

/* Attaches and creates the output; the output is removed again when attaching fails. */
static int attach(struct session *s, const char *output, struct rep_err *err)
{
    s->start_ns = clock_ns(CLOCK_MONOTONIC);
    s->start_real_ns = clock_ns(CLOCK_REALTIME);
    int rc = attach_first(s, err);
    if (rc == REP_OK)
        rc = rep_pmaps_read(s->pid, &s->maps, err);
    if (rc != REP_OK)
        return rc;
    s->start_stack = read_start_stack(s->pid);
    s->out = fopen(output, "we");
    if (s->out == NULL)
        return rep_err_set(err, REP_E_INPUT, "%s: %s", output, strerror(errno));
    write_head(s);
    rc = attach_rest(s, err);
    if (rc == REP_OK)
        refresh_maps(s);
    if (rc == REP_OK && s->rc != REP_OK)
        rc = sampling_error(s, output, err);
    if (rc != REP_OK) {
        fclose(s->out);
        s->out = NULL;
        unlink(output);
    }
    return rc;
}

/* Attaches, samples and finishes, then says how it went on log. */
static int record(struct session *s, const struct rep_record_opts *o, const sigset_t *wait_mask,
                  FILE *log, struct rep_err *err)
{
    int rc = attach(s, o->output, err);
    if (rc != REP_OK)
        return rc;
    if (o->duration_s <= 0)
        fprintf(log, "prof: sampling process %d; stop with Ctrl-C\n", (int)s->pid);
    enum stop_why why = sample(s, o->duration_s, wait_mask);
    if (s->rc == REP_OK)
        finish(s);
    if (fclose(s->out) != 0 && s->rc == REP_OK) {
        s->rc = REP_E_IO;
        s->io_errno = errno;
    }
    s->out = NULL;
    if (s->rc != REP_OK)
        return sampling_error(s, o->output, err);
    const uint64_t *c = s->counters_stat;
    fprintf(log,
            "prof: process %d sampled %s: %" PRIu64 " samples of %zu thread%s in %.2f s, %" PRIu64
            " lost; wrote %s\n",
            (int)s->pid, why_text(why), c[PROF_STAT_SAMPLES], s->n_sampled,
            s->n_sampled == 1 ? "" : "s", (double)c[PROF_STAT_DURATION_NS] / 1e9,
            c[PROF_STAT_DROPPED], o->output);
    return REP_OK;
}

int rep_record_pid_run(const struct rep_record_opts *o, FILE *log, struct rep_err *err)
{
    struct session s;
    int rc = session_init(&s, o, err);
    if (rc == REP_OK)
        rc = check_process(o->pid, err);
    if (rc != REP_OK) {
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
