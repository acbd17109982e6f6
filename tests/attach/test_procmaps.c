/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of another process's mappings (attach/procmaps.c): adding a mapping made
 * later takes the place of what it overlaps, as the kernel does, and keeps the set sorted;
 * reading this very process's maps finds its code. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach/procmaps.h"
#include "common/err.h"

static void add(struct att_maps *m, uint64_t start, uint64_t end, uint64_t offset,
                const char *path)
{
    struct att_map p = {
        .start = start, .end = end, .offset = offset, .prot = PROF_MAP_READ, .path = (char *)path};
    cr_assert_eq(att_maps_add(m, getpid(), &p), CMN_OK);
}

static void expect(const struct att_maps *m, size_t i, uint64_t start, uint64_t end,
                   uint64_t offset, const char *path)
{
    cr_assert_lt(i, m->n, "%zu mappings, no entry %zu", m->n, i);
    const struct att_map *p = &m->v[i];
    cr_expect(p->start == start && p->end == end && p->offset == offset &&
                  strcmp(p->path, path) == 0,
              "entry %zu is %#lx-%#lx +%#lx %s, not %#lx-%#lx +%#lx %s", i, (unsigned long)p->start,
              (unsigned long)p->end, (unsigned long)p->offset, p->path, (unsigned long)start,
              (unsigned long)end, (unsigned long)offset, path);
}

Test(procmaps, added_mappings_stay_sorted)
{
    struct att_maps m = {0};
    add(&m, 0x5000, 0x6000, 0, "/c");
    add(&m, 0x1000, 0x2000, 0, "/a");
    add(&m, 0x3000, 0x4000, 0, "/b");
    cr_assert_eq(m.n, 3);
    expect(&m, 0, 0x1000, 0x2000, 0, "/a");
    expect(&m, 1, 0x3000, 0x4000, 0, "/b");
    expect(&m, 2, 0x5000, 0x6000, 0, "/c");
    cr_expect_eq(att_maps_find(&m, 0x3800), &m.v[1]);
    cr_expect_null(att_maps_find(&m, 0x2800));
    att_maps_free(&m);
}

Test(procmaps, a_mapping_inside_another_cuts_it_in_two)
{
    struct att_maps m = {0};
    add(&m, 0x10000, 0x20000, 0x1000, "/big");
    add(&m, 0x14000, 0x15000, 0, "/small");
    cr_assert_eq(m.n, 3);
    expect(&m, 0, 0x10000, 0x14000, 0x1000, "/big");
    expect(&m, 1, 0x14000, 0x15000, 0, "/small");
    expect(&m, 2, 0x15000, 0x20000, 0x6000, "/big");
    cr_expect_neq(m.v[0].path, m.v[2].path, "the two parts share one path string");
    att_maps_free(&m);
}

Test(procmaps, a_mapping_replaces_what_it_covers_and_trims_the_edges)
{
    struct att_maps m = {0};
    add(&m, 0x1000, 0x3000, 0, "/left");
    add(&m, 0x3000, 0x4000, 0, "/gone");
    add(&m, 0x4000, 0x6000, 0x10000, "/right");
    add(&m, 0x2000, 0x5000, 0, "/new");
    cr_assert_eq(m.n, 3);
    expect(&m, 0, 0x1000, 0x2000, 0, "/left");
    expect(&m, 1, 0x2000, 0x5000, 0, "/new");
    expect(&m, 2, 0x5000, 0x6000, 0x11000, "/right");
    att_maps_free(&m);
}

Test(procmaps, reads_this_process_and_finds_its_code)
{
    struct att_maps m;
    struct cmn_err err = {0};
    cr_assert_eq(att_maps_read(getpid(), &m, &err), CMN_OK, "%s", err.msg);
    cr_expect(att_maps_is_code(&m, (uint64_t)(uintptr_t)&add), "this test's code is not code");
    cr_expect(!att_maps_is_code(&m, (uint64_t)(uintptr_t)&m), "the stack is code");
    att_maps_free(&m);
}
