/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of `prof stacks` on the parked workload (tests/workloads/parked.c),
 * whose threads wait in known functions: two in park_in_futex, one spinning in
 * park_spinning, one in park_inner under park_middle and park_outer, the main thread in
 * wait_for_eof, and with --block-snapshot a "blocker" that blocks libprof's snapshot
 * signal. The workload runs in the background while prof looks at it, and must come out
 * unharmed: when its standard input closes it exits 0 and prints "done eintr=0", so no
 * blocking call saw EINTR.
 *
 * Suite e2e_stacks takes the stacks with ptrace (the workload runs without libprof);
 * suite stacks_libprof runs it under libprof, which answers the snapshot signal itself.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "include/libprof/prof_format.h"
#include "tests/e2e/support.h"

#define READY_TIMEOUT_MS 10000
#define SNAP_TIMEOUT "3" /* --timeout of the libprof tests: the answer takes milliseconds */

TestSuite(e2e_stacks, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);
TestSuite(stacks_libprof, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

extern char **environ;

/* The workload running in the background. */
struct parked {
    pid_t pid;
    int in_fd;         /* its standard input: closing it ends the workload */
    int out_fd;        /* its standard output */
    char ready[512];   /* the ready line: "ready pid=... main=... futex-a=..." */
    char pid_text[16]; /* pid in decimal, prof's argument */
};

/* The kernel's state letter of thread tid of pid. */
static char task_state(pid_t pid, long tid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task/%ld/stat", (int)pid, tid);
    char *text = e2e_read_file(path, NULL);
    cr_assert_not_null(text, "%s: %s", path, strerror(errno));
    const char *paren = strrchr(text, ')');
    char state = paren != NULL && paren[1] == ' ' ? paren[2] : '?';
    free(text);
    return state;
}

/* Starts argv[0] (a workload that prints a "ready ..." line, then blocks reading its
 * input until it closes), with libprof preloaded when preload and the extra environment
 * entries env (NULL-terminated, may be NULL); waits for its ready line and until its main
 * thread sleeps. */
static void workload_start(struct parked *pk, const char *const *argv, int preload,
                           const char *const *env)
{
    int in[2], out[2];
    cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
    cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
    const char *envp[1024];
    size_t n = 0;
    for (char **e = environ; *e != NULL && n < 1000; e++)
        if (strncmp(*e, "LD_PRELOAD=", 11) != 0 && strncmp(*e, "PROF_", 5) != 0)
            envp[n++] = *e;
    if (preload)
        envp[n++] = "LD_PRELOAD=" E2E_LIB;
    envp[n++] = e2e_env("PROF_OUTPUT", e2e_path("parked.prof"));
    for (; env != NULL && *env != NULL && n < 1020; env++)
        envp[n++] = *env;
    envp[n] = NULL;
    const char *err_path = e2e_path("program.err");
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        /* Killed with the test, even when stopped, so that a failed test leaves nothing. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int err_fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (chdir(e2e_dir()) != 0 || dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 ||
            dup2(err_fd, 2) < 0)
            _exit(126);
        execve(argv[0], (char *const *)argv, (char *const *)envp);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    pk->pid = pid;
    snprintf(pk->pid_text, sizeof(pk->pid_text), "%d", (int)pid);
    pk->in_fd = in[1];
    pk->out_fd = out[0];
    size_t got = 0;
    struct pollfd pfd = {.fd = pk->out_fd, .events = POLLIN};
    while (got + 1 < sizeof(pk->ready) && memchr(pk->ready, '\n', got) == NULL) {
        cr_assert_eq(poll(&pfd, 1, READY_TIMEOUT_MS), 1, "%s did not get ready", argv[0]);
        ssize_t r = read(pk->out_fd, pk->ready + got, sizeof(pk->ready) - 1 - got);
        cr_assert_gt(r, 0, "%s exited before it was ready", argv[0]);
        got += (size_t)r;
    }
    pk->ready[got] = '\0';
    cr_assert(strncmp(pk->ready, "ready", 5) == 0, "%s said: %s", argv[0], pk->ready);
    /* Its main thread wrote the line just before it blocks reading its input. */
    for (int i = 0; i < READY_TIMEOUT_MS && task_state(pid, pid) != 'S'; i++)
        usleep(1000);
}

/* Starts the parked workload with argument arg (may be NULL); see workload_start(). */
static void parked_start(struct parked *pk, int preload, const char *const *env, const char *arg)
{
    workload_start(pk, E2E_ARGV(E2E_WORKLOAD("parked"), arg), preload, env);
}

/* The tid the ready line gives for key ("futex-a", "main"). */
static long parked_tid(const struct parked *pk, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof(pat), " %s=", key);
    const char *at = strstr(pk->ready, pat);
    cr_assert_not_null(at, "no %s in: %s", key, pk->ready);
    return atol(at + strlen(pat));
}

/* Closes the workload's input and checks that it exits 0 with "done eintr=0". */
static void parked_finish(struct parked *pk)
{
    close(pk->in_fd);
    char rest[256] = "";
    size_t got = 0;
    struct pollfd pfd = {.fd = pk->out_fd, .events = POLLIN};
    while (got + 1 < sizeof(rest) && poll(&pfd, 1, READY_TIMEOUT_MS) == 1) {
        ssize_t r = read(pk->out_fd, rest + got, sizeof(rest) - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    rest[got] = '\0';
    close(pk->out_fd);
    int status = 0;
    for (int i = 0; i < 1000 && waitpid(pk->pid, &status, WNOHANG) == 0; i++)
        usleep(10000);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "parked ended with status 0x%x",
              status);
    cr_expect_str_eq(rest, "done eintr=0\n", "parked was harmed");
}

/* Runs prof with the arguments given (NULL-terminated). */
static void run_prof(struct e2e_proc *p, const char *const *args)
{
    const char *argv[32] = {E2E_PROF};
    size_t n = 1;
    while (args[n - 1] != NULL && n < 31) {
        argv[n] = args[n - 1];
        n++;
    }
    argv[n] = NULL;
    e2e_run(p, NULL, argv);
}

/* The line of the text output that lists thread "TID name", or NULL. */
static const char *group_line(const char *text, const struct parked *pk, const char *name)
{
    char want[64];
    snprintf(want, sizeof(want), "%ld %s",
             parked_tid(pk, strcmp(name, "parked") == 0 ? "main" : name), name);
    size_t lw = strlen(want);
    const char *line = text;
    while (*line != '\0') {
        size_t len = strcspn(line, "\n");
        /* A group's line: "K thread(s): TID name, TID name  [state]". */
        bool is_group = line[0] >= '1' && line[0] <= '9' && memchr(line, ':', len) != NULL;
        for (const char *at = strstr(line, want); is_group && at != NULL && at < line + len;
             at = strstr(at + 1, want))
            if (at > line && at[-1] == ' ' && (at[lw] == ',' || at[lw] == ' '))
                return line;
        line += len + (line[len] == '\n');
    }
    return NULL;
}

/* Checks that the group of thread name shows frames want[0] (the leaf), want[1], ... as
 * its first frames, each with its file and line. */
static void expect_frames(const char *text, const struct parked *pk, const char *name,
                          const char *const *want)
{
    const char *line = group_line(text, pk, name);
    cr_assert_not_null(line, "no group lists thread %s:\n%s", name, text);
    line += strcspn(line, "\n") + 1;
    for (size_t i = 0; want[i] != NULL; i++) {
        char prefix[32], expect[96];
        snprintf(prefix, sizeof(prefix), "  #%-2zu 0x", i);
        snprintf(expect, sizeof(expect), " %s (parked.c:", want[i]);
        size_t len = strcspn(line, "\n");
        cr_assert(strncmp(line, prefix, strlen(prefix)) == 0, "thread %s: no frame #%zu in:\n%s",
                  name, i, text);
        const char *sp = memchr(line + strlen(prefix), ' ', len - strlen(prefix));
        cr_expect(sp != NULL && strncmp(sp, expect, strlen(expect)) == 0,
                  "thread %s: frame #%zu is not %s: %.*s", name, i, want[i], (int)len, line);
        line += len + 1;
    }
}

/* The checks every way of taking the stacks must pass on the parked workload. Under
 * libprof, a thread that runs (the spinner) is now and then caught inside libprof's own
 * profiling signal handler (about once in 200 snapshots, more on a busy machine), even in
 * the libc calls it makes, which keep no frame pointer: then its stack is the handler's,
 * and the spinner's own frames may not be reached. It must have a stack all the same. */
static void expect_parked_stacks(const char *text, const struct parked *pk, int is_libprof)
{
    expect_frames(text, pk, "futex-a", (const char *const[]){"park_in_futex", "run_parked", NULL});
    expect_frames(text, pk, "futex-b", (const char *const[]){"park_in_futex", "run_parked", NULL});
    if (is_libprof)
        cr_expect_not_null(group_line(text, pk, "spinner"), "the spinner has no stack:\n%s", text);
    else
        expect_frames(text, pk, "spinner",
                      (const char *const[]){"park_spinning", "run_parked", NULL});
    expect_frames(
        text, pk, "deep",
        (const char *const[]){"park_inner", "park_middle", "park_outer", "run_parked", NULL});
    expect_frames(text, pk, "parked", (const char *const[]){"wait_for_eof", "main", NULL});
    cr_expect_eq(group_line(text, pk, "futex-a"), group_line(text, pk, "futex-b"),
                 "the two futex threads are not one group:\n%s", text);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

Test(e2e_stacks, ptrace_shows_every_thread_in_its_function)
{
    struct parked pk;
    parked_start(&pk, 0, NULL, NULL);
    struct e2e_proc p;
    double t0 = now_s();
    run_prof(&p, (const char *const[]){"stacks", pk.pid_text, NULL});
    cr_log_info("prof stacks took %.0f ms", (now_s() - t0) * 1000);
    cr_assert_eq(p.status, 0, "prof stacks exited %d:\n%s", p.status, p.err);
    cr_expect_str_empty(p.err, "prof stacks said: %s", p.err);
    char head[128];
    snprintf(head, sizeof(head), "process %d (parked): 5 threads, 4 distinct stacks (ptrace)\n",
             (int)pk.pid);
    cr_expect(strncmp(p.out, head, strlen(head)) == 0, "first line is not %s:\n%s", head, p.out);
    expect_parked_stacks(p.out, &pk, 0);
    cr_expect(strstr(group_line(p.out, &pk, "futex-a"), "[S sleeping]") != NULL);
    cr_expect_null(strstr(p.out, "without a stack"), "%s", p.out);
    e2e_proc_free(&p);
    parked_finish(&pk);
}

Test(e2e_stacks, a_stopped_process_stays_stopped)
{
    struct parked pk;
    parked_start(&pk, 0, NULL, NULL);
    const char *const keys[] = {"main", "futex-a", "futex-b", "spinner", "deep"};
    kill(pk.pid, SIGSTOP);
    for (int i = 0; i < 1000 && task_state(pk.pid, parked_tid(&pk, "spinner")) != 'T'; i++)
        usleep(1000);
    struct e2e_proc p;
    run_prof(&p, (const char *const[]){"stacks", pk.pid_text, NULL});
    cr_assert_eq(p.status, 0, "prof stacks exited %d:\n%s", p.status, p.err);
    expect_parked_stacks(p.out, &pk, 0);
    cr_expect(strstr(group_line(p.out, &pk, "spinner"), "[T stopped]") != NULL, "%s", p.out);
    usleep(50000);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        cr_expect_eq(task_state(pk.pid, parked_tid(&pk, keys[i])), 'T',
                     "thread %s runs again after prof stacks", keys[i]);
    e2e_proc_free(&p);
    kill(pk.pid, SIGCONT);
    parked_finish(&pk);
}

Test(e2e_stacks, folded_counts_the_threads_of_each_stack)
{
    struct parked pk;
    parked_start(&pk, 0, NULL, NULL);
    struct e2e_proc p;
    run_prof(&p, (const char *const[]){"stacks", "--format", "folded", pk.pid_text, NULL});
    cr_assert_eq(p.status, 0, "prof stacks exited %d:\n%s", p.status, p.err);
    struct e2e_folded f;
    e2e_folded_parse(&f, p.out);
    cr_expect_eq(f.total, 5);
    cr_expect_eq(e2e_folded_ending(&f, "run_parked;park_in_futex"), 2, "%s", p.out);
    cr_expect_eq(e2e_folded_ending(&f, "run_parked;park_spinning"), 1, "%s", p.out);
    cr_expect_eq(e2e_folded_ending(&f, "park_outer;park_middle;park_inner"), 1, "%s", p.out);
    cr_expect_eq(e2e_folded_ending(&f, "main;wait_for_eof"), 1, "%s", p.out);
    e2e_folded_free(&f);
    e2e_proc_free(&p);

    run_prof(&p, (const char *const[]){"stacks", "-f", "folded", "--threads", pk.pid_text, NULL});
    cr_assert_eq(p.status, 0, "prof stacks --threads exited %d:\n%s", p.status, p.err);
    char root[64];
    snprintf(root, sizeof(root), "futex-b (%ld)", parked_tid(&pk, "futex-b"));
    e2e_folded_parse(&f, p.out);
    cr_expect_eq(f.total, 5);
    cr_expect_eq(e2e_folded_containing(&f, root), 1, "no stack under %s:\n%s", root, p.out);
    e2e_folded_free(&f);
    e2e_proc_free(&p);
    parked_finish(&pk);
}

Test(e2e_stacks, a_saved_snapshot_prints_the_same)
{
    struct parked pk;
    parked_start(&pk, 0, NULL, NULL);
    const char *saved = e2e_path("parked.snap");
    struct e2e_proc live, again;
    run_prof(&live, (const char *const[]){"stacks", "--save", saved, pk.pid_text, NULL});
    cr_assert_eq(live.status, 0, "prof stacks --save exited %d:\n%s", live.status, live.err);
    parked_finish(&pk);
    run_prof(&again, (const char *const[]){"stacks", saved, NULL});
    cr_assert_eq(again.status, 0, "prof stacks FILE exited %d:\n%s", again.status, again.err);
    /* All but the end of the first line, which says how the snapshot was taken. */
    const char *a = strstr(live.out, "\n"), *b = strstr(again.out, "\n");
    cr_assert(a != NULL && b != NULL);
    cr_expect_str_eq(b, a, "the saved snapshot prints otherwise");
    cr_expect(strstr(again.out, "(from ") != NULL, "%s", again.out);

    struct e2e_scan s;
    e2e_scan_file(&s, saved);
    cr_expect(s.header_ok && s.has_end, "the saved file is not a whole profile");
    cr_expect_eq(s.n_samples, 5);
    cr_expect_eq(s.timer_source, 0);
    cr_expect_eq(s.pid, (uint32_t)pk.pid);
    e2e_proc_free(&live);
    e2e_proc_free(&again);
}

Test(e2e_stacks, no_such_process_is_one_line)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0); /* a pid that was just freed */
    char arg[32], want[64];
    snprintf(arg, sizeof(arg), "%d", (int)pid);
    snprintf(want, sizeof(want), "prof: no process %d\n", (int)pid);
    struct e2e_proc p;
    run_prof(&p, (const char *const[]){"stacks", arg, NULL});
    cr_expect_eq(p.status, 2);
    cr_expect_str_eq(p.err, want);
    cr_expect_str_empty(p.out);
    e2e_proc_free(&p);
}

Test(e2e_stacks, another_users_process_is_refused_in_one_line)
{
    if (access("/usr/bin/setpriv", X_OK) != 0 || geteuid() != 0)
        cr_skip_test("needs root and setpriv (util-linux)");
    struct parked pk;
    parked_start(&pk, 0, NULL, NULL);
    struct e2e_proc p;
    e2e_run(&p, NULL,
            E2E_ARGV("/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                     E2E_PROF, "stacks", pk.pid_text));
    cr_expect_eq(p.status, 2, "exit status %d:\n%s", p.status, p.err);
    size_t n_lines = e2e_count_lines(p.err, "prof: ", NULL);
    cr_expect_eq(n_lines, 1, "not one line:\n%s", p.err);
    cr_expect(strstr(p.err, "another user") != NULL, "the message does not say why: %s", p.err);
    cr_expect_str_empty(p.out);
    e2e_proc_free(&p);
    parked_finish(&pk);
}

Test(e2e_stacks, a_bad_snapshot_file_is_one_line)
{
    const char *prof = e2e_path("not-a-snapshot");
    e2e_write_file(prof, "hello\n", 6);
    struct e2e_proc p;
    run_prof(&p, (const char *const[]){"stacks", prof, NULL});
    cr_expect_eq(p.status, 2);
    cr_expect_eq(e2e_count_lines(p.err, "", NULL), 1, "%s", p.err);
    e2e_proc_free(&p);
}

/* Preloads a copy of libc named libprof.so: prof then takes the workload for one that runs
 * under libprof, which it is not. Returns the LD_PRELOAD entry. */
static const char *fake_libprof(void)
{
    char *maps = e2e_read_file("/proc/self/maps", NULL), *at;
    cr_assert_not_null(maps);
    cr_assert_not_null(at = strstr(maps, "/libc.so.6"), "no libc in our maps");
    char *start = at;
    while (start > maps && start[-1] != ' ')
        start--;
    size_t len = (size_t)(at - start) + strlen("/libc.so.6"), n;
    char libc[512];
    snprintf(libc, sizeof(libc), "%.*s", (int)len, start);
    free(maps);
    char *bytes = e2e_read_file(libc, &n);
    cr_assert_not_null(bytes, "%s: %s", libc, strerror(errno));
    const char *copy = e2e_path("libprof.so");
    e2e_write_file(copy, bytes, n);
    free(bytes);
    return e2e_env("LD_PRELOAD", copy);
}

/* How many answer files of pid are left in /tmp. */
static size_t answer_files_left(pid_t pid)
{
    char pattern[64];
    snprintf(pattern, sizeof(pattern), "prof-stacks.%d.", (int)pid);
    DIR *d = opendir("/tmp");
    cr_assert_not_null(d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strncmp(e->d_name, pattern, strlen(pattern)) == 0;
    closedir(d);
    return n;
}

Test(e2e_stacks, a_process_that_does_not_answer_is_read_with_ptrace)
{
    struct parked pk;
    parked_start(&pk, 0, E2E_ARGV(fake_libprof()), "--ignore-snapshot");
    struct e2e_proc p;
    run_prof(&p, (const char *const[]){"stacks", "--timeout", "0.3", pk.pid_text, NULL});
    cr_assert_eq(p.status, 0, "prof stacks exited %d:\n%s", p.status, p.err);
    char warning[160];
    snprintf(warning, sizeof(warning),
             "prof: warning: process %d did not answer the snapshot signal within 0.3 s; "
             "reading its stacks with ptrace\n",
             (int)pk.pid);
    cr_expect_str_eq(p.err, warning);
    cr_expect(strstr(p.out, " (ptrace)\n") != NULL, "not taken with ptrace:\n%s", p.out);
    expect_parked_stacks(p.out, &pk, 0);
    cr_expect_eq(answer_files_left(pk.pid), 0, "the answer file was left in /tmp");
    e2e_proc_free(&p);
    parked_finish(&pk);
}

Test(e2e_stacks, a_libprof_without_a_handler_is_not_sent_the_signal)
{
    /* The signal's default action would kill the process. */
    struct parked pk;
    parked_start(&pk, 0, E2E_ARGV(fake_libprof()), NULL);
    struct e2e_proc p;
    run_prof(&p, (const char *const[]){"stacks", pk.pid_text, NULL});
    cr_assert_eq(p.status, 0, "prof stacks exited %d:\n%s", p.status, p.err);
    cr_expect(strstr(p.err, "has no handler for signal") != NULL, "%s", p.err);
    cr_expect_eq(e2e_count_lines(p.err, "", NULL), 1, "%s", p.err);
    expect_parked_stacks(p.out, &pk, 0);
    e2e_proc_free(&p);
    parked_finish(&pk);
}

/* Under libprof: the library answers the snapshot signal from inside. */
Test(stacks_libprof, every_thread_answers_in_its_function)
{
    struct parked pk;
    parked_start(&pk, 1, NULL, "--block-snapshot");
    struct e2e_proc p;
    double t0 = now_s();
    run_prof(&p, (const char *const[]){"stacks", "--timeout", SNAP_TIMEOUT, pk.pid_text, NULL});
    cr_log_info("prof stacks took %.0f ms", (now_s() - t0) * 1000);
    cr_assert_eq(p.status, 0, "prof stacks exited %d:\n%s", p.status, p.err);
    cr_expect_str_empty(p.err, "prof stacks said: %s", p.err);
    char head[128];
    snprintf(head, sizeof(head), "process %d (parked): ", (int)pk.pid);
    cr_expect(strncmp(p.out, head, strlen(head)) == 0, "first line is not %s...:\n%s", head, p.out);
    cr_expect(strstr(p.out, " (libprof snapshot)\n") != NULL, "not a libprof snapshot:\n%s", p.out);
    expect_parked_stacks(p.out, &pk, 1);
    /* The thread that blocks the signal is listed as not answering. */
    char blocker[96];
    snprintf(blocker, sizeof(blocker), "\n  %ld blocker  [S sleeping]  did not answer",
             parked_tid(&pk, "blocker"));
    cr_expect(strstr(p.out, blocker) != NULL, "blocker is not listed as not answering:\n%s", p.out);
    e2e_proc_free(&p);
    parked_finish(&pk);
}

Test(stacks_libprof, a_snapshot_signal_from_the_environment_is_used)
{
    struct parked pk;
    parked_start(&pk, 1, E2E_ARGV("PROF_SNAPSHOT_SIGNAL=USR2"), NULL);
    struct e2e_proc p;
    run_prof(&p, (const char *const[]){"stacks", "--timeout", SNAP_TIMEOUT, pk.pid_text, NULL});
    cr_assert_eq(p.status, 0, "prof stacks exited %d:\n%s", p.status, p.err);
    cr_expect_str_empty(p.err, "prof stacks said: %s", p.err);
    cr_expect(strstr(p.out, " (libprof snapshot)\n") != NULL, "not a libprof snapshot:\n%s", p.out);
    expect_parked_stacks(p.out, &pk, 1);
    e2e_proc_free(&p);
    parked_finish(&pk);
}

Test(stacks_libprof, snapshots_off_means_ptrace_without_a_signal)
{
    struct parked pk;
    parked_start(&pk, 1, E2E_ARGV("PROF_SNAPSHOT_SIGNAL=off"), NULL);
    struct e2e_proc p;
    run_prof(&p, (const char *const[]){"stacks", pk.pid_text, NULL});
    cr_assert_eq(p.status, 0, "prof stacks exited %d:\n%s", p.status, p.err);
    cr_expect_str_empty(p.err, "prof stacks said: %s", p.err);
    cr_expect(strstr(p.out, " (ptrace)\n") != NULL, "not taken with ptrace:\n%s", p.out);
    expect_parked_stacks(p.out, &pk, 1);
    e2e_proc_free(&p);
    parked_finish(&pk);
}

Test(stacks_libprof, ptrace_on_request_under_libprof)
{
    struct parked pk;
    parked_start(&pk, 1, NULL, "--block-snapshot");
    struct e2e_proc p;
    run_prof(&p, (const char *const[]){"stacks", "--ptrace", pk.pid_text, NULL});
    cr_assert_eq(p.status, 0, "prof stacks exited %d:\n%s", p.status, p.err);
    cr_expect(strstr(p.out, " (ptrace)\n") != NULL, "not taken with ptrace:\n%s", p.out);
    expect_parked_stacks(p.out, &pk, 1);
    e2e_proc_free(&p);
    parked_finish(&pk);
}

/* Starts another workload that behaves as parked does (see workload_start()), without
 * libprof. */
static void program_start(struct parked *pk, const char *const *argv)
{
    workload_start(pk, argv, 0, NULL);
}

/* Runs `prof stacks ARGS... PID` (args NULL-terminated, at most 8), asserts exit 0 and
 * nothing on stderr, and logs how long it took. */
static void run_stacks(struct e2e_proc *p, const struct parked *pk, const char *const *args)
{
    const char *argv[12] = {"stacks"};
    char shown[256] = "";
    size_t n = 1, len = 0;
    for (; *args != NULL && n < 10; args++) {
        argv[n++] = *args;
        if (len < sizeof(shown))
            len += (size_t)snprintf(shown + len, sizeof(shown) - len, "%s ", *args);
    }
    argv[n++] = pk->pid_text;
    argv[n] = NULL;
    double t0 = now_s();
    run_prof(p, argv);
    cr_log_info("prof stacks %sPID took %.1f ms", shown, (now_s() - t0) * 1000);
    cr_assert_eq(p->status, 0, "prof stacks exited %d:\n%s", p->status, p->err);
    cr_expect_str_empty(p->err, "prof stacks said: %s", p->err);
}

/* The nofp_parked workload (tests/workloads/nofp_parked.c) is built without frame
 * pointers: its thread "deep" waits in nofp_c under nofp_b, nofp_a and its start routine
 * run_deep, its main thread in nofp_wait_for_eof under main. The unwind tables prof builds
 * from the program's and libc's .eh_frame follow them to the threads' first frames
 * (clone3, _start), as libunwind does. */
Test(e2e_stacks, the_unwind_tables_follow_code_without_frame_pointers)
{
    struct parked pk;
    program_start(&pk, E2E_ARGV(E2E_WORKLOAD("nofp_parked")));
    const char *chain = "start_thread;run_deep;nofp_a;nofp_b;nofp_c";
    struct e2e_proc p;
    struct e2e_folded f;

    /* Frame pointers alone lose both stacks beyond their first frames. */
    run_stacks(&p, &pk, E2E_ARGV("--unwind", "fp", "-f", "folded"));
    e2e_folded_parse(&f, p.out);
    cr_expect_eq(f.total, 2, "%s", p.out);
    cr_expect_eq(e2e_folded_ending(&f, "nofp_a;nofp_b;nofp_c"), 0, "fp followed:\n%s", p.out);
    cr_expect_eq(e2e_folded_containing(&f, "main"), 0, "fp followed:\n%s", p.out);
    e2e_folded_free(&f);
    e2e_proc_free(&p);

    /* auto (the default), dwarf and libunwind: whole stacks, down to the thread's start
     * and to the C library's start of main, the same in every mode. */
    const char *const *modes[] = {E2E_ARGV("--unwind", "libunwind", "-f", "folded"),
                                  E2E_ARGV("-f", "folded"),
                                  E2E_ARGV("--unwind", "auto", "-f", "folded"),
                                  E2E_ARGV("--unwind", "dwarf", "-f", "folded")};
    char *oracle = NULL;
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        run_stacks(&p, &pk, modes[i]);
        e2e_folded_parse(&f, p.out);
        cr_expect_eq(f.total, 2, "%s", p.out);
        cr_expect_eq(e2e_folded_ending(&f, chain), 1, "no %s in:\n%s", chain, p.out);
        cr_expect_eq(e2e_folded_ending(&f, "main;nofp_wait_for_eof"), 1, "%s", p.out);
        cr_expect_eq(e2e_folded_exactly(&f, "_start;__libc_start_main;__libc_start_call_main;"
                                            "main;nofp_wait_for_eof"),
                     1, "%s", p.out);
        cr_expect_eq(e2e_folded_containing(&f, "clone3"), 1, "%s", p.out);
        if (i == 0)
            oracle = strdup(p.out);
        else
            cr_expect_str_eq(p.out, oracle, "not libunwind's stacks");
        e2e_folded_free(&f);
        e2e_proc_free(&p);
    }
    free(oracle);

    /* The text names the frames in order, and neither stack is cut short. */
    run_stacks(&p, &pk, E2E_ARGV(NULL));
    const char *line = group_line(p.out, &pk, "deep");
    cr_assert_not_null(line, "no group lists thread deep:\n%s", p.out);
    const char *want[] = {"#0", "nofp_c (nofp_parked.c:", "#1", "nofp_b (nofp_parked.c:",
                          "#2", "nofp_a (nofp_parked.c:", "#3", "run_deep (nofp_parked.c:"};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        cr_expect(line != NULL && (line = strstr(line, want[i])) != NULL,
                  "thread deep: no %s in order:\n%s", want[i], p.out);
    cr_expect_null(strstr(p.out, "truncated"), "%s", p.out);
    e2e_proc_free(&p);

    run_prof(&p, (const char *const[]){"stacks", "--unwind", "orc", pk.pid_text, NULL});
    cr_expect_eq(p.status, 2);
    cr_expect_str_eq(p.err, "prof: --unwind: unknown 'orc' (auto, dwarf, fp, libunwind)\n");
    e2e_proc_free(&p);
    parked_finish(&pk);
}

/* Debian's python3 is built without frame pointers, as its C library is: the default walk
 * (the unwind tables, no libunwind: the snapshot says so) reaches _start, with the same
 * frames as libunwind. */
Test(e2e_stacks, the_unwind_tables_reach_the_root_of_a_distribution_program)
{
    const char *python = "/usr/bin/python3";
    if (access(python, X_OK) != 0)
        cr_skip_test("no %s", python);
    struct parked pk;
    program_start(&pk, E2E_ARGV(python, "-c",
                                "import sys\n"
                                "print('ready', flush=True)\n"
                                "sys.stdin.read()\n"
                                "print('done eintr=0')\n"));
    struct e2e_proc p;
    struct e2e_folded f;
    run_stacks(&p, &pk, E2E_ARGV("--unwind", "fp", "-f", "folded"));
    cr_log_info("with frame pointers: %s", p.out);
    e2e_proc_free(&p);

    const char *saved = e2e_path("python.snap");
    run_stacks(&p, &pk, E2E_ARGV("-f", "folded", "--save", saved));
    e2e_folded_parse(&f, p.out);
    cr_expect_eq(f.total, 1, "%s", p.out);
    cr_expect_eq(e2e_folded_containing(&f, "Py_RunMain"), 1, "no Py_RunMain in:\n%s", p.out);
    cr_expect_eq(e2e_folded_containing(&f, "__libc_start_main"), 1, "%s", p.out);
    cr_expect(f.n_stacks == 1 && strncmp(f.stacks[0].frames, "_start;", 7) == 0, "%s", p.out);
    e2e_folded_free(&f);
    struct e2e_scan scan;
    e2e_scan_file(&scan, saved);
    cr_expect_eq(scan.unwinder, PROF_UNWIND_AUTO, "the snapshot's unwinder is %u", scan.unwinder);
    cr_expect_eq(scan.n_truncated, 0);
    char *tables = strdup(p.out);
    e2e_proc_free(&p);
    run_stacks(&p, &pk, E2E_ARGV("--unwind", "libunwind", "-f", "folded"));
    cr_expect_str_eq(tables, p.out, "not libunwind's stack");
    free(tables);
    e2e_proc_free(&p);

    run_stacks(&p, &pk, E2E_ARGV(NULL));
    cr_expect_null(strstr(p.out, "truncated"), "%s", p.out);
    e2e_proc_free(&p);
    parked_finish(&pk);
}

/* CPython 3.12 with -Xperf calls each Python function through a trampoline of its own in
 * anonymous memory, without unwind information, and names it in /tmp/perf-PID.map: the
 * walk from outside crosses it by its bytes (code of no file is where the walk looks for
 * known stubs), so the stack reaches _start through both Python functions. */
Test(e2e_stacks, the_walk_crosses_the_perf_trampolines_of_cpython)
{
    const char *python = "/root/.pyenv/versions/3.12.1/bin/python3.12";
    if (access(python, X_OK) != 0)
        cr_skip_test("%s is not installed (pyenv's CPython 3.12 build)", python);
    struct parked pk;
    program_start(&pk, E2E_ARGV(python, "-Xperf", "-c",
                                "import sys\n"
                                "def inner():\n"
                                "    print('ready', flush=True)\n"
                                "    sys.stdin.read()\n"
                                "def outer():\n"
                                "    inner()\n"
                                "outer()\n"
                                "print('done eintr=0')\n"));
    struct e2e_proc p;
    struct e2e_folded f;
    run_stacks(&p, &pk, E2E_ARGV("-f", "folded"));
    e2e_folded_parse(&f, p.out);
    cr_expect_eq(f.total, 1, "%s", p.out);
    const char *stack = f.n_stacks == 1 ? f.stacks[0].frames : "";
    const char *outer = strstr(stack, ";py::outer:");
    cr_expect(strncmp(stack, "_start;", 7) == 0, "not rooted at _start:\n%s", p.out);
    cr_expect(outer != NULL && strstr(outer, ";py::inner:") != NULL,
              "no py::outer, then py::inner, in:\n%s", p.out);
    e2e_folded_free(&f);
    e2e_proc_free(&p);
    parked_finish(&pk);
    char map[64];
    snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)pk.pid);
    unlink(map);
}

/* A thread blocked in libc's pause(), called from wait_in_libc() (tests/workloads/pauser.c):
 * the frame-pointer chain skips wait_in_libc(); the default walk has it between pause()
 * and the thread's start routine. */
Test(e2e_stacks, a_caller_of_libc_without_frame_pointers_is_not_skipped)
{
    struct parked pk;
    program_start(&pk, E2E_ARGV(E2E_WORKLOAD("pauser")));
    struct e2e_proc p;
    struct e2e_folded f;
    run_stacks(&p, &pk, E2E_ARGV("-f", "folded"));
    e2e_folded_parse(&f, p.out);
    cr_expect_eq(e2e_folded_ending(&f, "run_pauser;wait_in_libc;pause"), 1,
                 "no run_pauser;wait_in_libc;pause in:\n%s", p.out);
    e2e_folded_free(&f);
    e2e_proc_free(&p);
    run_stacks(&p, &pk, E2E_ARGV("--unwind", "fp", "-f", "folded"));
    cr_log_info("frame pointers alone:\n%s", p.out);
    e2e_proc_free(&p);
    parked_finish(&pk);
}
