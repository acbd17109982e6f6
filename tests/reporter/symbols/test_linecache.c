/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the line cache (reporter/symbols/linecache.c): what one run puts in is what the
 * next run gets back, from a file named by the build-id in a directory it makes; a file
 * that is not a cache, or that ends mid-line, gives what it holds whole and nothing else;
 * entries that its format cannot hold are left out; the directory comes from
 * LIBPROF_CACHE_DIR, XDG_CACHE_HOME or HOME.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "reporter/symbols/linecache.h"
#include "reporter/symbols/module.h"

static const uint8_t build_id[4] = {0xab, 0xcd, 0x01, 0x23};

static char *make_dir(void)
{
    static char dir[] = "/tmp/prof-test-lcache-XXXXXX";
    strcpy(dir, "/tmp/prof-test-lcache-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    return dir;
}

static void remove_dir(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

static void write_cache_file(const char *dir, const char *text)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/lines", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/lines/abcd0123", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

Test(linecache, keeps_what_one_run_put_for_the_next)
{
    char *dir = make_dir();
    char sub[256];
    snprintf(sub, sizeof(sub), "%s/deeper", dir);
    struct rep_sym_lcache *c;
    cr_assert_eq(rep_sym_lcache_open(sub, build_id, sizeof(build_id), &c), CMN_OK);
    struct rep_module_frame fr[2] = {{.func = "inner", .file = "/src/a.c", .line = 12},
                                     {.func = "outer", .file = NULL, .line = 0}};
    struct rep_module_frame got[4];
    size_t n;
    cr_assert_eq(rep_sym_lcache_get(c, 0x1234, got, 4, &n), CMN_E_NOTFOUND);
    cr_assert_eq(rep_sym_lcache_put(c, 0x1234, fr, 2), CMN_OK);
    cr_assert_eq(rep_sym_lcache_put(c, 0x99, NULL, 0), CMN_OK);
    rep_sym_lcache_close(c);

    cr_assert_eq(rep_sym_lcache_open(sub, build_id, sizeof(build_id), &c), CMN_OK);
    cr_assert_eq(rep_sym_lcache_get(c, 0x1234, got, 4, &n), CMN_OK);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(got[0].func, "inner");
    cr_assert_str_eq(got[0].file, "/src/a.c");
    cr_assert_eq(got[0].line, 12);
    cr_assert_str_eq(got[1].func, "outer");
    cr_assert_null(got[1].file);
    cr_assert_eq(rep_sym_lcache_get(c, 0x99, got, 4, &n), CMN_OK);
    cr_assert_eq(n, 0, "a known 'nothing there' is an answer too");
    cr_assert_eq(rep_sym_lcache_get(c, 0x98, got, 4, &n), CMN_E_NOTFOUND);
    rep_sym_lcache_close(c);
    remove_dir(dir);
}

Test(linecache, reads_the_whole_lines_of_a_file_cut_short_and_ignores_a_foreign_file)
{
    char *dir = make_dir();
    write_cache_file(dir, "prof-lines 1\n10\t1\tf\ta.c\t3\n20\t0\n30\t2\tg\tb.c\t4\th\t");
    struct rep_sym_lcache *c;
    struct rep_module_frame got[4];
    size_t n;
    cr_assert_eq(rep_sym_lcache_open(dir, build_id, sizeof(build_id), &c), CMN_OK);
    cr_assert_eq(rep_sym_lcache_get(c, 0x10, got, 4, &n), CMN_OK);
    cr_assert_eq(n, 1);
    cr_assert_str_eq(got[0].func, "f");
    cr_assert_eq(rep_sym_lcache_get(c, 0x20, got, 4, &n), CMN_OK);
    cr_assert_eq(n, 0);
    cr_assert_eq(rep_sym_lcache_get(c, 0x30, got, 4, &n), CMN_E_NOTFOUND);
    rep_sym_lcache_close(c);

    write_cache_file(dir, "something else\n10\t1\tf\ta.c\t3\n");
    cr_assert_eq(rep_sym_lcache_open(dir, build_id, sizeof(build_id), &c), CMN_OK);
    cr_assert_eq(rep_sym_lcache_get(c, 0x10, got, 4, &n), CMN_E_NOTFOUND);
    rep_sym_lcache_close(c);
    remove_dir(dir);
}

Test(linecache, leaves_out_names_its_format_cannot_hold)
{
    char *dir = make_dir();
    struct rep_sym_lcache *c;
    struct rep_module_frame fr = {.func = "bad\tname", .file = "a.c", .line = 1};
    struct rep_module_frame got[2];
    size_t n;
    cr_assert_eq(rep_sym_lcache_open(dir, build_id, sizeof(build_id), &c), CMN_OK);
    cr_assert_eq(rep_sym_lcache_put(c, 0x40, &fr, 1), CMN_OK);
    cr_assert_eq(rep_sym_lcache_get(c, 0x40, got, 2, &n), CMN_E_NOTFOUND);
    rep_sym_lcache_close(c);
    remove_dir(dir);
}

Test(linecache, takes_its_directory_from_the_environment)
{
    char *dir;
    setenv("LIBPROF_CACHE_DIR", "/x/y", 1);
    cr_assert_eq(rep_sym_lcache_dir(&dir), CMN_OK);
    cr_assert_str_eq(dir, "/x/y");
    free(dir);
    setenv("LIBPROF_CACHE_DIR", "", 1);
    cr_assert_eq(rep_sym_lcache_dir(&dir), CMN_OK);
    cr_assert_null(dir, "an empty LIBPROF_CACHE_DIR turns the cache off");
    unsetenv("LIBPROF_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "/c", 1);
    cr_assert_eq(rep_sym_lcache_dir(&dir), CMN_OK);
    cr_assert_str_eq(dir, "/c/prof");
    free(dir);
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/h", 1);
    cr_assert_eq(rep_sym_lcache_dir(&dir), CMN_OK);
    cr_assert_str_eq(dir, "/h/.cache/prof");
    free(dir);
}
