/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Timer sources and the per-thread timer registry (see timers.h). The registry is a
 * growable array of (tid, kind, timer or descriptor) under a mutex; it is small (one entry
 * per live thread) and touched only when threads start or end and when sampling starts or
 * stops, never per sample.
 */
#include "libprof/timers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/grow.h"
#include "common/proc.h"
#include "include/libprof/prof_format.h"
#include "libprof/config.h"
#include "libprof/fd.h"
#include "libprof/ksamples.h"
#include "libprof/libc.h"
#include "libprof/log.h"
#include "libprof/process.h"
#include "sampler/handler.h"
#include "sampler/timer_itimer.h"
#include "sampler/timer_perf.h"
#include "sampler/timer_thread.h"

#define LP_DEFAULT_RT_OFFSET 2 /* default signal of the per-thread sources: SIGRTMAX - 2 */
#define LP_TIMERS_CHECK_MAX 8u /* entries lp_timers_check() looks at per call */
/* The ring source's rings: the user stack a sample copies (a thread's, the main thread's,
 * at first; then sized to what the thread's walks read, within LP_RING_MIN_STACK..
 * LP_RING_MAX_STACK: resize_copies_locked()), what a record holds besides, and the ring's
 * size: LP_RING_HOLD_MS of samples at the rate asked, LP_RING_MIN_RECORDS at least, within
 * LP_RING_MIN_PAGES..LP_RING_MAX_PAGES. */
#define LP_RING_STACK 16384u
#define LP_RING_MAIN_STACK 32768u
/* 8 KiB at least: with 4 KiB copies a server's per-request label shares at 4000 Hz came
 * out 2-3 points off in one run of ten (tests/e2e/test_labels.c, cpu_shares...), every
 * stack whole; with 8 KiB none of 32 did, nor without sizing in 26. Not explained. */
#define LP_RING_MIN_STACK 8192u
#define LP_RING_MAX_STACK 32768u
#define LP_RING_LEARN 64u /* whole walks a ring's copy is sized by, at least */
#define LP_RING_RECORD_EXTRA 256u
#define LP_RING_HOLD_MS 100u
/* A sized copy's ring holds twice that: room for the fastest rate a period's random
 * interval draws (sampler/jitter.h: 1.75 times the rate asked) with a late writer, in
 * little memory. */
#define LP_RING_SIZED_HOLD_MS 200u
#define LP_RING_MIN_RECORDS 16u
#define LP_RING_MIN_PAGES 16u
#define LP_RING_MAX_PAGES 1024u

struct entry {
    pid_t tid;
    int fd;        /* perf source: the counter; -1 none */
    uint64_t id;   /* perf source: the counter's kernel id, to recognize its descriptor */
    int timer;     /* thread source: the POSIX timer's kernel id; -1 none */
    struct smp_perf_kring kring; /* perf source: the kernel-time counter; ring source: the
                                  * thread's counter; fd -1 none */
    struct lp_kweigh weigh;      /* how kring's samples weigh (libprof/ksamples.h) */
    int is_retired;              /* ring source: the thread is gone; its ring is read once
                                  * more, then closed (lp_timers_drain_kernel()) */
    int is_paused;               /* its counters stopped by lp_timers_pause_all(), kept for
                                  * the next arming */
    int wants_ring;              /* ring source: `timer` samples the thread until it fired
                                  * once (smp_timer_ripe), then a ring counter takes over */
};

#define ENTRY_NONE {.fd = -1, .timer = -1, .kring = {.fd = -1}}

enum { RING_UNTRIED, RING_OK, RING_NONE };

static struct {
    pthread_mutex_t mu;
    struct lp_timer_choice choice;
    unsigned hz;
    int chosen;
    int itimer_armed;
    struct entry *entries;
    size_t n, cap;
    size_t n_perf;      /* counters' descriptors held */
    size_t perf_budget; /* descriptors we may hold: a small part of RLIMIT_NOFILE */
    int ksample;        /* kernel-only counters work here: each thread gets one */
    unsigned max_stack; /* frames a kernel-recorded call chain holds at most */
    unsigned khz;       /* the kernel-time counters' rate: reg.hz / LP_KSAMPLE_SLOWER */
    size_t check_at;    /* the entry lp_timers_check() looks at next */
    int perf_err;       /* why PROF_TIMER=perf was refused (-errno), 0 when it was not */
    int event_err;      /* why PROF_EVENT was refused (-errno), 0 when it was not */
    unsigned timer_asked; /* the PROF_TIMER and PROF_EVENT the choice was made for */
    unsigned event_asked;
    /* The perf source's trial counters, paused and kept for the thread that made the
     * choice: arming that thread takes them over instead of opening its own (a process
     * start pays for one counter pair, not two). fd and kring.fd -1: none. */
    struct entry spare;
    int ring_kernel;    /* ring source: its counters sample kernel time too */
    int ring_state;     /* ring source: RING_UNTRIED until the first thread's counter is
                         * due (lp_timers_choose() makes no trial), then RING_OK, or
                         * RING_NONE when the kernel gives no ring counter here */
    int ring_noted;     /* a thread's ring counter could not be mapped: said once */
    int cut_noted;      /* a thread moved to the signal for its deep stack: said once */
    unsigned ripe_seen; /* smp_sampler.n_ripe when the ripe timers were last looked at */
    uint64_t rng;       /* ring source: the intervals' generator (sampler/jitter.h) */
} reg = { .mu = PTHREAD_MUTEX_INITIALIZER, .spare = ENTRY_NONE };

static pid_t self_tid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

unsigned lp_timers_tick_hz(void)
{
    struct timespec res;
    if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0 || res.tv_sec || res.tv_nsec <= 0)
        return 0;
    return (unsigned)((1000000000L + res.tv_nsec / 2) / res.tv_nsec);
}

static const char *event_name(unsigned e)
{
    static const char *const names[] = { "task-clock", "cpu-clock", "cycles", "instructions" };
    return e < 4 ? names[e] : "?";
}

/* The trials below run before our handler is installed: the signal is blocked around
 * them and an instance that fired meanwhile is consumed, so that it can never meet the
 * signal's default action (which terminates). */
static void block(int signo, sigset_t *old)
{
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, signo);
    lp_sigmask(SIG_BLOCK, &one, old);
}

static void consume_and_restore(int signo, const sigset_t *old)
{
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, signo);
    struct timespec zero = { 0, 0 };
    while (sigtimedwait(&one, NULL, &zero) == signo)
        ;
    lp_sigmask(SIG_SETMASK, old, NULL);
}

/* Opens a perf counter on this thread: does the source work here? The counter is
 * paused and kept in *kept (fd, id) for this thread's arming. */
static int try_perf(int signo, unsigned hz, unsigned event, struct entry *kept)
{
    sigset_t old;
    uint64_t id = 0;
    block(signo, &old);
    int fd = smp_timer_perf_open(self_tid(), signo, hz, event, 0, &id);
    if (fd >= 0) {
        smp_timer_perf_pause(fd, id);
        kept->fd = fd;
        kept->id = id;
    }
    consume_and_restore(signo, &old);
    return fd < 0 ? fd : 0;
}

/* Creates a per-thread timer (one CPU-second period) and deletes it. */
static int try_thread_timer(int signo)
{
    sigset_t old;
    int t;
    block(signo, &old);
    int rc = smp_timer_thread_create(self_tid(), signo, 1, &t);
    if (rc == 0)
        smp_timer_thread_delete(t);
    consume_and_restore(signo, &old);
    return rc;
}

/* Frames a kernel-recorded chain may hold: PROF_DEPTH, within the kernel's limit
 * (kernel.perf_event_max_stack) and what one record of ours carries. */
static unsigned max_stack(const struct lp_config *cfg)
{
    unsigned n = cfg->max_depth < LP_KSAMPLE_MAX_FRAMES ? cfg->max_depth : LP_KSAMPLE_MAX_FRAMES;
    char buf[32] = "";
    int fd = lp_fd_open("/proc/sys/kernel/perf_event_max_stack", O_RDONLY, 0);
    if (fd >= 0) {
        ssize_t got = read(fd, buf, sizeof(buf) - 1);
        buf[got > 0 ? got : 0] = '\0';
        lp_fd_close(fd);
        unsigned long sys = strtoul(buf, NULL, 10);
        if (sys > 0 && sys < n)
            n = (unsigned)sys;
    }
    return n;
}

/* Opens a kernel-time counter on this thread and closes it: are they permitted here? */
/* The kernel-time counter runs this many times slower than the profile's rate, each of
 * its samples weighing as many periods: every counter costs a timer interrupt per period
 * of the thread's CPU time, kernel or not, and a timer interrupt is dear in a virtual
 * machine (about 25 us here), while most programs spend little of their time in the
 * kernel. */
#define LP_KSAMPLE_SLOWER 4u

static unsigned kernel_hz(unsigned hz)
{
    return hz / LP_KSAMPLE_SLOWER > 0 ? hz / LP_KSAMPLE_SLOWER : 1;
}

/* Opens a kernel-time counter on this thread: are they permitted here? The counter is
 * paused and kept in *kept for this thread's arming. */
static int try_kernel_counter(unsigned hz, unsigned frames, struct smp_perf_kring *kept)
{
    int rc = smp_timer_perf_open_kernel(self_tid(), hz, frames, kept);
    if (rc == 0)
        smp_timer_perf_pause_kernel(kept);
    return rc;
}

/* With reg.mu held, or in a fork child: closes the kept trial counters (in a fork child,
 * its copies of the parent's: the number is closed where it is still the counter, never
 * paused, which would pause the parent's). */
static void drop_spare_locked(void)
{
    smp_timer_perf_close_kernel(&reg.spare.kring);
    if (reg.spare.fd >= 0)
        smp_timer_perf_close(reg.spare.fd, reg.spare.id);
    reg.spare = (struct entry)ENTRY_NONE;
}

/* A ring counter's spec: stack_bytes of stack a record copies, and data pages for hold_ms
 * of records at hz. */
static struct smp_perf_ring_spec ring_spec_sized(unsigned hz, unsigned event, int kernel,
                                                 unsigned stack_bytes, unsigned hold_ms)
{
    struct smp_perf_ring_spec spec = {.event = event, .hz = hz, .user = 1, .kernel = kernel,
                                      .read = 1, .stack_bytes = stack_bytes};
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uint64_t records = (uint64_t)spec.hz * hold_ms / 1000u;
    uint64_t bytes = (records > LP_RING_MIN_RECORDS ? records : LP_RING_MIN_RECORDS) *
                     (spec.stack_bytes + LP_RING_RECORD_EXTRA);
    spec.data_pages = LP_RING_MIN_PAGES;
    while ((uint64_t)spec.data_pages * page < bytes && spec.data_pages < LP_RING_MAX_PAGES)
        spec.data_pages *= 2;
    return spec;
}

/* The ring source's counter for thread tid: its first stack copy (the main thread's
 * deeper, where programs such as sqlite3's shell keep 20 KiB and more between a call and
 * main) and a ring that holds LP_RING_HOLD_MS of its samples at the rate asked. */
static struct smp_perf_ring_spec ring_spec(pid_t tid, unsigned hz, unsigned event, int kernel)
{
    return ring_spec_sized(hz, event, kernel,
                           tid == getpid() ? LP_RING_MAIN_STACK : LP_RING_STACK,
                           LP_RING_HOLD_MS);
}

/* The period and interval of a perf_event counter of `event` at hz: the clocks count
 * nanoseconds; hardware events run in the kernel's frequency mode, which sets their
 * periods itself (0). */
static void counter_periods(unsigned event, unsigned hz, struct lp_timer_choice *out)
{
    out->period_ns = out->interval_ns = 0;
    if (event == SMP_PERF_TASK_CLOCK || event == SMP_PERF_CPU_CLOCK) {
        out->period_ns = 1000000000ull / hz;
        out->interval_ns = out->period_ns;
    }
}

/* PROF_TIMER=ring (and auto), chosen without a trial: a thread starts on a CPU-time timer
 * anyway, and the first one to run a period tries the counter (settle_ring_locked()), so
 * that a process that ends before its first sample opens no counter at all. */
static void choose_ring(const struct lp_config *cfg, struct lp_timer_choice *out)
{
    out->source = PROF_TIMER_RING;
    out->event = cfg->event;
    out->effective_hz = cfg->freq_hz;
    counter_periods(cfg->event, cfg->freq_hz, out);
}

static int choose_perf(const struct lp_config *cfg, int signo, struct lp_timer_choice *out,
                       int *event_err, struct entry *kept)
{
    int rc = try_perf(signo, cfg->freq_hz, cfg->event, kept);
    if (rc != 0 && cfg->event != SMP_PERF_TASK_CLOCK) {
        *event_err = rc;
        rc = try_perf(signo, cfg->freq_hz, SMP_PERF_TASK_CLOCK, kept);
        out->event = SMP_PERF_TASK_CLOCK;
    } else {
        out->event = cfg->event;
    }
    if (rc != 0)
        return rc;
    out->source = PROF_TIMER_PERF;
    out->effective_hz = cfg->freq_hz;
    /* The clocks count nanoseconds: a sample weighs its thread's CPU time in periods, and
     * each interval is drawn around the period (hardware events run in the kernel's
     * frequency mode, which sets their periods itself). */
    if (out->event == SMP_PERF_TASK_CLOCK || out->event == SMP_PERF_CPU_CLOCK) {
        out->period_ns = 1000000000ull / cfg->freq_hz;
        out->interval_ns = out->period_ns;
    }
    return 0;
}

/* The note that PROF_EVENT was not available, err the kernel's answer. */
static void note_event(unsigned event, int err)
{
    lp_note("PROF_EVENT=%s is not available here (%s%s); using task-clock", event_name(event),
            strerror(-err),
            err == -ENOENT || err == -EOPNOTSUPP ? ": no hardware counters" : "");
}

/* The notes a choice leaves in the profile (the same in a fork child, which inherits it).
 * tick: the scheduler's rate, 0 when not known yet (it is read here when a note needs it). */
static void note_choice(const struct lp_config *cfg, const struct lp_timer_choice *out,
                        unsigned tick, int event_err, int perf_err, int ksample)
{
    if (tick == 0 && (out->source == PROF_TIMER_THREAD || out->source == PROF_TIMER_ITIMER))
        tick = lp_timers_tick_hz();
    if (event_err != 0)
        note_event(cfg->event, event_err);
    if (cfg->timer == PROF_TIMER_ITIMER && cfg->signo && cfg->signo != SIGPROF)
        lp_note("PROF_SIGNAL is ignored by PROF_TIMER=itimer, which always sends SIGPROF");
    if (perf_err != 0 && cfg->timer == PROF_TIMER_PERF)
        lp_note("PROF_TIMER=perf is not available (perf_event_open: %s; see "
                "/proc/sys/kernel/perf_event_paranoid); using per-thread timers",
                strerror(-perf_err));
    if (out->source != PROF_TIMER_PERF && out->source != PROF_TIMER_RING && tick &&
        cfg->freq_hz > tick)
        lp_note("PROF_FREQ=%u is above what CPU-time timers deliver on this kernel (%u Hz, "
                "its scheduler tick): expect about %u samples per CPU-second%s",
                cfg->freq_hz, tick, tick,
                out->source == PROF_TIMER_THREAD
                    ? ", each weighted by the periods it stands for; PROF_TIMER=perf goes higher"
                    : "; PROF_TIMER=perf goes higher");
    if (out->source == PROF_TIMER_RING && !ksample)
        lp_note("the kernel does not permit sampling kernel time here (perf_event_paranoid): "
                "the time threads spend in system calls is counted on their next sample "
                "instead of the stack that made the call");
    if (out->source == PROF_TIMER_PERF && out->period_ns != 0 && !ksample)
        lp_note("kernel-only perf counters are not permitted here (perf_event_paranoid); the "
                "time threads spend in system calls is counted on their next sample instead "
                "of the stack that made the call");
}

int lp_timers_choose_inherited(const struct lp_config *cfg, struct lp_timer_choice *out)
{
    pthread_mutex_lock(&reg.mu);
    int same = reg.chosen && reg.hz == cfg->freq_hz && reg.timer_asked == cfg->timer &&
               reg.event_asked == cfg->event && (cfg->signo == 0 || cfg->signo == reg.choice.signo);
    if (same)
        *out = reg.choice;
    int event_err = reg.event_err, perf_err = reg.perf_err;
    /* A ring source not tried yet has said nothing of the kernel's permissions. */
    int ksample = reg.choice.source != PROF_TIMER_RING ? reg.ksample
                  : reg.ring_state == RING_OK         ? reg.ring_kernel
                                                      : 1;
    pthread_mutex_unlock(&reg.mu);
    if (!same)
        return lp_timers_choose(cfg, out);
    note_choice(cfg, out, 0, event_err, perf_err, ksample);
    return 0;
}

int lp_timers_choose(const struct lp_config *cfg, struct lp_timer_choice *out)
{
    memset(out, 0, sizeof(*out));
    unsigned tick = 0; /* the scheduler's rate: the CPU-time timers' limit, read for them */
    int rt_signo = cfg->signo ? cfg->signo : SIGRTMAX - LP_DEFAULT_RT_OFFSET;
    int rc = -EINVAL, perf_err = 0, event_err = 0;
    struct entry kept = ENTRY_NONE;
    kept.tid = self_tid();

    if (cfg->timer == PROF_TIMER_ITIMER) {
        out->source = PROF_TIMER_ITIMER;
        out->signo = SIGPROF;
        rc = 0;
    } else {
        out->signo = rt_signo;
        /* The ring source has no handler to walk with libunwind (PROF_UNWIND=libunwind,
         * check): auto takes the perf source there. */
        int handler_walks = cfg->unwinder == PROF_UNWIND_LIBUNWIND ||
                            cfg->unwinder == PROF_UNWIND_CHECK;
        /* Nor can a copy of a Go program's stack show the goroutine above a cgo call: its
         * stack is another (common/uw_step.h, cmn_uw_go_cgo()); auto takes the perf source,
         * whose handler reads it live, from the first sample. */
        int is_go = cfg->timer == LP_TIMER_AUTO && !handler_walks && lp_process_is_go(NULL);
        if (is_go)
            lp_note("a Go program: PROF_TIMER=auto takes the perf source, whose handler walks "
                    "its cgo calls onto the goroutines' stacks (the ring source's copy holds "
                    "one stack)");
        if (cfg->timer == PROF_TIMER_RING ||
            (cfg->timer == LP_TIMER_AUTO && !handler_walks && !is_go)) {
            choose_ring(cfg, out);
            rc = 0;
        }
        if (rc != 0 && (cfg->timer == LP_TIMER_AUTO || cfg->timer == PROF_TIMER_PERF))
            perf_err = rc = choose_perf(cfg, rt_signo, out, &event_err, &kept);
        if (rc != 0) {
            rc = try_thread_timer(rt_signo);
            if (rc == 0)
                out->source = PROF_TIMER_THREAD;
        }
    }
    if (rc != 0)
        return rc;
    if (out->source == PROF_TIMER_THREAD || out->source == PROF_TIMER_ITIMER) {
        tick = lp_timers_tick_hz();
        /* A sample weighs the CPU time since the last one, so that the intervals drawn
         * around the mean (and rounded up to ticks by the kernel) keep the time exact.
         * These timers expire on ticks: a mean under two ticks is drawn from none but the
         * next tick or the one after, which takes no phase of a program's round that every
         * tick does not take, and halves the samples; such a timer keeps its period. */
        out->period_ns = 1000000000ull / cfg->freq_hz;
        out->interval_ns = tick != 0 && cfg->freq_hz * 2 > tick ? 0 : out->period_ns;
        out->effective_hz = tick && cfg->freq_hz > tick ? tick : cfg->freq_hz;
    }
    struct rlimit lim;
    size_t budget = 128;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
        budget = lim.rlim_cur / 8;
    /* The ring source's records carry no call chain of the kernel's: its limit is not read. */
    unsigned frames = out->source == PROF_TIMER_PERF ? max_stack(cfg) : cfg->max_depth;
    int ksample = out->source == PROF_TIMER_PERF && out->period_ns != 0 &&
                  try_kernel_counter(kernel_hz(cfg->freq_hz), frames, &kept.kring) == 0;
    /* The ring source's notes come with its trial (settle_ring_locked()). */
    if (out->source != PROF_TIMER_RING)
        note_choice(cfg, out, tick, event_err, perf_err, ksample);
    pthread_mutex_lock(&reg.mu);
    drop_spare_locked();
    reg.spare = kept; /* counters only when the perf source was chosen */
    reg.choice = *out;
    reg.hz = cfg->freq_hz;
    reg.chosen = 1;
    reg.perf_budget = budget;
    reg.ksample = out->source == PROF_TIMER_PERF && ksample;
    reg.ring_kernel = 0;
    reg.ring_state = RING_UNTRIED;
    reg.max_stack = frames;
    reg.khz = kernel_hz(cfg->freq_hz);
    reg.perf_err = perf_err;
    reg.event_err = event_err;
    reg.timer_asked = cfg->timer;
    reg.event_asked = cfg->event;
    pthread_mutex_unlock(&reg.mu);
    return 0;
}

static void disarm_entry(struct entry *e);

static struct entry *find(pid_t tid)
{
    for (size_t i = 0; i < reg.n; i++)
        if (reg.entries[i].tid == tid && !reg.entries[i].is_retired)
            return &reg.entries[i];
    return NULL;
}

/* The session goes on with the thread source: its choice and the handlers' view of it
 * (smp_sampler.source, period_ns and interval_ns, which handlers may be reading: each is
 * one aligned word, and a ring source's signals and a thread source's are told apart
 * alike). The threads keep the CPU-time timers they started on. With reg.mu held. */
static void switch_to_thread_locked(int err)
{
    unsigned tick = lp_timers_tick_hz();
    reg.choice.source = PROF_TIMER_THREAD;
    reg.choice.period_ns = 1000000000ull / reg.hz;
    reg.choice.interval_ns = tick != 0 && reg.hz * 2 > tick ? 0 : reg.choice.period_ns;
    reg.choice.effective_hz = tick && reg.hz > tick ? tick : reg.hz;
    smp_sampler.period_ns = reg.choice.period_ns;
    smp_sampler.interval_ns = reg.choice.interval_ns;
    smp_sampler.source = PROF_TIMER_THREAD;
    lp_note("the ring source is not available here (perf_event_open: %s; see "
            "/proc/sys/kernel/perf_event_paranoid); threads are sampled by their CPU-time "
            "timers (PROF_TIMER=thread)%s", strerror(-err),
            tick && reg.hz > tick ? ", at most one sample a scheduler tick, each weighted by "
                                    "the periods it stands for"
                                  : "");
}

/* A trial ring counter of spec on this thread, with kernel time (*kernel 1) or, where
 * that is not permitted, without (*kernel 0); 0 or -errno. */
static int try_ring(struct smp_perf_ring_spec *spec, int *kernel)
{
    spec->kernel = 1;
    int rc = smp_timer_perf_try_ring(spec);
    *kernel = rc == 0;
    if (rc == -EACCES || rc == -EPERM) {
        spec->kernel = 0;
        rc = smp_timer_perf_try_ring(spec);
    }
    return rc;
}

/* The ring source's trial (lp_timers_choose() makes none), once, when the first thread's
 * counter is due: whether the kernel gives this process a counter that records its
 * registers and stack, with its kernel time or its user time alone, of PROF_EVENT or else
 * of task-clock (a note says so). Without any, the session goes on with the thread source.
 * 0 when rings can be had; -ENODEV when not. With reg.mu held. */
static int settle_ring_locked(void)
{
    if (reg.ring_state != RING_UNTRIED)
        return reg.ring_state == RING_OK ? 0 : -ENODEV;
    unsigned event = reg.choice.event;
    struct smp_perf_ring_spec spec = ring_spec(self_tid(), reg.hz, event, 1);
    int kernel = 0;
    int rc = try_ring(&spec, &kernel);
    if (rc != 0 && event != SMP_PERF_TASK_CLOCK) {
        spec.event = SMP_PERF_TASK_CLOCK;
        int again = try_ring(&spec, &kernel);
        if (again == 0) {
            reg.event_err = rc;
            note_event(event, rc);
            reg.choice.event = SMP_PERF_TASK_CLOCK;
            counter_periods(SMP_PERF_TASK_CLOCK, reg.hz, &reg.choice);
            smp_sampler.period_ns = reg.choice.period_ns;
            smp_sampler.interval_ns = reg.choice.interval_ns;
        }
        rc = again;
    }
    if (rc != 0) {
        reg.ring_state = RING_NONE;
        reg.perf_err = rc;
        switch_to_thread_locked(rc);
        return -ENODEV;
    }
    reg.ring_state = RING_OK;
    reg.ring_kernel = kernel;
    if (!kernel)
        lp_note("the kernel does not permit sampling kernel time here (perf_event_paranoid): "
                "the time threads spend in system calls is counted on their next sample "
                "instead of the stack that made the call");
    return 0;
}

/* The ring source's counter for thread tid into e; 0 or -errno (-ENODEV: no ring counter
 * here at all). A ring the locked-memory limit refuses (an unprivileged user's
 * perf_event_mlock_kb and RLIMIT_MEMLOCK) is said once; the thread gets the perf source's
 * signal instead. With reg.mu held. */
static int arm_ring_locked(pid_t tid, struct entry *e)
{
    int settled = settle_ring_locked();
    if (settled != 0)
        return settled;
    struct smp_perf_ring_spec spec = ring_spec(tid, reg.hz, reg.choice.event, reg.ring_kernel);
    int rc = smp_timer_perf_open_ring(tid, &spec, &e->kring);
    if (rc == 0) {
        e->weigh = (struct lp_kweigh){.period_ns = reg.choice.period_ns,
                                      .drawn_ns = reg.choice.period_ns,
                                      .kernel_skips = !reg.ring_kernel};
        return 0;
    }
    if ((rc == -EPERM || rc == -ENOMEM) && !reg.ring_noted) {
        reg.ring_noted = 1;
        lp_note("the kernel refused a %u KiB sample ring for a thread (%s: locked memory, "
                "perf_event_mlock_kb and RLIMIT_MEMLOCK): such threads are sampled by a "
                "signal instead", (unsigned)(spec.data_pages * sysconf(_SC_PAGESIZE) / 1024),
                strerror(-rc));
    }
    return rc;
}

/* Starts a paused entry's counters again; 0 or -errno. With reg.mu held. */
static int resume_locked(struct entry *e)
{
    int rc = 0;
    if (e->kring.fd >= 0 && (rc = smp_timer_perf_resume_kernel(&e->kring)) != 0)
        return rc;
    uint32_t flags = e->kring.fd >= 0 ? SMP_PERF_FD_KSAMPLED : 0;
    if (e->fd >= 0)
        rc = smp_timer_perf_rearm(e->fd, e->id, e->tid, flags);
    e->is_paused = 0;
    return rc;
}

/* With reg.mu held. */
static int arm_locked(pid_t tid)
{
    if (!reg.chosen || reg.choice.source == PROF_TIMER_ITIMER)
        return 0;
    struct entry *old = find(tid);
    if (old && old->is_paused && resume_locked(old) != 0) {
        disarm_entry(old); /* its counter is gone: a new one below */
        *old = reg.entries[--reg.n];
    } else if (old) {
        return 0;
    }
    if (!CMN_GROW(reg.entries, reg.cap, reg.n + 1, 64))
        return -ENOMEM;
    struct entry e = ENTRY_NONE;
    e.tid = tid;
    int rc = -EMFILE;
    /* A counter costs the application a descriptor; past the budget (a program with very
     * many threads), threads get a per-thread timer on the same signal instead. The
     * kernel-time counter comes first, so that the handler knows from the first signal
     * that the thread's samples weigh 1. */
    struct entry spare = ENTRY_NONE;
    if (reg.spare.tid == tid) { /* the choice's trial counters: this thread's */
        spare = reg.spare;
        reg.spare = (struct entry)ENTRY_NONE;
    }
    /* The ring source's thread starts with a CPU-time timer, cheap to make; its ring, which
     * costs a few hundred microseconds to map, comes once the timer fired (the thread ran a
     * period): short processes and threads that never run make none. */
    if (reg.choice.source == PROF_TIMER_RING &&
        smp_timer_thread_create(tid, reg.choice.signo, reg.hz, &e.timer) == 0) {
        atomic_store(&smp_timer_ripe[e.timer], 0);
        e.wants_ring = 1;
        rc = 0;
    } else if (reg.choice.source == PROF_TIMER_RING) {
        e.timer = -1;
        if (reg.n_perf < reg.perf_budget)
            rc = arm_ring_locked(tid, &e);
    }
    int perf_signal = reg.choice.source == PROF_TIMER_PERF ||
                      (reg.choice.source == PROF_TIMER_RING && rc != 0 && rc != -EMFILE);
    if (perf_signal && reg.n_perf < reg.perf_budget) {
        if (reg.ksample && reg.n_perf + 2 <= reg.perf_budget) {
            if (spare.kring.fd >= 0 && smp_timer_perf_resume_kernel(&spare.kring) == 0) {
                e.kring = spare.kring;
                spare.kring = (struct smp_perf_kring){.fd = -1};
            } else if (smp_timer_perf_open_kernel(tid, reg.khz, reg.max_stack, &e.kring) != 0) {
                e.kring.fd = -1;
            }
            e.weigh = (struct lp_kweigh){.fixed = reg.hz / reg.khz};
        }
        uint32_t flags = e.kring.fd >= 0 ? SMP_PERF_FD_KSAMPLED : 0;
        if (spare.fd >= 0 && smp_timer_perf_rearm(spare.fd, spare.id, tid, flags) == 0) {
            rc = spare.fd;
            e.id = spare.id;
            spare.fd = -1;
        } else {
            rc = smp_timer_perf_open(tid, reg.choice.signo, reg.hz, reg.choice.event, flags,
                                     &e.id);
        }
        e.fd = rc;
        rc = rc < 0 ? rc : 0;
        if (rc != 0) {
            e.fd = -1;
            smp_timer_perf_close_kernel(&e.kring);
        }
    }
    if (rc != 0 && (rc = smp_timer_thread_create(tid, reg.choice.signo, reg.hz, &e.timer)) != 0)
        e.timer = -1;
    smp_timer_perf_close_kernel(&spare.kring); /* what was not taken over */
    if (spare.fd >= 0)
        smp_timer_perf_close(spare.fd, spare.id);
    if (rc == 0) {
        reg.entries[reg.n++] = e;
        reg.n_perf += (e.fd >= 0) + (e.kring.fd >= 0);
    }
    if (rc == 0 && tid == self_tid()) {
        /* The first sample weighs the thread's time from here (sampler/handler.c), not
         * one period: a CPU-time timer fires on a tick, several periods in at 1000 Hz. */
        struct timespec ts;
        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) {
            smp_self.cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
            smp_self.cpu_carry_ns = 0;
            smp_self.cpu_epoch = atomic_load(&smp_sampler.epoch);
        }
    }
    return rc;
}

/* Waits until no handler is between its entry and exit (bounded): one that was about to
 * re-arm a timer has done so, and the timer can be deleted. */
static void wait_for_handlers(void)
{
    for (unsigned i = 0; i < 2000 && atomic_load(&smp_sampler.in_flight) > 0; i++) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

static void disarm_entry(struct entry *e)
{
    if (e->kring.fd >= 0) {
        smp_timer_perf_close_kernel(&e->kring);
        reg.n_perf--;
    }
    if (e->fd >= 0) {
        smp_timer_perf_close(e->fd, e->id); /* only when the number is still our counter */
        reg.n_perf--;
    }
    if (e->timer >= 0)
        smp_timer_thread_delete(e->timer);
}

void lp_timers_drop_spare(void)
{
    pthread_mutex_lock(&reg.mu);
    drop_spare_locked();
    pthread_mutex_unlock(&reg.mu);
}

int lp_timers_arm_self(void)
{
    pthread_mutex_lock(&reg.mu);
    int rc = arm_locked(self_tid());
    pthread_mutex_unlock(&reg.mu);
    return rc;
}

int lp_timers_arm_all(pid_t skip)
{
    int n = 0;
    pthread_mutex_lock(&reg.mu);
    if (reg.chosen && reg.choice.source == PROF_TIMER_ITIMER) {
        if (smp_timer_itimer_arm(reg.hz) == 0) {
            reg.itimer_armed = 1;
            atomic_store(&smp_sampler.itimer_owned, 1);
            n = 1;
        }
        pthread_mutex_unlock(&reg.mu);
        return n;
    }
    struct cmn_proc_tasks it;
    cmn_proc_tasks_open(&lp_proc_self, &it); /* none listed when it cannot be read */
    for (pid_t tid; (tid = cmn_proc_tasks_next(&it)) != 0;)
        if (tid != skip && arm_locked(tid) == 0)
            n++;
    cmn_proc_tasks_close(&it);
    drop_spare_locked();
    pthread_mutex_unlock(&reg.mu);
    return n;
}

void lp_timers_disarm_self(void)
{
    pid_t tid = self_tid();
    pthread_mutex_lock(&reg.mu);
    struct entry *e = find(tid);
    if (e && reg.choice.source == PROF_TIMER_RING && e->kring.fd >= 0 && e->fd < 0 &&
        e->timer < 0) {
        /* Its last samples are still in the ring: the writer reads them, then closes it
         * (the counter of a thread that is gone no longer counts). */
        smp_timer_perf_pause_kernel(&e->kring);
        e->is_retired = 1;
    } else if (e) {
        disarm_entry(e);
        *e = reg.entries[--reg.n];
    }
    pthread_mutex_unlock(&reg.mu);
}

void lp_timers_disarm_all(void)
{
    pthread_mutex_lock(&reg.mu);
    /* Handlers re-arm their own thread's timer, and ITIMER_PROF, for a random interval:
     * they are told not to, and those in flight are waited for, before anything goes. */
    atomic_store(&smp_sampler.itimer_owned, 0);
    for (size_t i = 0; i < reg.n; i++)
        if (reg.entries[i].timer >= 0)
            smp_timer_thread_forget(reg.entries[i].timer);
    wait_for_handlers();
    if (reg.itimer_armed)
        smp_timer_itimer_disarm();
    reg.itimer_armed = 0;
    for (size_t i = 0; i < reg.n; i++)
        disarm_entry(&reg.entries[i]);
    reg.n = 0;
    drop_spare_locked();
    pthread_mutex_unlock(&reg.mu);
}

void lp_timers_pause_all(void)
{
    pthread_mutex_lock(&reg.mu);
    atomic_store(&smp_sampler.itimer_owned, 0);
    for (size_t i = 0; i < reg.n; i++)
        if (reg.entries[i].timer >= 0)
            smp_timer_thread_forget(reg.entries[i].timer);
    wait_for_handlers();
    if (reg.itimer_armed)
        smp_timer_itimer_disarm();
    reg.itimer_armed = 0;
    /* Counters are stopped and kept (a ring is costly to map again); CPU-time timers,
     * cheap to make, go. */
    for (size_t i = 0; i < reg.n;) {
        struct entry *e = &reg.entries[i];
        if (e->timer >= 0 || e->is_retired) {
            disarm_entry(e);
            *e = reg.entries[--reg.n];
            continue;
        }
        smp_timer_perf_pause_kernel(&e->kring);
        if (e->fd >= 0)
            smp_timer_perf_pause(e->fd, e->id);
        e->is_paused = 1;
        i++;
    }
    drop_spare_locked();
    pthread_mutex_unlock(&reg.mu);
}

void lp_timers_fork_prepare(void)
{
    pthread_mutex_lock(&reg.mu);
}

void lp_timers_fork_parent(void)
{
    pthread_mutex_unlock(&reg.mu);
}

void lp_timers_fork_child(void)
{
    /* The registry is whole (prepare held its lock). The counters are the parent's: the
     * child's copies of their descriptors are closed (not PERF_EVENT_IOC_DISABLE, which
     * would stop the parent's counter), where the number is still one; a late signal of
     * theirs cannot reach the child, whose threads they do not name. */
    atomic_store(&smp_sampler.itimer_owned, 0);
    for (size_t i = 0; i < reg.n; i++) {
        struct entry *e = &reg.entries[i];
        /* The ring mapping is the child's own copy: unmapping it leaves the parent's. */
        smp_timer_perf_close_kernel(&e->kring);
        if (e->timer >= 0)
            smp_timer_thread_forget(e->timer); /* the parent's; the child has none */
        if (e->fd < 0)
            continue;
        int is_ours = smp_timer_perf_is(e->fd, e->id);
        smp_timer_perf_forget(e->fd);
        if (is_ours)
            close(e->fd);
    }
    smp_timer_perf_close_kernel(&reg.spare.kring);
    if (reg.spare.fd >= 0) {
        int is_ours = smp_timer_perf_is(reg.spare.fd, reg.spare.id);
        smp_timer_perf_forget(reg.spare.fd);
        if (is_ours)
            close(reg.spare.fd);
    }
    reg.spare = (struct entry)ENTRY_NONE;
    reg.n = 0;
    reg.n_perf = 0;
    reg.itimer_armed = 0;
    reg.check_at = 0;
    /* The choice (reg.choice with its period and interval, the errors behind its notes)
     * stays for lp_timers_choose_inherited(). The forking thread's random-interval state is
     * its parent's and names timers the child does not have: its generator is seeded again
     * on its next draw (else the child draws the same intervals as its parent), and no
     * counter plan or drawn interval carries over into the child's first samples. No
     * handler runs in the child yet. */
    smp_self.rng = 0;
    smp_self.plan = (struct smp_jitter_plan){0};
    smp_self.timer_drawn_ns = 0;
    atomic_store(&smp_sampler.itimer_drawn_ns, 0);
    atomic_store(&smp_sampler.itimer_carry_ns, 0);
    pthread_mutex_unlock(&reg.mu);
}

/* A ring source's entry whose counter the application closed: a new counter for the
 * thread, or the entry goes (the thread is gone). With reg.mu held; 1 when replaced. */
static int repair_ring_locked(struct entry *e)
{
    munmap(e->kring.map, e->kring.map_bytes);
    e->kring = (struct smp_perf_kring){.fd = -1};
    reg.n_perf--;
    if (e->is_retired || arm_ring_locked(e->tid, e) != 0)
        return -1;
    reg.n_perf++;
    return 1;
}

int lp_timers_check(void)
{
    int repaired = 0;
    pthread_mutex_lock(&reg.mu);
    /* A few entries a call, in turn: the cost stays flat in the number of threads (a
     * program with a thousand idle threads), and every entry is seen within a second or
     * so. */
    size_t i = reg.check_at < reg.n ? reg.check_at : 0;
    for (size_t seen = 0; i < reg.n && seen < LP_TIMERS_CHECK_MAX; seen++) {
        struct entry *e = &reg.entries[i];
        int is_ring = reg.choice.source == PROF_TIMER_RING && e->fd < 0 && e->timer < 0;
        if (is_ring && e->kring.fd >= 0 && !smp_timer_perf_is(e->kring.fd, e->kring.id)) {
            int r = repair_ring_locked(e);
            if (r < 0) {
                *e = reg.entries[--reg.n];
                continue;
            }
            repaired += r;
        } else if (is_ring && e->kring.fd >= 0 && !e->is_retired &&
                   smp_timer_perf_ring_ended(&e->kring)) {
            e->is_retired = 1; /* a thread gone without our exit hook */
        } else if (e->kring.fd >= 0 && !smp_timer_perf_is(e->kring.fd, e->kring.id)) {
            /* The application closed the kernel-time counter's descriptor: its ring goes,
             * and the thread's samples carry its kernel time again. */
            munmap(e->kring.map, e->kring.map_bytes);
            e->kring.map = NULL;
            e->kring.fd = -1;
            reg.n_perf--;
            if (e->fd >= 0)
                smp_timer_perf_unmark_ksampled(e->fd, e->tid);
        }
        if (e->fd < 0 || smp_timer_perf_is(e->fd, e->id)) {
            i++;
            continue;
        }
        /* The application closed our descriptor (its number may be the application's
         * now: it is left alone, and no longer taken for ours). A new counter takes over
         * for the thread. */
        smp_timer_perf_forget(e->fd);
        uint32_t flags = e->kring.fd >= 0 ? SMP_PERF_FD_KSAMPLED : 0;
        int fd = smp_timer_perf_open(e->tid, reg.choice.signo, reg.hz, reg.choice.event, flags,
                                     &e->id);
        if (fd >= 0) {
            e->fd = fd;
            repaired++;
            i++;
        } else {
            reg.n_perf -= 1 + (e->kring.fd >= 0);
            smp_timer_perf_close_kernel(&e->kring);
            *e = reg.entries[--reg.n]; /* the thread is gone */
        }
    }
    reg.check_at = i;
    pthread_mutex_unlock(&reg.mu);
    return repaired;
}

size_t lp_timers_drain_kernel(struct lp_writer *w, const struct lp_ksamples_ends *ends,
                              unsigned max_frames, int *busy)
{
    size_t n = 0;
    pthread_mutex_lock(&reg.mu);
    for (size_t i = 0; i < reg.n;) {
        struct entry *e = &reg.entries[i];
        n += lp_ksamples_drain(w, &e->kring, ends, reg.max_stack, max_frames, &e->weigh, busy);
        if (!e->is_retired) {
            i++;
            continue;
        }
        disarm_entry(e); /* read for the last time */
        *e = reg.entries[--reg.n];
    }
    pthread_mutex_unlock(&reg.mu);
    return n;
}

/* Ring-source threads whose CPU-time timer fired since the last look: each gets its ring
 * counter, and its timer goes (once no handler may still re-arm it). A thread whose ring
 * the kernel refuses stays with its timer. With reg.mu held. */
static void promote_ripe_locked(void)
{
    unsigned n_ripe = atomic_load_explicit(&smp_sampler.n_ripe, memory_order_acquire);
    if (n_ripe == reg.ripe_seen)
        return;
    reg.ripe_seen = n_ripe;
    if (settle_ring_locked() != 0) {
        /* No ring counters here: every thread keeps its CPU-time timer (the thread
         * source's, the session's now). */
        for (size_t i = 0; i < reg.n; i++)
            reg.entries[i].wants_ring = 0;
        return;
    }
    /* The timers go first, so that no time is sampled by both. */
    int any = 0;
    for (size_t i = 0; i < reg.n; i++) {
        struct entry *e = &reg.entries[i];
        if (!e->wants_ring || e->timer < 0 || !atomic_load(&smp_timer_ripe[e->timer]))
            continue;
        smp_timer_thread_forget(e->timer);
        any = 1;
    }
    if (!any)
        return;
    wait_for_handlers();
    for (size_t i = 0; i < reg.n; i++) {
        struct entry *e = &reg.entries[i];
        if (!e->wants_ring || e->timer < 0 || !atomic_load(&smp_timer_ripe[e->timer]))
            continue;
        atomic_store(&smp_timer_ripe[e->timer], 0);
        smp_timer_thread_delete(e->timer);
        e->timer = -1;
        e->wants_ring = 0;
        if (reg.n_perf < reg.perf_budget && arm_ring_locked(e->tid, e) == 0)
            reg.n_perf++;
        else if (smp_timer_thread_create(e->tid, reg.choice.signo, reg.hz, &e->timer) != 0)
            e->timer = -1; /* the thread is gone, or no timer is left: lp_timers_check() */
    }
}

/* Ring-source threads whose stacks went past the kernel's copy of them (a deep recursion)
 * in the writer's last period: from now on each is sampled by the perf source's signal,
 * whose handler walks its whole stack; its ring is read once more and closed. With
 * reg.mu held. */
static void move_cut_threads_locked(void)
{
    for (size_t i = 0; i < reg.n; i++) {
        struct entry *e = &reg.entries[i];
        if (e->kring.fd < 0 || e->fd >= 0 || e->is_retired || e->weigh.n_cut == 0 ||
            (uint64_t)e->weigh.n_cut * 100 < e->weigh.n_window ||
            !CMN_GROW(reg.entries, reg.cap, reg.n + 1, 64))
            continue;
        e = &reg.entries[i]; /* the array may have moved */
        struct entry sig = ENTRY_NONE;
        sig.tid = e->tid;
        int fd = smp_timer_perf_open(e->tid, reg.choice.signo, reg.hz, reg.choice.event, 0,
                                     &sig.id);
        if (fd < 0)
            continue;
        sig.fd = fd;
        smp_timer_perf_pause_kernel(&e->kring);
        e->is_retired = 1;
        reg.entries[reg.n++] = sig;
        reg.n_perf++;
        if (!reg.cut_noted) {
            reg.cut_noted = 1;
            lp_note("a thread's stack went on past the %u KiB the kernel copies of it (deeper, "
                    "or onto another stack: a Go program's cgo call): such threads are sampled "
                    "by a signal from then on, which walks the whole stack",
                    e->kring.stack_bytes / 1024u);
        }
    }
}

/* The copy a thread's walks want: half as much again as the most they read, and 2 KiB,
 * rounded up to 4 KiB within LP_RING_MIN_STACK..LP_RING_MAX_STACK. */
static unsigned fitting_copy(uint32_t used)
{
    uint64_t want = ((uint64_t)used + used / 2 + 2048u + 4095u) & ~4095ull;
    return want < LP_RING_MIN_STACK   ? LP_RING_MIN_STACK
           : want > LP_RING_MAX_STACK ? LP_RING_MAX_STACK
                                      : (unsigned)want;
}

/* Ring-source threads whose stack copy is not the size their walks want: the kernel
 * copies the whole size at every sample (a 32 KiB copy costs about 10 us here, where a
 * thread's walk commonly reads under 2 KiB), and the ring sized for such records takes
 * that much more locked memory. A thread whose walks, LP_RING_LEARN of them at least, want
 * a quarter less than its copy or smaller gets one of that size; one whose stack went
 * past the copy in the last period (1 % of its samples) gets LP_RING_MAX_STACK again, past
 * which move_cut_threads_locked() takes over. The new counter opens before the old one is
 * paused (a moment of both: never a moment of neither), and the old ring is read once
 * more and closed (lp_timers_drain_kernel()). With reg.mu held. */
static void resize_copies_locked(void)
{
    for (size_t i = 0, n = reg.n; i < n; i++) {
        struct entry *e = &reg.entries[i];
        if (e->kring.fd < 0 || !e->kring.counts_user || e->fd >= 0 || e->is_retired ||
            e->is_paused || e->weigh.fixed)
            continue;
        unsigned now = e->kring.stack_bytes, want = now;
        int cut = e->weigh.n_cut > 0 && (uint64_t)e->weigh.n_cut * 100 >= e->weigh.n_window;
        /* Stacks that went on onto another stack: no copy holds them, the signal does. */
        if (e->weigh.n_switched > 0 && (uint64_t)e->weigh.n_switched * 100 >= e->weigh.n_window)
            continue;
        if (cut && now < LP_RING_MAX_STACK)
            want = LP_RING_MAX_STACK; /* in one step: each step costs a period of cut stacks */
        else if (!cut && e->weigh.n_whole >= LP_RING_LEARN &&
                 fitting_copy(e->weigh.max_used) <= now - now / 4)
            want = fitting_copy(e->weigh.max_used);
        if (want == now || reg.n_perf >= reg.perf_budget ||
            !CMN_GROW(reg.entries, reg.cap, reg.n + 1, 64))
            continue;
        e = &reg.entries[i]; /* the array may have moved */
        struct smp_perf_ring_spec spec = ring_spec_sized(reg.hz, reg.choice.event,
                                                         e->kring.counts_kernel, want,
                                                         LP_RING_SIZED_HOLD_MS);
        struct entry sized = ENTRY_NONE;
        sized.tid = e->tid;
        if (smp_timer_perf_open_ring(e->tid, &spec, &sized.kring) != 0)
            continue;
        sized.weigh = (struct lp_kweigh){.period_ns = e->weigh.period_ns,
                                         .drawn_ns = reg.choice.period_ns,
                                         .kernel_skips = e->weigh.kernel_skips};
        smp_timer_perf_pause_kernel(&e->kring);
        e->is_retired = 1;
        reg.entries[reg.n++] = sized;
        reg.n_perf++;
        atomic_fetch_add_explicit(&smp_sampler.counters[PROF_STAT_RING_RESIZES], 1,
                                  memory_order_relaxed);
    }
}

void lp_timers_tend(uint64_t window_ns)
{
    pthread_mutex_lock(&reg.mu);
    uint64_t mean = reg.choice.interval_ns;
    if (reg.choice.source != PROF_TIMER_RING) {
        pthread_mutex_unlock(&reg.mu);
        return;
    }
    promote_ripe_locked();
    resize_copies_locked();
    move_cut_threads_locked();
    if (mean == 0) { /* a hardware event's frequency mode: the kernel sets its periods */
        for (size_t i = 0; i < reg.n; i++)
            reg.entries[i].weigh.n_window = reg.entries[i].weigh.n_cut =
                reg.entries[i].weigh.n_switched = 0;
        pthread_mutex_unlock(&reg.mu);
        return;
    }
    if (reg.rng == 0)
        reg.rng = cmn_clock_ns(CLOCK_MONOTONIC) | 1u;
    double n_window = (double)window_ns / (double)mean;
    for (size_t i = 0; i < reg.n; i++) {
        struct entry *e = &reg.entries[i];
        /* Threads that ran: each draw costs an interrupt of its CPU when it runs. */
        if (e->kring.fd < 0 || e->is_retired || e->weigh.n_window == 0 || e->weigh.fixed)
            continue;
        uint64_t next = smp_jitter_window(&reg.rng, mean, e->weigh.skew_ns, n_window);
        if (smp_timer_perf_set_period(&e->kring, next) == 0)
            e->weigh.drawn_ns = next;
        e->weigh.n_window = 0;
        e->weigh.n_cut = 0;
        e->weigh.n_switched = 0;
    }
    pthread_mutex_unlock(&reg.mu);
}

void lp_timers_pause_kernel(void)
{
    pthread_mutex_lock(&reg.mu);
    for (size_t i = 0; i < reg.n; i++)
        smp_timer_perf_pause_kernel(&reg.entries[i].kring);
    pthread_mutex_unlock(&reg.mu);
}

int lp_timers_count(void)
{
    pthread_mutex_lock(&reg.mu);
    int n = (int)reg.n;
    pthread_mutex_unlock(&reg.mu);
    return n;
}
