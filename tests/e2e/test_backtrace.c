/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end test of the public backtrace API: tests/workloads/crasher.c crashes on
 * purpose, its SIGSEGV handler (on an alternate signal stack) writes the stack with
 * prof_backtrace_fd(), and `prof symbolize` must turn that into the crashing function at
 * the crashing line, then its callers, up to main. Without libprof the program runs on
 * (its weak reference is null).
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/support.h"

TestSuite(e2e_backtrace, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

/* The 1-based number of the line of file holding mark, or 0. */
static unsigned line_of(const char *file, const char *mark)
{
    char *text = e2e_read_file(file, NULL);
    cr_assert_not_null(text, "cannot read %s", file);
    char *at = strstr(text, mark);
    unsigned line = 0;
    if (at != NULL) {
        line = 1;
        for (char *c = text; c < at; c++)
            line += *c == '\n';
    }
    free(text);
    return line;
}

Test(e2e_backtrace, a_crash_handler_backtrace_symbolizes_to_the_crashing_line)
{
    struct e2e_proc p;
    struct e2e_opts o = {.preload = 1,
                         .env = E2E_ARGV(e2e_env("PROF_OUTPUT", e2e_path("crash.prof")))};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("crasher")));
    cr_assert_eq(p.status, 3, "crasher exited %d:\n%s%s", p.status, p.out, p.err);
    cr_assert_eq(strncmp(p.out, "backtrace:\n", 11), 0, "output:\n%s", p.out);
    e2e_write_file(e2e_path("bt.txt"), p.out, p.out_len);
    e2e_proc_free(&p);

    e2e_run(&p, &(struct e2e_opts){0}, E2E_ARGV(E2E_PROF, "symbolize", e2e_path("bt.txt")));
    cr_assert_eq(p.status, 0, "prof symbolize exited %d:\n%s", p.status, p.err);
    cr_log_info("symbolized:\n%s", p.out);

    /* "crash_here FILE:LINE", then crash_outer, then (maybe after inlined lines) main. */
    char *here = strstr(p.out, "\ncrash_here ");
    cr_assert_not_null(here, "no crash_here frame:\n%s", p.out);
    char file[1024];
    unsigned line;
    cr_assert_eq(sscanf(here + 1, "crash_here %1023[^:]:%u", file, &line), 2);
    cr_assert_eq(line, line_of(file, "/* CRASH LINE */"), "crash_here at line %u", line);
    char *outer = strchr(here + 1, '\n');
    cr_assert(outer != NULL && strncmp(outer, "\ncrash_outer ", 13) == 0,
              "crash_outer does not follow crash_here:\n%s", p.out);
    cr_assert(strstr(outer, "\nmain ") != NULL, "main is missing:\n%s", p.out);
    e2e_proc_free(&p);
}

/* A crash in code built without frame pointers, a frameless leaf called by a function
 * that cleared %rbp, after 0.3 s of work there: libprof sampled the program and built its
 * unwind table meanwhile, and the handler's backtrace follows it, with no candidate line,
 * down to the C library's start. */
Test(e2e_backtrace, a_crash_in_code_without_frame_pointers_has_the_true_chain)
{
    struct e2e_proc p;
    struct e2e_opts o = {.preload = 1,
                         .env = E2E_ARGV(e2e_env("PROF_OUTPUT", e2e_path("crash.prof")))};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("crasher"), "nofp"));
    cr_assert_eq(p.status, 3, "crasher exited %d:\n%s%s", p.status, p.out, p.err);
    cr_expect_null(strstr(p.out, "? "), "a candidate line:\n%s", p.out);
    e2e_write_file(e2e_path("bt.txt"), p.out, p.out_len);
    e2e_proc_free(&p);
    e2e_run(&p, &(struct e2e_opts){0}, E2E_ARGV(E2E_PROF, "symbolize", e2e_path("bt.txt")));
    cr_assert_eq(p.status, 0, "prof symbolize exited %d:\n%s", p.status, p.err);
    cr_log_info("symbolized:\n%s", p.out);
    char *leaf = strstr(p.out, "\ncrash_nofp_leaf ");
    cr_assert_not_null(leaf, "no crash_nofp_leaf frame:\n%s", p.out);
    char file[1024];
    unsigned line;
    cr_assert_eq(sscanf(leaf + 1, "crash_nofp_leaf %1023[^:]:%u", file, &line), 2);
    cr_expect_eq(line, line_of(file, "/* NOFP CRASH LINE */"), "crash_nofp_leaf at line %u",
                 line);
    const char *next[] = {"\ncrash_nofp_outer ", "\nmain ", "\n__libc_start_call_main "};
    const char *at = leaf + 1;
    for (size_t i = 0; i < sizeof(next) / sizeof(next[0]); i++) {
        const char *nl = strchr(at, '\n');
        /* main may be followed by libprof's trampoline before libc's start code. */
        if (i == 2 && nl != NULL && strncmp(nl, "\nmain_trampoline ", 17) == 0)
            nl = strchr(nl + 1, '\n');
        cr_assert(nl != NULL && strncmp(nl, next[i], strlen(next[i])) == 0,
                  "%s is not next:\n%s", next[i] + 1, p.out);
        at = nl + 1;
    }
    e2e_proc_free(&p);
}

Test(e2e_backtrace, without_libprof_the_weak_reference_is_null)
{
    struct e2e_proc p;
    e2e_run(&p, &(struct e2e_opts){0}, E2E_ARGV(E2E_WORKLOAD("crasher")));
    cr_assert_eq(p.status, 3);
    cr_assert_str_eq(p.out, "no libprof\n");
    e2e_proc_free(&p);
}

Test(e2e_backtrace, symbolize_copies_the_lines_it_cannot_name)
{
    static const char in[] = "hello\n0x1234\n/nonexistent+0x10\n";
    e2e_write_file(e2e_path("in.txt"), in, strlen(in));
    struct e2e_proc p;
    e2e_run(&p, &(struct e2e_opts){0}, E2E_ARGV(E2E_PROF, "symbolize", e2e_path("in.txt")));
    cr_assert_eq(p.status, 0, "%s", p.err);
    cr_assert_str_eq(p.out, "hello\n0x1234\n/nonexistent+0x10\n");
    e2e_proc_free(&p);
    e2e_run(&p, &(struct e2e_opts){0}, E2E_ARGV(E2E_PROF, "symbolize", "a", "b"));
    cr_assert_eq(p.status, 2);
    e2e_proc_free(&p);
}
