/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The flame graphs in a real browser: profile the shares workload, write the SVG and the
 * HTML flame graphs, and open each in headless Chromium from file:// with
 * tests/browser/flame_check.js (Node.js, playwright-core), which checks that hot_a, hot_b,
 * hot_c and main are drawn with labels in warm colours, that a search highlights exactly
 * the matching frames with the right share, that a click zooms a frame to the full width
 * and that Reset zoom restores it, with no external request and no script error.
 *
 * Skipped, saying why, only when Chromium, Node.js or playwright-core is missing and
 * scripts/setup-browser.sh could not install it; any failure of the check itself fails.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/e2e/support.h"

#ifndef SRC_DIR
#error "SRC_DIR must name the source tree (the Makefile defines it)"
#endif

#define BROWSER_DIR SRC_DIR "/tests/browser"
#define CHECK_SCRIPT BROWSER_DIR "/flame_check.js"
#define PLAYWRIGHT BROWSER_DIR "/node_modules/playwright-core/package.json"

TestSuite(e2e_browser, .init = e2e_setup, .fini = e2e_teardown, .timeout = 150);

/* The absolute path of program name found on PATH, or NULL; the string lives until the
 * test ends. */
static const char *find_program(const char *name)
{
    const char *path = getenv("PATH");
    char buf[4096];
    for (const char *dir = path ? path : "/usr/bin:/bin"; *dir;) {
        size_t len = strcspn(dir, ":");
        snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, dir, name);
        if (len > 0 && access(buf, X_OK) == 0)
            return strdup(buf);
        dir += len + (dir[len] == ':');
    }
    return NULL;
}

static const char *chromium_path(void)
{
    const char *env = getenv("PROF_CHROMIUM");
    if (env != NULL && access(env, X_OK) == 0)
        return env;
    return access("/usr/bin/chromium", X_OK) == 0 ? "/usr/bin/chromium" : NULL;
}

/* Node, when the browser test can run: else skips the test saying what is missing. */
static const char *need_browser(void)
{
    if (chromium_path() == NULL || find_program("node") == NULL || access(PLAYWRIGHT, R_OK) != 0) {
        /* Perhaps nobody ran the setup yet (make test does): try once. */
        struct e2e_proc p;
        e2e_run(&p, NULL, E2E_ARGV("/bin/sh", SRC_DIR "/scripts/setup-browser.sh"));
        cr_log_info("setup-browser.sh: %s%s", p.out, p.err);
        e2e_proc_free(&p);
    }
    const char *node = find_program("node");
    if (chromium_path() == NULL)
        cr_skip_test("Chromium is not installed (/usr/bin/chromium; scripts/setup-browser.sh "
                     "could not install it)");
    if (node == NULL)
        cr_skip_test("Node.js is not installed (scripts/setup-browser.sh could not install it)");
    if (access(PLAYWRIGHT, R_OK) != 0)
        cr_skip_test("playwright-core is missing in tests/browser/node_modules (npm ci failed; "
                     "see /tmp/libprof-setup-browser.log)");
    return node;
}

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

static void check_in_browser(const char *format)
{
    const char *node = need_browser();
    const char *prof = profile_shares();
    char name[32];
    snprintf(name, sizeof(name), "flame.%s", format);
    const char *graph = e2e_path(name);
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "--format", format, "-o", graph, prof));
    cr_assert_eq(p.status, 0, "prof report --format %s exited %d:\n%s", format, p.status, p.err);
    e2e_proc_free(&p);

    const char *chromium = e2e_env("PROF_CHROMIUM", chromium_path());
    struct e2e_opts o = {.env = E2E_ARGV(chromium), .timeout_s = 120};
    e2e_run(&p, &o,
            E2E_ARGV(node, CHECK_SCRIPT, graph, "hot_[ab]", "hot_c", "hot_a", "hot_b", "hot_c",
                     "main"));
    cr_log_info("flame_check.js %s:\n%s%s", format, p.out, p.err);
    cr_assert_neq(p.status, 2, "the browser could not be started:\n%s%s", p.out, p.err);
    cr_assert_eq(p.status, 0, "the %s flame graph failed in Chromium:\n%s%s", format, p.out, p.err);
    cr_expect(strstr(p.out, "ok: after a click hot_c is full width") != NULL, "%s", p.out);
    e2e_proc_free(&p);
}

Test(e2e_browser, svg_flame_graph_draws_searches_and_zooms)
{
    check_in_browser("svg");
}

Test(e2e_browser, html_flame_graph_draws_searches_and_zooms)
{
    check_in_browser("html");
}
