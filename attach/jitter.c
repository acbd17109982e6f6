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

#define JITTER_MIN_NS 10000u /* the kernel's shortest software clock period */

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

/* xorshift64*. */
static uint64_t next_random(struct att_jitter *j)
{
    uint64_t x = j->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    j->rng = x;
    return x * 0x2545f4914f6cdd1dull;
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
    j->plans[j->n_plans] = (struct att_jitter_plan){.id = id, .period = j->mean_ns};
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
    if (p->at == 0)
        p->at = p->period;
    int64_t late = count >= p->at ? (int64_t)((count - p->at) % p->period) : 0;
    uint64_t u = next_random(j) >> 32;
    int64_t period = (int64_t)(j->mean_ns / 2 + (uint64_t)(((unsigned __int128)j->mean_ns * u) >> 32)) -
                     late - p->debt_ns;
    int64_t min = (int64_t)(j->mean_ns / 8 > JITTER_MIN_NS ? j->mean_ns / 8 : JITTER_MIN_NS);
    p->debt_ns = period < min ? min - period : 0;
    if (period < min)
        period = min;
    uint64_t next = (uint64_t)period;
    if (ioctl(fd, PERF_EVENT_IOC_PERIOD, &next) == 0) {
        p->at = count + next;
        p->period = next;
        j->n_drawn++;
    }
    return true;
}
