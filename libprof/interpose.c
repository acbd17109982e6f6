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
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "libprof/environ.h"
#include "libprof/labels.h"
#include "libprof/libc.h"
#include "libprof/session.h"
#include "libprof/threads.h"
#include "libprof/timers.h"
#include "libprof/trampolines.h"
#include "libprof/unwind.h"
#include "sampler/handler.h"

#define LP_EXPORT __attribute__((visibility("default")))
#define LP_EXEC_MAX_ARGS 65536

extern char **environ;

static pthread_key_t thread_exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static lp_main_fn *real_main;

/* Runs when a thread started through our pthread_create exits (returning or calling
 * pthread_exit): its timer is released, and its final name goes into the profile, which
 * covers names set by prctl or after the thread started, and threads that end before the
 * profile does. */
static void thread_exit(void *unused)
{
    (void)unused;
    sigset_t mask;
    lp_signals_block(&mask);
    lp_session_thread_exit();
    lp_thread_leave();
    lp_signals_restore(&mask);
}

static void make_key(void)
{
    pthread_key_create(&thread_exit_key, thread_exit);
}

void lp_interpose_init(void)
{
    lp_libc_init();
    pthread_once(&key_once, make_key);
}

/* As thread_trampoline, for the main thread: the walk ends at this frame, below main().
 * The thread-exit hook is set for it too: main may leave by pthread_exit(). */
LP_TRAMPOLINE static int main_trampoline(int argc, char **argv, char **envp)
{
    smp_self.root_fp = (uintptr_t)__builtin_frame_address(0);
    pthread_setspecific(thread_exit_key, (void *)1);
    int ret = real_main(argc, argv, envp);
    __asm__ volatile("" ::: "memory");
    return ret;
}

int __libc_start_main(lp_main_fn *main, int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack_end);

/* Called by the executable's _start, after every constructor (ours included) ran. */
LP_EXPORT int __libc_start_main(lp_main_fn *main, int argc, char **argv, void (*init)(void),
                                void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
    lp_interpose_init();
    real_main = main;
    return lp_libc.libc_start_main(main_trampoline, argc, argv, init, fini, rtld_fini,
                                   stack_end);
}

__attribute__((constructor(101))) static void interpose_constructor(void)
{
    lp_interpose_init();
}

struct thread_start {
    void *(*fn)(void *);
    void *arg;
    sigset_t mask; /* the creator's mask, which the start routine runs with */
    uint32_t label_set; /* the creator's labels, which the thread starts with */
};

/*
 * The application's view of a thread's signal mask differs from the kernel's in one
 * signal: the one libprof samples each thread with (the perf and thread sources) stays
 * unblocked, so that a thread that blocks every signal is sampled (xz's workers and many
 * programs' thread pools leave signals to one thread: their CPU time went unsampled).
 * The application sees the signal blocked where it blocked it: pthread_sigmask() and
 * sigprocmask() report it so, a thread it starts inherits that view, an exec'd program
 * inherits the signal blocked, and an instance of the application's own waits pending
 * until it unblocks the signal (smp_handler() holds it, blocked for real, smp_self.
 * app_held). glibc's own internal masks do not come through here, nor does libprof's
 * code (lp_sigmask()).
 */
/* 1 in a vfork child, which runs on its parent's thread-local state: the mask it sets is
 * its own (and its program's, after the exec it is about to make), the view stays its
 * parent's. */
static int in_vfork_child(void)
{
    return smp_self.tid != 0 && (uint32_t)syscall(SYS_gettid) != smp_self.tid;
}

static int app_sigmask(int (*real)(int, const sigset_t *, sigset_t *), int how,
                       const sigset_t *set, sigset_t *old)
{
    int signo = lp_session_thread_signo();
    if (signo <= 0 || in_vfork_child())
        return real(how, set, old);
    int was = smp_self.app_blocked == signo, held = smp_self.app_held, now = was;
    sigset_t kernel;
    const sigset_t *apply = set;
    if (set != NULL && (how == SIG_BLOCK || how == SIG_UNBLOCK || how == SIG_SETMASK)) {
        int in = sigismember(set, signo) == 1;
        now = how == SIG_BLOCK ? was || in : how == SIG_UNBLOCK ? was && !in : in;
        kernel = *set;
        if (how != SIG_UNBLOCK && !(now && held))
            sigdelset(&kernel, signo);
        apply = &kernel;
    }
    /* The view changes before the mask does: an instance that comes once the mask is set
     * finds the new view. */
    smp_self.app_blocked = now ? signo : 0;
    if (!now)
        smp_self.app_held = 0;
    int rc = real(how, apply, old);
    if (rc != 0) {
        smp_self.app_blocked = was ? signo : 0;
        smp_self.app_held = held;
        return rc;
    }
    if (old != NULL && was)
        sigaddset(old, signo);
    else if (old != NULL)
        sigdelset(old, signo);
    return 0;
}

/* A new thread's start: the creator's mask, as the application sees it. */
static void app_mask_begin(const sigset_t *mask)
{
    int signo = lp_session_thread_signo();
    if (signo > 0)
        lp_sigmask_as_view(signo, mask);
    else
        lp_sigmask(SIG_SETMASK, mask, NULL);
}

/* Async-signal-safe, as the functions they stand for (once lp_libc is resolved, which the
 * first constructor does). */
LP_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    lp_libc_init();
    if (!lp_libc.pthread_sigmask)
        return ENOSYS;
    return app_sigmask(lp_libc.pthread_sigmask, how, set, old);
}

LP_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    lp_libc_init();
    if (!lp_libc.sigprocmask) {
        errno = ENOSYS;
        return -1;
    }
    return app_sigmask(lp_libc.sigprocmask, how, set, old);
}

/* The stack walk ends at this function's frame (smp_self.root_fp): the frames below it
 * belong to libc's thread start, which keeps no frame pointer. The barrier after the call
 * keeps the compiler from turning it into a tail call, which would drop the frame. The
 * thread starts with every signal blocked (lp_signals_block: our setup takes locks) and
 * gets its creator's mask when its start routine begins. */
LP_TRAMPOLINE static void *thread_trampoline(void *p)
{
    struct thread_start st = *(struct thread_start *)p;
    free(p);
    lp_thread_enter();
    pthread_setspecific(thread_exit_key, (void *)1);
    lp_session_thread_start();
    lp_labels_thread_begin(st.label_set);
    smp_self.root_fp = (uintptr_t)__builtin_frame_address(0);
    app_mask_begin(&st.mask);
    void *ret = st.fn(st.arg);
    __asm__ volatile("" ::: "memory");
    return ret;
}

LP_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                             void *(*fn)(void *), void *arg)
{
    lp_interpose_init();
    if (!lp_libc.pthread_create)
        return EAGAIN;
    struct thread_start *st = malloc(sizeof(*st));
    if (!st) /* still start the thread: it is sampled leaf-only */
        return lp_libc.pthread_create(thread, attr, fn, arg);
    st->fn = fn;
    st->arg = arg;
    st->label_set = smp_self.label_set;
    lp_signals_block(&st->mask); /* the new thread inherits the blocked mask */
    sigset_t mine = st->mask;
    int signo = lp_session_thread_signo();
    if (signo > 0 && smp_self.app_blocked == signo)
        sigaddset(&st->mask, signo); /* the creator's mask as the application sees it */
    int rc = lp_libc.pthread_create(thread, attr, thread_trampoline, st);
    if (rc != 0)
        free(st);
    lp_signals_restore(&mine);
    return rc;
}

/* The application's view of the signal we sample with is virtual: its action is kept
 * aside and receives the signals our timer did not send (sampler/handler.c). */
LP_EXPORT int sigaction(int signo, const struct sigaction *act, struct sigaction *old)
{
    lp_interpose_init();
    if (lp_session_app_sigaction(signo, act, old))
        return 0;
    return lp_libc.sigaction(signo, act, old);
}

/* glibc's signal() calls its internal sigaction directly, so it is wrapped by itself; BSD
 * semantics, as glibc's: the handler stays installed and system calls restart. */
LP_EXPORT sighandler_t signal(int signo, sighandler_t handler)
{
    struct sigaction act, old;
    memset(&act, 0, sizeof(act));
    act.sa_handler = handler;
    act.sa_flags = SA_RESTART;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, signo);
    if (sigaction(signo, &act, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}

LP_EXPORT int setitimer(__itimer_which_t which, const struct itimerval *value,
                        struct itimerval *old)
{
    lp_interpose_init();
    lp_session_app_setitimer((int)which);
    return lp_libc.setitimer(which, value, old);
}

LP_EXPORT int pthread_setname_np(pthread_t thread, const char *name)
{
    lp_interpose_init();
    int rc = lp_libc.pthread_setname_np ? lp_libc.pthread_setname_np(thread, name) : ENOSYS;
    if (rc == 0 && pthread_equal(thread, pthread_self())) {
        sigset_t mask;
        lp_signals_block(&mask);
        lp_session_post_thread_name();
        lp_signals_restore(&mask);
    }
    return rc;
}

/* A library loaded during the run is recorded at once (with the time), so that samples in
 * it are symbolized even if it is closed before the profile ends. */
LP_EXPORT void *dlopen(const char *file, int mode)
{
    lp_interpose_init();
    void *handle = lp_libc.dlopen(file, mode);
    if (handle && file) {
        int err = errno;
        sigset_t mask;
        lp_signals_block(&mask);
        lp_session_post_maps();
        lp_unwind_refresh(); /* the steppers' code map and loaded-object snapshot */
        lp_signals_restore(&mask);
        errno = err;
    }
    return handle;
}

LP_EXPORT int dlclose(void *handle)
{
    lp_interpose_init();
    sigset_t mask;
    lp_signals_block(&mask);
    lp_session_post_maps();
    lp_unwind_unload_begin();
    lp_signals_restore(&mask);
    int rc = lp_libc.dlclose(handle);
    int err = errno;
    lp_signals_block(&mask);
    lp_unwind_unload_end();
    lp_signals_restore(&mask);
    errno = err;
    return rc;
}

/* libunwind's calls from our handler get the snapshot of loaded objects instead of
 * glibc's walk, which takes the loader's lock (see libprof/unwind.h); all others go to
 * glibc. The real function is resolved by the constructor, before any handler runs. */
LP_EXPORT int dl_iterate_phdr(lp_phdr_cb_fn *cb, void *data)
{
    if (lp_unwind_serving_phdr())
        return lp_unwind_iterate_phdr(cb, data);
    if (!lp_libc.dl_iterate_phdr)
        lp_interpose_init();
    /* A tail call, so that this wrapper leaves no frame in the application's stacks. */
    return lp_libc.dl_iterate_phdr(cb, data);
}

/* The set*id family: glibc relays each call to every thread of the process and aborts
 * when one of them fails, and capabilities are per thread, so a program that raised its
 * own (capset, after PR_SET_KEEPCAPS and a uid change: setpriv, capng) would see our
 * writer thread fail the next call. The writer takes on the caller's for the call
 * (session.h). */
#define LP_SETXID(euid, egid, call)                                                        \
    do {                                                                                   \
        lp_interpose_init();                                                               \
        sigset_t mask_;                                                                    \
        lp_signals_block(&mask_);                                                          \
        lp_session_before_setxid(euid, egid);                                              \
        int rc_ = (call);                                                                  \
        int err_ = errno;                                                                  \
        lp_session_after_setxid(rc_ != 0);                                                 \
        lp_signals_restore(&mask_);                                                        \
        errno = err_;                                                                      \
        return rc_;                                                                        \
    } while (0)

LP_EXPORT int setuid(uid_t uid)
{
    LP_SETXID(uid, (gid_t)-1, lp_libc.setuid(uid));
}

LP_EXPORT int setgid(gid_t gid)
{
    LP_SETXID((uid_t)-1, gid, lp_libc.setgid(gid));
}

/* A change of the effective user or group alone keeps the saved one, so the process may
 * take its privilege back (a server switches per request): the profile keeps its owner,
 * and the call costs the writer nothing. */
LP_EXPORT int seteuid(uid_t uid)
{
    LP_SETXID((uid_t)-1, (gid_t)-1, lp_libc.seteuid(uid));
}

LP_EXPORT int setegid(gid_t gid)
{
    LP_SETXID((uid_t)-1, (gid_t)-1, lp_libc.setegid(gid));
}

LP_EXPORT int setreuid(uid_t r, uid_t e)
{
    LP_SETXID(e, (gid_t)-1, lp_libc.setreuid(r, e));
}

LP_EXPORT int setregid(gid_t r, gid_t e)
{
    LP_SETXID((uid_t)-1, e, lp_libc.setregid(r, e));
}

LP_EXPORT int setresuid(uid_t r, uid_t e, uid_t s)
{
    LP_SETXID(r == (uid_t)-1 && s == (uid_t)-1 ? (uid_t)-1 : e, (gid_t)-1,
              lp_libc.setresuid(r, e, s));
}

LP_EXPORT int setresgid(gid_t r, gid_t e, gid_t s)
{
    LP_SETXID((uid_t)-1, r == (gid_t)-1 && s == (gid_t)-1 ? (gid_t)-1 : e,
              lp_libc.setresgid(r, e, s));
}

LP_EXPORT int setgroups(size_t n, const gid_t *list)
{
    LP_SETXID((uid_t)-1, (gid_t)-1, lp_libc.setgroups(n, list));
}

/* The profile is finished before any exec attempt (an exec that succeeds never returns to
 * finish it); after one that fails, after_failed_exec() starts it again in a new file. */
static void before_exec(void)
{
    lp_interpose_init();
    int err = errno;
    sigset_t mask;
    lp_signals_block(&mask);
    lp_session_before_exec();
    /* The program the exec starts inherits the mask the application sees; a vfork child's
     * own mask is the one it set (the view is its parent's). */
    int signo = lp_session_thread_signo();
    if (signo > 0 && smp_self.app_blocked == signo && !in_vfork_child()) {
        sigaddset(&mask, signo);
        smp_self.app_held = 1; /* blocked for real, should the exec fail */
    }
    lp_signals_restore(&mask);
    errno = err;
}

/* An exec returned: it failed (rc is its result, errno kept). */
static int after_failed_exec(int rc)
{
    int err = errno;
    sigset_t mask;
    lp_signals_block(&mask);
    lp_session_after_failed_exec();
    lp_signals_restore(&mask);
    errno = err;
    return rc;
}

/* The environment an exec or a spawn gives its program (libprof/environ.h), built on the
 * caller's stack: EXEC_ENV declares the arrays and names the result. */
#define EXEC_ENV(name, envp)                                                               \
    int follow_ = lp_session_follow();                                                     \
    const char *preload_ = follow_ ? NULL : lp_env_preload(envp);                          \
    const char *output_ = follow_ ? lp_env_relative_output(envp) : NULL;                   \
    const char *cwd_ = lp_session_start_cwd();                                             \
    char *name##_arr[preload_ || output_ ? lp_env_count(envp) + 1 : 1];                    \
    size_t name##_cap = preload_  ? strlen(preload_) + 1                                   \
                        : output_ ? strlen(output_) + strlen(cwd_) + 2                     \
                                  : 1;                                                     \
    char name##_buf[name##_cap];                                                           \
    char *const *name = preload_ ? lp_env_without_us(envp, name##_arr, name##_buf)         \
                        : output_                                                          \
                            ? lp_env_with_output(envp, cwd_, name##_arr, name##_buf, name##_cap) \
                            : (envp)

/* _exit() and _Exit() run no destructor: the profile is finished by the writer thread
 * first (a fork child of a shell, of make or of Python's multiprocessing leaves so). The
 * end is the kernel's, as glibc's _exit() does it. */
LP_EXPORT __attribute__((noreturn)) void _exit(int status)
{
    lp_session_before_quick_exit();
    for (;;) {
        syscall(SYS_exit_group, status);
        syscall(SYS_exit, status);
    }
}

LP_EXPORT __attribute__((noreturn)) void _Exit(int status)
{
    _exit(status);
}

LP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    before_exec();
    EXEC_ENV(env, envp);
    return after_failed_exec(lp_libc.execve(path, argv, env));
}

LP_EXPORT int execv(const char *path, char *const argv[])
{
    before_exec();
    EXEC_ENV(env, environ);
    return after_failed_exec(lp_libc.execve(path, argv, env));
}

LP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    before_exec();
    EXEC_ENV(env, envp);
    return after_failed_exec(lp_libc.execvpe(file, argv, env));
}

LP_EXPORT int execvp(const char *file, char *const argv[])
{
    before_exec();
    EXEC_ENV(env, environ);
    return after_failed_exec(lp_libc.execvpe(file, argv, env));
}

LP_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    before_exec();
    EXEC_ENV(env, envp);
    return after_failed_exec(lp_libc.fexecve(fd, argv, env));
}

LP_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                       int flags)
{
    before_exec();
    if (!lp_libc.execveat) {
        errno = ENOSYS;
        return after_failed_exec(-1);
    }
    EXEC_ENV(env, envp);
    return after_failed_exec(lp_libc.execveat(dirfd, path, argv, env, flags));
}

/* posix_spawn() runs its program without our exec wrappers (glibc's child calls execve
 * inside libc), so its wrapper gives the program what exec would: the same environment
 * (PROF_FOLLOW=0: without us; a relative PROF_OUTPUT made absolute) and, where the
 * calling thread's view blocks the sampling signal and the attributes set no mask, that
 * signal blocked (glibc's child otherwise takes the kernel's mask, in which it never is).
 * make runs its recipes' shells so, and Rust's Command its programs. system() and popen()
 * spawn through libc's internal call: the constructor's lp_env_fix_output() and
 * lp_env_parent_unfollowed() cover their environment, hold_for_spawn() their mask. */
static const posix_spawnattr_t *spawn_attr(const posix_spawnattr_t *attr, posix_spawnattr_t *copy)
{
    int signo = lp_session_thread_signo();
    if (signo <= 0 || smp_self.app_blocked != signo || in_vfork_child())
        return attr;
    short flags = 0;
    if (attr && (posix_spawnattr_getflags(attr, &flags) != 0 || (flags & POSIX_SPAWN_SETSIGMASK)))
        return attr; /* the application chose its child's mask */
    sigset_t mask;
    if (lp_sigmask(SIG_BLOCK, NULL, &mask) != 0)
        return attr;
    sigaddset(&mask, signo);
    if (attr)
        *copy = *attr; /* glibc's attributes are plain values, copied whole */
    else if (posix_spawnattr_init(copy) != 0)
        return attr;
    if (posix_spawnattr_setflags(copy, (short)(flags | POSIX_SPAWN_SETSIGMASK)) != 0 ||
        posix_spawnattr_setsigmask(copy, &mask) != 0)
        return attr;
    return copy;
}

LP_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
                          const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    lp_interpose_init();
    if (!lp_libc.posix_spawn)
        return ENOSYS;
    posix_spawnattr_t copy;
    const posix_spawnattr_t *use = spawn_attr(attr, &copy);
    EXEC_ENV(env, envp);
    return lp_libc.posix_spawn(pid, path, actions, use, argv, env);
}

LP_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                           const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    lp_interpose_init();
    if (!lp_libc.posix_spawnp)
        return ENOSYS;
    posix_spawnattr_t copy;
    const posix_spawnattr_t *use = spawn_attr(attr, &copy);
    EXEC_ENV(env, envp);
    return lp_libc.posix_spawnp(pid, file, actions, use, argv, env);
}

/* system() and popen() spawn through libc's internal call, their child taking the calling
 * thread's mask as the kernel has it, where the sampling signal never is blocked: for the
 * call the signal is blocked for real when the application's view blocks it (the way a
 * held instance is: smp_self.app_held), so that the program started inherits it blocked,
 * as an exec'd one does. The thread waits in the call; a sample due meanwhile comes once
 * the signal is unblocked. 1 when it was blocked here. */
static int hold_for_spawn(void)
{
    int signo = lp_session_thread_signo();
    if (signo <= 0 || smp_self.app_blocked != signo || smp_self.app_held || in_vfork_child())
        return 0;
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, signo);
    smp_self.app_held = 1; /* before the mask: a handler in between finds it held */
    if (lp_sigmask(SIG_BLOCK, &one, NULL) != 0) {
        smp_self.app_held = 0;
        return 0;
    }
    return 1;
}

/* Ends hold_for_spawn()'s hold, unless the application changed its mask meanwhile (from a
 * signal handler of its own: the view and the hold are then its call's). */
static void release_spawn_hold(int held)
{
    int signo = lp_session_thread_signo();
    if (!held || signo <= 0 || smp_self.app_blocked != signo || !smp_self.app_held)
        return;
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, signo);
    smp_self.app_held = 0;
    lp_sigmask(SIG_UNBLOCK, &one, NULL);
}

LP_EXPORT int system(const char *command)
{
    lp_interpose_init();
    if (!lp_libc.system) {
        errno = ENOSYS;
        return -1;
    }
    int held = hold_for_spawn();
    int rc = lp_libc.system(command);
    int err = errno;
    release_spawn_hold(held);
    errno = err;
    return rc;
}

LP_EXPORT FILE *popen(const char *command, const char *mode)
{
    lp_interpose_init();
    if (!lp_libc.popen) {
        errno = ENOSYS;
        return NULL;
    }
    int held = hold_for_spawn();
    FILE *f = lp_libc.popen(command, mode);
    int err = errno;
    release_spawn_hold(held);
    errno = err;
    return f;
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
