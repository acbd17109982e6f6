/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * System calls under the profiler: its signal must never cut one short, and the time
 * spent in them must still be counted where it was spent.
 *
 *   pipewrite pipe ROUNDS    each round, one blocking write() of 4 MiB into a pipe that a
 *                            child drains slowly (a pause every 64 KiB): a handler run in
 *                            its middle would make it return a partial count. Prints
 *                            "partial K of ROUNDS", exits 0 when K is 0.
 *   pipewrite share SECONDS  alternates user_phase() (arithmetic) and kernel_phase()
 *                            (read()s of 1 MiB from /dev/zero: nearly all system time),
 *                            for SECONDS of CPU time; writes TRUTH as "kernel_phase S"
 *                            with S the share of the thread's CPU time spent in
 *                            kernel_phase() (measured around each call), and
 *                            "system_share S" (getrusage).
 *   pipewrite deep SECONDS TRUTH  the same under deep_frame(), whose 24 KiB of locals put
 *                            main's frame farther from the system calls than the 8 KiB
 *                            of stack a kernel-time sample once copied (no frame pointer
 *                            in it).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WRITE_BYTES (4u << 20)

static volatile uint64_t sink;

uint64_t user_phase(void);
uint64_t kernel_phase(int fd, char *buf);
int deep_frame(double seconds, const char *truth);

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int slow_reader(int fd)
{
    char b[4096];
    ssize_t n;
    long total = 0;
    while ((n = read(fd, b, sizeof(b))) > 0) {
        total += n;
        if ((total & 0xffff) == 0) {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
    return total == (long)WRITE_BYTES ? 0 : 1;
}

static int run_pipe(int rounds)
{
    char *buf = malloc(WRITE_BYTES);
    if (!buf)
        return 1;
    memset(buf, 'x', WRITE_BYTES);
    int partial = 0;
    for (int r = 0; r < rounds; r++) {
        int p[2];
        if (pipe(p) != 0)
            return 1;
        pid_t c = fork();
        if (c == 0) {
            close(p[1]);
            _exit(slow_reader(p[0]));
        }
        close(p[0]);
        ssize_t w = write(p[1], buf, WRITE_BYTES);
        if (w != (ssize_t)WRITE_BYTES)
            partial++;
        close(p[1]);
        int st;
        waitpid(c, &st, 0);
    }
    printf("partial %d of %d\n", partial, rounds);
    return partial == 0 ? 0 : 1;
}

__attribute__((noipa)) uint64_t user_phase(void)
{
    uint64_t x = sink;
    for (int i = 0; i < 2000000; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return sink = x;
}

__attribute__((noipa)) uint64_t kernel_phase(int fd, char *buf)
{
    uint64_t got = 0;
    for (int i = 0; i < 8; i++)
        got += (uint64_t)read(fd, buf, 1u << 20);
    return got;
}

static int run_share(double seconds, const char *truth)
{
    int fd = open("/dev/zero", O_RDONLY);
    char *buf = malloc(1u << 20);
    if (fd < 0 || !buf)
        return 1;
    memset(buf, 0, 1u << 20);
    double in_kernel_phase = 0, start = thread_cpu_s();
    while (thread_cpu_s() - start < seconds) {
        user_phase();
        double t0 = thread_cpu_s();
        kernel_phase(fd, buf);
        in_kernel_phase += thread_cpu_s() - t0;
    }
    double total = thread_cpu_s() - start;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    double usr = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    FILE *f = fopen(truth, "w");
    if (!f)
        return 1;
    fprintf(f, "kernel_phase %.4f\nsystem_share %.4f\n", in_kernel_phase / total,
            sys / (sys + usr));
    fclose(f);
    return 0;
}

/* Without a frame pointer (as Debian builds programs): the kernel's frame-pointer chain
 * cannot cross it, only the stack copy can. */
__attribute__((noipa, optimize("omit-frame-pointer"))) int deep_frame(double seconds,
                                                                      const char *truth)
{
    volatile char pad[24 * 1024];
    for (size_t i = 0; i < sizeof(pad); i += 512)
        pad[i] = (char)i;
    int rc = run_share(seconds, truth);
    return rc + pad[512] - (char)512;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "pipe") == 0)
        return run_pipe(atoi(argv[2]));
    if (argc >= 4 && strcmp(argv[1], "share") == 0)
        return run_share(atof(argv[2]), argv[3]);
    if (argc >= 4 && strcmp(argv[1], "deep") == 0)
        return deep_frame(atof(argv[2]), argv[3]);
    fprintf(stderr, "usage: pipewrite pipe ROUNDS | share|deep SECONDS TRUTH\n");
    return 2;
}
