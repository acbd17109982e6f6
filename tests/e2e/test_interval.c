/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Long-running services: PROF_INTERVAL cuts the profile into a file of its own every
 * interval, each complete (its END record) as soon as the next one begins, while the
 * process runs on; PROF_KEEP keeps the newest; every file carries PROF_LABELS. Set
 * through `prof record --interval --keep --labels`, and by the variables.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/e2e/support.h"

TestSuite(e2e_interval, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

Test(e2e_interval, record_cuts_a_file_per_interval_keeps_the_newest_with_their_labels)
{
    struct e2e_proc p;
    e2e_run(&p, NULL,
            E2E_ARGV(E2E_PROF, "record", "-o", e2e_path("app.prof"), "--interval", "300ms",
                     "--keep", "2", "--labels", "service=api,version=1.2", "--",
                     E2E_WORKLOAD("dies"), "exit", "1.4"));
    cr_assert_eq(p.status, 0, "prof record exited %d:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    const char *files[8];
    size_t n = e2e_find_files("app.prof.", "", files, 8);
    cr_assert_eq(n, 2, "%zu files kept, not 2", n);
    /* 1.4 s of CPU in 300 ms intervals: the newest are the fourth and the fifth or later. */
    cr_expect(atoi(strrchr(files[0], '.') + 1) >= 3, "the newest kept is %s", files[0]);
    for (size_t i = 0; i < n; i++) {
        struct e2e_scan s;
        e2e_scan_file(&s, files[i]);
        cr_expect(s.header_ok && s.has_end && s.trailing_bytes == 0, "%s is not whole",
                  files[i]);
        cr_expect(s.has_process && s.has_stats, "%s lacks its PROCESS or STATS", files[i]);
        e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "-f", "folded", files[i]));
        cr_expect_eq(p.status, 0, "prof report %s: %s", files[i], p.err);
        cr_expect(strstr(p.err, "labels service=api, version=1.2") != NULL,
                  "%s: no labels:\n%s", files[i], p.err);
        e2e_proc_free(&p);
    }
}

/* While the program runs, each interval's file is finished as the next one begins. */
Test(e2e_interval, a_finished_file_is_whole_while_the_process_runs_on)
{
    char out[512], lib[600];
    snprintf(out, sizeof(out), "PROF_OUTPUT=%s", e2e_path("svc.%n.prof"));
    snprintf(lib, sizeof(lib), "LD_PRELOAD=%s", E2E_LIB);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        char *env[] = {out, lib, "PROF_INTERVAL=300ms", NULL};
        FILE *null = freopen("/dev/null", "w", stdout);
        (void)null;
        execle(E2E_WORKLOAD("dies"), "dies", "exit", "2.5", (char *)NULL, env);
        _exit(127);
    }
    /* svc.1.prof appears once svc.0.prof is finished. */
    struct stat st;
    for (int i = 0; i < 400 && stat(e2e_path("svc.1.prof"), &st) != 0; i++)
        usleep(10000);
    int status;
    cr_assert_eq(waitpid(pid, &status, WNOHANG), 0, "the program ended too soon");
    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path("svc.0.prof"));
    cr_expect(s.header_ok && s.has_end && s.trailing_bytes == 0,
              "svc.0.prof is not whole while the program runs");
    cr_expect(s.n_samples > 0, "svc.0.prof has no samples");
    cr_expect(kill(pid, 0) == 0, "the program is not running any more");
    waitpid(pid, &status, 0);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the program failed: %#x", status);
    const char *files[16];
    size_t n = e2e_find_files("svc.", ".prof", files, 16);
    cr_expect(n >= 5, "%zu files for 2.5 s in 300 ms intervals", n);
}
