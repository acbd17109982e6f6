/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The stack-walk benchmark behind `make bench` (bench/walk.sh runs it): the cost of the
 * fault-proof probe (sampler/probe.c) per read, and of each stepper per frame at stack
 * depths 16, 64 and 256: the walk by frame pointers (sampler/walk.c, PROF_UNWIND=fp), by
 * unwind tables (the same walk with this process's tables built, PROF_UNWIND=auto) and,
 * when built with libunwind, the libunwind stepper (sampler/walk_unw.c), all walking this
 * thread's real stack from a captured context, outside any signal handler.
 *
 *   walk [ROUNDS]    frame-pointer walks per batch and depth (2000 by default; libunwind
 *                    does a tenth as many); five batches, the best one counts
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>

#include "arch/arch.h"
#include "include/libprof/prof_format.h"
#include "libprof/unwind.h"
#include "sampler/probe.h"
#include "sampler/walk.h"
#ifdef PROF_HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "sampler/walk_unw.h"
#endif

#define MAX_FRAMES 1024

static unsigned rounds = 2000;
static struct smp_stack bounds;
static volatile uint64_t sink;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

struct result {
    double ns_per_walk;
    unsigned frames;
};

/* The best of five batches of walks in mode (SMP_WALK_*): the machine may be busy. */
static void time_walks(const struct cmn_fp_regs *regs, unsigned mode, struct result *r,
                       unsigned batch)
{
    static uint64_t frames[MAX_FRAMES];
    struct smp_walk_out out;
    double t0 = now_ns();
    for (unsigned i = 0; i < rounds; i++)
        r->frames = smp_walk(regs, &bounds, frames, MAX_FRAMES, mode, &out);
    double t = (now_ns() - t0) / rounds;
    if (batch == 0 || t < r->ns_per_walk)
        r->ns_per_walk = t;
}

__attribute__((noinline)) static void measure(struct result *fp, struct result *tab,
                                              struct result *unw)
{
    ucontext_t uc;
    getcontext(&uc);
    struct cmn_fp_regs regs = {.pc = arch_pc(&uc), .sp = arch_sp(&uc), .fp = arch_fp(&uc),
                            .lr = arch_lr(&uc)};
    unw->ns_per_walk = 1e30;
    unw->frames = 0;
    for (unsigned batch = 0; batch < 5; batch++) {
        time_walks(&regs, SMP_WALK_FP, fp, batch);
        time_walks(&regs, SMP_WALK_AUTO, tab, batch);
#ifdef PROF_HAVE_LIBUNWIND
        static uint64_t frames[MAX_FRAMES];
        uint8_t why;
        double t, t0 = now_ns();
        for (unsigned i = 0; i < rounds / 10 + 1; i++)
            unw->frames = smp_walk_unw(&uc, &regs, &bounds, frames, MAX_FRAMES, &why);
        t = (now_ns() - t0) / (rounds / 10 + 1);
        unw->ns_per_walk = t < unw->ns_per_walk ? t : unw->ns_per_walk;
#endif
    }
}

/* Recurses `depth` framed calls, then measures. */
__attribute__((noinline, optimize("no-omit-frame-pointer"))) static void
recurse(unsigned depth, struct result *fp, struct result *tab, struct result *unw)
{
    if (depth == 0)
        measure(fp, tab, unw);
    else
        recurse(depth - 1, fp, tab, unw);
    sink++;
}

/* The best of five batches of 20000 calls, in ns per call. */
static double time_probe(int kind)
{
    uint64_t w, v = 42;
    double best = 1e30;
    for (int batch = 0; batch < 5; batch++) {
        double t0 = now_ns();
        for (unsigned i = 0; i < 20000; i++) {
            if (kind == 0)
                smp_probe_read(&w, (uintptr_t)&v, sizeof(w));
            else if (kind == 1)
                smp_probe_read(&w, 8, sizeof(w));
            else
                sink += (uint64_t)smp_probe_readable8((uintptr_t)&v);
        }
        double t = (now_ns() - t0) / 20000;
        best = t < best ? t : best;
    }
    return best;
}

static void bench_probe(void)
{
    printf("probe: process_vm_readv %.0f ns (readable), %.0f ns (unmapped); "
           "rt_sigprocmask check %.0f ns\n", time_probe(0), time_probe(1), time_probe(2));
}

int main(int argc, char **argv)
{
    if (argc > 1)
        rounds = (unsigned)strtoul(argv[1], NULL, 10);
    pthread_attr_t attr;
    void *addr;
    size_t size;
    pthread_getattr_np(pthread_self(), &attr);
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    bounds = (struct smp_stack){.lo = (uintptr_t)addr, .hi = (uintptr_t)addr + size};
    smp_probe_init();
#ifdef PROF_HAVE_LIBUNWIND
    /* The library dlopens libunwind; the benchmark links it and hands over the same three
     * entry points. */
    smp_walk_unw_set_api((void *)unw_init_local2, (void *)unw_step, (void *)unw_get_reg,
                         (void *)unw_get_proc_info);
    smp_unw_enabled = 1;
#endif
    /* This process's unwind tables, as the library builds them. */
    lp_unwind_init(PROF_UNWIND_AUTO, NULL);
    lp_unwind_build_all();
    bench_probe();
    printf("%-6s %-10s %8s %12s %12s\n", "depth", "stepper", "frames", "ns/walk", "ns/frame");
    static const unsigned depths[] = {16, 64, 256};
    for (unsigned d = 0; d < 3; d++) {
        struct result fp, tab, unw;
        recurse(depths[d], &fp, &tab, &unw);
        printf("%-6u %-10s %8u %12.0f %12.1f\n", depths[d], "fp", fp.frames, fp.ns_per_walk,
               fp.ns_per_walk / fp.frames);
        printf("%-6u %-10s %8u %12.0f %12.1f\n", depths[d], "tables", tab.frames,
               tab.ns_per_walk, tab.ns_per_walk / tab.frames);
        if (unw.frames > 0)
            printf("%-6u %-10s %8u %12.0f %12.1f\n", depths[d], "libunwind", unw.frames,
                   unw.ns_per_walk, unw.ns_per_walk / unw.frames);
    }
    return 0;
}
