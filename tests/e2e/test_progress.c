/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end test of the progress bar of `prof report`: on a profile over 50 MB it shows
 * on standard error when that is a terminal (the test gives prof one with script(1)), and
 * never when standard error is a pipe.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/libprof/prof_format.h"
#include "tests/e2e/support.h"

TestSuite(e2e_progress, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

#define N_SAMPLES 600000u
#define N_FRAMES 8u

/* A valid profile of N_SAMPLES samples of N_FRAMES frames (about 62 MB). */
static void write_big_profile(const char *path)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    struct prof_file_header h = {.version = PROF_FILE_VERSION, .header_bytes = sizeof(h)};
    memcpy(h.magic, PROF_FILE_MAGIC, sizeof(h.magic));
    fwrite(&h, sizeof(h), 1, f);
    unsigned char rec[sizeof(struct prof_rec_sample) + N_FRAMES * 8];
    struct prof_rec_sample s = {.hdr = {.type = PROF_REC_SAMPLE, .size_bytes = sizeof(rec)},
                                .tid = 1,
                                .weight = 1,
                                .n_frames = N_FRAMES};
    for (uint32_t i = 0; i < N_SAMPLES; i++) {
        s.time_ns = i;
        memcpy(rec, &s, sizeof(s));
        for (uint64_t k = 0; k < N_FRAMES; k++) {
            uint64_t a = 0x1000 * (k + 1) + (i % 7) * 16;
            memcpy(rec + sizeof(s) + k * 8, &a, 8);
        }
        fwrite(rec, sizeof(rec), 1, f);
    }
    struct prof_rec_hdr end = {.type = PROF_REC_END, .size_bytes = 8};
    fwrite(&end, sizeof(end), 1, f);
    cr_assert_eq(fclose(f), 0);
}

Test(e2e_progress, shows_on_a_terminal_only)
{
    const char *prof = e2e_path("big.prof");
    write_big_profile(prof);
    struct e2e_proc piped;
    e2e_run(&piped, NULL, E2E_ARGV(E2E_PROF, "report", "--no-symbols", prof));
    cr_assert_eq(piped.status, 0, "%s", piped.err);
    cr_expect(strstr(piped.err, "\r") == NULL, "a bar on a pipe:\n%s", piped.err);
    cr_expect(strstr(piped.err, "600000 samples") != NULL, "%s", piped.err);
    e2e_proc_free(&piped);

    char cmd[4096];
    snprintf(cmd, sizeof(cmd), "%s report --no-symbols %s >/dev/null", E2E_PROF, prof);
    struct e2e_proc tty;
    e2e_run(&tty, NULL, E2E_ARGV("/usr/bin/script", "-qec", cmd, "/dev/null"));
    cr_assert_eq(tty.status, 0, "%s%s", tty.out, tty.err);
    cr_expect(strstr(tty.out, "\r\033[Kprof: reading ") != NULL, "no bar:\n%s", tty.out);
    cr_expect(strstr(tty.out, " samples") != NULL && strstr(tty.out, "[") != NULL, "%s",
              tty.out);
    e2e_proc_free(&tty);
}
