/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end: the layering check of `make lint` (scripts/lint_layers.py) on small trees
 * made for the purpose. It passes the project's own tree, and fails, naming the line, a
 * folder that includes a layer above it, a reporter layer that reaches up, attach/ code
 * used below the commands, modules of one folder that include each other, and, given the
 * handler's sources, a common/ piece on the handler's path that says it is not for it.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/e2e/support.h"

#define LINT SRC_DIR "/scripts/lint_layers.py"

TestSuite(e2e_lint, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

/* Writes file rel (with its folders) under the test's tree, holding text. */
static void put(const char *rel, const char *text)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/tree/%s", e2e_path(""), rel);
    for (char *slash = strchr(path + strlen(e2e_path("")) + 1, '/'); slash;
         slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(path, 0755);
        *slash = '/';
    }
    e2e_write_file(path, text, strlen(text));
}

/* Runs the check on the test's tree. */
static void lint(struct e2e_proc *p)
{
    e2e_run(p, NULL, E2E_ARGV(LINT, e2e_path("tree")));
}

/* A small tree that keeps every rule. */
static void good_tree(void)
{
    put("arch/arch.h", "#include <stdint.h>\n");
    put("common/record.h", "#include \"include/libprof/prof_format.h\"\n");
    put("include/libprof/prof_format.h", "#include <stdint.h>\n");
    put("sampler/ring.c", "#include \"sampler/ring.h\"\n#include \"common/record.h\"\n");
    put("sampler/ring.h", "#include <stddef.h>\n");
    put("libprof/writer.c", "#include \"libprof/writer.h\"\n#include \"sampler/ring.h\"\n");
    put("libprof/writer.h", "#include <stdio.h>\n");
    put("attach/maps.c", "#include \"common/record.h\"\n");
    put("reporter/base/warn.c", "#include \"common/record.h\"\n");
    put("reporter/input/read.c", "#include \"reporter/base/warn.h\"\n");
    put("reporter/cmd/main.c", "#include \"reporter/input/read.h\"\n#include \"attach/maps.h\"\n");
}

Test(e2e_lint, the_project_keeps_its_layers)
{
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(LINT, SRC_DIR));
    cr_expect_eq(p.status, 0, "%s", p.err);
    e2e_proc_free(&p);
}

Test(e2e_lint, a_tree_that_keeps_the_rules_passes)
{
    good_tree();
    struct e2e_proc p;
    lint(&p);
    cr_expect_eq(p.status, 0, "%s", p.err);
    e2e_proc_free(&p);
}

Test(e2e_lint, the_handler_path_may_not_use_the_library)
{
    good_tree();
    put("sampler/handler.c", "#include \"sampler/ring.h\"\n#include \"libprof/writer.h\"\n");
    struct e2e_proc p;
    lint(&p);
    cr_expect_eq(p.status, 1);
    cr_expect(strstr(p.err, "sampler/handler.c:2: includes \"libprof/writer.h\"") != NULL, "%s",
              p.err);
    e2e_proc_free(&p);
}

Test(e2e_lint, a_reporter_layer_may_not_reach_up)
{
    good_tree();
    put("reporter/input/profile.c", "#include \"reporter/cmd/cmd.h\"\n");
    put("reporter/symbols/names.c", "#include \"attach/maps.h\"\n");
    struct e2e_proc p;
    lint(&p);
    cr_expect_eq(p.status, 1);
    cr_expect(strstr(p.err, "reporter/input/profile.c:1") != NULL, "%s", p.err);
    cr_expect(strstr(p.err, "reporter/symbols/names.c:1") != NULL, "%s", p.err);
    e2e_proc_free(&p);
}

Test(e2e_lint, modules_of_a_folder_may_not_include_each_other)
{
    good_tree();
    put("libprof/session.c", "#include \"libprof/session.h\"\n#include \"libprof/interpose.h\"\n");
    put("libprof/interpose.c", "#include \"libprof/interpose.h\"\n#include \"libprof/session.h\"\n");
    struct e2e_proc p;
    lint(&p);
    cr_expect_eq(p.status, 1);
    cr_expect(strstr(p.err, "libprof/: modules include each other in a cycle") != NULL, "%s",
              p.err);
    e2e_proc_free(&p);
}

Test(e2e_lint, the_reporter_holds_only_its_layers)
{
    good_tree();
    put("reporter/misc/x.c", "#include <stdio.h>\n");
    struct e2e_proc p;
    lint(&p);
    cr_expect_eq(p.status, 1);
    cr_expect(strstr(p.err, "reporter/misc") != NULL, "%s", p.err);
    e2e_proc_free(&p);
}

Test(e2e_lint, the_handler_path_uses_only_the_common_pieces_allowed_there)
{
    good_tree();
    put("common/record.h", "/* Signal handler's path: allowed. */\n");
    put("common/grow.h", "/* Signal handler's path: not allowed (realloc). */\n");
    put("common/hashtab.h", "/* Signal handler's path: allowed. */\n");
    put("sampler/walk.c", "#include \"sampler/walk.h\"\n#include \"common/record.h\"\n");
    put("sampler/walk.h", "#include \"common/hashtab.h\"\n");
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(LINT, e2e_path("tree"), "sampler/walk.c"));
    cr_expect_eq(p.status, 0, "%s", p.err);
    e2e_proc_free(&p);
    /* Through a header of its own, to a piece that allocates; and a piece that says
     * nothing. */
    put("common/hashtab.h", "/* Signal handler's path: allowed. */\n#include \"common/grow.h\"\n");
    put("common/clock.h", "#include <time.h>\n");
    e2e_run(&p, NULL, E2E_ARGV(LINT, e2e_path("tree"), "sampler/walk.c"));
    cr_expect_eq(p.status, 1);
    cr_expect(strstr(p.err, "sampler/walk.c: on the signal handler's path, reaches "
                            "\"common/grow.h\" (common/hashtab.h <- sampler/walk.h <- "
                            "sampler/walk.c)") != NULL,
              "%s", p.err);
    cr_expect(strstr(p.err, "common/hashtab.h: allowed on the handler's path, includes "
                            "\"common/grow.h\"") != NULL,
              "%s", p.err);
    cr_expect(strstr(p.err, "common/clock.h: says neither") != NULL, "%s", p.err);
    e2e_proc_free(&p);
}
