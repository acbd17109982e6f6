/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Threads that block every signal, as xz's workers and many thread pools do, leaving
 * signals to one thread:
 *
 *   sigblock SECONDS
 *
 * main blocks every signal and starts two threads: inherited_worker runs with the mask it
 * inherited, self_blocked_worker starts unblocked and blocks every signal itself with
 * sigprocmask(); each burns SECONDS of its own CPU time. Each reports what it sees of its
 * mask, then main checks that a signal it blocked waits: it installs a handler for
 * SIGRTMAX-2 (the default signal of a sampler that signals each thread), sends it to
 * itself, and unblocks it. Prints
 *
 *   inherited: SIGRTMAX-2 blocked
 *   self: SIGRTMAX-2 blocked
 *   pending while blocked: 0 handled, 1 pending; exec'd program: SIGRTMAX-2 blocked, 60 blocked
 *   after unblocking: 1 handled
 *   vfork child's program: SIGRTMAX-2 unblocked, 0 blocked
 *   after a vfork child set an empty mask: SIGRTMAX-2 blocked
 *   posix_spawn's program: SIGRTMAX-2 blocked, 60 blocked
 *   posix_spawn's program with an empty mask: SIGRTMAX-2 unblocked, 0 blocked
 *   system()'s program: SIGRTMAX-2 blocked, 60 blocked
 *   popen()'s program: SIGRTMAX-2 blocked, 60 blocked
 *
 * (the mask a program it execs starts with, as that program sees it: a fork child execs
 * `sigblock --mask`, which prints it and exits)
 *
 * and exits 0; the same with and without a profiler.
 */
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static volatile uint64_t sink;
static volatile sig_atomic_t handled;

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void burn(double seconds)
{
    double end = thread_cpu_s() + seconds;
    uint64_t x = 1;
    while (thread_cpu_s() < end)
        for (int i = 0; i < 100000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = x;
}

static const char *view(void)
{
    sigset_t cur;
    pthread_sigmask(SIG_SETMASK, NULL, &cur);
    return sigismember(&cur, SIGRTMAX - 2) == 1 ? "blocked" : "unblocked";
}

static double seconds;
static char inherited_view[16], self_view[16];

static __attribute__((noinline)) void *inherited_worker(void *arg)
{
    (void)arg;
    snprintf(inherited_view, sizeof(inherited_view), "%s", view());
    burn(seconds);
    return NULL;
}

static __attribute__((noinline)) void *self_blocked_worker(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    snprintf(self_view, sizeof(self_view), "%s", view());
    burn(seconds);
    return NULL;
}

static void on_signal(int sig)
{
    (void)sig;
    handled++;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--mask") == 0) {
        sigset_t cur;
        sigprocmask(SIG_SETMASK, NULL, &cur);
        int n = 0;
        for (int s = 1; s < NSIG; s++)
            n += sigismember(&cur, s) == 1;
        printf("%s, %d blocked\n", sigismember(&cur, SIGRTMAX - 2) == 1 ? "SIGRTMAX-2 blocked"
                                                                        : "SIGRTMAX-2 unblocked",
               n);
        return 0;
    }
    if (argc != 2 || (seconds = atof(argv[1])) <= 0) {
        fprintf(stderr, "usage: sigblock SECONDS\n");
        return 2;
    }
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    pthread_t self_blocked;
    pthread_create(&self_blocked, NULL, self_blocked_worker, NULL);
    pthread_sigmask(SIG_SETMASK, &all, NULL);
    pthread_t inherited;
    pthread_create(&inherited, NULL, inherited_worker, NULL);
    pthread_join(inherited, NULL);
    pthread_join(self_blocked, NULL);
    printf("inherited: SIGRTMAX-2 %s\nself: SIGRTMAX-2 %s\n", inherited_view, self_view);

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGRTMAX - 2, &sa, NULL);
    pthread_kill(pthread_self(), SIGRTMAX - 2);
    sigset_t pending;
    sigpending(&pending);
    printf("pending while blocked: %d handled, %d pending; ", (int)handled,
           sigismember(&pending, SIGRTMAX - 2));
    fflush(stdout);

    pid_t pid = fork();
    if (pid == 0) {
        printf("exec'd program: ");
        fflush(stdout);
        execl("/proc/self/exe", "sigblock", "--mask", (char *)NULL);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);

    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, SIGRTMAX - 2);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    printf("after unblocking: %d handled\n", (int)handled);

    /* A vfork child shares its parent's memory, not its mask. */
    pthread_sigmask(SIG_SETMASK, &all, NULL);
    printf("vfork child's program: ");
    fflush(stdout);
    pid = vfork();
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &none, NULL);
        execl("/proc/self/exe", "sigblock", "--mask", (char *)NULL);
        _exit(127);
    }
    waitpid(pid, &status, 0);
    printf("after a vfork child set an empty mask: SIGRTMAX-2 %s\n", view());

    /* posix_spawn's child takes the caller's mask, or the one its attributes set. */
    char *mask_argv[] = {"sigblock", "--mask", NULL};
    printf("posix_spawn's program: ");
    fflush(stdout);
    if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, mask_argv, environ) == 0)
        waitpid(pid, &status, 0);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setsigmask(&attr, &none);
    printf("posix_spawn's program with an empty mask: ");
    fflush(stdout);
    if (posix_spawn(&pid, "/proc/self/exe", NULL, &attr, mask_argv, environ) == 0)
        waitpid(pid, &status, 0);
    posix_spawnattr_destroy(&attr);

    /* system() and popen() spawn their shell through libc's internal call. */
    char self[4096], command[4200];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (len <= 0)
        return 1;
    self[len] = '\0';
    snprintf(command, sizeof(command), "exec '%s' --mask", self);
    printf("system()'s program: ");
    fflush(stdout);
    if (system(command) != 0)
        return 1;
    FILE *child = popen(command, "r");
    char line[128] = "";
    if (child == NULL || fgets(line, sizeof(line), child) == NULL || pclose(child) != 0)
        return 1;
    printf("popen()'s program: %s", line);
    return 0;
}
