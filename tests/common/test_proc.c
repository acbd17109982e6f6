/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the /proc reader (common/proc.h): the parsers on lines made for the
 * purpose, then the test's own process and threads (a named thread asleep in a call). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/maps_line.h"
#include "common/proc.h"

Test(proc, finds_the_fields_after_a_name_with_parentheses_and_spaces)
{
    const char *stat = "4242 (a) b (c) S 17 4242 4242 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 "
                       "99 1000 50 18446744073709551615 1 2 140737488346752 0 0\n";
    char name[16];
    cr_assert(cmn_proc_stat_name(stat, name, sizeof(name)));
    cr_assert_str_eq(name, "a) b (c");
    cr_assert_eq(cmn_proc_stat_rest(stat)[0], 'S');
    cr_assert_eq(strtol(cmn_proc_stat_field(stat, 4), NULL, 10), 17);
    cr_assert_eq(strtoull(cmn_proc_stat_field(stat, 28), NULL, 10), 140737488346752ull);
    cr_assert_null(cmn_proc_stat_field(stat, 40));
    cr_assert(cmn_proc_stat_name(stat, name, 4));
    cr_assert_str_eq(name, "a) ", "cut to the room given");
    cr_assert_null(cmn_proc_stat_rest("no parenthesis"));
    cr_assert(!cmn_proc_stat_name("12 x)(y", name, sizeof(name)));
}

Test(proc, parses_the_three_forms_of_a_syscall_file)
{
    struct cmn_proc_syscall sc;
    cr_assert(cmn_proc_syscall_parse("230 0x1 0x0 0x7ffd1234 0x0 0x0 0x0 0x7ffd0000 0x7f12345678\n",
                                     &sc));
    cr_assert(!sc.is_running);
    cr_assert_eq(sc.nr, 230);
    cr_assert_eq(sc.sp, 0x7ffd0000);
    cr_assert_eq(sc.pc, 0x7f12345678);
    cr_assert(cmn_proc_syscall_parse("-1 0x7ffd0010 0x401000\n", &sc));
    cr_assert_eq(sc.nr, -1);
    cr_assert_eq(sc.sp, 0x7ffd0010);
    cr_assert_eq(sc.pc, 0x401000);
    cr_assert(cmn_proc_syscall_parse("running\n", &sc));
    cr_assert(sc.is_running);
    cr_assert_eq(sc.nr, -1);
    cr_assert(!cmn_proc_syscall_parse("", &sc));
    cr_assert(!cmn_proc_syscall_parse("12", &sc));
}

static _Atomic pid_t sleeper_tid;

static void *sleeper(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "proc-sleeper");
    atomic_store(&sleeper_tid, (pid_t)syscall(SYS_gettid));
    struct timespec ts = {5, 0};
    nanosleep(&ts, NULL);
    return NULL;
}

/* Starts the sleeper and waits until it is asleep. */
static pthread_t start_sleeper(void)
{
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, sleeper, NULL), 0);
    const struct cmn_proc self = {0};
    for (int i = 0; i < 2000; i++) {
        pid_t tid = atomic_load(&sleeper_tid);
        if (tid != 0 && cmn_proc_task_state(&self, tid) == 'S')
            return t;
        usleep(1000);
    }
    cr_assert_fail("the sleeper never slept");
    return t;
}

Test(proc, lists_names_and_reads_the_state_and_call_of_its_own_threads)
{
    pthread_t t = start_sleeper();
    pid_t tid = atomic_load(&sleeper_tid);
    const struct cmn_proc self = {0}, by_pid = {.pid = getpid(), .open_fn = cmn_proc_open};
    struct cmn_proc_tasks it;
    cr_assert_eq(cmn_proc_tasks_open(&by_pid, &it), 0);
    bool seen_main = false, seen_sleeper = false;
    for (pid_t id; (id = cmn_proc_tasks_next(&it)) > 0;) {
        seen_main |= id == getpid();
        seen_sleeper |= id == tid;
    }
    cmn_proc_tasks_close(&it);
    cr_assert(seen_main && seen_sleeper);

    char name[PROF_THREAD_NAME_MAX];
    cmn_proc_task_name(&self, tid, name);
    cr_assert_str_eq(name, "proc-sleeper");
    cr_assert_eq(cmn_proc_task_state(&by_pid, getpid()), 'R');
    struct cmn_proc_syscall sc;
    cr_assert(cmn_proc_task_syscall(&self, tid, &sc));
    cr_assert(sc.nr == SYS_nanosleep || sc.nr == SYS_clock_nanosleep, "nr %ld", sc.nr);
    cr_assert(sc.pc != 0 && sc.sp != 0);
    /* A thread reading its own file is in that read. */
    cr_assert(cmn_proc_task_syscall(&self, (pid_t)syscall(SYS_gettid), &sc));
    cr_assert_eq(sc.nr, SYS_read);
    pthread_cancel(t);
    pthread_join(t, NULL);
}

Test(proc, says_a_thread_or_process_that_is_not_there_is_not)
{
    const struct cmn_proc gone = {.pid = 999999999};
    struct cmn_proc_tasks it;
    cr_assert_eq(cmn_proc_tasks_open(&gone, &it), -ENOENT);
    cr_assert_eq(cmn_proc_tasks_next(&it), 0);
    cmn_proc_tasks_close(&it);
    cr_assert_eq(cmn_proc_task_state(&gone, 999999999), 0);
    char name[PROF_THREAD_NAME_MAX] = "x";
    cmn_proc_task_name(&gone, 1, name);
    cr_assert_str_eq(name, "");
    struct cmn_proc_lines lines;
    cr_assert_eq(cmn_proc_lines_open(&gone, "maps", &lines), -ENOENT);
    cr_assert_null(cmn_proc_lines_next(&lines));
    cmn_proc_lines_close(&lines);
}

Test(proc, reads_the_lines_of_its_maps)
{
    const struct cmn_proc self = {0};
    struct cmn_proc_lines lines;
    cr_assert_eq(cmn_proc_lines_open(&self, "maps", &lines), 0);
    cr_assert_eq(lines.read_errno, 0);
    size_t n = 0, code = 0;
    uintptr_t here = (uintptr_t)&cmn_proc_stat_rest;
    for (char *line; (line = cmn_proc_lines_next(&lines)) != NULL; n++) {
        struct cmn_maps_line m;
        cr_assert_eq(cmn_maps_parse_line(line, &m), 0, "%s", line);
        code += m.start <= here && here < m.end && (m.prot & PROF_MAP_EXEC);
    }
    cmn_proc_lines_close(&lines);
    cr_assert(n > 5);
    cr_assert_eq(code, 1, "this test's code is in one mapping");
}

Test(proc, splits_lines_without_a_last_newline)
{
    char text[] = "one\n\nthree";
    char *at = text, *end = text + strlen(text);
    cr_assert_str_eq(cmn_proc_next_line(&at, end), "one");
    cr_assert_str_eq(cmn_proc_next_line(&at, end), "");
    cr_assert_str_eq(cmn_proc_next_line(&at, end), "three");
    cr_assert_null(cmn_proc_next_line(&at, end));
}
