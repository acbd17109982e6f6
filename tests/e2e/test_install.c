/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of `make install DESTDIR=... PREFIX=/usr` and `make uninstall`: the
 * tree a package would hold (the library by its version with its soname and development
 * links, the headers under include/libprof/, the pkg-config file, man pages, bash
 * completion, prof-ci-check), a program built with `pkg-config --cflags --libs libprof`
 * from it that profiles itself, the installed prof finding the installed library, and the
 * man pages naming every option of every command's help and every PROF_ variable.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/e2e/support.h"

TestSuite(e2e_install, .init = e2e_setup, .fini = e2e_teardown, .timeout = 120);

/* Runs make TARGET with DESTDIR (in the test's directory) and PREFIX=/usr, outside any
 * make that runs these tests (its jobserver is not ours). */
static void make_target(const char *target, const char *destdir)
{
    char dest[512], build[512];
    snprintf(dest, sizeof(dest), "DESTDIR=%s", destdir);
    snprintf(build, sizeof(build), "BUILD=%s", BUILD_DIR);
    struct e2e_proc p;
    struct e2e_opts o = {.cwd = SRC_DIR, .timeout_s = 100};
    e2e_run(&p, &o,
            E2E_ARGV("/usr/bin/env", "-u", "MAKEFLAGS", "-u", "MFLAGS", "-u", "MAKELEVEL", "make",
                     "--no-print-directory", target, dest, "PREFIX=/usr", build));
    cr_assert_eq(p.status, 0, "make %s exited %d:\n%s%s", target, p.status, p.out, p.err);
    e2e_proc_free(&p);
}

/* The path of rel in the installed tree; never freed (each test is a process of its
 * own, and makes a few). */
static const char *in_tree(const char *destdir, const char *rel)
{
    char *path;
    cr_assert(asprintf(&path, "%s/usr/%s", destdir, rel) >= 0);
    return path;
}

static void expect_link(const char *destdir, const char *rel, const char *target)
{
    char buf[256] = "";
    ssize_t n = readlink(in_tree(destdir, rel), buf, sizeof(buf) - 1);
    cr_expect(n > 0 && strcmp(buf, target) == 0, "%s -> '%s', not %s", rel, buf, target);
}

static void expect_file(const char *destdir, const char *rel, int is_exec)
{
    struct stat st;
    const char *path = in_tree(destdir, rel);
    cr_expect(stat(path, &st) == 0 && S_ISREG(st.st_mode), "%s is not installed", rel);
    if (is_exec)
        cr_expect(access(path, X_OK) == 0, "%s is not executable", rel);
}

static const char *const installed[] = {
    "bin/prof", "bin/prof-ci-check", "lib/libprof.so.0.1.0", "include/libprof/prof.h",
    "include/libprof/prof_format.h", "lib/pkgconfig/libprof.pc", "share/man/man1/prof.1",
    "share/man/man7/libprof.7", "share/bash-completion/completions/prof",
};

static const char *program =
    "#include <libprof/prof.h>\n"
    "#include <libprof/prof_format.h>\n"
    "#include <stdio.h>\n"
    "#include <time.h>\n"
    "static volatile unsigned long sink;\n"
    "int main(void)\n"
    "{\n"
    "    while (clock() < CLOCKS_PER_SEC / 4)\n"
    "        for (int i = 0; i < 100000; i++)\n"
    "            sink += (unsigned long)i * i;\n"
    "    printf(\"%d %zu\\n\", prof_flush(), sizeof(struct prof_file_header));\n"
    "    return 0;\n"
    "}\n";

/* Builds the program above with pkg-config's flags from the tree and runs it: linked with
 * libprof, it profiles itself. */
static void expect_linked_program_profiles_itself(const char *destdir)
{
    char sysroot[512], libdir[512];
    snprintf(sysroot, sizeof(sysroot), "PKG_CONFIG_SYSROOT_DIR=%s", destdir);
    snprintf(libdir, sizeof(libdir), "PKG_CONFIG_LIBDIR=%s/usr/lib/pkgconfig", destdir);
    struct e2e_proc p;
    struct e2e_opts o = {.env = E2E_ARGV(sysroot, libdir)};
    e2e_run(&p, &o, E2E_ARGV("/usr/bin/pkg-config", "--cflags", "--libs", "libprof"));
    cr_assert_eq(p.status, 0, "pkg-config: %s", p.err);
    char want[1024];
    snprintf(want, sizeof(want), "-I%s/usr/include -L%s/usr/lib -lprof", destdir, destdir);
    cr_expect(strstr(p.out, want) != NULL, "pkg-config --cflags --libs libprof: %s", p.out);
    e2e_proc_free(&p);

    const char *src = e2e_path("linked.c"), *exe = e2e_path("linked");
    e2e_write_file(src, program, strlen(program));
    char script[2048];
    snprintf(script, sizeof(script), "exec cc -o %s %s $(pkg-config --cflags --libs libprof)",
             exe, src);
    e2e_run(&p, &o, E2E_ARGV("/bin/sh", "-c", script));
    cr_assert_eq(p.status, 0, "cc with pkg-config's flags: %s", p.err);
    e2e_proc_free(&p);
    char ld_path[512], output[512];
    snprintf(ld_path, sizeof(ld_path), "LD_LIBRARY_PATH=%s/usr/lib", destdir);
    snprintf(output, sizeof(output), "PROF_OUTPUT=%s", e2e_path("linked.prof"));
    struct e2e_opts run = {.env = E2E_ARGV(ld_path, output)};
    e2e_run(&p, &run, E2E_ARGV(exe));
    cr_expect_eq(p.status, 0, "the linked program: %s", p.err);
    cr_expect_str_eq(p.out, "0 16\n", "prof_flush() and the format's header: %s", p.out);
    e2e_proc_free(&p);
    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path("linked.prof"));
    cr_expect(s.has_end && s.n_samples > 0, "the linked program's profile: %zu samples",
              s.n_samples);
}

/* The installed prof finds the installed library, and records with it. */
static void expect_installed_prof_works(const char *destdir)
{
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(in_tree(destdir, "bin/prof"), "--version"));
    char want[512];
    snprintf(want, sizeof(want), "library: %s/usr/lib/libprof.so.0.1.0\n", destdir);
    cr_expect(strstr(p.out, want) != NULL, "%s", p.out);
    e2e_proc_free(&p);
    e2e_run(&p, NULL,
            E2E_ARGV(in_tree(destdir, "bin/prof"), "record", "-o", e2e_path("inst.prof"), "--",
                     E2E_WORKLOAD("shares"), "0.2"));
    cr_expect_eq(p.status, 0, "the installed prof record: %s", p.err);
    cr_expect(strstr(p.err, "prof: profile ") != NULL, "%s", p.err);
    e2e_proc_free(&p);
}

Test(e2e_install, make_install_and_uninstall_with_destdir)
{
    if (access("/usr/bin/pkg-config", X_OK) != 0)
        cr_skip_test("pkg-config is not installed");
    const char *destdir = e2e_path("dest");
    make_target("install", destdir);
    for (size_t i = 0; i < sizeof(installed) / sizeof(installed[0]); i++)
        expect_file(destdir, installed[i], strncmp(installed[i], "bin/", 4) == 0);
    expect_link(destdir, "lib/libprof.so.0", "libprof.so.0.1.0");
    expect_link(destdir, "lib/libprof.so", "libprof.so.0");
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV("/usr/bin/readelf", "-d", in_tree(destdir, "lib/libprof.so.0.1.0")));
    cr_expect(strstr(p.out, "Library soname: [libprof.so.0]") != NULL, "%s", p.out);
    e2e_proc_free(&p);
    expect_linked_program_profiles_itself(destdir);
    expect_installed_prof_works(destdir);

    make_target("uninstall", destdir);
    char find[1024];
    snprintf(find, sizeof(find), "find '%s' -type f -o -type l", destdir);
    e2e_run(&p, NULL, E2E_ARGV("/bin/sh", "-c", find));
    cr_expect_eq(p.out_len, 0, "make uninstall left:\n%s", p.out);
    e2e_proc_free(&p);
}

Test(e2e_install, man_pages_render_without_warnings)
{
    if (access("/usr/bin/groff", X_OK) != 0)
        cr_skip_test("groff is not installed");
    static const char *const pages[] = {SRC_DIR "/docs/man/prof.1", SRC_DIR "/docs/man/libprof.7"};
    for (size_t i = 0; i < 2; i++) {
        struct e2e_proc p;
        e2e_run(&p, NULL, E2E_ARGV("/usr/bin/groff", "-mandoc", "-Tutf8", "-ww", "-z", pages[i]));
        cr_expect(p.status == 0 && p.err_len == 0, "%s: %s", pages[i], p.err);
        e2e_proc_free(&p);
    }
}

/* Every long option in text (a help) is in the man page as ".Fl \-NAME" (mdoc). */
static void expect_options_in_page(const char *cmd, const char *help, const char *page)
{
    regex_t re;
    cr_assert_eq(regcomp(&re, "--[a-z][a-z-]*[a-z]", REG_EXTENDED), 0);
    regmatch_t m;
    for (const char *at = help; regexec(&re, at, 1, &m, 0) == 0; at += m.rm_eo) {
        char want[64];
        snprintf(want, sizeof(want), "Fl \\-%.*s", (int)(m.rm_eo - m.rm_so - 2),
                 at + m.rm_so + 2);
        size_t n = strlen(want);
        const char *found = strstr(page, want);
        while (found != NULL && (found[n] == '-' || (found[n] >= 'a' && found[n] <= 'z')))
            found = strstr(found + 1, want);
        cr_expect(found != NULL, "prof(1) lacks %s's %.*s", cmd, (int)(m.rm_eo - m.rm_so),
                  at + m.rm_so);
    }
    regfree(&re);
}

Test(e2e_install, man_pages_name_every_option_and_variable)
{
    static const char *const commands[] = {"record", "report", "stacks", "diff", "check",
                                           "symbolize"};
    char *page = e2e_read_file(SRC_DIR "/docs/man/prof.1", NULL);
    cr_assert_not_null(page);
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        struct e2e_proc p;
        e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, commands[i], "--help"));
        expect_options_in_page(commands[i], p.out, page);
        e2e_proc_free(&p);
    }
    free(page);
    /* The variables the library knows (libprof/config.c), in libprof(7) and the README. */
    char *config = e2e_read_file(SRC_DIR "/libprof/config.c", NULL);
    char *man7 = e2e_read_file(SRC_DIR "/docs/man/libprof.7", NULL);
    char *readme = e2e_read_file(SRC_DIR "/README.md", NULL);
    cr_assert(config && man7 && readme);
    const char *list = strstr(config, "known_vars[] = {");
    cr_assert_not_null(list);
    const char *end = strstr(list, "NULL");
    size_t n_vars = 0;
    for (const char *v = strstr(list, "\"PROF_"); v != NULL && v < end;
         v = strstr(v + 1, "\"PROF_")) {
        char name[64], want[80];
        sscanf(v + 1, "%63[A-Z_]", name);
        snprintf(want, sizeof(want), ".It Ev %s\n", name);
        cr_expect(strstr(man7, want) != NULL, "libprof(7) lacks %s", name);
        snprintf(want, sizeof(want), "`%s`", name);
        cr_expect(strstr(readme, want) != NULL, "README.md lacks %s", name);
        n_vars++;
    }
    cr_expect(n_vars >= 13, "only %zu variables found in libprof/config.c", n_vars);
    free(config);
    free(man7);
    free(readme);
}

Test(e2e_install, bash_completion_offers_commands_and_options)
{
    char script[1024];
    snprintf(script, sizeof(script),
             "source '%s/scripts/prof-completion.bash'; "
             "COMP_WORDS=('%s' re); COMP_CWORD=1; _prof; echo \"${COMPREPLY[*]}\"; "
             "COMP_WORDS=('%s' record --dur); COMP_CWORD=2; _prof; echo \"${COMPREPLY[*]}\"; "
             "COMP_WORDS=('%s' report -f s); COMP_CWORD=3; _prof; echo \"${COMPREPLY[*]}\"",
             SRC_DIR, E2E_PROF, E2E_PROF, E2E_PROF);
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV("/bin/bash", "-c", script));
    cr_expect_eq(p.status, 0, "%s", p.err);
    cr_expect_str_eq(p.out, "record report\n--duration\nsvg speedscope\n");
    e2e_proc_free(&p);
}
