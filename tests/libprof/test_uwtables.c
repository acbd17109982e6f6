/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the unwind-table module registry (libprof/uwtables.c): data files mapped
 * read-only take no slot; a module no mapping is left of is freed and its id taken again;
 * a file mapped again whose build-id changed (a library rewritten in place, an inode
 * reused) is a new module, not the old one's table, while the same file mapped again at
 * another address keeps it; a table in the cache is taken under the module's fingerprint
 * only. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/maps_line.h"
#include "common/uw_table.h"
#include "include/libprof/prof_format.h"
#include "libprof/uwcache.h"
#include "libprof/uwtables.h"
#include "sampler/codemap.h"

static struct cmn_maps_line line(uint64_t start, uint64_t ino, uint32_t prot, const char *path)
{
    return (struct cmn_maps_line){.start = start, .end = start + 0x1000, .offset = 0,
                                  .dev = (8ull << 32) | 1, .inode = ino, .prot = prot,
                                  .path = path};
}

Test(uw_registry, data_files_mapped_read_only_take_no_slot)
{
    char path[64];
    lp_uwtables_scan_begin();
    for (unsigned i = 0; i < 2 * SMP_MODULES_MAX; i++) {
        snprintf(path, sizeof(path), "/usr/share/data/file%u", i);
        struct cmn_maps_line m = line(0x10000000ull + 0x1000ull * i, 1000 + i, PROF_MAP_READ, path);
        lp_uwtables_header(&m);
    }
    struct cmn_maps_line code = line(0x7f0000000000ull, 5, PROF_MAP_READ | PROF_MAP_EXEC,
                                     "/usr/lib/libx.so");
    uint32_t id = lp_uwtables_module(&code);
    lp_uwtables_scan_end();
    cr_assert_neq(id, 0, "a library after 8192 data files still gets a module");
    cr_assert_eq(lp_uwtables_n_modules(), 1);
}

Test(uw_registry, a_module_no_mapping_is_left_of_is_freed_and_its_id_reused)
{
    struct cmn_maps_line a = line(0x7f0000000000ull, 5, PROF_MAP_READ | PROF_MAP_EXEC, "/a.so");
    struct cmn_maps_line b = line(0x7f0000100000ull, 6, PROF_MAP_READ | PROF_MAP_EXEC, "/b.so");
    struct cmn_maps_line c = line(0x7f0000200000ull, 7, PROF_MAP_READ | PROF_MAP_EXEC, "/c.so");
    lp_uwtables_scan_begin();
    uint32_t ida = lp_uwtables_module(&a), idb = lp_uwtables_module(&b);
    lp_uwtables_scan_end();
    cr_assert_eq(lp_uwtables_n_modules(), 2);
    lp_uwtables_scan_begin();
    cr_assert_eq(lp_uwtables_module(&a), ida, "a module keeps its id while mapped");
    lp_uwtables_scan_end();
    cr_assert_eq(lp_uwtables_n_modules(), 1, "b was unmapped: freed");
    lp_uwtables_scan_begin();
    lp_uwtables_module(&a);
    cr_assert_eq(lp_uwtables_module(&c), idb, "c takes b's freed slot");
    lp_uwtables_scan_end();
    /* Many libraries loaded and unloaded in turn never fill the registry. */
    for (unsigned i = 0; i < 2 * SMP_MODULES_MAX; i++) {
        struct cmn_maps_line d = line(0x7f1000000000ull, 100 + i, PROF_MAP_READ | PROF_MAP_EXEC,
                                      "/plugin.so");
        lp_uwtables_scan_begin();
        lp_uwtables_module(&a);
        cr_assert_neq(lp_uwtables_module(&d), 0, "plugin %u gets a module", i);
        lp_uwtables_scan_end();
    }
    cr_assert_eq(lp_uwtables_n_modules(), 2);
}

/* Where this process maps `name` (a substring of the path): its first mapping (the ELF
 * header, offset 0) and the file's identity; 0 when not found. */
static uint64_t find_mapping(const char *name, struct cmn_maps_line *out, char *path, size_t cap)
{
    FILE *f = fopen("/proc/self/maps", "r");
    cr_assert_not_null(f);
    char buf[512];
    uint64_t found = 0;
    while (!found && fgets(buf, sizeof(buf), f)) {
        buf[strcspn(buf, "\n")] = '\0';
        struct cmn_maps_line m;
        if (cmn_maps_parse_line(buf, &m) == 0 && m.offset == 0 && strstr(m.path, name)) {
            snprintf(path, cap, "%s", m.path);
            *out = m;
            out->path = path;
            found = m.start;
        }
    }
    fclose(f);
    return found;
}

/* The unwind table a range of module id gets, as the code map would publish it. */
static struct smp_code_range annotated(uint32_t id, uint64_t start)
{
    struct smp_code_range r = {.start = start, .end = start + 0x1000};
    lp_uwtables_annotate(&r, id, 0);
    return r;
}

Test(uw_registry, a_file_mapped_again_with_another_build_id_is_a_new_module)
{
    setenv("LIBPROF_CACHE_DIR", "", 1); /* tables built here, not taken from a cache */
    lp_uwcache_init();
    struct cmn_maps_line libc, self;
    char libc_path[256], self_path[256];
    cr_assert_neq(find_mapping("libc.so", &libc, libc_path, sizeof(libc_path)), 0);
    char exe[256];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    cr_assert_gt(n, 0);
    exe[n] = '\0';
    cr_assert_neq(find_mapping(exe, &self, self_path, sizeof(self_path)), 0);
    /* libc's file, its header read-only at offset 0 and one executable range. */
    struct cmn_maps_line code = libc;
    code.prot = PROF_MAP_READ | PROF_MAP_EXEC;
    code.offset = 0x1000;
    lp_uwtables_scan_begin();
    lp_uwtables_header(&libc);
    uint32_t id = lp_uwtables_module(&code);
    lp_uwtables_scan_end();
    lp_uwtables_want_all();
    cr_assert_eq(lp_uwtables_build_wanted(), 1);
    cr_assert_not_null(annotated(id, code.start).table, "libc's table was built");
    const struct cmn_uw_table *built = annotated(id, code.start).table;

    /* The same file mapped again elsewhere: its header there is libc's: kept. */
    int fd = open(libc_path, O_RDONLY);
    cr_assert_geq(fd, 0);
    void *again = mmap(NULL, 0x1000, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    cr_assert_neq(again, MAP_FAILED);
    struct cmn_maps_line moved = libc;
    moved.start = (uintptr_t)again;
    lp_uwtables_scan_begin();
    lp_uwtables_header(&moved);
    cr_assert_eq(lp_uwtables_module(&code), id);
    lp_uwtables_scan_end();
    cr_assert_eq(annotated(id, code.start).table, built, "the same build-id keeps its table");

    /* The same device and inode, but the header mapped now is another ELF file's (this
     * program's): a library rewritten in place, loaded again. */
    struct cmn_maps_line rewritten = libc;
    rewritten.start = self.start;
    lp_uwtables_scan_begin();
    lp_uwtables_header(&rewritten);
    uint32_t now = lp_uwtables_module(&code);
    lp_uwtables_scan_end();
    struct smp_code_range r = annotated(now, code.start);
    cr_assert_null(r.table, "the old library's table is not the new one's");
    cr_assert_eq(r.module, now, "the new module's table is to be built");
    cr_assert_eq(lp_uwtables_n_modules(), 1);
}

/* The one cache file under dir (LIBPROF_CACHE_DIR): its path into path; its size, 0 when
 * there is not one. */
static off_t only_cache_file(const char *dir, char *path, size_t cap)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "ls %s/unwind/*.uwt 2>/dev/null", dir);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    int n = 0;
    char buf[512];
    while (fgets(buf, sizeof(buf), p)) {
        buf[strcspn(buf, "\n")] = '\0';
        snprintf(path, cap, "%s", buf);
        n++;
    }
    pclose(p);
    struct stat st;
    return n == 1 && stat(path, &st) == 0 ? st.st_size : 0;
}

/* Changes the byte at offset at of the file by flipping bit. */
static void flip_byte(const char *path, off_t at, unsigned char bit)
{
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0);
    unsigned char c;
    cr_assert_eq(pread(fd, &c, 1, at), 1);
    c ^= bit;
    cr_assert_eq(pwrite(fd, &c, 1, at), 1);
    close(fd);
}

/* Builds (or takes from the cache) the table of libc's mapping as a new module: the
 * module seen before is dropped by a scan without it first. A copy of the table, its
 * size into *bytes. */
static unsigned char *table_of_new_module(const struct cmn_maps_line *header,
                                          const struct cmn_maps_line *code, uint64_t *bytes)
{
    lp_uwtables_scan_begin();
    lp_uwtables_scan_end();
    lp_uwtables_scan_begin();
    lp_uwtables_header(header);
    uint32_t id = lp_uwtables_module(code);
    lp_uwtables_scan_end();
    lp_uwtables_want_all();
    cr_assert_eq(lp_uwtables_build_wanted(), 1);
    const struct cmn_uw_table *t = annotated(id, code->start).table;
    cr_assert_not_null(t);
    *bytes = t->total_bytes;
    unsigned char *copy = malloc(*bytes);
    cr_assert_not_null(copy);
    memcpy(copy, t, *bytes);
    return copy;
}

Test(uw_registry, a_cached_table_is_taken_only_under_the_modules_fingerprint)
{
    char dir[] = "/tmp/prof-uwcache-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    setenv("LIBPROF_CACHE_DIR", dir, 1);
    lp_uwcache_init();
    struct cmn_maps_line libc;
    char libc_path[256], file[512];
    cr_assert_neq(find_mapping("libc.so", &libc, libc_path, sizeof(libc_path)), 0);
    struct cmn_maps_line code = libc;
    code.prot = PROF_MAP_READ | PROF_MAP_EXEC;
    code.offset = 0x1000;

    uint64_t n1, n2, n3;
    unsigned char *built = table_of_new_module(&libc, &code, &n1);
    off_t size = only_cache_file(dir, file, sizeof(file));
    cr_assert_eq((uint64_t)size, 72 + n1, "the table built was stored: %s", file);

    /* A byte of the stored table changed (its last rule: the table stays well formed):
     * the next module of the same memory takes the stored table, not a new one. */
    flip_byte(file, size - 1, 0x01);
    unsigned char *cached = table_of_new_module(&libc, &code, &n2);
    cr_assert_eq(n2, n1);
    cr_assert_eq(cached[n1 - 1], built[n1 - 1] ^ 0x01, "the table came from the cache");
    cr_assert_eq(memcmp(cached, built, n1 - 1), 0);

    /* The stored fingerprint (the header's bytes 24..31) no longer the module's: the
     * table is built again, and stored over the file. */
    flip_byte(file, 24, 0x80);
    unsigned char *again = table_of_new_module(&libc, &code, &n3);
    cr_assert_eq(n3, n1);
    cr_assert_eq(memcmp(again, built, n1), 0, "built again, not taken from the cache");
    cr_assert_eq(only_cache_file(dir, file, sizeof(file)), size);
    unsigned char *stored = table_of_new_module(&libc, &code, &n3);
    cr_assert_eq(memcmp(stored, built, n1), 0, "the file holds the table built again");

    free(built);
    free(cached);
    free(again);
    free(stored);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    setenv("LIBPROF_CACHE_DIR", "", 1);
    lp_uwcache_init();
}
