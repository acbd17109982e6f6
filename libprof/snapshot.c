/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Taking all-thread snapshots (see snapshot.h and sampler/snapshot.h).
 */
#include "libprof/snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/grow.h"
#include "common/proc.h"
#include "common/record.h"
#include "common/snap_calls.h"
#include "libprof/fd.h"
#include "libprof/libc.h"
#include "libprof/maps.h"
#include "libprof/process.h"
#include "libprof/unwind.h"
#include "sampler/snapshot.h"

#define LP_SNAP_MIN_SLOTS 64u
#define LP_SNAP_WRITING_MS 100u /* a thread caught mid-walk at the deadline gets this long */

static struct {
    pthread_mutex_t mu;  /* one snapshot at a time */
    int signo;           /* the snapshot signal, 0 = not installed */
    pid_t pid;           /* the process the handler was installed in */
    unsigned max_frames; /* per stack */
    unsigned served;     /* kill() snapshots written, for their file names */
} snap = { .mu = PTHREAD_MUTEX_INITIALIZER };

struct thread_info {
    pid_t tid;
    char state;                           /* the kernel's letter, 0 unknown */
    uint8_t status;                       /* PROF_SNAP_* */
    uint16_t syscall;                     /* PROF_SNAP_NOT_ASKED: the call it waits in */
    char name[PROF_THREAD_NAME_MAX];
};

/* The system call thread tid waits in when a handler would cut it short
 * (cmn_snap_calls, include/prof_record.h), else -1.
 * /proc/self/task/TID/syscall: "NR ARG1 ... ARG6 SP PC", or "running", or "-1 SP PC". */
static long cut_short_call(pid_t tid)
{
    struct cmn_proc_syscall sc;
    if (!cmn_proc_task_syscall(&lp_proc_self, tid, &sc) || sc.nr < 0)
        return -1;
    return cmn_snap_call_name(sc.nr) != NULL ? sc.nr : -1;
}

int lp_snapshot_install(int signo, unsigned max_frames, smp_sigaction_fn *sigaction_fn)
{
    if (snap.signo == signo)
        return 0;
    struct sigaction old;
    int rc = smp_install(signo, smp_snap_handler, &old, sigaction_fn);
    if (rc != 0)
        return rc;
    smp_app_action_store(&smp_snap.app, &old);
    snap.signo = signo;
    snap.pid = getpid();
    snap.max_frames = max_frames;
    return 0;
}

void lp_snapshot_fork_child(void)
{
    /* The child has one thread, in none of our handlers, taking no snapshot. */
    pthread_mutex_init(&snap.mu, NULL);
    for (unsigned i = 0; i < SMP_SNAP_PENDING_MAX; i++)
        atomic_store(&smp_snap.pending[i], 0);
    atomic_store(&smp_snap.region, NULL);
    smp_dbuf_reset(&smp_snap.app.dbuf);
    snap.pid = getpid();
}

int lp_snapshot_app_sigaction(int signo, const struct sigaction *act, struct sigaction *old)
{
    if (signo <= 0 || signo != snap.signo)
        return 0;
    struct sigaction was;
    smp_app_action_load(&smp_snap.app, &was);
    if (act)
        smp_app_action_store(&smp_snap.app, act);
    if (old)
        *old = was;
    return 1;
}

/* The kernel's state letter and the name of thread tid, from /proc. 0 when it is gone. */
static int read_thread(pid_t tid, struct thread_info *t)
{
    char buf[CMN_PROC_STAT_BYTES];
    t->tid = tid;
    t->state = 0;
    t->status = PROF_SNAP_NO_ANSWER;
    t->syscall = 0;
    t->name[0] = '\0';
    if (cmn_proc_read_file(&lp_proc_self, tid, "stat", buf, sizeof(buf)) <= 0)
        return 0;
    const char *rest = cmn_proc_stat_rest(buf);
    if (cmn_proc_stat_name(buf, t->name, sizeof(t->name)) && rest != NULL)
        t->state = rest[0];
    return 1;
}

/* The threads of the process but skip, into a malloc'd array. -errno or the count. */
static int list_threads(pid_t skip, struct thread_info **out)
{
    *out = NULL;
    struct cmn_proc_tasks it;
    int rc = cmn_proc_tasks_open(&lp_proc_self, &it);
    if (rc != 0)
        return rc;
    size_t n = 0, cap = 0;
    for (pid_t tid; (tid = cmn_proc_tasks_next(&it)) != 0;) {
        if (tid == skip)
            continue;
        if (!CMN_GROW(*out, cap, n + 1, 64)) {
            rc = -ENOMEM;
            break;
        }
        if (read_thread(tid, &(*out)[n]))
            n++;
    }
    cmn_proc_tasks_close(&it);
    if (rc != 0) {
        free(*out);
        *out = NULL;
        return rc;
    }
    return (int)n;
}

/* 1 when a thread is still walking into one of r's slots: a walk that outlived its
 * request's wait (its thread was descheduled or stopped). Such a slot is its writer's
 * until its walk ends; the region is not armed again. */
static int region_has_writer(struct smp_snap_region *r)
{
    unsigned n = atomic_load(&r->n_slots);
    for (unsigned i = 0; i < n && i < r->capacity; i++)
        if (smp_snap_state_kind(atomic_load(&smp_snap_slot_at(r, i)->state)) == SMP_SNAP_WRITING)
            return 1;
    return 0;
}

/* A region with room for n slots: the current one when it is big enough and no late walk
 * still writes into it, else a new one. The old one stays mapped: a late handler may still
 * read it (sampler/snapshot.h). */
static struct smp_snap_region *region_for(unsigned n)
{
    struct smp_snap_region *r = atomic_load(&smp_snap.region);
    if (r && r->capacity >= n && !region_has_writer(r))
        return r;
    unsigned cap = r && r->capacity > LP_SNAP_MIN_SLOTS ? r->capacity : LP_SNAP_MIN_SLOTS;
    while (cap < n)
        cap *= 2;
    size_t slot_bytes = sizeof(struct smp_snap_slot) + (size_t)snap.max_frames * sizeof(uint64_t);
    slot_bytes = (slot_bytes + 7u) & ~(size_t)7u;
    size_t bytes = sizeof(struct smp_snap_region) + slot_bytes * cap;
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return NULL;
    r = mem;
    r->slot_bytes = slot_bytes;
    r->capacity = cap;
    r->max_frames = snap.max_frames;
    atomic_store(&r->n_slots, 0);
    return r;
}

/* Asks thread tid for its stack. */
static int ask(pid_t tid)
{
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    si.si_signo = snap.signo;
    si.si_code = SI_QUEUE;
    si.si_pid = getpid();
    si.si_uid = getuid();
    si.si_value.sival_ptr = SMP_SNAP_COOKIE;
    return syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, snap.signo, &si) == 0 ? 0 : -errno;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)ms * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Sends the requests and waits for the answers; sets each thread's status. */
static void collect(struct smp_snap_region *r, struct thread_info *t, unsigned n,
                    lp_snapshot_idle_fn *idle)
{
    uint32_t gen = atomic_load(&smp_snap.gen) + 1;
    for (unsigned i = 0; i < n; i++) {
        struct smp_snap_slot *s = smp_snap_slot_at(r, i);
        s->tid = (uint32_t)t[i].tid;
        atomic_store_explicit(&s->state, smp_snap_state(gen, SMP_SNAP_WAITING), memory_order_relaxed);
    }
    atomic_store_explicit(&r->n_slots, n, memory_order_release);
    atomic_store_explicit(&smp_snap.region, r, memory_order_release);
    atomic_store_explicit(&smp_snap.gen, gen, memory_order_release);

    unsigned waiting = 0;
    for (unsigned i = 0; i < n; i++) {
        long call = t[i].state == 'S' ? cut_short_call(t[i].tid) : -1;
        if (call >= 0) {
            t[i].status = PROF_SNAP_NOT_ASKED;
            t[i].syscall = (uint16_t)call;
            uint32_t want = smp_snap_state(gen, SMP_SNAP_WAITING);
            atomic_compare_exchange_strong(&smp_snap_slot_at(r, i)->state, &want,
                                           smp_snap_state(gen, SMP_SNAP_IDLE));
            continue;
        }
        int rc = ask(t[i].tid);
        t[i].status = rc == 0 ? PROF_SNAP_NO_ANSWER : rc == -ESRCH ? PROF_SNAP_GONE
                                                                   : PROF_SNAP_FAILED;
        if (rc != 0) {
            uint32_t want = smp_snap_state(gen, SMP_SNAP_WAITING);
            atomic_compare_exchange_strong(&smp_snap_slot_at(r, i)->state, &want,
                                           smp_snap_state(gen, SMP_SNAP_IDLE));
        } else {
            waiting++;
        }
    }
    uint64_t deadline = cmn_clock_ns(CLOCK_MONOTONIC) + LP_SNAPSHOT_WAIT_MS * 1000000ull;
    for (unsigned tick = 0;; tick++) {
        unsigned done = 0;
        for (unsigned i = 0; i < n; i++)
            done += atomic_load_explicit(&smp_snap_slot_at(r, i)->state,
                                         memory_order_acquire) == smp_snap_state(gen, SMP_SNAP_DONE);
        if (done == waiting || cmn_clock_ns(CLOCK_MONOTONIC) >= deadline)
            break;
        /* The first answers come within microseconds: poll fast, then every millisecond. */
        if (tick < 20)
            sched_yield();
        else
            sleep_ms(1);
        if (idle)
            idle();
    }
    /* Give up the slots nobody answered; wait out a walk that is under way. */
    for (unsigned i = 0; i < n; i++) {
        struct smp_snap_slot *s = smp_snap_slot_at(r, i);
        uint32_t want = smp_snap_state(gen, SMP_SNAP_WAITING);
        if (atomic_compare_exchange_strong(&s->state, &want, smp_snap_state(gen, SMP_SNAP_IDLE)))
            continue;
        for (unsigned ms = 0; ms < LP_SNAP_WRITING_MS &&
                              atomic_load_explicit(&s->state, memory_order_acquire) ==
                                  smp_snap_state(gen, SMP_SNAP_WRITING);
             ms++)
            sleep_ms(1);
        if (atomic_load_explicit(&s->state, memory_order_acquire) == smp_snap_state(gen, SMP_SNAP_DONE))
            t[i].status = PROF_SNAP_OK;
    }
    /* A thread that did not answer may have exited meanwhile. */
    for (unsigned i = 0; i < n; i++) {
        struct thread_info now;
        if (t[i].status == PROF_SNAP_NO_ANSWER && !read_thread(t[i].tid, &now))
            t[i].status = PROF_SNAP_GONE;
    }
}

/* A growing buffer of records. */
struct out {
    unsigned char *buf;
    size_t len, cap;
    int failed;
};

static void *out_room(struct out *o, size_t need)
{
    if (o->failed)
        return NULL;
    if (!CMN_GROW(o->buf, o->cap, o->len + need, 65536)) {
        o->failed = 1;
        return NULL;
    }
    return o->buf + o->len;
}

static void out_put(struct out *o, size_t n)
{
    o->len += n;
}

/* The whole snapshot file into o. */
static void encode(struct out *o, uint64_t t0, struct smp_snap_region *r,
                   const struct thread_info *t, unsigned n)
{
    void *at;
    if ((at = out_room(o, sizeof(struct prof_file_header))))
        out_put(o, cmn_record_file_header(at, sizeof(struct prof_file_header)));
    struct prof_rec_process p = {
        .start_mono_ns = t0,
        .timer_source = PROF_TIMER_NONE,
        .unwinder = PROF_UNWIND_FP,
        .max_depth = (uint16_t)snap.max_frames,
    };
    char exe[PATH_MAX];
    size_t need = lp_process_describe(&p, exe);
    if ((at = out_room(o, need)))
        out_put(o, cmn_record_process(at, need, &p, exe));
    unsigned char *maps;
    size_t maps_len;
    if (lp_maps_collect(t0, &maps, &maps_len) > 0 && (at = out_room(o, maps_len))) {
        memcpy(at, maps, maps_len);
        out_put(o, maps_len);
    }
    free(maps);
    for (unsigned i = 0; i < n; i++) {
        need = cmn_record_size_str(sizeof(struct prof_rec_thread), strlen(t[i].name));
        if ((at = out_room(o, need)))
            out_put(o, cmn_record_thread(at, need, t0, (uint32_t)t[i].tid, t[i].name));
    }
    for (unsigned i = 0; i < n; i++) {
        need = sizeof(struct prof_rec_snapshot);
        if ((at = out_room(o, need)))
            out_put(o, cmn_record_snapshot(at, need, t0, (uint32_t)t[i].tid, t[i].status,
                                            t[i].state, t[i].syscall));
        if (t[i].status != PROF_SNAP_OK)
            continue;
        struct smp_snap_slot *s = smp_snap_slot_at(r, i);
        unsigned nf = s->rec.n_frames <= r->max_frames ? s->rec.n_frames : r->max_frames;
        s->rec.n_frames = (uint16_t)nf;
        need = sizeof(struct prof_rec_sample) + nf * sizeof(uint64_t);
        if ((at = out_room(o, need)))
            out_put(o, cmn_record_sample(at, need, &s->rec, s->frames));
    }
    if ((at = out_room(o, sizeof(struct prof_rec_hdr))))
        out_put(o, cmn_record_end(at, sizeof(struct prof_rec_hdr)));
}

/* Takes the snapshot and writes it to fd; snap.mu held. */
static int write_locked(int fd, pid_t skip_tid, lp_snapshot_idle_fn *idle)
{
    uint64_t t0 = cmn_clock_ns(CLOCK_MONOTONIC);
    struct thread_info *t;
    int n = list_threads(skip_tid, &t);
    if (n < 0)
        return n;
    struct smp_snap_region *r = n > 0 ? region_for((unsigned)n) : NULL;
    int rc = n > 0 && !r ? -ENOMEM : 0;
    if (rc == 0) {
        /* Every module's unwind table first: no walk of the snapshot stops at one that is
         * still to come. */
        lp_unwind_build_all();
        if (n > 0)
            collect(r, t, (unsigned)n, idle);
        struct out o = { 0 };
        encode(&o, t0, r, t, (unsigned)n);
        rc = o.failed ? -ENOMEM : lp_fd_write_all(fd, o.buf, o.len);
        free(o.buf);
    }
    free(t);
    return rc;
}

int lp_snapshot_write(int fd, pid_t skip_tid, lp_snapshot_idle_fn *idle)
{
    if (snap.signo == 0 || snap.pid != getpid())
        return -ENOSYS;
    /* The calling thread answers too: the API blocks every signal around our code, so let
     * the snapshot signal in for the length of the collection. */
    sigset_t ours, old;
    sigemptyset(&ours);
    sigaddset(&ours, snap.signo);
    lp_sigmask(SIG_UNBLOCK, &ours, &old);
    pthread_mutex_lock(&snap.mu);
    int rc = write_locked(fd, skip_tid, idle);
    pthread_mutex_unlock(&snap.mu);
    lp_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* Opens the answer file `prof stacks` made for nonce: it must be a regular, empty file of
 * this process's user, reached without following a link. -errno when it is not. */
static int open_answer_file(uint32_t nonce)
{
    char path[96];
    snprintf(path, sizeof(path), "/tmp/prof-stacks.%d.%u", (int)getpid(), nonce);
    int fd = lp_fd_open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0);
    if (fd < 0)
        return fd;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        st.st_size != 0) {
        lp_fd_close(fd);
        return -EPERM;
    }
    return fd;
}

/* Creates PROFILE.snapshot.N for a kill() request. */
static int create_snapshot_file(const char *profile_path)
{
    char path[PATH_MAX];
    for (unsigned tries = 0; tries < 1000; tries++) {
        unsigned n = ++snap.served;
        if (snprintf(path, sizeof(path), "%s.snapshot.%u", profile_path, n) >= (int)sizeof(path))
            return -ENAMETOOLONG;
        struct stat st;
        int fd = lp_fd_create(path, O_WRONLY | O_EXCL, &st, NULL);
        if (fd != -EEXIST)
            return fd;
    }
    return -EEXIST;
}

int lp_snapshot_serve(const char *profile_path, pid_t self_tid, lp_snapshot_idle_fn *idle)
{
    if (snap.signo == 0 || snap.pid != getpid())
        return 0;
    int served = 0;
    for (unsigned i = 0; i < SMP_SNAP_PENDING_MAX; i++) {
        uint64_t v = atomic_load_explicit(&smp_snap.pending[i], memory_order_acquire);
        if (v == 0)
            continue;
        /* An application thread taking one now: serve this request next period. */
        if (pthread_mutex_trylock(&snap.mu) != 0)
            break;
        int fd = (v & SMP_SNAP_FROM_PROF) ? open_answer_file((uint32_t)v)
                                          : create_snapshot_file(profile_path);
        if (fd >= 0) {
            write_locked(fd, self_tid, idle);
            lp_fd_close(fd);
        }
        pthread_mutex_unlock(&snap.mu);
        atomic_store_explicit(&smp_snap.pending[i], 0, memory_order_release);
        served++;
    }
    return served;
}
