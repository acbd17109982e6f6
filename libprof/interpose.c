/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Interposed libc functions (see interpose.h). glibc's execv, execvp, execl... call
 * execve internally without going through the PLT, so each is wrapped by itself. The
 * wrappers only act in the process that owns the profile: a vfork child shares our memory
 * and must not touch the session (it has no interval timer of its own anyway).
 */
#include "libprof/interpose.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "libprof/lifecycle.h"
#include "libprof/threads.h"
#include "sampler/handler.h"

#define LP_EXPORT __attribute__((visibility("default")))
#define LP_EXEC_MAX_ARGS 65536

typedef int main_fn(int, char **, char **);
typedef int libc_start_main_fn(main_fn *, int, char **, void (*)(void), void (*)(void),
                               void (*)(void), void *);
typedef void *dlopen_fn(const char *, int);
typedef int dlclose_fn(void *);
typedef int pthread_setname_np_fn(pthread_t, const char *);
typedef int pthread_create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef int execve_fn(const char *, char *const[], char *const[]);
typedef int execvpe_fn(const char *, char *const[], char *const[]);
typedef int fexecve_fn(int, char *const[], char *const[]);
typedef int execveat_fn(int, const char *, char *const[], char *const[], int);

static struct {
    libc_start_main_fn *libc_start_main;
    main_fn *main;
    pthread_create_fn *pthread_create;
    pthread_setname_np_fn *pthread_setname_np;
    dlopen_fn *dlopen;
    dlclose_fn *dlclose;
    execve_fn *execve;
    execvpe_fn *execvpe;
    fexecve_fn *fexecve;
    execveat_fn *execveat;
} real;

extern char **environ;

static pthread_key_t thread_exit_key;

/* Runs when a thread started through our pthread_create exits (returning or calling
 * pthread_exit): its final name goes into the profile, which covers names set by prctl or
 * after the thread started, and threads that end before the profile does. */
static void thread_exit(void *unused)
{
    (void)unused;
    lp_session_post_thread_name();
}

void lp_interpose_init(void)
{
    if (real.pthread_create)
        return;
    real.execve = (execve_fn *)dlsym(RTLD_NEXT, "execve");
    real.execvpe = (execvpe_fn *)dlsym(RTLD_NEXT, "execvpe");
    real.fexecve = (fexecve_fn *)dlsym(RTLD_NEXT, "fexecve");
    real.execveat = (execveat_fn *)dlsym(RTLD_NEXT, "execveat");
    real.libc_start_main = (libc_start_main_fn *)dlsym(RTLD_NEXT, "__libc_start_main");
    real.pthread_setname_np = (pthread_setname_np_fn *)dlsym(RTLD_NEXT, "pthread_setname_np");
    real.dlopen = (dlopen_fn *)dlsym(RTLD_NEXT, "dlopen");
    real.dlclose = (dlclose_fn *)dlsym(RTLD_NEXT, "dlclose");
    pthread_key_create(&thread_exit_key, thread_exit);
    real.pthread_create = (pthread_create_fn *)dlsym(RTLD_NEXT, "pthread_create");
}

/* As thread_trampoline, for the main thread: the walk ends at this frame, below main(). */
static int main_trampoline(int argc, char **argv, char **envp)
{
    smp_self.root_fp = (uintptr_t)__builtin_frame_address(0);
    int ret = real.main(argc, argv, envp);
    __asm__ volatile("" ::: "memory");
    return ret;
}

int __libc_start_main(main_fn *main, int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack_end);

/* Called by the executable's _start, after every constructor (ours included) ran. */
LP_EXPORT int __libc_start_main(main_fn *main, int argc, char **argv, void (*init)(void),
                                void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
    lp_interpose_init();
    real.main = main;
    return real.libc_start_main(main_trampoline, argc, argv, init, fini, rtld_fini,
                                stack_end);
}

__attribute__((constructor(101))) static void interpose_constructor(void)
{
    lp_interpose_init();
}

struct thread_start {
    void *(*fn)(void *);
    void *arg;
};

/* The stack walk ends at this function's frame (smp_self.root_fp): the frames below it
 * belong to libc's thread start, which keeps no frame pointer. The barrier after the call
 * keeps the compiler from turning it into a tail call, which would drop the frame. */
static void *thread_trampoline(void *p)
{
    struct thread_start st = *(struct thread_start *)p;
    free(p);
    lp_thread_enter();
    pthread_setspecific(thread_exit_key, (void *)1);
    smp_self.root_fp = (uintptr_t)__builtin_frame_address(0);
    void *ret = st.fn(st.arg);
    __asm__ volatile("" ::: "memory");
    return ret;
}

LP_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                             void *(*fn)(void *), void *arg)
{
    lp_interpose_init();
    if (!real.pthread_create)
        return EAGAIN;
    struct thread_start *st = malloc(sizeof(*st));
    if (!st) /* still start the thread: it is sampled leaf-only */
        return real.pthread_create(thread, attr, fn, arg);
    st->fn = fn;
    st->arg = arg;
    int rc = real.pthread_create(thread, attr, thread_trampoline, st);
    if (rc != 0)
        free(st);
    return rc;
}

LP_EXPORT int pthread_setname_np(pthread_t thread, const char *name)
{
    lp_interpose_init();
    int rc = real.pthread_setname_np ? real.pthread_setname_np(thread, name) : ENOSYS;
    if (rc == 0 && pthread_equal(thread, pthread_self()))
        lp_session_post_thread_name();
    return rc;
}

/* A library loaded during the run is recorded at once (with the time), so that samples in
 * it are symbolized even if it is closed before the profile ends. */
LP_EXPORT void *dlopen(const char *file, int mode)
{
    lp_interpose_init();
    void *handle = real.dlopen(file, mode);
    if (handle && file)
        lp_session_post_maps();
    return handle;
}

LP_EXPORT int dlclose(void *handle)
{
    lp_interpose_init();
    lp_session_post_maps();
    return real.dlclose(handle);
}

/* The profile is finished before any exec attempt: if the exec fails the process goes on
 * unprofiled, which is rare and safe; an exec that succeeds never returns to finish it. */
static void before_exec(void)
{
    lp_interpose_init();
    lp_session_finish();
}

LP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    before_exec();
    return real.execve(path, argv, envp);
}

LP_EXPORT int execv(const char *path, char *const argv[])
{
    before_exec();
    return real.execve(path, argv, environ);
}

LP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    before_exec();
    return real.execvpe(file, argv, envp);
}

LP_EXPORT int execvp(const char *file, char *const argv[])
{
    before_exec();
    return real.execvpe(file, argv, environ);
}

LP_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    before_exec();
    return real.fexecve(fd, argv, envp);
}

LP_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                       int flags)
{
    before_exec();
    if (!real.execveat) {
        errno = ENOSYS;
        return -1;
    }
    return real.execveat(dirfd, path, argv, envp, flags);
}

/* The execl family builds argv on the stack, as a vfork child may call it: no malloc. */
static size_t count_args(const char *arg0, va_list ap)
{
    size_t n = 1;
    for (const char *a = arg0; a != NULL; n++)
        a = va_arg(ap, const char *);
    return n; /* arguments plus the terminating NULL */
}

static void fill_args(char **argv, const char *arg0, va_list ap)
{
    size_t i = 0;
    argv[i++] = (char *)arg0;
    for (char *a = (char *)arg0; a != NULL;)
        argv[i++] = a = va_arg(ap, char *);
}

#define EXEC_ARGV(argv, arg, ap_from)                                                      \
    va_list ap_count;                                                                      \
    va_start(ap_count, ap_from);                                                           \
    size_t n_args = count_args(arg, ap_count);                                             \
    va_end(ap_count);                                                                      \
    if (n_args > LP_EXEC_MAX_ARGS) {                                                       \
        errno = E2BIG;                                                                     \
        return -1;                                                                         \
    }                                                                                      \
    char *argv[n_args];                                                                    \
    va_list ap_fill;                                                                       \
    va_start(ap_fill, ap_from);                                                            \
    fill_args(argv, arg, ap_fill)

LP_EXPORT int execl(const char *path, const char *arg, ...)
{
    EXEC_ARGV(argv, arg, arg);
    va_end(ap_fill);
    return execv(path, argv);
}

LP_EXPORT int execlp(const char *file, const char *arg, ...)
{
    EXEC_ARGV(argv, arg, arg);
    va_end(ap_fill);
    return execvp(file, argv);
}

LP_EXPORT int execle(const char *path, const char *arg, ...)
{
    EXEC_ARGV(argv, arg, arg);
    char **envp = va_arg(ap_fill, char **);
    va_end(ap_fill);
    return execve(path, argv, envp);
}
