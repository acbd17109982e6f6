/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Unit tests of reporter/symbols/module.c against real files: the C library as installed (stripped;
 * its symbols and lines come from libc6-dbg's separate debug file, found by build-id), a
 * copy of the test binary split into a stripped file and a debug file joined by
 * .gnu_debuglink (found next to it, in .debug/, with the CRC check), and the reporter's own
 * vDSO.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "reporter/symbols/module.h"
#include "reporter/symbols/vdso.h"

struct off_query {
    uintptr_t addr;  /* in */
    uint64_t off;    /* out: file offset of addr */
    char path[4096]; /* out: the object's path */
    int found;
};

static int off_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct off_query *q = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && q->addr >= start && q->addr - start < ph->p_memsz) {
            q->off = q->addr - start + ph->p_offset;
            snprintf(q->path, sizeof(q->path), "%s", info->dlpi_name);
            q->found = 1;
            return 1;
        }
    }
    return 0;
}

/* The file offset and object path of the code at addr, in this process. */
static struct off_query locate(const void *addr)
{
    struct off_query q = {.addr = (uintptr_t)addr};
    dl_iterate_phdr(off_cb, &q);
    cr_assert(q.found, "no object holds %p", addr);
    return q;
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

Test(module, names_a_libc_function_and_its_source_line_from_the_debug_package)
{
    /* libc's own qsort: under ASan the default one is the sanitizer's interceptor. */
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    cr_assert_not_null(libc);
    void *fn = dlsym(libc, "qsort");
    cr_assert_not_null(fn);
    struct off_query q = locate((const char *)fn + 4);
    int v[3] = {3, 1, 2};
    qsort(v, 3, sizeof(v[0]), cmp_int);
    struct rep_module *m;
    struct cmn_err err = {0};
    cr_assert_eq(rep_module_open(q.path, &m, &err), CMN_OK, "%s", err.msg);
    const char *name;
    cr_assert_eq(rep_module_lookup(m, q.off, &name), CMN_OK);
    cr_expect(strstr(name, "qsort") != NULL, "qsort+4 named %s", name);
    struct rep_module_frame fr[8];
    size_t n;
    cr_assert_eq(rep_module_lines(m, q.off, fr, 8, &n), CMN_OK,
                 "no line for qsort in %s: is libc6-dbg installed?", q.path);
    cr_assert_geq(n, 1);
    cr_assert_not_null(fr[n - 1].file);
    cr_expect(strstr(fr[n - 1].file, "msort.c") != NULL, "qsort is in %s", fr[n - 1].file);
    cr_expect_gt(fr[n - 1].line, 0);
    rep_module_close(m);
}

/* Runs a shell command, asserting success. */
static void sh(const char *cmd)
{
    cr_assert_eq(system(cmd), 0, "failed: %s", cmd);
}

/* A function of this binary, so that it has a line in it. */
__attribute__((noinline)) int module_test_marker(int x);
__attribute__((noinline)) int module_test_marker(int x)
{
    return x * 7 + 1;
}

static void split_with_debuglink(const char *dir, const char *debug_sub, int corrupt)
{
    char cmd[8192];
    struct off_query q = locate((const void *)module_test_marker);
    (void)q;
    snprintf(cmd, sizeof(cmd),
             "set -e; d=%s; mkdir -p $d/%s; cp /proc/%d/exe $d/bin; "
             "objcopy --only-keep-debug $d/bin $d/%s/bin.debug; "
             "objcopy --strip-all --remove-section=.note.gnu.build-id "
             "--add-gnu-debuglink=$d/%s/bin.debug $d/bin $d/bin.stripped",
             dir, debug_sub, (int)getpid(), debug_sub, debug_sub);
    sh(cmd);
    if (corrupt) {
        snprintf(cmd, sizeof(cmd), "printf 'x' >> %s/%s/bin.debug", dir, debug_sub);
        sh(cmd);
    }
}

static void check_debuglink(const char *debug_sub, int corrupt)
{
    char dir[] = "/tmp/prof-test-module-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    split_with_debuglink(dir, debug_sub, corrupt);
    char path[4200];
    snprintf(path, sizeof(path), "%s/bin.stripped", dir);
    struct off_query q = locate((const void *)module_test_marker);
    struct rep_module *m;
    struct cmn_err err = {0};
    cr_assert_eq(rep_module_open(path, &m, &err), CMN_OK, "%s", err.msg);
    const char *name = NULL;
    int rc = rep_module_lookup(m, q.off, &name);
    struct rep_module_frame fr[4];
    size_t n;
    int lrc = rep_module_lines(m, q.off, fr, 4, &n);
    if (corrupt) {
        /* The CRC does not match: the debug file is not used, and the stripped file has no
         * symbol for a non-exported function. */
        cr_expect(rc != CMN_OK || strcmp(name, "module_test_marker") != 0);
        cr_expect_neq(lrc, CMN_OK);
    } else {
        cr_assert_eq(rc, CMN_OK);
        cr_expect_str_eq(name, "module_test_marker");
        cr_assert_eq(lrc, CMN_OK);
        cr_expect(strstr(fr[0].file, "test_module.c") != NULL, "file %s", fr[0].file);
    }
    rep_module_close(m);
    char cmd[4300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    sh(cmd);
}

Test(module, finds_a_debuglink_file_next_to_the_binary)
{
    check_debuglink(".", 0);
}

Test(module, finds_a_debuglink_file_in_the_debug_subdirectory)
{
    check_debuglink(".debug", 0);
}

Test(module, rejects_a_debuglink_file_whose_crc_differs)
{
    check_debuglink(".", 1);
}

Test(module, opens_its_own_vdso_only_with_the_same_build_id)
{
    struct rep_module *m;
    uint8_t wrong[20] = {1, 2, 3};
    cr_assert_eq(rep_vdso_open(wrong, sizeof(wrong), &m), CMN_E_NOTFOUND);
    cr_assert_eq(rep_vdso_open(wrong, 0, &m), CMN_E_NOTFOUND);
    /* The right id is the one in the vDSO's own note. */
    const uint8_t *id;
    size_t n_id;
    struct rep_module *probe;
    const unsigned char *img = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
    cr_assert_not_null(img);
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)img;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(img + eh->e_phoff);
    const uint8_t *note_id = NULL;
    size_t note_n = 0;
    for (int i = 0; i < eh->e_phnum && note_id == NULL; i++) {
        if (ph[i].p_type != PT_NOTE)
            continue;
        const unsigned char *p = img + ph[i].p_offset, *end = p + ph[i].p_filesz;
        while (p + 12 <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            const unsigned char *desc = p + 12 + ((nh->n_namesz + 3) & ~3u);
            if (nh->n_type == NT_GNU_BUILD_ID) {
                note_id = desc;
                note_n = nh->n_descsz;
                break;
            }
            p = desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
    cr_assert_not_null(note_id, "the vDSO has no build-id note");
    cr_assert_eq(rep_vdso_open(note_id, note_n, &probe), CMN_OK);
    cr_assert_eq(rep_module_build_id(probe, &id, &n_id), CMN_OK);
    cr_assert_eq(n_id, note_n);
    cr_assert_gt(rep_module_n_functions(probe), 0);
    rep_module_close(probe);
}
