/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The GNU build-id of an ELF object from its note bytes (common to the library, which
 * reads its objects in memory, and to the reporter, which reads them from files).
 * Header-only, never installed.
 *
 * Signal handler's path: not allowed (nothing there needs it; memcmp is not on its list).
 */
#ifndef PROF_COMMON_BUILD_ID_H
#define PROF_COMMON_BUILD_ID_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "include/libprof/prof_format.h"

/* The GNU build-id (NT_GNU_BUILD_ID) in an ELF note segment's or section's bytes: copies
 * it into out (cap bytes; PROF_BUILD_ID_MAX for a MAP record) and returns its length, or
 * 0 when the notes hold none that fits. Reads only inside [notes, notes + size). */
static inline uint8_t cmn_build_id_note(const unsigned char *notes, size_t size, uint8_t *out,
                                        size_t cap)
{
    struct note {
        uint32_t namesz, descsz, type;
    } nh;
    size_t off = 0;
    while (off + sizeof(nh) <= size) {
        memcpy(&nh, notes + off, sizeof(nh));
        size_t name_sz = ((size_t)nh.namesz + 3u) & ~(size_t)3u;
        size_t desc_sz = ((size_t)nh.descsz + 3u) & ~(size_t)3u;
        const unsigned char *name = notes + off + sizeof(nh);
        if (name_sz > size || desc_sz > size || off + sizeof(nh) + name_sz + desc_sz > size)
            break;
        if (nh.type == 3 /* NT_GNU_BUILD_ID */ && nh.namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
            nh.descsz > 0 && nh.descsz <= cap && nh.descsz <= UINT8_MAX) {
            memcpy(out, name + name_sz, nh.descsz);
            return (uint8_t)nh.descsz;
        }
        off += sizeof(nh) + name_sz + desc_sz;
    }
    return 0;
}

#endif
