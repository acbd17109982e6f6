/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A workload that talks: the end-to-end tests run it with and without the preloaded
 * library and compare what it wrote, its exit status and the file descriptors it saw.
 * It writes fixed text to stdout (through stdio and with write(2), some of it large) and
 * to stderr, burns about CHATTY_CPU_S of CPU in chatty_work() so that the profiler takes
 * samples, then lists file descriptors twice:
 *
 *   self: 0 1 2 3c        this process's open fds at the end of main; "c" marks FD_CLOEXEC
 *   exec: 0 1 2           the fds a child started with fork and execve inherited; the child
 *                         runs without LD_PRELOAD, so only inherited fds show
 *
 * and writes the two lines to FD_REPORT. Exits with status 5, to show it is passed on.
 *
 *   chatty [FD_REPORT]    the above; without FD_REPORT the fds are not listed
 *   chatty --list-fds     print this process's open fds on one line and exit 0
 */
#define _GNU_SOURCE /* pipe2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHATTY_CPU_S 0.3
#define CHATTY_EXIT 5
#define MAX_FDS 256

static volatile uint64_t sink;

uint64_t chatty_work(double cpu_s);

static double process_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noipa)) uint64_t chatty_work(double cpu_s)
{
    uint64_t x = 88172645463325252ull;
    while (process_cpu_s() < cpu_s) {
        for (int i = 0; i < 100000; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            __asm__ volatile("" : "+r"(x));
        }
    }
    return x;
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* Writes "0 1 2 3c" (sorted; "c" after a close-on-exec fd) into buf. */
static void list_fds(char *buf, size_t cap)
{
    int fds[MAX_FDS];
    int n = 0;
    buf[0] = '\0';
    DIR *d = opendir("/proc/self/fd");
    if (!d) {
        snprintf(buf, cap, "error:%s", strerror(errno));
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < MAX_FDS) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        int fd = atoi(e->d_name);
        if (fd != dirfd(d))
            fds[n++] = fd;
    }
    qsort(fds, (size_t)n, sizeof(fds[0]), cmp_int);
    size_t len = 0;
    for (int i = 0; i < n && len < cap; i++) {
        int flags = fcntl(fds[i], F_GETFD);
        len += (size_t)snprintf(buf + len, cap - len, "%s%d%s", i ? " " : "", fds[i],
                                flags >= 0 && (flags & FD_CLOEXEC) ? "c" : "");
    }
    closedir(d);
}

/* Runs "/proc/self/exe --list-fds" without LD_PRELOAD and reads its one line. */
static void list_exec_fds(char *buf, size_t cap)
{
    int p[2];
    buf[0] = '\0';
    if (pipe2(p, O_CLOEXEC) != 0) {
        snprintf(buf, cap, "error:pipe");
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        unsetenv("LD_PRELOAD");
        if (dup2(p[1], 1) < 0)
            _exit(126);
        execl("/proc/self/exe", "chatty", "--list-fds", (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    size_t len = 0;
    ssize_t r;
    while (len + 1 < cap &&
           ((r = read(p[0], buf + len, cap - 1 - len)) > 0 || (r < 0 && errno == EINTR)))
        len += r > 0 ? (size_t)r : 0;
    buf[len] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    close(p[0]);
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        snprintf(buf, cap, "error:child");
}

static void write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void talk(void)
{
    printf("chatty: hello on stdout\n");
    fprintf(stderr, "chatty: hello on stderr\n");
    fflush(stdout);
    write_all(1, "chatty: raw write on fd 1\n", 26);
    write_all(2, "chatty: raw write on fd 2\n", 26);
    /* About 100 KiB through stdio, more than one buffer's worth. */
    for (int i = 0; i < 2000; i++)
        printf("line %04d: the quick brown fox jumps over the lazy dog %08x\n", i,
               (unsigned)i * 2654435761u);
    fprintf(stderr, "chatty: done talking, no newline at the end");
}

int main(int argc, char **argv)
{
    char self[1024], exec[1024];

    if (argc == 2 && strcmp(argv[1], "--list-fds") == 0) {
        list_fds(self, sizeof(self));
        printf("%s\n", self);
        return 0;
    }
    if (argc > 2) {
        fprintf(stderr, "usage: chatty [FD_REPORT] | chatty --list-fds\n");
        return 2;
    }
    talk();
    sink = chatty_work(CHATTY_CPU_S);
    printf("chatty: worked\n");
    fflush(stdout);
    if (argc == 2) {
        list_fds(self, sizeof(self));
        list_exec_fds(exec, sizeof(exec));
        FILE *f = fopen(argv[1], "we");
        if (!f) {
            fprintf(stderr, "chatty: %s: %s\n", argv[1], strerror(errno));
            return 1;
        }
        fprintf(f, "self: %s\nexec: %s\n", self, exec);
        fclose(f);
    }
    return CHATTY_EXIT;
}
