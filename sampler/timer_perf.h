/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The perf_event source: one perf_event_open() counter per thread (a software clock by
 * default, PERF_COUNT_SW_TASK_CLOCK, or a hardware event where the machine has a PMU),
 * whose overflow sends a chosen signal to the owning thread (O_ASYNC, F_SETSIG,
 * F_SETOWN_EX with F_OWNER_TID). Software clocks run on high-resolution timers, so they
 * deliver the requested rate, above the scheduler tick. Each overflow disables the counter
 * (PERF_EVENT_IOC_REFRESH with a limit of one); the handler re-arms it with the same
 * ioctl on the descriptor the kernel names in si_fd, so a thread that stops handling
 * signals stops being signalled.
 *
 * Counters count user space only (exclude_kernel): an overflow, and so our signal, happens
 * only while the thread runs its own code, never inside a system call, which a signal
 * would cut short (a blocking pipe write returns a partial count when a handler runs in
 * its middle, SA_RESTART or not). The time a thread spends in the kernel is sampled by a
 * second counter, kernel-only, that never signals (at a lower rate, libprof/timers.c): at
 * each of its overflows the kernel records the thread's user-space call chain (frame
 * pointers), the word at its user stack pointer and the time into a small ring mapped
 * from the counter, which libprof's writer thread reads (libprof/ksamples.c): a system
 * call's time is charged to the stack that made it. Where kernel-only counters are not permitted (perf_event_paranoid 2 without
 * privileges) there is no second counter, and the handler weighs each sample by the
 * thread's CPU time since its last one instead (sampler/handler.c): the time is counted,
 * on the thread's next sample in user space.
 *
 * Which descriptors are ours, for the handler: smp_perf_fds[fd] holds the tid of the
 * thread whose counter fd is (set before the counter is enabled), SMP_PERF_FD_LATE once
 * that counter was closed (a signal it queued may still arrive and must not be taken for
 * the application's), 0 for a number never ours. The handler issues its ioctl only on a
 * descriptor that is its own thread's counter, never on one the application may have
 * reused. The descriptors are close-on-exec, numbered 3 or above, below SMP_PERF_FD_MAX.
 */
#ifndef PROF_SAMPLER_TIMER_PERF_H
#define PROF_SAMPLER_TIMER_PERF_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

/* Events (PROF_EVENT). */
#define SMP_PERF_TASK_CLOCK 0u  /* software: the thread's CPU time */
#define SMP_PERF_CPU_CLOCK 1u   /* software: CPU time, per-CPU clock */
#define SMP_PERF_CYCLES 2u      /* hardware */
#define SMP_PERF_INSTRUCTIONS 3u /* hardware */

#define SMP_PERF_FD_MAX 65536u        /* counters take descriptors below this */
#define SMP_PERF_FD_LATE 0xffffffffu  /* smp_perf_fds[]: a counter of ours, closed */
#define SMP_PERF_FD_KSAMPLED 0x80000000u /* smp_perf_fds[]: or'ed to the tid when the thread's
                                          * kernel time has a counter of its own: its user
                                          * samples weigh 1 */
#define SMP_PERF_KRING_PAGES 64u      /* data pages of a kernel-time ring (plus one): 256
                                       * KiB, room for 7 samples of a full stack copy */
#define SMP_PERF_KSTACK_BYTES 32768u  /* user stack a kernel-time sample copies: sqlite3's
                                       * shell keeps 20 KiB between a system call and main */

/* smp_perf_fds[fd]: see the file comment. Written by the functions below (application and
 * writer threads), read by handlers; defined with the handler's state. */
extern _Atomic uint32_t smp_perf_fds[SMP_PERF_FD_MAX];

/* Not async-signal-safe. Opens and arms a counter of `event` on thread tid that signals
 * signo to tid hz times per second of the event's time (for the clocks), or about hz
 * times per second of CPU time (hardware events, in frequency mode). owner_flags: 0, or
 * SMP_PERF_FD_KSAMPLED when the thread's kernel time has a counter of its own. Returns the
 * descriptor or -errno (-ENOENT/-EOPNOTSUPP: no such event here; -EACCES/-EPERM: not
 * permitted by perf_event_paranoid; -EMFILE: no descriptor below SMP_PERF_FD_MAX).
 * *id_out gets the counter's kernel id, which names it for smp_timer_perf_close(). */
int smp_timer_perf_open(pid_t tid, int signo, unsigned hz, unsigned event, uint32_t owner_flags,
                        uint64_t *id_out);
/* Not async-signal-safe. 1 when descriptor fd is still the counter with kernel id `id`
 * (the application may have closed ours and got the number back for a file of its own). */
int smp_timer_perf_is(int fd, uint64_t id);
/* Not async-signal-safe. Closes counter `id` at fd when fd is still that counter; marks
 * the number late either way. */
void smp_timer_perf_close(int fd, uint64_t id);
/* Not async-signal-safe. Forgets descriptor fd as ours without touching it: after fork (the
 * parent's counter), or when it is no longer our counter. */
void smp_timer_perf_forget(int fd);
/* Not async-signal-safe. Stops counter `id` at fd counting (and so signalling) while
 * keeping it: smp_timer_perf_rearm() starts it again. */
void smp_timer_perf_pause(int fd, uint64_t id);
/* Not async-signal-safe. Starts a paused counter of thread tid again, for one overflow,
 * with the handler's owner_flags (as smp_timer_perf_open()). 0 or -errno. */
int smp_timer_perf_rearm(int fd, uint64_t id, pid_t tid, uint32_t owner_flags);
/* Not async-signal-safe. Tells the handler that the thread of counter fd (tid) has no
 * kernel-time counter (any more): its samples carry its kernel time as weight. */
void smp_timer_perf_unmark_ksampled(int fd, pid_t tid);

/* A counter whose samples the kernel records into a ring: the perf source's kernel-time
 * counter, or the ring source's one counter per thread (PROF_TIMER=ring). What a record
 * holds follows from the flags: PERF_SAMPLE_TID, TIME, READ when has_read, CALLCHAIN when
 * has_callchain, REGS_USER (ARCH_PERF_REGS_MASK) and STACK_USER (stack_bytes). */
struct smp_perf_kring {
    int fd;          /* the counter, -1 none */
    uint64_t id;     /* its kernel id (smp_timer_perf_is) */
    void *map;       /* the ring: one metadata page, then its data pages */
    size_t map_bytes;
    uint64_t drained_ns; /* CLOCK_MONOTONIC of its last drain (libprof/ksamples.c), 0 none */
    uint64_t busy_until_ns; /* the writer keeps its short period until then (the same) */
    unsigned stack_bytes;   /* user stack a record copies at most */
    unsigned char has_read;      /* records carry the counter's value (PERF_SAMPLE_READ) */
    unsigned char has_callchain; /* records carry the kernel's user call chain */
    unsigned char counts_user;   /* the counter samples user time (the ring source) */
    unsigned char counts_kernel; /* and kernel time */
};

/* What a ring counter samples and records (smp_timer_perf_open_ring()). */
struct smp_perf_ring_spec {
    unsigned event;       /* SMP_PERF_*: a clock, or a hardware event in frequency mode */
    unsigned hz;          /* samples per second of the event's time */
    int user;             /* sample user time */
    int kernel;           /* sample kernel time */
    unsigned stack_bytes; /* user stack each record copies, at most (<= 65528) */
    unsigned max_stack;   /* frames of the kernel's user call chain, 0: none recorded */
    int read;             /* records carry the counter's value */
    unsigned data_pages;  /* the ring's data pages, a power of two */
};

/* Not async-signal-safe. Opens a counter of spec on thread tid that records its samples
 * into a ring mapped into k (TIME on CLOCK_MONOTONIC) and never signals; it counts from
 * the call. 0 or -errno (-EACCES/-EPERM: not permitted by perf_event_paranoid, kernel time
 * in particular; -EPERM/-ENOMEM from the mapping: locked memory is used up). */
int smp_timer_perf_open_ring(pid_t tid, const struct smp_perf_ring_spec *spec,
                             struct smp_perf_kring *k);
/* Not async-signal-safe. 0 when a counter of spec may be opened on this thread (opened
 * and closed, no ring mapped), else -errno as smp_timer_perf_open_ring(). */
int smp_timer_perf_try_ring(const struct smp_perf_ring_spec *spec);
/* Not async-signal-safe. Sets the ring counter's sampling period to period_ns from now
 * (PERF_EVENT_IOC_PERIOD); its thread is interrupted for it when it runs elsewhere. */
int smp_timer_perf_set_period(struct smp_perf_kring *k, uint64_t period_ns);
/* Not async-signal-safe. 1 when the thread the counter samples has exited (the ring stays
 * readable). */
int smp_timer_perf_ring_ended(const struct smp_perf_kring *k);
/* Not async-signal-safe. Opens a kernel-only task clock on thread tid, hz times per second
 * of its kernel time, recording (PERF_SAMPLE_TID, TIME on CLOCK_MONOTONIC, CALLCHAIN of
 * user space only, at most max_stack frames, the user registers and SMP_PERF_KSTACK_BYTES
 * of user stack) into a ring of SMP_PERF_KRING_PAGES mapped into k; it never signals. 0 or
 * -errno (-EACCES/-EPERM: kernel-only events are not permitted here; -ENOMEM/-EPERM from
 * the mapping: locked memory is used up). */
int smp_timer_perf_open_kernel(pid_t tid, unsigned hz, unsigned max_stack,
                               struct smp_perf_kring *k);
/* Not async-signal-safe. Stops the counter counting; the ring stays readable. */
void smp_timer_perf_pause_kernel(struct smp_perf_kring *k);
/* Not async-signal-safe. Starts a paused counter counting again. 0 or -errno. */
int smp_timer_perf_resume_kernel(struct smp_perf_kring *k);
/* Not async-signal-safe. Unmaps the ring and closes the counter (when its descriptor is
 * still that counter). Accepts a ring never opened. */
void smp_timer_perf_close_kernel(struct smp_perf_kring *k);

#endif
