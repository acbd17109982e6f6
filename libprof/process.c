/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The PROCESS record's facts (see process.h).
 */
#include "libprof/process.h"

#include <link.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/record.h"

size_t lp_process_describe(struct prof_rec_process *p, char exe[PATH_MAX])
{
    p->pid = (uint32_t)getpid();
    p->ppid = (uint32_t)getppid();
    p->start_real_ns = cmn_clock_ns(CLOCK_REALTIME);
    /* Through this thread: a main thread that called pthread_exit() left no exe at
     * /proc/self. */
    ssize_t n = readlink("/proc/thread-self/exe", exe, PATH_MAX - 1);
    if (n <= 0)
        n = readlink("/proc/self/exe", exe, PATH_MAX - 1);
    exe[n > 0 ? n : 0] = '\0';
    return cmn_record_size_str(sizeof(*p), strlen(exe));
}

/* A note named "Go" of type 4 (Go's build id; its linker pads the name to 4 bytes) in the
 * notes [at, at + len). */
static int has_go_note(const unsigned char *at, size_t len)
{
    size_t off = 0;
    while (len - off >= 12) {
        uint32_t namesz, descsz, type;
        memcpy(&namesz, at + off, 4);
        memcpy(&descsz, at + off + 4, 4);
        memcpy(&type, at + off + 8, 4);
        size_t name_at = off + 12, desc_at = name_at + ((namesz + 3u) & ~3u);
        if (namesz > len || descsz > len || desc_at > len ||
            len - desc_at < ((descsz + 3u) & ~3u))
            return 0;
        if ((namesz == 3 || namesz == 4) && type == 4 && memcmp(at + name_at, "Go", 3) == 0)
            return 1;
        off = desc_at + ((descsz + 3u) & ~3u);
    }
    return 0;
}

struct go_look {
    int is_go;
    uintptr_t code;
};

/* dl_iterate_phdr()'s first object is the program. */
static int first_object_is_go(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct go_look *g = data;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_NOTE &&
            has_go_note((const unsigned char *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz))
            g->is_go = 1;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && g->code == 0)
            g->code = info->dlpi_addr + ph->p_vaddr;
    }
    return 1; /* the first object only */
}

int lp_process_is_go(uintptr_t *code)
{
    struct go_look g = {0, 0};
    dl_iterate_phdr(first_object_is_go, &g);
    if (code != NULL)
        *code = g.code;
    return g.is_go;
}
