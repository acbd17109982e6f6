/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of `prof report` on input that is not a good profile. A missing,
 * empty, foreign or corrupt file makes it print exactly one line, "prof: ...", on stderr,
 * nothing on stdout, and exit 2. A file cut short, as a killed process leaves it, is read
 * up to its last whole record: exit 0, a warning, and no more samples than the whole file.
 * The damaged profiles are made from a real one, written by the library for this test.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/libprof/prof_format.h"
#include "tests/e2e/support.h"

TestSuite(e2e_badinput, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

/* Profiles shares for half a CPU-second; returns the file's bytes and its scan. */
static char *real_profile(size_t *len, struct e2e_scan *s)
{
    struct e2e_proc p;
    const char *output = e2e_env("PROF_OUTPUT", e2e_path("real.prof"));
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(output)};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("shares"), "0.5"));
    cr_assert_eq(p.status, 0, "shares exited %d:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    char *data = e2e_read_file(e2e_path("real.prof"), len);
    cr_assert(data != NULL, "the library wrote no profile");
    e2e_scan_file(s, e2e_path("real.prof"));
    cr_assert(s->header_ok && s->n_samples > 10 && s->has_end,
              "the real profile is not complete: %zu samples", s->n_samples);
    return data;
}

/* Runs `prof report` on path and checks the one-line failure. */
static void expect_rejected(const char *path, const char *what)
{
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", path));
    size_t n_prof, n = e2e_count_lines(p.err, "prof: ", &n_prof);
    cr_expect_eq(p.status, 2, "%s: exit status %d, not 2", what, p.status);
    cr_expect(n == 1 && n_prof == 1, "%s: stderr is not one \"prof: \" line:\n%s", what, p.err);
    cr_expect_eq(p.out_len, 0, "%s: stdout is not empty:\n%s", what, p.out);
    cr_log_info("%s: %s", what, p.err);
    e2e_proc_free(&p);
}

Test(e2e_badinput, missing_file)
{
    expect_rejected(e2e_path("no-such.prof"), "a missing file");
}

Test(e2e_badinput, directory)
{
    expect_rejected(e2e_dir(), "a directory");
}

Test(e2e_badinput, empty_file)
{
    e2e_write_file(e2e_path("empty.prof"), "", 0);
    expect_rejected(e2e_path("empty.prof"), "an empty file");
}

Test(e2e_badinput, text_file)
{
    static const char text[] = "main;stage_one;hot_a 120\nthis is not a profile\n";
    e2e_write_file(e2e_path("text.prof"), text, sizeof(text) - 1);
    expect_rejected(e2e_path("text.prof"), "a text file");
}

Test(e2e_badinput, unknown_version)
{
    size_t len;
    struct e2e_scan s;
    char *data = real_profile(&len, &s);
    uint32_t version = 99;
    memcpy(data + offsetof(struct prof_file_header, version), &version, sizeof(version));
    e2e_write_file(e2e_path("v99.prof"), data, len);
    expect_rejected(e2e_path("v99.prof"), "format version 99");
    free(data);
}

Test(e2e_badinput, record_size_not_a_multiple_of_8)
{
    size_t len;
    struct e2e_scan s;
    char *data = real_profile(&len, &s);
    uint32_t size = 3;
    memcpy(data + s.sample_offsets[0] + offsetof(struct prof_rec_hdr, size_bytes), &size,
           sizeof(size));
    e2e_write_file(e2e_path("size3.prof"), data, len);
    expect_rejected(e2e_path("size3.prof"), "a record of size 3");
    free(data);
}

Test(e2e_badinput, record_size_too_large)
{
    size_t len;
    struct e2e_scan s;
    char *data = real_profile(&len, &s);
    uint32_t size = PROF_REC_MAX_BYTES * 2;
    memcpy(data + s.sample_offsets[1] + offsetof(struct prof_rec_hdr, size_bytes), &size,
           sizeof(size));
    e2e_write_file(e2e_path("huge.prof"), data, len);
    expect_rejected(e2e_path("huge.prof"), "a record of size 2 MiB");
    free(data);
}

/* Whether some line of err warns that the file was cut short. The per-file counts line
 * ("prof: F: 29 samples, 0 dropped, 0 truncated") is not a warning: "truncated" there
 * counts stacks. */
static int warns_of_truncation(const char *err)
{
    for (const char *line = err; *line;) {
        size_t len = strcspn(line, "\n");
        char *l = strndup(line, len);
        int hit = strncmp(l, "prof: ", 6) == 0 &&
                  (strcasestr(l, "warning") || strcasestr(l, "cut short") ||
                   strcasestr(l, "incomplete") || strcasestr(l, "inside a record"));
        free(l);
        if (hit)
            return 1;
        line += len + (line[len] == '\n');
    }
    return 0;
}

Test(e2e_badinput, cut_inside_a_record_reads_what_is_whole)
{
    size_t len;
    struct e2e_scan s;
    char *data = real_profile(&len, &s);
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "--format", "folded", e2e_path("real.prof")));
    cr_assert_eq(p.status, 0, "the whole profile: exit status %d:\n%s", p.status, p.err);
    cr_assert(!warns_of_truncation(p.err), "a warning for the whole profile:\n%s", p.err);
    struct e2e_folded whole;
    e2e_folded_parse(&whole, p.out);
    e2e_proc_free(&p);

    /* Cut the middle sample record in two, past its header. */
    size_t cut = s.sample_offsets[1] + sizeof(struct prof_rec_hdr) + 4;
    cr_assert(cut < len, "profile too short");
    e2e_write_file(e2e_path("cut.prof"), data, cut);

    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "--format", "folded", e2e_path("cut.prof")));
    cr_assert_eq(p.status, 0, "a truncated profile: exit status %d, stderr:\n%s", p.status, p.err);
    cr_expect(warns_of_truncation(p.err), "no warning about the truncation on stderr:\n%s", p.err);
    cr_log_info("stderr: %s", p.err);
    struct e2e_folded part;
    e2e_folded_parse(&part, p.out);
    cr_log_info("whole: %ld samples, cut: %ld", whole.total, part.total);
    cr_expect(part.total > 0, "nothing reported from the first half of the file");
    cr_expect(part.total <= whole.total, "%ld samples from the cut file, %ld from the whole",
              part.total, whole.total);
    cr_expect(part.total < whole.total, "cutting half the records lost no samples");
    e2e_folded_free(&part);
    e2e_folded_free(&whole);
    e2e_proc_free(&p);
    free(data);
}

Test(e2e_badinput, cut_between_records_is_read)
{
    size_t len;
    struct e2e_scan s;
    char *data = real_profile(&len, &s);
    /* A killed process leaves whole records and no END record. */
    e2e_write_file(e2e_path("killed.prof"), data, s.sample_offsets[1]);
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "--format", "folded", e2e_path("killed.prof")));
    cr_expect_eq(p.status, 0, "a profile without END: exit status %d, stderr:\n%s", p.status,
                 p.err);
    struct e2e_folded part;
    e2e_folded_parse(&part, p.out);
    cr_expect(part.total > 0, "nothing reported");
    e2e_folded_free(&part);
    e2e_proc_free(&p);
    free(data);
}
