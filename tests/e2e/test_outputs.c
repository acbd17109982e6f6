/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of the graph and tree outputs: profile the shares workload
 * (tests/workloads/shares.c), run `prof report --format svg|html|json|speedscope` on the
 * profile, parse each output back with tests/e2e/check_outputs.py (python3's json and XML
 * parsers) and check that the hot functions are there with the weight the folded output
 * gives them.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/support.h"

#ifndef SRC_DIR
#error "SRC_DIR must name the source tree (the Makefile defines it)"
#endif

#define CHECKER SRC_DIR "/tests/e2e/check_outputs.py"
#define PYTHON "/usr/bin/python3"

static const char *const hot[] = {"hot_a", "hot_b", "hot_c", "main"};

TestSuite(e2e_outputs, .init = e2e_setup, .fini = e2e_teardown, .timeout = 90);

/* Runs shares for about a CPU-second under the library; returns the profile's path. */
static const char *profile_shares(void)
{
    struct e2e_proc p;
    const char *path = e2e_path("shares.prof");
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(e2e_env("PROF_OUTPUT", path))};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("shares"), "1"));
    cr_assert_eq(p.status, 0, "shares exited %d; stderr:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    return path;
}

/* Writes `prof report --format format` of prof to a file of the test; returns its path. */
static const char *report(const char *prof, const char *format)
{
    char name[64];
    snprintf(name, sizeof(name), "out.%s", format);
    const char *path = e2e_path(name);
    struct e2e_proc p;
    e2e_run(
        &p, NULL,
        E2E_ARGV(E2E_PROF, "report", "--format", format, "--title", "shares", "-o", path, prof));
    cr_assert_eq(p.status, 0, "prof report --format %s exited %d:\n%s", format, p.status, p.err);
    cr_assert_eq(p.out_len, 0, "prof report -o printed on stdout:\n%s", p.out);
    e2e_proc_free(&p);
    return path;
}

/* Parses the output back; returns the total and, in weights, each hot function's. */
static long check(const char *kind, const char *path, long weights[4])
{
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(PYTHON, CHECKER, kind, path, hot[0], hot[1], hot[2], hot[3]));
    cr_assert_eq(p.status, 0, "%s output does not parse back:\n%s%s", kind, p.out, p.err);
    long total = -1;
    char name[32];
    long v;
    char *save;
    for (char *line = strtok_r(p.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (sscanf(line, "%31s %ld", name, &v) != 2)
            continue;
        if (strcmp(name, "total") == 0)
            total = v;
        for (size_t k = 0; k < 4; k++)
            if (strcmp(name, hot[k]) == 0)
                weights[k] = v;
    }
    e2e_proc_free(&p);
    return total;
}

Test(e2e_outputs, trees_hold_the_hot_functions_with_their_folded_weight)
{
    const char *prof = profile_shares();
    struct e2e_folded f;
    e2e_report_folded(&f, prof);
    cr_assert(f.total > 50, "only %ld samples", f.total);
    const char *kinds[] = {"json", "speedscope"};
    for (size_t i = 0; i < 2; i++) {
        long w[4] = {-1, -1, -1, -1};
        long total = check(kinds[i], report(prof, kinds[i]), w);
        /* speedscope's weights are the time the samples stand for: the same shares. */
        bool is_time = strcmp(kinds[i], "speedscope") == 0;
        if (!is_time)
            cr_expect_eq(total, f.total, "%s: total %ld, folded %ld", kinds[i], total, f.total);
        for (size_t k = 0; k < 4; k++) {
            long want = e2e_folded_containing(&f, hot[k]);
            cr_expect(want > 0, "no sample has %s", hot[k]);
            if (is_time)
                cr_expect(fabs((double)w[k] / (double)total - (double)want / (double)f.total) <
                              1e-6,
                          "%s: %s has %ld of %ld ns, folded %ld of %ld samples", kinds[i], hot[k],
                          w[k], total, want, f.total);
            else
                cr_expect_eq(w[k], want, "%s: %s has %ld samples, folded %ld", kinds[i], hot[k],
                             w[k], want);
        }
    }
    e2e_folded_free(&f);
}

Test(e2e_outputs, graphs_are_well_formed_and_draw_the_hot_functions)
{
    const char *prof = profile_shares();
    const char *kinds[] = {"svg", "html"};
    for (size_t i = 0; i < 2; i++) {
        const char *path = report(prof, kinds[i]);
        long w[4] = {-1, -1, -1, -1};
        long total = check(kinds[i], path, w);
        cr_expect(total > 50, "%s: total %ld", kinds[i], total);
        for (size_t k = 0; k < 4; k++)
            cr_expect(w[k] > 0, "%s: no frame %s drawn", kinds[i], hot[k]);
        char *text = e2e_read_file(path, NULL);
        cr_assert_not_null(text);
        cr_expect(strstr(text, ">shares</") != NULL, "%s: no title", kinds[i]);
        cr_expect(strstr(text, "<script") != NULL, "%s: no script", kinds[i]);
        free(text);
    }
}

/* The line of text that starts with prefix, or NULL; *len gets its length. */
static const char *find_line(const char *text, const char *prefix, size_t *len)
{
    for (const char *line = text; *line; line += strcspn(line, "\n") + 1) {
        *len = strcspn(line, "\n");
        if (strncmp(line, prefix, strlen(prefix)) == 0)
            return line;
        if (line[*len] == '\0')
            break;
    }
    return NULL;
}

Test(e2e_outputs, speedscope_has_a_profile_per_thread)
{
    struct e2e_proc p;
    const char *prof = e2e_path("threads.prof");
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(e2e_env("PROF_OUTPUT", prof))};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("twothreads"), "150"));
    cr_assert_eq(p.status, 0, "twothreads exited %d; stderr:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    const char *path = report(prof, "speedscope");
    e2e_run(&p, NULL, E2E_ARGV(PYTHON, CHECKER, "speedscope", path, "spin_one", "spin_two"));
    cr_assert_eq(p.status, 0, "speedscope output does not parse back:\n%s%s", p.out, p.err);
    /* Each worker's profile has its own spin function and not the other's. */
    size_t one_len, two_len;
    const char *one = find_line(p.out, "profile worker-one (tid ", &one_len);
    const char *two = find_line(p.out, "profile worker-two (tid ", &two_len);
    cr_assert(one && two, "no profile per worker thread:\n%s", p.out);
    cr_expect(memmem(one, one_len, " spin_one", 9) && !memmem(one, one_len, " spin_two", 9), "%s",
              p.out);
    cr_expect(memmem(two, two_len, " spin_two", 9) && !memmem(two, two_len, " spin_one", 9), "%s",
              p.out);
    e2e_proc_free(&p);
}

Test(e2e_outputs, rejects_an_unknown_format_and_a_bad_min_width)
{
    const char *prof = e2e_path("none.prof");
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "--format", "png", prof));
    cr_expect_eq(p.status, 2);
    cr_expect(strstr(p.err, "unknown format 'png' (top, folded, svg, html, json, speedscope") !=
                  NULL,
              "%s", p.err);
    e2e_proc_free(&p);
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "--format", "svg", "--min-width", "x", prof));
    cr_expect_eq(p.status, 2);
    cr_expect(strstr(p.err, "--min-width: 'x' is not a percentage") != NULL, "%s", p.err);
    e2e_proc_free(&p);
}
