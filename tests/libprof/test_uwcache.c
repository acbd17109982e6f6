/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the unwind-table cache (libprof/uwcache.c): a table stored under a build-id
 * and a fingerprint comes back whole, under both only; a file cut short, or whose page
 * index points past its rows, is not used; LIBPROF_CACHE_DIR set but empty turns the cache
 * off; a directory or file not the user's alone is refused; what comes back is a private
 * copy that the file cannot change; a process whose effective and real users differ uses
 * no cache. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/uw_table.h"
#include "libprof/uwcache.h"
#include <signal.h>
#include <sys/mman.h>

static char dir[64];
static const uint8_t id[20] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9};
static const struct lp_uwcache_key key = {id, sizeof(id), 0x1234567890abcdefull};

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

Test(uwcache, a_stored_table_comes_back_under_its_build_id_and_fingerprint_only)
{
    struct cmn_uw_table *t = small_table();
    uint64_t bytes;
    cr_assert_null(lp_uwcache_load(&key, &bytes), "nothing stored yet");
    lp_uwcache_store(&key, t);
    const struct cmn_uw_table *back = lp_uwcache_load(&key, &bytes);
    cr_assert_not_null(back);
    cr_assert_eq(back->total_bytes, t->total_bytes);
    cr_assert_eq(memcmp(back, t, t->total_bytes), 0);
    cr_assert_eq(cmn_uw_lookup(back, 0x1015), 0x22);
    uint8_t other[20] = {0xde, 0xad};
    struct lp_uwcache_key other_id = {other, sizeof(other), key.fingerprint};
    cr_assert_null(lp_uwcache_load(&other_id, &bytes));
    /* A library that carries this build-id but other code or call-frame information. */
    struct lp_uwcache_key forged = {id, sizeof(id), key.fingerprint ^ 1};
    cr_assert_null(lp_uwcache_load(&forged, &bytes));
}

/* The handlers read the table: a copy in private memory, which a file cut short or
 * rewritten after the check cannot change (a file mapping would raise SIGBUS in them). */
Test(uwcache, a_loaded_table_is_a_private_copy)
{
    struct cmn_uw_table *t = small_table();
    lp_uwcache_store(&key, t);
    uint64_t bytes;
    const struct cmn_uw_table *back = lp_uwcache_load(&key, &bytes);
    cr_assert_not_null(back);
    cr_assert_eq(truncate(file_of(), 0), 0);
    cr_assert_eq(back->total_bytes, t->total_bytes);
    cr_assert_eq(cmn_uw_lookup(back, 0x1015), 0x22);
    cr_assert_eq(memcmp(back, t, t->total_bytes), 0);
    /* Read-only once checked. */
    void *page = (void *)((uintptr_t)back & ~(uintptr_t)4095);
    cr_assert_eq(mprotect(page, 4096, PROT_READ), 0);
}

/* A cache directory others may write in or enter (a shared folder, a group's), or a link,
 * is not used; nor is a file in it of another user's. */
Test(uwcache, a_directory_or_file_not_the_users_alone_is_refused)
{
    struct cmn_uw_table *t = small_table();
    char unwind[96];
    snprintf(unwind, sizeof(unwind), "%s/unwind", dir);
    lp_uwcache_store(&key, t);
    uint64_t bytes;
    cr_assert_not_null(lp_uwcache_load(&key, &bytes));
    cr_assert_eq(chmod(unwind, 0755), 0);
    cr_assert_null(lp_uwcache_load(&key, &bytes), "a directory open to others");
    cr_assert_eq(chmod(unwind, 0700), 0);
    cr_assert_not_null(lp_uwcache_load(&key, &bytes));
    if (geteuid() == 0) {
        cr_assert_eq(chown(file_of(), 65534, 65534), 0);
        cr_assert_null(lp_uwcache_load(&key, &bytes), "another user's file");
        cr_assert_eq(chown(file_of(), 0, 0), 0);
    }
    /* The directory swapped for a link to one of the same user's, made 0700. */
    char real[96];
    snprintf(real, sizeof(real), "%s/real", dir);
    cr_assert_eq(rename(unwind, real), 0);
    cr_assert_eq(symlink(real, unwind), 0);
    cr_assert_null(lp_uwcache_load(&key, &bytes), "a link");
}

/* sudo -E, or a process that switched its effective user: another user's cache is never
 * read, nor written. */
Test(uwcache, no_cache_while_the_effective_user_is_not_the_real_one)
{
    if (geteuid() != 0)
        cr_skip_test("needs root to switch the effective user");
    struct cmn_uw_table *t = small_table();
    lp_uwcache_store(&key, t);
    char unwind[96];
    snprintf(unwind, sizeof(unwind), "%s/unwind", dir);
    cr_assert_eq(chown(dir, 65534, 65534), 0);
    cr_assert_eq(chown(unwind, 65534, 65534), 0);
    cr_assert_eq(chown(file_of(), 65534, 65534), 0);
    uint64_t bytes;
    cr_assert_eq(setresgid(65534, 65534, 0), 0);
    cr_assert_eq(setresuid(65534, 65534, 0), 0);
    cr_assert_not_null(lp_uwcache_load(&key, &bytes), "nobody's own cache, as nobody");
    cr_assert_eq(setresuid(0, 65534, 0), 0);
    cr_assert_null(lp_uwcache_load(&key, &bytes), "nobody's cache, as root acting as nobody");
}

Test(uwcache, a_damaged_file_is_not_used)
{
    struct cmn_uw_table *t = small_table();
    lp_uwcache_store(&key, t);
    uint64_t bytes;
    /* Cut short. */
    cr_assert_eq(truncate(file_of(), 100), 0);
    cr_assert_null(lp_uwcache_load(&key, &bytes));
    /* Whole, but a page index entry past the rows. */
    lp_uwcache_store(&key, t);
    int fd = open(file_of(), O_RDWR);
    cr_assert_geq(fd, 0);
    uint32_t bad = 1000;
    cr_assert_eq(pwrite(fd, &bad, 4, 72 + t->pages_at + 4), 4);
    close(fd);
    cr_assert_null(lp_uwcache_load(&key, &bytes));
}

Test(uwcache, an_empty_cache_dir_turns_it_off)
{
    setenv("LIBPROF_CACHE_DIR", "", 1);
    lp_uwcache_init();
    lp_uwcache_store(&key, small_table());
    uint64_t bytes;
    cr_assert_null(lp_uwcache_load(&key, &bytes));
    struct stat st;
    cr_assert_neq(stat(file_of(), &st), 0, "a file was written");
}
