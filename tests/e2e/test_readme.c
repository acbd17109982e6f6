/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The README's examples run as written: every fenced block of README.md is either a `sh`
 * block, run here with `bash -e` from a scratch directory that looks like the source tree
 * (a link to each of its entries, `build` linked to this build), in order, so that a later
 * block may use the files an earlier one wrote; or it has a `<!-- not run: WHY -->` line
 * right above it. A block that fails, or one that is neither, fails the test.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/e2e/support.h"

TestSuite(e2e_readme, .init = e2e_setup, .fini = e2e_teardown, .timeout = 300);

#define NOT_RUN "<!-- not run:"

/* Links every entry of the source tree into the test's directory, build as this build. */
static void mirror_source_tree(void)
{
    DIR *d = opendir(SRC_DIR);
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "build") == 0)
            continue;
        char from[1024];
        snprintf(from, sizeof(from), "%s/%s", SRC_DIR, e->d_name);
        cr_assert_eq(symlink(from, e2e_path(e->d_name)), 0, "link %s", e->d_name);
    }
    closedir(d);
    cr_assert_eq(symlink(BUILD_DIR, e2e_path("build")), 0);
}

/* Runs one block; asserts that it exits 0. */
static void run_block(const char *body, size_t line)
{
    struct e2e_proc p;
    struct e2e_opts o = {.timeout_s = 120};
    /* Not the make that runs the tests: its jobserver is not the block's. */
    e2e_run(&p, &o,
            E2E_ARGV("/usr/bin/env", "-u", "MAKEFLAGS", "-u", "MFLAGS", "-u", "MAKELEVEL",
                     "/bin/bash", "-e", "-c", body));
    cr_log_info("README.md:%zu: exit %d", line, p.status);
    cr_expect_eq(p.status, 0, "the block at README.md:%zu exited %d:\n%s\n-- stdout:\n%s\n-- "
                 "stderr:\n%s",
                 line, p.status, body, p.out, p.err);
    e2e_proc_free(&p);
}

Test(e2e_readme, every_example_runs_as_written)
{
    char *text = e2e_read_file(SRC_DIR "/README.md", NULL);
    cr_assert_not_null(text);
    mirror_source_tree();
    size_t n_run = 0, n_skipped = 0, line = 1;
    const char *prev = "";
    for (char *l = text; *l != '\0';) {
        char *end = strchr(l, '\n');
        size_t len = end != NULL ? (size_t)(end - l) : strlen(l);
        if (len > 3 && strncmp(l, "```", 3) == 0) {
            /* A block opens: find its end and decide. */
            char info[32] = "";
            snprintf(info, sizeof(info), "%.*s", (int)(len - 3 < 31 ? len - 3 : 31), l + 3);
            char *body = end + 1, *close = strstr(body, "\n```");
            cr_assert_not_null(close, "README.md:%zu: a block without its end", line);
            *close = '\0';
            size_t body_line = line;
            if (strncmp(prev, NOT_RUN, strlen(NOT_RUN)) == 0) {
                n_skipped++;
            } else {
                cr_expect_str_eq(info, "sh",
                                 "README.md:%zu: a '%s' block must be sh (it runs) or say "
                                 "\"" NOT_RUN " WHY -->\" above it",
                                 line, info);
                if (strcmp(info, "sh") == 0) {
                    run_block(body, body_line);
                    n_run++;
                }
            }
            /* The body's lines and the two fences. */
            for (char *c = body; *c; c++)
                line += *c == '\n';
            line += 3;
            l = close + 4;
            l += *l == '\n';
            prev = "";
            continue;
        }
        prev = l;
        if (end != NULL)
            *end = '\0';
        line++;
        l = end != NULL ? end + 1 : l + len;
    }
    cr_log_info("README.md: %zu blocks run, %zu marked as not run", n_run, n_skipped);
    cr_expect(n_run >= 5, "only %zu blocks ran", n_run);
    free(text);
}
