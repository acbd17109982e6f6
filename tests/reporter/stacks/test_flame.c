/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the flame graph's call tree (reporter/stacks/flame.c): merging stacks by path, self
 * against total, recursion, the samples without frames, ordering and starts, lookups.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/stacks/flame.h"
#include "reporter/symbols/names.h"

struct fixture {
    struct rep_names names;
    struct rep_agg agg;
    struct rep_flame flame;
};

static void setup(struct fixture *fx)
{
    rep_names_init(&fx->names);
    rep_agg_init(&fx->agg);
    memset(&fx->flame, 0, sizeof(fx->flame));
}

static void teardown(struct fixture *fx)
{
    rep_flame_fini(&fx->flame);
    rep_agg_fini(&fx->agg);
    rep_names_fini(&fx->names);
}

static uint32_t id_of(struct fixture *fx, const char *name)
{
    uint32_t id;
    cr_assert_eq(rep_names_intern(&fx->names, name, strlen(name), &id), CMN_OK);
    return id;
}

/* Adds the stack "root|...|leaf" with weight w to the aggregate. */
static void add_stack(struct fixture *fx, const char *stack, uint64_t w)
{
    uint32_t ids[64];
    size_t n = 0;
    for (const char *p = stack; *p;) {
        size_t len = strcspn(p, "|");
        cr_assert_eq(rep_names_intern(&fx->names, p, len, &ids[n++]), CMN_OK);
        p += len + (p[len] == '|');
    }
    cr_assert_eq(rep_agg_add(&fx->agg, ids, n, w), CMN_OK);
}

/* The node at "a|b|c" below the root, asserting it exists. */
static const struct rep_flame_node *node_at(struct fixture *fx, const char *path)
{
    uint32_t node = REP_FLAME_ROOT;
    char buf[256];
    strcpy(buf, path);
    for (char *save, *tok = strtok_r(buf, "|", &save); tok; tok = strtok_r(NULL, "|", &save)) {
        node = rep_flame_child(&fx->flame, node, id_of(fx, tok));
        cr_assert_neq(node, REP_FLAME_NONE, "no node %s (at %s)", path, tok);
    }
    return &fx->flame.nodes[node];
}

Test(flame, merges_stacks_by_path_with_self_and_total)
{
    struct fixture fx;
    setup(&fx);
    add_stack(&fx, "main|parse|lex", 3);
    add_stack(&fx, "main|parse|eval", 2);
    add_stack(&fx, "main|parse", 1);
    add_stack(&fx, "main|eval", 4); /* the same name on another path: another node */
    add_stack(&fx, "main", 1);
    cr_assert_eq(rep_flame_build(&fx.flame, &fx.agg, &fx.names), CMN_OK);

    cr_expect_eq(fx.flame.n_nodes, 6); /* all, main, parse, lex, eval, eval */
    cr_expect_eq(fx.flame.nodes[REP_FLAME_ROOT].total, 11);
    cr_expect_eq(fx.flame.nodes[REP_FLAME_ROOT].self, 0);
    cr_expect_eq(node_at(&fx, "main")->total, 11);
    cr_expect_eq(node_at(&fx, "main")->self, 1);
    cr_expect_eq(node_at(&fx, "main|parse")->total, 6);
    cr_expect_eq(node_at(&fx, "main|parse")->self, 1);
    cr_expect_eq(node_at(&fx, "main|parse|lex")->self, 3);
    cr_expect_eq(node_at(&fx, "main|parse|eval")->total, 2);
    cr_expect_eq(node_at(&fx, "main|eval")->total, 4);
    cr_expect_eq(node_at(&fx, "main|eval")->self, 4);
    cr_expect_eq(node_at(&fx, "main|parse|lex")->depth, 3);
    cr_expect_eq(fx.flame.max_depth, 3);
    teardown(&fx);
}

Test(flame, keeps_recursion_as_a_chain_without_counting_twice)
{
    struct fixture fx;
    setup(&fx);
    add_stack(&fx, "main|f|f|f", 2);
    add_stack(&fx, "main|f|g|f", 1);
    add_stack(&fx, "main|f", 1);
    cr_assert_eq(rep_flame_build(&fx.flame, &fx.agg, &fx.names), CMN_OK);

    cr_expect_eq(fx.flame.nodes[REP_FLAME_ROOT].total, 4);
    cr_expect_eq(node_at(&fx, "main|f")->total, 4, "the outer f counts each sample once");
    cr_expect_eq(node_at(&fx, "main|f")->self, 1);
    cr_expect_eq(node_at(&fx, "main|f|f")->total, 2);
    cr_expect_eq(node_at(&fx, "main|f|f")->self, 0);
    cr_expect_eq(node_at(&fx, "main|f|f|f")->self, 2);
    cr_expect_eq(node_at(&fx, "main|f|g|f")->total, 1);
    cr_expect_eq(fx.flame.n_nodes, 7);
    teardown(&fx);
}

Test(flame, gives_samples_without_frames_to_the_root)
{
    struct fixture fx;
    setup(&fx);
    add_stack(&fx, "main|work", 5);
    cr_assert_eq(rep_agg_add(&fx.agg, NULL, 0, 3), CMN_OK);
    cr_assert_eq(rep_flame_build(&fx.flame, &fx.agg, &fx.names), CMN_OK);
    cr_expect_eq(fx.flame.nodes[REP_FLAME_ROOT].total, 8);
    cr_expect_eq(fx.flame.nodes[REP_FLAME_ROOT].self, 3);
    cr_expect_eq(node_at(&fx, "main")->total, 5);
    teardown(&fx);
}

/* The names of node's children in order, joined by ','. */
static void children_of(struct fixture *fx, uint32_t node, char *out)
{
    out[0] = '\0';
    for (uint32_t c = fx->flame.nodes[node].first_child; c != REP_FLAME_NONE;
         c = fx->flame.nodes[c].next_sibling) {
        if (out[0])
            strcat(out, ",");
        strcat(out, rep_names_get(&fx->names, fx->flame.nodes[c].name_id));
    }
}

Test(flame, orders_children_by_name_or_total_and_sets_starts)
{
    struct fixture fx;
    setup(&fx);
    add_stack(&fx, "main|b", 1);
    add_stack(&fx, "main|c", 5);
    add_stack(&fx, "main|a", 3);
    add_stack(&fx, "main|d", 3);
    add_stack(&fx, "main", 2);
    cr_assert_eq(rep_flame_build(&fx.flame, &fx.agg, &fx.names), CMN_OK);
    uint32_t main_node = rep_flame_child(&fx.flame, REP_FLAME_ROOT, id_of(&fx, "main"));
    char kids[128];
    children_of(&fx, main_node, kids);
    cr_expect_str_eq(kids, "a,b,c,d");
    cr_expect_eq(node_at(&fx, "main|a")->start, 0);
    cr_expect_eq(node_at(&fx, "main|b")->start, 3);
    cr_expect_eq(node_at(&fx, "main|c")->start, 4);
    cr_expect_eq(node_at(&fx, "main|d")->start, 9);

    cr_assert_eq(rep_flame_order(&fx.flame, &fx.names, REP_FLAME_BY_TOTAL), CMN_OK);
    children_of(&fx, main_node, kids);
    cr_expect_str_eq(kids, "c,a,d,b", "by total, ties by name");
    cr_expect_eq(node_at(&fx, "main|c")->start, 0);
    cr_expect_eq(node_at(&fx, "main|a")->start, 5);
    cr_expect_eq(node_at(&fx, "main|d")->start, 8);
    cr_expect_eq(node_at(&fx, "main|b")->start, 11);
    teardown(&fx);
}

Test(flame, finds_nothing_for_an_unknown_path)
{
    struct fixture fx;
    setup(&fx);
    add_stack(&fx, "main|a", 1);
    cr_assert_eq(rep_flame_build(&fx.flame, &fx.agg, &fx.names), CMN_OK);
    uint32_t main_node = rep_flame_child(&fx.flame, REP_FLAME_ROOT, id_of(&fx, "main"));
    cr_expect_neq(main_node, REP_FLAME_NONE);
    cr_expect_eq(rep_flame_child(&fx.flame, main_node, id_of(&fx, "zzz")), REP_FLAME_NONE);
    cr_expect_eq(rep_flame_child(&fx.flame, REP_FLAME_ROOT, id_of(&fx, "a")), REP_FLAME_NONE);
    teardown(&fx);
}

Test(flame, grows_past_its_first_tables)
{
    struct fixture fx;
    setup(&fx);
    char name[32];
    uint32_t ids[2];
    ids[0] = id_of(&fx, "main");
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof(name), "f%04d", i);
        ids[1] = id_of(&fx, name);
        cr_assert_eq(rep_agg_add(&fx.agg, ids, 2, (uint64_t)i + 1), CMN_OK);
    }
    cr_assert_eq(rep_flame_build(&fx.flame, &fx.agg, &fx.names), CMN_OK);
    cr_expect_eq(fx.flame.n_nodes, 5002);
    cr_expect_eq(node_at(&fx, "main")->total, 5000ull * 5001 / 2);
    cr_expect_eq(node_at(&fx, "main|f4999")->total, 5000);
    cr_expect_eq(node_at(&fx, "main|f4999")->start, 4999ull * 5000 / 2);
    teardown(&fx);
}
