/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * All-thread snapshots, the part on the signal handler's path. A snapshot asks every thread
 * of the process for its current stack at once: libprof/snapshot.c prepares one slot per
 * thread in a request, then sends each thread the snapshot signal with
 * rt_tgsigqueueinfo(); each thread walks its own stack in its own handler (the same walk as
 * a sample, smp_take_stack()) into its slot and marks it done. The requester waits a bounded
 * time; a thread that has not answered by then (the signal blocked, the thread stopped) is
 * listed as not answering.
 *
 * A slot's state carries the request's generation, so that a thread answering late (its
 * signal was blocked and is unblocked later, after the request was given up) finds no slot
 * waiting for it and does nothing. Request memory is never unmapped while the handler is
 * installed: a late handler may still read it.
 *
 * The same signal sent to the process from outside asks for a snapshot: by `prof stacks`,
 * whose sigqueue() value carries SMP_SNAP_PROF_MAGIC and a nonce naming the answer file,
 * or by a plain kill(). The handler queues the request (smp_snap.pending) for libprof's
 * writer thread, which takes the snapshot and writes the file; nothing else happens in the
 * handler. When the application has its own action for the signal, a plain kill() is its
 * own and is handed to that action (sampler/app_action.h); requests from prof and from our
 * threads never are. With the application's action SIG_IGN, a plain kill() is ignored.
 *
 * A slot is re-armed for a new request only from IDLE or DONE: a thread still WRITING into
 * it (a walk that outlived its request's wait) keeps it, and the request takes a fresh
 * region instead (libprof/snapshot.c); the walk's last store is a compare-and-swap from
 * its own WRITING state, so that it can never overwrite a later request's state.
 */
#ifndef PROF_SAMPLER_SNAPSHOT_H
#define PROF_SAMPLER_SNAPSHOT_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "include/libprof/prof_format.h"
#include "sampler/app_action.h"

#define SMP_SNAP_COOKIE ((void *)0x736e6170) /* si_value of a request to one of our threads */
#define SMP_SNAP_PROF_MAGIC 0x70726f66u      /* "prof": high half of `prof stacks`' value */
#define SMP_SNAP_PENDING_MAX 8u              /* outside requests waiting to be served */
#define SMP_SNAP_FROM_PROF (1ull << 32)      /* pending value: nonce in the low 32 bits */
#define SMP_SNAP_FROM_KILL (1ull << 33)      /* pending value: a plain kill() */

/* Slot states (the low 2 bits of state; the generation is above them). */
#define SMP_SNAP_IDLE 0u    /* no request waits on this slot */
#define SMP_SNAP_WAITING 1u /* the request waits for the slot's thread */
#define SMP_SNAP_WRITING 2u /* the thread is walking into it */
#define SMP_SNAP_DONE 3u    /* the thread's stack is in it */

struct smp_snap_slot {
    _Atomic uint32_t state;     /* gen << 2 | SMP_SNAP_*; the requester and one handler */
    uint32_t tid;               /* the thread this slot waits for; set before WAITING */
    struct prof_rec_sample rec; /* filled by the thread */
    uint64_t frames[];          /* max_frames of the request */
};

/* A region of slots. Its shape (slot_bytes, capacity) never changes once published; a
 * request that needs more slots gets a new region (the old one is kept, see above). */
struct smp_snap_region {
    size_t slot_bytes; /* bytes per slot */
    unsigned capacity; /* slots in the region */
    unsigned max_frames;
    _Atomic unsigned n_slots; /* slots in use by the current request */
    _Alignas(16) unsigned char slots[];
};

struct smp_snap {
    _Atomic(struct smp_snap_region *) region;       /* the current request's slots, NULL none */
    _Atomic uint32_t gen;                           /* the current request's generation */
    _Atomic uint64_t pending[SMP_SNAP_PENDING_MAX]; /* outside requests, 0 = free entry */
    _Atomic uint64_t n_refused;                     /* outside requests refused: queue full */
    struct smp_app_action app;                      /* the application's action for the signal */
};

extern struct smp_snap smp_snap;

/* Async-signal-safe: the snapshot signal's handler, for sigaction with SA_SIGINFO. Saves
 * and restores errno. */
void smp_snap_handler(int sig, siginfo_t *info, void *ucontext);

/* A slot's state: the request's generation above the SMP_SNAP_* kind. */
static inline uint32_t smp_snap_state(uint32_t gen, uint32_t kind)
{
    return gen << 2 | kind;
}

static inline uint32_t smp_snap_state_kind(uint32_t state)
{
    return state & 3u;
}

/* Async-signal-safe. 1 when a signal of the snapshot signal's number is libprof's own: a
 * request to one of our threads (our cookie, from this process) or from `prof stacks`. */
static inline int smp_snap_signal_is_ours(const siginfo_t *info, int self_pid)
{
    uint64_t value = (uint64_t)(uintptr_t)info->si_value.sival_ptr;
    return info->si_code == SI_QUEUE &&
           ((info->si_value.sival_ptr == SMP_SNAP_COOKIE && info->si_pid == self_pid) ||
            value >> 32 == SMP_SNAP_PROF_MAGIC);
}

/* Slot i of region r. */
static inline struct smp_snap_slot *smp_snap_slot_at(struct smp_snap_region *r, unsigned i)
{
    return (struct smp_snap_slot *)(r->slots + (size_t)i * r->slot_bytes);
}

#endif
