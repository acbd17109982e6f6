/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The profiling session (see lifecycle.h), from constructor to destructor.
 *
 * Start, on the thread that runs the constructor (before main):
 *   config from PROF_* -> profile opened, header/process/mappings/name records buffered ->
 *   ring mapped -> this thread's stack bounds -> handler installed -> writer thread started
 *   (all signals blocked) -> fork handler registered -> timer armed.
 * Finish, at exit (the destructor runs after the application's atexit handlers) or before
 * an exec, on whichever thread gets there first:
 *   sampling off -> timer disarmed -> wait for handlers in flight -> writer thread joined ->
 *   last drain -> thread names, mappings, stats, end record -> file closed.
 * The signal handler stays installed for good: a profiling signal still pending after the
 * timer is disarmed must never meet SIGPROF's default action, which kills the process.
 */
#include "libprof/lifecycle.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "include/prof_format.h"
#include "libprof/config.h"
#include "libprof/interpose.h"
#include "libprof/log.h"
#include "libprof/maps.h"
#include "include/prof_record.h"
#include "libprof/rings.h"
#include "libprof/snapshot.h"
#include "libprof/threads.h"
#include "libprof/timers.h"
#include "libprof/unwind.h"
#include "libprof/writer.h"
#include "sampler/handler.h"
#include "sampler/install.h"
#include "sampler/ring.h"
#define LP_QUIESCE_MS 200u /* longest wait for handlers in flight and the writer thread */

enum lp_state { LP_OFF, LP_LIVE, LP_FINISHING, LP_DONE };

static struct {
    _Atomic int state;        /* enum lp_state; CAS LIVE -> FINISHING picks one finisher */
    pid_t pid;                /* the process that owns the session */
    struct lp_config cfg;     /* from the constructor, read-only after */
    struct lp_writer writer;  /* see writer.h for who owns it when */
    struct smp_ring ring;     /* the handler's ring, in ring_mem */
    void *ring_mem;           /* mmap'd; never unmapped while the handler is installed */
    size_t ring_bytes;
    uint64_t start_ns;        /* CLOCK_MONOTONIC at start */
    struct lp_timer_choice timer; /* the source, its signal and rate; from start */
    int installed_signo;      /* the signal our handler is installed for, 0 = none yet */
} lp;

extern char **environ;

static uint64_t clock_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void write_process_record(void)
{
    struct prof_rec_process p = {
        .pid = (uint32_t)getpid(),
        .ppid = (uint32_t)getppid(),
        .start_mono_ns = lp.start_ns,
        .start_real_ns = clock_ns(CLOCK_REALTIME),
        .requested_hz = lp.cfg.freq_hz,
        .effective_hz = lp.timer.effective_hz,
        .timer_source = (uint16_t)lp.timer.source,
        .unwinder = (uint16_t)lp.cfg.unwinder,
        .max_depth = (uint16_t)lp.cfg.max_depth,
    };
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = '\0';
    size_t need = prof_record_size_str(sizeof(p), strlen(exe));
    void *dst = lp_writer_reserve(&lp.writer, need);
    if (dst)
        lp_writer_commit(&lp.writer, prof_record_process(dst, need, &p, exe));
}

static void write_stats_record(void)
{
    uint64_t c[PROF_STAT_N];
    for (unsigned i = 0; i < PROF_STAT_N; i++)
        c[i] = atomic_load_explicit(&smp_sampler.counters[i], memory_order_relaxed);
    c[PROF_STAT_DURATION_NS] = clock_ns(CLOCK_MONOTONIC) - lp.start_ns;
    c[PROF_STAT_CPU_NS] = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    size_t need = sizeof(struct prof_rec_stats) + sizeof(c);
    void *dst = lp_writer_reserve(&lp.writer, need);
    if (dst)
        lp_writer_commit(&lp.writer, prof_record_stats(dst, need, c, PROF_STAT_N));
}

/* PROF_BUFFER_KB is shared out: a quarter (64 KiB at least) to the shared ring, the rest
 * to per-thread rings of LP_THREAD_RING_KB (libprof/rings.h). */
static int map_ring(void)
{
    if (lp.ring_mem) {
        /* A fork child's copy: empty it (zeroed memory is an empty ring), and every
         * per-thread ring but this thread's, whose threads are not in the child. */
        memset(lp.ring_mem, 0, lp.ring_bytes);
        lp_rings_forget(smp_self.ring);
        return smp_ring_init(&lp.ring, lp.ring_mem, lp.ring_bytes, lp.cfg.max_depth);
    }
    size_t total = (size_t)lp.cfg.buffer_kb * 1024u;
    lp.ring_bytes = total / 4 > LP_MIN_BUFFER_KB * 1024u ? total / 4 : LP_MIN_BUFFER_KB * 1024u;
    /* A thread's ring holds 20 ms of its samples at least (four busy writer periods). */
    size_t per_ring = LP_THREAD_RING_KB * 1024u;
    while (per_ring / smp_ring_slot_bytes(lp.cfg.max_depth) < lp.cfg.freq_hz / 50u &&
           per_ring < total / 4)
        per_ring *= 2;
    size_t n_thread_rings = (total - (total > lp.ring_bytes ? lp.ring_bytes : total)) / per_ring;
    if (lp_rings_init(n_thread_rings, per_ring, lp.cfg.max_depth) != 0)
        return -ENOMEM;
    lp.ring_mem = mmap(NULL, lp.ring_bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (lp.ring_mem == MAP_FAILED) {
        lp.ring_mem = NULL;
        return -errno;
    }
    int rc = smp_ring_init(&lp.ring, lp.ring_mem, lp.ring_bytes, lp.cfg.max_depth);
    if (rc != 0) {
        munmap(lp.ring_mem, lp.ring_bytes);
        lp.ring_mem = NULL;
    }
    return rc;
}

/* Waits until no handler is between its entry and exit; bounded. */
static void quiesce_handlers(void)
{
    for (unsigned i = 0; i < LP_QUIESCE_MS * 10; i++) {
        if (atomic_load_explicit(&smp_sampler.in_flight, memory_order_acquire) == 0)
            return;
        struct timespec ts = { 0, 100000 };
        nanosleep(&ts, NULL);
    }
}

static int start_session(int is_child, int sample_now);

/* The writer thread's periodic chores: drain the per-thread rings, keep per-thread
 * counters alive. */
/* While the writer thread waits for a snapshot's answers: samples keep moving. */
static void drain_while_waiting(void)
{
    int busy = 0;
    lp_rings_drain(&lp.writer, &busy);
    lp_writer_drain(&lp.writer, &lp.ring);
}

static int on_writer_period(void)
{
    int busy = 0;
    lp_snapshot_serve(lp.writer.path, lp.writer.tid, drain_while_waiting);
    lp_rings_drain(&lp.writer, &busy);
    if (atomic_load_explicit(&smp_sampler.active, memory_order_relaxed))
        lp_timers_check();
    return busy;
}

/* Puts the application's view of our signal's action in the handler's spare slot and
 * makes it current (see smp_sampler.app_actions). */
static void set_app_action(const struct sigaction *a)
{
    int at = atomic_load(&smp_sampler.app_action_at);
    int next = at == 0 ? 1 : 0;
    smp_sampler.app_actions[next] = *a;
    atomic_store_explicit(&smp_sampler.app_action_at, next, memory_order_release);
}

/* Installs our handler for signo (once); the action it replaces becomes the application's
 * action, which the application keeps seeing and which gets its own signals. */
static int install_handler(int signo)
{
    if (lp.installed_signo == signo)
        return 0;
    struct sigaction old;
    int rc = smp_install_handler(signo, lp.cfg.snap_signo, &old, lp_interpose_real_sigaction());
    if (rc != 0)
        return rc;
    set_app_action(&old);
    lp.installed_signo = signo;
    return 0;
}

/* After fork, in the child. It has none of our threads and no timers (neither is inherited
 * by fork), and must never write into the parent's profile: it forgets the parent's
 * session and, with PROF_FOLLOW=1, starts its own, in its own file. The ring may hold the
 * parent's samples and is emptied. */
static void atfork_child(void)
{
    int live = LP_LIVE;
    if (!atomic_compare_exchange_strong(&lp.state, &live, LP_DONE))
        return;
    int was_sampling = atomic_exchange(&smp_sampler.active, 0);
    smp_self.tid = 0;
    lp_timers_forget();
    lp_writer_forget(&lp.writer);
    if (!lp.cfg.follow)
        return;
    lp.pid = getpid();
    lp.start_ns = clock_ns(CLOCK_MONOTONIC);
    for (unsigned i = 0; i < PROF_STAT_N; i++)
        atomic_store_explicit(&smp_sampler.counters[i], 0, memory_order_relaxed);
    if (start_session(1, was_sampling) != 0) {
        lp_writer_close(&lp.writer);
        atomic_store(&lp.state, LP_DONE);
    }
}

/* The profile's path: the template expanded; a fork child whose template has no %p gets
 * ".PID" appended, so that it never writes over its parent's profile. */
static int output_path(int is_child, char *path, size_t cap)
{
    char cwd[PATH_MAX], tmpl[PATH_MAX + 4];
    if (!getcwd(cwd, sizeof(cwd)))
        strcpy(cwd, "/");
    snprintf(tmpl, sizeof(tmpl), "%s%s", lp.cfg.output,
             is_child && !strstr(lp.cfg.output, "%p") ? ".%p" : "");
    return lp_config_expand_path(tmpl, lp.pid, cwd, path, cap);
}

static int start_session(int is_child, int sample_now)
{
    char path[PATH_MAX];
    int rc = output_path(is_child, path, sizeof(path));
    if (rc != 0) {
        lp_log("PROF_OUTPUT='%.200s' is not a usable path template (%s); profiling disabled",
               lp.cfg.output, rc == -EINVAL ? "unknown %-sequence" : "too long");
        return rc;
    }
    if ((rc = lp_timers_choose(&lp.cfg, &lp.timer)) != 0) {
        lp_log("no timer source works here (%s); profiling disabled", strerror(-rc));
        return rc;
    }
    /* The stepper is ready before the handler exists (libprof/unwind.h). */
    if (lp_unwind_init(lp.cfg.unwinder) != 0) {
        lp_log("PROF_UNWIND=libunwind: libunwind is not available (libprof built without it, "
               "or libunwind.so.8 not installed); using frame pointers");
        lp.cfg.unwinder = PROF_UNWIND_FP;
    }
    rc = lp_writer_open(&lp.writer, path);
    if (rc != 0) {
        lp_log("cannot create %s: %s; profiling disabled", path, strerror(-rc));
        return rc;
    }
    write_process_record();
    lp_maps_write(&lp.writer, lp.start_ns);
    lp_threads_write_names(&lp.writer, lp.start_ns);
    lp_writer_flush(&lp.writer);

    if ((rc = map_ring()) != 0) {
        lp_log("cannot map a %u KiB sample buffer: %s; profiling disabled", lp.cfg.buffer_kb,
               strerror(-rc));
        return rc;
    }
    smp_sampler.ring = &lp.ring;
    if (!is_child)
        smp_self.ring = lp_rings_take();
    smp_sampler.max_frames = lp.cfg.max_depth;
    smp_sampler.source = lp.timer.source;
    lp_thread_enter();
    if ((rc = install_handler(lp.timer.signo)) != 0) {
        lp_log("cannot install a handler for signal %d: %s; profiling disabled",
               lp.timer.signo, strerror(-rc));
        return rc;
    }
    if (lp.cfg.snap_signo != 0 &&
        (rc = lp_snapshot_install(lp.cfg.snap_signo, lp.timer.signo, lp.cfg.max_depth,
                                  lp_interpose_real_sigaction())) != 0)
        lp_log("cannot install a handler for signal %d (PROF_SNAPSHOT_SIGNAL): %s; "
               "snapshots off", lp.cfg.snap_signo, strerror(-rc));
    lp.writer.on_period = on_writer_period;
    lp.writer.unblock_signo = lp.cfg.snap_signo;
    if ((rc = lp_writer_start(&lp.writer, &lp.ring)) != 0) {
        lp_log("cannot start: %s; profiling disabled", strerror(-rc));
        return rc;
    }
    atomic_store(&lp.state, LP_LIVE);
    if (sample_now)
        lp_session_set_active(1);
    return 0;
}

__attribute__((constructor)) static void lp_constructor(void)
{
    struct lp_config_msgs msgs = { 0 };
    lp.pid = getpid();
    lp.start_ns = clock_ns(CLOCK_MONOTONIC);
    lp_config_load(&lp.cfg, environ, &msgs);
    lp_log_open(lp.cfg.log);
    for (int i = 0; i < msgs.n; i++)
        lp_log("%s", msgs.text[i]);
    if (!lp.cfg.enabled)
        return;
    pthread_atfork(NULL, NULL, atfork_child);
    if (start_session(0, lp.cfg.start) != 0) {
        lp_writer_close(&lp.writer);
        atomic_store(&lp.state, LP_DONE);
    }
}

int lp_session_app_sigaction(int signo, const struct sigaction *act, struct sigaction *old)
{
    if (lp_snapshot_app_sigaction(signo, act, old))
        return 1;
    if (signo <= 0 || signo != lp.installed_signo)
        return 0;
    static _Atomic int said;
    int at = atomic_load_explicit(&smp_sampler.app_action_at, memory_order_acquire);
    if (old)
        *old = smp_sampler.app_actions[at == 1 ? 1 : 0];
    if (act) {
        set_app_action(act);
        if (act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN &&
            !atomic_exchange(&said, 1))
            lp_log("the application sets a handler for signal %d, which libprof samples with; "
                   "libprof keeps it and passes it the signals libprof did not send%s",
                   signo, signo == SIGPROF ? "" : " (PROF_SIGNAL picks another signal)");
    }
    return 1;
}

int lp_session_app_setitimer(int which)
{
    if (which != ITIMER_PROF || lp.timer.source != PROF_TIMER_ITIMER || !lp_session_live())
        return 0;
    /* The process has one ITIMER_PROF: the application's. Ours moves to per-thread
     * timers on a real-time signal; SIGPROF stays routed to the application. */
    int sampling = atomic_load(&smp_sampler.active);
    lp_timers_disarm_all();
    /* SIGPROF goes back to the application's own action, for real; a tick of our old
     * timer still pending reaches it too (one extra tick at most). */
    int at = atomic_load(&smp_sampler.app_action_at);
    struct sigaction app = smp_sampler.app_actions[at == 1 ? 1 : 0];
    lp_interpose_real_sigaction()(SIGPROF, &app, NULL);
    lp.installed_signo = 0;
    struct lp_config cfg = lp.cfg;
    cfg.timer = PROF_TIMER_THREAD;
    cfg.signo = 0;
    struct lp_timer_choice choice;
    int rc = lp_timers_choose(&cfg, &choice);
    if (rc == 0)
        rc = install_handler(choice.signo);
    if (rc != 0) {
        atomic_store(&smp_sampler.active, 0);
        lp_log("the application arms ITIMER_PROF, which libprof was using, and no other timer "
               "works here (%s): profiling stops", strerror(-rc));
        return 1;
    }
    lp.timer = choice;
    smp_sampler.source = choice.source;
    lp_log("the application arms ITIMER_PROF, which libprof was using: libprof goes on with "
           "per-thread timers on signal %d",
           choice.signo);
    if (sampling)
        lp_timers_arm_all(lp.writer.tid);
    return 1;
}

void lp_session_thread_start(void)
{
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
}

int lp_session_follow(void)
{
    return lp.cfg.follow;
}

int lp_session_sampling(void)
{
    return lp_session_live() && atomic_load_explicit(&smp_sampler.active, memory_order_acquire);
}

int lp_session_live(void)
{
    return atomic_load(&lp.state) == LP_LIVE && getpid() == lp.pid;
}

int lp_session_set_active(int on)
{
    if (!lp_session_live())
        return -ESRCH;
    int rc = 0;
    if (on) {
        atomic_store_explicit(&smp_sampler.active, 1, memory_order_release);
        if (lp_timers_arm_all(lp.writer.tid) == 0) {
            rc = -EAGAIN;
            lp_log("cannot arm the profiling timer");
        }
    } else {
        lp_timers_disarm_all();
        atomic_store_explicit(&smp_sampler.active, 0, memory_order_release);
    }
    return rc;
}

void lp_session_post(const void *records, size_t len)
{
    if (lp_session_live())
        lp_writer_post(&lp.writer, records, len);
}

void lp_session_post_maps(void)
{
    if (!lp_session_live())
        return;
    unsigned char *recs;
    size_t len;
    if (lp_maps_collect(clock_ns(CLOCK_MONOTONIC), &recs, &len) > 0)
        lp_writer_post(&lp.writer, recs, len);
    free(recs);
}

void lp_session_post_thread_name(void)
{
    char name[PROF_THREAD_NAME_MAX + 1] = { 0 };
    unsigned char rec[64];
    if (!lp_session_live() || prctl(PR_GET_NAME, name, 0, 0, 0) != 0)
        return;
    size_t n = prof_record_thread(rec, sizeof(rec), clock_ns(CLOCK_MONOTONIC),
                                (uint32_t)syscall(SYS_gettid), name);
    if (n)
        lp_writer_post(&lp.writer, rec, n);
}

int lp_session_flush(void)
{
    if (!lp_session_live())
        return -ESRCH;
    return lp_writer_sync(&lp.writer, 1000);
}

void lp_session_finish(void)
{
    int live = LP_LIVE;
    if (getpid() != lp.pid || !atomic_compare_exchange_strong(&lp.state, &live, LP_FINISHING))
        return;
    lp_timers_disarm_all();
    atomic_store_explicit(&smp_sampler.active, 0, memory_order_release);
    quiesce_handlers();
    if (lp_writer_stop(&lp.writer, LP_QUIESCE_MS) != 0) {
        /* The writer thread is stuck (a blocking file?): leave its buffer alone. */
        atomic_store(&lp.state, LP_DONE);
        return;
    }
    uint64_t now = clock_ns(CLOCK_MONOTONIC);
    lp_writer_take_posts(&lp.writer);
    lp_rings_drain(&lp.writer, NULL);
    lp_writer_drain(&lp.writer, &lp.ring);
    lp_threads_write_names(&lp.writer, now);
    lp_maps_write(&lp.writer, now);
    write_stats_record();
    void *dst = lp_writer_reserve(&lp.writer, sizeof(struct prof_rec_hdr));
    if (dst)
        lp_writer_commit(&lp.writer, prof_record_end(dst, sizeof(struct prof_rec_hdr)));
    lp_writer_close(&lp.writer);
    atomic_store(&lp.state, LP_DONE);
}

__attribute__((destructor)) static void lp_destructor(void)
{
    lp_session_finish();
}

int lp_session_snapshot(int fd)
{
    if (!lp_session_live())
        return -ESRCH;
    return lp_snapshot_write(fd, lp.writer.tid, NULL);
}
