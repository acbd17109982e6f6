/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A workload whose hot spots are function prologues and epilogues, where the frame pointer
 * still describes the caller's frame: hand-written x86_64 functions (top-level assembly,
 * with call frame information as compiled code has it) that spin
 *   - spin_in_prologue: between `push %rbp` and `mov %rsp,%rbp`;
 *   - spin_in_epilogue: after `pop %rbp`, before `ret`;
 *   - spin_at_entry: before `push %rbp` (nothing pushed yet);
 * and tiny_frame, a complete `push; mov; pop; ret` function called in a tight loop, so that
 * the pc lands on the prologue and epilogue instructions themselves. Each has one C caller
 * with a frame (call_prologue, ...). The end-to-end test checks where the caller is in the
 * stacks of each and that no other frame is. On other architectures the same names are
 * plain C functions (the test then only checks the path).
 *
 *   prologue [SECONDS]    process CPU seconds to burn, 1.2 by default
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

uint64_t spin_in_prologue(uint64_t n_iters);
uint64_t spin_in_epilogue(uint64_t n_iters);
uint64_t spin_at_entry(uint64_t n_iters);
uint64_t tiny_frame(uint64_t x);

#if defined(__x86_64__)
/* With call frame information, as compiled code has it: the reporter (and the unwinder)
 * may prove from it where each one's return address is. */
__asm__(".text\n"
        ".globl spin_in_prologue\n"
        ".type spin_in_prologue, @function\n"
        "spin_in_prologue:\n"
        "    .cfi_startproc\n"
        "    endbr64\n"
        "    push %rbp\n"
        "    .cfi_def_cfa_offset 16\n"
        "    .cfi_offset %rbp, -16\n"
        "    mov %rdi, %rax\n"
        "1:  dec %rax\n"
        "    jnz 1b\n"
        "    mov %rsp, %rbp\n"
        "    .cfi_def_cfa_register %rbp\n"
        "    pop %rbp\n"
        "    .cfi_def_cfa %rsp, 8\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size spin_in_prologue, . - spin_in_prologue\n"
        ".globl spin_in_epilogue\n"
        ".type spin_in_epilogue, @function\n"
        "spin_in_epilogue:\n"
        "    .cfi_startproc\n"
        "    endbr64\n"
        "    push %rbp\n"
        "    .cfi_def_cfa_offset 16\n"
        "    .cfi_offset %rbp, -16\n"
        "    mov %rsp, %rbp\n"
        "    .cfi_def_cfa_register %rbp\n"
        "    pop %rbp\n"
        "    .cfi_def_cfa %rsp, 8\n"
        "    mov %rdi, %rax\n"
        "2:  dec %rax\n"
        "    jnz 2b\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size spin_in_epilogue, . - spin_in_epilogue\n"
        ".globl spin_at_entry\n"
        ".type spin_at_entry, @function\n"
        "spin_at_entry:\n"
        "    .cfi_startproc\n"
        "    endbr64\n"
        "    mov %rdi, %rax\n"
        "3:  dec %rax\n"
        "    jnz 3b\n"
        "    push %rbp\n"
        "    .cfi_def_cfa_offset 16\n"
        "    .cfi_offset %rbp, -16\n"
        "    mov %rsp, %rbp\n"
        "    .cfi_def_cfa_register %rbp\n"
        "    pop %rbp\n"
        "    .cfi_def_cfa %rsp, 8\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size spin_at_entry, . - spin_at_entry\n"
        ".globl tiny_frame\n"
        ".type tiny_frame, @function\n"
        "tiny_frame:\n"
        "    .cfi_startproc\n"
        "    endbr64\n"
        "    push %rbp\n"
        "    .cfi_def_cfa_offset 16\n"
        "    .cfi_offset %rbp, -16\n"
        "    mov %rsp, %rbp\n"
        "    .cfi_def_cfa_register %rbp\n"
        "    lea 1(%rdi), %rax\n"
        "    pop %rbp\n"
        "    .cfi_def_cfa %rsp, 8\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size tiny_frame, . - tiny_frame\n");
#else
static volatile uint64_t spin_sink;
__attribute__((noipa)) uint64_t spin_in_prologue(uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        spin_sink = i;
    return 0;
}
__attribute__((noipa)) uint64_t spin_in_epilogue(uint64_t n)
{
    return spin_in_prologue(n);
}
__attribute__((noipa)) uint64_t spin_at_entry(uint64_t n)
{
    return spin_in_prologue(n);
}
__attribute__((noipa)) uint64_t tiny_frame(uint64_t x)
{
    return x + 1;
}
#endif

static volatile uint64_t sink;

__attribute__((noipa)) static void call_prologue(void)
{
    sink += spin_in_prologue(2000000);
}

__attribute__((noipa)) static void call_epilogue(void)
{
    sink += spin_in_epilogue(2000000);
}

__attribute__((noipa)) static void call_entry(void)
{
    sink += spin_at_entry(2000000);
}

__attribute__((noipa)) static void call_tiny(void)
{
    uint64_t x = sink;
    for (int i = 0; i < 1000000; i++)
        x = tiny_frame(x);
    sink = x;
}

static double process_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? strtod(argv[1], NULL) : 1.2;
    if (!(seconds > 0.0) || argc > 2) {
        fprintf(stderr, "usage: prologue [SECONDS]\n");
        return 2;
    }
    while (process_cpu_s() < seconds) {
        call_prologue();
        call_epilogue();
        call_entry();
        call_tiny();
    }
    return 0;
}
