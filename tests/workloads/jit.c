/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A workload that JIT-compiles: it maps anonymous memory, writes into it a small function
 * with a frame-pointer prologue that calls back into hot_loop (a C function of this
 * program), makes it executable, and names it in /tmp/perf-PID.map as a JIT compiler does
 * for perf ("START SIZE jit::hot_caller", hex without 0x). Then main -> drive ->
 * jit::hot_caller -> hot_loop burns CPU, so that every sample's stack crosses the JIT code
 * by frame pointer. The end-to-end tests check that `prof report` names that frame from
 * the map, between drive and hot_loop. x86_64 only (the code bytes); elsewhere it says so
 * and exits 3. The code is mapped after libprof read the mappings: the first walk that
 * meets it makes libprof read them again (and stops there, truncated, until it has).
 *
 *   jit [SECONDS]    process CPU seconds to burn, 0.5 by default
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef uint64_t (*jit_fn)(uint64_t n_iters, uint64_t x);

uint64_t hot_loop(uint64_t n_iters, uint64_t x);
uint64_t drive(jit_fn fn, double seconds, uint64_t x);

static volatile uint64_t sink;

__attribute__((noinline)) uint64_t hot_loop(uint64_t n_iters, uint64_t x)
{
    for (uint64_t i = 0; i < n_iters; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

/* Writes the JIT function: push %rbp; mov %rsp,%rbp; movabs $hot_loop,%rax; call *%rax;
 * pop %rbp; ret. Its arguments pass through untouched in %rdi and %rsi. */
static size_t emit(uint8_t *code)
{
    static const uint8_t prologue[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8};
    static const uint8_t epilogue[] = {0xff, 0xd0, 0x5d, 0xc3};
    uint64_t target = (uint64_t)(uintptr_t)&hot_loop;
    size_t n = 0;
    memcpy(code + n, prologue, sizeof(prologue));
    n += sizeof(prologue);
    memcpy(code + n, &target, sizeof(target));
    n += sizeof(target);
    memcpy(code + n, epilogue, sizeof(epilogue));
    return n + sizeof(epilogue);
}

/* Names the code in /tmp/perf-PID.map, as perf expects it. */
static int write_perf_map(const void *code, size_t size)
{
    char path[64];
    snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "%lx %zx jit::hot_caller\n", (unsigned long)(uintptr_t)code, size);
    return fclose(f);
}

static jit_fn compile(void)
{
    long page = sysconf(_SC_PAGESIZE);
    uint8_t *code =
        mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED)
        return NULL;
    size_t size = emit(code);
    if (mprotect(code, (size_t)page, PROT_READ | PROT_EXEC) != 0 || write_perf_map(code, size) != 0)
        return NULL;
    jit_fn fn;
    void *p = code;
    memcpy(&fn, &p, sizeof(fn));
    return fn;
}

static double process_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) uint64_t drive(jit_fn fn, double seconds, uint64_t x)
{
    double end = process_cpu_s() + seconds;
    while (process_cpu_s() < end)
        x = fn(1000000, x);
    return x;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? strtod(argv[1], NULL) : 0.5;
    if (!(seconds > 0.0) || argc > 2) {
        fprintf(stderr, "usage: jit [SECONDS]\n");
        return 2;
    }
#if !defined(__x86_64__)
    fprintf(stderr, "jit: x86_64 only\n");
    return 3;
#endif
    jit_fn fn = compile();
    if (fn == NULL) {
        perror("jit: cannot compile");
        return 1;
    }
    sink = drive(fn, seconds, 88172645463325252ull);
    return 0;
}
