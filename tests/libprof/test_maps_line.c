/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the /proc/PID/maps line parser shared by the library and prof
 * (include/prof_record.h). */
#include <criterion/criterion.h>

#include "common/maps_line.h"

Test(maps_line, file_mapping)
{
    struct cmn_maps_line m;
    cr_assert_eq(cmn_maps_parse_line(
                     "55d0c8a00000-55d0c8a21000 r-xp 00002000 fe:01 1234   /usr/bin/app", &m),
                 0);
    cr_assert_eq(m.start, 0x55d0c8a00000ull);
    cr_assert_eq(m.end, 0x55d0c8a21000ull);
    cr_assert_eq(m.offset, 0x2000);
    cr_assert_eq(m.prot, PROF_MAP_READ | PROF_MAP_EXEC);
    cr_assert_str_eq(m.path, "/usr/bin/app");
}

Test(maps_line, special_anonymous_and_deleted)
{
    struct cmn_maps_line m;
    cr_assert_eq(cmn_maps_parse_line("7ffd1000-7ffd3000 r-xp 00000000 00:00 0          [vdso]",
                                      &m),
                 0);
    cr_assert_str_eq(m.path, "[vdso]");
    cr_assert_eq(cmn_maps_parse_line("7f00-7f10 rw-p 00000000 00:00 0", &m), 0);
    cr_assert_str_eq(m.path, "");
    cr_assert_eq(m.prot, PROF_MAP_READ | PROF_MAP_WRITE);
    cr_assert_eq(cmn_maps_parse_line("7f00-7f10 --xp 00001000 08:01 77 /tmp/a b (deleted)", &m),
                 0);
    cr_assert_str_eq(m.path, "/tmp/a b (deleted)");
    cr_assert_eq(m.prot, PROF_MAP_EXEC);
}

Test(maps_line, rejects_what_is_not_a_maps_line)
{
    struct cmn_maps_line m;
    cr_assert_neq(cmn_maps_parse_line("", &m), 0);
    cr_assert_neq(cmn_maps_parse_line("garbage", &m), 0);
    cr_assert_neq(cmn_maps_parse_line("7f00-7f10 rw", &m), 0);
    cr_assert_neq(cmn_maps_parse_line("7f10-7f00 r-xp 0 00:00 0", &m), 0);
}
