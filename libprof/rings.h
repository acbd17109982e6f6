/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Per-thread sample buffers: a pool of rings, each owned by one thread at a time. A
 * thread takes one when it starts (before it runs application code) and its signal
 * handler writes there, so threads do not contend on one ring; when the thread exits its
 * ring is retired, drained by the writer thread and recycled for the next thread. Ring
 * memory is mapped the first time a ring is taken and never unmapped (a handler may still
 * be about to use it), so memory is bounded by the pool's size. A thread that finds no
 * free ring, or whose ring is full, uses the shared ring (smp_sampler.ring).
 *
 * Application threads take and retire; the writer thread drains; the pool has a mutex,
 * never taken by a signal handler.
 */
#ifndef PROF_LIBPROF_RINGS_H
#define PROF_LIBPROF_RINGS_H

#include <stddef.h>

#define LP_THREAD_RING_KB 128u /* each thread's ring at least: 64 samples of 256 frames;
                                * larger at high rates (libprof/session.c) */

struct lp_writer;
struct smp_ring;

/* Not async-signal-safe. A pool of n rings of ring_bytes each, for max_frames frames a
 * sample. 0 or -ENOMEM. */
int lp_rings_init(size_t n, size_t ring_bytes, unsigned max_frames);
/* A free ring for the calling thread, or NULL when all are taken. */
struct smp_ring *lp_rings_take(void);
/* Gives a ring back (its thread exits). Its samples are still written; accepts NULL. */
void lp_rings_retire(struct smp_ring *r);
/* The writer: drains every ring in use or retired into w, recycling the retired ones it
 * emptied. Returns samples moved; *busy (may be NULL) is set when a ring was more than a
 * quarter full, so that the writer drains more often. */
size_t lp_rings_drain(struct lp_writer *w, int *busy);
/* pthread_atfork() handlers (libprof/session.c calls them from its own): prepare holds
 * the pool's lock across the fork; parent releases it; in the child every ring but keep
 * (the forking thread's, emptied) becomes free, as their threads do not exist here. */
void lp_rings_fork_prepare(void);
void lp_rings_fork_parent(void);
void lp_rings_fork_child(struct smp_ring *keep);
/* Empties memory this file or libprof/session.c mapped anonymous and private for rings
 * (page-aligned): it reads as zeros after, without touching its pages. */
void lp_rings_zero(void *mem, size_t bytes);
/* Rings taken now (tests). */
size_t lp_rings_in_use(void);

#endif
