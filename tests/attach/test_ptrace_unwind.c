/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the remote libunwind walk (attach/ptrace_unwind.c) and of the ptrace
 * snapshot's unwind modes (attach/ptrace_snap.c: libunwind is the oracle of the walk by
 * prof's own unwind tables) on a child of the test, parked in
 * pause() under three calls of this file. The unit tests are built without
 * -fno-omit-frame-pointer, so at -O2 these functions keep no frame pointer, as distribution
 * code does. Each of them tells the test its own return address, which the walk must give
 * back, in order, leaf first. In a prof built without libunwind the functions must say so.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach/procmaps.h"
#include "attach/procstat.h"
#include "attach/ptrace_snap.h"
#include "attach/ptrace_unwind.h"
#include "common/err.h"
#include "include/libprof/prof_format.h"
#include "reporter/input/profile.h"
#include "reporter/input/read.h"

#define N_CHAIN 3 /* chain_a -> chain_b -> chain_c */

/* Each writes its return address to fd, then calls the next; chain_c parks. noipa and the
 * empty asm keep every call a call, with a frame of its own. */
__attribute__((noipa)) static void chain_c(int fd)
{
    uintptr_t ra = (uintptr_t)__builtin_return_address(0);
    (void)!write(fd, &ra, sizeof(ra));
    for (;;)
        pause();
}

__attribute__((noipa)) static void chain_b(int fd)
{
    uintptr_t ra = (uintptr_t)__builtin_return_address(0);
    (void)!write(fd, &ra, sizeof(ra));
    chain_c(fd);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noipa)) static void chain_a(int fd)
{
    uintptr_t ra = (uintptr_t)__builtin_return_address(0);
    (void)!write(fd, &ra, sizeof(ra));
    chain_b(fd);
    __asm__ volatile("" ::: "memory");
}

/* Starts the child; ras gets the return addresses, chain_a's first. Returns once the
 * child sleeps in pause(). */
static pid_t start_child(uint64_t ras[N_CHAIN])
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(fds[0]);
        chain_a(fds[1]);
        _exit(0);
    }
    close(fds[1]);
    for (int i = 0; i < N_CHAIN; i++) {
        uintptr_t ra;
        cr_assert_eq(read(fds[0], &ra, sizeof(ra)), (ssize_t)sizeof(ra), "the child died");
        ras[i] = ra;
    }
    close(fds[0]);
    for (int i = 0; i < 2000 && att_proc_task_state(pid, pid) != 'S'; i++)
        usleep(1000);
    return pid;
}

static void end_child(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, __WALL);
}

/* Takes a ptrace snapshot of pid walked as unwind and reads it into p. */
static void snapshot(pid_t pid, enum att_ptrace_unwind unwind, struct rep_profile *p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    cr_assert_not_null(mem);
    struct cmn_err err = {0};
    cr_assert_eq(att_ptrace_snap_unwind(pid, 5.0, unwind, mem, &err), CMN_OK, "%s", err.msg);
    fclose(mem);
    cr_assert_eq(rep_read_buffer(buf, len, "snap", p, &err), CMN_OK, "%s", err.msg);
    free(buf);
}

#ifdef PROF_HAVE_LIBUNWIND

/* Seizes the child and waits for its interrupt stop. */
static void stop_child(pid_t pid)
{
    int st;
    cr_assert_eq(ptrace(PTRACE_SEIZE, pid, NULL, NULL), 0);
    cr_assert_eq(ptrace(PTRACE_INTERRUPT, pid, NULL, NULL), 0);
    cr_assert_eq(waitpid(pid, &st, __WALL), pid);
    cr_assert(WIFSTOPPED(st));
}

/* Walks the stopped child with at most max_frames frames; *n_frames gets the count. */
static uint8_t walk(pid_t pid, uint64_t *frames, unsigned max_frames, unsigned *n_frames)
{
    struct att_maps maps;
    struct att_punw u = {0};
    struct cmn_err err = {0};
    uint8_t stop = 0xff;
    cr_assert_eq(att_maps_read(pid, &maps, &err), CMN_OK, "%s", err.msg);
    cr_assert_eq(att_punw_init(&u, &err), CMN_OK, "%s", err.msg);
    *n_frames = att_punw_walk(&u, pid, &maps, frames, max_frames, &stop);
    att_punw_fini(&u);
    att_maps_free(&maps);
    return stop;
}

/* Where ras[N_CHAIN - 1] (chain_c's return address) is in frames, followed by chain_b's
 * and chain_a's; -1 when they are not there in that order. */
static int chain_at(const uint64_t *frames, unsigned n, const uint64_t ras[N_CHAIN])
{
    for (unsigned i = 0; i + N_CHAIN <= n; i++)
        if (frames[i] == ras[2] && frames[i + 1] == ras[1] && frames[i + 2] == ras[0])
            return (int)i;
    return -1;
}

Test(ptrace_unwind, walks_code_without_frame_pointers_to_the_root)
{
    uint64_t ras[N_CHAIN], frames[64];
    unsigned n;
    pid_t pid = start_child(ras);
    stop_child(pid);
    uint8_t stop = walk(pid, frames, 64, &n);
    int at = chain_at(frames, n, ras);
    cr_expect_geq(at, 1, "chain_c, chain_b, chain_a are not among the %u frames", n);
    cr_expect_eq(stop, PROF_STOP_END, "stop reason %u after %u frames", stop, n);
    /* Beyond chain_a: start_child()'s caller, this test. */
    cr_expect_gt(n, (unsigned)at + N_CHAIN + 1);
    end_child(pid);
}

Test(ptrace_unwind, stops_at_the_depth_limit)
{
    uint64_t ras[N_CHAIN], frames[2];
    unsigned n;
    pid_t pid = start_child(ras);
    stop_child(pid);
    cr_expect_eq(walk(pid, frames, 2, &n), PROF_STOP_DEPTH);
    cr_expect_eq(n, 2);
    end_child(pid);
}

Test(ptrace_unwind, does_not_walk_before_init)
{
    struct att_punw u = {0};
    struct att_maps maps = {0};
    uint64_t frames[4];
    uint8_t stop = 0xff;
    cr_expect_eq(att_punw_walk(&u, getpid(), &maps, frames, 4, &stop), 0);
    cr_expect_eq(stop, 0xff);
    att_punw_fini(&u); /* a zeroed state is fine */
}

/* The frames of p's only sample into frames (64 at most); their number. */
static unsigned sample_frames(const struct rep_profile *p, uint64_t *frames)
{
    cr_assert_eq(p->n_samples, 1);
    const struct rep_sample *s = &p->samples[0];
    unsigned n = s->n_frames < 64 ? s->n_frames : 64;
    for (unsigned i = 0; i < n; i++)
        frames[i] = rep_sample_frame(s, i);
    return n;
}

/* libunwind is the oracle: the walk by prof's own unwind tables (auto, dwarf) gives the
 * same frames, leaf first, through code without frame pointers, as far as libunwind goes,
 * and ends complete. */
Test(ptrace_unwind, the_snapshot_names_its_unwinder_and_the_tables_match_libunwind)
{
    uint64_t ras[N_CHAIN];
    pid_t pid = start_child(ras);
    struct rep_profile fp, unw, any, dwarf;
    snapshot(pid, ATT_PTRACE_UNWIND_FP, &fp);
    snapshot(pid, ATT_PTRACE_UNWIND_LIBUNWIND, &unw);
    snapshot(pid, ATT_PTRACE_UNWIND_AUTO, &any);
    snapshot(pid, ATT_PTRACE_UNWIND_DWARF, &dwarf);
    cr_expect_eq(fp.process.unwinder, PROF_UNWIND_FP);
    cr_expect_eq(unw.process.unwinder, PROF_UNWIND_LIBUNWIND);
    cr_expect_eq(any.process.unwinder, PROF_UNWIND_AUTO);
    cr_expect_eq(dwarf.process.unwinder, PROF_UNWIND_DWARF);
    uint64_t want[64], got[64];
    unsigned n_want = sample_frames(&unw, want);
    cr_expect_geq(chain_at(want, n_want, ras), 1, "the chain is not in the libunwind sample");
    cr_expect_eq(unw.samples[0].stop_reason, PROF_STOP_END);
    const struct rep_profile *tables[] = {&any, &dwarf};
    for (size_t k = 0; k < 2; k++) {
        unsigned n = sample_frames(tables[k], got);
        cr_expect_eq(tables[k]->samples[0].stop_reason, PROF_STOP_END, "%s: stop reason %u",
                     k ? "dwarf" : "auto", tables[k]->samples[0].stop_reason);
        /* libunwind ends this stack early, claiming its end, in Criterion's library
         * (criterion_internal_test_main); the tables go on to _start. */
        cr_expect_geq(n, n_want, "%s: %u frames, libunwind %u", k ? "dwarf" : "auto", n, n_want);
        for (unsigned i = 0; i < n && i < n_want; i++)
            cr_expect_eq(got[i], want[i], "%s: frame %u is %#lx, libunwind's %#lx",
                         k ? "dwarf" : "auto", i, (unsigned long)got[i], (unsigned long)want[i]);
    }
    /* Frame pointers alone lose the chain. */
    unsigned n_fp = sample_frames(&fp, got);
    cr_expect(n_fp < n_want || fp.samples[0].stop_reason != PROF_STOP_END,
              "frame pointers followed code built without them: %u frames", n_fp);
    rep_profile_fini(&fp);
    rep_profile_fini(&unw);
    rep_profile_fini(&any);
    rep_profile_fini(&dwarf);
    /* Detached: it still runs, and still sleeps in pause(). */
    usleep(20000);
    cr_expect_eq(att_proc_task_state(pid, pid), 'S');
    end_child(pid);
}

#else /* !PROF_HAVE_LIBUNWIND */

Test(ptrace_unwind, says_it_was_built_without_libunwind)
{
    struct att_punw u = {0};
    struct cmn_err err = {0};
    cr_expect_not(att_punw_is_built());
    cr_expect_eq(att_punw_init(&u, &err), CMN_E_INPUT);
    cr_expect(strstr(err.msg, "without libunwind") != NULL, "%s", err.msg);
    att_punw_fini(&u);
}

Test(ptrace_unwind, an_explicit_libunwind_snapshot_is_refused_and_auto_walks_by_the_tables)
{
    uint64_t ras[N_CHAIN];
    pid_t pid = start_child(ras);
    struct cmn_err err = {0};
    FILE *mem = fopen("/dev/null", "w");
    cr_assert_not_null(mem);
    cr_expect_eq(att_ptrace_snap_unwind(pid, 5.0, ATT_PTRACE_UNWIND_LIBUNWIND, mem, &err),
                 CMN_E_INPUT);
    fclose(mem);
    struct rep_profile p;
    snapshot(pid, ATT_PTRACE_UNWIND_AUTO, &p);
    cr_expect_eq(p.process.unwinder, PROF_UNWIND_AUTO);
    cr_assert_eq(p.n_samples, 1);
    cr_expect_eq(p.samples[0].stop_reason, PROF_STOP_END);
    rep_profile_fini(&p);
    end_child(pid);
}

#endif
