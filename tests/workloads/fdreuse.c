/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A daemon's descriptor habits against the profiler's own descriptors: it closes every
 * descriptor above 2 and opens its own, which then get the numbers libprof's were.
 *
 *   fdreuse pipe SECONDS    then streams a counting byte pattern through a pipe (at the
 *                           lowest numbers) for SECONDS while another thread spins in code
 *                           without unwind information (anonymous memory, where
 *                           libunwind would validate addresses through a pipe of its own
 *                           on those same numbers); prints "pipe ok N" when every byte
 *                           came back in order, "pipe corrupt AT" otherwise
 *   fdreuse teardown        opens a pipe on the freed numbers, calls prof_stop() (which
 *                           disarms every timer libprof had) and checks that its pipe still
 *                           works; prints "teardown ok" or "teardown closed FD"
 *
 * Exits 0 when all was well.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

int prof_stop(void) __attribute__((weak));

static volatile int stop;

static void close_all_above_2(void)
{
    struct rlimit lim;
    int max = getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < 4096 ? (int)lim.rlim_cur : 4096;
    for (int fd = 3; fd < max; fd++)
        close(fd);
}

/* Spins in a function copied into anonymous memory: no unwind information there. */
static void *spin_in_anon(void *arg)
{
    (void)arg;
#if defined(__x86_64__)
    /* 1: mov stop(%rip)... is not position-independent here: poll a register loop. */
    static const unsigned char loop[] = {0x48, 0xc7, 0xc0, 0x40, 0x42, 0x0f, 0x00, /* mov $1e6,%rax */
                                         0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3};      /* dec; jnz; ret */
    unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    memcpy(p, loop, sizeof(loop));
    while (!stop)
        ((void (*)(void))p)();
#else
    while (!stop)
        ;
#endif
    return NULL;
}

static int run_pipe(double seconds)
{
    close_all_above_2();
    int p[2];
    if (pipe(p) != 0)
        return 1;
    pthread_t t;
    pthread_create(&t, NULL, spin_in_anon, NULL);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    uint64_t sent = 0, got = 0;
    unsigned char buf[4096];
    int bad = 0;
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 >
            seconds)
            break;
        for (size_t i = 0; i < sizeof(buf); i++)
            buf[i] = (unsigned char)(sent + i);
        if (write(p[1], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
            return 1;
        sent += sizeof(buf);
        ssize_t n = read(p[0], buf, sizeof(buf));
        for (ssize_t i = 0; i < n && !bad; i++)
            if (buf[i] != (unsigned char)(got + (uint64_t)i))
                bad = 1;
        if (bad) {
            printf("pipe corrupt %llu\n", (unsigned long long)got);
            break;
        }
        got += (uint64_t)n;
    }
    stop = 1;
    pthread_join(t, NULL);
    /* Nothing may be left in the pipe either: a byte written in by someone else. */
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    while (!bad && got < sent) {
        ssize_t n = read(p[0], buf, sizeof(buf));
        if (n <= 0)
            break;
        got += (uint64_t)n;
    }
    ssize_t extra = read(p[0], buf, 1);
    if (!bad && (got != sent || extra > 0)) {
        printf("pipe corrupt %llu of %llu, %s\n", (unsigned long long)got,
               (unsigned long long)sent, extra > 0 ? "bytes added" : "bytes lost");
        bad = 1;
    }
    if (!bad)
        printf("pipe ok %llu\n", (unsigned long long)got);
    return bad;
}

static int run_teardown(void)
{
    /* Burn a little so that every thread's timer is armed and has fired. */
    volatile uint64_t x = 0;
    for (int i = 0; i < 50000000; i++)
        x += (uint64_t)i;
    close_all_above_2();
    int p[2];
    if (pipe(p) != 0)
        return 1;
    int more[8];
    for (int i = 0; i < 8; i++)
        more[i] = open("/dev/null", O_RDONLY);
    if (prof_stop)
        prof_stop();
    int fds[10] = {p[0], p[1]};
    memcpy(fds + 2, more, sizeof(more));
    for (int i = 0; i < 10; i++)
        if (fds[i] >= 0 && fcntl(fds[i], F_GETFD) < 0 && errno == EBADF) {
            printf("teardown closed %d\n", fds[i]);
            return 1;
        }
    if (write(p[1], "x", 1) != 1) {
        printf("teardown closed the pipe\n");
        return 1;
    }
    puts("teardown ok");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "pipe") == 0)
        return run_pipe(atof(argv[2]));
    if (argc > 1 && strcmp(argv[1], "teardown") == 0)
        return run_teardown();
    fprintf(stderr, "usage: fdreuse pipe SECONDS | teardown\n");
    return 2;
}
