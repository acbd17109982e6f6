/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the stepper setup (libprof/unwind.c) and its configuration: PROF_UNWIND
 * parsing, the code map and module table read from /proc/self/maps (this test program's
 * own code is found, with its file; heap memory is not code), the libunwind set-up when
 * libprof is built with it, and dl_iterate_phdr() still answering ordinary callers. */
#include <criterion/criterion.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "include/libprof/prof_format.h"
#include "libprof/config.h"
#include "libprof/unwind.h"
#include "sampler/codemap.h"

Test(unwind_config, prof_unwind_picks_the_stepper)
{
    struct lp_config c;
    struct lp_config_msgs m = {0};
    char *dflt[] = {NULL};
    lp_config_load(&c, dflt, &m);
    cr_assert_eq(c.unwinder, PROF_UNWIND_AUTO);
    static const struct {
        char *env;
        unsigned unwinder;
    } names[] = {{"PROF_UNWIND=libunwind", PROF_UNWIND_LIBUNWIND},
                 {"PROF_UNWIND=fp", PROF_UNWIND_FP},
                 {"PROF_UNWIND=dwarf", PROF_UNWIND_DWARF},
                 {"PROF_UNWIND=auto", PROF_UNWIND_AUTO}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char *env[] = {names[i].env, NULL};
        cr_assert_eq(lp_config_load(&c, env, &m), 0);
        cr_assert_eq(c.unwinder, names[i].unwinder, "%s", names[i].env);
    }
    char *bad[] = {"PROF_UNWIND=orc", NULL};
    cr_assert_eq(lp_config_load(&c, bad, &m), 1);
    cr_assert_eq(c.unwinder, PROF_UNWIND_AUTO);
    cr_assert(strstr(m.text[m.n - 1], "PROF_UNWIND='orc'") != NULL, "%s", m.text[m.n - 1]);
}

Test(unwind, the_module_table_names_this_program_and_its_offset)
{
    char path[4096];
    uint64_t off;
    uintptr_t pc = (uintptr_t)&lp_unwind_refresh;
    cr_assert_eq(lp_unwind_module_at(pc, path, sizeof(path), &off), -ENOENT, "nothing before init");
    char *text = (char *)1;
    cr_assert_eq(lp_unwind_init(PROF_UNWIND_FP, &text), 0);
    cr_assert_not_null(text, "the maps text the code map was read from");
    cr_assert(strstr(text, "/tests/unit") != NULL && strstr(text, " r-xp ") != NULL);
    free(text);
    cr_assert_eq(lp_unwind_module_at(pc, path, sizeof(path), &off), 0);
    cr_assert(strstr(path, "/tests/unit") != NULL, "path %s", path);
    cr_assert_lt(off, (uint64_t)64 << 20);
    cr_assert(smp_codemap_contains(pc));
    void *heap = malloc(64);
    cr_assert_not(smp_codemap_contains((uintptr_t)heap), "the heap is not code");
    cr_assert_eq(lp_unwind_module_at((uintptr_t)heap, path, sizeof(path), &off), -ENOENT);
    char small[8];
    cr_assert_eq(lp_unwind_module_at(pc, small, sizeof(small), &off), 0);
    cr_assert_eq(strlen(small), sizeof(small) - 1, "the path is cut to fit, NUL-terminated");
    free(heap);
}

static int count_objects(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    (*(int *)data)++;
    return 0;
}

Test(unwind, libunwind_setup_and_ordinary_dl_iterate_phdr_calls)
{
    int rc = lp_unwind_init(PROF_UNWIND_LIBUNWIND, NULL);
#ifdef PROF_HAVE_LIBUNWIND
    cr_assert_eq(rc, 0);
#else
    cr_assert_eq(rc, -ENOTSUP);
#endif
    int n = 0;
    dl_iterate_phdr(count_objects, &n);
    cr_assert_geq(n, 3, "the program, libc and the loader at least; got %d", n);
    lp_unwind_refresh();
    int again = 0;
    dl_iterate_phdr(count_objects, &again);
    cr_assert_eq(again, n);
}

/* The writer reads the maps again for a sample's walk only when it read them last before
 * the sample was taken (and at most once a millisecond: not asserted, a loaded machine may
 * take longer between two calls). */
Test(unwind, the_maps_are_read_again_for_a_sample_newer_than_the_last_read)
{
    cr_assert_eq(lp_unwind_init(PROF_UNWIND_FP, NULL), 0);
    cr_assert_eq(lp_unwind_rescan_since(0), 0, "read at init, after that sample");
    struct timespec ms = {0, 2000000};
    nanosleep(&ms, NULL);
    uint64_t now = cmn_clock_ns(CLOCK_MONOTONIC);
    cr_assert_eq(lp_unwind_rescan_since(now), 1, "a sample newer than the last read");
    cr_assert_eq(lp_unwind_rescan_since(now), 0, "read since");
}
