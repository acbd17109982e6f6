/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The library's side of stack interning (see intern.h): the sp_word filter. */
#include "libprof/intern.h"

#include "sampler/codemap.h"

uint64_t lp_intern_filter_sp(uint64_t sp_word)
{
    return sp_word && smp_codemap_contains((uintptr_t)sp_word) ? sp_word : 0;
}
