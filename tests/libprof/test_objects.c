/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the object scan (libprof/objects.c): this process's objects come with their
 * build-ids; a scan given an earlier one copies the objects it knows (same address, same
 * file) instead of reading their headers again, and reads the others. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "libprof/fd.h"
#include "libprof/objects.h"

static const struct lp_object *by_path(const struct lp_objects *o, const char *part)
{
    for (size_t i = 0; i < o->n; i++)
        if (strstr(o->v[i].path, part))
            return &o->v[i];
    return NULL;
}

Test(objects, this_process_has_libc_with_its_build_id)
{
    struct lp_objects o;
    cr_assert_eq(lp_objects_scan(&o), 0);
    const struct lp_object *libc = by_path(&o, "libc.so");
    cr_assert_not_null(libc);
    cr_assert_gt(libc->build_id_len, 0);
    cr_assert_not_null(lp_objects_find(&o, (uintptr_t)&memcpy));
    lp_objects_free(&o);
}

Test(objects, a_known_object_is_copied_and_an_unknown_one_read)
{
    struct lp_objects first, known, again;
    cr_assert_eq(lp_objects_scan(&first), 0);
    cr_assert_eq(lp_objects_copy(&known, &first), 0);
    /* Marks that only a copy can carry: libc's build-id in known is made up; the
     * executable's entry in known moves to another file (another inode). */
    struct lp_object *libc = (struct lp_object *)by_path(&known, "libc.so");
    cr_assert_not_null(libc);
    memset(libc->build_id, 0xab, sizeof(libc->build_id));
    libc->build_id_len = 7;
    struct lp_object *exe = &known.v[0];
    cr_assert_neq(exe, libc);
    uint8_t exe_id[PROF_BUILD_ID_MAX];
    memcpy(exe_id, exe->build_id, sizeof(exe_id));
    size_t exe_len = exe->build_id_len;
    exe->inode ^= 1;
    exe->build_id_len = 3;

    char *text = lp_fd_slurp("/proc/self/maps", NULL);
    cr_assert_not_null(text);
    cr_assert_eq(lp_objects_scan_text(text, &known, &again), 0);
    free(text);
    cr_assert_eq(again.n, first.n);
    const struct lp_object *libc2 = by_path(&again, "libc.so");
    cr_assert_eq(libc2->build_id_len, 7, "libc was read again instead of copied");
    cr_assert_eq(libc2->build_id[6], 0xab);
    cr_assert_eq(libc2->bias, libc->bias);
    cr_assert_str_eq(libc2->path, libc->path);
    cr_assert_neq(libc2->path, libc->path, "the copy owns its path");
    const struct lp_object *exe2 = lp_objects_find(&again, exe->base);
    cr_assert_not_null(exe2);
    cr_assert_eq(exe2->build_id_len, exe_len, "another file at the same place is read");
    cr_assert_arr_eq(exe2->build_id, exe_id, exe_len);
    lp_objects_free(&first);
    lp_objects_free(&known);
    lp_objects_free(&again);
}
