/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The profiling signal handler (see handler.h). Everything reachable from here is on the
 * handler's path: this file, walk.c, walk_unw.c, probe.c, codemap.c, ring.c and
 * app_action.c, checked by `make lint` against an allowlist of async-signal-safe calls. The
 * thread's stack bounds were captured outside the handler; the walk never reads outside
 * them.
 */
#include "sampler/handler.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "arch/arch.h"
#include "sampler/check.h"
#include "sampler/codemap.h"
#include "sampler/defer.h"
#include "sampler/probe.h"
#include "sampler/ring.h"
#include "sampler/sigstack.h"
#include "sampler/timer_perf.h"
#include "sampler/timer_thread.h"
#include "sampler/walk.h"
#ifdef PROF_HAVE_LIBUNWIND
#include "sampler/walk_unw.h"
#endif

struct smp_sampler smp_sampler;
__thread struct smp_thread smp_self __attribute__((tls_model("initial-exec")));
_Atomic uint32_t smp_perf_fds[SMP_PERF_FD_MAX];
_Atomic uint8_t smp_timer_ripe[SMP_TIMER_ID_MAX];

static void count(unsigned idx)
{
    atomic_fetch_add_explicit(&smp_sampler.counters[idx], 1, memory_order_relaxed);
}

static void add(unsigned idx, uint64_t n)
{
    if (n != 0)
        atomic_fetch_add_explicit(&smp_sampler.counters[idx], n, memory_order_relaxed);
}

/* The system calls below are made from functions of their own, never inlined into the
 * handler: a kernel-time sample taken in one then shows a frame of libprof's code in its
 * call chain (the handler's own frame returns into the signal trampoline, which ends the
 * kernel's walk), which is how libprof/ksamples.c tells the profiler's cost from the
 * program's time. */
#define SMP_SYSCALL_SITE __attribute__((noinline))
#define SMP_NO_TAIL_CALL() __asm__ volatile("" ::: "memory") /* the call returns here */

/* A clock, by system call: never the vDSO, whose clock reads execute rdtsc, which faults
 * in a thread that turned the TSC off (prctl(PR_SET_TSC, PR_TSC_SIGSEGV)). */
SMP_SYSCALL_SITE uint64_t smp_clock_ns(clockid_t clk)
{
    struct timespec ts = {0, 0};
    syscall(SYS_clock_gettime, (long)clk, &ts);
    SMP_NO_TAIL_CALL();
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

SMP_SYSCALL_SITE uint32_t smp_self_tid(void)
{
    if (smp_self.tid == 0)
        smp_self.tid = (uint32_t)syscall(SYS_gettid);
    return smp_self.tid;
}

/* When the interrupted code runs on the thread's alternate signal stack (an application
 * signal handler installed with SA_ONSTACK), that stack's bounds replace the thread's: the
 * walk then reads the handler's frames there, and crosses the signal frame back to the
 * thread's own stack. On any other stack (a coroutine's, a goroutine's), the walk's bounds
 * are the memory the stack pointer is in, read through the probe (sampler/walk.h). */
SMP_SYSCALL_SITE static void use_alt_stack_if_there(uintptr_t sp, struct smp_stack *stack)
{
    stack_t ss;
    if (sp >= stack->lo && sp < stack->hi)
        return;
    stack->thread_lo = stack->lo;
    stack->thread_hi = stack->hi;
    if (syscall(SYS_sigaltstack, NULL, &ss) == 0 && !(ss.ss_flags & SS_DISABLE) &&
        sp >= (uintptr_t)ss.ss_sp && sp - (uintptr_t)ss.ss_sp < ss.ss_size) {
        stack->lo = (uintptr_t)ss.ss_sp;
        stack->hi = (uintptr_t)ss.ss_sp + ss.ss_size;
        return;
    }
    stack->lo = sp;
    stack->hi = sp + SMP_PROBED_SPAN > sp ? sp + SMP_PROBED_SPAN : UINTPTR_MAX;
    stack->probed = 1;
}

/* The registers and the stack a walk of context uc starts from; 0 when the thread's stack
 * is not known. */
static int walk_start(const ucontext_t *uc, struct cmn_fp_regs *regs, struct smp_stack *stack)
{
    *regs = (struct cmn_fp_regs){
        .pc = arch_pc(uc), .sp = arch_sp(uc), .fp = arch_fp(uc), .lr = arch_lr(uc),
        .ret = arch_uc_ret(uc), .ret_known = 1, .arg = arch_uc_arg(uc), .arg_known = 1
    };
    *stack = (struct smp_stack){
        .lo = smp_self.stack_lo, .hi = smp_self.stack_hi, .root_fp = smp_self.root_fp,
        .root_lo = smp_sampler.root_lo, .root_hi = smp_sampler.root_hi
    };
    if (stack->hi == 0)
        return 0;
    use_alt_stack_if_there(regs->sp, stack);
    return 1;
}

SMP_READS_STACK uint8_t smp_take_stack(struct prof_rec_sample *rec, uint64_t *frames,
                                       const ucontext_t *uc, int keep,
                                       struct smp_walk_out *out)
{
    struct cmn_fp_regs regs;
    struct smp_stack stack;
    rec->flags = 0;
    rec->sp_word = 0;
    *out = (struct smp_walk_out){.stop_reason = PROF_STOP_NO_STACK};
    if (!walk_start(uc, &regs, &stack)) {
        frames[0] = arch_strip_pac(regs.pc);
        rec->n_frames = 1;
        return PROF_STOP_NO_STACK;
    }
#ifdef PROF_HAVE_LIBUNWIND
    /* A nested walk on this thread falls back to the stepper below. */
    if (smp_unw_enabled) {
        uint8_t why;
        unsigned n = smp_walk_unw((void *)uc, &regs, &stack, frames,
                                  smp_sampler.max_frames, &why);
        if (n > 0) {
            rec->n_frames = (uint16_t)n;
            out->stop_reason = why;
            return why;
        }
    }
#endif
    rec->n_frames = (uint16_t)smp_walk(&regs, &stack, frames, smp_sampler.max_frames,
                                       smp_sampler.walk_mode, out);
    rec->flags = out->flags;
    /* A walk cut short at a module whose table is still to be built, or at code mapped
     * since the map was read (a library in the middle of its dlopen, running its _init),
     * is made again by the writer once it has them (sampler/defer.h). */
    if (keep && (out->stop_reason == PROF_STOP_PENDING ||
                 (out->n_unknown > 0 && out->stop_reason != PROF_STOP_END)))
        out->deferred = smp_defer_take(&regs, stack.lo, stack.hi, stack.probed);
    return out->stop_reason;
}

/* The weight of a sample measured in CPU time. Its interval was drawn as `drawn` ns of CPU
 * time (sampler/jitter.h); the sample weighs 1 for it, plus the periods of CPU time its
 * thread used beyond it: with the perf source and no kernel-time counter, its time in
 * system calls (the counter counts user time only, so a period spent in a call shows
 * here, on the stack the call returned to); with the CPU-time timers, the ticks the timer
 * waited for. The remainder carries over, so that the weights add up to the CPU time. A
 * thread's first sample in an epoch has no mark to measure from and weighs 1. */
static uint32_t weigh(int64_t due, uint64_t period, int64_t *carry)
{
    uint64_t extra = due > (int64_t)(period / 2) ? ((uint64_t)due + period / 2) / period : 0;
    if (extra > UINT32_MAX / 2)
        extra = UINT32_MAX / 2;
    *carry = due - (int64_t)(extra * period);
    return 1u + (uint32_t)extra;
}

/* The drawn interval, or the mean when none was drawn (a timer's first interval). */
static uint64_t drawn_or_mean(uint64_t drawn)
{
    return drawn != 0 ? drawn : smp_sampler.period_ns;
}

static uint32_t cpu_weight(uint64_t drawn)
{
    uint64_t period = smp_sampler.period_ns;
    if (period == 0)
        return 1;
    uint64_t now = smp_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    unsigned epoch = atomic_load_explicit(&smp_sampler.epoch, memory_order_relaxed);
    uint32_t w = 1;
    if (smp_self.cpu_epoch == epoch && now >= smp_self.cpu_ns)
        w = weigh((int64_t)(now - smp_self.cpu_ns) - (int64_t)drawn_or_mean(drawn) +
                      smp_self.cpu_carry_ns,
                  period, &smp_self.cpu_carry_ns);
    else
        smp_self.cpu_carry_ns = 0;
    smp_self.cpu_epoch = epoch;
    smp_self.cpu_ns = now;
    return w;
}

/* The same for ITIMER_PROF, which counts the process's CPU time and signals whichever
 * thread runs: the mark, the carry and the drawn interval are the process's. Its signals
 * come one at a time (one expiry, then the handler draws the next), so they are not
 * fought over. */
static uint32_t itimer_weight(void)
{
    uint64_t period = smp_sampler.period_ns;
    if (period == 0)
        return 1;
    uint64_t now = smp_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    unsigned epoch = atomic_load_explicit(&smp_sampler.epoch, memory_order_relaxed);
    uint64_t last = atomic_exchange_explicit(&smp_sampler.itimer_cpu_ns, now, memory_order_relaxed);
    unsigned last_epoch =
        atomic_exchange_explicit(&smp_sampler.itimer_epoch, epoch, memory_order_relaxed);
    uint64_t drawn = atomic_load_explicit(&smp_sampler.itimer_drawn_ns, memory_order_relaxed);
    int64_t carry = 0;
    uint32_t w = 1;
    if (last_epoch == epoch && last != 0 && now >= last)
        w = weigh((int64_t)(now - last) - (int64_t)drawn_or_mean(drawn) +
                      atomic_load_explicit(&smp_sampler.itimer_carry_ns, memory_order_relaxed),
                  period, &carry);
    atomic_store_explicit(&smp_sampler.itimer_carry_ns, carry, memory_order_relaxed);
    return w;
}

int smp_signal_origin(const siginfo_t *info)
{
    /* The perf source arms a per-thread timer instead of a counter for the threads past
     * its descriptor budget, so both kinds of per-thread signal can come; the ring source,
     * which sends none, either for the threads whose ring the kernel refused. */
    switch (smp_sampler.source) {
    case PROF_TIMER_THREAD:
    case PROF_TIMER_PERF:
    case PROF_TIMER_RING:
        if (info->si_code == SI_TIMER && info->si_value.sival_ptr == SMP_TIMER_COOKIE)
            return SMP_SIGNAL_OURS;
        if (smp_sampler.source != PROF_TIMER_THREAD &&
            (info->si_code == POLL_HUP || info->si_code == POLL_IN)) {
            /* POLL_IN/POLL_HUP name the counter's descriptor. */
            int fd = info->si_fd;
            uint32_t owner = fd >= 0 && (unsigned)fd < SMP_PERF_FD_MAX
                                 ? atomic_load_explicit(&smp_perf_fds[fd], memory_order_acquire)
                                 : 0;
            if (owner == 0)
                return SMP_SIGNAL_APP; /* a descriptor never ours */
            if (owner == SMP_PERF_FD_LATE)
                return SMP_SIGNAL_LATE;
            return (owner & ~SMP_PERF_FD_KSAMPLED) == smp_self_tid() ? SMP_SIGNAL_OURS
                                                                      : SMP_SIGNAL_LATE;
        }
        return SMP_SIGNAL_APP;
    default:
        return info->si_code == SI_KERNEL ? SMP_SIGNAL_OURS : SMP_SIGNAL_APP;
    }
}

SMP_SYSCALL_SITE static void refresh_counter(int fd)
{
    ioctl(fd, PERF_EVENT_IOC_REFRESH, 1);
    SMP_NO_TAIL_CALL();
}

/* The weight of a signal of ours; the perf source's counter stopped at its overflow and is
 * re-armed here, on the descriptor smp_signal_origin() proved to be this thread's, for an
 * interval drawn at random (sampler/jitter.h). */
static uint32_t our_weight(const siginfo_t *info)
{
    if (info->si_code == SI_TIMER) {
        if (smp_sampler.period_ns != 0)
            return cpu_weight(smp_self.timer_drawn_ns);
        return info->si_overrun > 0 ? 1u + (uint32_t)info->si_overrun : 1u;
    }
    if (info->si_code == POLL_HUP || info->si_code == POLL_IN) {
        int fd = info->si_fd;
        uint64_t drawn = smp_self.plan.fd == fd && smp_self.plan.at != 0 ? smp_self.plan.period : 0;
        if (smp_sampler.interval_ns != 0)
            smp_jitter_perf(&smp_self.rng, &smp_self.plan, fd, smp_sampler.interval_ns);
        refresh_counter(fd);
        /* With a kernel-time counter of its own, the thread's user samples weigh 1 (their
         * intervals average one period); else they carry its kernel time too. */
        uint32_t owner = atomic_load_explicit(&smp_perf_fds[fd], memory_order_relaxed);
        return owner & SMP_PERF_FD_KSAMPLED ? 1 : cpu_weight(drawn);
    }
    return itimer_weight();
}

/* The ring source's CPU-time timer of this thread fired: the thread runs, and is given its
 * ring counter (smp_timer_ripe). */
static void note_ripe(const siginfo_t *info)
{
    int id = info->si_timerid;
    if (smp_sampler.source == PROF_TIMER_RING && info->si_code == SI_TIMER && id >= 0 &&
        (unsigned)id < SMP_TIMER_ID_MAX &&
        !atomic_exchange_explicit(&smp_timer_ripe[id], 1, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&smp_sampler.n_ripe, 1, memory_order_release);
        smp_writer_wake_up(); /* once a thread: its ring comes at once */
    }
}

/* The CPU-time timers' next interval, drawn at random (sampler/jitter.h): the thread's own
 * timer, or ITIMER_PROF while it is libprof's. While sampling runs only: libprof/ stops
 * sampling and waits for the handlers in flight before it deletes a timer. */
static void rearm_cpu_timer(const siginfo_t *info)
{
    uint64_t mean = smp_sampler.interval_ns;
    if (mean == 0)
        return;
    if (info->si_code == SI_TIMER)
        smp_self.timer_drawn_ns =
            smp_jitter_thread_timer(&smp_self.rng, info->si_timerid, smp_self_tid(), mean);
    else if (info->si_code == SI_KERNEL && atomic_load(&smp_sampler.itimer_owned))
        atomic_store_explicit(&smp_sampler.itimer_drawn_ns, smp_jitter_itimer(&smp_self.rng, mean),
                              memory_order_relaxed);
}

#ifdef PROF_HAVE_LIBUNWIND
/* PROF_UNWIND=check: walks the same context with libunwind, the oracle, and compares.
 * The sample (slot, already walked with the tables) is flagged when the two differ, and
 * libunwind's stack follows it in the ring as a sample flagged PROF_SAMPLE_ORACLE, which
 * reports leave out unless asked (prof report --unwind-check libunwind).
 * A walk that stopped for a table still to come, or left frames out, is not compared. */
__attribute__((noinline)) static struct smp_slot *check_walk(struct smp_ring *ring,
                                                             struct smp_slot *slot,
                                                             const ucontext_t *uc,
                                                             const struct smp_walk_out *walk)
{
    uint64_t other[SMP_CHECK_FRAMES];
    struct cmn_fp_regs regs;
    struct smp_stack stack;
    uint8_t why;
    unsigned max = smp_sampler.max_frames < SMP_CHECK_FRAMES ? smp_sampler.max_frames
                                                             : SMP_CHECK_FRAMES;
    if (walk->stop_reason == PROF_STOP_PENDING || walk->n_elided != 0 ||
        slot->rec.n_frames > max || !walk_start(uc, &regs, &stack))
        return NULL;
    unsigned n = smp_walk_unw((void *)uc, &regs, &stack, other, max, &why);
    if (n == 0)
        return NULL;
    int same = n == slot->rec.n_frames;
    for (unsigned i = 0; same && i < n; i++)
        same = other[i] == slot->frames[i];
    count(same ? PROF_STAT_CHECK_SAME : PROF_STAT_CHECK_DIFF);
    if (same)
        return NULL;
    slot->rec.flags |= PROF_SAMPLE_CHECK_DIFF;
    struct smp_slot *twin = smp_ring_reserve(ring);
    if (twin == NULL)
        return NULL;
    twin->rec = slot->rec;
    twin->ctx = slot->ctx;
    twin->rec.n_frames = (uint16_t)n;
    twin->rec.stop_reason = why;
    twin->rec.flags = PROF_SAMPLE_ORACLE | (why == PROF_STOP_END ? 0 : PROF_SAMPLE_TRUNCATED);
    for (unsigned i = 0; i < n; i++)
        twin->frames[i] = other[i];
    return twin;
}
#endif

/* The thread's OpenTelemetry context (the otel_thread_ctx_v1 TLS pointer of the
 * OpenTelemetry thread-context specification, OTEP 4947): read here, where the thread is
 * interrupted, as the specification asks of readers. The TLS word is this thread's own
 * static TLS; the record it points to is the program's memory, read through the probe. A
 * record is: trace-id[16] span-id[8] valid:u8 trace-flags:u8 attrs-data-size:u16
 * attrs-data[]. */
SMP_READS_STACK static void read_otel(struct smp_sample_ctx *c)
{
    intptr_t off = smp_sampler.otel_tls_off;
    if (off == 0)
        return;
    uintptr_t at = (uintptr_t)__builtin_thread_pointer() + (uintptr_t)off, rec;
    __builtin_memcpy(&rec, (const void *)at, sizeof(rec));
    uint8_t head[28];
    if (rec == 0 || (rec & 1u) || smp_probe_read(head, rec, sizeof(head)) != 0 || head[24] != 1)
        return;
    __builtin_memcpy(c->otel.trace_id, head, 16);
    __builtin_memcpy(c->otel.span_id, head + 16, 8);
    c->otel.flags = head[25];
    c->otel.is_set = 1;
    c->has_otel = 1;
    uint16_t size = (uint16_t)(head[26] | head[27] << 8);
    if (size > SMP_OTEL_ATTRS_MAX)
        size = SMP_OTEL_ATTRS_MAX; /* the entries that fit; a cut one is left out */
    unsigned got = 0;
    while (got < size) {
        unsigned n = size - got < SMP_PROBE_MAX_BYTES ? size - got : SMP_PROBE_MAX_BYTES;
        if (smp_probe_read(c->otel_attrs + got, rec + sizeof(head) + got, n) != 0)
            break;
        got += n;
    }
    c->otel_len = (uint16_t)got;
}

/* What the thread said it was doing (libprof/labels.h): its label set id, one word; its
 * trace, the buffer that its index names (the thread fills the other one, then flips the
 * index: this handler, which interrupts it, never reads a buffer being filled). */
static void take_ctx(struct smp_sample_ctx *c)
{
    c->label_set = smp_self.label_set;
    c->otel_len = 0;
    c->has_otel = 0;
    c->otel.is_set = 0;
    c->trace.is_set = 0;
    unsigned cur = smp_self.trace_cur;
    if (cur == 1 || cur == 2)
        c->trace = smp_self.trace[cur - 1];
    read_otel(c);
}

/* One sample of the interrupted context into a ring slot. */
static void take_sample(uint32_t weight, const ucontext_t *uc)
{
    count(PROF_STAT_SIGNALS);
    /* This thread's own ring first; when it has none or it is full, the shared one. */
    struct smp_ring *ring = smp_self.ring;
    struct smp_slot *slot = ring ? smp_ring_reserve(ring) : NULL;
    if (!slot) {
        ring = smp_sampler.ring;
        slot = smp_ring_reserve(ring);
    }
    if (!slot) {
        count(PROF_STAT_DROPPED);
        return;
    }
    struct smp_walk_out walk;
    uint8_t why = smp_take_stack(&slot->rec, slot->frames, uc, 1, &walk);
    slot->rec.time_ns = smp_clock_ns(CLOCK_MONOTONIC);
    slot->rec.tid = smp_self_tid();
    slot->rec.weight = weight;
    slot->rec.stop_reason = why;
    slot->rec.flags |= why == PROF_STOP_END ? 0 : PROF_SAMPLE_TRUNCATED;
    slot->rec.state = smp_sampler.running_state;
    slot->deferred = walk.deferred;
    take_ctx(&slot->ctx);
    /* Counted before the slot is published: the writer may drain it at once, and a rewalk
     * of a kept stack takes its stop reason's count back (libprof/ksamples.c), which must
     * never come before the count it takes back (an interval's file would say -1). */
    count(PROF_STAT_SAMPLES);
    atomic_fetch_add_explicit(&smp_sampler.counters[PROF_STAT_WEIGHT], weight,
                              memory_order_relaxed);
    if (why != PROF_STOP_END) {
        count(PROF_STAT_TRUNCATED);
        if (why < PROF_STOP_N)
            count(PROF_STAT_STOP_OF(why));
    }
    add(PROF_STAT_FRAMES_TABLE, walk.n_by_table);
    add(PROF_STAT_FRAMES_FP, walk.n_by_fp);
    add(PROF_STAT_FRAMES_PENDING, walk.n_pending);
#ifdef PROF_HAVE_LIBUNWIND
    struct smp_slot *twin = smp_sampler.check_unwind ? check_walk(ring, slot, uc, &walk) : NULL;
    smp_ring_publish(ring, slot);
    if (twin != NULL)
        smp_ring_publish(ring, twin);
#else
    smp_ring_publish(ring, slot);
#endif
}

/* One signal of ours: its weight, the timer's next interval, the sample. On the stack
 * smp_sigstack_run() chose; without one (skip set), the same but the sample, which is
 * counted skipped. */
struct our_signal {
    const siginfo_t *info;
    const ucontext_t *uc;
    int skip;
};

static void on_our_signal(void *p)
{
    const struct our_signal *o = p;
    /* Announce the sample before looking at `active`; libprof/ clears `active` before it
     * waits for in_flight to drain: with both sides sequentially consistent, either the
     * finisher sees this handler in flight or this handler sees sampling stopped. */
    atomic_fetch_add(&smp_sampler.in_flight, 1);
    uint32_t weight = our_weight(o->info);
    if (atomic_load(&smp_sampler.active)) {
        note_ripe(o->info);
        rearm_cpu_timer(o->info);
        if (smp_self.is_own_wait) {
            count(PROF_STAT_OWN_WAIT);
        } else if (!o->skip) {
            take_sample(weight, o->uc);
        } else {
            count(PROF_STAT_SIGNALS);
            count(PROF_STAT_NO_SIGSTACK);
        }
    }
    int was = atomic_fetch_sub_explicit(&smp_sampler.in_flight, 1, memory_order_release);
    SMP_RAW_CHECK(was > 0, "handler: in_flight went below zero");
    (void)was;
}

/* The application blocks this signal on this thread in its view (smp_self.app_blocked is
 * sig), the kernel does not: its own instance waits, as it would, pending until the application
 * unblocks the signal. It is queued again with its siginfo and blocked for real from this
 * handler's return (the context's mask); libprof/interpose.c unblocks it with the
 * application. */
static void hold_app_signal(int sig, siginfo_t *info, void *ucontext)
{
    ucontext_t *uc = ucontext;
    sigaddset(&uc->uc_sigmask, sig);
    smp_self.app_held = 1;
    syscall(SYS_rt_tgsigqueueinfo, (pid_t)syscall(SYS_getpid), (pid_t)syscall(SYS_gettid), sig,
            info);
}

void smp_handler(int sig, siginfo_t *info, void *ucontext)
{
    int saved_errno = errno;
    int origin = smp_signal_origin(info);
    if (origin != SMP_SIGNAL_OURS) {
        if (origin == SMP_SIGNAL_LATE) {
            count(PROF_STAT_LATE_SIGNALS);
            errno = saved_errno;
            return;
        }
        /* The application's own signal. Nothing of ours is under way: its handler may
         * leave by siglongjmp() or pthread_exit(). */
        count(PROF_STAT_APP_SIGNALS);
        if (smp_self.app_blocked == sig) {
            hold_app_signal(sig, info, ucontext);
            errno = saved_errno;
            return;
        }
        errno = saved_errno;
        int rc = smp_app_action_deliver(&smp_sampler.app, sig, info, ucontext);
        if (rc == SMP_APP_DEFAULT)
            smp_app_signal_default(sig);
        if (rc != SMP_APP_RAN)
            errno = saved_errno;
        return;
    }
    /* Everything else runs on a stack of libprof's (sampler/sigstack.h): the kernel may
     * have left this one a few hundred bytes. Without one, the timer is still re-armed. */
    struct our_signal o = {info, ucontext, 0};
    if (smp_sigstack_run(on_our_signal, &o) != 0) {
        o.skip = 1;
        on_our_signal(&o);
    }
    errno = saved_errno;
}
