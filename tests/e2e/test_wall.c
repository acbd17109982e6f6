/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Wall-clock profiles (PROF_MODE=wall, libprof/wall.h) against a workload whose truth is
 * known (tests/workloads/wallmix.c): a thread that spins, sleeps, waits for a mutex another
 * thread holds and reads from a pipe, each phase for a measured share of its wall time.
 * The profile's shares of that thread's samples, by phase, are within 2 points of the
 * measured ones; each wait carries its state and system call as its leaf frame; no system
 * call saw EINTR. The stacks of time off CPU are the kernel's records of them, which need
 * perf_event_paranoid <= 1 or privileges: without them the test is skipped.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tests/e2e/support.h"

#define TOLERANCE 0.02

TestSuite(e2e_wall, .init = e2e_setup, .fini = e2e_teardown, .timeout = 90);

static const char *const phases[] = {"phase_spin", "phase_sleep", "phase_mutex", "phase_pipe"};

/* Runs wallmix for 4 s in wall mode; returns the truth file's text. */
static char *run_wallmix(void)
{
    struct e2e_proc p;
    const char *truth_path = e2e_path("truth.txt");
    e2e_run_profiled(&p, "wall.prof", E2E_ARGV("PROF_MODE=wall"), 60,
                     E2E_ARGV(E2E_WORKLOAD("wallmix"), "4", truth_path));
    cr_assert_eq(p.status, 0, "wallmix exited %d:\n%s", p.status, p.err);
    cr_assert_eq(p.out_len + p.err_len, 0, "wallmix printed:\n%s%s", p.out, p.err);
    e2e_proc_free(&p);
    char *truth = e2e_read_file(truth_path, NULL);
    cr_assert(truth != NULL, "no truth file");
    cr_log_info("truth:\n%s", truth);
    /* Without the kernel's stacks the phases cannot be told apart. */
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "-f", "folded", e2e_path("wall.prof")));
    if (strstr(p.err, "does not record stacks at context switches") != NULL)
        cr_skip_test("no stacks at context switches here (perf_event_paranoid > 1)");
    e2e_proc_free(&p);
    return truth;
}

Test(e2e_wall, every_phase_of_a_thread_within_2_points_of_its_wall_time_and_by_state)
{
    char *truth = run_wallmix();
    cr_expect_eq(e2e_truth_value(truth, "eintr"), 0, "a system call saw EINTR");
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "-f", "folded", "--thread", "worker",
                               e2e_path("wall.prof")));
    cr_assert_eq(p.status, 0, "prof report exited %d:\n%s", p.status, p.err);
    struct e2e_folded f;
    e2e_folded_parse(&f, p.out);
    e2e_proc_free(&p);
    /* 4 s at 250 Hz: about 1000 periods of the worker's wall time. */
    cr_assert(f.total >= 800, "%ld periods for 4 s at 250 Hz", f.total);
    for (size_t k = 0; k < 4; k++) {
        double want = e2e_truth_value(truth, phases[k]);
        double got = (double)e2e_folded_containing(&f, phases[k]) / (double)f.total;
        cr_log_info("%s: %.4f of the wall time, %.4f of %ld periods", phases[k], want, got,
                    f.total);
        cr_expect(got >= want - TOLERANCE && got <= want + TOLERANCE,
                  "%s: %.2f %% of the samples, %.2f %% of the wall time", phases[k], 100 * got,
                  100 * want);
    }
    /* The waits end with their state: most of each phase's time is labelled. */
    static const struct {
        const char *phase, *leaf;
    } waits[] = {
        {"phase_sleep", "[sleep: clock_nanosleep]"},
        {"phase_mutex", "[sleep: futex]"},
        {"phase_pipe", "[sleep: read]"},
    };
    for (size_t k = 0; k < 3; k++) {
        long labelled = 0, all = e2e_folded_containing(&f, waits[k].phase);
        for (size_t i = 0; i < f.n_stacks; i++) {
            const char *s = f.stacks[i].frames, *leaf = strrchr(s, ';');
            if (strstr(s, waits[k].phase) && leaf && strcmp(leaf + 1, waits[k].leaf) == 0)
                labelled += f.stacks[i].count;
        }
        cr_log_info("%s: %ld of %ld periods end in %s", waits[k].phase, labelled, all,
                    waits[k].leaf);
        cr_expect(labelled >= 0.5 * (double)all, "%s: %ld of %ld periods end in %s",
                  waits[k].phase, labelled, all, waits[k].leaf);
    }
    e2e_folded_free(&f);
    free(truth);

    /* The same profile by state: --state futex keeps the futex waits only, --state
     * running the time on CPU; top splits each function's time on and off CPU. */
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "-f", "folded", "--state", "futex",
                               e2e_path("wall.prof")));
    cr_assert_eq(p.status, 0, "prof report --state futex exited %d:\n%s", p.status, p.err);
    e2e_folded_parse(&f, p.out);
    e2e_proc_free(&p);
    cr_assert(f.n_stacks > 0, "no stack waits in futex");
    for (size_t i = 0; i < f.n_stacks; i++) {
        const char *leaf = strrchr(f.stacks[i].frames, ';');
        leaf = leaf ? leaf + 1 : f.stacks[i].frames;
        cr_expect(strcmp(leaf, "[sleep: futex]") == 0 || strcmp(leaf, "[wait: futex]") == 0,
                  "--state futex kept %s", f.stacks[i].frames);
    }
    e2e_folded_free(&f);
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "-f", "top", "--state", "running",
                               e2e_path("wall.prof")));
    cr_expect(strstr(p.out, "phase_spin") != NULL, "--state running lost the spin:\n%s", p.out);
    cr_expect(strstr(p.out, "[sleep") == NULL, "--state running kept a wait:\n%s", p.out);
    e2e_proc_free(&p);
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "-f", "top", e2e_path("wall.prof")));
    cr_expect(strstr(p.out, "on-cpu  off-cpu") != NULL, "no on/off-CPU columns:\n%s", p.out);
    e2e_proc_free(&p);
}

/* Without the privilege to record stacks at context switches (another user, with
 * perf_event_paranoid 2), the waits are still measured and labelled, their stacks the pc
 * they wait at; nothing crashes and no call sees EINTR. Needs root (to become nobody) and
 * setpriv. */
Test(e2e_wall, without_privileges_the_waits_have_their_leaf_and_state)
{
    if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0)
        cr_skip_test("needs root and setpriv to run as another user");
    char *paranoid = e2e_read_file("/proc/sys/kernel/perf_event_paranoid", NULL);
    int level = paranoid ? atoi(paranoid) : 3;
    free(paranoid);
    if (level != 2)
        cr_skip_test("perf_event_paranoid is %d, not 2", level);
    const char *dir = e2e_path("nobody");
    cr_assert_eq(mkdir(dir, 0777), 0);
    cr_assert_eq(chmod(dir, 0777), 0);
    cr_assert_eq(chmod(e2e_dir(), 0755), 0);
    char out[600], truth[600], lib[600];
    snprintf(out, sizeof(out), "PROF_OUTPUT=%s/w.prof", dir);
    snprintf(truth, sizeof(truth), "%s/truth.txt", dir);
    snprintf(lib, sizeof(lib), "LD_PRELOAD=%s", E2E_LIB);
    struct e2e_proc p;
    e2e_run(&p, NULL,
            E2E_ARGV("/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                     "/usr/bin/env", lib, out, "PROF_MODE=wall", E2E_WORKLOAD("wallmix"), "1.5",
                     truth));
    cr_assert_eq(p.status, 0, "wallmix as nobody exited %d:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    char *text = e2e_read_file(truth, NULL);
    cr_assert_not_null(text);
    cr_expect_eq(e2e_truth_value(text, "eintr"), 0, "a system call saw EINTR");
    free(text);
    char prof[600];
    snprintf(prof, sizeof(prof), "%s/w.prof", dir);
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "-f", "folded", "--state", "sleeping", prof));
    cr_assert_eq(p.status, 0, "prof report exited %d:\n%s", p.status, p.err);
    cr_expect(strstr(p.err, "does not record stacks at context switches") != NULL,
              "no note of the stacks' absence:\n%s", p.err);
    cr_expect(strstr(p.out, "[sleep: futex]") != NULL && strstr(p.out, "[sleep: read]") != NULL,
              "the waits lack their state:\n%s", p.out);
    e2e_proc_free(&p);
}
