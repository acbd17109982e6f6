/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Symbol name clean-up over libbfd's bfd_demangle() (libiberty's C++ demangler). The
 * flag values come from libiberty's demangle.h, which Debian's binutils-dev does not
 * install; they are part of that interface and have not changed since it was written.
 */
#include "reporter/symbols/demangle.h"

#include <bfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

#ifndef DMGL_PARAMS
#define DMGL_PARAMS (1 << 0) /* include function arguments */
#define DMGL_ANSI (1 << 1)   /* include const, volatile, etc. */
#endif

int rep_demangle_name(const char *raw, char **out /* out */)
{
    /* A version suffix starts at the first '@' ("f@VER", "f@@VER"); "@plt" is kept, as
     * it tells a PLT stub from the function it jumps to. */
    size_t base_len = strcspn(raw, "@");
    const char *suffix = strcmp(raw + base_len, "@plt") == 0 ? "@plt" : "";
    char *base = strndup(raw, base_len);
    if (base == NULL)
        return CMN_E_NOMEM;
    char *demangled = NULL;
    if (base[0] == '_' && base[1] == 'Z')
        demangled = bfd_demangle(NULL, base, DMGL_PARAMS | DMGL_ANSI);
    const char *shown = demangled != NULL ? demangled : base;
    size_t n = strlen(shown) + strlen(suffix) + 1;
    char *s = malloc(n);
    if (s != NULL)
        snprintf(s, n, "%s%s", shown, suffix);
    free(demangled);
    free(base);
    *out = s;
    return s != NULL ? CMN_OK : CMN_E_NOMEM;
}
