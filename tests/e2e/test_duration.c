/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of durations: `prof record -d TIME` (PROF_DURATION) profiles the first
 * TIME of a program and lets it run on, its profile whole, and `prof stacks` reads it with
 * ptrace afterwards without waking it; every command takes the same spelling of a
 * duration (500ms, 10s, 1.5, 5m, 1h) and refuses what is not one.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/e2e/support.h"

TestSuite(e2e_duration, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

Test(e2e_duration, record_profiles_the_first_part_and_lets_the_program_run_on)
{
    const char *out = e2e_path("first.prof");
    struct e2e_proc p;
    e2e_run(&p, NULL,
            E2E_ARGV(E2E_PROF, "record", "-d", "300ms", "-o", out, "--", E2E_WORKLOAD("shares"),
                     "1.2", "-"));
    cr_assert_eq(p.status, 0, "prof record -d 300ms exited %d; stderr:\n%s", p.status, p.err);
    /* The program ran its whole time: its own report of its CPU time says so. */
    double cpu_s = e2e_truth_value(p.out, "total_cpu_s");
    cr_expect(cpu_s > 1.1, "the program stopped after %.2f s of CPU", cpu_s);
    e2e_proc_free(&p);

    struct e2e_scan s;
    e2e_scan_file(&s, out);
    cr_assert(s.header_ok && s.has_end && s.trailing_bytes == 0, "%s is not whole", out);
    cr_expect(s.has_stats, "%s has no stats record", out);
    cr_expect(s.n_samples > 0, "no samples in the first 300 ms");
    double last_s = (double)(s.last_time_ns - s.start_mono_ns) / 1e9;
    cr_expect(last_s < 0.3 + 0.15, "a sample %.3f s after the start, past 300 ms", last_s);
    /* About 75 at 250 Hz in 0.3 s; the whole run would be about 300. */
    cr_expect(s.weight_sum < 150, "%lu samples: more than 300 ms of them",
              (unsigned long)s.weight_sum);

    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", out));
    cr_expect_eq(p.status, 0);
    cr_expect(strstr(p.err, "PROF_DURATION") != NULL, "the report does not say why it ends:\n%s",
              p.err);
    e2e_proc_free(&p);
}

Test(e2e_duration, every_unit_is_taken_and_other_spellings_are_refused)
{
    static const char *const good[] = {"500ms", "10s", "1.5", "2", "5m", "1h", "0.25s"};
    static const char *const bad[] = {"10sec", "5d", "-1s", "", "1 s", "0", "1e3", "ms"};
    struct e2e_proc p;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "-q", "-o", e2e_path("u.prof"), "-d",
                                   good[i], "--", "/bin/true"));
        cr_expect_eq(p.status, 0, "-d '%s': exit %d; %s", good[i], p.status, p.err);
        e2e_proc_free(&p);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "--duration", bad[i], "--", "/bin/true"));
        cr_expect_eq(p.status, 125, "--duration '%s': exit %d", bad[i], p.status);
        cr_expect(strstr(p.err, "is not a duration") != NULL, "%s", p.err);
        e2e_proc_free(&p);
    }
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "stacks", "--timeout", "10x", "1"));
    cr_expect_eq(p.status, 2, "stacks --timeout 10x: exit %d", p.status);
    cr_expect(strstr(p.err, "is not a duration") != NULL, "%s", p.err);
    e2e_proc_free(&p);
}

Test(e2e_duration, a_bad_prof_duration_is_one_line_and_the_program_runs)
{
    struct e2e_proc p;
    e2e_run_profiled(&p, "bad.prof", E2E_ARGV("PROF_DURATION=soon"), 0,
                     E2E_ARGV("/bin/sh", "-c", "echo ran"));
    cr_expect_eq(p.status, 0);
    cr_expect_str_eq(p.out, "ran\n");
    size_t n_said = 0;
    size_t n = e2e_count_lines(p.err, "libprof: PROF_DURATION='soon' is not a duration", &n_said);
    cr_expect(n == 1 && n_said == 1, "stderr:\n%s", p.err);
    e2e_proc_free(&p);
}

/* After PROF_DURATION the library takes no snapshot requests (its writer thread is gone):
 * prof stacks reads the process with ptrace at once, and sends it no signal that would cut
 * its sleep short. */
Test(e2e_duration, after_the_duration_stacks_reads_the_process_without_waking_it)
{
    int out[2];
    cr_assert_eq(pipe(out), 0);
    char env_out[600];
    snprintf(env_out, sizeof(env_out), "PROF_OUTPUT=%s", e2e_path("sleeper.prof"));
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        dup2(out[1], 1);
        close(out[0]);
        char *const env[] = {"LD_PRELOAD=" E2E_LIB, env_out, "PROF_DURATION=100ms", NULL};
        execle(E2E_WORKLOAD("sleeper"), "sleeper", "2", (char *)NULL, env);
        _exit(127);
    }
    close(out[1]);
    FILE *from = fdopen(out[0], "r");
    char line[64] = "";
    cr_assert(fgets(line, sizeof(line), from) != NULL && strcmp(line, "ready\n") == 0,
              "sleeper said: %s", line);
    usleep(400000); /* the duration and a writer period or two */
    char pid_text[16];
    snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
    struct e2e_proc p;
    struct e2e_opts o = {.timeout_s = 10};
    e2e_run(&p, &o, E2E_ARGV(E2E_PROF, "stacks", "--timeout", "3s", pid_text));
    cr_expect_eq(p.status, 0, "prof stacks exited %d: %s", p.status, p.err);
    cr_expect(strstr(p.err, "profile is finished") != NULL, "%s", p.err);
    cr_expect(strstr(p.out, "nanosleep") != NULL, "the sleeping thread's stack is missing");
    e2e_proc_free(&p);
    cr_assert(fgets(line, sizeof(line), from) != NULL, "sleeper said nothing more");
    cr_expect_str_eq(line, "slept\n", "prof stacks cut the sleep short");
    fclose(from);
    int status;
    waitpid(pid, &status, 0);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "sleeper status 0x%x", status);
    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path("sleeper.prof"));
    cr_expect(s.has_end, "the profile finished at the duration has no end record");
}
