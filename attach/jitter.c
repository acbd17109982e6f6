/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Random sampling intervals for `prof record -p` (see jitter.h).
 */
#include "attach/jitter.h"

#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/grow.h"
#include "common/hash.h"

void att_jitter_init(struct att_jitter *j, uint64_t mean_ns)
{
    memset(j, 0, sizeof(*j));
    j->mean_ns = mean_ns;
    j->rng = cmn_clock_ns(CLOCK_MONOTONIC) | 1u;
}

void att_jitter_fini(struct att_jitter *j)
{
    free(j->plans);
    cmn_hashtab_fini(&j->plan_table);
    free(j->inherited);
    memset(j, 0, sizeof(*j));
}

void att_jitter_inherited(struct att_jitter *j, pid_t counted_by)
{
    for (size_t i = 0; i < j->n_inherited; i++)
        if (j->inherited[i] == counted_by)
            return;
    if (CMN_GROW(j->inherited, j->cap_inherited, j->n_inherited + 1, 16))
        j->inherited[j->n_inherited++] = counted_by;
}

static bool is_inherited(const struct att_jitter *j, pid_t tid)
{
    for (size_t i = 0; i < j->n_inherited; i++)
        if (j->inherited[i] == tid)
            return true;
    return false;
}

static uint64_t plan_hash(const void *ctx, uint32_t i)
{
    return cmn_hash_word(((const struct att_jitter *)ctx)->plans[i].id);
}

static bool is_plan(const void *ctx, uint32_t i, const void *id)
{
    return ((const struct att_jitter *)ctx)->plans[i].id == *(const uint64_t *)id;
}

/* The plan of counter id, added when new; NULL without memory. */
static struct att_jitter_plan *plan_of(struct att_jitter *j, uint64_t id)
{
    uint32_t i = cmn_hashtab_find(&j->plan_table, cmn_hash_word(id), is_plan, j, &id);
    if (i != CMN_HASHTAB_NONE)
        return &j->plans[i];
    if (!CMN_GROW(j->plans, j->cap_plans, j->n_plans + 1, 32) ||
        cmn_hashtab_reserve(&j->plan_table, plan_hash, j) != 0)
        return NULL;
    j->plans[j->n_plans] = (struct att_jitter_plan){.id = id, .plan = {.period = j->mean_ns}};
    cmn_hashtab_insert(&j->plan_table, cmn_hash_word(id), (uint32_t)j->n_plans);
    return &j->plans[j->n_plans++];
}

bool att_jitter_sampled(struct att_jitter *j, int fd, uint64_t id, pid_t tid)
{
    if (j->mean_ns == 0 || fd < 0 || id == 0 || is_inherited(j, tid))
        return true;
    struct att_jitter_plan *p = plan_of(j, id);
    if (p == NULL)
        return false;
    uint64_t count = 0;
    if (read(fd, &count, sizeof(count)) != (ssize_t)sizeof(count))
        return true;
    /* The counter's first overflow came at one fixed period (the one it was opened with),
     * and every later one at the period drawn, or whole periods after it when the clock's
     * expiry met the thread in the kernel (user space only is sampled). */
    struct cmn_jitter_plan *plan = &p->plan;
    if (plan->at == 0)
        plan->at = plan->period;
    uint64_t interval = cmn_jitter_interval(cmn_jitter_random(&j->rng), j->mean_ns);
    uint64_t next = cmn_jitter_period(interval, j->mean_ns, count, plan, &plan->debt_ns);
    if (ioctl(fd, PERF_EVENT_IOC_PERIOD, &next) == 0) {
        plan->at = count + next;
        plan->period = next;
        j->n_drawn++;
    }
    return true;
}
