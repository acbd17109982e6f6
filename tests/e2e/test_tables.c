/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of where the unwind tables come from, on programs built here: a program
 * whose call-frame information is in .debug_frame only (built without unwind tables: its
 * .eh_frame holds the C runtime's start code only) is walked whole from its file; without either, the profile says the module has no table and its
 * frames are walked by frame pointer; a library whose .eh_frame is garbage (absurd lengths,
 * CIE pointers that point nowhere or at themselves) is loaded and sampled without a crash
 * or a hang in the profiled program.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/support.h"

TestSuite(e2e_tables, .init = e2e_setup, .fini = e2e_teardown, .timeout = 90);

/* Runs a shell command line in the test directory; asserts it succeeded. */
static void sh(const char *cmd)
{
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV("/bin/sh", "-c", cmd));
    cr_assert_eq(p.status, 0, "%s:\n%s%s", cmd, p.out, p.err);
    e2e_proc_free(&p);
}

/* Profiles argv at 1000 Hz into NAME.prof; returns prof report's stderr (free it) and the
 * folded stacks in *f. */
static char *profile(const char *name, const char *const argv[], struct e2e_folded *f)
{
    char prof[64];
    snprintf(prof, sizeof(prof), "%s.prof", name);
    struct e2e_proc p;
    e2e_run_profiled(&p, prof, E2E_ARGV("PROF_FREQ=1000"), 0, argv);
    cr_assert_eq(p.status, 0, "%s exited %d:\n%s", name, p.status, p.err);
    e2e_proc_free(&p);
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "-f", "folded", e2e_path(prof)));
    cr_assert_eq(p.status, 0, "prof report: %s", p.err);
    e2e_folded_parse(f, p.out);
    char *err = strdup(p.err);
    e2e_proc_free(&p);
    return err;
}

Test(e2e_tables, debug_frame_alone_gives_whole_stacks)
{
    char cmd[2048];
    snprintf(cmd, sizeof(cmd),
             "gcc -O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables -o df %s/tests/"
             "workloads/nofp.c && readelf -S df | grep -q .debug_frame && "
             "gcc -O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables "
             "-Wl,--build-id=none -o bare %s/tests/workloads/nofp.c && "
             "objcopy --remove-section .debug_frame bare",
             SRC_DIR, SRC_DIR);
    sh(cmd);
    struct e2e_folded f;
    char *err = profile("df", E2E_ARGV(e2e_path("df"), "0.8"), &f);
    long whole = e2e_folded_ending(&f, "main;nofp_outer;nofp_middle;nofp_inner");
    cr_log_info("debug_frame only: %ld of %ld samples whole\n%s", whole, f.total, err);
    cr_expect_geq(whole, 0.95 * (double)f.total, "only %ld of %ld samples whole", whole,
                  f.total);
    free(err);
    e2e_folded_free(&f);

    /* Without .debug_frame (and without a build-id, so that df's table, the same code, is
     * not found in the cache) only the start code has rows: the rest is walked by frame
     * pointer, which code without frame pointers ends at once. */
    err = profile("bare", E2E_ARGV(e2e_path("bare"), "0.4"), &f);
    cr_log_info("no call-frame information for most of the code:\n%s", err);
    cr_expect(strstr(err, "not-code") != NULL, "no truncated stacks:\n%s", err);
    cr_expect_eq(e2e_folded_ending(&f, "main;nofp_outer;nofp_middle;nofp_inner"), 0,
                 "a frame-pointer walk through code without frame pointers made whole "
                 "stacks");
    free(err);
    e2e_folded_free(&f);
}

/* A library spinning in hot(), and a program that loads it, calls it and leaves. */
static const char lib_src[] = "__attribute__((noipa)) static unsigned long inner(unsigned long x)\n"
                              "{ for (int i = 0; i < 100000; i++) x = x * 6364136223846793005ul + 1;"
                              "  return x; }\n"
                              "unsigned long hot(double s) {\n"
                              "  unsigned long x = 1; struct { long a, b; } t;\n"
                              "  extern int clock_gettime(int, void *);\n"
                              "  do { x = inner(x); clock_gettime(2, &t); }"
                              "  while (t.a + t.b / 1e9 < s);\n"
                              "  return x; }\n";
static const char main_src[] = "#include <dlfcn.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
                               "int main(int c, char **v) {\n"
                               "  void *h = dlopen(v[1], RTLD_NOW); if (!h) return 3;\n"
                               "  unsigned long (*hot)(double) = (unsigned long (*)(double))"
                               "dlsym(h, \"hot\");\n"
                               "  printf(\"%lu\\n\", hot(atof(v[2]))); return 0; }\n";

/* Overwrites the .eh_frame of lib (a copy) in its file: mode "ff" fills it with 0xff
 * (absurd lengths), "self" makes every record's CIE pointer point at itself, "far" at a
 * place past the section. The loader never reads .eh_frame: the program runs as before. */
static const char mangle_py[] =
    "import struct, subprocess, sys\n"
    "path, mode = sys.argv[1], sys.argv[2]\n"
    "out = subprocess.run(['readelf', '-SW', path], capture_output=True, text=True).stdout\n"
    "for line in out.splitlines():\n"
    "    f = line.replace('[ ', '[').split()\n"
    "    if len(f) > 5 and f[1] == '.eh_frame':\n"
    "        off, size = int(f[4], 16), int(f[5], 16)\n"
    "data = bytearray(open(path, 'rb').read())\n"
    "if mode == 'ff':\n"
    "    data[off:off + size] = b'\\xff' * size\n"
    "else:\n"
    "    at = off\n"
    "    while at + 8 <= off + size:\n"
    "        n = struct.unpack_from('<I', data, at)[0]\n"
    "        if n == 0 or n == 0xffffffff: break\n"
    "        ptr = 4 if mode == 'self' else 0x7ffffff0\n"
    "        struct.pack_into('<I', data, at + 4, ptr)\n"
    "        at += 4 + n\n"
    "open(path, 'wb').write(data)\n";

Test(e2e_tables, a_library_with_a_garbage_eh_frame_is_sampled_without_harm)
{
    e2e_write_file(e2e_path("hot.c"), lib_src, sizeof(lib_src) - 1);
    e2e_write_file(e2e_path("main.c"), main_src, sizeof(main_src) - 1);
    e2e_write_file(e2e_path("mangle.py"), mangle_py, sizeof(mangle_py) - 1);
    sh("gcc -O2 -shared -fPIC -o libhot.so hot.c && gcc -O2 -o loader main.c -ldl");
    static const char *const modes[] = {"ff", "self", "far"};
    for (size_t i = 0; i < 3; i++) {
        char cmd[256], lib[64];
        snprintf(lib, sizeof(lib), "libhot-%s.so", modes[i]);
        snprintf(cmd, sizeof(cmd), "cp libhot.so %s && python3 mangle.py %s %s", lib, lib,
                 modes[i]);
        sh(cmd);
        struct e2e_folded f;
        char *err = profile(modes[i], E2E_ARGV(e2e_path("loader"), e2e_path(lib), "0.3"), &f);
        long in_lib = e2e_folded_containing(&f, "inner");
        cr_log_info("%s: %ld of %ld samples in the library\n%s", modes[i], in_lib, f.total, err);
        cr_expect_gt(f.total, 100, "%s: only %ld samples", modes[i], f.total);
        cr_expect(strstr(err, "no unwind table for ") != NULL && strstr(err, lib) != NULL,
                  "%s: the profile does not say that the library has no table:\n%s",
                  modes[i], err);
        free(err);
        e2e_folded_free(&f);
    }
}
