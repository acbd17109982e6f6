/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of symbol name clean-up (reporter/symbols/demangle.c).
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "common/err.h"
#include "reporter/symbols/demangle.h"

static void expect(const char *raw, const char *want)
{
    char *out = NULL;
    cr_assert_eq(rep_demangle_name(raw, &out), CMN_OK);
    cr_assert_str_eq(out, want);
    free(out);
}

Test(demangle, demangles_cpp_names_with_parameters)
{
    expect("_ZN3foo3barEv", "foo::bar()");
    expect("_ZN2ns5Klass6methodEiPKc", "ns::Klass::method(int, char const*)");
    expect("_Z4workIiEvT_", "void work<int>(int)");
}

Test(demangle, leaves_c_names_alone)
{
    expect("main", "main");
    expect("_start", "_start");
    expect("_Zinvalid", "_Zinvalid");
    expect("", "");
}

Test(demangle, drops_symbol_versions_and_keeps_plt)
{
    expect("memcpy@@GLIBC_2.14", "memcpy");
    expect("memcpy@GLIBC_2.2.5", "memcpy");
    expect("malloc@plt", "malloc@plt");
    expect("_ZN3foo3barEv@plt", "foo::bar()@plt");
}
