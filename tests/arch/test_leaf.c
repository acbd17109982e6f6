/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the interrupted-leaf detection in arch/<arch>.h: which instruction bytes at
 * a pc mean the frame pointer still describes the caller's frame, and which bytes before
 * a return address are a call instruction. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "arch/arch.h"

#define STATE(...) arch_leaf_state((const uint8_t[]){__VA_ARGS__}, \
                                   sizeof((const uint8_t[]){__VA_ARGS__}))

#if defined(__x86_64__)
Test(arch_leaf, entry_with_endbr64_then_push_has_the_return_address_at_sp)
{
    cr_assert_eq(STATE(0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5), ARCH_LEAF_RA_AT_SP);
}

Test(arch_leaf, push_rbp_then_mov_has_the_return_address_at_sp)
{
    cr_assert_eq(STATE(0x55, 0x48, 0x89, 0xe5, 0x90), ARCH_LEAF_RA_AT_SP);
}

Test(arch_leaf, mov_rsp_rbp_has_the_return_address_one_word_up)
{
    cr_assert_eq(STATE(0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10), ARCH_LEAF_RA_AT_SP1);
}

Test(arch_leaf, ret_and_rep_ret_have_the_return_address_at_sp)
{
    cr_assert_eq(STATE(0xc3), ARCH_LEAF_RA_AT_SP);
    cr_assert_eq(STATE(0xf3, 0xc3), ARCH_LEAF_RA_AT_SP);
}

Test(arch_leaf, other_instructions_and_short_reads_say_nothing)
{
    cr_assert_eq(STATE(0x48, 0xff, 0xc8), ARCH_LEAF_UNKNOWN);        /* dec %rax */
    cr_assert_eq(STATE(0x55, 0x41, 0x57), ARCH_LEAF_UNKNOWN);        /* push %rbp; push r15 */
    cr_assert_eq(STATE(0xf3, 0x0f, 0x1e, 0xfa), ARCH_LEAF_UNKNOWN);  /* endbr64 alone */
    cr_assert_eq(STATE(0x48, 0x89), ARCH_LEAF_UNKNOWN);              /* cut short */
    cr_assert_eq(arch_leaf_state((const uint8_t[]){0xc3}, 0), ARCH_LEAF_UNKNOWN);
}

/* The 8 bytes before a return address, ending with the given instruction. */
static int call_site(const uint8_t *insn, unsigned len)
{
    uint8_t before[ARCH_CALL_PEEK] = {0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc};
    for (unsigned i = 0; i < len; i++)
        before[ARCH_CALL_PEEK - len + i] = insn[i];
    return arch_is_call_site(before);
}
#define CALL_SITE(...) call_site((const uint8_t[]){__VA_ARGS__}, \
                                 sizeof((const uint8_t[]){__VA_ARGS__}))

Test(arch_leaf, recognizes_the_call_forms_compilers_emit)
{
    cr_assert(CALL_SITE(0xe8, 0x10, 0x20, 0x00, 0x00));             /* call rel32 */
    cr_assert(CALL_SITE(0xff, 0xd0));                               /* call *%rax */
    cr_assert(CALL_SITE(0x41, 0xff, 0xd3));                         /* call *%r11 */
    cr_assert(CALL_SITE(0xff, 0x15, 0x01, 0x02, 0x03, 0x04));       /* call *x(%rip) */
    cr_assert(CALL_SITE(0xff, 0x50, 0x08));                         /* call *8(%rax) */
    cr_assert(CALL_SITE(0xff, 0x54, 0x24, 0x08));                   /* call *8(%rsp) */
    cr_assert(CALL_SITE(0xff, 0x90, 0x00, 0x01, 0x00, 0x00));       /* call *256(%rax) */
    cr_assert(CALL_SITE(0xff, 0x10));                               /* call *(%rax) */
}

Test(arch_leaf, rejects_what_is_not_a_call)
{
    cr_assert_not(CALL_SITE(0xcc));                   /* padding before a function */
    cr_assert_not(CALL_SITE(0x48, 0x89, 0xe5));       /* mov %rsp,%rbp */
    cr_assert_not(CALL_SITE(0xff, 0xe0));             /* jmp *%rax (ff /4) */
    cr_assert_not(CALL_SITE(0xff, 0x50, 0x08, 0x90)); /* a call, then one more byte */
    cr_assert_not(CALL_SITE(0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00));
}
#elif defined(__aarch64__)
#define INSN(w) (uint8_t)(w), (uint8_t)((w) >> 8), (uint8_t)((w) >> 16), (uint8_t)((w) >> 24)

Test(arch_leaf, stp_mov_and_ret_leave_the_return_address_in_lr)
{
    cr_assert_eq(STATE(INSN(0xa9bf7bfdu)), ARCH_LEAF_RA_IN_LR); /* stp x29, x30, [sp,#-16]! */
    cr_assert_eq(STATE(INSN(0xa9be7bfdu)), ARCH_LEAF_RA_IN_LR); /* stp x29, x30, [sp,#-32]! */
    cr_assert_eq(STATE(INSN(0x910003fdu)), ARCH_LEAF_RA_IN_LR); /* mov x29, sp */
    cr_assert_eq(STATE(INSN(0xd65f03c0u)), ARCH_LEAF_RA_IN_LR); /* ret */
}

Test(arch_leaf, other_instructions_and_short_reads_say_nothing)
{
    cr_assert_eq(STATE(INSN(0xd503201fu)), ARCH_LEAF_UNKNOWN);  /* nop */
    cr_assert_eq(STATE(INSN(0xa8c17bfdu)), ARCH_LEAF_UNKNOWN);  /* ldp x29, x30, [sp], #16 */
    cr_assert_eq(STATE(0xc0, 0x03, 0x5f), ARCH_LEAF_UNKNOWN);   /* cut short */
}

Test(arch_leaf, recognizes_bl_and_blr)
{
    cr_assert(arch_is_call_site((const uint8_t[]){0, 0, 0, 0, INSN(0x94000010u)}));
    cr_assert(arch_is_call_site((const uint8_t[]){0, 0, 0, 0, INSN(0xd63f0200u)}));
    cr_assert_not(arch_is_call_site((const uint8_t[]){0, 0, 0, 0, INSN(0xd61f0200u)}));
    cr_assert_not(arch_is_call_site((const uint8_t[]){0, 0, 0, 0, INSN(0xd503201fu)}));
}
#endif
