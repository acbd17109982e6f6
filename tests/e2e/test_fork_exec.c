/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of fork and exec under the profiler: 500 fork children of a process
 * whose other threads spin and dlopen()/dlclose() in a loop all end (at 2 kHz; with
 * libunwind too); a process whose last thread leaves by pthread_exit() ends, its main
 * thread's or a fork child's only thread (Python's test_3_join_in_forked_from_thread); with
 * a PROF_OUTPUT without %p, a parent, a fork child and an exec'd child each write a whole
 * profile of their own, the parent's intact; the fork child of a wall-clock profile
 * measures its own waits (tests/workloads/forkwait.c).
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/e2e/support.h"

TestSuite(e2e_fork, .init = e2e_setup, .fini = e2e_teardown, .timeout = 180);

static void run_lib(struct e2e_proc *p, const char *profile, const char *const *env,
                    double timeout_s, const char *const argv[])
{
    e2e_run_profiled(p, profile, env, timeout_s, argv);
}

static void expect_children_end(const char *const *env, const char *n, const char *mode)
{
    struct e2e_proc p;
    run_lib(&p, "storm.%p.prof", env, 150,
            mode ? E2E_ARGV(E2E_WORKLOAD("forkstorm"), n, mode)
                 : E2E_ARGV(E2E_WORKLOAD("forkstorm"), n));
    cr_log_info("%s", p.out);
    cr_expect(!p.timed_out, "forkstorm did not finish");
    cr_expect_eq(p.status, 0, "forkstorm exited %d: %s%s", p.status, p.out, p.err);
    char want[64];
    snprintf(want, sizeof(want), "hung 0 of %s", n);
    cr_expect(strstr(p.out, want) != NULL, "%s", p.out);
    e2e_proc_free(&p);
}

Test(e2e_fork, fork_children_never_hang_on_a_lock)
{
    expect_children_end(E2E_ARGV("PROF_FREQ=2000"), "500", NULL);
}

Test(e2e_fork, fork_children_never_hang_with_libunwind)
{
    expect_children_end(E2E_ARGV("PROF_FREQ=2000", "PROF_UNWIND=libunwind"), "200", NULL);
}

Test(e2e_fork, a_process_whose_main_thread_calls_pthread_exit_ends)
{
    struct e2e_proc p;
    run_lib(&p, "last.prof", E2E_ARGV("PROF_FREQ=1000"), 20,
            E2E_ARGV(E2E_WORKLOAD("lastthread"), "main-exits"));
    cr_assert(!p.timed_out, "the process did not end after its last thread");
    cr_expect_eq(p.status, 0, "exit status %d", p.status);
    e2e_proc_free(&p);
    /* The profile was finished by the writer thread, whole. */
    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path("last.prof"));
    cr_expect(s.has_end, "last.prof has no end record");
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("last.prof"));
    cr_expect(e2e_folded_containing(&f, "worker_work") > 100, "the worker's samples are missing");
    e2e_folded_free(&f);
}

Test(e2e_fork, a_fork_child_whose_only_thread_exits_ends)
{
    struct e2e_proc p;
    run_lib(&p, "lt.%p.prof", E2E_ARGV("PROF_FREQ=1000"), 20,
            E2E_ARGV(E2E_WORKLOAD("lastthread"), "fork-thread"));
    cr_expect(!p.timed_out);
    cr_expect_eq(p.status, 0, "%s", p.out);
    cr_expect(strstr(p.out, "child ended 0") != NULL, "%s", p.out);
    e2e_proc_free(&p);
}

/* Profiles holding a stack with `fn`, among the files starting with prefix. */
static size_t with_function(const char *prefix, const char *fn, const char **which)
{
    const char *found[16];
    size_t n = e2e_find_files(prefix, "", found, 16), hits = 0;
    for (size_t i = 0; i < n; i++) {
        struct e2e_proc p;
        e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", found[i]));
        cr_expect_eq(p.status, 0, "prof report %s exited %d: %s", found[i], p.status, p.err);
        cr_expect(strstr(p.err, "corrupt") == NULL, "%s: %s", found[i], p.err);
        if (strstr(p.out, fn)) {
            hits++;
            *which = found[i];
        }
        e2e_proc_free(&p);
    }
    return hits;
}

Test(e2e_fork, every_process_of_a_family_writes_a_whole_profile_of_its_own)
{
    struct e2e_proc p;
    run_lib(&p, "app.prof", E2E_ARGV("PROF_FREQ=1000"), 30,
            E2E_ARGV(E2E_WORKLOAD("execfamily"), "0.6"));
    cr_assert_eq(p.status, 0, "execfamily exited %d: %s%s", p.status, p.out, p.err);
    cr_expect_eq(p.err_len, 0, "%s", p.err);
    e2e_proc_free(&p);
    const char *in_parent = NULL, *in_fork = NULL, *in_exec = NULL;
    cr_expect_eq(with_function("app.prof", "parent_work", &in_parent), 1);
    cr_expect_eq(with_function("app.prof", "fork_work", &in_fork), 1);
    cr_expect_eq(with_function("app.prof", "exec_work", &in_exec), 1);
    /* The parent keeps the name it asked for, whole; the others got names of their own. */
    cr_expect(in_parent && strcmp(in_parent, e2e_path("app.prof")) == 0, "parent in %s",
              in_parent ? in_parent : "nothing");
    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path("app.prof"));
    cr_expect(s.has_end && s.trailing_bytes == 0, "the parent's profile is not whole");
    cr_expect(in_fork && in_exec && strcmp(in_fork, in_exec) != 0);
    cr_expect(in_parent && in_exec && strcmp(in_parent, in_exec) != 0,
              "the exec'd child wrote into its parent's profile");
}

/* Capabilities are per thread: after a program raised its own again, the writer thread
 * would fail the set*id call glibc relays to every thread, and glibc aborts. */
Test(e2e_fork, a_privilege_drop_that_keeps_capabilities_in_one_thread_works)
{
    struct e2e_proc p;
    run_lib(&p, "caps.%p.prof", NULL, 20, E2E_ARGV(E2E_WORKLOAD("privdrop"), "caps"));
    if (p.status == 77) {
        e2e_proc_free(&p);
        cr_skip_test("not root: no capabilities to keep");
    }
    cr_expect_eq(p.status, 0, "privdrop caps exited %d: %s%s", p.status, p.out, p.err);
    cr_expect(strstr(p.out, "privdrop ok") != NULL);
    e2e_proc_free(&p);
}

/* A child that drops root for another user and execs (Python's subprocess with user=):
 * the program it starts, as that user, can neither open the file the fork child made nor
 * create one in a folder only root may write; it takes the file over (libprof gives it to
 * the new user before the change), and says nothing on stderr. */
Test(e2e_fork, a_child_that_drops_root_and_execs_is_profiled_silently)
{
    cr_assert_eq(chmod(e2e_path(""), 0755), 0, "the test's folder, open to all, root's only");
    struct e2e_proc p;
    run_lib(&p, "drop.%p.prof", NULL, 30,
            E2E_ARGV(E2E_WORKLOAD("privdrop"), "child", E2E_WORKLOAD("shares"), "0.3"));
    if (p.status == 77) {
        e2e_proc_free(&p);
        cr_skip_test("not root: no privileges to drop");
    }
    cr_expect_eq(p.status, 0, "privdrop child exited %d: %s%s", p.status, p.out, p.err);
    cr_expect_eq(p.err_len, 0, "the program's stderr: %s", p.err);
    e2e_proc_free(&p);
    const char *paths[8];
    size_t n = e2e_find_files("drop.", ".prof", paths, 8);
    cr_expect_eq(n, 2, "the parent's profile and the child's, %zu files", n);
    int by_nobody = 0;
    for (size_t i = 0; i < n && i < 8; i++) {
        struct stat st;
        cr_assert_eq(stat(paths[i], &st), 0);
        struct e2e_scan s;
        e2e_scan_file(&s, paths[i]);
        cr_expect(s.has_end, "%s is not whole", paths[i]);
        if (st.st_uid == 65534) {
            by_nobody++;
            cr_expect_gt(s.stat_samples, 20, "the exec'd program's samples: %llu",
                         (unsigned long long)s.stat_samples);
        }
    }
    cr_expect_eq(by_nobody, 1, "one file given to the new user");
}

/* A program the library runs in sees none of libprof's descriptors among the low numbers
 * it may check (Python's test_pass_fds checks that descriptor 6 was not passed). */
Test(e2e_fork, libprofs_descriptors_stay_out_of_the_low_numbers)
{
    struct e2e_proc p;
    run_lib(&p, "ls.prof", E2E_ARGV("PROF_FREQ=1000"), 20,
            E2E_ARGV("/bin/ls", "-l", "/proc/self/fd/"));
    cr_assert_eq(p.status, 0, "ls exited %d: %s", p.status, p.err);
    for (const char *line = p.out; *line;) {
        int fd = -1;
        const char *arrow = strstr(line, " -> ");
        const char *nl = strchr(line, '\n');
        if (arrow && (!nl || arrow < nl)) {
            const char *num = arrow;
            while (num > line && num[-1] != ' ')
                num--;
            fd = atoi(num);
            const char *prof = strstr(arrow, ".prof"), *perf = strstr(arrow, "perf_event");
            if (fd >= 3 && fd < 512 &&
                ((prof && (!nl || prof < nl)) || (perf && (!nl || perf < nl))))
                cr_expect_fail("descriptor %d is libprof's: %.*s", fd,
                               (int)(nl ? nl - line : (long)strlen(line)), line);
        }
        if (!nl)
            break;
        line = nl + 1;
    }
    e2e_proc_free(&p);
}

/* A family of profiles read with a glob: one whose process was killed before it wrote
 * anything is skipped with a warning, the others are read. */
Test(e2e_fork, a_stillborn_profile_does_not_spoil_a_family)
{
    struct e2e_proc p;
    run_lib(&p, "fam.prof", E2E_ARGV("PROF_FREQ=1000"), 30,
            E2E_ARGV(E2E_WORKLOAD("execfamily"), "0.3"));
    cr_assert_eq(p.status, 0);
    e2e_proc_free(&p);
    e2e_write_file(e2e_path("fam.prof.99999"), "", 0);
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", e2e_path("fam.prof"),
                               e2e_path("fam.prof.99999")));
    cr_expect_eq(p.status, 0, "prof report exited %d: %s", p.status, p.err);
    cr_expect(strstr(p.err, "is empty: its process ended before it wrote anything") != NULL,
              "%s", p.err);
    cr_expect(strstr(p.out, "parent_work") != NULL);
    e2e_proc_free(&p);
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", e2e_path("fam.prof.99999")));
    cr_expect_eq(p.status, 2, "an empty file alone is bad input");
    e2e_proc_free(&p);
}

/* A process that lowered its descriptor limit below descriptors it opened high checks its
 * children for those numbers (Python's test_close_fds_when_max_fd_is_lowered): under a
 * small limit libprof takes the lowest free numbers. */
Test(e2e_fork, under_a_small_descriptor_limit_libprofs_descriptors_stay_low)
{
    struct e2e_proc p;
    run_lib(&p, "low.prof", E2E_ARGV("PROF_FREQ=1000"), 20,
            E2E_ARGV("/bin/sh", "-c", "ulimit -n 29; exec /bin/ls -l /proc/self/fd/"));
    cr_assert_eq(p.status, 0, "ls exited %d: %s", p.status, p.err);
    int n_ours = 0;
    for (const char *line = p.out; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *arrow = strstr(line, " -> ");
        if (arrow && (size_t)(arrow - line) < len &&
            (memmem(arrow, len - (size_t)(arrow - line), ".prof", 5) ||
             memmem(arrow, len - (size_t)(arrow - line), "perf_event", 10))) {
            const char *num = arrow;
            while (num > line && num[-1] != ' ')
                num--;
            int fd = atoi(num);
            n_ours++;
            cr_expect(fd >= 3 && fd < 17, "descriptor %d is libprof's under a limit of 29: %.*s",
                      fd, (int)len, line);
        }
        if (!nl)
            break;
        line = nl + 1;
    }
    cr_expect_gt(n_ours, 0, "libprof holds no descriptor in ls?\n%s", p.out);
    e2e_proc_free(&p);
}

/* The profiles (p.*) in the test's out/ folder. */
static size_t profiles_in_out(void)
{
    DIR *d = opendir(e2e_path("out"));
    cr_assert_not_null(d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strncmp(e->d_name, "p.", 2) == 0;
    closedir(d);
    return n;
}

/* A relative PROF_OUTPUT is taken from the directory the profiled program started in, for
 * its fork children and for programs exec'd after a chdir: every profile of the tree lands
 * in one folder, and none fails to be created (which would say so on the program's
 * stderr). */
Test(e2e_fork, a_relative_output_path_holds_for_the_whole_tree)
{
    cr_assert_eq(mkdir(e2e_path("out"), 0755), 0);
    cr_assert_eq(mkdir(e2e_path("sub"), 0755), 0);
    struct e2e_proc p;
    struct e2e_opts o = {.preload = 1,
                         .env = E2E_ARGV("PROF_OUTPUT=out/p.%p.prof", "PROF_FREQ=1000")};
    e2e_run(&p, &o,
            E2E_ARGV("/bin/sh", "-c",
                     "spin() { i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; }; spin; "
                     "cd sub && (spin) && exec /bin/sh -c 'i=0; while [ $i -lt 100000 ]; do "
                     "i=$((i+1)); done'"));
    cr_assert_eq(p.status, 0, "%s", p.err);
    cr_expect_eq(p.err_len, 0, "the library printed: %s", p.err);
    e2e_proc_free(&p);
    size_t n = profiles_in_out();
    /* The shell's, its subshell's, and the exec'd program's (which takes the shell's file
     * when the shell had no samples yet). */
    cr_expect_geq(n, 2, "%zu profiles in out/", n);
    cr_expect_eq(access(e2e_path("sub/out"), F_OK), -1, "a profile folder in sub/");
}

/* The same for children that libc's own code execs (posix_spawn(), posix_spawnp(),
 * system(), popen()) after the program moved to another directory, as `make -C dir` runs
 * its shells: each of them said on the program's stderr that it could not create
 * sub/out/p.PID.prof, and went unprofiled. */
Test(e2e_fork, a_relative_output_path_holds_for_spawned_children)
{
    cr_assert_eq(mkdir(e2e_path("out"), 0755), 0);
    cr_assert_eq(mkdir(e2e_path("sub"), 0755), 0);
    struct e2e_proc p;
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV("PROF_OUTPUT=out/p.%p.prof")};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("spawner"), "sub"));
    cr_assert_eq(p.status, 0, "%s%s", p.out, p.err);
    cr_expect_eq(p.err_len, 0, "the library printed: %s", p.err);
    e2e_proc_free(&p);
    size_t n = profiles_in_out();
    /* The spawner's, its four children's, and the shells of system() and popen() (which
     * may exec the program in their own process, taking its file). */
    cr_expect_geq(n, 5, "%zu profiles in out/", n);
    cr_expect_eq(access(e2e_path("sub/out"), F_OK), -1, "a profile folder in sub/");
}

/* A fork child takes its parent's choice of timer source without trying the sources again,
 * and its profile says what the parent's says about that choice. */
Test(e2e_fork, a_fork_child_inherits_the_timer_choice_and_its_notes)
{
    struct e2e_proc p;
    run_lib(&p, "notes.prof", E2E_ARGV("PROF_FREQ=5000", "PROF_TIMER=thread"), 30,
            E2E_ARGV(E2E_WORKLOAD("execfamily"), "0.3"));
    cr_assert_eq(p.status, 0, "execfamily exited %d: %s%s", p.status, p.out, p.err);
    e2e_proc_free(&p);
    const char *in_fork = NULL;
    cr_assert_eq(with_function("notes.prof", "fork_work", &in_fork), 1);
    const char *profiles[2] = {e2e_path("notes.prof"), in_fork};
    for (int i = 0; i < 2; i++) {
        e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", profiles[i]));
        cr_expect_eq(p.status, 0, "%s", p.err);
        cr_expect(strstr(p.err, "PROF_FREQ=5000 is above what CPU-time timers deliver") != NULL,
                  "%s has no note of its timer: %s", profiles[i], p.err);
        e2e_proc_free(&p);
    }
}

/* The summed weight of folded stacks (each line: frames, a space, its weight). */
static unsigned long folded_weight(const char *text)
{
    unsigned long sum = 0;
    for (const char *line = text; *line != '\0';) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *sp = memrchr(line, ' ', len);
        if (sp != NULL)
            sum += strtoul(sp + 1, NULL, 10);
        line += len + (end != NULL);
    }
    return sum;
}

/* A fork child of a wall-clock profile opens context-switch events of its own (a child
 * process carries no copy of its parent's): the time its thread waits in read() is in its
 * own profile, off CPU, with its state. */
Test(e2e_fork, a_fork_child_of_a_wall_profile_measures_its_own_waits)
{
    struct e2e_proc p;
    run_lib(&p, "fw.%p.prof", E2E_ARGV("PROF_MODE=wall"), 30,
            E2E_ARGV(E2E_WORKLOAD("forkwait"), "0.4"));
    cr_assert_eq(p.status, 0, "forkwait exited %d: %s%s", p.status, p.out, p.err);
    int parent = 0, child = 0;
    cr_assert_eq(sscanf(p.out, "parent %d child %d", &parent, &child), 2, "%s", p.out);
    e2e_proc_free(&p);
    char name[64];
    snprintf(name, sizeof(name), "fw.%d.prof", child);
    e2e_run(&p, NULL,
            E2E_ARGV(E2E_PROF, "report", "--state", "off-cpu", "-f", "folded", e2e_path(name)));
    if (strstr(p.err, "gives no context-switch records") != NULL)
        cr_skip_test("no context-switch records here (perf_event_open refused)");
    cr_assert_eq(p.status, 0, "prof report %s: %s", name, p.err);
    cr_log_info("%s%s", p.err, p.out);
    /* Periods of 1/250 s: the wait lasted 0.4 s, at least half of it counts. */
    unsigned long weight = folded_weight(p.out);
    cr_expect_geq(weight, 50, "the child's time off CPU weighs %lu periods:\n%s", weight, p.out);
    cr_expect(strstr(p.out, "[sleep: read]") != NULL, "no wait in read:\n%s", p.out);
    e2e_proc_free(&p);
}

/* glibc's vfork() keeps its return address in %rdi from its first instruction to its ret
 * (its unwind information says so): the samples there, its kernel time as the parent and
 * the moments after, reach main (before, about one in ten stopped there: `rule`). */
Test(e2e_fork, samples_in_vfork_reach_main)
{
    struct e2e_proc p;
    run_lib(&p, "vfork.prof", E2E_ARGV("PROF_FREQ=4000"), 60,
            E2E_ARGV(E2E_WORKLOAD("spawner"), "--vfork", "3000"));
    cr_assert_eq(p.status, 0, "spawner exited %d: %s%s", p.status, p.out, p.err);
    e2e_proc_free(&p);
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("vfork.prof"));
    long in_vfork = e2e_folded_ending(&f, "vfork");
    long whole = e2e_folded_exactly(&f, "main;vfork_loop;one_vfork;vfork");
    cr_log_info("%ld samples in vfork, %ld reaching main", in_vfork, whole);
    cr_expect_gt(in_vfork, 50, "%ld samples in vfork", in_vfork);
    cr_expect_geq(whole, in_vfork - 1, "%ld of %ld stacks in vfork reach main", whole, in_vfork);
    e2e_folded_free(&f);
}
