/* SPDX-License-Identifier: GPL-3.0-or-later */
/* zlib, loaded when first needed (see zlib.h). */
#include "libprof/zlib.h"

#include <dlfcn.h>
#include <zlib.h>

#include "libprof/libc.h"

typedef int uncompress_fn(Bytef *dest, uLongf *dest_len, const Bytef *src, uLong src_len);

static uncompress_fn *uncompress_p; /* the writer thread's, with the map lock */
static int is_tried;

int lp_zlib_inflate(const uint8_t *in, size_t n_in, uint8_t *out, size_t n_out)
{
    if (!is_tried) {
        is_tried = 1;
        lp_libc_init();
        void *lib = lp_libc.dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
        if (lib)
            uncompress_p = (uncompress_fn *)dlsym(lib, "uncompress");
    }
    if (!uncompress_p)
        return -1;
    uLongf got = (uLongf)n_out;
    return uncompress_p(out, &got, in, (uLong)n_in) == Z_OK && got == n_out ? 0 : -1;
}
