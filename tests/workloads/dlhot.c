/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A workload that spends its CPU in a library it loads at run time: it dlopens zlib
 * (libz.so.1, which the reporter needs anyway), runs adler32_z over a 1 MiB buffer for
 * SECONDS of process CPU time through use_zlib(), and with "close" dlcloses zlib before it
 * exits, so that the library is no longer mapped when the profile is finished ("open"
 * leaves it loaded). The end-to-end tests check that the samples are named after zlib's
 * function either way.
 *
 *   dlhot open|close [SECONDS]    0.5 s by default; prints the checksum
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUF_BYTES (1u << 20)

typedef unsigned long adler_fn(unsigned long adler, const unsigned char *buf, size_t len);

unsigned long use_zlib(adler_fn *adler, const unsigned char *buf, double seconds);

static double process_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noipa)) unsigned long use_zlib(adler_fn *adler, const unsigned char *buf,
                                              double seconds)
{
    unsigned long sum = 1;
    while (process_cpu_s() < seconds)
        sum = adler(sum, buf, BUF_BYTES);
    return sum;
}

int main(int argc, char **argv)
{
    int do_close = argc > 1 && strcmp(argv[1], "close") == 0;
    double seconds = argc > 2 ? strtod(argv[2], NULL) : 0.5;
    if (argc < 2 || argc > 3 || (!do_close && strcmp(argv[1], "open") != 0) || !(seconds > 0.0)) {
        fprintf(stderr, "usage: dlhot open|close [SECONDS]\n");
        return 2;
    }
    void *z = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    adler_fn *adler = z ? (adler_fn *)dlsym(z, "adler32_z") : NULL;
    unsigned char *buf = malloc(BUF_BYTES);
    if (!adler || !buf) {
        fprintf(stderr, "dlhot: %s\n", z ? "no adler32_z in zlib" : dlerror());
        return 1;
    }
    for (unsigned i = 0; i < BUF_BYTES; i++)
        buf[i] = (unsigned char)(i * 31u >> 3);
    unsigned long sum = use_zlib(adler, buf, seconds);
    if (do_close && dlclose(z) != 0) {
        fprintf(stderr, "dlhot: dlclose: %s\n", dlerror());
        return 1;
    }
    printf("adler32 %08lx\n", sum);
    free(buf);
    return 0;
}
