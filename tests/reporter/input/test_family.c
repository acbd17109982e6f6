/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of finding a profile's family (reporter/input/family.c): profile heads written
 * with the library's encoders into a private directory, named as libprof names them.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/record.h"
#include "include/libprof/prof_format.h"
#include "reporter/input/family.h"

static char dir[] = "/tmp/prof-family-XXXXXX";

static void make_dir(void)
{
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

/* A profile's first records: the file header and the PROCESS record. */
static void put_profile(const char *name, uint32_t pid, uint32_t ppid, uint64_t start,
                        const char *exe)
{
    unsigned char buf[4096];
    size_t n = cmn_record_file_header(buf, sizeof(buf));
    struct prof_rec_process p = {.pid = pid, .ppid = ppid, .start_real_ns = start,
                                 .timer_source = PROF_TIMER_PERF};
    n += cmn_record_process(buf + n, sizeof(buf) - n, &p, exe);
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(buf, 1, n, f), n);
    fclose(f);
}

static void find(struct rep_family *f, const char *name, uint32_t seed)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    rep_family_init(f);
    cr_assert_eq(rep_family_find(f, path, seed, 0), CMN_OK);
}

static const char *base(const struct rep_family *f, size_t i)
{
    return strrchr(f->members[i].path, '/') + 1;
}

TestSuite(family, .init = make_dir, .fini = remove_dir);

Test(family, children_beside_a_fixed_name)
{
    put_profile("app.prof", 100, 1, 10, "/usr/bin/app");
    put_profile("app.prof.101", 101, 100, 20, "/bin/sh");
    put_profile("app.prof.102", 102, 101, 30, "/usr/bin/app");
    put_profile("app.prof.102.2", 102, 101, 40, "/usr/bin/tool");
    put_profile("app.prof.snapshot.1", 100, 1, 50, "/usr/bin/app");
    put_profile("other.prof.103", 103, 100, 60, "/usr/bin/app");
    struct rep_family f;
    find(&f, "app.prof", 100);
    cr_assert_eq(f.n, 4);
    cr_expect_str_eq(base(&f, 0), "app.prof");
    cr_expect_str_eq(base(&f, 1), "app.prof.101");
    cr_expect_str_eq(base(&f, 2), "app.prof.102");
    cr_expect_str_eq(base(&f, 3), "app.prof.102.2");
    cr_expect_str_eq(f.members[3].exe, "tool");
    cr_expect_eq(f.members[1].ppid, 100);
    rep_family_fini(&f);
}

Test(family, from_a_child_up_to_its_parent_and_siblings)
{
    put_profile("app.prof", 100, 1, 10, "app");
    put_profile("app.prof.101", 101, 100, 20, "app");
    put_profile("app.prof.102", 102, 100, 30, "app");
    struct rep_family f;
    find(&f, "app.prof.102", 102);
    cr_expect_eq(f.n, 3);
    rep_family_fini(&f);
}

Test(family, pid_in_the_name_and_unrelated_runs_left_out)
{
    put_profile("prof.200.prof", 200, 50, 10, "app");
    put_profile("prof.201.prof", 201, 200, 20, "app");
    put_profile("prof.300.prof", 300, 50, 30, "app"); /* another run from the same shell */
    put_profile("prof.301.prof", 301, 300, 40, "app");
    struct rep_family f;
    find(&f, "prof.200.prof", 200);
    cr_assert_eq(f.n, 2);
    cr_expect_str_eq(base(&f, 0), "prof.200.prof");
    cr_expect_str_eq(base(&f, 1), "prof.201.prof");
    rep_family_fini(&f);
}

Test(family, a_lone_profile_and_a_missing_one)
{
    put_profile("solo.prof", 400, 1, 10, "app");
    struct rep_family f;
    find(&f, "solo.prof", 400);
    cr_expect_eq(f.n, 1);
    rep_family_fini(&f);
    find(&f, "none.prof", 500);
    cr_expect_eq(f.n, 0);
    rep_family_fini(&f);
}

Test(family, snapshots_belong_to_no_family)
{
    put_profile("app.prof", 100, 1, 10, "app");
    unsigned char buf[4096];
    size_t n = cmn_record_file_header(buf, sizeof(buf));
    struct prof_rec_process p = {.pid = 100, .ppid = 1, .timer_source = PROF_TIMER_NONE};
    n += cmn_record_process(buf + n, sizeof(buf) - n, &p, "app");
    char path[256];
    snprintf(path, sizeof(path), "%s/app.prof.100", dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(buf, 1, n, f), n);
    fclose(f);
    struct rep_family fam;
    find(&fam, "app.prof", 100);
    cr_expect_eq(fam.n, 1);
    rep_family_fini(&fam);
}

Test(family, reads_the_head_of_a_profile_only)
{
    put_profile("head.prof", 7, 3, 99, "/opt/x/bin/server");
    char path[256];
    snprintf(path, sizeof(path), "%s/head.prof", dir);
    struct rep_family_member m = {0};
    cr_assert_eq(rep_family_read_head(path, &m), CMN_OK);
    cr_expect_eq(m.pid, 7);
    cr_expect_eq(m.ppid, 3);
    cr_expect_eq(m.start_real_ns, 99);
    cr_expect_str_eq(m.exe, "server");
    snprintf(path, sizeof(path), "%s/nothing", dir);
    cr_expect_eq(rep_family_read_head(path, &m), CMN_E_NOTFOUND);
}
