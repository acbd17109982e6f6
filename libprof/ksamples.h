/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Samples of the time threads spend in the kernel (system calls, page faults), read from
 * the rings of the perf source's kernel-only counters (sampler/timer_perf.h): the kernel
 * recorded each one with the thread's user registers where it entered the kernel, a copy
 * of the top of its user stack (SMP_PERF_KSTACK_BYTES), its own frame-pointer walk of the
 * user stack, and the time. Each becomes a sample like the handler's: walked by the unwind
 * tables over the stack copy (common/uw_step.h, as the handler walks), then, where the copy
 * ends, along the kernel's walk only through frames whose rows prove them frame-pointer
 * frames; complete where it reaches libprof's entry trampolines, truncated with its reason
 * elsewhere. Called by the writer thread, or by the thread that finishes the profile, as
 * the writer buffer's owner.
 */
#ifndef PROF_LIBPROF_KSAMPLES_H
#define PROF_LIBPROF_KSAMPLES_H

#include <stddef.h>
#include <stdint.h>

#define LP_KSAMPLE_MAX_FRAMES 4096u /* frames of a sample this reader takes (PROF_DEPTH at most) */
#define LP_KSAMPLE_MAX_STACK 65528u /* bytes of user stack a record copies at most */

struct lp_writer;
struct smp_perf_kring;

#define LP_KSAMPLE_SIGNALS 3u /* libprof's signals on the program's threads */

/* Where stacks end: return addresses in [lo, hi) are libprof's entry trampolines; a chain
 * with a frame in [self_lo, self_hi), libprof.so's own code, that ends in a signal
 * trampoline was taken inside libprof's handler (time the profiler cost, which the kernel
 * charged to the thread): it is counted, not recorded. So is one taken in the sigreturn
 * system call that ends a handler of one of signals[] (the sampling, snapshot and toggle
 * signals; 0: none), whose frames are gone by then. */
struct lp_ksamples_ends {
    uintptr_t lo;
    uintptr_t hi;
    uintptr_t self_lo;
    uintptr_t self_hi;
    int signals[LP_KSAMPLE_SIGNALS];
    uintptr_t sigreturn_pc; /* where a thread in the sigreturn that ends one of our handlers
                             * is (just past the restorer's system call): only a sample
                             * there is looked at for it; 0 unknown, every sample is */
    uint32_t own_tid;       /* a thread libprof makes wait for its writer at _exit, 0 none,
                             * and since when (CLOCK_MONOTONIC): its samples from then on
                             * are libprof's time, counted, not recorded. Set by that
                             * thread (own_since_ns first, __atomic), read by the drainer */
    uint64_t own_since_ns;
};

/* Not async-signal-safe. The sigreturn_pc of our handler of signal signo (installed by
 * glibc's sigaction(), whose restorer the kernel keeps), 0 when not known. */
uintptr_t lp_ksamples_sigreturn_pc(int signo);

/* How the samples of one ring weigh. The perf source's kernel-time counter runs slower
 * than the profile's rate: each of its samples weighs `fixed` periods. The ring source's
 * counter samples at intervals the writer draws around the period (lp_timers_tend()):
 * each sample weighs 1, and skew_ns sums the thread's time between samples (the counter's
 * value says it) less a period each, which the next draws steer back (a new draw also
 * cuts the interval under way short, which they make up for), so that every thread's
 * samples keep pace with its time. A counter that may not sample kernel time
 * (kernel_skips) skips the intervals that end there: those whole intervals come as more
 * weight on the next sample, in periods, the remainder carried on. Owned by the writer
 * buffer's owner. */
struct lp_kweigh {
    uint32_t fixed;       /* each sample weighs this; 0: measured as above */
    int kernel_skips;     /* the counter does not sample kernel time */
    uint64_t period_ns;   /* the profile's period (1 / PROF_FREQ) */
    uint64_t drawn_ns;    /* the interval the counter is armed with now */
    uint64_t last_count;  /* the counter's value at its last sample */
    int64_t carry_ns;     /* skipped time counted but not yet given out as weight */
    int64_t skew_ns;      /* time between samples less the periods given, summed */
    uint32_t n_window;    /* samples since the last draw */
    uint32_t n_cut;       /* of those, samples whose stack went on past the copy */
    uint32_t n_switched;  /* and of those, samples whose stack went on onto another stack
                           * (Go's cgo call): no larger copy holds it */
    uint32_t n_whole;     /* samples walked within the copy, since the counter opened */
    uint32_t max_used;    /* the most bytes of a copy such a walk read (libprof/timers.c
                           * sizes the thread's copy by it) */
};

/* Not async-signal-safe; the writer buffer's owner. The weight of a sample of wt's counter
 * taken at the counter's value count (ns of the thread's time), and wt updated. */
uint32_t lp_ksamples_weigh(struct lp_kweigh *wt, uint64_t count);

/* Not async-signal-safe; the writer buffer's owner (one at a time). Moves every record of
 * ring k into w, weighed by wt (above); returns the samples moved. kernel_cap: the frames
 * the counter asked the kernel for (a chain that long was cut by the kernel: depth);
 * max_frames: PROF_DEPTH. A ring source's sample taken in the kernel is flagged as such
 * (PROF_SAMPLE_KERNEL). Records the kernel lost (its ring was full) count as dropped
 * samples. *busy (may be NULL) is set when records come fast enough to fill half the ring
 * in a writer period (LP_WRITER_PERIOD_MS), or some were lost: the writer then comes back
 * sooner (LP_WRITER_BUSY), since a thread that spends its time in the kernel fills its
 * ring of 32 KiB stack copies in about 30 ms. */
size_t lp_ksamples_drain(struct lp_writer *w, struct smp_perf_kring *k,
                         const struct lp_ksamples_ends *ends, unsigned kernel_cap,
                         unsigned max_frames, struct lp_kweigh *wt, int *busy);

struct smp_defer;
struct prof_rec_sample;

/* Not async-signal-safe; whoever drains a ring (libprof/writer.c's rewalk). The stack a
 * handler kept for sample rec (d: sampler/defer.h), whose walk stopped at a module whose
 * table was pending or at code the code map did not know yet, walked again over the copy,
 * reading the maps again and building the tables it meets: where it
 * gets further (or whole), rec (n_frames, stop_reason, flags), frames (cap at most) and
 * the counters of truncated samples are updated. */
void lp_ksamples_rewalk(struct prof_rec_sample *rec, uint64_t *frames, unsigned cap,
                        const struct smp_defer *d, const struct lp_ksamples_ends *ends);

/* Not async-signal-safe; the writer buffer's owner. Walks the body of one such sample
 * record (the user registers and stack the kernel recorded: the switch-out samples of
 * libprof/wall.c have the same layout) into frames (max_frames at most, and at most
 * LP_KSAMPLE_MAX_FRAMES); returns their number and sets *why, or 0 when the record cannot
 * be read. */
unsigned lp_ksamples_walk_body(const unsigned char *body, size_t len,
                               const struct lp_ksamples_ends *ends, unsigned kernel_cap,
                               unsigned max_frames, uint64_t *frames, uint8_t *why);

#endif
