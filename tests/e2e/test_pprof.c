/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end test of `prof report --format pprof` against Go's own pprof reader
 * (`go tool pprof`, Debian's golang-go): the shares workload's profile converted to
 * profile.proto must give `go tool pprof -top` the same functions with the same flat
 * sample counts as `prof report --format top`, and the cpu values must be the counts times
 * the sampling period.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/e2e/support.h"

#define GO "/usr/bin/go"

TestSuite(e2e_pprof, .init = e2e_setup, .fini = e2e_teardown, .timeout = 120);

/* The first column (flat) of the row of a -top style table whose name is name; -1 when no
 * row has it. */
static double flat_of(const char *table, const char *name)
{
    const char *line = table;
    while (*line) {
        size_t len = strcspn(line, "\n");
        char row[512];
        snprintf(row, sizeof(row), "%.*s", (int)(len < 511 ? len : 511), line);
        char *last = strrchr(row, ' ');
        double flat;
        if (last != NULL && strcmp(last + 1, name) == 0 && sscanf(row, " %lf", &flat) == 1)
            return flat;
        line += len + (line[len] == '\n');
    }
    return -1;
}

Test(e2e_pprof, go_tool_pprof_reads_the_same_flat_counts)
{
    cr_assert(access(GO, X_OK) == 0, GO " is missing: scripts/setup.sh installs golang-go");
    const char *prof = e2e_path("shares.prof");
    struct e2e_proc p;
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(e2e_env("PROF_OUTPUT", prof))};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("shares"), "1"));
    cr_assert_eq(p.status, 0, "shares exited %d:\n%s", p.status, p.err);
    e2e_proc_free(&p);

    struct e2e_proc top, conv, go_n, go_cpu;
    e2e_run(&top, NULL, E2E_ARGV(E2E_PROF, "report", "--format", "top", prof));
    cr_assert_eq(top.status, 0, "%s", top.err);
    const char *pb = e2e_path("shares.pb.gz");
    e2e_run(&conv, NULL, E2E_ARGV(E2E_PROF, "report", "--format", "pprof", "-o", pb, prof));
    cr_assert_eq(conv.status, 0, "%s", conv.err);
    struct e2e_opts go_env = {.env = E2E_ARGV(e2e_env("HOME", e2e_dir()),
                                              e2e_env("PPROF_TMPDIR", e2e_dir()))};
    e2e_run(&go_n, &go_env, E2E_ARGV(GO, "tool", "pprof", "-top", "-sample_index=samples", pb));
    cr_assert_eq(go_n.status, 0, "go tool pprof exited %d:\n%s", go_n.status, go_n.err);
    cr_log_info("prof:\n%s\ngo tool pprof:\n%s", top.out, go_n.out);
    const char *hot[] = {"hot_a", "hot_b", "hot_c", "main"};
    for (size_t i = 0; i < 4; i++) {
        double mine = flat_of(top.out, hot[i]), theirs = flat_of(go_n.out, hot[i]);
        cr_expect_geq(mine, 0, "%s missing from prof's top table", hot[i]);
        cr_expect_eq(theirs, mine, "%s: go tool pprof says flat %.0f, prof %.0f", hot[i], theirs,
                     mine);
    }
    cr_expect_gt(flat_of(top.out, "hot_a"), 0);
    cr_expect(strstr(go_n.out, "Type: samples") != NULL, "%s", go_n.out);

    /* The default sample type is cpu: the same shares in nanoseconds. */
    e2e_run(&go_cpu, &go_env, E2E_ARGV(GO, "tool", "pprof", "-top", "-unit=ms", pb));
    cr_assert_eq(go_cpu.status, 0, "%s", go_cpu.err);
    cr_expect(strstr(go_cpu.out, "Type: cpu") != NULL, "%s", go_cpu.out);
    cr_expect(strstr(go_cpu.out, "ms") != NULL, "%s", go_cpu.out);
    e2e_proc_free(&top);
    e2e_proc_free(&conv);
    e2e_proc_free(&go_n);
    e2e_proc_free(&go_cpu);
}
