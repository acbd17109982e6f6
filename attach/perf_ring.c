/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The perf_event counters and rings of `prof record -p` (see perf_ring.h).
 *
 * The kernel lets inherited counters write into a mapped ring only when they are bound to a
 * CPU, so a thread has one counter per CPU, and each CPU has one ring: the buffer of the
 * first counter opened on it, into which the others on that CPU are redirected
 * (PERF_EVENT_IOC_SET_OUTPUT). A ring is a metadata page, then a power-of-two data area the
 * kernel appends records to (data_head) and prof consumes (data_tail). Records:
 *
 *   sample, default            header | id | pid tid | time | abi regs[N_REGS] | size stack dyn
 *   sample, --unwind kernel header | id | pid tid | time | nr ips[nr]
 *   any other                  header | body | pid tid | time | id         (sample_id_all)
 *
 * The id is the counter's that was opened, also in the records of the threads that
 * inherited it (PERF_SAMPLE_IDENTIFIER), so each record says through whose counters it
 * came. The rings are read by common/perf_ring.h and the records decoded by
 * common/perf_record.h.
 */
#include "attach/perf_ring.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "arch/arch.h"
#include "attach/procstat.h"
#include "common/check.h"
#include "common/err.h"
#include "common/grow.h"
#include "common/ranges.h"

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

#define RING_BUDGET_BYTES (64u << 20) /* all rings together, shared out over the CPUs */
#define RING_MAX_BYTES (2u << 20)     /* one ring at most: about 60 samples with stacks */
#define RING_MIN_BYTES (128u << 10)   /* one ring at least: 3 samples with stacks */
#define KERNEL_RING_DIV 16u /* --unwind kernel: samples of 1 KiB or less, rings 16x smaller */

/* An integer from a one-line /proc file (a sysctl), or fallback. */
static long read_proc_long(const char *path, long fallback)
{
    char v[64];
    return att_proc_read(path, v, sizeof(v)) > 0 ? strtol(v, NULL, 10) : fallback;
}

/* ---- opening the counters ---- */

/* The one line that says why the kernel refused to sample the process. */
static int permission_error(pid_t pid, struct cmn_err *err)
{
    long paranoid = read_proc_long("/proc/sys/kernel/perf_event_paranoid", 2);
    if (paranoid >= 3 && !att_proc_has_cap(CAP_PERFMON) && !att_proc_has_cap(CAP_SYS_ADMIN))
        return cmn_err_set(err, CMN_E_INPUT,
                           "cannot sample process %d: perf_event_paranoid is %ld (unprivileged "
                           "perf_event_open disabled); run as root or set "
                           "kernel.perf_event_paranoid to 2 or lower",
                           (int)pid, paranoid);
    unsigned euid;
    if (!att_proc_has_cap(CAP_SYS_PTRACE) && att_proc_is_other_user(pid, &euid))
        return cmn_err_set(err, CMN_E_INPUT,
                           "cannot sample process %d: it belongs to another user (uid %u) and "
                           "prof runs as uid %u; run prof as that user or as root",
                           (int)pid, euid, (unsigned)geteuid());
    return cmn_err_set(err, CMN_E_INPUT,
                       "cannot sample process %d: permission denied (a set-uid, set-capability "
                       "or non-dumpable process?); run prof as root",
                       (int)pid);
}

static int open_error(const struct att_pring *p, int e, struct cmn_err *err)
{
    if (e == EACCES || e == EPERM)
        return permission_error(p->pid, err);
    if (e == EMFILE || e == ENFILE)
        return cmn_err_set(err, CMN_E_INPUT,
                           "cannot sample process %d: it needs a descriptor per thread and CPU, "
                           "and prof's open-file limit is reached (ulimit -n)",
                           (int)p->pid);
    if (e == ENOENT || e == ENODEV || e == EOPNOTSUPP)
        return cmn_err_set(err, CMN_E_INPUT,
                           "cannot sample process %d: this kernel has no task-clock perf_event "
                           "(%s)",
                           (int)p->pid, strerror(e));
    return cmn_err_set(err, CMN_E_INPUT, "cannot sample process %d: perf_event_open: %s",
                       (int)p->pid, strerror(e));
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

static void fill_attr(struct att_pring *p, unsigned hz, unsigned max_depth)
{
    struct perf_event_attr *a = &p->attr;
    memset(a, 0, sizeof(*a));
    a->size = sizeof(*a);
    a->type = PERF_TYPE_SOFTWARE;
    a->config = PERF_COUNT_SW_TASK_CLOCK; /* the thread's CPU time, like libprof's timers */
    /* A clock event turns the frequency into a fixed period of 1/hz of CPU time. */
    a->freq = 1;
    a->sample_freq = hz;
    a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    if (p->is_kernel_callchain) {
        a->sample_type |= PERF_SAMPLE_CALLCHAIN;
        a->exclude_callchain_kernel = 1;
        /* One frame more than kept: a chain that has it was cut by the depth limit. */
        a->sample_max_stack = (uint16_t)(max_depth + (max_depth < p->max_stack));
    } else {
        a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
        a->sample_regs_user = ARCH_PERF_REGS_MASK;
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
    a->wakeup_events = 1; /* each sample wakes prof, which draws the counter's next
                           * interval (attach/jitter.h) */
}

/* A counter on thread tid and CPU cpu; its descriptor, or -errno. */
static int open_counter(struct att_pring *p, pid_t tid, int cpu)
{
    for (;;) {
        long fd = syscall(SYS_perf_event_open, &p->attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd >= 0)
            return (int)fd;
        int e = errno;
        if (e == EINVAL && (p->attr.inherit_thread || p->attr.remove_on_exec)) {
            /* A kernel before 5.13: child processes' samples are dropped by pid, and exec
             * is seen from its COMM record. */
            p->attr.inherit_thread = 0;
            p->attr.remove_on_exec = 0;
            continue;
        }
        if (e == EMFILE && raise_fd_limit())
            continue;
        return -e;
    }
}

/* Keeps a new counter, in id order. */
static int keep_counter(struct att_pring *p, int fd, pid_t tid, struct cmn_err *err)
{
    uint64_t id;
    if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0)
        return cmn_err_set(err, CMN_E_INPUT, "cannot sample process %d: PERF_EVENT_IOC_ID: %s",
                           (int)p->pid, strerror(errno));
    if (!CMN_GROW(p->counters, p->cap_counters, p->n_counters + 1, 64))
        return cmn_err_nomem(err);
    size_t at = p->n_counters;
    while (at > 0 && p->counters[at - 1].id > id)
        at--;
    memmove(&p->counters[at + 1], &p->counters[at], (p->n_counters - at) * sizeof(*p->counters));
    p->counters[at] = (struct att_pring_counter){.fd = fd, .tid = tid, .id = id};
    p->n_counters++;
    p->n_live++;
    return CMN_OK;
}

/* ---- the rings ---- */

static size_t ring_min_bytes(const struct att_pring *p)
{
    size_t min = p->is_kernel_callchain ? RING_MIN_BYTES / KERNEL_RING_DIV : RING_MIN_BYTES;
    return min > p->page_bytes ? min : p->page_bytes;
}

/* Maps the ring of counter fd. An unprivileged user may lock perf_event_mlock_kb per CPU,
 * then up to RLIMIT_MEMLOCK: past that the mapping fails with EPERM, and smaller rings
 * (which lose samples sooner in a burst) are tried down to the minimum. 0 or -errno. */
static int map_ring(struct att_pring *p, struct att_pring_buf *r, int fd)
{
    for (;;) {
        size_t bytes = p->page_bytes + p->ring_bytes;
        void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m != MAP_FAILED) {
            *r = (struct att_pring_buf){.fd = fd,
                                        .meta = m,
                                        .data = (unsigned char *)m + p->page_bytes,
                                        .data_bytes = p->ring_bytes,
                                        .map_bytes = bytes};
            return 0;
        }
        int e = errno;
        if ((e != EPERM && e != ENOMEM) || p->ring_bytes / 2 < ring_min_bytes(p))
            return -e;
        p->ring_bytes /= 2;
    }
}

/* Makes counter fd write into the ring of CPU k, mapping it if it is the first. 0 or an
 * CMN_E_* with the message. */
static int join_ring(struct att_pring *p, size_t k, int fd, pid_t tid, struct cmn_err *err)
{
    struct att_pring_buf *r = &p->rings[k];
    if (r->fd >= 0) {
        if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) == 0)
            return CMN_OK;
        return cmn_err_set(err, CMN_E_INPUT,
                           "cannot sample process %d: PERF_EVENT_IOC_SET_OUTPUT: %s", (int)p->pid,
                           strerror(errno));
    }
    int e = map_ring(p, r, fd);
    if (e == -EPERM || e == -ENOMEM)
        return cmn_err_set(err, CMN_E_INPUT,
                           "cannot sample process %d: no locked memory left for the sample "
                           "buffer of CPU %d (thread %d; see kernel.perf_event_mlock_kb and "
                           "ulimit -l); run as root, or try --unwind kernel, whose buffers "
                           "are smaller",
                           (int)p->pid, p->cpus[k], (int)tid);
    if (e != 0)
        return cmn_err_set(err, CMN_E_INPUT, "cannot sample process %d: mmap: %s", (int)p->pid,
                           strerror(-e));
    return CMN_OK;
}

/* ---- the online CPUs ---- */

int att_pring_push_int(int **out, size_t *n, size_t *cap, int v)
{
    if (!CMN_GROW(*out, *cap, *n + 1, 64))
        return -ENOMEM;
    (*out)[(*n)++] = v;
    return 0;
}

/* The online CPUs, from /sys/devices/system/cpu/online ("0-3,8"), else 0 to the count. */
static int list_cpus(int **cpus, size_t *n)
{
    char v[4096];
    size_t cap = 0;
    int rc = 0;
    *cpus = NULL;
    *n = 0;
    if (att_proc_read("/sys/devices/system/cpu/online", v, sizeof(v)) > 0) {
        for (char *p = v; rc == 0 && *p >= '0' && *p <= '9';) {
            long lo = strtol(p, &p, 10), hi = lo;
            if (*p == '-')
                hi = strtol(p + 1, &p, 10);
            for (long c = lo; rc == 0 && c <= hi; c++)
                rc = att_pring_push_int(cpus, n, &cap, (int)c);
            if (*p == ',')
                p++;
        }
    }
    long count = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; rc == 0 && *n == 0 && c < (count > 0 ? count : 1); c++)
        rc = att_pring_push_int(cpus, n, &cap, (int)c);
    return rc;
}

/* ---- the counters and rings of a process ---- */

int att_pring_init(struct att_pring *p, pid_t pid, unsigned hz, unsigned *max_depth,
                   bool is_kernel_callchain, struct cmn_err *err)
{
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    p->is_kernel_callchain = is_kernel_callchain;
    p->page_bytes = (size_t)sysconf(_SC_PAGESIZE);
    long max_hz = read_proc_long("/proc/sys/kernel/perf_event_max_sample_rate", 100000);
    if ((long)hz > max_hz)
        return cmn_err_set(err, CMN_E_INPUT,
                           "cannot sample at %u Hz: kernel.perf_event_max_sample_rate is %ld", hz,
                           max_hz);
    if (p->is_kernel_callchain) {
        /* The kernel refuses a longer chain than kernel.perf_event_max_stack. */
        long max_stack = read_proc_long("/proc/sys/kernel/perf_event_max_stack", 127);
        p->max_stack = max_stack > 0 && max_stack < UINT16_MAX ? (unsigned)max_stack : 127u;
        if (*max_depth > p->max_stack)
            *max_depth = p->max_stack;
    }
    fill_attr(p, hz, *max_depth);
    if (list_cpus(&p->cpus, &p->n_cpus) != 0)
        return cmn_err_nomem(err);
    p->rings = malloc(p->n_cpus * sizeof(*p->rings));
    for (size_t k = 0; p->rings != NULL && k < p->n_cpus; k++)
        p->rings[k] = (struct att_pring_buf){.fd = -1};
    /* The budget shared out over the CPUs, within the bounds. */
    size_t min = ring_min_bytes(p);
    p->ring_bytes = p->is_kernel_callchain ? RING_MAX_BYTES / KERNEL_RING_DIV : RING_MAX_BYTES;
    while (p->ring_bytes / 2 >= min && p->ring_bytes * p->n_cpus > RING_BUDGET_BYTES)
        p->ring_bytes /= 2;
    p->wrap = malloc(ATT_PRING_RECORD_MAX);
    if (p->rings == NULL || p->wrap == NULL)
        return cmn_err_nomem(err);
    return CMN_OK;
}

void att_pring_fini(struct att_pring *p)
{
    if (p == NULL)
        return;
    if (p->rings != NULL)
        att_pring_close(p);
    free(p->cpus);
    free(p->rings);
    free(p->counters);
    free(p->wrap);
}

int att_pring_open(struct att_pring *p, pid_t tid, size_t k, struct cmn_err *err)
{
    int fd = open_counter(p, tid, p->cpus[k]);
    if (fd == -ESRCH)
        return CMN_E_NOTFOUND;
    if (fd < 0)
        return open_error(p, -fd, err);
    int rc = keep_counter(p, fd, tid, err);
    if (rc != CMN_OK) {
        close(fd);
        return rc;
    }
    return join_ring(p, k, fd, tid, err);
}

const struct att_pring_counter *att_pring_counter_of(const struct att_pring *p, uint64_t id)
{
    size_t i = CMN_RANGE_UPPER(p->counters, p->n_counters, id, id);
    return i > 0 && p->counters[i - 1].id == id ? &p->counters[i - 1] : NULL;
}

/* Every counter that writes into a ring is woken with it, so any one of them answers;
 * those that hung up would answer at once, and are left out. */
void att_pring_wait(struct att_pring *p, struct pollfd *fds, size_t *which, uint64_t wait_ns,
                    const sigset_t *wait_mask)
{
    struct timespec ts = {(time_t)(wait_ns / 1000000000u), (long)(wait_ns % 1000000000u)};
    nfds_t n = 0;
    for (size_t i = 0; i < p->n_counters; i++) {
        if (!p->counters[i].is_hup) {
            fds[n] = (struct pollfd){.fd = p->counters[i].fd, .events = POLLIN};
            which[n++] = i;
        }
    }
    int ready = ppoll(fds, n, &ts, wait_mask);
    for (nfds_t k = 0; ready > 0 && k < n; k++) {
        if (fds[k].revents & POLLHUP) {
            p->counters[which[k]].is_hup = true;
            p->n_live--;
        }
    }
}

uint64_t att_pring_close(struct att_pring *p)
{
    uint64_t cpu_ns = 0;
    for (size_t k = 0; k < p->n_cpus; k++) {
        if (p->rings[k].fd >= 0)
            munmap(p->rings[k].meta, p->rings[k].map_bytes);
        p->rings[k].fd = -1;
    }
    for (size_t i = 0; i < p->n_counters; i++) {
        struct att_pring_counter *c = &p->counters[i];
        uint64_t task_clock_ns[1];
        if (c->fd >= 0 && read(c->fd, task_clock_ns, sizeof(task_clock_ns)) == sizeof(uint64_t))
            cpu_ns += task_clock_ns[0];
        if (c->fd >= 0)
            close(c->fd);
        c->fd = -1;
    }
    return cpu_ns;
}

/* ---- reading a ring ---- */

bool att_pring_read_begin(struct att_pring *p, size_t k, struct att_pring_reader *rd)
{
    struct att_pring_buf *r = &p->rings[k];
    if (r->fd < 0)
        return false;
    rd->wrap = p->wrap;
    cmn_pring_begin_at(&rd->ring, r->meta, r->data, r->data_bytes);
    return true;
}

const unsigned char *att_pring_read_next(struct att_pring_reader *rd, struct perf_event_header *h)
{
    uint64_t body;
    if (!cmn_pring_next(&rd->ring, h, &body))
        return NULL;
    const unsigned char *rec = cmn_pring_record(&rd->ring, h, body, rd->wrap);
    /* A whole record, in the ring's area or made whole in wrap. */
    assert(h->size >= sizeof(*h) &&
           (rec == rd->wrap ||
            (rec >= rd->ring.data && (uint64_t)(rec - rd->ring.data) + h->size <= rd->ring.size)));
    return rec;
}

void att_pring_read_end(struct att_pring_reader *rd)
{
    cmn_pring_end(&rd->ring);
}
