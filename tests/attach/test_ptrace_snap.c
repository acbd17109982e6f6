/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the ptrace snapshot (attach/ptrace_snap.c) on a child of the test: a process
 * with named threads idle in pause(). The snapshot must list every thread with its name
 * and a stack, be a profile the reader takes, and leave the child as it was: running, or
 * stopped with a pending signal that it receives exactly once when it continues.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attach/procstat.h"
#include "attach/ptrace_snap.h"
#include "common/err.h"
#include "include/libprof/prof_format.h"
#include "reporter/input/profile.h"
#include "reporter/input/read.h"

static int signal_fd = -1; /* the child writes a byte here for each SIGUSR1 */

static void on_usr1(int sig)
{
    (void)sig;
    char c = 'u';
    (void)!write(signal_fd, &c, 1);
}

static void *idle(void *name)
{
    pthread_setname_np(pthread_self(), name);
    for (;;)
        pause();
    return NULL;
}

/* The threads of pid named "idle-..." that sleep. */
static int count_idle(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    struct dirent *e;
    int n = 0;
    while (d != NULL && (e = readdir(d)) != NULL) {
        char name[PROF_THREAD_NAME_MAX];
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid <= 0)
            continue;
        att_proc_task_name(pid, tid, name);
        n += strncmp(name, "idle-", 5) == 0 && att_proc_task_state(pid, tid) == 'S';
    }
    if (d != NULL)
        closedir(d);
    return n;
}

/* Starts a child with threads "idle-1" and "idle-2" besides its main thread; *signals
 * reads a byte per SIGUSR1 it handles. */
static pid_t start_child(int *signals)
{
    int ready[2], sigs[2];
    cr_assert_eq(pipe(ready), 0);
    cr_assert_eq(pipe(sigs), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal_fd = sigs[1];
        struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_RESTART};
        sigaction(SIGUSR1, &sa, NULL);
        sigaction(SIGRTMIN + 1, &sa, NULL);
        pthread_t t;
        pthread_create(&t, NULL, idle, "idle-1");
        pthread_create(&t, NULL, idle, "idle-2");
        /* Ready once both threads have named themselves and sleep. */
        while (count_idle(getpid()) < 2)
            usleep(1000);
        (void)!write(ready[1], "r", 1);
        for (;;)
            pause();
    }
    close(ready[1]);
    close(sigs[1]);
    char c;
    cr_assert_eq(read(ready[0], &c, 1), 1, "the child did not start");
    close(ready[0]);
    *signals = sigs[0];
    return pid;
}

static void stop_child(pid_t pid, int signals)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(signals);
}

/* Takes the snapshot of pid and reads it into p. */
static void snapshot(pid_t pid, struct rep_profile *p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    cr_assert_not_null(mem);
    struct cmn_err err = {0};
    cr_assert_eq(att_ptrace_snap(pid, 5.0, mem, &err), CMN_OK, "%s", err.msg);
    fclose(mem);
    cr_assert_eq(rep_read_buffer(buf, len, "snap", p, &err), CMN_OK, "%s", err.msg);
    free(buf);
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The bytes the child writes for its signals within the next ms milliseconds. */
static int signals_within(int fd, int ms)
{
    int n = 0;
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    char c;
    for (long end = now_ms() + ms, left = ms; left > 0; left = end - now_ms())
        if (poll(&pfd, 1, (int)left) == 1 && read(fd, &c, 1) == 1)
            n++;
    return n;
}

/* 1 when every thread of pid is in state want (a group stop reaches the threads one by
 * one, after the process's own state says 'T'). */
static int all_in_state(pid_t pid, char want)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return 0;
    int all = 1;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.' && att_proc_task_state(pid, (pid_t)atoi(e->d_name)) != want)
            all = 0;
    closedir(d);
    return all;
}

static void wait_state(pid_t pid, char want)
{
    for (int i = 0; i < 2000 && !all_in_state(pid, want); i++)
        usleep(1000);
    cr_assert(all_in_state(pid, want), "not every thread of %d in state %c", (int)pid, want);
}

Test(ptrace_snap, refuses_a_process_that_does_not_exist)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    struct cmn_err err = {0};
    cr_expect_eq(att_ptrace_snap(pid, 1.0, mem, &err), CMN_E_INPUT);
    cr_expect(strstr(err.msg, "no process") != NULL, "%s", err.msg);
    fclose(mem);
    free(buf);
}

Test(ptrace_snap, lists_every_thread_with_its_name_and_stack)
{
    int signals;
    pid_t pid = start_child(&signals);
    wait_state(pid, 'S'); /* the main thread in pause() */
    struct rep_profile p;
    snapshot(pid, &p);
    cr_expect(p.has_end);
    cr_expect_eq(p.process.pid, (uint32_t)pid);
    cr_expect_eq(p.process.timer_source, PROF_TIMER_NONE);
    cr_assert_eq(p.n_snap_threads, 3);
    cr_assert_eq(p.n_samples, 3);
    size_t n_idle = 0;
    for (size_t i = 0; i < p.n_snap_threads; i++) {
        const struct rep_snap_thread *t = &p.snap_threads[i];
        cr_expect_eq(t->status, PROF_SNAP_OK);
        cr_expect_eq(t->run_state, 'S');
        const char *name = rep_profile_thread_name(&p, t->tid);
        n_idle += name != NULL && strncmp(name, "idle-", 5) == 0;
    }
    cr_expect_eq(n_idle, 2);
    for (size_t i = 0; i < p.n_samples; i++)
        cr_expect_geq(p.samples[i].n_frames, 1);
    rep_profile_fini(&p);
    /* Detached and running as before: it still handles a signal. */
    usleep(20000);
    cr_expect_eq(att_proc_task_state(pid, pid), 'S');
    kill(pid, SIGUSR1);
    cr_expect_eq(signals_within(signals, 300), 1);
    stop_child(pid, signals);
}

Test(ptrace_snap, a_stopped_process_stays_stopped_and_gets_its_pending_signal_once)
{
    int signals;
    pid_t pid = start_child(&signals);
    kill(pid, SIGSTOP);
    wait_state(pid, 'T');
    kill(pid, SIGUSR1); /* pending while the process is stopped */
    struct rep_profile p;
    snapshot(pid, &p);
    cr_expect_eq(p.n_samples, 3);
    for (size_t i = 0; i < p.n_snap_threads; i++)
        cr_expect_eq(p.snap_threads[i].run_state, 'T');
    rep_profile_fini(&p);
    usleep(20000);
    cr_expect_eq(att_proc_task_state(pid, pid), 'T', "the process no longer stopped");
    cr_expect_eq(signals_within(signals, 50), 0, "the signal came while stopped");
    kill(pid, SIGCONT);
    cr_expect_eq(signals_within(signals, 300), 1, "the pending signal was lost or doubled");
    stop_child(pid, signals);
}

struct sender {
    pid_t pid;
    _Atomic int is_done;
    int n_sent;
};

/* Queues a real-time signal (each one is delivered, none merge) to the child every
 * 20 us until told to stop. */
static void *send_signals(void *arg)
{
    struct sender *s = arg;
    while (!s->is_done) {
        if (sigqueue(s->pid, SIGRTMIN + 1, (union sigval){0}) == 0)
            s->n_sent++;
        usleep(20);
    }
    return NULL;
}

Test(ptrace_snap, signals_sent_during_snapshots_arrive_once_each)
{
    /* Some of these signals are being delivered as a thread is seized: its first stop is
     * then a signal-delivery-stop, and the detach must deliver the signal. Real-time
     * signals queue, so the child must handle exactly as many as were sent. (The race is
     * won in most runs: a detach that drops the signal fails here about 3 runs in 4.) */
    int signals;
    pid_t pid = start_child(&signals);
    struct sender s = {.pid = pid};
    pthread_t t;
    pthread_create(&t, NULL, send_signals, &s);
    for (int i = 0; i < 60; i++) {
        struct rep_profile p;
        snapshot(pid, &p);
        cr_expect_eq(p.n_snap_threads, 3);
        rep_profile_fini(&p);
    }
    s.is_done = 1;
    pthread_join(t, NULL);
    cr_expect_eq(signals_within(signals, 300), s.n_sent, "signals lost or doubled");
    cr_expect_eq(att_proc_task_state(pid, pid), 'S');
    stop_child(pid, signals);
}

/* The reasons a refused attach gives, one line each; Yama's scopes cannot be set on every
 * test machine (nor is Yama always there), so the choice of words is tested here. */
Test(ptrace_snap, a_refusal_says_why_in_one_line)
{
    struct cmn_err err;
    struct att_ptrace_facts f = {.pid = 42, .my_euid = 1000, .target_euid = 1000, .yama_scope = -1};
    static const struct {
        int scope;
        bool is_admin, is_other_user, is_kthread;
        long tracer;
        const char *says;
    } cases[] = {
        {1, false, false, false, 0, "kernel.yama.ptrace_scope is 1: a process may attach only "
                                    "to its descendants"},
        {2, false, false, false, 0, "kernel.yama.ptrace_scope is 2: only root"},
        {2, true, false, false, 0, "permission denied (a setuid or non-dumpable process?)"},
        {3, true, false, false, 0, "kernel.yama.ptrace_scope is 3"},
        {-1, false, true, false, 0, "it belongs to another user (uid 0) and prof runs as uid 1000"},
        {1, false, false, false, 77, "already traced by process 77"},
        {-1, false, false, true, 0, "is a kernel thread"},
        {-1, false, false, false, 0, "permission denied"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        f.yama_scope = cases[i].scope;
        f.is_admin = cases[i].is_admin;
        f.is_other_user = cases[i].is_other_user;
        f.target_euid = cases[i].is_other_user ? 0 : 1000;
        f.is_kthread = cases[i].is_kthread;
        f.tracer = cases[i].tracer;
        memset(&err, 0, sizeof(err));
        cr_assert_eq(att_ptrace_refusal(&f, &err), CMN_E_INPUT);
        cr_expect(strstr(err.msg, cases[i].says) != NULL, "case %zu: %s", i, err.msg);
        cr_expect(strchr(err.msg, '\n') == NULL, "case %zu: more than one line", i);
        cr_expect(strstr(err.msg, "process 42") != NULL, "case %zu: %s", i, err.msg);
    }
}
