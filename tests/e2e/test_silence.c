/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests that the preloaded library stays out of the application's way: the
 * chatty workload (tests/workloads/chatty.c) writes the same bytes to stdout and stderr
 * and exits with the same status with and without it; the library's descriptors are
 * close-on-exec, so an exec'd child inherits exactly the fds it would have without it; and
 * the library takes none of fds 0-2, even when the application starts with fd 0 closed.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/support.h"

#define MAX_FDS 64

TestSuite(e2e_silence, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

struct fd_list {
    int fd[MAX_FDS];
    int cloexec[MAX_FDS];
    size_t n;
};

struct chatty_run {
    struct e2e_proc proc;
    struct fd_list self; /* the workload's own fds at the end of main */
    struct fd_list exec; /* the fds its exec'd child inherited */
    char *report;        /* the fd report's text */
    size_t n_profiles;   /* profiles the run left in the test directory */
};

/* Parses "0 1 2 3c" after "tag: " on a line of the report. */
static void parse_fds(struct fd_list *l, const char *report, const char *tag)
{
    memset(l, 0, sizeof(*l));
    const char *p = strstr(report, tag);
    cr_assert(p != NULL, "no \"%s\" in the fd report:\n%s", tag, report);
    p += strlen(tag);
    while (*p && *p != '\n') {
        char *end;
        long fd = strtol(p, &end, 10);
        cr_assert(end != p && l->n < MAX_FDS, "bad fd report:\n%s", report);
        l->fd[l->n] = (int)fd;
        l->cloexec[l->n] = *end == 'c';
        l->n++;
        p = end + (*end == 'c');
        while (*p == ' ')
            p++;
    }
}

static int has_fd(const struct fd_list *l, int fd)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->fd[i] == fd)
            return 1;
    return 0;
}

static int same_fds(const struct fd_list *a, const struct fd_list *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->fd[i] != b->fd[i])
            return 0;
    return 1;
}

static void run_chatty_with(struct chatty_run *r, const char *label, int preload,
                            int close_stdin, const char *setting)
{
    char name[64];
    snprintf(name, sizeof(name), "%s.fds", label);
    const char *report = e2e_path(name);
    snprintf(name, sizeof(name), "%s.%%p.prof", label);
    const char *output = e2e_env("PROF_OUTPUT", e2e_path(name));
    struct e2e_opts o = {.preload = preload, .close_stdin = close_stdin,
                         .env = E2E_ARGV(output, setting)};
    e2e_run(&r->proc, &o, E2E_ARGV(E2E_WORKLOAD("chatty"), report));
    r->report = e2e_read_file(report, NULL);
    cr_assert(r->report != NULL, "chatty (%s) wrote no fd report; status %d, stderr:\n%s", label,
              r->proc.status, r->proc.err);
    parse_fds(&r->self, r->report, "self: ");
    parse_fds(&r->exec, r->report, "exec: ");
    const char *found[8];
    snprintf(name, sizeof(name), "%s.", label);
    r->n_profiles = e2e_find_files(name, ".prof", found, 8);
}

static void run_chatty(struct chatty_run *r, const char *label, int preload, int close_stdin)
{
    run_chatty_with(r, label, preload, close_stdin, NULL);
}

static void free_chatty(struct chatty_run *r)
{
    e2e_proc_free(&r->proc);
    free(r->report);
}

static void compare_runs(int close_stdin)
{
    struct chatty_run plain, lib;
    run_chatty(&plain, "plain", 0, close_stdin);
    run_chatty(&lib, "lib", 1, close_stdin);

    cr_assert_eq(plain.proc.status, 5, "chatty without the library exited %d", plain.proc.status);
    /* chatty forks a child that execs: with PROF_FOLLOW=1 (the default) that child is
     * profiled too, in its own file. */
    cr_assert_eq(lib.n_profiles, 2, "the library wrote %zu profiles, not 2 (parent, child)",
                 lib.n_profiles);
    cr_expect_eq(lib.proc.status, plain.proc.status, "exit status %d with the library, %d without",
                 lib.proc.status, plain.proc.status);
    cr_expect(lib.proc.out_len == plain.proc.out_len &&
                  memcmp(lib.proc.out, plain.proc.out, plain.proc.out_len) == 0,
              "stdout differs with the library (%zu bytes against %zu)", lib.proc.out_len,
              plain.proc.out_len);
    cr_expect(lib.proc.err_len == plain.proc.err_len &&
                  memcmp(lib.proc.err, plain.proc.err, plain.proc.err_len) == 0,
              "stderr differs with the library:\n--- with:\n%s\n--- without:\n%s", lib.proc.err,
              plain.proc.err);

    /* What an exec'd child inherits must not change. */
    cr_expect(same_fds(&lib.exec, &plain.exec),
              "an exec'd child inherits other fds with the library:\n--- with:\n%s--- without:\n%s",
              lib.report, plain.report);
    /* The application's own fds: all of its own are still there, and any the library
     * holds are above 2 and close-on-exec. */
    for (size_t i = 0; i < plain.self.n; i++)
        cr_expect(has_fd(&lib.self, plain.self.fd[i]), "fd %d is gone with the library",
                  plain.self.fd[i]);
    for (size_t i = 0; i < lib.self.n; i++) {
        if (has_fd(&plain.self, lib.self.fd[i]))
            continue;
        cr_expect(lib.self.fd[i] > 2, "the library holds fd %d:\n--- with:\n%s--- without:\n%s",
                  lib.self.fd[i], lib.report, plain.report);
        cr_expect(lib.self.cloexec[i], "the library's fd %d is not close-on-exec", lib.self.fd[i]);
    }
    if (close_stdin)
        cr_expect(!has_fd(&lib.self, 0),
                  "fd 0 was closed at start but is open at the end with the library:\n%s",
                  lib.report);
    free_chatty(&plain);
    free_chatty(&lib);
}

Test(e2e_silence, output_status_and_fds_unchanged)
{
    compare_runs(0);
}

Test(e2e_silence, fd_0_stays_closed)
{
    compare_runs(1);
}

/* The descriptors the library holds at the end of main beside the application's. */
static size_t library_fds(const struct chatty_run *lib, const struct chatty_run *plain)
{
    size_t n = 0;
    for (size_t i = 0; i < lib->self.n; i++)
        n += !has_fd(&plain->self, lib->self.fd[i]);
    return n;
}

/* Choosing the perf source tries its counters on the starting thread and keeps them for
 * that thread: a process that samples from the start holds its profile and the one thread's
 * counters (the signal's and, where kernel-only counters are permitted, the kernel-time
 * one), never a second pair; one that starts idle (PROF_START=0) holds nothing (its
 * profile is written at its end).
 * The ring source (the default) makes no trial: a thread gets its counter once it ran a
 * period, which at 1 Hz this one never does. */
Test(e2e_silence, the_timer_trial_leaves_no_descriptor_behind)
{
    struct chatty_run plain, sampling, idle, ring;
    run_chatty(&plain, "plain", 0, 0);
    run_chatty_with(&sampling, "sampling", 1, 0, "PROF_TIMER=perf");
    run_chatty_with(&idle, "idle", 1, 0, "PROF_START=0");
    run_chatty_with(&ring, "ring", 1, 0, "PROF_FREQ=1");
    cr_expect_eq(library_fds(&ring, &plain), 1,
                 "the ring source before its first period, the library holds %zu descriptors, "
                 "not 1 (the profile):\n--- with:\n%s--- without:\n%s",
                 library_fds(&ring, &plain), ring.report, plain.report);
    free_chatty(&ring);
    cr_assert_eq(sampling.proc.status, plain.proc.status, "exit status %d with the library",
                 sampling.proc.status);
    size_t n = library_fds(&sampling, &plain);
    cr_expect(n >= 2 && n <= 3,
              "sampling with the perf source, the library holds %zu descriptors (the profile, "
              "the thread's counter and its kernel-time counter: 2 or 3):\n--- with:\n%s--- "
              "without:\n%s",
              n, sampling.report, plain.report);
    cr_expect_eq(library_fds(&idle, &plain), 0,
                 "idle (PROF_START=0), the library holds %zu descriptors, not 0 (its profile "
                 "is written at the end):\n--- with:\n%s--- without:\n%s",
                 library_fds(&idle, &plain), idle.report, plain.report);
    free_chatty(&plain);
    free_chatty(&sampling);
    free_chatty(&idle);
}
