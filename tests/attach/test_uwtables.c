/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of another process's unwind tables (attach/uwtables.c), with this very
 * process as the other one: one table per file, shared by its mappings, whose rows are
 * found at run-time addresses through the mapping's bias (a function's first instruction:
 * CFA = stack pointer + one word, nothing pushed yet); the vDSO's table read from memory;
 * no table for anonymous code, nor for a mapping whose file cannot be opened as mapped,
 * with the reason; and how long the tables of a large program take to build. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "attach/procmaps.h"
#include "attach/uwtables.h"
#include "common/err.h"
#include "common/uw_table.h"

struct fixture {
    struct att_maps maps;
    struct att_uwtables tables;
};

static void setup(struct fixture *fx)
{
    struct cmn_err err = {0};
    cr_assert_eq(att_maps_read(getpid(), &fx->maps, &err), CMN_OK, "%s", err.msg);
    att_uwtables_init(&fx->tables, getpid());
}

static void teardown(struct fixture *fx)
{
    att_uwtables_fini(&fx->tables);
    att_maps_free(&fx->maps);
}

/* The rule the tables give for run-time address pc of this process. */
static uint32_t rule_at(struct fixture *fx, uintptr_t pc, const struct cmn_uw_table **table)
{
    const struct att_map *m = att_maps_find(&fx->maps, pc);
    cr_assert_not_null(m, "%#lx is in no mapping", (unsigned long)pc);
    uint64_t bias = 0;
    *table = att_uwtables_find(&fx->tables, m, &bias);
    cr_assert_not_null(*table, "no table for %s", m->path);
    return cmn_uw_lookup(*table, pc - bias);
}

/* A function's entry: the return address is the word at the stack pointer. */
static void expect_entry_rule(uint32_t rule, const char *what)
{
    cr_expect_eq(cmn_uw_kind(rule), CMN_UW_CFA_SP, "%s: rule %#x", what, rule);
    cr_expect_eq(cmn_uw_off(rule), (int32_t)sizeof(void *), "%s: CFA offset", what);
}

Test(uwtables, one_table_per_file_found_through_each_mapping)
{
    struct fixture fx;
    setup(&fx);
    const struct cmn_uw_table *libc, *again, *self;
    expect_entry_rule(rule_at(&fx, (uintptr_t)&getppid, &libc), "getppid");
    expect_entry_rule(rule_at(&fx, (uintptr_t)&getpgrp, &again), "getpgrp");
    cr_expect_eq(libc, again, "libc has two tables");
    size_t n_mods = fx.tables.n_mods;
    cr_expect_eq(n_mods, 1);
    (void)rule_at(&fx, (uintptr_t)&setup, &self);
    cr_expect_neq(self, libc);
    cr_expect_eq(fx.tables.n_mods, 2);
    cr_expect_eq(fx.tables.n_tables, 2);
    cr_expect_gt(fx.tables.bytes, 0);
    cr_expect_null(att_uwtables_failed(&fx.tables));
    teardown(&fx);
}

Test(uwtables, the_vdso_is_read_from_memory)
{
    struct fixture fx;
    setup(&fx);
    void *vdso = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
    void *fn = vdso != NULL ? dlsym(vdso, "__vdso_clock_gettime") : NULL;
    if (fn == NULL)
        cr_skip_test("no vDSO clock_gettime here");
    const struct cmn_uw_table *t;
    expect_entry_rule(rule_at(&fx, (uintptr_t)fn, &t), "__vdso_clock_gettime");
    cr_expect_eq(fx.tables.mods[0].ino, 0);
    teardown(&fx);
}

Test(uwtables, no_table_for_anonymous_code_or_a_file_not_the_one_mapped)
{
    struct fixture fx;
    setup(&fx);
    uint64_t bias;
    struct att_map anon = {.start = 0x10000, .end = 0x20000, .prot = PROF_MAP_EXEC, .path = ""};
    cr_expect_null(att_uwtables_find(&fx.tables, &anon, &bias));
    cr_expect_eq(fx.tables.n_mods, 0);
    /* The path names this process's libc, but the identity is another file's, at
     * addresses this process does not map (no map_files entry either). */
    const struct att_map *libc = att_maps_find(&fx.maps, (uintptr_t)&getppid);
    cr_assert_not_null(libc);
    struct att_map other = *libc;
    other.inode = libc->inode + 1;
    other.start = 0x10000;
    other.end = 0x20000;
    cr_expect_null(att_uwtables_find(&fx.tables, &other, &bias));
    const struct att_uw_module *failed = att_uwtables_failed(&fx.tables);
    cr_assert_not_null(failed);
    cr_expect_str_eq(failed->path, libc->path);
    cr_expect(strstr(failed->why, "cannot be opened as mapped") != NULL, "%s", failed->why);
    cr_expect_null(att_uwtables_failed(&fx.tables), "a failure given twice");
    /* The real one still gets its table. */
    const struct cmn_uw_table *t;
    expect_entry_rule(rule_at(&fx, (uintptr_t)&getppid, &t), "getppid");
    teardown(&fx);
}

/* The table of the file at path, as if this process mapped it whole at address 1 GiB:
 * how long it takes to build (logged), and that it has rows. */
static void time_build(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return;
    struct att_uwtables u;
    att_uwtables_init(&u, getpid());
    struct att_map m = {.start = 1ull << 30, .end = (1ull << 30) + (uint64_t)st.st_size,
                        .dev = (uint64_t)major(st.st_dev) << 32 | minor(st.st_dev),
                        .inode = st.st_ino, .prot = PROF_MAP_EXEC, .path = (char *)path};
    uint64_t bias;
    const struct cmn_uw_table *t = att_uwtables_find(&u, &m, &bias);
    cr_expect_not_null(t, "no table for %s", path);
    if (t != NULL)
        cr_log_info("%s: %u rows, %.0f KiB, built in %.1f ms", path, t->n_rows,
                    (double)u.bytes / 1024, (double)u.build_ns / 1e6);
    att_uwtables_fini(&u);
}

Test(uwtables, large_programs_build_in_milliseconds)
{
    time_build("/usr/bin/python3.11");
    time_build("/usr/lib/x86_64-linux-gnu/libc.so.6");
}
