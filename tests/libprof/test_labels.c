/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the thread labels (libprof/labels.c): sets interned whatever the order of
 * their changes, the per-thread cache against a buffer reused for another value, the
 * scoped form, the limits, the history the writer reads (the context at a time, a full ring
 * marked lost, a thread's trace), the writer's merge, and a fork child's copy. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "libprof/labels.h"
#include "sampler/handler.h"

/* The pairs of set id as "k=v,k=v". */
static const char *pairs(uint32_t id)
{
    static char out[512];
    char buf[512];
    size_t len;
    uint32_t n = lp_labels_pack(id, buf, sizeof(buf), &len);
    size_t at = 0;
    out[0] = '\0';
    const char *s = buf;
    for (uint32_t i = 0; i < n; i++) {
        const char *v = s + strlen(s) + 1;
        at += (size_t)snprintf(out + at, sizeof(out) - at, "%s%s=%s", i ? "," : "", s, v);
        s = v + strlen(v) + 1;
    }
    return out;
}

Test(labels, a_set_and_a_clear_change_the_threads_set)
{
    cr_assert_eq(smp_self.label_set, 0);
    cr_assert_eq(lp_labels_set("endpoint", "/api"), 0);
    uint32_t a = smp_self.label_set;
    cr_expect_neq(a, 0);
    cr_expect_str_eq(pairs(a), "endpoint=/api");
    cr_assert_eq(lp_labels_set("tenant", "t1"), 0);
    cr_expect_str_eq(pairs(smp_self.label_set), "endpoint=/api,tenant=t1");
    cr_assert_eq(lp_labels_set("tenant", NULL), 0);
    cr_expect_eq(smp_self.label_set, a, "removing the key gives the set back");
    cr_assert_eq(lp_labels_set("endpoint", ""), 0);
    cr_expect_eq(smp_self.label_set, 0);
}

static void *set_in_other_order(void *arg)
{
    lp_labels_set("tenant", "t1");
    lp_labels_set("endpoint", "/api");
    *(uint32_t *)arg = smp_self.label_set;
    return NULL;
}

Test(labels, the_same_labels_set_in_another_order_are_one_set)
{
    lp_labels_set("endpoint", "/api");
    lp_labels_set("tenant", "t1");
    uint32_t other = 0;
    pthread_t t;
    pthread_create(&t, NULL, set_in_other_order, &other);
    pthread_join(t, NULL);
    cr_expect_eq(other, smp_self.label_set);
}

/* The cache is keyed by the strings' addresses and checked against their bytes: a buffer
 * the program writes another value into is another set. */
Test(labels, a_buffer_reused_for_another_value_gives_another_set)
{
    char key[16] = "tenant", value[16];
    uint32_t ids[3];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 3; i++) {
            snprintf(value, sizeof(value), "t%d", i);
            cr_assert_eq(lp_labels_set(key, value), 0);
            ids[i] = round == 0 ? smp_self.label_set : ids[i];
            cr_expect_eq(smp_self.label_set, ids[i]);
            char want[32];
            snprintf(want, sizeof(want), "tenant=t%d", i);
            cr_expect_str_eq(pairs(smp_self.label_set), want);
        }
    }
    cr_expect(ids[0] != ids[1] && ids[1] != ids[2]);
}

Test(labels, a_pop_restores_what_its_push_found)
{
    lp_labels_set("service", "s");
    uint32_t outer = smp_self.label_set;
    uint64_t t1 = lp_labels_push("endpoint", "/a");
    uint64_t t2 = lp_labels_push("tenant", "t9");
    lp_labels_set("extra", "x"); /* set in the scope, gone with it */
    cr_expect_str_eq(pairs(smp_self.label_set), "endpoint=/a,extra=x,service=s,tenant=t9");
    cr_expect_eq(lp_labels_pop(t2), 0);
    cr_expect_str_eq(pairs(smp_self.label_set), "endpoint=/a,service=s");
    cr_expect_eq(lp_labels_pop(t1), 0);
    cr_expect_eq(smp_self.label_set, outer);
    /* A token that is none changes nothing. */
    cr_expect_eq(lp_labels_pop(12345), -EINVAL);
    cr_expect_eq(lp_labels_pop(0x504c0000ffffff00ull), -EINVAL);
    cr_expect_eq(smp_self.label_set, outer);
}

Test(labels, refuses_what_exceeds_its_limits)
{
    char big[LP_LABELS_MAX_STR + 2];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    cr_expect_eq(lp_labels_set("", "v"), -EINVAL);
    cr_expect_eq(lp_labels_set(NULL, "v"), -EINVAL);
    cr_expect_eq(lp_labels_set(big, "v"), -EINVAL);
    cr_expect_eq(lp_labels_set("k", big), -EINVAL);
    big[LP_LABELS_MAX_STR] = '\0';
    cr_expect_eq(lp_labels_set("k", big), 0, "255 bytes are allowed");
    lp_labels_clear_all();
    for (unsigned i = 0; i < LP_LABELS_MAX_PAIRS; i++) {
        char k[8];
        snprintf(k, sizeof(k), "k%02u", i);
        cr_assert_eq(lp_labels_set(k, "v"), 0);
    }
    uint32_t full = smp_self.label_set;
    cr_expect_eq(lp_labels_set("one-more", "v"), -E2BIG);
    cr_expect_eq(smp_self.label_set, full, "a refused change leaves the labels");
    uint64_t t = lp_labels_push("one-more", "v");
    cr_expect_eq(smp_self.label_set, full);
    cr_expect_eq(lp_labels_pop(t), 0);
    cr_expect_eq(smp_self.label_set, full);
}

static uint64_t now_ns(void)
{
    return cmn_clock_ns(CLOCK_MONOTONIC);
}

static void nap_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* The writer's view: the context a thread had at a time, from its history. */
Test(labels, the_history_gives_a_threads_labels_at_a_time)
{
    uint32_t tid = (uint32_t)syscall(SYS_gettid);
    lp_labels_session_start();
    nap_ms(3); /* ticks are measured against the clock over 2 ms at least */
    uint64_t before = now_ns();
    nap_ms(1);
    lp_labels_set("phase", "one");
    uint32_t one = smp_self.label_set;
    nap_ms(2);
    uint64_t during_one = now_ns();
    nap_ms(2);
    uint8_t trace[16], span[8];
    memset(trace, 0xab, sizeof(trace));
    memset(span, 0xcd, sizeof(span));
    lp_labels_set("phase", "two");
    lp_labels_trace_set(trace, span);
    uint32_t two = smp_self.label_set;
    nap_ms(2);
    uint64_t during_two = now_ns();

    struct lp_label_ctx c;
    lp_labels_ctx_at(tid, before, &c);
    cr_expect_eq(c.label_set, 0, "before the first change: no labels");
    lp_labels_ctx_at(tid, during_one, &c);
    cr_expect_eq(c.label_set, one);
    cr_expect_eq(c.has_trace, 0);
    lp_labels_ctx_at(tid, during_two, &c);
    cr_expect_eq(c.label_set, two);
    cr_expect(c.has_trace && c.trace_id[15] == 0xab && c.span_id[0] == 0xcd);
    cr_expect_eq(c.is_lost, 0);
    lp_labels_ctx_at(tid + 1000000, during_two, &c);
    cr_expect_eq(c.label_set, 0, "a thread that never set labels has none");

    /* The writer lets go of what no sample needs any more, but the change in effect. */
    cr_expect_eq(lp_labels_tend(now_ns() + 1000000000ull), 0);
    lp_labels_ctx_at(tid, now_ns(), &c);
    cr_expect_eq(c.label_set, two);
}

/* Changes faster than the writer reads fill the ring: its newest entry is rewritten and
 * marked lost, and samples in its span get no labels, which the writer counts. */
Test(labels, a_full_history_marks_its_newest_span_lost)
{
    uint32_t tid = (uint32_t)syscall(SYS_gettid);
    lp_labels_session_start();
    nap_ms(3);
    char v[16];
    for (unsigned i = 0; i < LP_LABELS_HIST + 10; i++) {
        snprintf(v, sizeof(v), "%u", i % 7);
        lp_labels_set("k", v);
    }
    nap_ms(1);
    struct lp_label_ctx c;
    lp_labels_ctx_at(tid, now_ns(), &c);
    cr_expect_eq(c.is_lost, 1);
    cr_expect_eq(c.label_set, 0);
    cr_expect_eq(lp_labels_tend(now_ns()), 1, "a history a quarter full asks for a sooner drain");
    /* Once read, changes are recorded again. */
    lp_labels_tend(now_ns() + 1000000000ull);
    lp_labels_set("k", "again");
    uint32_t again = smp_self.label_set;
    nap_ms(1);
    lp_labels_ctx_at(tid, now_ns(), &c);
    cr_expect_eq(c.is_lost, 0);
    cr_expect_eq(c.label_set, again);
}

Test(labels, a_trace_set_is_the_one_the_handler_reads)
{
    uint8_t a[16], b[16], span[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    memset(a, 0x11, sizeof(a));
    memset(b, 0x22, sizeof(b));
    cr_assert_eq(lp_labels_trace_set(a, span), 0);
    unsigned cur = smp_self.trace_cur;
    cr_assert(cur == 1 || cur == 2);
    cr_expect(smp_self.trace[cur - 1].is_set && smp_self.trace[cur - 1].trace_id[0] == 0x11);
    cr_assert_eq(lp_labels_trace_set(b, span), 0);
    cr_expect_neq(smp_self.trace_cur, cur, "filled the other buffer, then named it");
    cr_expect_eq(smp_self.trace[smp_self.trace_cur - 1].trace_id[0], 0x22);
    uint8_t zero[16] = {0};
    cr_assert_eq(lp_labels_trace_set(zero, span), 0);
    cr_expect_eq(smp_self.trace_cur, 0, "the all-zero trace id is none");
    cr_assert_eq(lp_labels_trace_set(a, span), 0);
    cr_assert_eq(lp_labels_trace_clear(), 0);
    cr_expect_eq(smp_self.trace_cur, 0);
}

Test(labels, a_merge_sets_each_key_over_a_set)
{
    lp_labels_set("endpoint", "/a");
    lp_labels_set("tenant", "t1");
    const char *keys[] = {"tenant", "route"}, *values[] = {"t2xx", "/r"};
    size_t kl[] = {6, 5}, vl[] = {2, 2};
    uint32_t id = lp_labels_merge(smp_self.label_set, keys, kl, values, vl, 2);
    cr_expect_str_eq(pairs(id), "endpoint=/a,route=/r,tenant=t2");
    cr_expect_eq(lp_labels_merge(0, keys, kl, values, vl, 0), 0);
}

/* A new thread starts with its creator's labels (the thread trampoline passes them). */
static void *begin(void *arg)
{
    lp_labels_thread_begin(*(uint32_t *)arg);
    *(uint32_t *)arg = smp_self.label_set;
    return NULL;
}

Test(labels, a_new_thread_begins_with_the_labels_given)
{
    lp_labels_set("phase", "startup");
    uint32_t id = smp_self.label_set;
    pthread_t t;
    pthread_create(&t, NULL, begin, &id);
    pthread_join(t, NULL);
    cr_expect_eq(id, smp_self.label_set);
}

/* The fork handlers: the child keeps the forking thread's labels, a copy its changes do
 * not share with the parent, and its history starts again with them. */
Test(labels, a_fork_child_keeps_the_threads_labels_as_a_copy)
{
    lp_labels_session_start();
    lp_labels_set("phase", "parent");
    uint32_t parent = smp_self.label_set;
    lp_labels_fork_prepare();
    pid_t pid = fork();
    if (pid == 0) {
        lp_labels_fork_child();
        int ok = smp_self.label_set == parent;
        lp_labels_session_start();
        nap_ms(3);
        struct lp_label_ctx c;
        lp_labels_ctx_at((uint32_t)syscall(SYS_gettid), now_ns(), &c);
        ok = ok && c.label_set == parent;
        lp_labels_set("phase", "child");
        ok = ok && smp_self.label_set != parent;
        _exit(ok ? 0 : 1);
    }
    lp_labels_fork_parent();
    int status = -1;
    waitpid(pid, &status, 0);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child saw other labels");
    cr_expect_eq(smp_self.label_set, parent, "the child's change is its own");
}
