/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The overhead benchmark's workload (bench/overhead.py, bench/rates.py): THREADS worker
 * threads each recurse DEPTH frames deep through one noipa function, then burn CPU at the
 * bottom in a dependent integer chain, so that every sample a profiler takes walks a stack
 * of DEPTH frames plus the few below (the thread's start routine). The work is a fixed
 * number of iterations per thread, so that runs are identical and their wall and CPU times
 * compare across runs and profilers:
 *
 *   deep DEPTH THREADS SECONDS [RESULT_FILE]      calibrate: ITERS that take SECONDS of CPU
 *                                                 on this machine now, then do them
 *   deep DEPTH THREADS -i ITERS [RESULT_FILE]     do ITERS iterations per thread
 *
 * RESULT_FILE ("-" is stdout; nothing is written without it) gets, at the end:
 *
 *   iterations 123456789  per thread
 *   cpu_s 2.0031          CLOCK_PROCESS_CPUTIME_ID at the end of main (profilers' threads
 *                         inside the process included, a separate process's not)
 *   maxrss_kb 1484        VmHWM of /proc/self/status: this program's peak resident set
 *                         (getrusage's ru_maxrss would carry the peak of the process that
 *                         forked it over exec, the benchmark's Python for one)
 *
 * Main only starts and joins the workers, so the one- and two-thread runs do the same
 * work per thread; on a machine with two idle cores their wall times are alike. The
 * recursion keeps its frame (noipa, work after the call, no sibling calls), and the build
 * keeps frame pointers (the Makefile's WORK_CFLAGS).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KEEP __attribute__((noipa))
#define MAX_DEPTH 4096
#define MAX_THREADS 64
#define CALIBRATION_ITERS 20000000u

uint64_t burn(uint64_t n_iters, uint64_t seed);
uint64_t descend(unsigned depth, uint64_t n_iters, uint64_t seed);

static volatile uint64_t sink; /* results end here so that no work is dead */

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A dependent mixing chain: neither vectorizable nor reducible to a closed form. */
KEEP uint64_t burn(uint64_t n_iters, uint64_t seed)
{
    uint64_t x = seed;
    for (uint64_t i = 0; i < n_iters; i++) {
        x ^= x >> 31;
        x *= 0x9e3779b97f4a7c15ull;
        x += i;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

/* One frame per level; the xor after the call keeps it from becoming a tail call. */
KEEP uint64_t descend(unsigned depth, uint64_t n_iters, uint64_t seed)
{
    if (depth <= 1)
        return burn(n_iters, seed);
    return descend(depth - 1, n_iters, seed + depth) ^ depth;
}

struct worker {
    pthread_t thread;
    unsigned depth;   /* frames from descend down to burn */
    uint64_t n_iters; /* work of this thread */
    uint64_t result;  /* written by the worker, read after join */
};

static void *work(void *arg)
{
    struct worker *w = arg;
    w->result = descend(w->depth, w->n_iters, (uint64_t)(uintptr_t)w);
    return NULL;
}

/* Iterations that take `seconds` of this thread's CPU, from a short timed run. */
static uint64_t calibrate(double seconds)
{
    uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    sink ^= burn(CALIBRATION_ITERS, 7);
    uint64_t ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
    if (ns == 0)
        ns = 1;
    return (uint64_t)(seconds * 1e9 * CALIBRATION_ITERS / (double)ns) + 1;
}

/* The peak resident set of this program's memory since its exec, in KB; -1 if unknown. */
static long peak_rss_kb(void)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

static int write_result(const char *path, uint64_t n_iters)
{
    long rss_kb = peak_rss_kb();
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f) {
        fprintf(stderr, "deep: %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "iterations %" PRIu64 "\n", n_iters);
    fprintf(f, "cpu_s %.6f\n", (double)clock_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e9);
    fprintf(f, "maxrss_kb %ld\n", rss_kb);
    if (f == stdout)
        return fflush(f) == 0 ? 0 : -1;
    return fclose(f) == 0 ? 0 : -1;
}

static void usage(void)
{
    fprintf(stderr, "usage: deep DEPTH THREADS SECONDS [RESULT_FILE]\n"
                    "       deep DEPTH THREADS -i ITERATIONS [RESULT_FILE]\n");
    exit(2);
}

static unsigned long parse_ul(const char *s, unsigned long lo, unsigned long hi)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi)
        usage();
    return v;
}

int main(int argc, char **argv)
{
    if (argc < 4)
        usage();
    unsigned depth = (unsigned)parse_ul(argv[1], 1, MAX_DEPTH);
    unsigned n_threads = (unsigned)parse_ul(argv[2], 1, MAX_THREADS);
    uint64_t n_iters;
    int argi = 3;
    if (strcmp(argv[argi], "-i") == 0) {
        if (argi + 1 >= argc)
            usage();
        n_iters = parse_ul(argv[argi + 1], 1, ~0ul);
        argi += 2;
    } else {
        char *end;
        double seconds = strtod(argv[argi], &end);
        if (*end || !(seconds > 0.0 && seconds < 3600.0))
            usage();
        n_iters = calibrate(seconds);
        argi++;
    }
    const char *result = argi < argc ? argv[argi++] : NULL;
    if (argi < argc)
        usage();

    static struct worker workers[MAX_THREADS];
    for (unsigned i = 0; i < n_threads; i++) {
        workers[i].depth = depth;
        workers[i].n_iters = n_iters;
        int rc = pthread_create(&workers[i].thread, NULL, work, &workers[i]);
        if (rc != 0) {
            fprintf(stderr, "deep: pthread_create: %s\n", strerror(rc));
            return 1;
        }
    }
    for (unsigned i = 0; i < n_threads; i++) {
        pthread_join(workers[i].thread, NULL);
        sink ^= workers[i].result;
    }
    if (result && write_result(result, n_iters) != 0)
        return 1;
    return 0;
}
