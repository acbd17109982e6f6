/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the unwind-table cache (libprof/uwcache.c): a table stored under a build-id
 * comes back whole, under that build-id only; a file cut short, or whose page index points
 * past its rows, is not used; LIBPROF_CACHE_DIR set but empty turns the cache off. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/uw_table.h"
#include "libprof/uwcache.h"

static char dir[64];
static const uint8_t id[20] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9};

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/libprof-uwc.XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    setenv("LIBPROF_CACHE_DIR", dir, 1);
    lp_uwcache_init();
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(uwcache, .init = setup, .fini = teardown);

/* A small table: three rows over 0x300 bytes. */
static struct cmn_uw_table *small_table(void)
{
    static uint64_t mem[256];
    struct cmn_uw_table *t = cmn_uw_table_layout(mem, 0x1000, 0x300, 3);
    uint32_t pcs[3] = {0, 0x10, 0x200}, rules[3] = {0x11, 0x22, 0};
    memcpy((char *)t + t->pcs_at, pcs, sizeof(pcs));
    memcpy((char *)t + t->rules_at, rules, sizeof(rules));
    cmn_uw_table_index(t);
    return t;
}

static char *file_of(void)
{
    static char path[128];
    int n = snprintf(path, sizeof(path), "%s/unwind/", dir);
    for (size_t i = 0; i < sizeof(id); i++)
        n += snprintf(path + n, sizeof(path) - (size_t)n, "%02x", id[i]);
    snprintf(path + n, sizeof(path) - (size_t)n, ".uwt");
    return path;
}

Test(uwcache, a_stored_table_comes_back_under_its_build_id_only)
{
    struct cmn_uw_table *t = small_table();
    uint64_t bytes;
    cr_assert_null(lp_uwcache_load(id, sizeof(id), &bytes), "nothing stored yet");
    lp_uwcache_store(id, sizeof(id), t);
    const struct cmn_uw_table *back = lp_uwcache_load(id, sizeof(id), &bytes);
    cr_assert_not_null(back);
    cr_assert_eq(back->total_bytes, t->total_bytes);
    cr_assert_eq(memcmp(back, t, t->total_bytes), 0);
    cr_assert_eq(cmn_uw_lookup(back, 0x1015), 0x22);
    uint8_t other[20] = {0xde, 0xad};
    cr_assert_null(lp_uwcache_load(other, sizeof(other), &bytes));
}

Test(uwcache, a_damaged_file_is_not_used)
{
    struct cmn_uw_table *t = small_table();
    lp_uwcache_store(id, sizeof(id), t);
    uint64_t bytes;
    /* Cut short. */
    cr_assert_eq(truncate(file_of(), 100), 0);
    cr_assert_null(lp_uwcache_load(id, sizeof(id), &bytes));
    /* Whole, but a page index entry past the rows. */
    lp_uwcache_store(id, sizeof(id), t);
    int fd = open(file_of(), O_RDWR);
    cr_assert_geq(fd, 0);
    uint32_t bad = 1000;
    cr_assert_eq(pwrite(fd, &bad, 4, 64 + t->pages_at + 4), 4);
    close(fd);
    cr_assert_null(lp_uwcache_load(id, sizeof(id), &bytes));
}

Test(uwcache, an_empty_cache_dir_turns_it_off)
{
    setenv("LIBPROF_CACHE_DIR", "", 1);
    lp_uwcache_init();
    lp_uwcache_store(id, sizeof(id), small_table());
    uint64_t bytes;
    cr_assert_null(lp_uwcache_load(id, sizeof(id), &bytes));
    struct stat st;
    cr_assert_neq(stat(file_of(), &st), 0, "a file was written");
}
