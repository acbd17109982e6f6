/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of the selection options of `prof report` on the twothreads workload
 * (tests/workloads/twothreads.c), whose threads "worker-one" and "worker-two" run spin_one
 * and spin_two: --thread and --tid keep one thread's samples, --threads puts
 * "worker-one (TID)" at the root of its stacks, --processes puts "twothreads (PID)" above,
 * --focus and --ignore split the profile between the two functions.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/support.h"

TestSuite(e2e_select, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

static const char *profile_twothreads(void)
{
    struct e2e_proc p;
    const char *output = e2e_env("PROF_OUTPUT", e2e_path("threads.prof"));
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(output)};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("twothreads"), "150"));
    cr_assert_eq(p.status, 0, "twothreads exited %d:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    return e2e_path("threads.prof");
}

static void report(struct e2e_folded *f, const char *const argv[])
{
    struct e2e_proc p;
    e2e_run(&p, NULL, argv);
    cr_assert_eq(p.status, 0, "prof report exited %d:\n%s", p.status, p.err);
    e2e_folded_parse(f, p.out);
    for (size_t i = 0; i < f->n_stacks && i < 20; i++)
        cr_log_info("  %s %ld", f->stacks[i].frames, f->stacks[i].count);
    e2e_proc_free(&p);
}

/* The tid of the thread named name in the profile. */
static uint32_t tid_named(const char *prof, const char *name)
{
    struct e2e_scan s;
    e2e_scan_file(&s, prof);
    for (size_t i = 0; i < s.n_names; i++)
        if (strcmp(s.names[i], name) == 0)
            return s.name_tids[i];
    cr_assert_fail("no thread record named %s", name);
    return 0;
}

Test(e2e_select, thread_and_tid_keep_one_thread)
{
    const char *prof = profile_twothreads();
    struct e2e_folded all, one, by_tid;
    report(&all, E2E_ARGV(E2E_PROF, "report", prof));
    report(&one, E2E_ARGV(E2E_PROF, "report", "--thread", "worker-one", prof));
    cr_assert_gt(e2e_folded_containing(&one, "spin_one"), 0);
    cr_expect_eq(e2e_folded_containing(&one, "spin_two"), 0, "--thread kept worker-two");
    cr_expect_eq(one.total, e2e_folded_containing(&all, "spin_one"),
                 "--thread worker-one does not have every spin_one sample");
    char tid[16];
    snprintf(tid, sizeof(tid), "%u", tid_named(prof, "worker-one"));
    report(&by_tid, E2E_ARGV(E2E_PROF, "report", "--tid", tid, prof));
    cr_expect_eq(by_tid.total, one.total, "--tid %s and --thread worker-one differ", tid);
    e2e_folded_free(&all);
    e2e_folded_free(&one);
    e2e_folded_free(&by_tid);
}

Test(e2e_select, threads_and_processes_add_root_frames)
{
    const char *prof = profile_twothreads();
    struct e2e_scan s;
    e2e_scan_file(&s, prof);
    char one[64], proc[64];
    snprintf(one, sizeof(one), "worker-one (%u)", tid_named(prof, "worker-one"));
    snprintf(proc, sizeof(proc), "twothreads (%u)", s.pid);
    struct e2e_folded f;
    report(&f, E2E_ARGV(E2E_PROF, "report", "--threads", "--processes", prof));
    long under_one = 0, under_proc = 0;
    size_t proc_len = strlen(proc);
    for (size_t i = 0; i < f.n_stacks; i++) {
        const char *st = f.stacks[i].frames;
        if (strncmp(st, proc, proc_len) == 0 && st[proc_len] == ';') {
            under_proc += f.stacks[i].count;
            if (strncmp(st + proc_len + 1, one, strlen(one)) == 0 && strstr(st, "spin_one"))
                under_one += f.stacks[i].count;
        }
    }
    cr_expect_eq(under_proc, f.total, "not every stack starts with '%s'", proc);
    cr_expect_eq(under_one, e2e_folded_containing(&f, "spin_one"),
                 "spin_one's stacks do not all start with '%s;%s'", proc, one);
    cr_expect_gt(under_one, 0);
    e2e_folded_free(&f);
}

Test(e2e_select, focus_and_ignore_split_the_profile)
{
    const char *prof = profile_twothreads();
    struct e2e_folded all, focus, ignore;
    report(&all, E2E_ARGV(E2E_PROF, "report", prof));
    report(&focus, E2E_ARGV(E2E_PROF, "report", "--focus", "^spin_o", prof));
    report(&ignore, E2E_ARGV(E2E_PROF, "report", "--ignore", "^spin_o", prof));
    cr_expect_eq(focus.total + ignore.total, all.total);
    cr_expect_eq(focus.total, e2e_folded_containing(&all, "spin_one"));
    cr_expect_eq(e2e_folded_containing(&ignore, "spin_one"), 0);
    e2e_folded_free(&all);
    e2e_folded_free(&focus);
    e2e_folded_free(&ignore);
}
