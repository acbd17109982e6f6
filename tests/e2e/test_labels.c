/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Thread labels end to end. The request server of examples/labelsrv.c, driven over the
 * loopback by examples/loadgen.c, labels each request endpoint=KIND (and tenant=T) with
 * the scoped form and measures each kind's CPU and wall time inside its labels: the share
 * of each endpoint among the labelled samples must be the truth's within sampling error
 * (four standard errors, a point at least), in CPU and in wall profiles. A fork child
 * keeps its thread's labels as a copy; a pool thread keeps nothing of one request's labels
 * for the next (and the unscoped form, which does, shows the test would see it); go tool
 * pprof reads the labels; trace ids, libprof's and the OpenTelemetry thread context's
 * (tests/workloads/tracectx.c), select their samples; every interval's file defines its
 * own label sets; the server runs without libprof; labels set before an idle start.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/e2e/support.h"

#define SRV BUILD_DIR "/examples/labelsrv"
#define LOADGEN BUILD_DIR "/examples/loadgen"
#define GO "/usr/bin/go"
/* A share is within four standard errors of the truth (the binomial error of sampling,
 * sqrt(p (1 - p) / n) for n samples: 0.55 points for a third of 7 000), never less than a
 * point: a tighter bound failed one run in four on sampling noise alone. */
#define SIGMAS 4.0
#define TOLERANCE_MIN 0.01 /* a share, absolute */
#define N_KINDS 5
#define REQUESTS "1500" /* about 3.3 s of the server's CPU, however busy the machine */

static const char *const kinds[N_KINDS] = {"cheap", "medium", "heavy", "sleepy", "anon"};

TestSuite(e2e_labels, .init = e2e_setup, .fini = e2e_teardown, .timeout = 120);

/* Runs the server under `prof record` (record_opts: its options, a string) with extra
 * server options, drives it with loadgen (loadgen_opts), and waits for it to end. */
static void run_server(const char *record_opts, const char *srv_opts, const char *loadgen_opts)
{
    static const char script[] =
        "set -e\n"
        /* An earlier run's port.txt could be read before the redirection empties it. */
        "rm -f port.txt\n"
        "$PROF record -q $RECORD_OPTS -- $SRV --truth truth.txt $SRV_OPTS > port.txt &\n"
        "srv=$!\n"
        "for i in $(seq 200); do [ -s port.txt ] && break; sleep 0.05; done\n"
        "$LOADGEN $LOADGEN_OPTS $(sed -n 's/^port //p' port.txt) > sent.txt\n"
        "wait $srv\n";
    struct e2e_proc p;
    struct e2e_opts o = {.env = E2E_ARGV(e2e_env("PROF", E2E_PROF), e2e_env("SRV", SRV),
                                         e2e_env("LOADGEN", LOADGEN),
                                         e2e_env("RECORD_OPTS", record_opts),
                                         e2e_env("SRV_OPTS", srv_opts),
                                         e2e_env("LOADGEN_OPTS", loadgen_opts)),
                         .timeout_s = 90};
    e2e_run(&p, &o, E2E_ARGV("/bin/sh", "-c", script));
    cr_assert_eq(p.status, 0, "the server's run exited %d:\n%s%s", p.status, p.out, p.err);
    e2e_proc_free(&p);
}

/* The truth's value of field ("cpu_ns", "wall_ns") for kind. */
static double truth_of(const char *truth, const char *kind, const char *field)
{
    char key[64];
    snprintf(key, sizeof(key), "endpoint=%s ", kind);
    const char *line = strstr(truth, key);
    cr_assert(line != NULL, "no truth for %s:\n%s", kind, truth);
    const char *at = strstr(line, field);
    cr_assert(at != NULL);
    return strtod(at + strlen(field) + 1, NULL);
}

/* `prof report --by-label KEY -f folded` of profile, with more options (may be NULL). */
static void report_by(struct e2e_folded *f, const char *profile, const char *key,
                      const char *more)
{
    struct e2e_proc p;
    if (more != NULL)
        e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "--by-label", key, more, "-f", "folded",
                                   profile));
    else
        e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "--by-label", key, "-f", "folded",
                                   profile));
    cr_assert_eq(p.status, 0, "prof report exited %d:\n%s", p.status, p.err);
    e2e_folded_parse(f, p.out);
    e2e_proc_free(&p);
}

/* The weight of the stacks whose root frame is exactly root. */
static long rooted(const struct e2e_folded *f, const char *root)
{
    long n = 0;
    size_t len = strlen(root);
    for (size_t i = 0; i < f->n_stacks; i++)
        if (strncmp(f->stacks[i].frames, root, len) == 0 &&
            (f->stacks[i].frames[len] == ';' || f->stacks[i].frames[len] == '\0'))
            n += f->stacks[i].count;
    return n;
}

/* Each endpoint's share of the labelled samples against its share of the truth's field. */
static void check_shares(const char *field)
{
    char *truth = e2e_read_file(e2e_path("truth.txt"), NULL);
    cr_assert(truth != NULL, "the server wrote no truth");
    cr_log_info("truth:\n%s", truth);
    struct e2e_folded f;
    report_by(&f, e2e_path("srv.prof"), "endpoint", NULL);
    double sum_truth = 0, sum_got = 0, want[N_KINDS];
    long got[N_KINDS];
    for (int k = 0; k < N_KINDS; k++) {
        char root[64];
        snprintf(root, sizeof(root), "endpoint=%s", kinds[k]);
        got[k] = rooted(&f, root);
        want[k] = truth_of(truth, kinds[k], field);
        sum_truth += want[k];
        sum_got += (double)got[k];
    }
    cr_assert(sum_got > 5000, "%.0f labelled samples: too few to compare shares", sum_got);
    for (int k = 0; k < N_KINDS; k++) {
        double w = want[k] / sum_truth, g = (double)got[k] / sum_got;
        double tol = SIGMAS * sqrt(w * (1 - w) / sum_got);
        tol = tol > TOLERANCE_MIN ? tol : TOLERANCE_MIN;
        cr_log_info("endpoint=%s: %s share %.2f %%, profile %.2f %% (%ld samples)", kinds[k],
                    field, 100 * w, 100 * g, got[k]);
        cr_expect(g >= w - tol && g <= w + tol,
                  "endpoint=%s: %.2f %% of the labelled samples, %.2f %% of the %s (within "
                  "%.2f points)",
                  kinds[k], 100 * g, 100 * w, field, 100 * tol);
    }
    e2e_folded_free(&f);
    free(truth);
}

Test(e2e_labels, cpu_shares_of_each_endpoint_match_the_servers_truth)
{
    run_server("-F 4000 -o srv.prof", "", "-n " REQUESTS " -c 2");
    check_shares("cpu_ns");
}

Test(e2e_labels, wall_shares_of_each_endpoint_match_the_servers_truth)
{
    run_server("--mode wall -F 2000 -o srv.prof", "", "-n " REQUESTS " -c 2");
    check_shares("wall_ns");
}

/* The child the first request forks keeps that thread's labels: its samples all carry an
 * endpoint and a tenant (it forked during a request of the mix), which its parent's
 * changes since do not touch. Its whole stacks (from the thread's start routine) are all
 * in heavy_work: none of libprof's own wait at _exit (PROF_STAT_OWN_WAIT). A stack the
 * walk stopped short of the start routine (a sample in the dynamic linker's lazy binding,
 * whose frame the tables cannot step: its CFA comes from %rbx) is only held to its labels. */
Test(e2e_labels, a_fork_child_keeps_its_threads_labels_as_a_copy)
{
    run_server("-F 1000 -o srv.prof", "--fork", "-n 40 -c 1");
    const char *found[4];
    size_t n = e2e_find_files("srv.prof.", "", found, 4);
    cr_assert_eq(n, 1, "expected the child's profile srv.prof.PID, found %zu", n);
    struct e2e_folded f;
    report_by(&f, found[0], "endpoint", "--by-label=tenant");
    cr_assert(f.total >= 5, "the child took %ld samples", f.total);
    long with = 0, whole = 0, in_work = 0;
    for (size_t i = 0; i < f.n_stacks; i++) {
        cr_log_info("child: %s %ld", f.stacks[i].frames, f.stacks[i].count);
        const char *s = f.stacks[i].frames;
        if (strncmp(s, "endpoint=", 9) == 0 && strstr(s, ";tenant=t") != NULL &&
            strstr(s, "endpoint=(none)") == NULL)
            with += f.stacks[i].count;
        if (strstr(s, ";worker;") != NULL) {
            whole += f.stacks[i].count;
            in_work += strstr(s, ";heavy_work;") != NULL ? f.stacks[i].count : 0;
        }
    }
    cr_expect_eq(with, f.total, "%ld of the child's %ld samples carry its parent thread's "
                 "endpoint and tenant", with, f.total);
    cr_expect(whole * 10 >= f.total * 9, "%ld of the child's %ld stacks reach its thread's "
              "start routine", whole, f.total);
    cr_expect_eq(in_work, whole, "%ld of the child's %ld whole stacks are in heavy_work",
                 in_work, whole);
    struct e2e_scan st;
    e2e_scan_file(&st, found[0]);
    cr_log_info("child: %llu samples of libprof's wait at _exit left out",
                (unsigned long long)st.stats[PROF_STAT_OWN_WAIT]);
    e2e_folded_free(&f);
}

/* The weight of anon_work's samples (requests without a tenant) that carry a tenant. */
static long anon_with_tenant(long *anon)
{
    struct e2e_folded f;
    report_by(&f, e2e_path("srv.prof"), "tenant", NULL);
    *anon = e2e_folded_containing(&f, "anon_work");
    long leaked = *anon - e2e_folded_containing_from(&f, "anon_work", "tenant=(none)");
    e2e_folded_free(&f);
    return leaked;
}

/* Two pool threads serve requests of every kind in turn; a request without a tenant
 * (anon) follows requests with one. With the scoped form its samples carry no tenant;
 * with prof_label_set() alone (--unscoped) they carry the last request's, which shows the
 * check can see a leak. */
Test(e2e_labels, a_pool_thread_keeps_no_label_of_one_request_for_the_next)
{
    long anon;
    run_server("-F 2000 -o srv.prof", "", "-n 400 -c 2");
    long leaked = anon_with_tenant(&anon);
    cr_assert(anon >= 20, "anon_work took %ld samples", anon);
    cr_expect_eq(leaked, 0, "%ld of anon_work's %ld samples carry a tenant", leaked, anon);

    run_server("-F 2000 -o srv.prof", "--unscoped", "-n 400 -c 2");
    leaked = anon_with_tenant(&anon);
    cr_assert(anon >= 20, "anon_work took %ld samples", anon);
    cr_expect(leaked > anon / 2, "unscoped: only %ld of anon_work's %ld samples carry the "
              "tenant their thread's last request set", leaked, anon);
}

/* The label's values with their summed time, as go tool pprof -tags prints them. */
Test(e2e_labels, go_tool_pprof_reads_the_labels_as_tags)
{
    cr_assert(access(GO, X_OK) == 0, GO " is missing: scripts/setup.sh installs golang-go");
    run_server("-F 1000 -o srv.prof --labels service=labelsrv", "", "-n 300 -c 2");
    const char *pb = e2e_path("srv.pb.gz");
    struct e2e_proc conv, tags, focus;
    e2e_run(&conv, NULL, E2E_ARGV(E2E_PROF, "report", "-f", "pprof", "-o", pb,
                                  e2e_path("srv.prof")));
    cr_assert_eq(conv.status, 0, "%s", conv.err);
    struct e2e_opts go_env = {.env = E2E_ARGV(e2e_env("HOME", e2e_dir()),
                                              e2e_env("PPROF_TMPDIR", e2e_dir()))};
    e2e_run(&tags, &go_env, E2E_ARGV(GO, "tool", "pprof", "-tags", pb));
    cr_assert_eq(tags.status, 0, "go tool pprof -tags exited %d:\n%s", tags.status, tags.err);
    cr_log_info("go tool pprof -tags:\n%s", tags.out);
    for (int k = 0; k < N_KINDS; k++)
        cr_expect(strstr(tags.out, kinds[k]) != NULL, "-tags does not list endpoint %s",
                  kinds[k]);
    cr_expect(strstr(tags.out, "endpoint:") && strstr(tags.out, "tenant:") &&
                  strstr(tags.out, "service:") && strstr(tags.out, "labelsrv"),
              "-tags misses a label");
    e2e_run(&focus, &go_env, E2E_ARGV(GO, "tool", "pprof", "-top", "-tagfocus",
                                      "endpoint=heavy", pb));
    cr_assert_eq(focus.status, 0, "%s", focus.err);
    cr_log_info("go tool pprof -tagfocus endpoint=heavy:\n%s", focus.out);
    cr_expect(strstr(focus.out, "heavy_work") != NULL && strstr(focus.out, "cheap_work") == NULL,
              "-tagfocus endpoint=heavy keeps heavy_work only");
    e2e_proc_free(&conv);
    e2e_proc_free(&tags);
    e2e_proc_free(&focus);
}

/* The functions of the samples `prof report SELECTION` keeps, as "a,b," (sorted by weight
 * are not needed: the test asks which appear). */
static void report_funcs(struct e2e_folded *f, const char *sel, const char *value,
                         const char *profile)
{
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", sel, value, "-f", "folded", profile));
    cr_assert_eq(p.status, 0, "prof report %s %s exited %d:\n%s", sel, value, p.status, p.err);
    e2e_folded_parse(f, p.out);
    e2e_proc_free(&p);
}

/* Of the samples selection keeps, the part in func (and none elsewhere of the three). */
static void expect_only(const char *sel, const char *value, const char *func, const char *prof)
{
    static const char *const funcs[] = {"otel_checkout", "otel_search", "own_trace"};
    struct e2e_folded f;
    report_funcs(&f, sel, value, prof);
    cr_log_info("%s %s: %ld samples, %ld in %s", sel, value, f.total,
                e2e_folded_containing(&f, func), func);
    cr_expect(f.total >= 20, "%s %s keeps %ld samples", sel, value, f.total);
    for (size_t i = 0; i < 3; i++)
        if (strcmp(funcs[i], func) != 0)
            cr_expect_eq(e2e_folded_containing(&f, funcs[i]), 0, "%s %s keeps samples of %s",
                         sel, value, funcs[i]);
    e2e_folded_free(&f);
}

Test(e2e_labels, trace_ids_and_the_opentelemetry_context_select_their_samples)
{
    struct e2e_proc p;
    const char *prof = e2e_path("trace.prof");
    e2e_run_profiled(&p, "trace.prof", E2E_ARGV(e2e_env("PROF_FREQ", "1000")), 0,
                     E2E_ARGV(E2E_WORKLOAD("tracectx"), "0.9"));
    cr_assert_eq(p.status, 0, "tracectx exited %d:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    /* The OpenTelemetry records' traces and attributes, then libprof's own. */
    expect_only("--trace", "11111111111111111111111111111111", "otel_checkout", prof);
    expect_only("--trace", "1212", "otel_search", prof);
    expect_only("--trace", "13131313131313131313131313131313", "own_trace", prof);
    expect_only("--label", "http_route=/checkout", "otel_checkout", prof);
    expect_only("--label", "user_id=u42", "otel_search", prof);
    expect_only("--label", "phase=mine", "own_trace", prof);
    /* The handler reads the record; only kernel-time samples (no handler) go without. */
    struct e2e_folded f;
    report_funcs(&f, "--by-label", "http_route", prof);
    long all = e2e_folded_containing(&f, "otel_search");
    long with = e2e_folded_containing_from(&f, "otel_search", "http_route=/search");
    cr_expect(with >= all * 9 / 10, "%ld of otel_search's %ld samples carry http_route", with,
              all);
    e2e_folded_free(&f);
}

/* Every file of an interval run stands alone: each defines the label sets its stacks
 * name, so each reads with its labels. */
Test(e2e_labels, each_interval_file_defines_its_own_label_sets)
{
    run_server("-F 1000 --interval 300ms -o srv.prof", "", "-n 300 -c 2");
    const char *found[16];
    size_t n = e2e_find_files("srv.prof.", "", found, 16);
    cr_assert(n >= 2, "expected interval files srv.prof.N, found %zu", n);
    size_t labelled = 0;
    for (size_t i = 0; i < n; i++) {
        struct e2e_folded f;
        report_by(&f, found[i], "endpoint", NULL);
        long none = rooted(&f, "endpoint=(none)");
        cr_log_info("%s: %ld samples, %ld without an endpoint", found[i], f.total, none);
        labelled += f.total - none > 0;
        e2e_folded_free(&f);
    }
    cr_expect(labelled >= 2, "only %zu of %zu interval files hold labelled samples", labelled,
              n);
}

/* <libprof/prof_weak.h>: without libprof the calls are no-ops and the server works. */
Test(e2e_labels, the_server_runs_without_libprof)
{
    static const char script[] =
        "set -e\n"
        "$SRV > port.txt &\n"
        "srv=$!\n"
        "for i in $(seq 200); do [ -s port.txt ] && break; sleep 0.05; done\n"
        "$LOADGEN -n 30 -c 1 $(sed -n 's/^port //p' port.txt)\n"
        "wait $srv\n";
    struct e2e_proc p;
    struct e2e_opts o = {.env = E2E_ARGV(e2e_env("SRV", SRV), e2e_env("LOADGEN", LOADGEN))};
    e2e_run(&p, &o, E2E_ARGV("/bin/sh", "-c", script));
    cr_assert_eq(p.status, 0, "exited %d:\n%s%s", p.status, p.out, p.err);
    cr_expect(strstr(p.out, "sent cheap=") != NULL, "loadgen said:\n%s", p.out);
    e2e_proc_free(&p);
}

/* A benchmark's phases labelled (tests/workloads/phases.c), one of which regressed in the
 * new run: `prof check --by-label phase` judges each phase apart and fails that one only;
 * --label selects one phase; `prof diff --by-label` has a section per phase. */
Test(e2e_labels, check_by_label_fails_the_one_phase_that_regressed)
{
    struct e2e_proc p;
    e2e_run_profiled(&p, "base.prof", E2E_ARGV(e2e_env("PROF_FREQ", "1000")), 0,
                     E2E_ARGV(E2E_WORKLOAD("phases"), "0.9"));
    cr_assert_eq(p.status, 0, "phases exited %d:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    e2e_run_profiled(&p, "new.prof", E2E_ARGV(e2e_env("PROF_FREQ", "1000")), 0,
                     E2E_ARGV(E2E_WORKLOAD("phases"), "0.9", "compute"));
    cr_assert_eq(p.status, 0, "phases exited %d:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    const char *base = e2e_path("base.prof"), *new = e2e_path("new.prof");

    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "check", "--by-label", "phase", base, new));
    cr_log_info("prof check --by-label phase:\n%s%s", p.out, p.err);
    cr_expect_eq(p.status, 1, "prof check --by-label phase exited %d", p.status);
    cr_expect(strstr(p.out, "3 values of phase judged, 1 regressed: compute\n") != NULL, "%s",
              p.out);
    const char *parse = strstr(p.out, "== phase=parse\n"), *render = strstr(p.out, "== phase=render");
    cr_expect(parse != NULL && render != NULL && strstr(parse, "prof check: ok") < render,
              "phase=parse is not judged ok:\n%s", p.out);
    e2e_proc_free(&p);

    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "check", "--label", "phase=render", base, new));
    cr_expect_eq(p.status, 0, "prof check --label phase=render exited %d:\n%s", p.status, p.out);
    e2e_proc_free(&p);
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "diff", "--by-label", "phase", base, new));
    cr_expect_eq(p.status, 0, "%s", p.err);
    cr_expect(strstr(p.out, "== phase=compute\n") != NULL &&
                  strstr(p.out, "regression_in_compute") != NULL,
              "%s", p.out);
    e2e_proc_free(&p);
}

/* speedscope: a profile per thread and endpoint, with that endpoint's work only. */
Test(e2e_labels, speedscope_has_a_profile_per_label_value)
{
    run_server("-F 1000 -o srv.prof", "", "-n 200 -c 2");
    struct e2e_proc p;
    const char *json = e2e_path("srv.speedscope.json");
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "--by-label", "endpoint", "-f", "speedscope",
                               "-o", json, e2e_path("srv.prof")));
    cr_assert_eq(p.status, 0, "%s", p.err);
    e2e_proc_free(&p);
    e2e_run(&p, NULL, E2E_ARGV("/usr/bin/python3", SRC_DIR "/tests/e2e/check_outputs.py",
                               "speedscope", json, "heavy_work", "cheap_work"));
    cr_assert_eq(p.status, 0, "%s%s", p.out, p.err);
    cr_log_info("%s", p.out);
    bool heavy = false;
    for (const char *line = p.out; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != 0)) {
        size_t len = strcspn(line, "\n");
        if (strncmp(line, "profile endpoint=heavy: ", 24) == 0) {
            heavy = true;
            cr_expect(memmem(line, len, " heavy_work", 11) && !memmem(line, len, " cheap_work", 11),
                      "%.*s", (int)len, line);
        }
    }
    cr_expect(heavy, "no profile of endpoint=heavy:\n%s", p.out);
    e2e_proc_free(&p);
}

/* A process that started idle (PROF_START=0): a thread that made its label and its trace
 * its own before prof_start(), and never changes them, has them on every sample, those the
 * kernel records into the ring source's ring (read by the writer thread) as well as its
 * handler's. */
Test(e2e_labels, a_label_set_before_an_idle_start_is_on_every_sample)
{
    struct e2e_proc p;
    e2e_run_profiled(&p, "late.prof", E2E_ARGV("PROF_START=0", "PROF_FREQ=1000"), 0,
                     E2E_ARGV(E2E_WORKLOAD("latelabels"), "0.4"));
    cr_assert_eq(p.status, 0, "latelabels exited %d:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    struct e2e_folded f;
    report_by(&f, e2e_path("late.prof"), "phase", NULL);
    long labelled = 0, other = 0;
    for (size_t i = 0; i < f.n_stacks; i++) {
        if (strstr(f.stacks[i].frames, "worker_spin") == NULL)
            continue;
        if (strncmp(f.stacks[i].frames, "phase=early;", 12) == 0)
            labelled += f.stacks[i].count;
        else
            other += f.stacks[i].count;
    }
    cr_expect(labelled > 100 && other == 0,
              "worker_spin: %ld samples with phase=early, %ld without", labelled, other);
    e2e_folded_free(&f);
    struct e2e_folded traced;
    report_funcs(&traced, "--trace", "42424242424242424242424242424242", e2e_path("late.prof"));
    long with_trace = e2e_folded_containing(&traced, "worker_spin");
    cr_expect_eq(with_trace, labelled, "worker_spin: %ld samples with its trace of %ld",
                 with_trace, labelled);
    e2e_folded_free(&traced);
}
