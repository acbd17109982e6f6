/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A minimal stand-in for Criterion's test macros, so that the unit tests of the steppers
 * (tests/arch/test_leaf.c, tests/sampler/test_walk_fp.c, test_probe.c, test_codemap.c)
 * also build for aarch64 with a cross compiler and run under qemu-user, where no arm64
 * Criterion is installed (`make test-aarch64`). It supports what those files use:
 * Test(suite, name), TestSuite(suite, .init = fn) and the cr_assert/cr_expect family, all
 * fatal. tests/arch/mini/main.c runs each test in a child process, as Criterion does.
 * Only the -I path of that target finds this file.
 */
#ifndef PROF_TESTS_ARCH_MINI_CRITERION_H
#define PROF_TESTS_ARCH_MINI_CRITERION_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mini_test {
    const char *suite;      /* the suite's name */
    const char *name;       /* the test's name */
    void (*fn)(void);       /* its body */
    void (**init)(void);    /* the suite's .init, through a weak pointer (may be NULL) */
    struct mini_test *next; /* registration list, built by constructors */
};

struct mini_suite {
    void (*init)(void); /* .init */
};

extern struct mini_test *mini_tests;

#define Test(suite, name, ...)                                                             \
    extern void (*mini_init_##suite)(void) __attribute__((weak));                         \
    static void suite##_##name(void);                                                      \
    static struct mini_test mini_t_##suite##_##name = {#suite, #name, suite##_##name,      \
                                                       &mini_init_##suite, NULL};          \
    __attribute__((constructor)) static void mini_reg_##suite##_##name(void)               \
    {                                                                                      \
        mini_t_##suite##_##name.next = mini_tests;                                         \
        mini_tests = &mini_t_##suite##_##name;                                             \
    }                                                                                      \
    static void suite##_##name(void)

#define TestSuite(suite, ...)                                                              \
    static struct mini_suite mini_s_##suite = {__VA_ARGS__};                               \
    void (*mini_init_##suite)(void);                                                       \
    __attribute__((constructor)) static void mini_suite_##suite(void)                      \
    {                                                                                      \
        mini_init_##suite = mini_s_##suite.init;                                           \
    }

/* Reports a failed assertion and ends the test's process. */
static inline void mini_fail(const char *file, int line, const char *text)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, text);
    exit(1);
}

#define cr_assert(cond, ...) ((cond) ? (void)0 : mini_fail(__FILE__, __LINE__, #cond))
#define cr_assert_not(cond, ...) cr_assert(!(cond))
#define cr_assert_eq(a, b, ...) cr_assert((a) == (b))
#define cr_assert_neq(a, b, ...) cr_assert((a) != (b))
#define cr_assert_gt(a, b, ...) cr_assert((a) > (b))
#define cr_assert_geq(a, b, ...) cr_assert((a) >= (b))
#define cr_assert_lt(a, b, ...) cr_assert((a) < (b))
#define cr_assert_leq(a, b, ...) cr_assert((a) <= (b))
#define cr_assert_null(p, ...) cr_assert((p) == NULL)
#define cr_assert_not_null(p, ...) cr_assert((p) != NULL)
#define cr_assert_str_eq(a, b, ...) cr_assert(strcmp((a), (b)) == 0)
#define cr_expect cr_assert
#define cr_expect_eq cr_assert_eq
#define cr_expect_geq cr_assert_geq

#endif
