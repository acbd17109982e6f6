/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end: prof_snapshot(fd) (tests/workloads/snapper.c). Each parked thread must come
 * out in its known function under its own name; the thread that blocks the snapshot signal
 * must be listed as not answering; the process must run on unharmed (no EINTR in its
 * futex wait, normal exit). With an action of the application's own on the snapshot
 * signal, the application's kill()s reach that action and the snapshot still works.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "include/libprof/prof_format.h"
#include "tests/e2e/support.h"

TestSuite(e2e_snapshot, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

/* The PROF_REC_SNAPSHOT records of a file and the names its THREAD records give. */
struct listed {
    uint32_t tid;
    uint8_t status;
    char state;
    char name[PROF_THREAD_NAME_MAX];
};

static size_t list_threads(const char *path, struct listed *out, size_t cap)
{
    size_t len, n = 0;
    unsigned char *b = (unsigned char *)e2e_read_file(path, &len);
    cr_assert(b != NULL && len >= sizeof(struct prof_file_header), "no snapshot in %s", path);
    struct { uint32_t tid; char name[PROF_THREAD_NAME_MAX]; } names[64];
    size_t n_names = 0;
    for (size_t off = sizeof(struct prof_file_header); off + 8 <= len;) {
        struct prof_rec_hdr h;
        memcpy(&h, b + off, sizeof(h));
        cr_assert(h.size_bytes >= 8 && off + h.size_bytes <= len, "bad record at %zu", off);
        if (h.type == PROF_REC_THREAD && n_names < 64) {
            struct prof_rec_thread t;
            memcpy(&t, b + off, sizeof(t));
            names[n_names].tid = t.tid;
            snprintf(names[n_names].name, sizeof(names[0].name), "%s",
                     (const char *)b + off + sizeof(t));
            n_names++;
        } else if (h.type == PROF_REC_SNAPSHOT && n < cap) {
            struct prof_rec_snapshot s;
            memcpy(&s, b + off, sizeof(s));
            out[n] = (struct listed){.tid = s.tid, .status = s.status, .state = s.run_state};
            for (size_t i = 0; i < n_names; i++)
                if (names[i].tid == s.tid)
                    memcpy(out[n].name, names[i].name, sizeof(out[n].name));
            n++;
        }
        off += h.size_bytes;
    }
    free(b);
    return n;
}

/* The folded line of the thread named name (with --threads), or NULL. */
static const char *stack_of(const struct e2e_folded *f, const char *name)
{
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "%s (", name);
    for (size_t i = 0; i < f->n_stacks; i++)
        if (strncmp(f->stacks[i].frames, prefix, strlen(prefix)) == 0)
            return f->stacks[i].frames;
    return NULL;
}

static void check_snapshot(const char *snap)
{
    struct listed t[16];
    size_t n = list_threads(snap, t, 16);
    cr_assert_eq(n, 5, "expected 5 threads listed (main, spinner, waiter, deep, deaf), got %zu",
                 n);
    int deaf_seen = 0;
    for (size_t i = 0; i < n; i++) {
        cr_log_info("thread %u %s status %u state %c", t[i].tid, t[i].name, t[i].status,
                    t[i].state ? t[i].state : '?');
        if (strcmp(t[i].name, "deaf") == 0) {
            deaf_seen = 1;
            cr_expect_eq(t[i].status, PROF_SNAP_NO_ANSWER, "the deaf thread answered?");
        } else {
            cr_expect_eq(t[i].status, PROF_SNAP_OK, "thread %s did not answer", t[i].name);
        }
    }
    cr_assert(deaf_seen, "the thread blocking the signal is not listed");

    /* Stacks, symbolized, with the thread's name at the root. */
    struct e2e_proc p;
    struct e2e_opts o = {0};
    e2e_run(&p, &o, E2E_ARGV(E2E_PROF, "report", "--threads", snap));
    cr_assert_eq(p.status, 0, "prof report: %s", p.err);
    struct e2e_folded f;
    e2e_folded_parse(&f, p.out);
    e2e_proc_free(&p);
    static const struct {
        const char *name, *suffix;
    } want[] = {
        {"spinner", ";spinner;park_spin"},
        {"waiter", ";waiter;park_wait"},
        {"deep", ";deep;park_outer;park_middle;park_inner;park_spin"},
        {"snapper", ";main;prof_snapshot"},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const char *s = stack_of(&f, want[i].name);
        cr_assert(s != NULL, "no stack for thread %s", want[i].name);
        cr_log_info("%s", s);
        cr_expect(strstr(s, want[i].suffix) != NULL, "thread %s: %s lacks %s", want[i].name, s,
                  want[i].suffix);
    }
    cr_expect(stack_of(&f, "deaf") == NULL, "the deaf thread has a stack");
}

Test(e2e_snapshot, api_lists_every_thread_in_its_function)
{
    const char *snap = e2e_path("api.snap");
    struct e2e_proc p;
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(e2e_env("PROF_OUTPUT", e2e_path("p")))};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("snapper"), "api", snap));
    cr_assert_eq(p.status, 0, "snapper exited %d: %s", p.status, p.err);
    cr_assert_str_eq(p.out, "rc=0 eintr=0\n");
    cr_assert_eq(p.err_len, 0, "the library printed: %s", p.err);
    e2e_proc_free(&p);
    check_snapshot(snap);
}

Test(e2e_snapshot, application_keeps_its_own_action)
{
    const char *snap = e2e_path("own.snap");
    struct e2e_proc p;
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(e2e_env("PROF_OUTPUT", e2e_path("p")))};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("snapper"), "own", snap));
    cr_assert_eq(p.status, 0, "snapper exited %d: %s", p.status, p.err);
    cr_assert_str_eq(p.out, "rc=0 eintr=0 app_signals=3\n");
    e2e_proc_free(&p);
    check_snapshot(snap);
}

Test(e2e_snapshot, off_by_configuration)
{
    const char *snap = e2e_path("off.snap");
    struct e2e_proc p;
    struct e2e_opts o = {.preload = 1,
                         .env = E2E_ARGV(e2e_env("PROF_OUTPUT", e2e_path("p")),
                                         "PROF_SNAPSHOT_SIGNAL=0")};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("snapper"), "api", snap));
    cr_assert_eq(p.status, 0);
    cr_assert_str_eq(p.out, "rc=-1 eintr=0\n");
    cr_assert_eq(p.err_len, 0, "the library printed: %s", p.err);
    e2e_proc_free(&p);
}

Test(e2e_snapshot, kill_writes_a_snapshot_next_to_the_profile)
{
    const char *prof = e2e_path("sleep.prof");
    struct e2e_proc p;
    /* A kill() goes to the process's one thread and cuts its nanosleep short, which
     * sleep(1) retries. The shell sends the signal twice while it sleeps. */
    char script[512];
    snprintf(script, sizeof(script),
             "LD_PRELOAD=%s PROF_OUTPUT=%s /bin/sleep 1 & pid=$!; sleep 0.3; "
             "kill -s RTMAX-3 $pid; sleep 0.2; kill -s RTMAX-3 $pid; wait $pid",
             E2E_LIB, prof);
    struct e2e_opts o = {0};
    e2e_run(&p, &o, E2E_ARGV("/bin/sh", "-c", script));
    cr_assert_eq(p.status, 0, "sleep exited %d: %s", p.status, p.err);
    cr_assert_eq(p.out_len + p.err_len, 0, "printed: %s%s", p.out, p.err);
    e2e_proc_free(&p);
    const char *found[4];
    size_t n = e2e_find_files("sleep.prof.snapshot.", "", found, 4);
    cr_assert_eq(n, 2, "expected sleep.prof.snapshot.1 and .2, found %zu", n);
    /* A kill() lands on the process's thread, which then sleeps again in
     * clock_nanosleep(): the library does not wake it a second time to ask. */
    struct listed t[4];
    cr_assert_eq(list_threads(found[0], t, 4), 1);
    cr_expect_eq(t[0].status, PROF_SNAP_NOT_ASKED);
    cr_expect_str_eq(t[0].name, "sleep");
}

/* `prof stacks` on a process under libprof whose only thread sleeps in nanosleep(): the
 * request goes to libprof's writer thread and the library does not signal a thread asleep
 * in a call that a handler would cut short, so the sleep runs its whole time; prof reads
 * that thread with ptrace instead. */
Test(e2e_snapshot, prof_stacks_wakes_no_sleeping_thread)
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
        char *const env[] = {"LD_PRELOAD=" E2E_LIB, env_out, NULL};
        execle(E2E_WORKLOAD("sleeper"), "sleeper", "1.5", (char *)NULL, env);
        _exit(127);
    }
    close(out[1]);
    FILE *from = fdopen(out[0], "r");
    char line[64] = "";
    cr_assert(fgets(line, sizeof(line), from) != NULL && strcmp(line, "ready\n") == 0,
              "sleeper said: %s", line);
    usleep(200000);
    char pid_text[16];
    snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
    struct e2e_proc p;
    struct e2e_opts o = {0};
    e2e_run(&p, &o, E2E_ARGV(E2E_PROF, "stacks", pid_text));
    cr_log_info("%s%s", p.out, p.err);
    cr_expect_eq(p.status, 0, "prof stacks exited %d: %s", p.status, p.err);
    cr_expect(strstr(p.out, "nanosleep") != NULL, "the sleeping thread's stack is missing");
    e2e_proc_free(&p);
    cr_assert(fgets(line, sizeof(line), from) != NULL, "sleeper said nothing more");
    cr_expect_str_eq(line, "slept\n", "the snapshot cut the sleep short");
    fclose(from);
    int status;
    waitpid(pid, &status, 0);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "sleeper status 0x%x", status);
}
