/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of all-thread snapshots on the requester's side (libprof/snapshot.c): a
 * snapshot of this process is written; a slot that a late walk is still writing into
 * (its request's wait ran out) is never armed for a later request, which takes a fresh
 * region; a region nobody writes into is reused. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "libprof/snapshot.h"
#include "sampler/snapshot.h"

static void install(void)
{
    cr_assert_eq(lp_snapshot_install(SIGRTMAX - 3, 64, sigaction), 0);
}

static void snapshot_to_null(void)
{
    FILE *f = tmpfile();
    cr_assert_not_null(f);
    cr_assert_eq(lp_snapshot_write(fileno(f), 0, NULL), 0);
    fclose(f);
}

Test(snapshot, a_region_nobody_writes_into_is_reused)
{
    install();
    snapshot_to_null();
    struct smp_snap_region *r = atomic_load(&smp_snap.region);
    cr_assert_not_null(r);
    snapshot_to_null();
    cr_assert_eq(atomic_load(&smp_snap.region), r);
}

Test(snapshot, a_slot_a_late_walk_still_writes_is_never_armed_again)
{
    install();
    snapshot_to_null();
    struct smp_snap_region *r = atomic_load(&smp_snap.region);
    cr_assert_not_null(r);
    /* As if this thread's handler had started its walk just before the wait ran out. */
    struct smp_snap_slot *s = smp_snap_slot_at(r, 0);
    uint32_t gen = atomic_load(&smp_snap.gen);
    uint32_t writing = smp_snap_state(gen, SMP_SNAP_WRITING);
    atomic_store(&s->state, writing);
    snapshot_to_null();
    cr_assert_neq(atomic_load(&smp_snap.region), r, "the request armed a region being written");
    cr_assert_eq(atomic_load(&s->state), writing, "the late walk's slot was touched");
    /* The late walk ends: its own compare-and-swap, from its own generation's state. */
    uint32_t want = writing;
    cr_assert(atomic_compare_exchange_strong(&s->state, &want, smp_snap_state(gen, SMP_SNAP_DONE)));
}
