/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the perf map reader (reporter/symbols/perfmap.c) on files written here: names
 * by range, the later of two overlapping entries, "0x" prefixes, names with spaces,
 * malformed lines skipped, a missing file read as an empty map; a map of another user's,
 * a link or a FIFO not read (and never waited on); and of the symbolizer
 * naming a frame in anonymous memory, or in none, from the map of the profile's process.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "reporter/input/profile.h"
#include "reporter/symbols/names.h"
#include "reporter/symbols/perfmap.h"
#include "reporter/symbols/symbols.h"

static char dir[64];

static void make_map(uint32_t pid, const char *text)
{
    strcpy(dir, "/tmp/prof-test-perfmap-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/perf-%u.map", dir, pid);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static void remove_map(uint32_t pid)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/perf-%u.map", dir, pid);
    unlink(path);
    rmdir(dir);
}

Test(perfmap, names_code_by_range_and_the_later_entry_wins)
{
    make_map(42, "1000 100 first one\n"
                 "0x2000 0x10 LazyCompile:*fib /app.js:1:13\n"
                 "not a line\n"
                 "3000 zz bad size\n"
                 "1080 10 replaced\n"
                 "4000 0 empty\n");
    struct rep_sym_perfmap m;
    cr_assert_eq(rep_sym_perfmap_load(&m, dir, 42, getuid()), CMN_OK);
    cr_assert_eq(m.n_entries, 3);
    cr_assert_str_eq(rep_sym_perfmap_lookup(&m, 0x1000), "first one");
    cr_assert_str_eq(rep_sym_perfmap_lookup(&m, 0x1085), "replaced");
    cr_assert_str_eq(rep_sym_perfmap_lookup(&m, 0x1095), "first one");
    cr_assert_null(rep_sym_perfmap_lookup(&m, 0x1100));
    cr_assert_str_eq(rep_sym_perfmap_lookup(&m, 0x200f), "LazyCompile:*fib /app.js:1:13");
    cr_assert_null(rep_sym_perfmap_lookup(&m, 0x2010));
    cr_assert_null(rep_sym_perfmap_lookup(&m, 0x3000));
    cr_assert_null(rep_sym_perfmap_lookup(&m, 0x4000));
    cr_assert_null(rep_sym_perfmap_lookup(&m, 0x10));
    rep_sym_perfmap_fini(&m);
    remove_map(42);
}

Test(perfmap, a_missing_map_is_empty)
{
    struct rep_sym_perfmap m;
    cr_assert_eq(rep_sym_perfmap_load(&m, "/nonexistent-dir", 7, getuid()), CMN_OK);
    cr_assert_eq(m.n_entries, 0);
    cr_assert_null(rep_sym_perfmap_lookup(&m, 0x1000));
    rep_sym_perfmap_fini(&m);
}

/* In /tmp anyone can write perf-PID.map for anyone's pid: only the profiled process's user
 * (the profile's owner) or root names its frames; a link to another file is not followed;
 * a FIFO in its place is not waited on. */
Test(perfmap, a_map_not_the_process_users_a_link_or_a_fifo_is_not_read, .timeout = 10)
{
    make_map(43, "1000 100 planted\n");
    char path[128], real[128];
    snprintf(path, sizeof(path), "%s/perf-43.map", dir);
    struct rep_sym_perfmap m;
    cr_assert_eq(rep_sym_perfmap_load(&m, dir, 43, getuid() + 1), CMN_OK);
    cr_expect_eq(m.n_entries, geteuid() == 0 ? 1u : 0u, "root's map is read for anyone");
    rep_sym_perfmap_fini(&m);
    if (geteuid() == 0) {
        cr_assert_eq(chown(path, 4321, 4321), 0);
        cr_assert_eq(rep_sym_perfmap_load(&m, dir, 43, 1234), CMN_OK);
        cr_expect_eq(m.n_entries, 0, "another user's map named the process's frames");
        rep_sym_perfmap_fini(&m);
        cr_assert_eq(rep_sym_perfmap_load(&m, dir, 43, 4321), CMN_OK);
        cr_expect_eq(m.n_entries, 1, "the process's user's own map");
        rep_sym_perfmap_fini(&m);
    }
    snprintf(real, sizeof(real), "%s/elsewhere", dir);
    cr_assert_eq(rename(path, real), 0);
    cr_assert_eq(symlink(real, path), 0);
    cr_assert_eq(rep_sym_perfmap_load(&m, dir, 43, getuid()), CMN_OK);
    cr_expect_eq(m.n_entries, 0, "a link was followed");
    rep_sym_perfmap_fini(&m);
    unlink(path);
    unlink(real);
    cr_assert_eq(mkfifo(path, 0600), 0);
    cr_assert_eq(rep_sym_perfmap_load(&m, dir, 43, getuid()), CMN_OK);
    cr_expect_eq(m.n_entries, 0);
    rep_sym_perfmap_fini(&m);
    remove_map(43);
}

Test(perfmap, the_symbolizer_names_jit_frames_of_the_profiles_process)
{
    make_map(4242, "7f0000001000 40 jit::compiled\n");
    struct rep_names names;
    struct rep_sym sym;
    struct rep_profile prof;
    rep_names_init(&names);
    rep_sym_init(&sym, &names);
    sym.perf_map_dir = dir;
    rep_profile_init(&prof, "jit");
    prof.has_process = true;
    prof.process.pid = 4242;
    struct rep_map anon = {.start = 0x7f0000000000, .end = 0x7f0000010000, .path = ""};
    cr_assert_eq(rep_profile_add_map(&prof, &anon), CMN_OK);
    rep_profile_finish(&prof);
    cr_assert_eq(rep_sym_use_profile(&sym, &prof), CMN_OK);
    uint32_t id;
    cr_assert_eq(rep_sym_frame(&sym, 0x7f0000001010, true, 0, &id), CMN_OK);
    cr_assert_str_eq(rep_names_get(&names, id), "jit::compiled");
    cr_assert_eq(rep_sym_frame(&sym, 0x7f0000002000, false, 0, &id), CMN_OK);
    cr_assert_str_eq(rep_names_get(&names, id), "[anon]", "outside the map: [anon] as before");
    cr_assert_eq(rep_sym_frame(&sym, 0x7f0000001000 + 0x20, false, 0, &id), CMN_OK);
    cr_assert_str_eq(rep_names_get(&names, id), "jit::compiled");
    rep_sym_fini(&sym);
    rep_profile_fini(&prof);
    rep_names_fini(&names);
    remove_map(4242);
}
