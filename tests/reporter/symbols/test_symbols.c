/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of symbolization (reporter/symbols/symbols.c over reporter/symbols/module.c) against real files:
 * this test binary (PIE, as Debian's gcc builds by default) and the C library, with
 * mappings taken from /proc/self/maps the way the library records them, and against
 * hand-made mappings for the cases without a usable file.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "reporter/input/profile.h"
#include "reporter/symbols/module.h"
#include "reporter/symbols/names.h"
#include "reporter/symbols/symbols.h"

/* Functions with known names for the symbolizer to find. */
__attribute__((noinline)) int sym_test_known_function(int x);
__attribute__((noinline)) int sym_test_known_function(int x)
{
    return x * 7 + 3;
}

static jmp_buf leave_jb;
static uint64_t seen_return_address;

__attribute__((noinline, noreturn)) static void capture_and_leave(void)
{
    seen_return_address = (uint64_t)(uintptr_t)__builtin_return_address(0);
    longjmp(leave_jb, 1);
}

/* Its call is its last instruction, so the return address lies past its end. */
__attribute__((noinline)) void sym_test_calls_last(void);
__attribute__((noinline)) void sym_test_calls_last(void)
{
    capture_and_leave();
}

static const char rodata_bytes[64] = "not code, and no function covers it";

/* A copy of s that lives as long as the test process, so that mappings can point to it. */
static const char *keep_path(const char *s)
{
    static char pool[1 << 17];
    static size_t used;
    size_t n = strlen(s) + 1;
    cr_assert_leq(used + n, sizeof(pool));
    char *copy = memcpy(pool + used, s, n);
    used += n;
    return copy;
}

/* The mappings of this process, as libprof records them: every file-backed one. */
static void add_self_maps(struct rep_profile *p)
{
    FILE *f = fopen("/proc/self/maps", "r");
    cr_assert_not_null(f);
    char line[PATH_MAX + 256];
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned long start, end, off;
        char perms[8], path[PATH_MAX] = "";
        if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095[^\n]", &start, &end, perms, &off, path) <
                4 ||
            path[0] != '/')
            continue;
        struct rep_map m = {
            .start = start, .end = end, .file_offset = off, .path = keep_path(path)};
        cr_assert_eq(rep_profile_add_map(p, &m), CMN_OK);
    }
    fclose(f);
    rep_profile_finish(p);
}

struct fixture {
    struct rep_names names;
    struct rep_sym sym;
    struct rep_profile prof;
};

static void setup_self(struct fixture *fx)
{
    rep_names_init(&fx->names);
    rep_sym_init(&fx->sym, &fx->names);
    rep_profile_init(&fx->prof, "self");
    add_self_maps(&fx->prof);
    cr_assert_eq(rep_sym_use_profile(&fx->sym, &fx->prof), CMN_OK);
}

/* A profile with the given mappings only. */
static void setup_maps(struct fixture *fx, const struct rep_map *maps, size_t n)
{
    rep_names_init(&fx->names);
    rep_sym_init(&fx->sym, &fx->names);
    rep_profile_init(&fx->prof, "hand-made");
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(rep_profile_add_map(&fx->prof, &maps[i]), CMN_OK);
    rep_profile_finish(&fx->prof);
    cr_assert_eq(rep_sym_use_profile(&fx->sym, &fx->prof), CMN_OK);
}

static void teardown(struct fixture *fx)
{
    rep_sym_fini(&fx->sym);
    rep_profile_fini(&fx->prof);
    rep_names_fini(&fx->names);
}

static const char *name_of(struct fixture *fx, uint64_t addr, bool is_caller, uint64_t t)
{
    uint32_t id;
    cr_assert_eq(rep_sym_frame(&fx->sym, addr, is_caller, t, &id), CMN_OK);
    return rep_names_get(&fx->names, id);
}

static const char *self_base_name(void)
{
    static char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    cr_assert_gt(n, 0);
    exe[n] = '\0';
    return basename(exe);
}

Test(symbols, names_a_function_of_the_executable)
{
    struct fixture fx;
    setup_self(&fx);
    uint64_t a = (uint64_t)(uintptr_t)&sym_test_known_function;
    cr_assert_str_eq(name_of(&fx, a, false, 0), "sym_test_known_function");
    cr_assert_str_eq(name_of(&fx, a + 2, false, 0), "sym_test_known_function");
    cr_assert_str_eq(name_of(&fx, a + 2, true, 0), "sym_test_known_function");
    cr_assert_eq(fx.sym.n_warnings, 0, "%s", fx.sym.warnings ? fx.sym.warnings[0] : "");
    teardown(&fx);
}

Test(symbols, looks_a_caller_frame_up_one_byte_before)
{
    if (!setjmp(leave_jb))
        sym_test_calls_last();
    struct fixture fx;
    setup_self(&fx);
    /* The return address is one past sym_test_calls_last's last byte. */
    cr_assert_str_eq(name_of(&fx, seen_return_address, true, 0), "sym_test_calls_last");
    cr_assert_str_neq(name_of(&fx, seen_return_address, false, 0), "sym_test_calls_last");
    /* And the start of a function, taken as a return address, belongs to what precedes. */
    uint64_t a = (uint64_t)(uintptr_t)&sym_test_known_function;
    cr_assert_str_neq(name_of(&fx, a, true, 0), "sym_test_known_function");
    teardown(&fx);
}

Test(symbols, names_a_function_of_a_shared_library)
{
    struct fixture fx;
    setup_self(&fx);
    uint64_t a = (uint64_t)(uintptr_t)&getpid;
    cr_assert_str_eq(name_of(&fx, a + 1, false, 0), "getpid");
    teardown(&fx);
}

/* The path of the mapped C library, from this process's mappings. */
static const char *libc_path(const struct rep_profile *p)
{
    for (size_t i = 0; i < p->n_maps; i++)
        if (strstr(p->maps[i].path, "/libc.so.") != NULL)
            return p->maps[i].path;
    return NULL;
}

Test(symbols, uses_the_debug_file_installed_for_a_stripped_library)
{
    struct fixture fx;
    setup_self(&fx);
    const char *libc = libc_path(&fx.prof);
    cr_assert_not_null(libc);
    struct rep_module *m;
    struct cmn_err err = {0};
    cr_assert_eq(rep_module_open(libc, &m, &err), CMN_OK, "%s", err.msg);
    const uint8_t *id;
    size_t n;
    cr_assert_eq(rep_module_build_id(m, &id, &n), CMN_OK);
    char debug[256];
    int len = snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%02x/", id[0]);
    for (size_t i = 1; i < n; i++)
        len += snprintf(debug + len, sizeof(debug) - (size_t)len, "%02x", id[i]);
    snprintf(debug + len, sizeof(debug) - (size_t)len, ".debug");
    rep_module_close(m);
    if (access(debug, R_OK) != 0) {
        teardown(&fx);
        cr_skip_test("no debug file for %s (the libc6-dbg package)", libc);
    }
    /* The C library's strlen resolves, through its IFUNC, to a CPU-specific variant that
     * only the debug file's full symbol table names. (Asked of the library itself, as a
     * sanitizer may interpose its own strlen.) */
    void *handle = dlopen(libc, RTLD_LAZY | RTLD_NOLOAD);
    cr_assert_not_null(handle);
    void *impl = dlsym(handle, "strlen");
    dlclose(handle);
    cr_assert_not_null(impl);
    const char *name = name_of(&fx, (uint64_t)(uintptr_t)impl + 1, false, 0);
    cr_assert(strncmp(name, "__strlen_", 9) == 0, "%s", name);
    teardown(&fx);
}

Test(symbols, names_an_unresolvable_address_by_module_and_offset)
{
    struct fixture fx;
    setup_self(&fx);
    uint64_t a = (uint64_t)(uintptr_t)rodata_bytes;
    const struct rep_map *m = NULL;
    for (size_t i = 0; i < fx.prof.n_maps; i++)
        if (fx.prof.maps[i].start <= a && a < fx.prof.maps[i].end)
            m = &fx.prof.maps[i];
    cr_assert_not_null(m);
    char want[PATH_MAX + 32];
    snprintf(want, sizeof(want), "%s+0x%lx", self_base_name(),
             (unsigned long)(a - m->start + m->file_offset));
    cr_assert_str_eq(name_of(&fx, a, false, 0), want);
    teardown(&fx);
}

Test(symbols, names_an_address_outside_every_mapping_by_itself)
{
    struct fixture fx;
    setup_self(&fx);
    cr_assert_str_eq(name_of(&fx, 0x10, false, 0), "0x10");
    cr_assert_str_eq(name_of(&fx, 0x10, true, 0), "0x10");
    cr_assert_str_eq(name_of(&fx, 0, true, 0), "0x0");
    teardown(&fx);
}

Test(symbols, names_pseudo_and_anonymous_mappings_without_warning)
{
    struct rep_map maps[] = {
        {.start = 0x7000, .end = 0x9000, .file_offset = 0, .path = "[vdso]"},
        {.start = 0x20000, .end = 0x30000, .file_offset = 0, .path = ""},
    };
    struct fixture fx;
    setup_maps(&fx, maps, 2);
    cr_assert_str_eq(name_of(&fx, 0x7123, false, 0), "[vdso]+0x123");
    cr_assert_str_eq(name_of(&fx, 0x20010, false, 0), "[anon]");
    cr_assert_str_eq(name_of(&fx, 0x2ff00, true, 0), "[anon]");
    cr_assert_str_eq(name_of(&fx, 0x40000, false, 0), "0x40000");
    cr_assert_eq(fx.sym.n_warnings, 0);
    teardown(&fx);
}

Test(symbols, warns_once_about_a_missing_file)
{
    struct rep_map maps[] = {
        {.start = 0x10000,
         .end = 0x20000,
         .file_offset = 0x3000,
         .path = "/nonexistent/libgone.so"},
        {.start = 0x40000,
         .end = 0x50000,
         .file_offset = 0x9000,
         .path = "/nonexistent/libgone.so"},
    };
    struct fixture fx;
    setup_maps(&fx, maps, 2);
    cr_assert_str_eq(name_of(&fx, 0x10010, false, 0), "libgone.so+0x3010");
    cr_assert_str_eq(name_of(&fx, 0x40020, true, 0), "libgone.so+0x9020");
    cr_assert_eq(fx.sym.n_warnings, 1);
    cr_assert_str_eq(fx.sym.warnings[0],
                     "cannot symbolize /nonexistent/libgone.so: No such file or directory");
    teardown(&fx);
}

Test(symbols, warns_once_when_the_build_id_differs)
{
    struct fixture fx;
    rep_names_init(&fx.names);
    rep_sym_init(&fx.sym, &fx.names);
    rep_profile_init(&fx.prof, "self");
    add_self_maps(&fx.prof);
    for (size_t i = 0; i < fx.prof.n_maps; i++) {
        fx.prof.maps[i].build_id_len = 20;
        memset(fx.prof.maps[i].build_id, 0x11, 20);
    }
    cr_assert_eq(rep_sym_use_profile(&fx.sym, &fx.prof), CMN_OK);
    uint64_t a = (uint64_t)(uintptr_t)&sym_test_known_function;
    /* Still named, but with a warning. */
    cr_assert_str_eq(name_of(&fx, a + 1, false, 0), "sym_test_known_function");
    cr_assert_str_eq(name_of(&fx, a + 3, false, 0), "sym_test_known_function");
    cr_assert_eq(fx.sym.n_warnings, 1);
    cr_assert(strstr(fx.sym.warnings[0], "has changed since the profile was taken") != NULL, "%s",
              fx.sym.warnings[0]);
    teardown(&fx);
}

Test(symbols, picks_the_mapping_live_at_the_sample_time)
{
    struct rep_map maps[] = {
        {.time_ns = 100, .start = 0x10000, .end = 0x20000, .path = "/nonexistent/a.so"},
        {.time_ns = 200, .start = 0x10000, .end = 0x20000, .path = "/nonexistent/b.so"},
        {.time_ns = 100, .start = 0x5000, .end = 0x30000, .path = "/nonexistent/big.so"},
    };
    struct fixture fx;
    setup_maps(&fx, maps, 3);
    cr_assert_str_eq(name_of(&fx, 0x10010, false, 150), "a.so+0x10");
    cr_assert_str_eq(name_of(&fx, 0x10010, false, 250), "b.so+0x10");
    cr_assert_str_eq(name_of(&fx, 0x10010, false, 50), "a.so+0x10"); /* the earliest */
    cr_assert_str_eq(name_of(&fx, 0x28000, false, 150), "big.so+0x23000");
    teardown(&fx);
}

Test(symbols, offline_names_everything_by_module_and_offset)
{
    struct fixture fx;
    rep_names_init(&fx.names);
    rep_sym_init(&fx.sym, &fx.names);
    fx.sym.is_offline = true;
    rep_profile_init(&fx.prof, "self");
    add_self_maps(&fx.prof);
    cr_assert_eq(rep_sym_use_profile(&fx.sym, &fx.prof), CMN_OK);
    uint64_t a = (uint64_t)(uintptr_t)&sym_test_known_function;
    const char *name = name_of(&fx, a, false, 0);
    char want[PATH_MAX];
    snprintf(want, sizeof(want), "%s+0x", self_base_name());
    cr_assert(strncmp(name, want, strlen(want)) == 0, "%s", name);
    cr_assert_eq(fx.sym.n_modules, 0);
    teardown(&fx);
}

Test(symbols, resolves_each_address_once)
{
    struct fixture fx;
    setup_self(&fx);
    uint64_t a = (uint64_t)(uintptr_t)&sym_test_known_function;
    uint32_t id1, id2, id3;
    cr_assert_eq(rep_sym_frame(&fx.sym, a + 1, false, 0, &id1), CMN_OK);
    size_t cached = fx.sym.n_cached;
    cr_assert_eq(rep_sym_frame(&fx.sym, a + 1, false, 0, &id2), CMN_OK);
    cr_assert_eq(fx.sym.n_cached, cached);
    cr_assert_eq(id1, id2);
    /* Another address of the same function: another cache entry, the same name id. */
    cr_assert_eq(rep_sym_frame(&fx.sym, a + 2, false, 0, &id3), CMN_OK);
    cr_assert_eq(id3, id1);
    teardown(&fx);
}

/* The file offset of code address a of this process, from /proc/self/maps. */
static uint64_t self_file_offset(uint64_t a)
{
    FILE *f = fopen("/proc/self/maps", "r");
    cr_assert_not_null(f);
    char line[4200];
    uint64_t off = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned long lo, hi, at;
        if (sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &at) == 3 && a >= lo && a < hi)
            off = a - lo + at;
    }
    fclose(f);
    cr_assert_neq(off, 0, "%#lx is in no mapping", (unsigned long)a);
    return off;
}

/* `prof symbolize` reads the candidate lines of old backtraces with it. */
Test(module, knows_where_a_return_address_is_at_the_stack_pointer)
{
    if (!setjmp(leave_jb))
        sym_test_calls_last();
    struct rep_module *m;
    struct cmn_err err = {0};
    cr_assert_eq(rep_module_open("/proc/self/exe", &m, &err), CMN_OK, "%s", err.msg);
    bool yes = false;
    /* At a function's first instruction nothing has been pushed yet. */
    uint64_t a = (uint64_t)(uintptr_t)&sym_test_known_function;
    cr_assert_eq(rep_module_ra_at_sp(m, self_file_offset(a), &yes), CMN_OK);
    cr_assert(yes);
    /* Inside sym_test_calls_last, at its call: the stack pointer was moved to align it. */
    cr_assert_eq(rep_module_ra_at_sp(m, self_file_offset(seen_return_address - 1), &yes), CMN_OK);
    cr_assert_not(yes);
    /* Unknown: an offset in no section with code. */
    cr_assert_eq(rep_module_ra_at_sp(m, 0x10, &yes), CMN_E_NOTFOUND);
    rep_module_close(m);
}

Test(module, reads_the_build_id_and_functions_of_this_binary)
{
    struct rep_module *m;
    struct cmn_err err = {0};
    cr_assert_eq(rep_module_open("/proc/self/exe", &m, &err), CMN_OK, "%s", err.msg);
    const uint8_t *id;
    size_t n;
    cr_assert_eq(rep_module_build_id(m, &id, &n), CMN_OK);
    cr_assert_eq(n, 20); /* ld's default build-id is a SHA-1 */
    cr_assert_gt(rep_module_n_functions(m), 10);
    rep_module_close(m);
}

Test(module, rejects_a_file_that_is_not_an_object)
{
    struct rep_module *m;
    struct cmn_err err = {0};
    cr_assert_eq(rep_module_open("/etc/passwd", &m, &err), CMN_E_INPUT);
    cr_assert(strstr(err.msg, "/etc/passwd: not an object file") != NULL, "%s", err.msg);
    cr_assert_null(m);
}

Test(module, refuses_what_is_not_a_regular_file)
{
    char path[] = "/tmp/test_module_XXXXXX";
    cr_assert_not_null(mkdtemp(path));
    char fifo[sizeof(path) + 8];
    snprintf(fifo, sizeof(fifo), "%s/fifo", path);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    struct rep_module *m;
    struct cmn_err err = {0};
    int rc = rep_module_open(fifo, &m, &err); /* must not block */
    unlink(fifo);
    rmdir(path);
    cr_assert_eq(rc, CMN_E_INPUT);
    cr_assert(strstr(err.msg, "not a regular file") != NULL, "%s", err.msg);
}

/* The mappings of this process with " (deleted)" after the executable's path, as the
 * kernel shows a file removed while mapped; build-ids recorded as id (n bytes). */
static void setup_self_deleted(struct fixture *fx, const uint8_t *id, size_t n)
{
    rep_names_init(&fx->names);
    rep_sym_init(&fx->sym, &fx->names);
    rep_profile_init(&fx->prof, "self");
    add_self_maps(&fx->prof);
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    cr_assert_gt(len, 0);
    exe[len] = '\0';
    char deleted[PATH_MAX + 16];
    snprintf(deleted, sizeof(deleted), "%s (deleted)", exe);
    for (size_t i = 0; i < fx->prof.n_maps; i++) {
        if (strcmp(fx->prof.maps[i].path, exe) != 0)
            continue;
        fx->prof.maps[i].path = keep_path(deleted);
        fx->prof.maps[i].build_id_len = (uint8_t)n;
        memcpy(fx->prof.maps[i].build_id, id, n);
    }
    cr_assert_eq(rep_sym_use_profile(&fx->sym, &fx->prof), CMN_OK);
}

/* This binary's own build-id. */
static size_t self_build_id(uint8_t *id)
{
    struct rep_module *m;
    struct cmn_err err = {0};
    cr_assert_eq(rep_module_open("/proc/self/exe", &m, &err), CMN_OK, "%s", err.msg);
    const uint8_t *p;
    size_t n;
    cr_assert_eq(rep_module_build_id(m, &p, &n), CMN_OK);
    memcpy(id, p, n);
    rep_module_close(m);
    return n;
}

Test(symbols, reads_a_deleted_file_at_its_path_without_the_suffix)
{
    uint8_t id[64];
    size_t n = self_build_id(id);
    struct fixture fx;
    setup_self_deleted(&fx, id, n);
    uint64_t a = (uint64_t)(uintptr_t)&sym_test_known_function;
    cr_assert_str_eq(name_of(&fx, a + 1, false, 0), "sym_test_known_function");
    cr_assert_eq(fx.sym.n_warnings, 0, "%s", fx.sym.n_warnings ? fx.sym.warnings[0] : "");
    teardown(&fx);
}

Test(symbols, warns_when_a_deleted_file_was_replaced_by_another_build)
{
    uint8_t id[20];
    memset(id, 0x5a, sizeof(id));
    struct fixture fx;
    setup_self_deleted(&fx, id, sizeof(id));
    uint64_t a = (uint64_t)(uintptr_t)&sym_test_known_function;
    name_of(&fx, a + 1, false, 0);
    cr_assert_eq(fx.sym.n_warnings, 1);
    cr_assert(strstr(fx.sym.warnings[0], "build-id differs") != NULL, "%s", fx.sym.warnings[0]);
    teardown(&fx);
}

Test(symbols, lines_name_a_function_with_its_file_and_line)
{
    struct fixture fx;
    rep_names_init(&fx.names);
    rep_sym_init(&fx.sym, &fx.names);
    fx.sym.is_lines = true;
    rep_profile_init(&fx.prof, "self");
    add_self_maps(&fx.prof);
    cr_assert_eq(rep_sym_use_profile(&fx.sym, &fx.prof), CMN_OK);
    uint64_t a = (uint64_t)(uintptr_t)&sym_test_known_function;
    const uint32_t *ids;
    size_t n;
    cr_assert_eq(rep_sym_frames(&fx.sym, a + 1, false, 0, &ids, &n), CMN_OK);
    cr_assert_eq(n, 1);
    const char *name = rep_names_get(&fx.names, ids[0]);
    cr_assert(strncmp(name, "sym_test_known_function (test_symbols.c:", 40) == 0, "%s", name);
    /* Resolved once: the same address gives the same chain back. */
    size_t n_chains = fx.sym.n_chains;
    cr_assert_eq(rep_sym_frames(&fx.sym, a + 1, false, 0, &ids, &n), CMN_OK);
    cr_assert_eq(fx.sym.n_chains, n_chains);
    /* An address outside every mapping keeps its plain name. */
    cr_assert_eq(rep_sym_frames(&fx.sym, 0x10, false, 0, &ids, &n), CMN_OK);
    cr_assert_str_eq(rep_names_get(&fx.names, ids[0]), "0x10");
    teardown(&fx);
}
