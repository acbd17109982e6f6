/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of libprof inside privileged programs and among hostile neighbours
 * (docs/SECURITY.md): a daemon that closes its descriptors, reopens its own onto our old
 * numbers and drops root keeps its file and its profile, with no thread restarted; a
 * set-user-ID program takes nothing from the environment of the user who started it, only
 * the system configuration file; a link, or a file that is not a profile, at the output
 * path is never written through; a writer thread that cannot finish at the end still
 * leaves a file that ends with its counters and says what it lost. Most need root (CI runs
 * as root): they skip, saying so, without it.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "include/libprof/prof_format.h"
#include "tests/e2e/support.h"

TestSuite(e2e_secure, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

static void need_root(void)
{
    if (geteuid() != 0)
        cr_skip_test("needs root (set-user-ID programs, other users' files)");
}

/* A root daemon, under a small descriptor limit (so that libprof's descriptors take the
 * lowest numbers), closes every descriptor from 3 up, opens its own file (it gets the
 * profile's old number) and drops to nobody. The profile is reopened and given to nobody
 * before the drop; the daemon's file keeps its owner; the writer thread is the same
 * thread before and after; nothing is said on the program's stderr. Before: the daemon's
 * file was given away, and "cannot reopen ...: Permission denied; profile output stopped"
 * on its stderr, the profile ending at 808 bytes. */
Test(e2e_secure, a_daemon_that_takes_our_descriptor_and_drops_root_keeps_its_file)
{
    need_root();
    cr_assert_eq(chmod(e2e_path(""), 0755), 0);
    char script[1024];
    snprintf(script, sizeof(script), "ulimit -n 128; exec %s fdreuse %s",
             E2E_WORKLOAD("privdrop"), e2e_path("app.data"));
    struct e2e_proc p;
    e2e_run_profiled(&p, "daemon.prof", E2E_ARGV("PROF_FREQ=1000"), 30,
                     E2E_ARGV("/bin/sh", "-c", script));
    cr_assert_eq(p.status, 0, "privdrop fdreuse exited %d: %s%s", p.status, p.out, p.err);
    cr_expect_eq(p.err_len, 0, "the program's stderr: %s", p.err);
    cr_expect(strstr(p.out, "file uid 0\n") != NULL, "the daemon's own file changed hands: %s",
              p.out);
    long before = 0, after = 0;
    const char *w = strstr(p.out, "writer ");
    cr_assert_not_null(w, "%s", p.out);
    cr_assert_eq(sscanf(w, "writer %ld %ld", &before, &after), 2);
    cr_expect(before != 0 && before == after,
              "the writer thread was replaced (%ld, then %ld): a set*id call restarts no thread",
              before, after);
    e2e_proc_free(&p);
    struct stat st;
    cr_assert_eq(stat(e2e_path("daemon.prof"), &st), 0);
    cr_expect_eq(st.st_uid, 65534, "the profile belongs to the new user");
    cr_expect_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path("daemon.prof"));
    cr_expect(s.has_end && s.has_stats, "the profile is not whole");
    /* By weight: under the ring source a thread that can no longer open its ring counter
     * as the new user stays on its CPU-time timer, whose samples weigh the ticks between. */
    cr_expect_gt(s.weight_sum, 150u, "periods sampled after the drop: %llu",
                 (unsigned long long)s.weight_sum);
}

/* The workload `shares`, linked with a copy of the library (as a program built with
 * pkg-config's flags is), made set-user-ID root, in a folder anyone may read. Returns its
 * path. */
static const char *build_setuid_copy(void)
{
    cr_assert_eq(chmod(e2e_path(""), 0755), 0);
    char lib_dir[512];
    snprintf(lib_dir, sizeof(lib_dir), "%s", e2e_path("lib"));
    cr_assert_eq(mkdir(lib_dir, 0755), 0);
    char script[4096];
    snprintf(script, sizeof(script),
             "set -e; cp %s/libprof.so %s/libprof.so.0; "
             "cc -O2 -fno-omit-frame-pointer -o %s %s/tests/workloads/shares.c -L%s "
             "-l:libprof.so.0 -Wl,-rpath,%s -lpthread -lm; chmod 4755 %s",
             BUILD_DIR, lib_dir, e2e_path("suid"), SRC_DIR, lib_dir, lib_dir, e2e_path("suid"));
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV("/bin/sh", "-c", script));
    cr_assert_eq(p.status, 0, "building the set-user-ID copy: %s", p.err);
    e2e_proc_free(&p);
    return e2e_path("suid");
}

/* Runs the set-user-ID copy as nobody, with settings of the user's in its environment. */
static void run_as_nobody(struct e2e_proc *p, const char *exe)
{
    char out[512], log[512];
    snprintf(out, sizeof(out), "PROF_OUTPUT=%s", e2e_path("env.prof"));
    snprintf(log, sizeof(log), "PROF_LOG=%s", e2e_path("user.log"));
    e2e_run(p, NULL,
            E2E_ARGV("/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                     "/usr/bin/env", out, log, "PROF_FREQ=1000", exe, "0.3"));
}

/* The system configuration file is the one way to profile a privileged program; the
 * test writes it only where there is none, and takes it away after. */
#define SYSCONF "/etc/libprof.conf"

static void write_sysconf(const char *text)
{
    int fd = open(SYSCONF, O_WRONLY | O_CREAT | O_EXCL, 0644);
    cr_assert_geq(fd, 0, SYSCONF ": %s", strerror(errno));
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

/* A set-user-ID root program run by nobody (secure execution, AT_SECURE): libprof takes
 * no path, signal or setting from the environment of the user who started it (PROF_LOG
 * once appended the user's text to any root-owned file); without a system configuration
 * file it profiles nothing; with one it writes where that file says, 0600, given to the
 * real user when the file asks for it; a relative path there is refused. */
Test(e2e_secure, a_set_user_id_program_takes_nothing_from_the_environment)
{
    need_root();
    if (access("/usr/bin/setpriv", X_OK) != 0 || access("/usr/bin/cc", X_OK) != 0)
        cr_skip_test("setpriv or cc is missing");
    if (access(SYSCONF, F_OK) == 0)
        cr_skip_test(SYSCONF " exists: this machine's own, left alone");
    const char *exe = build_setuid_copy();
    struct e2e_proc p;
    run_as_nobody(&p, exe);
    cr_expect_eq(p.status, 0, "the set-user-ID program exited %d: %s", p.status, p.err);
    cr_expect_eq(p.err_len, 0, "its stderr: %s", p.err);
    e2e_proc_free(&p);
    cr_expect_neq(access(e2e_path("env.prof"), F_OK), 0, "PROF_OUTPUT was taken");
    cr_expect_neq(access(e2e_path("user.log"), F_OK), 0, "PROF_LOG was taken");
    const char *paths[4];
    cr_expect_eq(e2e_find_files("", ".prof", paths, 4), 0, "a profile without a file");

    char conf[1024];
    snprintf(conf, sizeof(conf), "# profiles of privileged programs\nPROF_OUTPUT=%s\n"
             "PROF_OWNER=real\n", e2e_path("conf.%p.prof"));
    write_sysconf(conf);
    run_as_nobody(&p, exe);
    unlink(SYSCONF);
    cr_expect_eq(p.status, 0, "the set-user-ID program exited %d: %s", p.status, p.err);
    cr_expect_eq(p.err_len, 0, "its stderr: %s", p.err);
    e2e_proc_free(&p);
    cr_expect_neq(access(e2e_path("env.prof"), F_OK), 0, "PROF_OUTPUT was taken");
    cr_expect_neq(access(e2e_path("user.log"), F_OK), 0, "PROF_LOG was taken");
    size_t n = e2e_find_files("conf.", ".prof", paths, 4);
    cr_assert_eq(n, 1, "the configuration's profile: %zu files", n);
    struct stat st;
    cr_assert_eq(stat(paths[0], &st), 0);
    cr_expect_eq(st.st_uid, 65534, "given to the real user");
    cr_expect_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
    struct e2e_scan s;
    e2e_scan_file(&s, paths[0]);
    cr_expect(s.has_end && s.n_samples > 20, "the profile: %zu samples", s.n_samples);

    /* A relative path in the file would be taken from a directory the invoking user
     * chose: refused, with one line. (One test: the file is the machine's.) */
    write_sysconf("PROF_OUTPUT=relative.%p.prof\n");
    run_as_nobody(&p, exe);
    unlink(SYSCONF);
    cr_expect_eq(p.status, 0, "exited %d: %s", p.status, p.err);
    size_t n_lib = 0;
    e2e_count_lines(p.err, "libprof: ", &n_lib);
    cr_expect_eq(n_lib, 1, "one line: %s", p.err);
    cr_expect(strstr(p.err, "must be absolute") != NULL, "%s", p.err);
    e2e_proc_free(&p);
}

/* A link planted at the output path (to the user's notes, or to a file of root's) is not
 * followed, and a file that is not a profile is not overwritten: one line, the program
 * runs on, the file is untouched. Before: `ln -s notes app.prof` and a run overwrote
 * notes with a profile. */
Test(e2e_secure, a_link_or_another_file_at_the_output_path_is_never_written)
{
    e2e_write_file(e2e_path("notes"), "my notes\n", 9);
    cr_assert_eq(symlink(e2e_path("notes"), e2e_path("app.prof")), 0);
    e2e_write_file(e2e_path("other.prof"), "not a profile\n", 14);
    const char *cases[] = {"app.prof", "other.prof"};
    for (size_t i = 0; i < 2; i++) {
        struct e2e_proc p;
        e2e_run_profiled(&p, cases[i], NULL, 20, E2E_ARGV("/bin/true"));
        cr_expect_eq(p.status, 0, "%s: /bin/true exited %d", cases[i], p.status);
        size_t n_lib = 0;
        e2e_count_lines(p.err, "libprof: ", &n_lib);
        cr_expect_eq(n_lib, 1, "%s: one line on stderr: %s", cases[i], p.err);
        e2e_proc_free(&p);
    }
    size_t len = 0;
    char *notes = e2e_read_file(e2e_path("notes"), &len);
    cr_expect(notes && len == 9 && memcmp(notes, "my notes\n", 9) == 0, "notes were overwritten");
    free(notes);
    char *other = e2e_read_file(e2e_path("other.prof"), &len);
    cr_expect(other && len == 14, "the other file was overwritten");
    free(other);
}

/* The writer thread stopped (a debugger on it, or a lock it waits for held by the thread
 * that exits) when the program leaves by _exit(): the file still ends with the counters
 * and the end record, written by the exiting thread, and says how many samples never
 * reached it. Before: no counters and no end, the losses unsaid. */
Test(e2e_secure, a_writer_stuck_at_the_end_still_ends_the_file_with_its_losses)
{
    struct e2e_proc p;
    /* The signal-driven source: every sample it takes is counted as taken (the ring
     * source's samples still in the kernel's rings at such an end are not: see
     * docs/ARCHITECTURE.md). */
    e2e_run_profiled(&p, "stuck.prof",
                     E2E_ARGV("PROF_FREQ=1000", "PROF_FOLLOW=0", "PROF_TIMER=perf"), 30,
                     E2E_ARGV(E2E_WORKLOAD("stuckwriter"), "0.3"));
    if (p.status == 77) {
        e2e_proc_free(&p);
        cr_skip_test("ptrace is refused here");
    }
    cr_assert_eq(p.status, 0, "stuckwriter exited %d: %s%s", p.status, p.out, p.err);
    cr_assert(strstr(p.out, "stuckwriter stopped ") != NULL, "%s", p.out);
    e2e_proc_free(&p);
    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path("stuck.prof"));
    cr_expect(s.has_stats && s.has_end, "the file does not end with its counters");
    cr_expect_gt(s.stats[PROF_STAT_UNWRITTEN], 100u, "unwritten: %llu",
                 (unsigned long long)s.stats[PROF_STAT_UNWRITTEN]);
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "-f", "top", e2e_path("stuck.prof")));
    cr_expect(strstr(p.err, "never reached the file") != NULL, "prof report: %s", p.err);
    e2e_proc_free(&p);
}
