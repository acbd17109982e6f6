/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Grouping a snapshot's threads (see snap_groups.h). Each thread's sample is symbolized
 * frame by frame into (address, name) pairs, leaf first, exactly as the aggregate does
 * (reporter/stacks/aggregate.c): callers are looked up one byte before their return
 * address. The threads
 * with a stack are then sorted by their names, stop reason and tid, so that equal stacks
 * are neighbours with the lowest tid first, and every run of equal stacks is a group.
 * Sorting keeps this O(n log n) in the threads, for processes with thousands of them.
 */
#include "reporter/stacks/snap_groups.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"
#include "include/libprof/prof_format.h"
#include "reporter/input/profile.h"
#include "reporter/symbols/symbols.h"

static int push_frame(struct rep_snap_groups *g, uint64_t addr, uint32_t id)
{
    if (!CMN_GROW(g->frames, g->cap_frames, g->n_frames + 1, 1024))
        return CMN_E_NOMEM;
    g->frames[g->n_frames++] = (struct rep_snap_frame){.addr = addr, .id = id};
    return CMN_OK;
}

/* Appends the frames that address addr stands for (several when functions are inlined
 * there and sym names lines), innermost first. */
static int push_address(struct rep_snap_groups *g, struct rep_sym *sym, uint64_t addr,
                        bool is_caller, uint64_t time_ns)
{
    const uint32_t *ids;
    size_t n;
    if (rep_sym_frames(sym, addr, is_caller, time_ns, &ids, &n) != CMN_OK)
        return CMN_E_NOMEM;
    for (size_t i = 0; i < n; i++)
        if (push_frame(g, addr, ids[i]) != CMN_OK)
            return CMN_E_NOMEM;
    return CMN_OK;
}

/* Symbolizes sample s into member m's frames. */
static int symbolize(struct rep_snap_groups *g, struct rep_sym *sym, const struct rep_sample *s,
                     struct rep_snap_member *m)
{
    m->frames_at = g->n_frames;
    for (size_t f = 0; f < s->n_frames; f++) {
        if (push_address(g, sym, rep_sample_frame(s, f), f > 0, s->time_ns) != CMN_OK)
            return CMN_E_NOMEM;
    }
    m->n_frames = (uint32_t)(g->n_frames - m->frames_at);
    m->stop_reason = s->stop_reason;
    return CMN_OK;
}

static int by_tid(const void *a, const void *b)
{
    uint32_t x = ((const struct rep_snap_member *)a)->tid;
    uint32_t y = ((const struct rep_snap_member *)b)->tid;
    return (x > y) - (x < y);
}

static int sample_by_tid(const void *a, const void *b)
{
    uint32_t x = (*(const struct rep_sample *const *)a)->tid;
    uint32_t y = (*(const struct rep_sample *const *)b)->tid;
    return (x > y) - (x < y);
}

/* The stacks of a and b compared by names then stop reason; 0 when they group. */
static int cmp_stacks(const struct rep_snap_groups *g, const struct rep_snap_member *a,
                      const struct rep_snap_member *b)
{
    const struct rep_snap_frame *fa = rep_snap_member_frames(g, a);
    const struct rep_snap_frame *fb = rep_snap_member_frames(g, b);
    for (uint32_t i = 0; i < a->n_frames && i < b->n_frames; i++)
        if (fa[i].id != fb[i].id)
            return fa[i].id < fb[i].id ? -1 : 1;
    if (a->n_frames != b->n_frames)
        return a->n_frames < b->n_frames ? -1 : 1;
    return (a->stop_reason > b->stop_reason) - (a->stop_reason < b->stop_reason);
}

static int by_stack_then_tid(const void *a, const void *b, void *ctx)
{
    int c = cmp_stacks(ctx, a, b);
    return c != 0 ? c : by_tid(a, b);
}

static int by_size_then_tid(const void *a, const void *b, void *ctx)
{
    const struct rep_snap_groups *g = ctx;
    const struct rep_snap_group *x = a, *y = b;
    if (x->n_members != y->n_members)
        return x->n_members > y->n_members ? -1 : 1;
    return by_tid(&g->members[x->first], &g->members[y->first]);
}

/* The sample of tid among the sorted ones, or NULL. */
static const struct rep_sample *find_sample(const struct rep_sample **sorted, size_t n,
                                            uint32_t tid, bool *taken)
{
    struct rep_sample key = {.tid = tid};
    const struct rep_sample *kp = &key;
    const struct rep_sample **hit = bsearch(&kp, sorted, n, sizeof(*sorted), sample_by_tid);
    if (hit == NULL)
        return NULL;
    while (hit > sorted && hit[-1]->tid == tid)
        hit--; /* the first of its samples, the one a tid listed twice is skipped for */
    taken[hit - sorted] = true;
    return *hit;
}

/* One member per listed thread, then one per sample of an unlisted tid. */
static int list_members(struct rep_snap_groups *g, struct rep_sym *sym, const struct rep_profile *p,
                        const struct rep_sample **sorted, bool *taken)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_snap_threads + p->n_samples; i++) {
        struct rep_snap_member *m = &g->members[n];
        const struct rep_sample *s;
        if (i < p->n_snap_threads) {
            const struct rep_snap_thread *t = &p->snap_threads[i];
            *m = (struct rep_snap_member){.tid = t->tid,
                                          .run_state = t->run_state,
                                          .status = t->status,
                                          .syscall = t->syscall};
            s = t->status == PROF_SNAP_OK ? find_sample(sorted, p->n_samples, t->tid, taken) : NULL;
            if (t->status == PROF_SNAP_OK && s == NULL)
                m->status = PROF_SNAP_FAILED;
        } else {
            size_t k = i - p->n_snap_threads;
            if (taken[k] || (k > 0 && sorted[k - 1]->tid == sorted[k]->tid))
                continue; /* listed, or a second sample of a tid */
            s = sorted[k];
            *m = (struct rep_snap_member){.tid = s->tid, .status = PROF_SNAP_OK};
        }
        m->name = rep_profile_thread_name(p, m->tid);
        if (s != NULL && symbolize(g, sym, s, m) != CMN_OK)
            return CMN_E_NOMEM;
        n++;
    }
    g->n_members = n;
    return CMN_OK;
}

/* Puts the members with a stack first, sorted so that groups are runs, and the others
 * after them by tid; then cuts the runs into groups and orders them. */
static int make_groups(struct rep_snap_groups *g)
{
    size_t k = 0;
    for (size_t i = 0; i < g->n_members; i++) {
        if (g->members[i].status == PROF_SNAP_OK) {
            struct rep_snap_member t = g->members[k];
            g->members[k++] = g->members[i];
            g->members[i] = t;
        }
    }
    g->n_stacked = k;
    qsort_r(g->members, k, sizeof(*g->members), by_stack_then_tid, g);
    qsort(g->members + k, g->n_members - k, sizeof(*g->members), by_tid);
    g->groups = malloc((k ? k : 1) * sizeof(*g->groups));
    if (g->groups == NULL)
        return CMN_E_NOMEM;
    for (size_t i = 0; i < k; i++) {
        if (i == 0 || cmp_stacks(g, &g->members[i - 1], &g->members[i]) != 0)
            g->groups[g->n_groups++] = (struct rep_snap_group){.first = i};
        g->groups[g->n_groups - 1].n_members++;
    }
    qsort_r(g->groups, g->n_groups, sizeof(*g->groups), by_size_then_tid, g);
    return CMN_OK;
}

int rep_snap_groups_build(struct rep_snap_groups *g /* out */, struct rep_sym *sym,
                          const struct rep_profile *p)
{
    memset(g, 0, sizeof(*g));
    size_t n_all = p->n_snap_threads + p->n_samples;
    const struct rep_sample **sorted = malloc((p->n_samples ? p->n_samples : 1) * sizeof(*sorted));
    bool *taken = calloc(p->n_samples ? p->n_samples : 1, sizeof(*taken));
    g->members = malloc((n_all ? n_all : 1) * sizeof(*g->members));
    int rc = CMN_E_NOMEM;
    if (sorted != NULL && taken != NULL && g->members != NULL) {
        for (size_t i = 0; i < p->n_samples; i++)
            sorted[i] = &p->samples[i];
        /* A tid with several samples (not from a snapshot's writer) keeps one of them:
         * any is a stack the thread had. */
        qsort(sorted, p->n_samples, sizeof(*sorted), sample_by_tid);
        rc = list_members(g, sym, p, sorted, taken);
    }
    if (rc == CMN_OK)
        rc = make_groups(g);
    free(sorted);
    free(taken);
    return rc;
}

void rep_snap_groups_fini(struct rep_snap_groups *g)
{
    if (g == NULL)
        return;
    free(g->members);
    free(g->groups);
    free(g->frames);
    memset(g, 0, sizeof(*g));
}
