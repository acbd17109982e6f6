/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The objects loaded in this process (the executable, its libraries, the vDSO), found
 * without the dynamic loader: from /proc/self/maps and the ELF headers in memory. glibc's
 * dl_iterate_phdr() takes the loader's write lock, which glibc 2.36 does not reset in a
 * fork child: a child forked while any thread was inside dl_iterate_phdr() hangs on its
 * first call. So libprof never calls it (neither in a child, nor in the parent, where its
 * own thread could be the one holding the lock at an application's fork).
 *
 * For each file mapped with its first page (offset 0) readable: the address of that page
 * (its ELF header), the load bias, a copy of the program headers, and the GNU build-id.
 * Memory is read through process_vm_readv(2), which answers EFAULT instead of faulting
 * when a library is unmapped meanwhile; where that call is refused (seccomp), the headers
 * are read from the file at the mapped path instead. Any thread but a signal handler;
 * allocates.
 */
#ifndef PROF_LIBPROF_OBJECTS_H
#define PROF_LIBPROF_OBJECTS_H

#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "include/libprof/prof_format.h"

#define LP_OBJECT_MAX_PHDRS 64u /* program headers kept per object */

struct lp_object {
    uintptr_t base;       /* address of its ELF header (the file's offset-0 mapping) */
    uintptr_t end;        /* one past the last address of its last mapping */
    uintptr_t bias;       /* run-time address minus link-time address */
    uint64_t inode;       /* the file's identity, as /proc/self/maps shows it; 0 for the vDSO */
    uint16_t phnum;       /* program headers in phdrs */
    uint8_t build_id_len; /* bytes of build_id in use, 0 when it has none */
    uint8_t build_id[PROF_BUILD_ID_MAX];
    ElfW(Phdr) *phdrs;    /* phnum of them, a copy (never read in the object itself); owned
                             by a scan's objects, the caller's memory elsewhere */
    char *path;           /* the file ("[vdso]" for the vDSO); owned */
};

struct lp_objects {
    struct lp_object *v; /* sorted by base */
    size_t n;
};

/* Not async-signal-safe. Scans the process's objects into *out (freed with
 * lp_objects_free). 0 or -errno. */
int lp_objects_scan(struct lp_objects *out);
/* The same from text, the contents of /proc/self/maps (cut up by the scan). An object of
 * known (an earlier scan, or NULL) at the same address from the same file is copied from
 * there instead of read again. */
int lp_objects_scan_text(char *text, const struct lp_objects *known, struct lp_objects *out);
/* The object whose mappings hold address addr, or NULL. */
const struct lp_object *lp_objects_find(const struct lp_objects *o, uintptr_t addr);
/* A deep copy of src into dst; 0 or -ENOMEM (dst empty then). */
int lp_objects_copy(struct lp_objects *dst, const struct lp_objects *src);
void lp_objects_free(struct lp_objects *o);

/* Not async-signal-safe. Copies n bytes of this process's memory at addr into dst without
 * ever faulting: 0, -EFAULT when they are not all readable, -ENOSYS when the kernel call is
 * refused here. */
int lp_objects_read_memory(void *dst, uintptr_t addr, size_t n);

#endif
