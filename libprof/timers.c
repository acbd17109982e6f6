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

#include "common/grow.h"
#include "include/libprof/prof_format.h"
#include "libprof/config.h"
#include "libprof/fd.h"
#include "libprof/ksamples.h"
#include "libprof/libc.h"
#include "libprof/log.h"
#include "sampler/handler.h"
#include "sampler/timer_itimer.h"
#include "sampler/timer_perf.h"
#include "sampler/timer_thread.h"

#define LP_DEFAULT_RT_OFFSET 2 /* default signal of the per-thread sources: SIGRTMAX - 2 */
#define LP_TIMERS_CHECK_MAX 8u /* entries lp_timers_check() looks at per call */

struct entry {
    pid_t tid;
    int fd;        /* perf source: the counter; -1 for a thread timer */
    uint64_t id;   /* perf source: the counter's kernel id, to recognize its descriptor */
    int timer;     /* thread source: the POSIX timer's kernel id */
    struct smp_perf_kring kring; /* perf source: the kernel-time counter, fd -1 none */
};

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
} reg = { .mu = PTHREAD_MUTEX_INITIALIZER, .spare = {.fd = -1, .kring = {.fd = -1}} };

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
    reg.spare = (struct entry){.fd = -1, .kring = {.fd = -1}};
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

/* The notes a choice leaves in the profile (the same in a fork child, which inherits it). */
static void note_choice(const struct lp_config *cfg, const struct lp_timer_choice *out,
                        unsigned tick, int event_err, int perf_err, int ksample)
{
    if (event_err != 0)
        lp_note("PROF_EVENT=%s is not available here (%s%s); using task-clock",
                event_name(cfg->event), strerror(-event_err),
                event_err == -ENOENT || event_err == -EOPNOTSUPP ? ": no hardware counters"
                                                                 : "");
    if (cfg->timer == PROF_TIMER_ITIMER && cfg->signo && cfg->signo != SIGPROF)
        lp_note("PROF_SIGNAL is ignored by PROF_TIMER=itimer, which always sends SIGPROF");
    if (perf_err != 0 && cfg->timer == PROF_TIMER_PERF)
        lp_note("PROF_TIMER=perf is not available (perf_event_open: %s; see "
                "/proc/sys/kernel/perf_event_paranoid); using per-thread timers",
                strerror(-perf_err));
    if (out->source != PROF_TIMER_PERF && tick && cfg->freq_hz > tick)
        lp_note("PROF_FREQ=%u is above what CPU-time timers deliver on this kernel (%u Hz, "
                "its scheduler tick): expect about %u samples per CPU-second%s",
                cfg->freq_hz, tick, tick,
                out->source == PROF_TIMER_THREAD
                    ? ", each weighted by the periods it stands for; PROF_TIMER=perf goes higher"
                    : "; PROF_TIMER=perf goes higher");
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
    int event_err = reg.event_err, perf_err = reg.perf_err, ksample = reg.ksample;
    pthread_mutex_unlock(&reg.mu);
    if (!same)
        return lp_timers_choose(cfg, out);
    note_choice(cfg, out, lp_timers_tick_hz(), event_err, perf_err, ksample);
    return 0;
}

int lp_timers_choose(const struct lp_config *cfg, struct lp_timer_choice *out)
{
    memset(out, 0, sizeof(*out));
    unsigned tick = lp_timers_tick_hz();
    int rt_signo = cfg->signo ? cfg->signo : SIGRTMAX - LP_DEFAULT_RT_OFFSET;
    int rc = -EINVAL, perf_err = 0, event_err = 0;
    struct entry kept = {.tid = self_tid(), .fd = -1, .kring = {.fd = -1}};

    if (cfg->timer == PROF_TIMER_ITIMER) {
        out->source = PROF_TIMER_ITIMER;
        out->signo = SIGPROF;
        rc = 0;
    } else {
        out->signo = rt_signo;
        if (cfg->timer == LP_TIMER_AUTO || cfg->timer == PROF_TIMER_PERF)
            perf_err = rc = choose_perf(cfg, rt_signo, out, &event_err, &kept);
        if (rc != 0) {
            rc = try_thread_timer(rt_signo);
            if (rc == 0)
                out->source = PROF_TIMER_THREAD;
        }
    }
    if (rc != 0)
        return rc;
    if (out->source != PROF_TIMER_PERF) {
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
    unsigned frames = max_stack(cfg);
    int ksample = out->source == PROF_TIMER_PERF && out->period_ns != 0 &&
                  try_kernel_counter(kernel_hz(cfg->freq_hz), frames, &kept.kring) == 0;
    note_choice(cfg, out, tick, event_err, perf_err, ksample);
    pthread_mutex_lock(&reg.mu);
    drop_spare_locked();
    reg.spare = kept; /* counters only when the perf source was chosen */
    reg.choice = *out;
    reg.hz = cfg->freq_hz;
    reg.chosen = 1;
    reg.perf_budget = budget;
    reg.ksample = ksample;
    reg.max_stack = frames;
    reg.khz = kernel_hz(cfg->freq_hz);
    reg.perf_err = perf_err;
    reg.event_err = event_err;
    reg.timer_asked = cfg->timer;
    reg.event_asked = cfg->event;
    pthread_mutex_unlock(&reg.mu);
    return 0;
}

static struct entry *find(pid_t tid)
{
    for (size_t i = 0; i < reg.n; i++)
        if (reg.entries[i].tid == tid)
            return &reg.entries[i];
    return NULL;
}

/* With reg.mu held. */
static int arm_locked(pid_t tid)
{
    if (!reg.chosen || reg.choice.source == PROF_TIMER_ITIMER || find(tid))
        return 0;
    if (!CMN_GROW(reg.entries, reg.cap, reg.n + 1, 64))
        return -ENOMEM;
    struct entry e = {.tid = tid, .fd = -1, .kring = {.fd = -1}};
    int rc = -EMFILE;
    /* A counter costs the application a descriptor; past the budget (a program with very
     * many threads), threads get a per-thread timer on the same signal instead. The
     * kernel-time counter comes first, so that the handler knows from the first signal
     * that the thread's samples weigh 1. */
    struct entry spare = {.fd = -1, .kring = {.fd = -1}};
    if (reg.spare.tid == tid) { /* the choice's trial counters: this thread's */
        spare = reg.spare;
        reg.spare = (struct entry){.fd = -1, .kring = {.fd = -1}};
    }
    if (reg.choice.source == PROF_TIMER_PERF && reg.n_perf < reg.perf_budget) {
        if (reg.ksample && reg.n_perf + 2 <= reg.perf_budget) {
            if (spare.kring.fd >= 0 && smp_timer_perf_resume_kernel(&spare.kring) == 0) {
                e.kring = spare.kring;
                spare.kring = (struct smp_perf_kring){.fd = -1};
            } else if (smp_timer_perf_open_kernel(tid, reg.khz, reg.max_stack, &e.kring) != 0) {
                e.kring.fd = -1;
            }
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
    if (rc != 0)
        rc = smp_timer_thread_create(tid, reg.choice.signo, reg.hz, &e.timer);
    smp_timer_perf_close_kernel(&spare.kring); /* what was not taken over */
    if (spare.fd >= 0)
        smp_timer_perf_close(spare.fd, spare.id);
    if (rc == 0) {
        reg.entries[reg.n++] = e;
        reg.n_perf += (e.fd >= 0) + (e.kring.fd >= 0);
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
    } else {
        smp_timer_thread_delete(e->timer);
    }
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
    DIR *d = opendir("/proc/self/task");
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        pid_t tid = (pid_t)atoi(de->d_name);
        if (tid > 0 && tid != skip && arm_locked(tid) == 0)
            n++;
    }
    if (d)
        closedir(d);
    drop_spare_locked();
    pthread_mutex_unlock(&reg.mu);
    return n;
}

void lp_timers_disarm_self(void)
{
    pid_t tid = self_tid();
    pthread_mutex_lock(&reg.mu);
    struct entry *e = find(tid);
    if (e) {
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
        if (reg.entries[i].fd < 0)
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
        if (e->fd < 0) {
            smp_timer_thread_forget(e->timer); /* the parent's; the child has none */
            continue;
        }
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
    reg.spare = (struct entry){.fd = -1, .kring = {.fd = -1}};
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
        if (e->kring.fd >= 0 && !smp_timer_perf_is(e->kring.fd, e->kring.id)) {
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
    for (size_t i = 0; i < reg.n; i++)
        n += lp_ksamples_drain(w, &reg.entries[i].kring, ends, reg.max_stack, max_frames,
                               (uint32_t)(reg.hz / reg.khz), busy);
    pthread_mutex_unlock(&reg.mu);
    return n;
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
