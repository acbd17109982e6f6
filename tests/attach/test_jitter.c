/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of `prof record -p`'s random intervals (attach/jitter.c), on a task-clock
 * counter of the test's own thread. */
#include <criterion/criterion.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attach/jitter.h"

static int open_clock(uint64_t period, uint64_t *id)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = period;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd >= 0 && ioctl(fd, PERF_EVENT_IOC_ID, id) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

Test(jitter, draws_each_interval_within_half_and_one_and_a_half_periods)
{
    uint64_t id = 0;
    int fd = open_clock(1000000, &id);
    if (fd < 0)
        cr_skip_test("perf_event_open is not permitted here");
    struct att_jitter j;
    att_jitter_init(&j, 1000000);
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < 200; i++) {
        cr_assert(att_jitter_sampled(&j, fd, id, getpid()));
        struct att_jitter_plan *p = NULL;
        for (size_t k = 0; k < j.n_plans; k++)
            if (j.plans[k].id == id)
                p = &j.plans[k];
        cr_assert_not_null(p);
        lo = p->plan.period < lo ? p->plan.period : lo;
        hi = p->plan.period > hi ? p->plan.period : hi;
    }
    cr_assert_eq(j.n_drawn, 200);
    /* What the counter counted past its plan comes off: at most a little under half. */
    cr_expect(lo >= 125000 && hi < 1500000, "periods from %llu to %llu ns",
              (unsigned long long)lo, (unsigned long long)hi);
    cr_expect(hi - lo > 500000, "periods from %llu to %llu ns: not spread",
              (unsigned long long)lo, (unsigned long long)hi);
    att_jitter_fini(&j);
    close(fd);
}

Test(jitter, leaves_an_inherited_counter_alone)
{
    uint64_t id = 0;
    int fd = open_clock(1000000, &id);
    if (fd < 0)
        cr_skip_test("perf_event_open is not permitted here");
    struct att_jitter j;
    att_jitter_init(&j, 1000000);
    att_jitter_inherited(&j, getpid());
    cr_assert(att_jitter_sampled(&j, fd, id, getpid()));
    cr_assert_eq(j.n_drawn, 0);
    att_jitter_fini(&j);
    close(fd);
}
