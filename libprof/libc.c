/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The real libc functions (see libc.h). */
#include "libprof/libc.h"

#include <dlfcn.h>
#include <stdatomic.h>

#include "sampler/handler.h"

struct lp_libc lp_libc;
static _Atomic int resolved;

/* One function by its name, the next definition after ours. */
#define RESOLVE(field, name) (lp_libc.field = (__typeof__(lp_libc.field))dlsym(RTLD_NEXT, name))

void lp_libc_init(void)
{
    if (atomic_load_explicit(&resolved, memory_order_acquire))
        return;
    RESOLVE(libc_start_main, "__libc_start_main");
    RESOLVE(pthread_setname_np, "pthread_setname_np");
    RESOLVE(sigaction, "sigaction");
    RESOLVE(setitimer, "setitimer");
    RESOLVE(dlopen, "dlopen");
    RESOLVE(dlclose, "dlclose");
    RESOLVE(dl_iterate_phdr, "dl_iterate_phdr");
    RESOLVE(execve, "execve");
    RESOLVE(execvpe, "execvpe");
    RESOLVE(fexecve, "fexecve");
    RESOLVE(execveat, "execveat");
    RESOLVE(posix_spawn, "posix_spawn");
    RESOLVE(posix_spawnp, "posix_spawnp");
    RESOLVE(system, "system");
    RESOLVE(popen, "popen");
    RESOLVE(setuid, "setuid");
    RESOLVE(setgid, "setgid");
    RESOLVE(seteuid, "seteuid");
    RESOLVE(setegid, "setegid");
    RESOLVE(setreuid, "setreuid");
    RESOLVE(setregid, "setregid");
    RESOLVE(setresuid, "setresuid");
    RESOLVE(setresgid, "setresgid");
    RESOLVE(setgroups, "setgroups");
    RESOLVE(pthread_sigmask, "pthread_sigmask");
    RESOLVE(sigprocmask, "sigprocmask");
    /* Last: interpose.c takes a resolved pthread_create as "all resolved". */
    RESOLVE(pthread_create, "pthread_create");
    atomic_store_explicit(&resolved, 1, memory_order_release);
}

void lp_sigmask_as_view(int signo, const sigset_t *mask)
{
    sigset_t kernel = *mask;
    smp_self.app_blocked = sigismember(mask, signo) == 1 ? signo : 0;
    smp_self.app_held = 0;
    sigdelset(&kernel, signo);
    lp_sigmask(SIG_SETMASK, &kernel, NULL);
}
