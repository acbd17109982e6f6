/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A process for `prof record -p` to attach to before its work starts, for the end-to-end
 * tests of attaching (tests/e2e/test_record_pid.c). The main thread waits, idle, until the
 * file GO_FILE exists (it looks every 5 ms, for 30 s at most), then starts a thread named
 * "late-worker" that dlopens zlib and burns SECONDS of its CPU time in late_spin(), which
 * runs zlib's adler32_z over a buffer again and again; main joins it and exits with status
 * 3, so that a test can tell the program's own exit status from any other. Everything the
 * profile must show (the thread, its name, the library's mapping) appears after the attach.
 *
 *   attachlate GO_FILE [SECONDS]    0.6 s by default; prints the checksum
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define BUF_BYTES (256u * 1024u)
#define EXIT_STATUS 3

typedef unsigned long adler_fn(unsigned long adler, const unsigned char *buf, size_t len);

unsigned long late_spin(adler_fn *adler, const unsigned char *buf, double seconds);

struct work {
    double seconds;      /* in: thread CPU time to burn */
    unsigned long sum;   /* out: the checksum */
    const char *failure; /* out: why it could not run, or NULL */
};

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noipa)) unsigned long late_spin(adler_fn *adler, const unsigned char *buf,
                                               double seconds)
{
    unsigned long sum = 1;
    while (thread_cpu_s() < seconds)
        sum = adler(sum, buf, BUF_BYTES);
    return sum;
}

static void *late_worker(void *arg)
{
    struct work *w = arg;
    void *z = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    adler_fn *adler = z ? (adler_fn *)dlsym(z, "adler32_z") : NULL;
    unsigned char *buf = malloc(BUF_BYTES);
    if (!adler || !buf) {
        w->failure = z ? "no adler32_z in zlib, or no memory" : dlerror();
        free(buf);
        return NULL;
    }
    for (unsigned i = 0; i < BUF_BYTES; i++)
        buf[i] = (unsigned char)(i * 31u >> 3);
    w->sum = late_spin(adler, buf, w->seconds);
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    struct work w = {.seconds = argc > 2 ? strtod(argv[2], NULL) : 0.6};
    if (argc < 2 || argc > 3 || !(w.seconds > 0.0)) {
        fprintf(stderr, "usage: attachlate GO_FILE [SECONDS]\n");
        return 2;
    }
    const struct timespec tick = {0, 5 * 1000 * 1000};
    for (unsigned i = 0; access(argv[1], F_OK) != 0; i++) {
        if (i == 6000) {
            fprintf(stderr, "attachlate: %s did not appear\n", argv[1]);
            return 1;
        }
        nanosleep(&tick, NULL);
    }
    pthread_t t;
    if (pthread_create(&t, NULL, late_worker, &w) != 0) {
        fprintf(stderr, "attachlate: pthread_create failed\n");
        return 1;
    }
    pthread_setname_np(t, "late-worker");
    pthread_join(t, NULL);
    if (w.failure) {
        fprintf(stderr, "attachlate: %s\n", w.failure);
        return 1;
    }
    printf("adler32 %08lx\n", w.sum);
    return EXIT_STATUS;
}
