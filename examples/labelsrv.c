/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A small request server that labels what each of its threads does (README, "Label what
 * the program is doing"): requests over TCP on the loopback, one line each, "KIND TENANT"
 * ("-" for no tenant), answered "ok"; a pool of worker threads takes connections in turn,
 * so a thread serves one client's requests, then another's. Every request runs under the
 * labels endpoint=KIND and, when it has one, tenant=TENANT, set with the scoped form
 * (prof_label_push/pop), so that nothing of one request stays on the thread for the next.
 * examples/loadgen.c drives it.
 *
 * The kinds cost known, different amounts of CPU (cheap 1 unit, medium 3, heavy 8;
 * sleepy 1 unit and a 2 ms sleep; anon 1 unit with no tenant), and the server measures the
 * truth a profile must match: for each kind, the CPU time and the wall time its requests
 * spent inside their labels, written with --truth FILE at the end ("endpoint=KIND cpu_ns=N
 * wall_ns=N" lines). A request "quit" ends the server: it stops taking connections, its
 * workers finish, it writes the truth and exits.
 *
 *   labelsrv [--port N] [--threads N] [--truth FILE] [--unscoped] [--fork]
 *
 * It prints "port N" on its standard output once it listens (--port 0, the default, takes
 * a free one). --unscoped sets the labels with prof_label_set() and never restores them,
 * which leaves a request's tenant on its thread for the next request (the leak the scoped
 * form prevents). --fork: the first request forks a child that keeps the thread's labels
 * (a copy), runs ten heavy requests' work and exits. Built with <libprof/prof_weak.h>: it
 * runs, unlabelled, without libprof.
 */
#define _GNU_SOURCE /* accept4 */
#include <libprof/prof_weak.h>

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 16
#define QUEUE_CAP 64
#define UNIT_ITERS 600000u /* a unit of work: about 1 ms of CPU */

enum kind { CHEAP, MEDIUM, HEAVY, SLEEPY, ANON, N_KINDS };
static const char *const kind_names[N_KINDS] = {"cheap", "medium", "heavy", "sleepy", "anon"};
static const unsigned kind_units[N_KINDS] = {1, 3, 8, 1, 1};

static struct {
    int listen_fd;
    int is_unscoped;
    int do_fork;
    _Atomic int forked;
    _Atomic int quit;
    pthread_mutex_t mu;      /* the queue */
    pthread_cond_t cv;
    int queue[QUEUE_CAP];
    unsigned head, tail;
    _Atomic uint64_t cpu_ns[N_KINDS];  /* the truth: inside each kind's labels */
    _Atomic uint64_t wall_ns[N_KINDS];
} srv = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static uint64_t clock_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static volatile uint64_t salt; /* read by burn(): no two calls are the same to the compiler */

/* The CPU work: a multiplicative hash chain the compiler cannot fold. */
__attribute__((noinline)) static uint64_t burn(unsigned units, uint64_t seed)
{
    uint64_t x = seed | 1 | salt;
    for (uint64_t i = 0; i < (uint64_t)units * UNIT_ITERS; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull + (x >> 29);
    return x;
}

__attribute__((noinline)) static uint64_t cheap_work(void) { return burn(kind_units[CHEAP], 1); }
__attribute__((noinline)) static uint64_t medium_work(void) { return burn(kind_units[MEDIUM], 2); }
__attribute__((noinline)) static uint64_t heavy_work(void) { return burn(kind_units[HEAVY], 3); }
__attribute__((noinline)) static uint64_t anon_work(void) { return burn(kind_units[ANON], 5); }

__attribute__((noinline)) static uint64_t sleepy_work(void)
{
    struct timespec two_ms = {0, 2000000};
    uint64_t x = burn(kind_units[SLEEPY], 4);
    nanosleep(&two_ms, NULL);
    return x;
}

static uint64_t run_kind(enum kind k)
{
    switch (k) {
    case CHEAP:
        return cheap_work();
    case MEDIUM:
        return medium_work();
    case HEAVY:
        return heavy_work();
    case SLEEPY:
        return sleepy_work();
    default:
        return anon_work();
    }
}

/* --fork: a child process that keeps this thread's labels, as a copy. */
static void fork_child(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        volatile uint64_t sink = 0;
        for (int i = 0; i < 10; i++)
            sink += heavy_work(); /* under its parent thread's labels */
        _exit(0);
    }
    if (pid > 0)
        waitpid(pid, NULL, 0);
}

/* One request, under its labels; the truth measured inside them. */
static void serve(enum kind k, const char *tenant)
{
    prof_label_token t_endpoint = 0, t_tenant = 0;
    if (srv.is_unscoped) {
        prof_label_set("endpoint", kind_names[k]);
        if (tenant != NULL)
            prof_label_set("tenant", tenant);
    } else {
        t_endpoint = prof_label_push("endpoint", kind_names[k]);
        if (tenant != NULL)
            t_tenant = prof_label_push("tenant", tenant);
    }
    uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID), wall = clock_ns(CLOCK_MONOTONIC);
    volatile uint64_t sink = run_kind(k);
    (void)sink;
    if (srv.do_fork && !atomic_exchange(&srv.forked, 1))
        fork_child();
    atomic_fetch_add(&srv.cpu_ns[k], clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu);
    atomic_fetch_add(&srv.wall_ns[k], clock_ns(CLOCK_MONOTONIC) - wall);
    if (!srv.is_unscoped) {
        if (tenant != NULL)
            prof_label_pop(t_tenant);
        prof_label_pop(t_endpoint);
    }
}

/* One request line; 0 to go on, 1 for "quit", -1 for a bad line. */
static int handle_line(char *line)
{
    char *sp = strchr(line, ' ');
    const char *tenant = sp && strcmp(sp + 1, "-") != 0 ? sp + 1 : NULL;
    if (sp)
        *sp = '\0';
    if (strcmp(line, "quit") == 0)
        return 1;
    for (int k = 0; k < N_KINDS; k++) {
        if (strcmp(line, kind_names[k]) == 0) {
            serve((enum kind)k, k == ANON ? NULL : tenant);
            return 0;
        }
    }
    return -1;
}

/* Serves one connection's requests until it closes. */
static void serve_connection(int fd)
{
    char buf[512];
    size_t len = 0;
    for (;;) {
        ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = '\0';
        char *nl;
        while ((nl = memchr(buf, '\n', len)) != NULL) {
            *nl = '\0';
            int rc = handle_line(buf);
            if (rc == 1) {
                atomic_store(&srv.quit, 1);
                shutdown(srv.listen_fd, SHUT_RDWR);
            }
            if (write(fd, rc < 0 ? "bad\n" : "ok\n", rc < 0 ? 4 : 3) < 0)
                rc = 1;
            len -= (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, len);
            if (rc == 1) {
                close(fd);
                return;
            }
        }
        if (len == sizeof(buf) - 1)
            break; /* a line too long */
    }
    close(fd);
}

static void *worker(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&srv.mu);
        while (srv.head == srv.tail && !atomic_load(&srv.quit))
            pthread_cond_wait(&srv.cv, &srv.mu);
        if (srv.head == srv.tail) {
            pthread_mutex_unlock(&srv.mu);
            return NULL;
        }
        int fd = srv.queue[srv.head++ % QUEUE_CAP];
        pthread_mutex_unlock(&srv.mu);
        serve_connection(fd);
    }
}

static int listen_on(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        perror("labelsrv: listen");
        exit(1);
    }
    printf("port %d\n", ntohs(a.sin_port));
    fflush(stdout);
    return fd;
}

static void write_truth(const char *path)
{
    FILE *f = path ? fopen(path, "w") : NULL;
    if (path && !f) {
        perror(path);
        return;
    }
    for (int k = 0; k < N_KINDS; k++)
        fprintf(f ? f : stdout, "endpoint=%s cpu_ns=%llu wall_ns=%llu\n", kind_names[k],
                (unsigned long long)atomic_load(&srv.cpu_ns[k]),
                (unsigned long long)atomic_load(&srv.wall_ns[k]));
    if (f)
        fclose(f);
}

int main(int argc, char **argv)
{
    int port = 0, n_threads = 2;
    const char *truth = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
            port = atoi(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            n_threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--truth") == 0 && i + 1 < argc)
            truth = argv[++i];
        else if (strcmp(argv[i], "--unscoped") == 0)
            srv.is_unscoped = 1;
        else if (strcmp(argv[i], "--fork") == 0)
            srv.do_fork = 1;
        else {
            fprintf(stderr, "usage: labelsrv [--port N] [--threads N] [--truth FILE] "
                            "[--unscoped] [--fork]\n");
            return 2;
        }
    }
    if (n_threads < 1 || n_threads > MAX_THREADS)
        n_threads = 2;
    signal(SIGPIPE, SIG_IGN);
    srv.listen_fd = listen_on(port);
    pthread_t th[MAX_THREADS];
    for (int i = 0; i < n_threads; i++)
        pthread_create(&th[i], NULL, worker, NULL);
    while (!atomic_load(&srv.quit)) {
        int fd = accept4(srv.listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            break; /* shut down by "quit" */
        }
        pthread_mutex_lock(&srv.mu);
        if (srv.tail - srv.head < QUEUE_CAP)
            srv.queue[srv.tail++ % QUEUE_CAP] = fd;
        else
            close(fd);
        pthread_cond_signal(&srv.cv);
        pthread_mutex_unlock(&srv.mu);
    }
    pthread_mutex_lock(&srv.mu);
    atomic_store(&srv.quit, 1);
    pthread_cond_broadcast(&srv.cv);
    pthread_mutex_unlock(&srv.mu);
    for (int i = 0; i < n_threads; i++)
        pthread_join(th[i], NULL);
    close(srv.listen_fd);
    write_truth(truth);
    return 0;
}
