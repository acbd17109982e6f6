/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The snapshot signal's handler (see snapshot.h). On the handler's path: `make lint`
 * checks what it calls.
 */
#include "sampler/snapshot.h"

#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sampler/handler.h"
#include "sampler/sigstack.h"

struct smp_snap smp_snap;

/* This thread's answer to the current request: its stack into its slot, when a slot waits
 * for it. */
static void answer(const ucontext_t *uc)
{
    struct smp_snap_region *r = atomic_load_explicit(&smp_snap.region, memory_order_acquire);
    if (!r)
        return;
    uint32_t gen = atomic_load_explicit(&smp_snap.gen, memory_order_acquire);
    uint32_t tid = smp_self_tid();
    unsigned n = atomic_load_explicit(&r->n_slots, memory_order_acquire);
    if (n > r->capacity)
        n = r->capacity;
    for (unsigned i = 0; i < n; i++) {
        struct smp_snap_slot *s = smp_snap_slot_at(r, i);
        uint32_t want = smp_snap_state(gen, SMP_SNAP_WAITING);
        if (s->tid != tid ||
            !atomic_compare_exchange_strong_explicit(&s->state, &want, smp_snap_state(gen, SMP_SNAP_WRITING),
                                                     memory_order_acquire, memory_order_relaxed))
            continue;
        struct smp_walk_out walk;
        uint8_t why = smp_take_stack(&s->rec, s->frames, uc, 0, &walk);
        s->rec.time_ns = smp_clock_ns(CLOCK_MONOTONIC);
        s->rec.tid = tid;
        s->rec.weight = 1;
        s->rec.stop_reason = why;
        s->rec.flags |= why == PROF_STOP_END ? 0 : PROF_SAMPLE_TRUNCATED;
        s->rec.state = 0;
        uint32_t writing = smp_snap_state(gen, SMP_SNAP_WRITING);
        atomic_compare_exchange_strong_explicit(&s->state, &writing, smp_snap_state(gen, SMP_SNAP_DONE),
                                                memory_order_release, memory_order_relaxed);
        return;
    }
}

static void answer_on_stack(void *uc)
{
    answer(uc);
}

/* Queues an outside request for the writer thread; counts it when the queue is full. */
static void queue_request(uint64_t value)
{
    for (unsigned i = 0; i < SMP_SNAP_PENDING_MAX; i++) {
        uint64_t free_entry = 0;
        if (atomic_compare_exchange_strong_explicit(&smp_snap.pending[i], &free_entry, value,
                                                    memory_order_release, memory_order_relaxed))
            return;
    }
    atomic_fetch_add_explicit(&smp_snap.n_refused, 1, memory_order_relaxed);
}

void smp_snap_handler(int sig, siginfo_t *info, void *ucontext)
{
    int saved_errno = errno;
    uint64_t value = (uint64_t)(uintptr_t)info->si_value.sival_ptr;

    if (info->si_code == SI_QUEUE && info->si_value.sival_ptr == SMP_SNAP_COOKIE &&
        info->si_pid == getpid()) {
        /* Without a safe stack the slot stays unanswered: the thread is listed without. */
        (void)smp_sigstack_run(answer_on_stack, ucontext);
    } else if (info->si_code == SI_QUEUE && value >> 32 == SMP_SNAP_PROF_MAGIC) {
        queue_request(SMP_SNAP_FROM_PROF | (value & 0xffffffffu));
    } else {
        /* Anything else is the application's when it has an action of its own; without
         * one, a plain kill() asks for a snapshot file. */
        int rc = smp_app_action_deliver(&smp_snap.app, sig, info, ucontext);
        if (rc == SMP_APP_RAN)
            return; /* errno as the application's handler left it */
        if (rc == SMP_APP_DEFAULT && (info->si_code == SI_USER || info->si_code == SI_QUEUE))
            queue_request(SMP_SNAP_FROM_KILL);
    }
    errno = saved_errno;
}
