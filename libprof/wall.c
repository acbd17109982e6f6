/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Wall-clock profiles: time off CPU from the kernel's context-switch records (see wall.h).
 *
 * A ring is the kernel's: a metadata page, then data pages the kernel appends records to
 * (data_head) and this reader consumes (data_tail). The records read here, each followed by
 * the sample_id fields sample_type names (pid and tid, time):
 *
 *   PERF_RECORD_SWITCH   | pid u32 | tid u32 | time u64 |          (misc: out, preempted)
 *   PERF_RECORD_EXIT     | pid | ppid | tid | ptid u32 | time u64 | pid | tid | time |
 *   PERF_RECORD_FORK     | the same
 *   PERF_RECORD_SAMPLE   | pid | tid | time | the chain, registers and stack of
 *                          libprof/ksamples.c's layout (with stacks only)
 *   PERF_RECORD_LOST     | id u64 | lost u64 | pid | tid | time |
 *
 * Each period the rings are read into a list of events, sorted by time; the events older
 * than the cut (the time reading began, less WALL_SLACK_NS) are applied to the threads,
 * the others wait. A thread is on or off CPU; off, it has an episode: its start, the time
 * its weight was written up to, its kind (preempted or not), the switch-out sample's
 * bytes (walked the first time the episode has weight to write), the state /proc gave.
 */
#include "libprof/wall.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "arch/arch.h"
#include "common/clock.h"
#include "common/grow.h"
#include "common/jitter.h"
#include "common/perf_ring.h"
#include "common/proc.h"
#include "include/libprof/prof_format.h"
#include "libprof/fd.h"
#include "libprof/ksamples.h"
#include "libprof/labels.h"
#include "libprof/writer.h"
#include "sampler/fd_high.h"
#include "sampler/handler.h"
#include "sampler/timer_perf.h"

#define WALL_MAX_CPUS 4096u
#define WALL_PAGES_STACKS 256u  /* data pages of a ring with stacks (1 MiB) */
#define WALL_PAGES_PLAIN 16u    /* and of one with switch records only */
#define WALL_SLACK_NS 1000000ull     /* records of the last millisecond wait a period */
#define WALL_PAY_NS 1000000000ull    /* an episode's weight is written every second */
#define WALL_SAMPLE_SKEW_NS 1000000ull /* a switch-out sample precedes its switch record */
#define WALL_STACK_BYTES 8192u /* user stack a switch out copies (every switch pays for it) */
#define WALL_RECORD_MAX (WALL_STACK_BYTES + 8192u)
#define WALL_LOOKS_MAX 256u     /* /proc looks per period at most */
#define WALL_FAST_NS 500000000ull /* how long short waits keep the writer coming back soon */
#define WALL_RAN_NS 100000u     /* CPU time a thread off CPU may seem to gain (its clock
                                 * read around the switch) */

enum ev_kind { EV_SAMPLE, EV_OUT, EV_OUT_PREEMPT, EV_IN, EV_EXIT, EV_FORK };

struct event {
    uint64_t time_ns;
    uint64_t seq;        /* order read, for events of equal time */
    uint32_t tid;
    uint32_t kind;       /* enum ev_kind */
    uint32_t is_looked;  /* EV_OUT: the thread was looked at after it (look_new()) */
    unsigned char *raw;  /* EV_SAMPLE: the record's body, malloc'd; owned */
    uint32_t raw_len;
};

/* What /proc said of a thread at a time. */
struct look {
    uint64_t at_ns;     /* 0: none */
    uint32_t state;     /* PROF_STATE_MAKE(kind, call) */
    uint64_t pc;        /* the user pc it waits at, 0 unknown */
    uint64_t cpu_ns;    /* its CPU time then */
};

struct thr {
    uint32_t tid;          /* 0: a free slot */
    uint8_t is_off;        /* in an episode off CPU */
    uint8_t is_preempted;  /* the episode began with a preemption */
    uint8_t is_looked;     /* /proc was read for this episode */
    uint8_t has_stack;     /* frames hold the episode's stack */
    uint64_t dead_ns;      /* its EXIT record's time, 0 alive: records after it are the
                            * exit's own; the entry goes a second later */
    uint64_t out_ns;       /* the episode's start */
    uint64_t paid_ns;      /* its weight is written up to here */
    unsigned char *raw;    /* the last switch-out sample (with stacks), malloc'd */
    uint32_t raw_len;
    uint64_t raw_ns;
    unsigned char *ep_raw; /* the episode's switch-out sample, until walked */
    uint32_t ep_raw_len;
    uint64_t *frames;      /* the episode's stack, malloc'd */
    uint16_t n_frames;
    uint8_t stop_reason;
    uint8_t flags;
    uint64_t cpu_ns;       /* its CPU time when the episode was looked at, 0 not read */
    uint64_t lost_gen;     /* wall.lost_gen when the episode began */
    struct lp_label_ctx ctx; /* the thread's labels and trace when the episode began */
    struct look label;     /* the look given to this episode */
    struct look pending;   /* a look not yet given to an episode */
};

/* One CPU's event and the ring it writes into. */
struct ring {
    int fd;           /* the event; checked to be ours (its id) before it is closed */
    uint64_t id;      /* its kernel id */
    void *map;        /* the ring: a metadata page, then the data pages */
    size_t map_bytes;
};

/* Everything here is the writer buffer's owner's (wall.h), but writer_tid, which the
 * session sets. */
static struct {
    int is_on;              /* the events are open */
    int with_stacks;        /* the kernel samples each switch out with the user stack */
    pid_t pid;              /* this process: records of others (fork children on kernels
                             * without inherit_thread) are dropped */
    _Atomic pid_t writer_tid; /* libprof's writer thread, never counted */
    uint64_t period_ns;     /* 1/PROF_FREQ: the unit of weight */
    unsigned max_frames;    /* PROF_DEPTH */
    unsigned kernel_cap;    /* frames the kernel's chain holds at most */
    struct lp_ksamples_ends ends; /* where walks end, and libprof's own code */
    struct ring *rings;     /* one per CPU */
    unsigned n_rings;
    struct event *ev;       /* records read, not yet applied (sorted by time) */
    size_t n_ev, cap_ev;
    uint64_t seq;           /* the next event's read order */
    struct thr *thr;        /* open addressing by tid, a power of two, half full at most */
    size_t n_thr, cap_thr;
    uint64_t rng;           /* xorshift state, for the weight of parts of a period */
    uint64_t lost_gen;  /* bumped when the kernel says it lost records */
    unsigned n_blind;   /* episodes a thread left the CPU by itself for that ended before
                         * they were looked at, this period */
    uint64_t fast_until; /* the writer comes back sooner until then (WALL_FAST_NS after
                          * the last blind episode) */
    size_t page;        /* the system's page size */
    unsigned char *rec; /* one record's body, copied out of a ring */
    uint64_t *frames;   /* one walk's frames */
} wall;

static void count(unsigned idx, uint64_t n)
{
    atomic_fetch_add_explicit(&smp_sampler.counters[idx], n, memory_order_relaxed);
}

/* ---- the events ---- */

static void attr_of(struct perf_event_attr *a, int with_stacks, unsigned kernel_cap)
{
    memset(a, 0, sizeof(*a));
    a->size = sizeof(*a);
    a->type = PERF_TYPE_SOFTWARE;
    a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    if (with_stacks) {
        /* Every switch out sampled, with where the thread was in user space. */
        a->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
        a->sample_period = 1;
        a->sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
        a->sample_regs_user = ARCH_PERF_REGS_MASK;
        a->sample_stack_user = WALL_STACK_BYTES;
        a->sample_max_stack = (uint16_t)kernel_cap;
        a->exclude_callchain_kernel = 1;
    } else {
        a->config = PERF_COUNT_SW_DUMMY;
        a->exclude_kernel = 1; /* what perf_event_paranoid 2 allows */
    }
    a->exclude_hv = 1;
    a->context_switch = 1;
    a->task = 1;
    a->sample_id_all = 1;
    a->inherit = 1;
    a->inherit_thread = 1;
    a->remove_on_exec = 1;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC;
    a->watermark = 1; /* nobody polls: wake nobody but rarely */
}

/* One CPU's event and ring, data_pages pages of data or fewer (locked memory). */
static int open_ring(struct perf_event_attr *a, int cpu, unsigned data_pages, struct ring *r)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    a->wakeup_watermark = (uint32_t)(data_pages * page / 2);
    long fd = syscall(SYS_perf_event_open, a, 0, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && errno == EINVAL && a->inherit_thread) {
        /* Before Linux 5.13: fork children inherit the event too (their records are told
         * apart by pid) and exec is met by the session's finish. */
        a->inherit_thread = 0;
        a->remove_on_exec = 0;
        fd = syscall(SYS_perf_event_open, a, 0, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    }
    if (fd < 0)
        return -errno;
    fd = smp_fd_move_high((int)fd);
    if (fd < 0)
        return (int)fd;
    for (unsigned pages = data_pages; pages >= 4; pages /= 2) {
        size_t bytes = (size_t)(pages + 1) * page;
        void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
        if (m == MAP_FAILED)
            continue;
        if (ioctl((int)fd, PERF_EVENT_IOC_ID, &r->id) != 0) {
            munmap(m, bytes);
            break;
        }
        *r = (struct ring){.fd = (int)fd, .id = r->id, .map = m, .map_bytes = bytes};
        return 0;
    }
    int err = errno ? errno : ENOMEM;
    close((int)fd);
    return -err;
}

/* Whether fd is still the event of ring r (the application may have closed it and got
 * the number back). */
static int is_ours(const struct ring *r)
{
    uint64_t id = 0;
    return r->fd >= 0 && ioctl(r->fd, PERF_EVENT_IOC_ID, &id) == 0 && id == r->id;
}

static void close_rings(void)
{
    for (unsigned i = 0; i < wall.n_rings; i++) {
        struct ring *r = &wall.rings[i];
        if (r->map)
            munmap(r->map, r->map_bytes);
        if (is_ours(r))
            close(r->fd);
    }
    free(wall.rings);
    wall.rings = NULL;
    wall.n_rings = 0;
}

/* The events on every CPU there is, with stacks or without. */
static int open_rings(int with_stacks)
{
    long n = sysconf(_SC_NPROCESSORS_CONF);
    if (n <= 0 || n > (long)WALL_MAX_CPUS)
        n = n <= 0 ? 1 : (long)WALL_MAX_CPUS;
    wall.rings = calloc((size_t)n, sizeof(*wall.rings));
    if (!wall.rings)
        return -ENOMEM;
    struct perf_event_attr a;
    attr_of(&a, with_stacks, wall.kernel_cap);
    int rc = 0;
    wall.n_rings = 0;
    for (int cpu = 0; cpu < n; cpu++) {
        struct ring r = {.fd = -1};
        rc = open_ring(&a, cpu, with_stacks ? WALL_PAGES_STACKS : WALL_PAGES_PLAIN, &r);
        if (rc == -ENODEV || rc == -EINVAL) /* an offline CPU */
            continue;
        if (rc != 0)
            break;
        wall.rings[wall.n_rings++] = r;
    }
    if (rc == 0 && wall.n_rings == 0)
        rc = -ENODEV;
    if (rc != 0 && rc != -ENODEV && rc != -EINVAL) {
        close_rings();
        return rc;
    }
    return wall.n_rings > 0 ? 0 : rc;
}

/* Frames a kernel-recorded chain may hold: PROF_DEPTH, within the kernel's limit. */
static unsigned kernel_cap_of(unsigned max_frames)
{
    unsigned n = max_frames < LP_KSAMPLE_MAX_FRAMES ? max_frames : LP_KSAMPLE_MAX_FRAMES;
    char *text = lp_fd_slurp("/proc/sys/kernel/perf_event_max_stack", NULL);
    if (text) {
        unsigned long sys = strtoul(text, NULL, 10);
        free(text);
        if (sys > 0 && sys < n)
            n = (unsigned)sys;
    }
    return n;
}

int lp_wall_start(unsigned hz, unsigned max_frames, const struct lp_ksamples_ends *ends,
                  int *with_stacks)
{
    memset(&wall, 0, sizeof(wall));
    wall.pid = getpid();
    wall.page = (size_t)sysconf(_SC_PAGESIZE);
    wall.period_ns = 1000000000ull / (hz ? hz : 1);
    wall.max_frames = max_frames;
    wall.kernel_cap = kernel_cap_of(max_frames);
    wall.ends = *ends;
    wall.rng = cmn_clock_ns(CLOCK_MONOTONIC) | 1u;
    wall.rec = malloc(WALL_RECORD_MAX);
    wall.frames = malloc((size_t)max_frames * sizeof(uint64_t));
    if (!wall.rec || !wall.frames) {
        lp_wall_stop();
        return -ENOMEM;
    }
    int rc = open_rings(1);
    wall.with_stacks = rc == 0;
    if (rc == -EACCES || rc == -EPERM)
        rc = open_rings(0);
    if (rc != 0) {
        lp_wall_stop();
        return rc;
    }
    *with_stacks = wall.with_stacks;
    wall.is_on = 1;
    return 0;
}

void lp_wall_set_writer(pid_t writer_tid)
{
    atomic_store(&wall.writer_tid, writer_tid);
}

static void free_thr(struct thr *t)
{
    free(t->raw);
    free(t->ep_raw);
    free(t->frames);
}

void lp_wall_stop(void)
{
    int saved = errno;
    close_rings();
    for (size_t i = 0; i < wall.n_ev; i++)
        free(wall.ev[i].raw);
    free(wall.ev);
    for (size_t i = 0; i < wall.cap_thr; i++)
        if (wall.thr[i].tid)
            free_thr(&wall.thr[i]);
    free(wall.thr);
    free(wall.rec);
    free(wall.frames);
    memset(&wall, 0, sizeof(wall));
    errno = saved;
}

void lp_wall_fork_child(void)
{
    /* The rings were not inherited (the kernel does not copy them); the descriptors were.
     * The lists may be half updated by the parent's writer thread: left as they are. */
    for (unsigned i = 0; i < wall.n_rings; i++)
        if (is_ours(&wall.rings[i]))
            close(wall.rings[i].fd);
    memset(&wall, 0, sizeof(wall));
}

/* ---- reading the rings ---- */

static void add_event(uint64_t time_ns, uint32_t tid, unsigned kind, const unsigned char *raw,
                      size_t raw_len)
{
    if (!CMN_GROW(wall.ev, wall.cap_ev, wall.n_ev + 1, 256))
        return;
    struct event *e = &wall.ev[wall.n_ev];
    *e = (struct event){.time_ns = time_ns, .seq = wall.seq++, .tid = tid, .kind = kind};
    if (raw) {
        e->raw = malloc(raw_len);
        if (!e->raw)
            return;
        memcpy(e->raw, raw, raw_len);
        e->raw_len = (uint32_t)raw_len;
    }
    wall.n_ev++;
}

/* One record (its body in b) into an event, when it is of a thread of ours. */
static void take_record(const struct perf_event_header *h, const unsigned char *b, size_t len)
{
    uint32_t pid_tid[2];
    uint64_t time_ns;
    pid_t writer = atomic_load_explicit(&wall.writer_tid, memory_order_relaxed);
    switch (h->type) {
    case PERF_RECORD_SWITCH:
    case PERF_RECORD_SAMPLE:
        if (len < 16)
            return;
        memcpy(pid_tid, b, 8);
        memcpy(&time_ns, b + 8, 8);
        break;
    case PERF_RECORD_EXIT:
    case PERF_RECORD_FORK:
        if (len < 24)
            return;
        memcpy(pid_tid, b, 4);
        memcpy(&pid_tid[1], b + 8, 4);
        memcpy(&time_ns, b + 16, 8);
        break;
    case PERF_RECORD_LOST:
        if (len >= 16) {
            uint64_t lost;
            memcpy(&lost, b + 8, 8);
            count(PROF_STAT_SWITCHES_LOST, lost);
            wall.lost_gen++;
        }
        return;
    default:
        return;
    }
    if (pid_tid[0] != (uint32_t)wall.pid || pid_tid[1] == 0 || pid_tid[1] == (uint32_t)writer)
        return;
    unsigned kind = h->type == PERF_RECORD_SAMPLE ? EV_SAMPLE
                    : h->type == PERF_RECORD_EXIT ? EV_EXIT
                    : h->type == PERF_RECORD_FORK ? EV_FORK
                    : !(h->misc & PERF_RECORD_MISC_SWITCH_OUT) ? EV_IN
                    : (h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) ? EV_OUT_PREEMPT
                                                                     : EV_OUT;
    add_event(time_ns, pid_tid[1], kind, kind == EV_SAMPLE ? b : NULL, len);
}

/* Reads ring r; returns 1 when it was more than a quarter full (read again soon). */
static int read_ring(struct ring *r)
{
    struct cmn_pring pr;
    if (!cmn_pring_begin(&pr, r->map, r->map_bytes, wall.page))
        return 0;
    int is_full = pr.head - pr.tail > pr.size / 4;
    struct perf_event_header h;
    uint64_t at;
    while (cmn_pring_next(&pr, &h, &at)) {
        size_t body = h.size - sizeof(h);
        if (body <= WALL_RECORD_MAX) {
            cmn_pring_copy(&pr, at, wall.rec, body);
            take_record(&h, wall.rec, body);
        }
    }
    cmn_pring_end(&pr);
    return is_full;
}

static int by_time(const void *va, const void *vb)
{
    const struct event *a = va, *b = vb;
    if (a->time_ns != b->time_ns)
        return a->time_ns < b->time_ns ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* ---- the threads ---- */

static size_t slot_of(uint32_t tid, size_t cap)
{
    return (size_t)((uint64_t)tid * 0x9e3779b97f4a7c15ull >> 24) & (cap - 1);
}

static int grow_threads(void)
{
    size_t cap = wall.cap_thr ? wall.cap_thr * 2 : 256;
    struct thr *t = calloc(cap, sizeof(*t));
    if (!t)
        return -ENOMEM;
    for (size_t i = 0; i < wall.cap_thr; i++) {
        if (!wall.thr[i].tid)
            continue;
        size_t k = slot_of(wall.thr[i].tid, cap);
        while (t[k].tid)
            k = (k + 1) & (cap - 1);
        t[k] = wall.thr[i];
    }
    free(wall.thr);
    wall.thr = t;
    wall.cap_thr = cap;
    return 0;
}

/* Thread tid's entry; a new one when add; NULL when there is none (or no memory). */
static struct thr *thr_get(uint32_t tid, int add)
{
    if (wall.cap_thr) {
        for (size_t k = slot_of(tid, wall.cap_thr); wall.thr[k].tid;
             k = (k + 1) & (wall.cap_thr - 1))
            if (wall.thr[k].tid == tid)
                return &wall.thr[k];
    }
    if (!add || ((wall.n_thr + 1) * 2 > wall.cap_thr && grow_threads() != 0))
        return NULL;
    size_t k = slot_of(tid, wall.cap_thr);
    while (wall.thr[k].tid)
        k = (k + 1) & (wall.cap_thr - 1);
    wall.thr[k] = (struct thr){.tid = tid};
    wall.n_thr++;
    return &wall.thr[k];
}

/* Removes t, moving back the entries after it that it displaced. */
static void thr_remove(struct thr *t)
{
    free_thr(t);
    size_t i = (size_t)(t - wall.thr), mask = wall.cap_thr - 1;
    wall.thr[i].tid = 0;
    for (size_t j = (i + 1) & mask; wall.thr[j].tid; j = (j + 1) & mask) {
        size_t home = slot_of(wall.thr[j].tid, wall.cap_thr);
        /* j's entry may move to i when its home is not in (i, j] (cyclically). */
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            wall.thr[i] = wall.thr[j];
            wall.thr[j].tid = 0;
            i = j;
        }
    }
    wall.n_thr--;
}

/* ---- episodes ---- */

static uint64_t next_random(void)
{
    return cmn_jitter_random(&wall.rng);
}

/* The episode's stack into t->frames: its switch-out sample walked (with stacks), or the
 * pc /proc gave (the leaf), or none. */
static void make_stack(struct thr *t)
{
    uint8_t why = PROF_STOP_NO_STACK;
    unsigned n = 0;
    if (t->ep_raw) {
        n = lp_ksamples_walk_body(t->ep_raw, t->ep_raw_len, &wall.ends, wall.kernel_cap,
                                  wall.max_frames, wall.frames, &why);
        free(t->ep_raw);
        t->ep_raw = NULL;
    }
    if (n == 0 && t->label.pc != 0) {
        wall.frames[0] = t->label.pc;
        n = 1;
        why = PROF_STOP_NO_STACK;
    }
    free(t->frames);
    t->frames = n ? malloc(n * sizeof(uint64_t)) : NULL;
    if (!t->frames)
        n = 0;
    if (n)
        memcpy(t->frames, wall.frames, n * sizeof(uint64_t));
    t->n_frames = (uint16_t)n;
    t->stop_reason = n ? why : PROF_STOP_NO_STACK;
    t->flags = t->stop_reason == PROF_STOP_END ? 0 : PROF_SAMPLE_TRUNCATED;
    t->has_stack = 1;
}

/* Gives t's pending look to its episode [out_ns, until) when it was taken within it;
 * drops it when it is older than the episode. */
static void settle(struct thr *t, uint64_t until)
{
    struct look *l = &t->pending;
    if (l->at_ns == 0)
        return;
    if (l->at_ns < t->out_ns) {
        l->at_ns = 0;
        return;
    }
    if (l->at_ns < until) {
        t->label = *l;
        t->cpu_ns = l->cpu_ns;
        t->is_looked = 1;
        l->at_ns = 0;
    }
}

static uint32_t state_of(const struct thr *t)
{
    if (t->is_preempted)
        return PROF_STATE_MAKE(PROF_STATE_RUNNABLE, -1);
    return t->label.at_ns ? t->label.state : PROF_STATE_MAKE(PROF_STATE_WAITING, -1);
}

/* Writes the weight of t's episode from paid_ns to `to`: whole periods, the rest a period
 * with that chance, so that an episode shorter than a period counts in expectation. */
static unsigned pay(struct lp_writer *w, struct thr *t, uint64_t to, int sampling)
{
    if (to <= t->paid_ns)
        return 0;
    uint64_t from = t->paid_ns, d = to - from;
    t->paid_ns = to;
    if (!sampling)
        return 0;
    uint64_t units = d / wall.period_ns;
    if ((next_random() >> 11) % wall.period_ns < d % wall.period_ns)
        units++;
    if (units == 0)
        return 0;
    if (units > UINT32_MAX / 2)
        units = UINT32_MAX / 2;
    if (!t->has_stack)
        make_stack(t);
    struct prof_rec_sample rec = {.time_ns = from, .tid = t->tid, .weight = (uint32_t)units,
                                  .n_frames = t->n_frames, .stop_reason = t->stop_reason,
                                  .flags = t->flags, .state = state_of(t)};
    uint64_t none = 0;
    lp_writer_put_sample_ctx(w, &rec, t->frames ? t->frames : &none, &t->ctx);
    count(PROF_STAT_SAMPLES, 1);
    count(PROF_STAT_WEIGHT, units);
    count(PROF_STAT_OFFCPU_SAMPLES, 1);
    count(PROF_STAT_OFFCPU_WEIGHT, units);
    if (t->stop_reason != PROF_STOP_END) {
        count(PROF_STAT_TRUNCATED, 1);
        if (t->stop_reason < PROF_STOP_N)
            count(PROF_STAT_STOP_OF(t->stop_reason), 1);
    }
    return 1;
}

static void end_episode(struct thr *t)
{
    t->is_off = 0;
    free(t->ep_raw);
    t->ep_raw = NULL;
    free(t->frames);
    t->frames = NULL;
    t->has_stack = 0;
    t->label.at_ns = 0;
}

static unsigned apply(struct lp_writer *w, struct event *e, int sampling)
{
    unsigned n = 0;
    struct thr *t = thr_get(e->tid, e->kind != EV_EXIT);
    if (!t)
        return 0;
    if (t->dead_ns != 0 && e->kind != EV_FORK)
        return 0; /* the exit's own switches */
    switch (e->kind) {
    case EV_SAMPLE:
        free(t->raw);
        t->raw = e->raw;
        t->raw_len = e->raw_len;
        t->raw_ns = e->time_ns;
        e->raw = NULL;
        break;
    case EV_OUT:
    case EV_OUT_PREEMPT:
        /* Already off: the switch in between was lost (the ring was full); that episode's
         * end is unknown and it is left unweighted. */
        end_episode(t);
        t->is_off = 1;
        t->is_preempted = e->kind == EV_OUT_PREEMPT;
        t->is_looked = 0;
        t->cpu_ns = 0;
        t->lost_gen = wall.lost_gen;
        t->out_ns = t->paid_ns = e->time_ns;
        /* A wait is the thread's labels' of the moment it began. */
        lp_labels_ctx_at(t->tid, e->time_ns, &t->ctx);
        if (t->raw && t->raw_ns <= e->time_ns && e->time_ns - t->raw_ns < WALL_SAMPLE_SKEW_NS) {
            t->ep_raw = t->raw;
            t->ep_raw_len = t->raw_len;
            t->raw = NULL;
        }
        break;
    case EV_IN:
        if (t->is_off) {
            settle(t, e->time_ns);
            if (!t->is_looked && !t->is_preempted)
                wall.n_blind++;
            n = pay(w, t, e->time_ns, sampling);
            end_episode(t);
        }
        break;
    case EV_EXIT:
        /* A thread ends, on CPU; its last switches follow, if any. */
        end_episode(t);
        t->dead_ns = e->time_ns;
        break;
    case EV_FORK:
        /* A tid is a new thread's: what was known of another of that number goes. */
        thr_remove(t);
        break;
    }
    return n;
}

/* Thread tid's CPU time (its scheduler clock), 0 when it cannot be read. */
static uint64_t thread_cpu_ns(uint32_t tid)
{
    clockid_t clk = (clockid_t)((~tid) << 3) | 4 | 2; /* the kernel's per-thread clock id */
    struct timespec ts;
    if (clock_gettime(clk, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Whether t ran since it was looked at: its switch in was lost (a ring was full), and the
 * episode is over at a time nobody knows. Asked once after each loss: a thread found still
 * waiting is not asked again until the next. */
static int ran_since_look(struct thr *t)
{
    if (t->cpu_ns == 0 || t->lost_gen == wall.lost_gen)
        return 0;
    uint64_t now = thread_cpu_ns(t->tid);
    if (now == 0 || now > t->cpu_ns + WALL_RAN_NS)
        return 1;
    t->lost_gen = wall.lost_gen; /* still waiting: its end was not among what was lost */
    return 0;
}

/* Reads what /proc says of thread t now: its state letter and the system call it waits
 * in, and the user pc there; and its CPU time, which stays still while it is off. */
static void look(struct thr *t)
{
    uint64_t cpu_ns = thread_cpu_ns(t->tid);
    uint64_t at = cmn_clock_ns(CLOCK_MONOTONIC);
    char letter = cmn_proc_task_state(&lp_proc_self, (pid_t)t->tid);
    struct cmn_proc_syscall sc;
    if (letter == 0 || !cmn_proc_task_syscall(&lp_proc_self, (pid_t)t->tid, &sc))
        return;
    long nr = sc.nr;
    uint64_t pc = sc.pc;
    if (sc.is_running || letter == 'R')
        return; /* on CPU, or about to be: nothing of the episode to tell */
    unsigned kind = letter == 'S'                   ? PROF_STATE_SLEEPING
                    : letter == 'D'                 ? PROF_STATE_DISK
                    : letter == 'T' || letter == 't' ? PROF_STATE_STOPPED
                                                    : PROF_STATE_WAITING;
    t->pending = (struct look){.at_ns = at, .state = PROF_STATE_MAKE(kind, nr >= 0 ? nr : -1),
                               .pc = (uint64_t)pc, .cpu_ns = cpu_ns};
}

/* Looks at the threads whose last record read says they left the CPU by themselves, still
 * waiting now as far as the rings tell: the look is taken as soon as the records are, and
 * settle() gives it to the episode its time falls in once that episode is applied. */
static unsigned look_new(unsigned looks)
{
    for (size_t i = wall.n_ev; i-- > 0 && looks < WALL_LOOKS_MAX;) {
        struct event *e = &wall.ev[i];
        if (e->kind != EV_OUT || e->is_looked)
            continue;
        int is_last = 1;
        for (size_t j = i + 1; j < wall.n_ev && is_last; j++)
            is_last = wall.ev[j].tid != e->tid;
        struct thr *t = is_last ? thr_get(e->tid, 1) : NULL;
        e->is_looked = 1;
        if (t == NULL || t->dead_ns)
            continue;
        look(t);
        looks++;
    }
    return looks;
}

unsigned lp_wall_serve(struct lp_writer *w, int sampling, int all, int *busy)
{
    if (!wall.is_on)
        return 0;
    uint64_t cut = cmn_clock_ns(CLOCK_MONOTONIC) - WALL_SLACK_NS;
    for (unsigned i = 0; i < wall.n_rings; i++)
        if (read_ring(&wall.rings[i]) && busy)
            *busy = 1;
    qsort(wall.ev, wall.n_ev, sizeof(*wall.ev), by_time);
    unsigned n = 0;
    size_t done = 0;
    wall.n_blind = 0;
    for (; done < wall.n_ev && wall.ev[done].time_ns < cut; done++) {
        n += apply(w, &wall.ev[done], sampling);
        free(wall.ev[done].raw);
    }
    memmove(wall.ev, wall.ev + done, (wall.n_ev - done) * sizeof(*wall.ev));
    wall.n_ev -= done;
    /* Episodes still going: weight every second (or now, at the end of a file), a look at
     * /proc for the new ones. */
    unsigned looks = 0;
    for (size_t i = 0; i < wall.cap_thr; i++) {
        struct thr *t = &wall.thr[i];
        if (t->tid && t->dead_ns && cut - t->dead_ns > WALL_PAY_NS) {
            thr_remove(t);
            i--; /* an entry may have moved into this slot */
            continue;
        }
        if (!t->tid || !t->is_off)
            continue;
        settle(t, cut);
        if (all || cut - t->paid_ns >= WALL_PAY_NS || !sampling) {
            if (ran_since_look(t)) {
                end_episode(t); /* its end went missing: it is left where it was paid */
                continue;
            }
            settle(t, cut);
            n += pay(w, t, cut, sampling);
        }
        if (!t->is_looked && !t->is_preempted && t->pending.at_ns == 0 &&
            looks < WALL_LOOKS_MAX) {
            look(t);
            looks++;
        }
    }
    look_new(looks);
    /* Waits shorter than the writer's period ended unlooked at: look sooner, for half a
     * second after the last (a program that parks threads for long, or does not wait, is
     * left alone). */
    if (wall.n_blind > 0)
        wall.fast_until = cut + WALL_FAST_NS;
    if (cut < wall.fast_until && busy)
        *busy = 1;
    if (n)
        lp_writer_end_samples(w);
    return n;
}
