/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Thread labels: what each thread says it is doing (prof_label_set(), prof_trace_set():
 * include/libprof/prof.h), attached to every sample of that thread.
 *
 * Where a thread's labels live. Its label set is interned: a set of key=value pairs, sorted
 * by key, has one id for the process (1, 2, ...; 0 is no labels), and the thread's current
 * set id is one word of its smp_self (sampler/handler.h), written by the thread in one store
 * and read by the handler that interrupts it, which therefore never sees half a change. The
 * thread's trace and span ids are a pair of buffers there, one current (a one-byte index the
 * thread flips after filling the other). The handler copies both into the sample's slot.
 *
 * The samples no handler takes (the ring source's, the kernel-time rings', the wall
 * profile's waits) are stamped by the kernel with their time only. For them each thread
 * keeps a history: a ring of its changes, each stamped with the CPU's tick counter
 * (arch_ticks(): no system call) and the context it made current. The thread appends; the
 * writer thread reads, turns ticks into CLOCK_MONOTONIC by pairs of readings it takes every
 * period, finds for a sample of time T the last change made before T, and frees what no
 * sample can need any more (entries older than the period's drain, but the one in effect).
 * A ring that fills (changes faster than the writer reads, in its 5 ms period) marks its
 * newest entry lost: samples in its span get no labels, and are counted
 * (PROF_STAT_LABELS_LOST).
 *
 * Interning. Strings and sets live in global tables that only grow: lookups are lock-free
 * (open addressing over entries that never change once published), insertions take a
 * mutex. A thread's common case does not reach them: a small per-thread cache maps (set,
 * key pointer, value pointer) to the set that results, checked against the strings'
 * contents (a buffer the program reuses for another value misses). So a set costs a
 * hash, two string comparisons, one store and, while profiling, a tick read and a history
 * entry; no system call, no lock, no allocation once the key, the value and the resulting
 * set have been seen by the thread.
 *
 * Context: the API functions run on the application's threads, not async-signal-safe
 * (a signal handler that changes labels may interrupt a change of its own thread's);
 * everything else on the writer thread, or the thread that owns the writer's buffer.
 */
#ifndef PROF_LIBPROF_LABELS_H
#define PROF_LIBPROF_LABELS_H

#include <stddef.h>
#include <stdint.h>

#define LP_LABELS_MAX_PAIRS 16u    /* labels a thread has at once */
#define LP_LABELS_MAX_STR 255u     /* bytes of a key or a value */
#define LP_LABELS_MAX_SETS 65536u  /* distinct sets in a process; beyond, changes fail */
#define LP_LABELS_MAX_STRS 65536u  /* distinct strings in a process */
#define LP_LABELS_HIST 512u        /* entries of a thread's history, a power of two */
#define LP_LABELS_KEEP_NS 20000000ull /* history kept before the writer's last drain */
#define LP_LABELS_FREE_NS 2000000000ull /* an exited thread's history kept so long */

/* A sample's context, as the writer thread attaches it. */
struct lp_label_ctx {
    uint32_t label_set;   /* the set id, 0 none */
    uint8_t has_trace;    /* trace_id and span_id hold the thread's trace */
    uint8_t trace_flags;  /* the W3C trace-flags byte, 0 unknown */
    uint8_t is_lost;      /* the thread's history had overflowed there: not known */
    uint8_t trace_id[16];
    uint8_t span_id[8];
};

/* Not async-signal-safe; the calling application thread (include/libprof/prof.h). 0 or
 * -errno: -EINVAL (a NULL or empty key, a string longer than LP_LABELS_MAX_STR, a bad
 * token), -E2BIG (LP_LABELS_MAX_PAIRS), -ENOSPC (the tables' limits), -ENOMEM. */
int lp_labels_set(const char *key, const char *value); /* value NULL or "": clears key */
int lp_labels_clear_all(void);
/* The scoped form: the token restores the labels the thread had before the push. */
uint64_t lp_labels_push(const char *key, const char *value);
int lp_labels_pop(uint64_t token);
int lp_labels_trace_set(const uint8_t trace_id[16], const uint8_t span_id[8]);
int lp_labels_trace_clear(void);

/* Not async-signal-safe; the session. From now on changes are written into the threads'
 * histories (a session reads them). */
void lp_labels_session_start(void);

/* Not async-signal-safe; the thread-start trampoline (libprof/interpose.c), before the
 * start routine: the new thread begins with its creator's labels, label_set (0: none). */
void lp_labels_thread_begin(uint32_t label_set);

/* The writer buffer's owner (libprof/writer.c, ksamples.c, wall.c). The context of thread
 * tid at time_ns (CLOCK_MONOTONIC) from its history: zeroed when it had no labels. */
void lp_labels_ctx_at(uint32_t tid, uint64_t time_ns, struct lp_label_ctx *out);

/* The writer buffer's owner, before it reads samples the kernel recorded (whose time is
 * CLOCK_MONOTONIC's): a new reading of ticks and time, so that their times fall between
 * two readings. */
void lp_labels_calibrate(void);

/* The writer thread, once a period after its drains: the histories read up to what no
 * sample can need, exited threads' histories freed.
 * Returns 1 when some thread's history filled past a quarter (come back sooner). */
int lp_labels_tend(uint64_t now_ns);

/* Any thread. The pairs of set id packed as "key\0value\0..." into buf (cap bytes, the
 * keys in order): the number of pairs, with *len the bytes used; 0 for an id that is not
 * a set (or 0) or does not fit. */
uint32_t lp_labels_pack(uint32_t id, char *buf, size_t cap, size_t *len);

/* Any thread (the writer's, for the OpenTelemetry context). The id of the set made of set
 * id base with each of the n keys set to its value (lengths given, not NUL-terminated); 0
 * when it would be empty or cannot be made. */
uint32_t lp_labels_merge(uint32_t base, const char *const *keys, const size_t *key_lens,
                         const char *const *values, const size_t *value_lens, size_t n);

/* pthread_atfork() handlers (libprof/session.c calls them): the tables' and the registry's
 * locks are held across the fork; the child keeps the forking thread's labels, its history
 * restarted with them, and forgets the other threads. */
void lp_labels_fork_prepare(void);
void lp_labels_fork_parent(void);
void lp_labels_fork_child(void);

#endif
