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

/* Runs flame_check.js on graph (search, zoom, names as it takes them); its output. */
static char *check_graph(const char *node, const char *graph, const char *const *args)
{
    const char *chromium = e2e_env("PROF_CHROMIUM", chromium_path());
    const char *shot = e2e_path("flame.png");
    struct e2e_opts o = {.env = E2E_ARGV(chromium), .timeout_s = 120};
    const char *argv[16] = {node, CHECK_SCRIPT, graph, "--shot", shot};
    size_t n = 5;
    for (size_t i = 0; args[i] != NULL && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    struct e2e_proc p;
    e2e_run(&p, &o, argv);
    cr_log_info("flame_check.js %s:\n%s%s", graph, p.out, p.err);
    cr_assert_neq(p.status, 2, "the browser could not be started:\n%s%s", p.out, p.err);
    cr_assert_eq(p.status, 0, "the flame graph %s failed in Chromium:\n%s%s", graph, p.out,
                 p.err);
    size_t len = 0;
    free(e2e_read_file(shot, &len));
    cr_expect(len > 1000, "no screenshot of %s", graph);
    char *out = p.out;
    p.out = NULL;
    e2e_proc_free(&p);
    return out;
}

/* prof report FORMAT of prof into graph, with option opt (NULL: none). */
static void report(const char *prof, const char *format, const char *opt, const char *graph)
{
    struct e2e_proc p;
    if (opt != NULL)
        e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", opt, "--format", format, "-o", graph,
                                   prof));
    else
        e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "--format", format, "-o", graph, prof));
    cr_assert_eq(p.status, 0, "prof report --format %s exited %d:\n%s", format, p.status, p.err);
    e2e_proc_free(&p);
}

static void check_in_browser(const char *format)
{
    const char *node = need_browser();
    const char *prof = profile_shares();
    char name[32];
    snprintf(name, sizeof(name), "flame.%s", format);
    const char *graph = e2e_path(name);
    report(prof, format, NULL, graph);
    char *out = check_graph(node, graph,
                            E2E_ARGV("hot_[ab]", "hot_c", "hot_a", "hot_b", "hot_c", "main"));
    cr_expect(strstr(out, "ok: after a click hot_c is full width") != NULL, "%s", out);
    free(out);
}

Test(e2e_browser, svg_flame_graph_draws_searches_and_zooms)
{
    check_in_browser("svg");
}

Test(e2e_browser, html_flame_graph_draws_searches_and_zooms)
{
    check_in_browser("html");
}

/* Python's interpreter: many functions of a few samples each. The page opens with the root
 * in view, and every depth's weight is drawn (the graph once left out the frames under
 * 0.1 % of the total: on such a profile, hundreds of frames and a quarter of the samples). */
Test(e2e_browser, html_flame_graph_of_python_draws_every_frame_with_its_root_in_view)
{
    const char *node = need_browser();
    static const char script[] =
        "import json, re, textwrap\n"
        "d = {'k%d' % i: [i, str(i) * 3, {'x': i / 7}] for i in range(300)}\n"
        "for i in range(300):\n"
        "    s = json.dumps(d, sort_keys=True)\n"
        "    json.loads(s)\n"
        "    re.sub(r'(\\d+)', lambda m: m.group(1)[::-1], s[:4000])\n"
        "    textwrap.fill(s[:3000], 60)\n"
        "    sorted(d.items(), key=lambda kv: repr(kv[1]))\n";
    struct e2e_proc p;
    e2e_run_profiled(&p, "python.prof", E2E_ARGV(e2e_env("PROF_FREQ", "1000")), 0,
                     E2E_ARGV("/usr/bin/python3", "-c", script));
    cr_assert_eq(p.status, 0, "python3 exited %d:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    const char *graph = e2e_path("python.html");
    report(e2e_path("python.prof"), "html", NULL, graph);
    char *out = check_graph(node, graph, E2E_ARGV("EvalFrame", "Py_RunMain", "Py_BytesMain",
                                                  "Py_RunMain"));
    cr_expect(strstr(out, "ok: the root is in view") != NULL, "%s", out);
    cr_expect(strstr(out, "ok: every depth's weight is drawn") != NULL, "%s", out);
    cr_expect(strstr(out, "ok: a drag over a quarter of the strip") != NULL, "%s", out);
    free(out);
}

/* The labelled server of examples/labelsrv.c: the page offers the endpoint's values and
 * draws each alone. */
Test(e2e_browser, html_flame_graph_chooses_a_label_value)
{
    const char *node = need_browser();
    static const char script[] =
        "set -e\n"
        "$PROF record -q -F 1000 -o srv.prof -- $SRV > port.txt &\n"
        "srv=$!\n"
        "for i in $(seq 200); do [ -s port.txt ] && break; sleep 0.05; done\n"
        "$LOADGEN -n 200 -c 2 $(sed -n 's/^port //p' port.txt) > /dev/null\n"
        "wait $srv\n";
    struct e2e_proc p;
    struct e2e_opts o = {.env = E2E_ARGV(e2e_env("PROF", E2E_PROF),
                                         e2e_env("SRV", BUILD_DIR "/examples/labelsrv"),
                                         e2e_env("LOADGEN", BUILD_DIR "/examples/loadgen"))};
    e2e_run(&p, &o, E2E_ARGV("/bin/sh", "-c", script));
    cr_assert_eq(p.status, 0, "the server's run exited %d:\n%s%s", p.status, p.out, p.err);
    e2e_proc_free(&p);
    const char *graph = e2e_path("srv.html");
    report(e2e_path("srv.prof"), "html", "--by-label=endpoint", graph);
    char *out = check_graph(node, graph,
                            E2E_ARGV("_work$", "heavy_work", "heavy_work", "medium_work"));
    cr_expect(strstr(out, "ok: value ") != NULL, "%s", out);
    free(out);
}
