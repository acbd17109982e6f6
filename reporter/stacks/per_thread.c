/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Per-thread aggregates: a profile's samples are copied (the structs, not the frames they
 * point to) into a scratch array sorted by tid, and each run of one tid becomes a shallow
 * copy of the profile whose samples are that run. Reporter thread only.
 */
#include "reporter/stacks/per_thread.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"
#include "reporter/input/profile.h"

int rep_per_thread_init(struct rep_per_thread *t, const struct rep_agg *like)
{
    memset(t, 0, sizeof(*t));
    t->like = like;
    return CMN_OK;
}

void rep_per_thread_fini(struct rep_per_thread *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->n_threads; i++) {
        free(t->threads[i].name);
        free(t->threads[i].group);
        rep_agg_fini(&t->threads[i].agg);
    }
    free(t->threads);
    free(t->scratch);
    memset(t, 0, sizeof(*t));
}

static bool same_group(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* The entry of (pid, tid, group), made if new (named name; both copied). */
static int find_thread(struct rep_per_thread *t, uint32_t pid, uint32_t tid, const char *name,
                       const char *group, struct rep_thread_agg **out)
{
    for (size_t i = 0; i < t->n_threads; i++) {
        if (t->threads[i].pid == pid && t->threads[i].tid == tid &&
            same_group(t->threads[i].group, group)) {
            *out = &t->threads[i];
            return CMN_OK;
        }
    }
    if (!CMN_GROW(t->threads, t->cap_threads, t->n_threads + 1, 8))
        return CMN_E_NOMEM;
    struct rep_thread_agg *th = &t->threads[t->n_threads];
    memset(th, 0, sizeof(*th));
    th->pid = pid;
    th->tid = tid;
    if ((name != NULL && (th->name = strdup(name)) == NULL) ||
        (group != NULL && (th->group = strdup(group)) == NULL))
        return CMN_E_NOMEM;
    rep_agg_init(&th->agg);
    th->agg.filter = t->like != NULL ? t->like->filter : NULL;
    th->agg.is_timeline = true;
    t->n_threads++;
    *out = th;
    return CMN_OK;
}

/* Orders samples by tid, then label set (which decides the group), then time. */
static int cmp_sample(const void *va, const void *vb)
{
    const struct rep_sample *a = va, *b = vb;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->label_set != b->label_set)
        return a->label_set < b->label_set ? -1 : 1;
    return a->time_ns < b->time_ns ? -1 : a->time_ns > b->time_ns;
}

/* The group of sample s: its values of the --by-label keys, "k=v,k=v" into buf; NULL
 * without keys. */
static const char *group_of(const struct rep_per_thread *t, const struct rep_profile *p,
                            const struct rep_sample *s, char *buf, size_t cap)
{
    if (t->like == NULL || t->like->n_by_labels == 0)
        return NULL;
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < t->like->n_by_labels && at < cap; i++) {
        const char *key = t->like->by_labels[i], *v = rep_profile_label(p, s, key);
        int n = snprintf(buf + at, cap - at, "%s%s=%s", i ? "," : "", key, v ? v : "(none)");
        at += n > 0 ? (size_t)n : 0;
    }
    return buf;
}

int rep_per_thread_add_profile(struct rep_per_thread *t, struct rep_sym *sym,
                               const struct rep_profile *p)
{
    if (p->n_samples == 0)
        return CMN_OK;
    if (!CMN_GROW(t->scratch, t->cap_scratch, p->n_samples, p->n_samples))
        return CMN_E_NOMEM;
    memcpy(t->scratch, p->samples, p->n_samples * sizeof(*p->samples));
    qsort(t->scratch, p->n_samples, sizeof(*t->scratch), cmp_sample);
    uint32_t pid = p->has_process ? p->process.pid : 0;
    char group[1024], next[1024];
    for (size_t first = 0, end; first < p->n_samples; first = end) {
        uint32_t tid = t->scratch[first].tid;
        const char *g = group_of(t, p, &t->scratch[first], group, sizeof(group));
        /* A run of one thread and one group (label sets that give the same values). */
        for (end = first + 1; end < p->n_samples && t->scratch[end].tid == tid; end++)
            if (t->scratch[end].label_set != t->scratch[end - 1].label_set &&
                !same_group(g, group_of(t, p, &t->scratch[end], next, sizeof(next))))
                break;
        struct rep_thread_agg *th;
        if (find_thread(t, pid, tid, rep_profile_thread_name(p, tid), g, &th) != CMN_OK)
            return CMN_E_NOMEM;
        /* The thread's part of p: the same mappings, rates and stats, its samples only. */
        struct rep_profile part = *p;
        part.samples = t->scratch + first;
        part.n_samples = end - first;
        part.cap_samples = end - first;
        if (rep_agg_add_profile(&th->agg, sym, &part) != CMN_OK)
            return CMN_E_NOMEM;
    }
    return CMN_OK;
}
