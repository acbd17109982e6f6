/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the public backtrace API (libprof/backtrace.c) called from signal
 * handlers, on the thread's stack and on an alternate signal stack: a fault in a chain of
 * framed functions must give the faulting function (the interrupted instruction) then
 * its callers; with the unwind tables built, so does a fault in a chain of functions
 * without frame pointers, the faulting one without a frame at all; without tables (frame
 * pointers only), a fault in a function without a frame gives its caller only as a
 * candidate line, for `prof symbolize` to prove; a corrupt chain ends the walk without a
 * fault; prof_backtrace_fd writes one line per frame. This file is built with frame
 * pointers (the Makefile), but for the functions marked omit-frame-pointer. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "include/libprof/prof.h"
#include "include/libprof/prof_format.h"
#include "libprof/unwind.h"

static sigjmp_buf back;
static void *pcs[64];
static int n_pcs;
static int pipe_fds[2];
static int fd_frames;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)si;
    (void)uc;
    n_pcs = prof_backtrace(pcs, 64, 0);
    fd_frames = pipe_fds[1] > 0 ? prof_backtrace_fd(pipe_fds[1], 0) : 0;
    siglongjmp(back, 1);
}

static void install(int on_altstack)
{
    /* Static: it stays installed until the test's process exits (no leak for LSan). */
    static _Alignas(16) char altstack[1 << 16];
    if (on_altstack) {
        stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack)};
        cr_assert_eq(sigaltstack(&ss, NULL), 0);
    }
    struct sigaction sa = {.sa_sigaction = on_segv,
                           .sa_flags = SA_SIGINFO | (on_altstack ? SA_ONSTACK : 0)};
    sigemptyset(&sa.sa_mask);
    cr_assert_eq(sigaction(SIGSEGV, &sa, NULL), 0);
}

__attribute__((noinline)) static void sink(volatile int *p)
{
    (void)p;
    __asm__ volatile("" ::: "memory");
}

/* The fault is the point: UBSan (make asan) must let it happen. The call before it gives
 * the function a frame, set up before the fault (after the call, not scheduled into the
 * prologue). */
__attribute__((noinline, no_sanitize("null"))) static void faulting(volatile int *p)
{
    sink(p);
    *p = 42;
}

/* The same without a frame: a leaf that needs no stack keeps none, frame pointers or not.
 * ASan's check would call out of it and give it a frame, so it is left out here. */
__attribute__((noinline, no_sanitize("null", "address"))) static void faulting_leaf(volatile int *p)
{
    *p = 42;
}

__attribute__((noinline)) static void middle_of_leaf(volatile int *p)
{
    faulting_leaf(p);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void middle(volatile int *p)
{
    faulting(p);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void outer(volatile int *p)
{
    middle(p);
    __asm__ volatile("" ::: "memory");
}

/* The same chain built without frame pointers, as distributions build their code: %rbp
 * is an ordinary register there, and nofp_middle keeps a frame of its own without it. */
#define NOFP __attribute__((noinline, optimize("omit-frame-pointer")))

NOFP __attribute__((no_sanitize("null", "address"))) static void nofp_leaf(volatile int *p)
{
    *p = 42;
}

NOFP static void nofp_middle(volatile int *p)
{
    volatile uint64_t scratch[4] = {1, 2, 3, 4};
    nofp_leaf(p + scratch[0] - 1);
    __asm__ volatile("" ::: "memory");
}

NOFP static void nofp_outer(volatile int *p)
{
    /* Something in %rbp that is no frame pointer: a walk by frame pointer from here is
     * lost. */
    __asm__ volatile("xor %%ebp, %%ebp" ::: "rbp");
    nofp_middle(p);
    __asm__ volatile("" ::: "memory");
}

typedef void chain_fn(volatile int *);

/* Which of the three functions pc is in: the one starting closest below it (they are
 * small and may be laid out in any order), or NULL. */
static chain_fn *owner(void *pc)
{
    chain_fn *fns[] = {faulting, middle, outer};
    chain_fn *best = NULL;
    for (int i = 0; i < 3; i++)
        if ((uintptr_t)pc >= (uintptr_t)fns[i] && (uintptr_t)pc < (uintptr_t)fns[i] + 128 &&
            (best == NULL || (uintptr_t)fns[i] > (uintptr_t)best))
            best = fns[i];
    return best;
}

/* The index of the first entry inside fn, or -1. */
static int find(chain_fn *fn)
{
    for (int i = 0; i < n_pcs; i++)
        if (owner(pcs[i]) == fn)
            return i;
    return -1;
}

static void fault_and_check(void)
{
    volatile int *volatile null = NULL;
    if (sigsetjmp(back, 1) == 0)
        outer(null);
    cr_assert_geq(n_pcs, 4, "only %d frames", n_pcs);
    int f = find(faulting), m = find(middle), o = find(outer);
    cr_assert(f >= 1, "the faulting instruction is missing");
    cr_assert_eq(m, f + 1, "faulting's caller is not next");
    cr_assert_eq(o, m + 1, "middle's caller is not next");
}

Test(backtrace, from_a_fault_handler_on_the_thread_stack)
{
    install(0);
    fault_and_check();
}

Test(backtrace, from_a_fault_handler_on_an_alternate_stack)
{
    install(1);
    fault_and_check();
}

Test(backtrace, skip_drops_the_innermost_frames)
{
    void *all[16], *skipped[16];
    int n = prof_backtrace(all, 16, 0);
    int k = prof_backtrace(skipped, 16, 1);
    cr_assert_geq(n, 2);
    cr_assert_eq(k, n - 1);
    cr_assert_eq(skipped[1], all[2]);
    cr_assert_eq(prof_backtrace(all, 0, 0), 0);
    cr_assert_eq(prof_backtrace(all, 1, 0), 1);
}

Test(backtrace, a_corrupt_frame_pointer_ends_the_walk_without_a_fault)
{
    static uintptr_t fake[4];
    uintptr_t saved_fp;
    void *out[16];
    int n;
    /* Point this frame's saved frame pointer at garbage, walk, restore. */
    uintptr_t *fp = __builtin_frame_address(0);
    saved_fp = fp[0];
    fake[0] = 0xdead0000beef; /* not mapped */
    fake[1] = (uintptr_t)&faulting + 4;
    fp[0] = (uintptr_t)fake;
    n = prof_backtrace(out, 16, 0);
    fp[0] = saved_fp;
    cr_assert_leq(n, 3, "the walk went past the garbage: %d frames", n);
}

Test(backtrace, the_fd_variant_writes_one_line_per_frame)
{
    cr_assert_eq(pipe(pipe_fds), 0);
    install(1);
    fault_and_check();
    close(pipe_fds[1]);
    char text[8192] = "";
    ssize_t got = read(pipe_fds[0], text, sizeof(text) - 1);
    cr_assert_gt(got, 0);
    text[got] = '\0';
    int lines = 0;
    for (char *c = text; *c; c++)
        lines += *c == '\n';
    cr_assert_eq(lines, fd_frames, "%d lines for %d frames:\n%s", lines, fd_frames, text);
    cr_assert_gt(fd_frames, 3);
    cr_assert(strstr(text, "+0x") != NULL || strstr(text, "0x") == text, "%s", text);
}

/* The line number (0-based) in text of the first line starting with prefix, or -1. */
static int line_starting(const char *text, const char *prefix)
{
    int line = 0;
    for (const char *at = text; *at; line++) {
        if (strncmp(at, prefix, strlen(prefix)) == 0)
            return line;
        const char *nl = strchr(at, '\n');
        if (!nl)
            break;
        at = nl + 1;
    }
    return -1;
}

/* "path+0xOFF" of address a, as prof_backtrace_fd() writes it (return addresses minus 1). */
static void module_line(uintptr_t a, char *out, size_t cap)
{
    char path[4096];
    uint64_t off;
    cr_assert_eq(lp_unwind_module_at(a, path, sizeof(path), &off), 0);
    snprintf(out, cap, "%s+0x%llx", path, (unsigned long long)off);
}

Test(backtrace, a_leaf_without_a_frame_gets_its_caller_as_a_candidate_line)
{
    cr_assert_eq(lp_unwind_init(PROF_UNWIND_FP, NULL), 0);
    cr_assert_eq(pipe(pipe_fds), 0);
    install(0);
    volatile int *volatile null = NULL;
    if (sigsetjmp(back, 1) == 0)
        middle_of_leaf(null);
    close(pipe_fds[1]);
    char text[16384] = "";
    ssize_t got = read(pipe_fds[0], text, sizeof(text) - 1);
    cr_assert_gt(got, 0);
    text[got] = '\0';
    char leaf[4200], caller[4200], want[4300];
    module_line((uintptr_t)&faulting_leaf, leaf, sizeof(leaf));
    char *plus = strrchr(leaf, '+');
    *plus = '\0'; /* the module; the offset is the faulting instruction's */
    /* The candidate follows the faulting instruction's line; its address is the return
     * address into middle_of_leaf (minus 1). */
    int candidate = line_starting(text, "? ");
    cr_assert_geq(candidate, 1, "no candidate line:\n%s", text);
    const char *line = text;
    for (int i = 0; i < candidate; i++)
        line = strchr(line, '\n') + 1;
    uintptr_t ra = 0;
    cr_assert_eq(sscanf(line, "? %4199[^+]+0x%lx", caller, &ra), 2, "%s", line);
    module_line((uintptr_t)&middle_of_leaf, want, sizeof(want));
    uint64_t fn_off = strtoull(strrchr(want, '+') + 3, NULL, 16);
    cr_assert(ra > fn_off && ra < fn_off + 64, "the candidate is not in middle_of_leaf:\n%s",
              text);
    /* The array (taken by the same handler) has no candidates: the entry after the
     * faulting instruction is not that return address. */
    for (int i = 0; i + 1 < n_pcs; i++)
        if ((uintptr_t)pcs[i] >= (uintptr_t)&faulting_leaf &&
            (uintptr_t)pcs[i] < (uintptr_t)&faulting_leaf + 16)
            cr_assert_neq(lp_unwind_module_at((uintptr_t)pcs[i + 1], caller, sizeof(caller),
                                              &fn_off) == 0 && fn_off == ra + 1, 1,
                          "the array holds the unproven caller");
}

/* The function (of the three above) that pc is in, by the same rule as owner(), with
 * room for AddressSanitizer's instrumentation (make asan: nofp_middle is 472 bytes). */
static chain_fn *nofp_owner(uintptr_t pc)
{
    chain_fn *fns[] = {nofp_leaf, nofp_middle, nofp_outer};
    chain_fn *best = NULL;
    for (int i = 0; i < 3; i++)
        if (pc >= (uintptr_t)fns[i] && pc < (uintptr_t)fns[i] + 1024 &&
            (best == NULL || (uintptr_t)fns[i] > (uintptr_t)best))
            best = fns[i];
    return best;
}

/* With the tables built, the handler's backtrace on an alternate stack goes from the
 * faulting instruction through every caller, frame pointers or not, and writes no
 * candidate line: the tables prove each caller. */
Test(backtrace, through_code_without_frame_pointers_with_the_tables_built)
{
    cr_assert_eq(lp_unwind_init(PROF_UNWIND_AUTO, NULL), 0);
    lp_unwind_build_all();
    cr_assert_eq(pipe(pipe_fds), 0);
    install(1);
    volatile int *volatile null = NULL;
    if (sigsetjmp(back, 1) == 0)
        nofp_outer(null);
    close(pipe_fds[1]);
    char text[16384] = "";
    ssize_t got = read(pipe_fds[0], text, sizeof(text) - 1);
    cr_assert_gt(got, 0);
    text[got] = '\0';
    cr_expect_null(strstr(text, "? "), "a candidate line:\n%s", text);
    int at = -1;
    for (int i = 0; i < n_pcs && at < 0; i++)
        if (nofp_owner((uintptr_t)pcs[i]) == nofp_leaf)
            at = i;
    cr_assert_geq(at, 1, "the faulting instruction is missing (%d frames)", n_pcs);
    cr_assert_lt(at + 3, n_pcs, "the walk stops after the fault:\n%s", text);
    cr_expect_eq(nofp_owner((uintptr_t)pcs[at + 1] - 1), nofp_middle, "nofp_leaf's caller");
    cr_expect_eq(nofp_owner((uintptr_t)pcs[at + 2] - 1), nofp_outer, "nofp_middle's caller");
    /* And on to this test's own frames, past the frame pointer nofp_outer cleared. */
    Dl_info info;
    cr_expect(dladdr(pcs[at + 3], &info) != 0, "no frame after nofp_outer");
    cr_expect_eq(fd_frames, n_pcs, "the fd variant wrote %d frames, the array has %d", fd_frames,
                 n_pcs);
}
