/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A stale return address where a leaf's stack pointer points: for the end-to-end test
 * that no guess becomes a frame. caller_with_slot() calls deep_alloc(), which calls
 * malloc() and free() (their return addresses into deep_alloc land one slot below its
 * frame), then leaf_with_slot(), a framed leaf that reserves that very slot
 * (`sub $8,%rsp`) and never writes it while it spins: the word at its stack pointer is a
 * code address that follows a call, into a function that never calls it. Every stack of
 * leaf_with_slot must be main;caller_with_slot;leaf_with_slot.
 *
 * x86_64 (hand-written, with call frame information); elsewhere plain C.
 *
 *   staleslot [SECONDS]    process CPU seconds, 1 by default
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void deep_alloc(void);
void leaf_with_slot(uint64_t n_iters);
void caller_with_slot(double seconds);

#if defined(__x86_64__)
__asm__(".text\n"
        ".globl deep_alloc\n"
        ".type deep_alloc, @function\n"
        "deep_alloc:\n"
        "    .cfi_startproc\n"
        "    endbr64\n"
        "    push %rbp\n"
        "    .cfi_def_cfa_offset 16\n"
        "    .cfi_offset %rbp, -16\n"
        "    mov %rsp, %rbp\n"
        "    .cfi_def_cfa_register %rbp\n"
        "    mov $64, %edi\n"
        "    call malloc@PLT\n"
        "    mov %rax, %rdi\n"
        "    call free@PLT\n"
        "    pop %rbp\n"
        "    .cfi_def_cfa %rsp, 8\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size deep_alloc, . - deep_alloc\n"
        ".globl leaf_with_slot\n"
        ".type leaf_with_slot, @function\n"
        "leaf_with_slot:\n"
        "    .cfi_startproc\n"
        "    endbr64\n"
        "    push %rbp\n"
        "    .cfi_def_cfa_offset 16\n"
        "    .cfi_offset %rbp, -16\n"
        "    mov %rsp, %rbp\n"
        "    .cfi_def_cfa_register %rbp\n"
        "    sub $8, %rsp\n"
        "    mov %rdi, %rax\n"
        "1:  dec %rax\n"
        "    jnz 1b\n"
        "    leave\n"
        "    .cfi_def_cfa %rsp, 8\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size leaf_with_slot, . - leaf_with_slot\n");
#else
static volatile uint64_t leaf_sink;
__attribute__((noipa)) void deep_alloc(void)
{
    free(malloc(64));
}
__attribute__((noipa)) void leaf_with_slot(uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        leaf_sink = i;
}
#endif

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noipa)) void caller_with_slot(double seconds)
{
    double until = cpu_s() + seconds;
    while (cpu_s() < until) {
        deep_alloc();
        leaf_with_slot(20000);
    }
}

int main(int argc, char **argv)
{
    caller_with_slot(argc > 1 ? atof(argv[1]) : 1.0);
    puts("staleslot ok");
    return 0;
}
