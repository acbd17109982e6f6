/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Code that is gone while the profiler's code map still lists it: for the end-to-end tests
 * that no read whose address comes from a stack or a crashed context can fault. The
 * program copies a tiny function into fresh executable memory, calls dlopen() (through
 * which libprof rereads its code map, the region included), then unmaps the region behind
 * libprof's back, as glibc does with the modules it loads itself and a JIT does with its
 * code.
 *
 *   stalemap stack SECONDS  leaves a return address into the unmapped region at the stack
 *                           pointer of leaf_over_stale_word(), a leaf without a frame that
 *                           spins: a stepper that read the code before that "return
 *                           address" would fault. Prints "stalemap ok".
 *   stalemap crash          jumps into the unmapped region; its SIGSEGV handler writes a
 *                           backtrace with prof_backtrace_fd(1) (when libprof is loaded),
 *                           whose first frame is the unmapped pc, then exits 3.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int prof_backtrace_fd(int fd, int skip) __attribute__((weak));
void leaf_over_stale_word(uintptr_t stale, uint64_t n_iters);

/* mov %rdi, %rax; ret (x86_64): a function to copy; elsewhere the region stays unused. */
static const unsigned char tiny[] = {0x48, 0x89, 0xf8, 0xc3};

static void *make_and_unmap_code(void)
{
    unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        exit(1);
    memcpy(p, tiny, sizeof(tiny));
    void *h = dlopen("libz.so.1", RTLD_NOW); /* libprof rereads its map: p is code now */
    if (h)
        dlclose(h);
    munmap(p, 4096);
    return p;
}

#if defined(__x86_64__)
/* Pushes `stale` where its return address would be for a leaf that pushed nothing: the
 * stepper sees a frameless leaf whose word at sp is a "return address" into gone code. */
__asm__(".text\n"
        ".globl leaf_over_stale_word\n"
        ".type leaf_over_stale_word, @function\n"
        "leaf_over_stale_word:\n"
        "    .cfi_startproc\n"
        "    push %rdi\n"
        "    .cfi_def_cfa_offset 16\n"
        "    mov %rsi, %rax\n"
        "1:  dec %rax\n"
        "    jnz 1b\n"
        "    pop %rdi\n"
        "    .cfi_def_cfa_offset 8\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size leaf_over_stale_word, . - leaf_over_stale_word\n");
#else
static volatile uint64_t leaf_sink;
__attribute__((noipa)) void leaf_over_stale_word(uintptr_t stale, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        leaf_sink = stale + i;
}
#endif

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_segv(int sig)
{
    (void)sig;
    static const char head[] = "backtrace:\n";
    if (write(1, head, sizeof(head) - 1) < 0)
        _exit(4);
    if (prof_backtrace_fd)
        prof_backtrace_fd(1, 0);
    _exit(3);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "crash") == 0) {
        void *gone = make_and_unmap_code();
        signal(SIGSEGV, on_segv);
        ((void (*)(void))gone)();
        return 1;
    }
    double seconds = argc > 2 ? atof(argv[2]) : 1.0;
    uintptr_t gone = (uintptr_t)make_and_unmap_code() + 16; /* bytes before it lie in the region */
    double until = cpu_s() + seconds;
    while (cpu_s() < until)
        leaf_over_stale_word(gone, 1000000);
    puts("stalemap ok");
    return 0;
}
