/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The load generator of examples/labelsrv.c: CONNS connections over the loopback, each
 * from a thread of its own, send requests one at a time (each waits for its "ok"), in a
 * fixed pseudo-random mix: cheap 40 %, medium 25 %, heavy 10 %, sleepy 15 %, anon 10 %,
 * tenants t1, t2, t3 in turn; for SECONDS, or until REQUESTS were sent in all (a fixed
 * amount of the server's CPU time, however busy the machine). Then one connection sends
 * "quit", which ends the server, and it prints how many requests of each kind it sent.
 *
 *   loadgen [-t SECONDS] [-n REQUESTS] [-c CONNS] PORT
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 16

static int port;
static double seconds = 3;
static long requests = -1;       /* to send in all; -1: as many as SECONDS allow */
static _Atomic long taken;       /* requests the connections took so far */
static unsigned long sent[5];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int connect_to(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        perror("loadgen: connect");
        exit(1);
    }
    return fd;
}

/* Sends one request line and waits for its answer; 0 or -1. */
static int request(int fd, const char *line)
{
    char buf[16];
    size_t n = strlen(line);
    if (write(fd, line, n) != (ssize_t)n)
        return -1;
    ssize_t got = 0;
    while (got == 0 || buf[got - 1] != '\n') {
        ssize_t r = read(fd, buf + got, sizeof(buf) - (size_t)got);
        if (r <= 0)
            return -1;
        got += r;
    }
    return 0;
}

static void *client(void *arg)
{
    static const char *const kinds[] = {"cheap", "medium", "heavy", "sleepy", "anon"};
    static const unsigned mix[] = {40, 25, 10, 15, 10}; /* percent */
    static const char *const tenants[] = {"t1", "t2", "t3"};
    uint64_t rng = 0x9e3779b97f4a7c15ull * ((uintptr_t)arg + 1);
    unsigned long mine[5] = {0};
    int fd = connect_to();
    double end = now_s() + seconds;
    for (unsigned i = 0; requests >= 0 ? atomic_fetch_add(&taken, 1) < requests : now_s() < end;
         i++) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        unsigned pick = (unsigned)(rng % 100), k = 0;
        while (pick >= mix[k]) {
            pick -= mix[k];
            k++;
        }
        char line[64];
        snprintf(line, sizeof(line), "%s %s\n", kinds[k], k == 4 ? "-" : tenants[i % 3]);
        if (request(fd, line) != 0)
            break;
        mine[k]++;
    }
    close(fd);
    pthread_mutex_lock(&mu);
    for (int k = 0; k < 5; k++)
        sent[k] += mine[k];
    pthread_mutex_unlock(&mu);
    return NULL;
}

int main(int argc, char **argv)
{
    int n = 2, c;
    while ((c = getopt(argc, argv, "t:n:c:")) != -1) {
        if (c == 't')
            seconds = atof(optarg);
        else if (c == 'n')
            requests = atol(optarg);
        else if (c == 'c')
            n = atoi(optarg);
        else
            optind = argc + 1;
    }
    if (optind != argc - 1) {
        fprintf(stderr, "usage: loadgen [-t SECONDS] [-n REQUESTS] [-c CONNS] PORT\n");
        return 2;
    }
    port = atoi(argv[optind]);
    if (n < 1 || n > MAX_CONNS)
        n = 2;
    pthread_t th[MAX_CONNS];
    for (int i = 0; i < n; i++)
        pthread_create(&th[i], NULL, client, (void *)(uintptr_t)i);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    int fd = connect_to();
    request(fd, "quit\n");
    close(fd);
    printf("sent cheap=%lu medium=%lu heavy=%lu sleepy=%lu anon=%lu\n", sent[0], sent[1],
           sent[2], sent[3], sent[4]);
    return 0;
}
