/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The profiling session (see session.h), from constructor to destructor.
 *
 * Start, on the thread that runs the constructor (before main):
 *   config from PROF_* -> profile claimed and opened, header/process/mappings/name records
 *   buffered -> ring mapped -> this thread's stack bounds -> handler installed -> writer
 *   thread started (all signals blocked) -> timer armed.
 * Finish, at exit (the destructor runs after the application's atexit handlers), before
 * an exec, or on the writer thread once no application thread is left or PROF_DURATION
 * has passed (the program then runs on unprofiled), on whichever thread gets there first
 * (another thread that gets there meanwhile waits for it, bounded):
 *   sampling off -> timer disarmed -> wait for handlers in flight -> writer's buffer taken ->
 *   last drain -> thread names, mappings, stats, end record -> file closed.
 * The signal handler stays installed for good: a profiling signal still pending after the
 * timer is disarmed must never meet the signal's default action, which kills the process.
 *
 * fork: the pthread_atfork() prepare handler takes every lock libprof shares between
 * threads (the application's-action lock, the timer registry, the ring pool, the stepper
 * tables' refresh lock, the writer's post queue) and keeps handlers out of libunwind, so
 * that in the child nothing libprof shares is half updated or held by a thread that does
 * not exist there; the child handler releases them, clears the counts of handlers in
 * flight and of table readers, and starts the child's own session.
 *
 * The last thread: glibc ends a process whose last thread exits (pthread_exit() from main
 * and every other thread) with exit(0). The writer thread is a thread too, so it watches
 * for that: once no application thread is left it finishes the profile and ends, and glibc,
 * finding it the last, calls exit(0) as it would have.
 */
#include "libprof/session.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/resource.h>
#include <sys/single_threaded.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/proc.h"
#include "common/record.h"
#include "include/libprof/prof_format.h"
#include "libprof/config.h"
#include "libprof/creds.h"
#include "libprof/environ.h"
#include "libprof/fd.h"
#include "libprof/ksamples.h"
#include "libprof/labels.h"
#include "libprof/libc.h"
#include "libprof/log.h"
#include "libprof/maps.h"
#include "libprof/objects.h"
#include "libprof/otel.h"
#include "libprof/process.h"
#include "libprof/rings.h"
#include "libprof/snapshot.h"
#include "libprof/sigstacks.h"
#include "libprof/threads.h"
#include "libprof/timers.h"
#include "libprof/trampolines.h"
#include "libprof/unwind.h"
#include "libprof/wall.h"
#include "libprof/writer.h"
#include "sampler/codemap.h"
#include "sampler/defer.h"
#include "sampler/handler.h"
#include "sampler/install.h"
#include "sampler/ring.h"
#include "sampler/snapshot.h"
#include "sampler/timer_perf.h"
#include "sampler/toggle.h"

#define LP_QUIESCE_MS 200u   /* longest wait for handlers in flight and the writer thread */
#define LP_PATH_TRIES 100u   /* names tried for the profile before giving up */
#define LP_DRAIN_KEEP 32u    /* the application's own pending signals re-queued at exec */

/* LP_IDLE: PROF_START=0 and nothing started yet (no file, no writer thread, no handler,
 * no code map): the first prof_start() or prof_snapshot() starts the session, else the
 * thread that ends the process writes its profile (write_idle_profile()). */
enum lp_state { LP_OFF, LP_LIVE, LP_FINISHING, LP_DONE, LP_IDLE };

static struct {
    _Atomic int state;        /* enum lp_state; CAS LIVE -> FINISHING picks one finisher */
    pid_t pid;                /* the process that owns the session */
    struct lp_config cfg;     /* from the constructor, read-only after */
    struct lp_writer writer;  /* see writer.h for who owns it when */
    struct smp_ring ring;     /* the handler's ring, in ring_mem */
    void *ring_mem;           /* mmap'd; never unmapped while the handler is installed */
    size_t ring_bytes;
    uint64_t start_ns;        /* CLOCK_MONOTONIC at start */
    uint64_t start_cpu_ns;    /* CLOCK_PROCESS_CPUTIME_ID at start */
    char out_tmpl[PATH_MAX + 8]; /* the output template: PROF_OUTPUT, with ".%n" added for
                               * PROF_INTERVAL when it names no interval apart */
    unsigned file_seq;        /* PROF_INTERVAL: the current file's number (%n), from 0 */
    uint64_t file_start_ns;   /* when the current file began (CLOCK_MONOTONIC) */
    uint64_t file_start_real_ns; /* the same, CLOCK_REALTIME (%t) */
    uint64_t file_cpu_ns;     /* the process's CPU time then */
    uint64_t tail_samples;    /* the current file's samples when its provisional tail was
                               * made (set_provisional_tail()); the buffer's owner */
    uint64_t stats_base[PROF_STAT_N]; /* the counters when the current file began: each
                               * file's STATS say what happened in it; the buffer's owner */
    char **kept;              /* PROF_KEEP: the interval files written, oldest first */
    unsigned n_kept;
    int is_cut_failed;        /* a new interval file could not be opened: no more cuts */
    int toggle_signo;         /* PROF_TOGGLE_SIGNAL's handler is installed for it, 0 none;
                               * set once per process */
    char start_cwd[PATH_MAX]; /* the working directory at start: a relative PROF_OUTPUT is
                               * taken from it, for this process, its fork children and the
                               * programs it execs (libprof/interpose.c) */
    struct lp_timer_choice timer; /* the source, its signal and rate; from start */
    int installed_signo;      /* the signal our handler is installed for, 0 = none yet;
                               * under sig_mu once live */
    _Atomic int thread_signo; /* installed_signo when it is sent to each thread (perf and
                               * thread sources), else 0: lp_session_thread_signo() */
    pthread_mutex_t sig_mu;   /* serializes the application's sigaction() and setitimer()
                               * calls that touch our signals, and our moves between signals;
                               * taken with every signal blocked on the thread */
    _Atomic int app_threads;  /* application threads alive that started through our
                               * trampolines (main and pthread_create), for the last-thread
                               * watch; a hint, /proc/self/task decides */
    pid_t owner_tid;          /* the thread that owns the writer's buffer before the writer
                               * thread runs (the one that opens the profile) */
    struct lp_ksamples_ends kernel_ends; /* for kernel-time samples; from start */
    pthread_mutex_t cred_mu;  /* serializes the application's set*id calls (the writer takes
                               * on the caller's capabilities for each); taken first by the
                               * fork handler */
    int writer_securebits;    /* the writer thread's securebits: its creator's when it started,
                               * then what it took on (only it changes its own); cred_mu */
    int is_duration_over;     /* PROF_DURATION has passed: the writer thread finishes the
                               * profile and ends; written and read by the writer thread */
    _Atomic int is_quick_exit; /* a thread called _exit(): the writer thread finishes the
                                * profile while it waits (lp_session_before_quick_exit()) */
    int is_wall;              /* PROF_MODE=wall and the kernel's context-switch records
                               * come (libprof/wall.h); from start */
    int was_live_at_exec;     /* the session was live when an exec finished it: a failed exec
                               * starts it again (lp_session_after_failed_exec()) */
    int sampled_at_stop;      /* sampling was on when stop_sampling() stopped it: the last
                               * episodes off CPU are weighed; the finisher */
    int has_first_maps;       /* the current file holds the mappings and thread names its
                               * first samples are read with; the buffer's owner */
    int is_idle_child;        /* LP_IDLE in a fork child: its names start at PATH.PID */
    int is_in_fork;           /* a fork child's session starts in the fork's child handler */
    int was_idle_at_exec;     /* LP_IDLE when an exec wrote its profile: a failed exec goes
                               * back to it */
} session = {.sig_mu = PTHREAD_MUTEX_INITIALIZER, .cred_mu = PTHREAD_MUTEX_INITIALIZER};

extern char **environ;

/* When this process started (not this image: an exec keeps it), on CLOCK_REALTIME, from
 * /proc/self/stat's starttime (clock ticks after boot); 0 when unknown. */
static uint64_t process_start_real_ns(void)
{
    char *text = lp_fd_slurp("/proc/self/stat", NULL);
    if (!text)
        return 0;
    /* "pid (comm) state f4 ... f22": the fields after the last ')' start with field 3. */
    const char *at = strrchr(text, ')');
    unsigned long long ticks = 0;
    for (int field = 2; at && field < 22; field++)
        at = strchr(at + 1, ' ');
    if (at)
        ticks = strtoull(at + 1, NULL, 10);
    free(text);
    long hz = sysconf(_SC_CLK_TCK);
    if (!ticks || hz <= 0)
        return 0;
    uint64_t boot_real = cmn_clock_ns(CLOCK_REALTIME) - cmn_clock_ns(CLOCK_BOOTTIME);
    return boot_real + ticks * (1000000000ull / (uint64_t)hz);
}

static void write_process_record(void)
{
    struct prof_rec_process p = {
        .start_mono_ns = session.file_start_ns,
        .requested_hz = session.cfg.freq_hz,
        .effective_hz = session.timer.effective_hz,
        .timer_source = (uint16_t)session.timer.source,
        .unwinder = (uint16_t)session.cfg.unwinder,
        .max_depth = (uint16_t)session.cfg.max_depth,
        .mode = (uint16_t)session.cfg.mode,
    };
    char exe[PATH_MAX];
    size_t need = lp_process_describe(&p, exe);
    void *dst = lp_writer_reserve(&session.writer, need);
    if (dst)
        lp_writer_commit(&session.writer, cmn_record_process(dst, need, &p, exe));
}

static void write_labels_record(void);

/* The mappings and the threads' names at time_ns, for the samples of the current file:
 * written once it has samples (most short processes' files never do), or when it begins
 * while samples come (PROF_INTERVAL's next file). */
static void write_first_maps(uint64_t time_ns)
{
    lp_maps_write(&session.writer, time_ns, NULL);
    lp_threads_write_names(&session.writer, time_ns);
    session.has_first_maps = 1;
}

/* The first records of a file: who is profiled and how, and its labels; with_maps, the
 * mappings and the threads' names at time_ns too. */
static void write_preamble(uint64_t time_ns, int with_maps)
{
    write_process_record();
    write_labels_record();
    session.has_first_maps = 0;
    if (with_maps)
        write_first_maps(time_ns);
}

/* PROF_LABELS: every file of the run says them, right after its PROCESS record. */
static void write_labels_record(void)
{
    if (session.cfg.n_labels == 0)
        return;
    size_t need = cmn_record_labels_size(session.cfg.labels_bytes);
    void *dst = lp_writer_reserve(&session.writer, need);
    if (dst)
        lp_writer_commit(&session.writer,
                         cmn_record_labels(dst, need, session.cfg.n_labels,
                                           session.cfg.labels, session.cfg.labels_bytes));
}

/* The counters of the current file: those counted since it began (an interval's file says
 * what happened in it); the wall time and CPU time of its own span. With `take`, the next
 * file's count from here. */
static void file_counters(uint64_t c[PROF_STAT_N], int take)
{
    for (unsigned i = 0; i < PROF_STAT_N; i++) {
        uint64_t now = atomic_load_explicit(&smp_sampler.counters[i], memory_order_relaxed);
        c[i] = now - session.stats_base[i];
        if (take)
            session.stats_base[i] = now;
    }
    c[PROF_STAT_DURATION_NS] = cmn_clock_ns(CLOCK_MONOTONIC) - session.file_start_ns;
    /* This image's CPU time: the process's counts the images before an exec too. */
    c[PROF_STAT_CPU_NS] = cmn_clock_ns(CLOCK_PROCESS_CPUTIME_ID) - session.file_cpu_ns;
    c[PROF_STAT_UNWIND_BYTES] = lp_unwind_table_bytes(&c[PROF_STAT_UNWIND_MODULES]);
}

static void write_stats_record(void)
{
    uint64_t c[PROF_STAT_N];
    file_counters(c, 1);
    size_t need = sizeof(struct prof_rec_stats) + sizeof(c);
    void *dst = lp_writer_reserve(&session.writer, need);
    if (dst)
        lp_writer_commit(&session.writer, cmn_record_stats(dst, need, c, PROF_STAT_N));
}

/* The current file's counters so far, as its provisional tail (lp_writer_set_tail()): a
 * process that ends without libprof seeing it (killed; a Go program, which ends by
 * exit_group) leaves a file that ends with them. Made again only when the file took
 * samples since: a quiet process's periods cost no write. The buffer's owner. */
static void set_provisional_tail(void)
{
    if (session.writer.n_samples == session.tail_samples)
        return;
    session.tail_samples = session.writer.n_samples;
    uint64_t c[PROF_STAT_N];
    file_counters(c, 0);
    unsigned char rec[sizeof(struct prof_rec_stats) + sizeof(c)];
    size_t n = cmn_record_stats(rec, sizeof(rec), c, PROF_STAT_N);
    if (n > 0)
        lp_writer_set_tail(&session.writer, rec, n);
}

/* The writer thread did not finish the profile in time (stuck, see
 * lp_session_before_quick_exit()): the calling thread ends the file itself, with the
 * counters and the END record written straight to it. What the writer held is lost and
 * counted (PROF_STAT_UNWRITTEN). Async-signal-safe: _exit() may come from a handler. */
static void end_without_writer(void)
{
    uint64_t c[PROF_STAT_N];
    for (unsigned i = 0; i < PROF_STAT_N; i++)
        c[i] = atomic_load_explicit(&smp_sampler.counters[i], memory_order_relaxed) -
               session.stats_base[i];
    c[PROF_STAT_DURATION_NS] = cmn_clock_ns(CLOCK_MONOTONIC) - session.file_start_ns;
    c[PROF_STAT_CPU_NS] = cmn_clock_ns(CLOCK_PROCESS_CPUTIME_ID) - session.file_cpu_ns;
    c[PROF_STAT_UNWIND_BYTES] = c[PROF_STAT_UNWIND_MODULES] = 0; /* behind a lock */
    c[PROF_STAT_UNWRITTEN] = lp_writer_unwritten(&session.writer, c[PROF_STAT_SAMPLES]);
    unsigned char rec[sizeof(struct prof_rec_stats) + sizeof(c) + sizeof(struct prof_rec_hdr)];
    size_t n = cmn_record_stats(rec, sizeof(rec), c, PROF_STAT_N);
    n += cmn_record_end(rec + n, sizeof(rec) - n);
    struct stat st;
    int fd = session.writer.fd;
    if (n > 0 && fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == session.writer.dev &&
        st.st_ino == session.writer.ino)
        (void)lp_fd_write_all(fd, rec, n);
}

/* The records that end a file: thread names and the mappings (for the samples' threads and
 * pcs: not in a file without samples, such as most short processes'), the counters since
 * the last file, and the END record. */
static void write_file_tail(struct lp_writer *w, uint64_t now)
{
    if (w->n_samples > 0) {
        lp_threads_write_names(w, now);
        lp_maps_write(w, now, NULL);
    }
    write_stats_record();
    void *dst = lp_writer_reserve(w, sizeof(struct prof_rec_hdr));
    if (dst)
        lp_writer_commit(w, cmn_record_end(dst, sizeof(struct prof_rec_hdr)));
}

/* The stacks handlers keep for a later walk (sampler/defer.h): mapped once, its pages
 * touched only when a slot is used; a fork child's copy starts with every slot free.
 * Without it nothing is kept. */
static void map_defer_pool(void)
{
    if (atomic_load(&smp_defer_pool) != NULL) {
        smp_defer_reset();
        return;
    }
    void *p = mmap(NULL, SMP_DEFER_POOL_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED)
        atomic_store(&smp_defer_pool, (struct smp_defer *)p);
}

/* The writer's rewalk: a kept stack walked again by the kernel-time samples' walker, which
 * builds the tables it meets. */
static void rewalk_deferred(struct prof_rec_sample *rec, uint64_t *frames, unsigned cap,
                            uint32_t deferred)
{
    const struct smp_defer *d = smp_defer_get(deferred);
    if (d != NULL)
        lp_ksamples_rewalk(rec, frames, cap, d, &session.kernel_ends);
}

/* PROF_BUFFER_KB is shared out: a quarter (64 KiB at least) to the shared ring, the rest
 * to per-thread rings of LP_THREAD_RING_KB (libprof/rings.h). */
static int map_ring(void)
{
    if (session.ring_mem) {
        /* A fork child's copy: emptied (zeroed memory is an empty ring); the per-thread
         * rings were given back by the fork handler. */
        lp_rings_zero(session.ring_mem, session.ring_bytes);
        return smp_ring_init(&session.ring, session.ring_mem, session.ring_bytes,
                             session.cfg.max_depth);
    }
    size_t total = (size_t)session.cfg.buffer_kb * 1024u;
    session.ring_bytes =
        total / 4 > LP_MIN_BUFFER_KB * 1024u ? total / 4 : LP_MIN_BUFFER_KB * 1024u;
    /* A thread's ring holds 20 ms of its samples at least (four busy writer periods). */
    size_t per_ring = LP_THREAD_RING_KB * 1024u;
    while (per_ring / smp_ring_slot_bytes(session.cfg.max_depth) < session.cfg.freq_hz / 50u &&
           per_ring < total / 4)
        per_ring *= 2;
    size_t rest = total - (total > session.ring_bytes ? session.ring_bytes : total);
    if (lp_rings_init(rest / per_ring, per_ring, session.cfg.max_depth) != 0)
        return -ENOMEM;
    session.ring_mem = mmap(NULL, session.ring_bytes, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (session.ring_mem == MAP_FAILED) {
        session.ring_mem = NULL;
        return -errno;
    }
    int rc = smp_ring_init(&session.ring, session.ring_mem, session.ring_bytes,
                           session.cfg.max_depth);
    if (rc != 0) {
        munmap(session.ring_mem, session.ring_bytes);
        session.ring_mem = NULL;
    }
    return rc;
}

/* Waits until no handler is between its entry and exit; bounded. The caller cleared
 * `active` first (sequentially consistent, against the handler's in_flight/active). */
static void quiesce_handlers(void)
{
    for (unsigned i = 0; i < LP_QUIESCE_MS * 10; i++) {
        if (atomic_load(&smp_sampler.in_flight) == 0)
            return;
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

/* How a session starts (start_session()). */
enum start_mode {
    START_FIRST, /* the constructor: the timer source chosen, this thread's ring taken */
    START_CHILD, /* a fork child: its parent's choice, its name the parent's plus .PID */
    START_AGAIN, /* after an exec that failed: the choice made, the next free name */
};

static int start_session(enum start_mode mode, int sample_now);

/* While the writer thread waits for a snapshot's answers: samples keep moving. */
static void drain_while_waiting(void)
{
    int busy = 0;
    lp_rings_drain(&session.writer, &busy);
    lp_writer_drain(&session.writer, &session.ring);
}

/* 1 when no thread of the process but the writer is alive: no application thread we know
 * of, and /proc/self/task agrees (a thread started without pthread_create, or a zombie main
 * thread, is seen there). */
static int writer_is_alone(void)
{
    if (atomic_load(&session.app_threads) > 0)
        return 0;
    struct cmn_proc_tasks it;
    if (cmn_proc_tasks_open(&lp_proc_self, &it) != 0)
        return 0;
    int alone = 1;
    for (pid_t tid; alone && (tid = cmn_proc_tasks_next(&it)) != 0;) {
        if (tid == session.writer.tid)
            continue;
        char st = cmn_proc_task_state(&lp_proc_self, tid);
        alone = st == 0 || st == 'Z' || st == 'X';
    }
    cmn_proc_tasks_close(&it);
    return alone;
}

/* Moves the kernel-time samples into the profile; the writer buffer's owner. */
static size_t drain_kernel_samples(int *busy)
{
    lp_labels_calibrate(); /* the samples' times fall between two readings */
    return lp_timers_drain_kernel(&session.writer, &session.kernel_ends, session.cfg.max_depth,
                                  busy);
}

/* Everything waiting for the file, before it is cut or closed: records other threads
 * posted, every ring's samples, the kernel-time samples. The buffer's owner. */
static void drain_all(struct lp_writer *w)
{
    lp_writer_take_posts(w);
    lp_rings_drain(w, NULL);
    lp_writer_drain(w, &session.ring);
    drain_kernel_samples(NULL);
}

/* Where kernel-recorded chains end, and libprof's own code (libprof/ksamples.h). */
static void find_kernel_ends(struct lp_ksamples_ends *e)
{
    memset(e, 0, sizeof(*e));
    lp_trampolines_range(&e->lo, &e->hi);
    lp_unwind_code_range((uintptr_t)&smp_handler, &e->self_lo, &e->self_hi);
    e->signals[0] = session.timer.signo;
    e->signals[1] = session.cfg.snap_signo;
    e->signals[2] = session.cfg.toggle_signo;
}

/* 1 once PROF_DURATION has passed since this process's session started. */
static int duration_is_over(void)
{
    return session.cfg.duration_ns != 0 &&
           cmn_clock_ns(CLOCK_MONOTONIC) - session.start_ns >= session.cfg.duration_ns;
}

static int candidate_path(int is_child, unsigned k, char *path, size_t cap);
static uint64_t start_real_ns_for(const char *path);
static void keep_file(const char *path);
static void serve_toggles(void);

/* Whether the writer thread weighs the episodes off CPU now (wall mode). Not once a
 * finisher has begun: it stops sampling (stop_sampling()) before it stops the writer
 * thread, and a period of the writer's in between would take that for a pause and pass
 * the episodes' time over unweighted; the finisher weighs them (finish_profile()). The
 * state is set before sampling stops, and read here after `active` (acquire). */
static int wall_serves(void)
{
    return session.is_wall && atomic_load(&session.state) != LP_FINISHING;
}

/* PROF_INTERVAL: the current file is finished as at the end of a run (every sample taken
 * so far, the names, the mappings, its counters, END) and the profile goes on in the next
 * one, a file complete in itself. The writer thread, the buffer's owner. */
static void cut_profile(uint64_t now)
{
    struct lp_writer *w = &session.writer;
    drain_all(w);
    int sampling = atomic_load(&smp_sampler.active);
    if (wall_serves())
        lp_wall_serve(w, sampling, 1, NULL);
    write_file_tail(w, now);
    session.file_seq++;
    session.file_start_ns = now;
    session.file_start_real_ns = cmn_clock_ns(CLOCK_REALTIME);
    session.file_cpu_ns = cmn_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    char path[PATH_MAX];
    int rc = -EBUSY;
    for (unsigned k = 0; k < LP_PATH_TRIES && rc == -EBUSY; k++)
        if ((rc = candidate_path(0, k, path, sizeof(path))) == 0)
            rc = lp_writer_reopen(w, path, start_real_ns_for(path));
    if (rc != 0) {
        /* The old file goes on; its END is then not its last record. */
        session.is_cut_failed = 1;
        lp_note("PROF_INTERVAL: cannot create the next file (%s): the profile goes on in %s",
                strerror(-rc), w->path);
        return;
    }
    keep_file(path);
    write_preamble(now, 1);
    lp_writer_flush(w);
}

/* The time since the ring source's intervals were last drawn, which the next draw's
 * window is taken to be (the writer's period: LP_WRITER_PERIOD_MS, or its short one while
 * a ring fills), within one short period and one long. Writer thread. */
static uint64_t tend_window(void)
{
    static uint64_t last_ns;
    uint64_t now = cmn_clock_ns(CLOCK_MONOTONIC), was = last_ns;
    uint64_t lo = LP_WRITER_BUSY_PERIOD_MS * 1000000ull, hi = LP_WRITER_PERIOD_MS * 1000000ull;
    last_ns = now;
    if (was == 0 || now - was > hi)
        return hi;
    return now - was < lo ? lo : now - was;
}

/* The writer thread's periodic chores: serve snapshots, drain the per-thread rings, the
 * kernel-time rings and the context-switch records (wall mode), keep per-thread counters
 * alive, watch for the last application thread. */
static int on_writer_period(void)
{
    int busy = 0;
    int sampling = atomic_load_explicit(&smp_sampler.active, memory_order_acquire);
    serve_toggles();
    lp_unwind_serve();
    lp_snapshot_serve(session.writer.path, session.writer.tid, drain_while_waiting);
    lp_rings_drain(&session.writer, &busy);
    drain_kernel_samples(&busy);
    if (sampling)
        lp_timers_tend(tend_window());
    if (wall_serves())
        lp_wall_serve(&session.writer, sampling, 0, &busy);
    if (sampling)
        lp_timers_check();
    uint64_t now = cmn_clock_ns(CLOCK_MONOTONIC);
    if (!session.has_first_maps && session.writer.n_samples > 0)
        write_first_maps(now);
    if (lp_labels_tend(now))
        busy = 1; /* a thread's label history fills: read it sooner */
    if (session.cfg.interval_ns != 0 && !session.is_cut_failed &&
        now - session.file_start_ns >= session.cfg.interval_ns)
        cut_profile(now);
    if (writer_is_alone() || atomic_load(&session.is_quick_exit))
        return LP_WRITER_FINISH;
    set_provisional_tail();
    if (duration_is_over()) {
        session.is_duration_over = 1;
        return LP_WRITER_FINISH;
    }
    return busy ? LP_WRITER_BUSY : 0;
}

/* Stops the samples: `active` cleared, the kernel-time counters stopped (their rings kept
 * for the last drain), handlers in flight waited for. The timers are disarmed by
 * finish_profile(), after that drain. */
static void stop_sampling(void)
{
    session.sampled_at_stop = atomic_exchange(&smp_sampler.active, 0);
    lp_timers_pause_kernel();
    quiesce_handlers();
}

/* The last records and the file's close; by the buffer's owner, the writer thread stopped
 * or being it. */
static void finish_profile(void)
{
    struct lp_writer *w = &session.writer;
    uint64_t now = cmn_clock_ns(CLOCK_MONOTONIC);
    drain_all(w);
    if (session.is_wall) {
        lp_wall_serve(w, session.sampled_at_stop, 1, NULL);
        lp_wall_stop();
        session.is_wall = 0;
    }
    lp_timers_disarm_all();
    write_file_tail(w, now);
    lp_writer_close(w);
}

/* The writer thread found no application thread left, or PROF_DURATION passed
 * (LP_WRITER_FINISH). In the second case the program runs on without libprof's timers,
 * threads or file; the handlers stay installed, finding sampling off. */
static void finish_on_writer(void)
{
    int live = LP_LIVE;
    if (!atomic_compare_exchange_strong(&session.state, &live, LP_FINISHING))
        return;
    stop_sampling();
    session.owner_tid = (pid_t)syscall(SYS_gettid);
    session.writer.running = 0; /* this thread ends now; nobody joins it */
    if (session.is_duration_over)
        lp_note("PROF_DURATION (%.3f s) is over: the profile ends here; the program ran on",
                (double)session.cfg.duration_ns / 1e9);
    finish_profile();
    atomic_store(&session.state, LP_DONE);
}

/* Where notes go (libprof/log.h): a PROF_REC_NOTE in the profile. Posted while the writer
 * thread runs; written by the buffer's owner before it does; refused otherwise (no
 * profile open, or a thread that does not own the buffer). */
static int record_note(const char *text)
{
    struct lp_writer *w = &session.writer;
    unsigned char rec[LP_LOG_LINE_MAX + 32];
    size_t n = cmn_record_note(rec, sizeof(rec), cmn_clock_ns(CLOCK_MONOTONIC), text);
    if (!w->buf || n == 0)
        return -1;
    if (w->running)
        return lp_writer_post(w, rec, n) == 0 ? 0 : -1;
    if ((pid_t)syscall(SYS_gettid) != session.owner_tid)
        return -1;
    lp_writer_put_records(w, rec, n);
    return 0;
}

/* The calling thread's mask as the application's view (libprof/interpose.c): a per-thread
 * sampling signal it started with blocked (a program exec'd from a thread that blocked it)
 * stays blocked in its view and is unblocked for the kernel. */
static void adopt_mask(int signo)
{
    sigset_t cur;
    if (lp_sigmask(SIG_SETMASK, NULL, &cur) == 0 && sigismember(&cur, signo) == 1)
        lp_sigmask_as_view(signo, &cur);
}

/* Installs our handler for signo (once); the action it replaces becomes the application's
 * action, which the application keeps seeing and which gets its own signals. per_thread:
 * the signal is sent to each thread (the application's masks are then a view). */
static int install_handler(int signo, int per_thread)
{
    if (session.installed_signo == signo) {
        atomic_store(&session.thread_signo, per_thread ? signo : 0);
        return 0;
    }
    struct sigaction old;
    lp_libc_init();
    int rc = smp_install_handler(signo, &old, lp_libc.sigaction);
    if (rc != 0)
        return rc;
    smp_app_action_store(&smp_sampler.app, &old);
    session.installed_signo = signo;
    atomic_store(&session.thread_signo, per_thread ? signo : 0);
    if (per_thread)
        adopt_mask(signo);
    return 0;
}

/* PROF_TOGGLE_SIGNAL's handler (sampler/toggle.h), once per process (a fork child has
 * it); the action it replaces becomes the application's. */
static int install_toggle(int signo)
{
    if (session.toggle_signo == signo)
        return 0;
    struct sigaction old;
    lp_libc_init();
    int rc = smp_install(signo, smp_toggle_handler, &old, lp_libc.sigaction);
    if (rc != 0)
        return rc;
    smp_app_action_store(&smp_toggle.app, &old);
    session.toggle_signo = signo;
    return 0;
}

/* The toggle signal's requests (sampler/toggle.h): each turns sampling off when it is on
 * and on when it is off. The writer thread. */
static void serve_toggles(void)
{
    unsigned n = atomic_exchange_explicit(&smp_toggle.requests, 0, memory_order_acquire);
    if (n == 0)
        return;
    int on = atomic_load(&smp_sampler.active) ^ (int)(n & 1u);
    if ((n & 1u) && lp_session_set_active(on) == 0)
        lp_note("PROF_TOGGLE_SIGNAL: sampling turned %s", on ? "on" : "off");
}

/* fork: see the file comment. */
static void atfork_prepare(void)
{
    pthread_mutex_lock(&session.cred_mu);
    pthread_mutex_lock(&session.sig_mu);
    lp_timers_fork_prepare();
    lp_rings_fork_prepare();
    lp_unwind_fork_prepare();
    lp_log_fork_prepare();
    lp_writer_fork_prepare(&session.writer);
    lp_labels_fork_prepare();
}

static void atfork_parent(void)
{
    lp_labels_fork_parent();
    lp_writer_fork_parent(&session.writer);
    lp_log_fork_parent();
    lp_unwind_fork_parent();
    lp_rings_fork_parent();
    lp_timers_fork_parent();
    pthread_mutex_unlock(&session.sig_mu);
    pthread_mutex_unlock(&session.cred_mu);
}

/* In the child, which has one thread (this one, in none of our handlers), none of our
 * threads and no timers (neither is inherited by fork): everything shared is reset; the
 * child never writes into the parent's profile, and with PROF_FOLLOW=1 starts its own, in
 * its own file. */
static void atfork_child(void)
{
    lp_maps_fork_child();
    lp_writer_fork_child(&session.writer);
    lp_labels_fork_child();
    lp_log_fork_child();
    lp_unwind_fork_child();
    lp_rings_fork_child(smp_self.ring);
    lp_timers_fork_child();
    lp_wall_fork_child();
    session.is_wall = 0;
    atomic_store(&smp_toggle.requests, 0);
    smp_dbuf_reset(&smp_toggle.app.dbuf);
    session.kept = NULL; /* the parent's interval files are the parent's to remove */
    session.n_kept = 0;
    pthread_mutex_unlock(&session.sig_mu);
    pthread_mutex_unlock(&session.cred_mu);
    atomic_store(&smp_sampler.in_flight, 0);
    smp_dbuf_reset(&smp_sampler.app.dbuf);
    lp_snapshot_fork_child();
    atomic_store(&session.app_threads, 1);
    smp_self.tid = 0;

    int idle = LP_IDLE;
    if (atomic_compare_exchange_strong(&session.state, &idle, LP_DONE)) {
        /* An idle parent's child is idle in turn, in a file of its own at its end. */
        if (!session.cfg.follow)
            return;
        session.pid = getpid();
        session.start_ns = cmn_clock_ns(CLOCK_MONOTONIC);
        session.start_cpu_ns = cmn_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
        session.is_idle_child = 1;
        atomic_store(&session.state, LP_IDLE);
        return;
    }
    int live = LP_LIVE;
    if (!atomic_compare_exchange_strong(&session.state, &live, LP_DONE))
        return;
    int was_sampling = atomic_exchange(&smp_sampler.active, 0);
    lp_writer_forget(&session.writer);
    if (!session.cfg.follow)
        return;
    session.pid = getpid();
    session.start_ns = cmn_clock_ns(CLOCK_MONOTONIC);
    session.start_cpu_ns = cmn_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    for (unsigned i = 0; i < PROF_STAT_N; i++)
        atomic_store_explicit(&smp_sampler.counters[i], 0, memory_order_relaxed);
    session.is_in_fork = 1;
    int rc = start_session(START_CHILD, was_sampling);
    session.is_in_fork = 0;
    if (rc != 0) {
        lp_writer_close(&session.writer);
        atomic_store(&session.state, LP_DONE);
    }
}

/* PROF_KEEP: remembers path as the newest interval file, and removes the oldest beyond
 * the number to keep. */
static void keep_file(const char *path)
{
    unsigned keep = session.cfg.keep;
    if (session.cfg.interval_ns == 0 || keep == 0)
        return;
    if (!session.kept && !(session.kept = calloc(keep + 1, sizeof(char *))))
        return;
    session.kept[session.n_kept++] = strdup(path);
    if (session.n_kept <= keep)
        return;
    if (session.kept[0])
        unlink(session.kept[0]);
    free(session.kept[0]);
    memmove(session.kept, session.kept + 1, keep * sizeof(char *));
    session.n_kept--;
}

/* The k-th name tried for the profile: the expanded template, then, when it has no %p,
 * with ".PID" appended (a fork child starts there: never its parent's name), then with a
 * count. -EINVAL/-ENAMETOOLONG for a bad template. */
static int candidate_path(int is_child, unsigned k, char *path, size_t cap)
{
    char tmpl[PATH_MAX + 48];
    const char *out = session.out_tmpl;
    int has_pid = strstr(out, "%p") != NULL;
    if (is_child && !has_pid)
        k++;
    if (k == 0)
        snprintf(tmpl, sizeof(tmpl), "%s", out);
    else if (!has_pid)
        snprintf(tmpl, sizeof(tmpl), k == 1 ? "%s.%%p" : "%s.%%p.%u", out, k);
    else
        snprintf(tmpl, sizeof(tmpl), "%s.%u", out, k + 1);
    struct lp_path_vars v = {.pid = session.pid, .seq = session.file_seq,
                             .start_real_ns = session.file_start_real_ns};
    return lp_config_expand_path_vars(tmpl, &v, session.start_cwd, path, cap);
}

/* The output template (see session.out_tmpl). An interval's files are told apart by %n
 * or %t; a template with neither gets ".%n" at its end (app.prof.0, app.prof.1, ...),
 * where `prof report --family` finds them. */
static void make_out_tmpl(void)
{
    int is_cut = session.cfg.interval_ns != 0 && !lp_config_has_seq(session.cfg.output);
    snprintf(session.out_tmpl, sizeof(session.out_tmpl), is_cut ? "%s.%%n" : "%s",
             session.cfg.output);
}

/* process_start_real_ns() when a file with contents is at path, which the claim then looks
 * through for an earlier image's samples (libprof/writer.h); 0 when there is none, the
 * usual case: /proc/self/stat is not read for nothing. */
static uint64_t start_real_ns_for(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && st.st_size > 0 ? process_start_real_ns() : 0;
}

/* Opens the profile at the first name no other process owns (libprof/writer.h). */
static int open_profile(int is_child)
{
    make_out_tmpl();
    session.file_seq = 0;
    session.file_start_ns = session.start_ns;
    session.file_start_real_ns = cmn_clock_ns(CLOCK_REALTIME);
    session.file_cpu_ns = session.start_cpu_ns;
    memset(session.stats_base, 0, sizeof(session.stats_base));
    char path[PATH_MAX];
    int rc = -EBUSY;
    for (unsigned k = 0; k < LP_PATH_TRIES && rc == -EBUSY; k++) {
        rc = candidate_path(is_child, k, path, sizeof(path));
        if (rc != 0) {
            lp_log("PROF_OUTPUT='%.200s' is not a usable path template (%s); profiling "
                   "disabled", session.cfg.output,
                   rc == -EINVAL ? "unknown %-sequence" : "too long");
            return rc;
        }
        rc = lp_writer_open(&session.writer, path, start_real_ns_for(path));
    }
    if (rc != 0)
        lp_log("cannot create %s: %s; profiling disabled", path,
               rc == -EINVAL   ? "not a regular file"
               : rc == -ELOOP  ? "a symbolic link, not followed"
               : rc == -EEXIST ? "a file that is not a libprof profile is there; not "
                                 "overwritten"
                               : strerror(-rc));
    else
        keep_file(path);
    return rc;
}

/* The in-process stepper for PROF_UNWIND (libunwind's walks fall back to frame pointers). */
static unsigned walk_mode_of(unsigned unwinder)
{
    switch (unwinder) {
    case PROF_UNWIND_AUTO:
    case PROF_UNWIND_CHECK:
        return SMP_WALK_AUTO;
    case PROF_UNWIND_DWARF:
        return SMP_WALK_TABLES;
    default:
        return SMP_WALK_FP;
    }
}

/* PROF_MODE=wall: the context-switch events, on this thread (the session's first), which
 * every thread started from now on inherits (libprof/wall.h). Without them the profile is
 * of CPU time, and a note says why. */
static void start_wall(void)
{
    session.is_wall = 0;
    smp_sampler.running_state = 0;
    if (session.cfg.mode != PROF_MODE_WALL)
        return;
    int with_stacks = 0;
    int rc = lp_wall_start(session.cfg.freq_hz, session.cfg.max_depth, &session.kernel_ends,
                           &with_stacks);
    if (rc != 0) {
        lp_note("PROF_MODE=wall: the kernel gives no context-switch records here "
                "(perf_event_open: %s; see /proc/sys/kernel/perf_event_paranoid); the profile "
                "is of CPU time", strerror(-rc));
        session.cfg.mode = PROF_MODE_CPU;
        return;
    }
    if (!with_stacks)
        lp_note("PROF_MODE=wall: the kernel does not record stacks at context switches here "
                "(perf_event_paranoid above 1 without privileges): time off CPU has the pc the "
                "thread waits at, from /proc, or no stack");
    session.is_wall = 1;
    smp_sampler.running_state = PROF_STATE_RUNNING;
}

static int start_session_steps(enum start_mode mode, int sample_now)
{
    int is_child = mode == START_CHILD;
    int rc;
    /* The OpenTelemetry thread context is read where a thread is interrupted: by a
     * handler, which the ring source does not run (libprof/otel.h). */
    if (lp_otel_init() && session.cfg.timer == LP_TIMER_AUTO) {
        session.cfg.timer = PROF_TIMER_PERF;
        lp_note("the program publishes the OpenTelemetry thread context (otel_thread_ctx_v1): "
                "sampled by the perf source, whose handler reads it");
    }
    rc = mode != START_FIRST ? lp_timers_choose_inherited(&session.cfg, &session.timer)
                             : lp_timers_choose(&session.cfg, &session.timer);
    if (rc != 0) {
        lp_log("no timer source works here (%s); profiling disabled", strerror(-rc));
        return rc;
    }
    /* The stepper is ready before the handler exists (libprof/unwind.h). */
    unsigned unwinder = session.cfg.unwinder;
    if (lp_unwind_init(unwinder == PROF_UNWIND_CHECK ? PROF_UNWIND_LIBUNWIND : unwinder,
                       NULL) != 0) {
        lp_note("PROF_UNWIND=%s: libunwind is not available (libprof built without it, or "
                "libunwind.so.8 not installed); using unwind tables",
                unwinder == PROF_UNWIND_CHECK ? "check" : "libunwind");
        session.cfg.unwinder = PROF_UNWIND_AUTO;
    } else if (unwinder == PROF_UNWIND_CHECK) {
        lp_unwind_use_as_oracle();
        smp_sampler.check_unwind = 1;
    }
    if ((rc = open_profile(is_child)) != 0)
        return rc;
    session.owner_tid = (pid_t)syscall(SYS_gettid);
    lp_log_set_note_sink(record_note); /* the notes that waited, after the preamble */
    find_kernel_ends(&session.kernel_ends);
    start_wall();
    write_preamble(session.start_ns, 0);
    lp_writer_flush(&session.writer);

    map_defer_pool();
    if ((rc = map_ring()) != 0) {
        lp_log("cannot map a %u KiB sample buffer: %s; profiling disabled",
               session.cfg.buffer_kb, strerror(-rc));
        return rc;
    }
    smp_sampler.ring = &session.ring;
    if (mode == START_FIRST)
        smp_self.ring = lp_rings_take();
    smp_sampler.max_frames = session.cfg.max_depth;
    smp_sampler.walk_mode = walk_mode_of(session.cfg.unwinder);
    lp_trampolines_range(&smp_sampler.root_lo, &smp_sampler.root_hi);
    smp_sampler.source = session.timer.source;
    smp_sampler.period_ns = session.timer.period_ns;
    smp_sampler.interval_ns = session.timer.interval_ns;
    if (lp_sigstacks_init() != 0)
        lp_note("cannot map the spare stack for libprof's handler: threads that libprof did "
                "not start are not sampled");
    lp_thread_enter();
    if ((rc = install_handler(session.timer.signo,
                              session.timer.source != PROF_TIMER_ITIMER)) != 0) {
        lp_log("cannot install a handler for signal %d: %s; profiling disabled",
               session.timer.signo, strerror(-rc));
        return rc;
    }
    session.kernel_ends.sigreturn_pc = lp_ksamples_sigreturn_pc(session.timer.signo);
    if (session.cfg.snap_signo != 0 &&
        (rc = lp_snapshot_install(session.cfg.snap_signo, session.cfg.max_depth,
                                  lp_libc.sigaction)) != 0)
        lp_note("cannot install a handler for signal %d (PROF_SNAPSHOT_SIGNAL): %s; "
                "snapshots off", session.cfg.snap_signo, strerror(-rc));
    if (session.cfg.toggle_signo != 0 && (rc = install_toggle(session.cfg.toggle_signo)) != 0)
        lp_note("cannot install a handler for signal %d (PROF_TOGGLE_SIGNAL): %s; no toggle "
                "signal", session.cfg.toggle_signo, strerror(-rc));
    /* The ring source's random intervals are drawn once a writer period: a period of
     * LP_WRITER_DRAW_SAMPLES samples at most, as at 1000 Hz, so that a period's one
     * interval, whose samples fall at evenly spaced phases, spans as few of a program's
     * rounds at higher rates. */
    unsigned draw_ms = LP_WRITER_DRAW_SAMPLES * 1000u / session.cfg.freq_hz;
    session.writer.period_ms = draw_ms < LP_WRITER_BUSY_PERIOD_MS ? LP_WRITER_BUSY_PERIOD_MS
                               : draw_ms > LP_WRITER_PERIOD_MS    ? LP_WRITER_PERIOD_MS
                                                                  : draw_ms;
    session.writer.on_period = on_writer_period;
    session.writer.on_finish = finish_on_writer;
    session.writer.rewalk = rewalk_deferred;
    session.writer.unblock_signo = session.cfg.snap_signo;
    session.writer_securebits = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
    /* A process of one thread (glibc knows of no other; a fork child, in its fork, has one:
     * glibc does not say so there) arms this thread's timer alone, without listing
     * /proc/self/task (ITIMER_PROF is the process's). */
    int alone = (session.is_in_fork || __libc_single_threaded) &&
                session.timer.source != PROF_TIMER_ITIMER;
    lp_labels_session_start();
    if ((rc = lp_writer_start(&session.writer, &session.ring)) != 0) {
        lp_log("cannot start: %s; profiling disabled", strerror(-rc));
        return rc;
    }
    lp_wall_set_writer(session.writer.tid);
    /* A Go program's first samples' cgo calls are walked whole. Not in a fork child, which
     * has its parent's tables and runs in the fork: dl_iterate_phdr() takes the loader's
     * lock, which another thread of the parent may have held at the fork. */
    uintptr_t go_code;
    if (!is_child && lp_process_is_go(&go_code) && go_code != 0)
        lp_unwind_want_at(go_code);
    atomic_store(&session.state, LP_LIVE);
    if (sample_now && alone) {
        atomic_fetch_add(&smp_sampler.epoch, 1);
        atomic_store(&smp_sampler.active, 1);
        if (lp_timers_arm_self() != 0)
            lp_log("cannot arm the profiling timer");
    } else if (sample_now) {
        lp_session_set_active(1);
    }
    return 0;
}

static int start_session(enum start_mode mode, int sample_now)
{
    int rc = start_session_steps(mode, sample_now);
    lp_timers_drop_spare(); /* the timer trial's counters, when arming did not take them */
    return rc;
}

#define LP_IDLE_FILE_BYTES 8192u /* an idle profile: header, PROCESS, LABELS, STATS, END */

/* The timer source an idle profile names: the one PROF_TIMER asks for, auto's first
 * choice for auto (nothing was tried). */
static unsigned idle_timer_source(void)
{
    unsigned u = session.cfg.unwinder;
    if (session.cfg.timer != LP_TIMER_AUTO)
        return session.cfg.timer;
    return u == PROF_UNWIND_LIBUNWIND || u == PROF_UNWIND_CHECK ? PROF_TIMER_PERF
                                                                : PROF_TIMER_RING;
}

/* The profile of a session that never started (LP_IDLE): its file header, PROCESS, LABELS,
 * STATS and END, claimed and written at once by the thread that ends the process or execs.
 * Async-signal-safe, since _exit() may come from a handler: static buffers and system
 * calls only (the output template was expanded once at start, so a bad one was said then);
 * one caller at a time (the state's compare-and-swap). A file that cannot be made is left
 * unsaid: nothing may be written on the program's stderr from here. */
static void write_idle_profile(void)
{
    static unsigned char rec[LP_IDLE_FILE_BYTES];
    static char exe[PATH_MAX], path[PATH_MAX];
    struct prof_rec_process p = {
        .start_mono_ns = session.start_ns,
        .requested_hz = session.cfg.freq_hz,
        .timer_source = (uint16_t)idle_timer_source(),
        .unwinder = (uint16_t)session.cfg.unwinder,
        .max_depth = (uint16_t)session.cfg.max_depth,
        .mode = (uint16_t)session.cfg.mode,
    };
    size_t n = cmn_record_file_header(rec, sizeof(rec));
    size_t need = lp_process_describe(&p, exe);
    if (need <= sizeof(rec) - n)
        n += cmn_record_process(rec + n, need, &p, exe);
    need = cmn_record_labels_size(session.cfg.labels_bytes);
    if (session.cfg.n_labels > 0 && need <= sizeof(rec) - n)
        n += cmn_record_labels(rec + n, need, session.cfg.n_labels, session.cfg.labels,
                               session.cfg.labels_bytes);
    uint64_t c[PROF_STAT_N] = {0};
    c[PROF_STAT_DURATION_NS] = cmn_clock_ns(CLOCK_MONOTONIC) - session.start_ns;
    c[PROF_STAT_CPU_NS] = cmn_clock_ns(CLOCK_PROCESS_CPUTIME_ID) - session.start_cpu_ns;
    n += cmn_record_stats(rec + n, sizeof(rec) - n, c, PROF_STAT_N);
    n += cmn_record_end(rec + n, sizeof(rec) - n);
    int rc = -EBUSY;
    for (unsigned k = 0; k < LP_PATH_TRIES && rc == -EBUSY; k++)
        if ((rc = candidate_path(session.is_idle_child, k, path, sizeof(path))) == 0)
            rc = lp_writer_write_file_sigsafe(path, rec, n);
}

/* The session of a process that started idle, on its first prof_start() (sampling on) or
 * prof_snapshot() (off): started on the calling thread, an application thread outside any
 * handler. 0, or -errno (the session is then done, as a failed start at load is). A call
 * that meets another thread starting it waits for that start (bounded). */
static int start_from_idle(int sample_now)
{
    int idle = LP_IDLE;
    if (!atomic_compare_exchange_strong(&session.state, &idle, LP_OFF)) {
        for (unsigned i = 0; i < LP_QUIESCE_MS * 10 && atomic_load(&session.state) == LP_OFF;
             i++) {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
        return lp_session_live() ? 0 : -ESRCH;
    }
    int rc = start_session(session.is_idle_child ? START_CHILD : START_FIRST, sample_now);
    if (rc != 0) {
        lp_writer_close(&session.writer);
        atomic_store(&session.state, LP_DONE);
    }
    return rc;
}

/* PROF_START=0: the process loads idle. Only what a thread started now needs for later
 * samples is done (the handlers' stacks, this thread's stack bounds), and the output
 * template is tried; the rest waits for start_from_idle(). 0, or -errno (a bad template,
 * said on stderr as at any start). */
static int load_idle(void)
{
    char path[PATH_MAX];
    make_out_tmpl();
    session.file_start_real_ns = cmn_clock_ns(CLOCK_REALTIME);
    int rc = candidate_path(0, 0, path, sizeof(path));
    if (rc != 0) {
        lp_log("PROF_OUTPUT='%.200s' is not a usable path template (%s); profiling disabled",
               session.cfg.output, rc == -EINVAL ? "unknown %-sequence" : "too long");
        return rc;
    }
    if (lp_sigstacks_init() != 0)
        lp_note("cannot map the spare stack for libprof's handler: threads that libprof did "
                "not start are not sampled");
    lp_thread_enter();
    atomic_store(&session.state, LP_IDLE);
    return 0;
}

__attribute__((constructor)) static void lp_constructor(void)
{
    struct lp_config_msgs msgs = {0};
    lp_libc_init();
    session.pid = getpid();
    session.start_ns = cmn_clock_ns(CLOCK_MONOTONIC);
    session.start_cpu_ns = cmn_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    if (!getcwd(session.start_cwd, sizeof(session.start_cwd)))
        strcpy(session.start_cwd, "/");
    atomic_fetch_add(&session.app_threads, 1); /* the main thread */
    /* In secure execution (a set-user-ID, set-group-ID or file-capability program) nothing
     * comes from the environment of the user who started it: only the system
     * configuration file (libprof/config.h). */
    int is_secure = getauxval(AT_SECURE) != 0;
    lp_config_load_process(&session.cfg, environ, is_secure, LP_SYSCONF_PATH, &msgs);
    lp_fd_set_policy((mode_t)session.cfg.file_mode, session.cfg.owner_real);
    if (!is_secure && !session.cfg.follow && lp_env_parent_unfollowed())
        return; /* started by system() or popen() of a program profiled alone: silent */
    lp_log_open(session.cfg.log);
    for (int i = 0; i < msgs.n; i++) {
        if (msgs.is_note[i])
            lp_note("%s", msgs.text[i]);
        else
            lp_log("%s", msgs.text[i]);
    }
    if (!session.cfg.enabled)
        return;
    if (session.cfg.follow && !is_secure)
        lp_env_fix_output(environ, session.start_cwd);
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    /* Idle, unless a toggle signal may start it: its handler wakes the writer thread. */
    if (!session.cfg.start && session.cfg.toggle_signo == 0) {
        if (load_idle() != 0)
            atomic_store(&session.state, LP_DONE);
        return;
    }
    if (start_session(START_FIRST, session.cfg.start) != 0) {
        lp_writer_close(&session.writer);
        atomic_store(&session.state, LP_DONE);
    }
}

/* Blocks every signal on this thread, then takes sig_mu: the application's calls that
 * touch our signals may come from its own signal handlers, which must not find the lock
 * held by the code they interrupted. */
static void with_sig_lock(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    lp_sigmask(SIG_SETMASK, &all, old);
    pthread_mutex_lock(&session.sig_mu);
}

static void sig_unlock(const sigset_t *old)
{
    pthread_mutex_unlock(&session.sig_mu);
    lp_sigmask(SIG_SETMASK, old, NULL);
}

int lp_session_app_sigaction(int signo, const struct sigaction *act, struct sigaction *old)
{
    if (signo <= 0 || (signo != session.installed_signo && signo != session.cfg.snap_signo &&
                       signo != session.toggle_signo))
        return 0;
    sigset_t mask;
    with_sig_lock(&mask);
    int handled = lp_snapshot_app_sigaction(signo, act, old);
    if (!handled && signo == session.toggle_signo) {
        /* The toggle signal's action is the application's (sampler/toggle.h). */
        struct sigaction was;
        smp_app_action_load(&smp_toggle.app, &was);
        if (act)
            smp_app_action_store(&smp_toggle.app, act);
        if (old)
            *old = was;
        handled = 1;
    }
    int is_new_handler = 0;
    if (!handled && signo == session.installed_signo) {
        struct sigaction was;
        smp_app_action_load(&smp_sampler.app, &was);
        if (act) {
            smp_app_action_store(&smp_sampler.app, act);
            is_new_handler = act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN;
        }
        if (old)
            *old = was;
        handled = 1;
    }
    sig_unlock(&mask);
    static _Atomic int said;
    if (is_new_handler && !atomic_exchange(&said, 1))
        lp_note("the application sets a handler for signal %d, which libprof samples with; it "
                "gets every signal libprof did not send%s", signo,
                signo == SIGPROF ? "" : " (PROF_SIGNAL picks another signal)");
    return handled;
}

/* Consumes the pending instances of the signals in `set` on this thread (and those pending
 * for the process) that are ours, with the set blocked; the application's own are queued
 * again, with their siginfo, so that they stay pending as they were. The caller disarmed
 * our timers. */
static void drain_our_signals(const sigset_t *set)
{
    sigset_t old;
    lp_sigmask(SIG_BLOCK, set, &old);
    siginfo_t keep[LP_DRAIN_KEEP], si;
    unsigned n_keep = 0;
    struct timespec zero = {0, 0};
    int signo;
    while ((signo = sigtimedwait(set, &si, &zero)) > 0) {
        struct sigaction app;
        if (signo == session.toggle_signo)
            smp_app_action_load(&smp_toggle.app, &app);
        int ours = signo == session.toggle_signo      ? app.sa_handler == SIG_DFL
                   : signo == session.cfg.snap_signo ? smp_snap_signal_is_ours(&si, getpid())
                                                     : smp_signal_origin(&si) != SMP_SIGNAL_APP;
        if (!ours && n_keep < LP_DRAIN_KEEP)
            keep[n_keep++] = si;
    }
    for (unsigned i = 0; i < n_keep; i++)
        syscall(SYS_rt_tgsigqueueinfo, getpid(), (pid_t)syscall(SYS_gettid), keep[i].si_signo,
                &keep[i]);
    lp_sigmask(SIG_SETMASK, &old, NULL);
}

int lp_session_app_setitimer(int which)
{
    if (which != ITIMER_PROF || session.timer.source != PROF_TIMER_ITIMER || !lp_session_live())
        return 0;
    /* The process has one ITIMER_PROF: the application's. Ours moves to per-thread
     * timers on a real-time signal; SIGPROF goes back to the application. */
    sigset_t mask;
    with_sig_lock(&mask);
    int sampling = atomic_load(&smp_sampler.active);
    lp_timers_disarm_all();
    /* A tick of our timer still pending would reach the application's action, which may be
     * SIG_DFL (terminate): it is consumed first. */
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    drain_our_signals(&prof);
    struct sigaction app;
    smp_app_action_load(&smp_sampler.app, &app);
    lp_libc.sigaction(SIGPROF, &app, NULL);
    session.installed_signo = 0;
    atomic_store(&session.thread_signo, 0);
    struct lp_config cfg = session.cfg;
    cfg.timer = PROF_TIMER_THREAD;
    cfg.signo = 0;
    struct lp_timer_choice choice;
    int rc = lp_timers_choose(&cfg, &choice);
    if (rc == 0)
        rc = install_handler(choice.signo, 1);
    if (rc != 0) {
        atomic_store(&smp_sampler.active, 0);
        sig_unlock(&mask);
        lp_note("the application arms ITIMER_PROF, which libprof was using, and no other "
                "timer works here (%s): profiling stops", strerror(-rc));
        return 1;
    }
    session.timer = choice;
    smp_sampler.source = choice.source;
    smp_sampler.period_ns = choice.period_ns;
    smp_sampler.interval_ns = choice.interval_ns;
    if (sampling)
        lp_timers_arm_all(session.writer.tid);
    sig_unlock(&mask);
    lp_note("the application arms ITIMER_PROF, which libprof was using: libprof goes on with "
            "per-thread timers on signal %d", choice.signo);
    return 1;
}

void lp_session_thread_start(void)
{
    atomic_fetch_add(&session.app_threads, 1);
    if (!lp_session_live())
        return;
    smp_self.ring = lp_rings_take();
    if (lp_session_sampling())
        lp_timers_arm_self();
}

void lp_session_thread_exit(void)
{
    lp_timers_disarm_self();
    /* From here on the handler uses the shared ring: this one can be recycled once the
     * writer has emptied it. */
    struct smp_ring *r = smp_self.ring;
    smp_self.ring = NULL;
    atomic_signal_fence(memory_order_seq_cst);
    if (lp_session_live())
        lp_rings_retire(r);
    lp_session_post_thread_name();
    atomic_fetch_sub(&session.app_threads, 1);
}

int lp_session_follow(void)
{
    return session.cfg.follow;
}

const char *lp_session_start_cwd(void)
{
    return session.start_cwd;
}

int lp_session_sampling(void)
{
    return lp_session_live() && atomic_load_explicit(&smp_sampler.active, memory_order_acquire);
}

int lp_session_live(void)
{
    return atomic_load(&session.state) == LP_LIVE && getpid() == session.pid;
}

int lp_session_set_active(int on)
{
    if (atomic_load(&session.state) == LP_IDLE && getpid() == session.pid)
        return on ? start_from_idle(1) : 0;
    if (!lp_session_live())
        return -ESRCH;
    int rc = 0;
    if (on) {
        /* Every thread's CPU-time mark starts again (sampler/handler.h, epoch). */
        atomic_fetch_add(&smp_sampler.epoch, 1);
        atomic_store(&smp_sampler.active, 1);
        if (lp_timers_arm_all(session.writer.tid) == 0) {
            rc = -EAGAIN;
            lp_log("cannot arm the profiling timer");
        }
    } else {
        /* Sampling stops first: a handler re-arms its timer only while it runs, and
         * disarming waits for those in flight. */
        atomic_store(&smp_sampler.active, 0);
        lp_timers_pause_all();
    }
    return rc;
}

void lp_session_post(const void *records, size_t len)
{
    if (lp_session_live())
        lp_writer_post(&session.writer, records, len);
}

void lp_session_post_maps(void)
{
    if (!lp_session_live())
        return;
    unsigned char *recs;
    size_t len;
    if (lp_maps_collect(cmn_clock_ns(CLOCK_MONOTONIC), &recs, &len) > 0)
        lp_writer_post(&session.writer, recs, len);
    free(recs);
}

void lp_session_post_thread_name(void)
{
    char name[PROF_THREAD_NAME_MAX + 1] = {0};
    unsigned char rec[64];
    if (!lp_session_live() || prctl(PR_GET_NAME, name, 0, 0, 0) != 0)
        return;
    size_t n = cmn_record_thread(rec, sizeof(rec), cmn_clock_ns(CLOCK_MONOTONIC),
                                  (uint32_t)syscall(SYS_gettid), name);
    if (n)
        lp_writer_post(&session.writer, rec, n);
}

int lp_session_thread_signo(void)
{
    return atomic_load_explicit(&session.thread_signo, memory_order_relaxed);
}

int lp_session_flush(void)
{
    if (atomic_load(&session.state) == LP_IDLE)
        return 0; /* nothing taken, nothing to write */
    if (!lp_session_live())
        return -ESRCH;
    return lp_writer_sync(&session.writer, 1000);
}

/* Waits (bounded) while another thread finishes the profile: the writer thread when
 * PROF_DURATION passed just as the program exits or execs, whose end must not cut the
 * file short. */
static void wait_for_finisher(void)
{
    for (unsigned i = 0; i < LP_QUIESCE_MS * 10 && atomic_load(&session.state) == LP_FINISHING;
         i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

void lp_session_finish(void)
{
    int live = LP_LIVE, idle = LP_IDLE;
    if (getpid() != session.pid)
        return;
    if (atomic_compare_exchange_strong(&session.state, &idle, LP_DONE)) {
        write_idle_profile();
        return;
    }
    if (!atomic_compare_exchange_strong(&session.state, &live, LP_FINISHING)) {
        if (live == LP_FINISHING)
            wait_for_finisher();
        return;
    }
    stop_sampling();
    session.owner_tid = (pid_t)syscall(SYS_gettid); /* the buffer's, once taken */
    /* The writer thread is not woken, let alone joined (a wake-up and a join cost more
     * than a short process's whole profile): this thread takes its buffer once it is
     * parked, and the thread ends with the process, or when it next wakes. */
    if (lp_writer_take(&session.writer, LP_QUIESCE_MS) != 0) {
        /* The writer thread is stuck: its buffer is left alone, the file ends here. */
        end_without_writer();
        atomic_store(&session.state, LP_DONE);
        return;
    }
    finish_profile();
    atomic_store(&session.state, LP_DONE);
}

void lp_session_before_quick_exit(void)
{
    /* A vfork child runs in our memory with a pid of its own: it must leave all as it is. */
    int idle = LP_IDLE;
    if ((pid_t)syscall(SYS_getpid) == session.pid &&
        atomic_compare_exchange_strong(&session.state, &idle, LP_DONE)) {
        write_idle_profile();
        return;
    }
    if ((pid_t)syscall(SYS_getpid) != session.pid || atomic_load(&session.state) != LP_LIVE ||
        !__atomic_load_n(&session.writer.running, __ATOMIC_RELAXED) ||
        (pid_t)syscall(SYS_gettid) == session.writer.tid)
        return;
    /* From here on this thread's samples are of libprof's wait, not of the program. */
    smp_self.is_own_wait = 1;
    session.kernel_ends.own_since_ns = cmn_clock_ns(CLOCK_MONOTONIC);
    __atomic_store_n(&session.kernel_ends.own_tid, (uint32_t)syscall(SYS_gettid),
                     __ATOMIC_RELEASE);
    atomic_store(&session.is_quick_exit, 1);
    smp_writer_wake_up();
    /* At most about LP_QUIESCE_MS: a writer that cannot finish (its malloc() waiting on a
     * lock this thread holds, interrupted by the handler that calls _exit) is left behind,
     * its file cut at its last whole record as by a kill. */
    for (unsigned i = 0; i < LP_QUIESCE_MS * 10 && atomic_load(&session.state) != LP_DONE;
         i++) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    if (atomic_load(&session.state) != LP_DONE)
        end_without_writer();
}

void lp_session_before_exec(void)
{
    session.was_live_at_exec = lp_session_live();
    session.was_idle_at_exec = atomic_load(&session.state) == LP_IDLE && getpid() == session.pid;
    lp_session_finish();
    /* A signal of ours left pending and blocked on this thread would survive the exec and
     * meet the new program's default action (terminate) when it unblocks the signal. */
    sigset_t ours;
    sigemptyset(&ours);
    if (session.installed_signo > 0)
        sigaddset(&ours, session.installed_signo);
    if (session.cfg.snap_signo > 0)
        sigaddset(&ours, session.cfg.snap_signo);
    if (session.toggle_signo > 0)
        sigaddset(&ours, session.toggle_signo);
    if (session.installed_signo > 0 || session.cfg.snap_signo > 0 || session.toggle_signo > 0)
        drain_our_signals(&ours);
}

/* A set*id call's work on the writer thread (lp_session_before_setxid()). */
struct cred_change {
    struct lp_creds creds; /* the calling thread's, for the writer to take on */
    int creds_rc;          /* lp_creds_set()'s */
    uid_t euid;            /* the effective user and group the call gives, (uid_t)-1 and */
    gid_t egid;            /* (gid_t)-1 for no change */
    int is_chowned;        /* the profile was given to them; was holds its owner before */
    struct stat was;
};

/* On the writer thread: it takes on the calling thread's capabilities (glibc runs the
 * call on every thread and aborts when one fails) and gives the profile to the user and
 * group the call makes effective, while the process may still do so. */
static void writer_takes_creds(void *arg)
{
    struct cred_change *c = arg;
    c->creds_rc = lp_creds_set(&c->creds);
    session.writer_securebits = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
    c->is_chowned = (c->euid != (uid_t)-1 || c->egid != (gid_t)-1) &&
                    lp_writer_chown(&session.writer, c->euid, c->egid, &c->was) == 0;
}

/* On the writer thread: the call failed, the profile goes back to its owner. */
static void writer_gives_back(void *arg)
{
    struct cred_change *c = arg;
    lp_writer_chown(&session.writer, c->was.st_uid, c->was.st_gid, NULL);
}

static struct cred_change cred_change; /* cred_mu */

/* 1 when the writer thread may do all the calling thread may (c: the caller's): the same
 * capabilities, and the same securebits as far as ours are known (the creator's when the
 * writer started, then what it took on: only the writer changes its own). */
static int writer_has_creds(const struct lp_creds *c)
{
    struct lp_creds w;
    return lp_creds_caps_of(session.writer.tid, &w) == 0 &&
           memcmp(w.caps, c->caps, sizeof(w.caps)) == 0 && session.writer_securebits == c->securebits;
}

void lp_session_after_failed_exec(void)
{
    /* The profile was finished for the exec, which failed: the program goes on, and so
     * does its profile, in the next free name (the finished file holds this image's
     * samples, so it is taken). Python's test suite execs bad paths on purpose; a launcher
     * tries one interpreter after another. */
    int done = LP_DONE;
    if (session.was_idle_at_exec && getpid() == session.pid &&
        atomic_compare_exchange_strong(&session.state, &done, LP_IDLE)) {
        /* Idle again: the file written for the exec holds no sample, so the same name is
         * written again at the end. */
        session.was_idle_at_exec = 0;
        return;
    }
    if (getpid() != session.pid || !session.cfg.enabled || !session.was_live_at_exec ||
        !atomic_compare_exchange_strong(&session.state, &done, LP_OFF))
        return;
    session.was_live_at_exec = 0;
    session.start_ns = cmn_clock_ns(CLOCK_MONOTONIC);
    session.start_cpu_ns = cmn_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    for (unsigned i = 0; i < PROF_STAT_N; i++)
        atomic_store_explicit(&smp_sampler.counters[i], 0, memory_order_relaxed);
    if (start_session(START_AGAIN, session.sampled_at_stop) != 0) {
        lp_writer_close(&session.writer);
        atomic_store(&session.state, LP_DONE);
    }
}

void lp_session_before_setxid(uid_t euid, gid_t egid)
{
    pthread_mutex_lock(&session.cred_mu);
    struct cred_change *c = &cred_change;
    memset(c, 0, sizeof(*c));
    c->euid = euid;
    c->egid = egid;
    if (!lp_session_live() || !session.writer.running || lp_creds_get(&c->creds) != 0)
        return;
    /* Most calls need nothing of the writer: a server switching its effective user per
     * request changes every thread's alike and keeps the profile's owner. */
    if (euid == (uid_t)-1 && egid == (gid_t)-1 && writer_has_creds(&c->creds))
        return;
    int rc = lp_writer_call(&session.writer, writer_takes_creds, c, LP_QUIESCE_MS);
    if (rc != 0 || c->creds_rc != 0)
        lp_note("a change of user or group: the writer thread could not take on the calling "
                "thread's capabilities (%s)", strerror(rc != 0 ? -rc : -c->creds_rc));
}

void lp_session_after_setxid(int failed)
{
    /* The owner is changed before the call (after it the process may no longer have the
     * right), and given back when the call failed: the profile changes hands only with
     * the process. */
    if (failed && cred_change.is_chowned && lp_session_live() && session.writer.running)
        lp_writer_call(&session.writer, writer_gives_back, &cred_change, LP_QUIESCE_MS);
    pthread_mutex_unlock(&session.cred_mu);
}

__attribute__((destructor)) static void lp_destructor(void)
{
    lp_session_finish();
}

int lp_session_snapshot(int fd)
{
    if (atomic_load(&session.state) == LP_IDLE && getpid() == session.pid)
        start_from_idle(0);
    if (!lp_session_live())
        return -ESRCH;
    return lp_snapshot_write(fd, session.writer.tid, NULL);
}
