/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the environment a profiled process's programs get (libprof/environ.c). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "libprof/environ.h"

Test(environ, without_us_keeps_the_other_preloaded_libraries)
{
    char *env[] = {"A=1", "LD_PRELOAD=/x/libfoo.so /opt/lib/libprof.so:libbar.so", "B=2", NULL};
    char *arr[4];
    char buf[64];
    char *const *out = lp_env_without_us(env, arr, buf);
    cr_assert_str_eq(out[0], "A=1");
    cr_assert_str_eq(out[1], "LD_PRELOAD=/x/libfoo.so:libbar.so");
    cr_assert_str_eq(out[2], "B=2");
    cr_assert_null(out[3]);
}

Test(environ, without_us_drops_an_entry_left_empty)
{
    char *env[] = {"LD_PRELOAD=libprof.so", "B=2", NULL};
    char *arr[3];
    char buf[32];
    char *const *out = lp_env_without_us(env, arr, buf);
    cr_assert_str_eq(out[0], "B=2");
    cr_assert_null(out[1]);
    /* A library whose name merely ends so is not us. */
    char *other[] = {"LD_PRELOAD=/a/mylibprof.so", NULL};
    out = lp_env_without_us(other, arr, buf);
    cr_assert_str_eq(out[0], "LD_PRELOAD=/a/mylibprof.so");
}

Test(environ, a_relative_output_is_found_and_made_absolute)
{
    char *env[] = {"PROF_OUTPUT=out/p.%p.prof", "X=1", NULL};
    cr_assert_eq(lp_env_relative_output(env), env[0]);
    char *arr[3];
    char buf[64];
    char *const *out = lp_env_with_output(env, "/work/dir", arr, buf, sizeof(buf));
    cr_assert_str_eq(out[0], "PROF_OUTPUT=/work/dir/out/p.%p.prof");
    cr_assert_str_eq(out[1], "X=1");
    /* Too long for the buffer: kept as it is. */
    out = lp_env_with_output(env, "/work/dir", arr, buf, 20);
    cr_assert_eq(out[0], env[0]);
    char *absolute[] = {"PROF_OUTPUT=/tmp/p.prof", NULL};
    char *empty[] = {"PROF_OUTPUT=", NULL};
    cr_assert_null(lp_env_relative_output(absolute));
    cr_assert_null(lp_env_relative_output(empty));
    cr_assert_null(lp_env_relative_output(NULL));
    cr_assert_eq(lp_env_count(NULL), 0);
}

Test(environ, fix_output_rewrites_the_slot_in_place)
{
    char *env[] = {"HOME=/root", "PROF_OUTPUT=p.prof", NULL};
    char **same = env;
    lp_env_fix_output(env, "/srv");
    cr_assert_str_eq(same[1], "PROF_OUTPUT=/srv/p.prof");
    cr_assert_str_eq(env[0], "HOME=/root");
    char *absolute[] = {"PROF_OUTPUT=/x.prof", NULL};
    const char *was = absolute[0];
    lp_env_fix_output(absolute, "/srv");
    cr_assert_eq(absolute[0], was);
}
