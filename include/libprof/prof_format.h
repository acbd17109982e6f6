/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The on-disk profile format shared by the writer (libprof.so) and the reader (prof).
 * Fixed-width, little-endian structs and constants only; the prose is docs/FORMAT.md.
 *
 *   file   := header record*
 *   header := prof_file_header                      (16 bytes)
 *   record := prof_rec_hdr body, size_bytes in all  (a multiple of 8, at least 8)
 *
 * Records are appended as the run goes, so a file cut short (killed process) is valid up
 * to its last whole record. A reader skips record types it does not know, and ignores
 * bytes past the fields it knows inside a record it does know, so that later versions can
 * add both. Every record of a clean run is followed by one PROF_REC_END.
 */
#ifndef PROF_INCLUDE_LIBPROF_PROF_FORMAT_H
#define PROF_INCLUDE_LIBPROF_PROF_FORMAT_H

#include <stdint.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the profile format is little-endian; this host is not"
#endif

#define PROF_FILE_MAGIC "LIBPROF\0" /* 8 bytes, the NUL included */
#define PROF_FILE_VERSION 2u /* 2 added PROF_REC_STACK and PROF_REC_SAMPLES; readers of 2
                              * read 1 too */
#define PROF_REC_ALIGN 8u
#define PROF_REC_MAX_BYTES (1u << 20) /* a larger size_bytes marks a corrupt record */
#define PROF_BUILD_ID_MAX 32u
#define PROF_THREAD_NAME_MAX 16u /* the kernel's TASK_COMM_LEN, NUL included */

/* Record types (prof_rec_hdr.type). */
#define PROF_REC_PROCESS 1u /* once, first: who was profiled and how */
#define PROF_REC_MAP 2u     /* an executable mapping live at time_ns */
#define PROF_REC_THREAD 3u  /* a thread's name */
#define PROF_REC_SAMPLE 4u  /* one stack */
#define PROF_REC_STATS 5u   /* end-of-run counters */
#define PROF_REC_END 6u     /* last record of a file that was closed cleanly */
#define PROF_REC_STACK 7u   /* a distinct stack, with the id that samples name it by */
#define PROF_REC_SAMPLES 8u /* a batch of compact samples naming their stacks by id */
#define PROF_REC_SNAPSHOT 9u /* a thread of an all-thread snapshot, answering or not */
#define PROF_REC_NOTE 10u    /* something the library adapted to, told in words */
#define PROF_REC_LABELS 11u  /* the profile's labels (PROF_LABELS): key=value pairs */
#define PROF_REC_LABEL_SET 12u /* a thread label set (prof_label_set()), with the id that
                                * stacks name it by (prof_stack_state.label_set) */
#define PROF_REC_TRACE 13u     /* a trace and span id pair (prof_trace_set()), with the id
                                * that samples name it by */
#define PROF_REC_SAMPLE_TRACES 14u /* the trace of each entry of the PROF_REC_SAMPLES that
                                    * follows it */

/* Timer sources (prof_rec_process.timer_source). */
#define PROF_TIMER_NONE 0u   /* no timer: an all-thread snapshot (PROF_REC_SNAPSHOT) */
#define PROF_TIMER_ITIMER 1u /* setitimer(ITIMER_PROF): process CPU time */
#define PROF_TIMER_THREAD 2u /* timer_create() per thread on its CPU clock */
#define PROF_TIMER_PERF 3u   /* perf_event_open() per thread (task clock or a PMU event) */
#define PROF_TIMER_RING 4u   /* perf_event_open() per thread whose samples the kernel records
                              * (registers, top of the stack) into a ring: no signal */

/* What a profile samples (prof_rec_process.mode). */
#define PROF_MODE_CPU 0u  /* CPU time: each thread in proportion to its CPU time */
#define PROF_MODE_WALL 1u /* wall time: every thread, running or not, each sample with the
                           * thread's state (PROF_STATE_*) */

/* Stack steppers (prof_rec_process.unwinder). */
#define PROF_UNWIND_FP 1u        /* frame-pointer chain */
#define PROF_UNWIND_LIBUNWIND 2u /* libunwind with .eh_frame unwind tables */
#define PROF_UNWIND_AUTO 3u      /* libprof's unwind tables where there are, frame pointers
                                  * elsewhere */
#define PROF_UNWIND_DWARF 4u     /* libprof's unwind tables only */
#define PROF_UNWIND_CHECK 5u     /* auto, each walk compared with libunwind's (a test mode) */

/* Why a stack walk ended (prof_rec_sample.stop_reason). Only PROF_STOP_END is complete. */
#define PROF_STOP_END 0u      /* reached a null frame pointer or return address: the root */
#define PROF_STOP_DEPTH 1u    /* the depth limit (PROF_DEPTH) was reached */
#define PROF_STOP_BOUNDS 2u   /* a frame pointer left the thread's stack */
#define PROF_STOP_ALIGN 3u    /* a frame pointer was misaligned */
#define PROF_STOP_ORDER 4u    /* frame addresses did not strictly increase */
#define PROF_STOP_NO_STACK 5u /* the thread's stack bounds were unknown: leaf only */
#define PROF_STOP_RULE 6u     /* an unwind rule the stepper does not follow (a DWARF
                               * expression, a register it does not track) */
#define PROF_STOP_CODE 7u     /* a return address outside every executable mapping */
#define PROF_STOP_NO_INFO 8u  /* no unwind table row, and PROF_UNWIND=dwarf forbids a
                               * frame-pointer step */
#define PROF_STOP_PENDING 9u  /* the frame's module has an unwind table that was not built
                               * yet (the first moments after the module was first met) */
#define PROF_STOP_N 10u

/* Sample flags (prof_rec_sample.flags). */
#define PROF_SAMPLE_TRUNCATED 1u   /* stop_reason != PROF_STOP_END */
#define PROF_SAMPLE_LEAF_CALLER 2u /* frames[1] is the leaf's caller, recovered in the handler
                                    * (prologue, epilogue or frameless leaf); sp_word is 0 */
#define PROF_SAMPLE_ELIDED 4u      /* the stack was deeper than PROF_DEPTH: one of its frames
                                    * is a PROF_FRAME_ELIDED marker between the innermost
                                    * and the outermost frames */
#define PROF_SAMPLE_CHECK_DIFF 8u  /* PROF_UNWIND=check: libunwind walked this context to
                                    * another stack, the next PROF_SAMPLE_ORACLE sample */
#define PROF_SAMPLE_ORACLE 16u     /* PROF_UNWIND=check: libunwind's stack of the sample
                                    * before it (reports leave it out) */
#define PROF_SAMPLE_KERNEL 32u     /* time in the kernel (a kernel-only counter's sample, its
                                    * stack walked from a copy of the user stack) */

/* A frame value that is no address: frames left out of a deep stack, their number in the
 * low 48 bits (user addresses never have all of the top 16 bits set). */
#define PROF_FRAME_ELIDED 0xffff000000000000ull
#define PROF_FRAME_IS_ELIDED(f) (((f) & PROF_FRAME_ELIDED) == PROF_FRAME_ELIDED)

/* Mapping protections (prof_rec_map.prot). */
#define PROF_MAP_READ 1u
#define PROF_MAP_WRITE 2u
#define PROF_MAP_EXEC 4u

/* Counters of PROF_REC_STATS, by index. A reader treats missing trailing ones as 0. */
#define PROF_STAT_SIGNALS 0       /* profiling signals handled while active */
#define PROF_STAT_SAMPLES 1       /* samples recorded into the ring */
#define PROF_STAT_DROPPED 2       /* samples lost because the ring was full */
#define PROF_STAT_TRUNCATED 3     /* recorded samples whose walk did not reach the root */
#define PROF_STAT_STOP_DEPTH 4    /* of those, by reason: PROF_STOP_DEPTH */
#define PROF_STAT_STOP_BOUNDS 5   /* PROF_STOP_BOUNDS */
#define PROF_STAT_STOP_ALIGN 6    /* PROF_STOP_ALIGN */
#define PROF_STAT_STOP_ORDER 7    /* PROF_STOP_ORDER */
#define PROF_STAT_STOP_NO_STACK 8 /* PROF_STOP_NO_STACK */
#define PROF_STAT_WRITE_ERRORS 9  /* failed writes of the profile file */
#define PROF_STAT_DURATION_NS 10  /* wall time from start to the end of profiling */
#define PROF_STAT_CPU_NS 11       /* process CPU time (user + system) at the end */
#define PROF_STAT_WEIGHT 12       /* summed weight of the recorded samples */
#define PROF_STAT_APP_SIGNALS 13  /* signals on libprof's signal that were the application's,
                                   * delivered to its action */
#define PROF_STAT_LATE_SIGNALS 14 /* signals of libprof's timers that were gone (dropped) */
#define PROF_STAT_KERNEL_SAMPLES 15 /* of the recorded samples, those of time in the kernel
                                     * (a kernel-only counter's, no signal) */
#define PROF_STAT_KERNEL_SELF 16 /* kernel-time samples taken inside libprof's own signal
                                  * handlers or the sigreturn ending them (its cost, not
                                  * the program's): not recorded */
#define PROF_STAT_STOP_RULE 17    /* truncated samples by reason: PROF_STOP_RULE */
#define PROF_STAT_STOP_CODE 18    /* PROF_STOP_CODE */
#define PROF_STAT_STOP_NO_INFO 19 /* PROF_STOP_NO_INFO */
#define PROF_STAT_FRAMES_TABLE 20 /* frames stepped by an unwind table */
#define PROF_STAT_FRAMES_FP 21    /* frames stepped by frame pointer (no table row there) */
#define PROF_STAT_FRAMES_PENDING 22 /* walks that met a module whose table was not built
                                     * yet (they stop there: PROF_STOP_PENDING) */
#define PROF_STAT_UNWIND_BYTES 23 /* memory of the unwind tables built, at the end */
#define PROF_STAT_UNWIND_MODULES 24 /* modules with an unwind table, at the end */
#define PROF_STAT_STOP_PENDING 25 /* truncated samples by reason: PROF_STOP_PENDING */
#define PROF_STAT_CHECK_SAME 26   /* PROF_UNWIND=check: walks libunwind agreed with */
#define PROF_STAT_CHECK_DIFF 27   /* and those it did not (PROF_SAMPLE_CHECK_DIFF) */
#define PROF_STAT_OFFCPU_SAMPLES 28 /* wall profiles: of the recorded samples, those of time
                                     * off CPU (no signal: from the kernel's context-switch
                                     * records) */
#define PROF_STAT_OFFCPU_WEIGHT 29 /* and their summed weight */
#define PROF_STAT_SWITCHES_LOST 30 /* wall profiles: context-switch records the kernel could
                                    * not write (its ring was full) */
#define PROF_STAT_POSTS_DROPPED 31 /* records other threads handed the writer (mappings,
                                    * thread names, notes) that found its queue full */
#define PROF_STAT_UNWRITTEN 32    /* samples taken that never reached the file: the writer
                                   * thread could not finish it in time at the end (its
                                   * STATS then written by the thread that ended the run) */
#define PROF_STAT_NO_SIGSTACK 33 /* signals of libprof's whose sample was skipped: no stack
                                  * with room for the handler (sampler/sigstack.h) */
#define PROF_STAT_RING_SAMPLES 34 /* of the recorded samples, those the kernel recorded into a
                                   * ring, no signal (PROF_TIMER=ring), kernel time included */
#define PROF_STAT_LABELS_LOST 35 /* of the recorded samples, those whose thread's labels were
                                  * not known: its label history overflowed (changes faster
                                  * than the writer thread read them) */
#define PROF_STAT_RING_RESIZES 36 /* ring counters opened again for a thread with a stack
                                   * copy of another size (sized to its walks) */
#define PROF_STAT_OWN_WAIT 37    /* samples of a thread while libprof made it wait for the
                                  * writer thread at _exit (its time, not the program's):
                                  * not recorded */
#define PROF_STAT_N 38

/* The counter of truncated samples with stop reason r (PROF_STOP_DEPTH and above). */
#define PROF_STAT_STOP_OF(r)                                                                \
    ((r) < PROF_STOP_RULE      ? PROF_STAT_STOP_DEPTH + (r) - PROF_STOP_DEPTH               \
     : (r) < PROF_STOP_PENDING ? PROF_STAT_STOP_RULE + (r) - PROF_STOP_RULE                 \
                               : PROF_STAT_STOP_PENDING)

struct prof_file_header {
    char magic[8];         /* PROF_FILE_MAGIC */
    uint32_t version;      /* PROF_FILE_VERSION */
    uint32_t header_bytes; /* sizeof(struct prof_file_header); records start here */
};

struct prof_rec_hdr {
    uint32_t type;       /* PROF_REC_* */
    uint32_t size_bytes; /* the whole record, this header included; multiple of 8 */
};

/* Followed by the executable's path, NUL-terminated, then zero padding to 8. */
struct prof_rec_process {
    struct prof_rec_hdr hdr;
    uint32_t pid;
    uint32_t ppid;
    uint64_t start_mono_ns; /* CLOCK_MONOTONIC when profiling started; sample times use it */
    uint64_t start_real_ns; /* CLOCK_REALTIME at the same moment */
    uint32_t requested_hz;  /* PROF_FREQ */
    uint32_t effective_hz;  /* the rate the timer source can deliver, 0 if unknown */
    uint16_t timer_source;  /* PROF_TIMER_* */
    uint16_t unwinder;      /* PROF_UNWIND_* */
    uint16_t max_depth;     /* frames per sample at most (PROF_DEPTH) */
    uint16_t mode;          /* PROF_MODE_* (0 in files written before it existed) */
};

/* Followed by the mapped file's path (or "[vdso]", "" for anonymous), NUL-terminated,
 * then zero padding to 8. */
struct prof_rec_map {
    struct prof_rec_hdr hdr;
    uint64_t time_ns;     /* CLOCK_MONOTONIC when the mapping was seen */
    uint64_t start;       /* first address */
    uint64_t end;         /* one past the last address */
    uint64_t file_offset; /* offset in the file of the byte at start */
    uint32_t prot;        /* PROF_MAP_* */
    uint8_t build_id_len; /* bytes of build_id in use, 0 if none was found */
    uint8_t reserved[3];  /* 0 */
    uint8_t build_id[PROF_BUILD_ID_MAX];
};

/* Followed by the name, NUL-terminated, then zero padding to 8. */
struct prof_rec_thread {
    struct prof_rec_hdr hdr;
    uint64_t time_ns; /* CLOCK_MONOTONIC when the name was read */
    uint32_t tid;
    uint32_t reserved; /* 0 */
};

/* Followed by n_frames uint64_t addresses: frames[0] is the interrupted pc, the others
 * return addresses, leaf first; then, when the sample has labels or a trace, a
 * prof_sample_ctx (8 bytes). */
struct prof_rec_sample {
    struct prof_rec_hdr hdr;
    uint64_t time_ns;    /* CLOCK_MONOTONIC when the signal was handled */
    uint32_t tid;        /* kernel thread id */
    uint32_t weight;     /* timer ticks this sample stands for, at least 1 */
    uint16_t n_frames;   /* frames that follow */
    uint8_t stop_reason; /* PROF_STOP_* */
    uint8_t flags;       /* PROF_SAMPLE_* */
    uint32_t state;      /* PROF_STATE_*, with the system call (PROF_STATE_CALL): what the
                          * thread was doing; 0 in CPU profiles */
    uint64_t sp_word;    /* the word at the interrupted stack pointer, 0 if not readable */
};

/* Followed by n_counters uint64_t counters, indexed by PROF_STAT_*. */
struct prof_rec_stats {
    struct prof_rec_hdr hdr;
    uint32_t n_counters;
    uint32_t reserved; /* 0 */
};

/* Followed by n_frames uint64_t addresses, as in prof_rec_sample, then, when the state or
 * the label set is not 0, a prof_stack_state (8 bytes): both are part of the stack. Ids
 * count from 0 in the order stacks first appear; a stack is defined before any batch that
 * names it. */
struct prof_rec_stack {
    struct prof_rec_hdr hdr;
    uint32_t id;         /* the stack's id */
    uint16_t n_frames;   /* frames that follow */
    uint8_t stop_reason; /* PROF_STOP_* */
    uint8_t flags;       /* PROF_SAMPLE_* */
    uint64_t sp_word;    /* as prof_rec_sample.sp_word; 0 unless it points into code */
};

/* After a PROF_REC_STACK's frames (see there). */
struct prof_stack_state {
    uint32_t state;     /* as prof_rec_sample.state */
    uint32_t label_set; /* the thread's labels: a PROF_REC_LABEL_SET's id, defined before;
                         * 0 none (files written before labels existed have 0 here) */
};

/* After a PROF_REC_SAMPLE's frames, when it has labels or a trace. */
struct prof_sample_ctx {
    uint32_t label_set; /* as prof_stack_state.label_set */
    uint32_t trace;     /* a PROF_REC_TRACE's id, defined before; 0 none */
};

/* Followed by n_samples entries, each four unsigned LEB128 numbers: the signed step in ns
 * from the previous entry's time (the first: from base_time_ns), zigzag-encoded (0, -1, 1,
 * -2 as 0, 1, 2, 3); the tid; the stack id; the weight minus 1. */
struct prof_rec_samples {
    struct prof_rec_hdr hdr;
    uint64_t base_time_ns; /* CLOCK_MONOTONIC */
    uint32_t n_samples;    /* entries that follow */
    uint32_t reserved;     /* 0 */
};

/* Followed by the text, NUL-terminated, then zero padding to 8: one line, without the
 * "libprof: " prefix. What the library adapted to in this run (an unknown PROF_ variable,
 * a source or event not available here, the application's handler on our signal): the
 * profile says it, the program's stderr does not (docs/FORMAT.md). */
struct prof_rec_note {
    struct prof_rec_hdr hdr;
    uint64_t time_ns; /* CLOCK_MONOTONIC when it happened */
};

/* One per thread of the process when an all-thread snapshot was taken (prof_snapshot(),
 * PROF_SNAPSHOT_SIGNAL, `prof stacks`). The stack of a thread that answered is the
 * PROF_REC_SAMPLE with its tid (weight 1) that follows; the others have none. */
struct prof_rec_snapshot {
    struct prof_rec_hdr hdr;
    uint64_t time_ns;  /* CLOCK_MONOTONIC when the snapshot was requested */
    uint32_t tid;      /* kernel thread id */
    uint8_t status;    /* PROF_SNAP_* */
    char run_state;    /* the kernel's state letter at the request (R, S, D, T, t, Z, ...), 0
                        * when unknown */
    uint16_t syscall;  /* PROF_SNAP_NOT_ASKED: the system call it waits in (this
                        * architecture's number); else 0 */
};

/* Followed by n_labels pairs of NUL-terminated strings, key then value, then zero padding
 * to 8. Written after PROF_REC_PROCESS (PROF_LABELS=service=api,version=1.2). */
struct prof_rec_labels {
    struct prof_rec_hdr hdr;
    uint32_t n_labels; /* key=value pairs that follow */
    uint32_t reserved; /* 0 */
};

/* Followed by n_labels pairs of NUL-terminated strings, key then value, sorted by key,
 * then zero padding to 8: the labels a thread had set (prof_label_set()) when samples
 * were taken. Written before the first stack or sample that names id, once per file. */
struct prof_rec_label_set {
    struct prof_rec_hdr hdr;
    uint32_t id;       /* 1, 2, ...: what prof_stack_state.label_set names */
    uint32_t n_labels; /* key=value pairs that follow, at least 1 */
};

/* A trace and span the program said its thread worked for (prof_trace_set(), or the
 * OpenTelemetry thread context), written before the first sample that names id, once per
 * file. */
struct prof_rec_trace {
    struct prof_rec_hdr hdr;
    uint32_t id;          /* 1, 2, ...: what prof_sample_ctx.trace and the entries of
                           * PROF_REC_SAMPLE_TRACES name */
    uint8_t trace_flags;  /* the W3C trace-flags byte (bit 0: sampled), 0 when not known */
    uint8_t reserved[3];  /* 0 */
    uint8_t trace_id[16]; /* W3C trace id, bytes in order */
    uint8_t span_id[8];   /* W3C span id */
};

/* Followed by n_samples unsigned LEB128 numbers: the trace (a PROF_REC_TRACE's id, 0
 * none) of each entry, in order, of the PROF_REC_SAMPLES record that comes right after
 * this one (n_samples equal). Written only for a batch with at least one trace. */
struct prof_rec_sample_traces {
    struct prof_rec_hdr hdr;
    uint32_t n_samples; /* entries that follow */
    uint32_t reserved;  /* 0 */
};

#define PROF_SNAP_OK 0u        /* answered: its stack follows */
#define PROF_SNAP_NO_ANSWER 1u /* did not answer within the wait (the signal blocked?) */
#define PROF_SNAP_GONE 2u      /* exited before it could answer */
#define PROF_SNAP_FAILED 3u    /* its registers or stack could not be read */
#define PROF_SNAP_NOT_ASKED 4u /* not asked: it waits in a system call that a signal handler
                                * would cut short (nanosleep, poll, ...): see syscall */
#define PROF_SNAP_N 5u

/* A sample's state (prof_rec_sample.state, prof_stack_state.state): the kind in the low
 * 8 bits; for the off-CPU kinds, the system call the thread waited in, plus one, in the
 * next 16 bits (this architecture's numbers; 0: not in one, or not known). */
#define PROF_STATE_NONE 0u     /* not recorded: a CPU profile */
#define PROF_STATE_RUNNING 1u  /* on a CPU (a CPU-time sample) */
#define PROF_STATE_RUNNABLE 2u /* off CPU against its will: preempted, waiting for a CPU */
#define PROF_STATE_SLEEPING 3u /* off CPU by its own choice, in an interruptible wait (S) */
#define PROF_STATE_DISK 4u     /* off CPU in an uninterruptible wait (D: I/O, some locks) */
#define PROF_STATE_STOPPED 5u  /* stopped (T, t: a stop signal, a debugger) */
#define PROF_STATE_WAITING 6u  /* off CPU by its own choice, how not known (it ran again
                                * before it could be looked at) */
#define PROF_STATE_N 7u
#define PROF_STATE_KIND(s) ((s) & 0xffu)
#define PROF_STATE_CALL(s) ((int)(((s) >> 8) & 0xffffu) - 1) /* -1: none or unknown */
#define PROF_STATE_MAKE(kind, call) \
    ((uint32_t)(kind) | ((call) >= 0 ? ((uint32_t)(call) + 1u) << 8 : 0u))

/* The sizes docs/FORMAT.md documents; a change here is a format change. */
_Static_assert(sizeof(struct prof_file_header) == 16, "header size");
_Static_assert(sizeof(struct prof_rec_process) == 48, "process record size");
_Static_assert(sizeof(struct prof_rec_map) == 80, "map record size");
_Static_assert(sizeof(struct prof_rec_thread) == 24, "thread record size");
_Static_assert(sizeof(struct prof_rec_sample) == 40, "sample record size");
_Static_assert(sizeof(struct prof_rec_stats) == 16, "stats record size");
_Static_assert(sizeof(struct prof_rec_stack) == 24, "stack record size");
_Static_assert(sizeof(struct prof_rec_samples) == 24, "samples record size");
_Static_assert(sizeof(struct prof_rec_snapshot) == 24, "snapshot record size");
_Static_assert(sizeof(struct prof_rec_note) == 16, "note record size");
_Static_assert(sizeof(struct prof_rec_labels) == 16, "labels record size");
_Static_assert(sizeof(struct prof_stack_state) == 8, "stack state size");
_Static_assert(sizeof(struct prof_sample_ctx) == 8, "sample context size");
_Static_assert(sizeof(struct prof_rec_label_set) == 16, "label set record size");
_Static_assert(sizeof(struct prof_rec_trace) == 40, "trace record size");
_Static_assert(sizeof(struct prof_rec_sample_traces) == 16, "sample traces record size");

#endif
