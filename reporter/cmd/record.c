/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `prof record`: environment set-up, fork, exec and wait. An exec failure in the child is
 * sent back as its errno through a close-on-exec pipe: the parent reads 0 bytes when exec
 * succeeded (the pipe closed with the old image) and the errno otherwise, so "command not
 * found" is told apart from a command that ran and exited 127. Reporter thread only;
 * prof has no other threads, so the child may run ordinary code between fork and exec.
 */
#include "reporter/cmd/record.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach/record_pid.h"
#include "common/err.h"
#include "common/parse.h"
#include "reporter/cmd/cmd.h"

const char rep_cmd_record_usage[] =
    "record options:\n"
    "  -o, --output PATH    profile to write (PROF_OUTPUT; %p is the pid)\n"
    "  -F, --freq HZ        sampling frequency (PROF_FREQ)\n"
    "  -d, --depth N        frames per sample at most (PROF_DEPTH); with -p, -d is the\n"
    "                       duration (-D) and only --depth sets the depth\n"
    "  -p, --pid PID        sample the running process PID instead of running a command:\n"
    "                       perf_event task-clock counters on its threads, user space only\n"
    "                       (root, or your own process with kernel.perf_event_paranoid <= 2);\n"
    "                       -o FILE is required (no %p); sampling stops after -d, on Ctrl-C\n"
    "                       or SIGTERM, or when the process exits or execs, and the process\n"
    "                       runs on untouched; -F and --depth apply as for a command\n"
    "  -d, -D, --duration SECS  with -p: stop after SECS seconds (decimals allowed)\n"
    "      --callchain auto|dwarf|fp|kernel  with -p: auto (default) walks a copy of each\n"
    "                       sample's stack with libprof's walk, by the unwind tables of\n"
    "                       the process's modules and by frame pointer where one has\n"
    "                       none; dwarf by the tables only, fp by frame pointers only;\n"
    "                       kernel takes the kernel's frame-pointer walk (smaller samples,\n"
    "                       no leaf fixes, depth at most kernel.perf_event_max_stack)\n"
    "  The library is $PROF_LIBRARY, else libprof.so next to prof or in ../lib.\n"
    "\n";

/* realpath of dir/rel when it names a readable file, else NULL. */
static char *existing(const char *dir, const char *rel)
{
    char *joined;
    if (asprintf(&joined, "%s/%s", dir, rel) < 0)
        return NULL;
    char *real = access(joined, R_OK) == 0 ? realpath(joined, NULL) : NULL;
    free(joined);
    return real;
}

int rep_record_find_library(char **path /* out */, struct cmn_err *err)
{
    const char *env = getenv("PROF_LIBRARY");
    if (env != NULL && env[0] != '\0') {
        *path = realpath(env, NULL);
        if (*path == NULL)
            return cmn_err_set(err, CMN_E_INPUT, "PROF_LIBRARY=%s: %s", env, strerror(errno));
        return CMN_OK;
    }
    char *self = realpath("/proc/self/exe", NULL);
    if (self != NULL) {
        const char *dir = dirname(self);
        *path = existing(dir, "libprof.so");
        if (*path == NULL)
            *path = existing(dir, "../lib/libprof.so");
        free(self);
        if (*path != NULL)
            return CMN_OK;
    }
    return cmn_err_set(err, CMN_E_INPUT, "cannot find libprof.so (set PROF_LIBRARY)");
}

/* Puts the library first in LD_PRELOAD, keeping what was there after it, and the options'
 * PROF_* variables. */
static int set_environment(const struct rep_record_opts *o, const char *lib)
{
    const char *old = getenv("LD_PRELOAD");
    char *preload;
    int n = old != NULL && old[0] != '\0' ? asprintf(&preload, "%s:%s", lib, old)
                                          : asprintf(&preload, "%s", lib);
    if (n < 0)
        return CMN_E_NOMEM;
    int rc = setenv("LD_PRELOAD", preload, 1);
    free(preload);
    if (rc == 0 && o->output != NULL)
        rc = setenv("PROF_OUTPUT", o->output, 1);
    if (rc == 0 && o->freq != NULL)
        rc = setenv("PROF_FREQ", o->freq, 1);
    if (rc == 0 && o->depth != NULL)
        rc = setenv("PROF_DEPTH", o->depth, 1);
    return rc == 0 ? CMN_OK : CMN_E_NOMEM;
}

static void run_child(const struct rep_record_opts *o, int report_fd,
                      const struct sigaction *old_int, const struct sigaction *old_quit)
{
    sigaction(SIGINT, old_int, NULL);
    sigaction(SIGQUIT, old_quit, NULL);
    execvp(o->argv[0], o->argv);
    int e = errno;
    ssize_t unused = write(report_fd, &e, sizeof(e));
    (void)unused;
    _exit(127);
}

static int wait_child(pid_t pid, int *status /* out */)
{
    int ws;
    while (waitpid(pid, &ws, 0) < 0) {
        if (errno != EINTR)
            return CMN_E_IO;
    }
    *status = WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : WEXITSTATUS(ws);
    return CMN_OK;
}

/* Reads the child's exec errno: 0 when exec succeeded. */
static int exec_errno(int fd)
{
    int e = 0;
    ssize_t got;
    do
        got = read(fd, &e, sizeof(e));
    while (got < 0 && errno == EINTR);
    return got == (ssize_t)sizeof(e) ? e : 0;
}

int rep_record_run(const struct rep_record_opts *o, int *status /* out */, struct cmn_err *err)
{
    char *lib;
    int rc = rep_record_find_library(&lib, err);
    if (rc != CMN_OK)
        return rc;
    rc = set_environment(o, lib);
    free(lib);
    if (rc != CMN_OK)
        return cmn_err_nomem(err);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return cmn_err_set(err, CMN_E_NOEXEC, "%s: %s", o->argv[0], strerror(errno));
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    pid_t pid = fork();
    if (pid == 0)
        run_child(o, fds[1], &old_int, &old_quit);
    close(fds[1]);
    if (pid < 0) {
        rc = cmn_err_set(err, CMN_E_NOEXEC, "%s: fork: %s", o->argv[0], strerror(errno));
    } else {
        int e = exec_errno(fds[0]);
        if (wait_child(pid, status) != CMN_OK)
            rc = cmn_err_set(err, CMN_E_NOEXEC, "%s: waitpid: %s", o->argv[0], strerror(errno));
        else if (e == ENOENT)
            rc = cmn_err_set(err, CMN_E_NOCMD, "%s: command not found", o->argv[0]);
        else if (e != 0)
            rc = cmn_err_set(err, CMN_E_NOEXEC, "%s: %s", o->argv[0], strerror(e));
    }
    close(fds[0]);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    return rc;
}

/* What goes with what: -p or a command; --duration and --callchain with -p only. */
static int check_record(int argc, char **argv, struct rep_record_opts *o, bool has_pid_only,
                        struct cmn_err *err)
{
    if (o->pid != 0 && optind < argc)
        return cmn_err_set(err, CMN_E_INPUT,
                           "record: -p samples a running process; give it or a command, not both");
    if (o->pid == 0 && has_pid_only)
        return cmn_err_set(err, CMN_E_INPUT, "record: --duration and --callchain go with -p PID");
    if (o->pid != 0 && o->output == NULL)
        return cmn_err_set(err, CMN_E_INPUT, "record: -p needs -o FILE");
    if (o->pid != 0)
        return CMN_OK;
    if (optind == argc)
        return cmn_err_set(err, CMN_E_INPUT, "record: no command given (see prof --help)");
    o->argv = argv + optind;
    return CMN_OK;
}

/* A number of seconds for --duration (or -d with -p). */
static int parse_duration(const char *opt, const char *s, double *out, struct cmn_err *err)
{
    if (!cmn_parse_double(s, 0, 1e9, out) || !(*out > 0))
        return cmn_err_set(err, CMN_E_INPUT, "%s: '%s' is not a number of seconds", opt, s);
    return CMN_OK;
}

static int parse_depth(const char *opt, const char *s, struct rep_record_opts *o,
                       struct cmn_err *err)
{
    unsigned long v;
    if (!cmn_parse_ulong(s, 1, UINT16_MAX, &v))
        return cmn_err_set(err, CMN_E_INPUT, "%s: '%s' is not a depth", opt, s);
    o->depth = s;
    return CMN_OK;
}

/* -d is the depth when recording a command, and the duration with -p (`prof record -p PID
 * -d SECONDS`, as perf users expect); --depth and --duration say either without doubt. */
static int parse_record(int argc, char **argv, struct rep_record_opts *o, struct cmn_err *err)
{
    enum { OPT_CALLCHAIN = 256, OPT_DEPTH };
    static const struct option longs[] = {
        {"output", required_argument, NULL, 'o'},
        {"freq", required_argument, NULL, 'F'},
        {"depth", required_argument, NULL, OPT_DEPTH},
        {"pid", required_argument, NULL, 'p'},
        {"duration", required_argument, NULL, 'D'},
        {"callchain", required_argument, NULL, OPT_CALLCHAIN},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    unsigned long v;
    const char *short_d = NULL;
    bool has_pid_only = false;
    int c, rc;
    opterr = 0;
    /* '+': options end at the command, whose own options are its business. */
    while ((c = getopt_long(argc, argv, "+:o:F:d:p:D:h", longs, NULL)) != -1) {
        switch (c) {
        case 'o':
            o->output = optarg;
            break;
        case 'F':
            if (!cmn_parse_ulong(optarg, 1, 1000000, &v))
                return cmn_err_set(err, CMN_E_INPUT, "--freq: '%s' is not a frequency in Hz",
                                   optarg);
            o->freq = optarg;
            break;
        case 'd':
            short_d = optarg; /* its meaning depends on -p, which may come later */
            break;
        case OPT_DEPTH:
            if ((rc = parse_depth("--depth", optarg, o, err)) != CMN_OK)
                return rc;
            break;
        case 'p':
            if (!cmn_parse_ulong(optarg, 1, INT32_MAX, &v))
                return cmn_err_set(err, CMN_E_INPUT, "--pid: '%s' is not a process id", optarg);
            o->pid = (pid_t)v;
            break;
        case 'D':
            if ((rc = parse_duration("--duration", optarg, &o->duration_s, err)) != CMN_OK)
                return rc;
            has_pid_only = true;
            break;
        case OPT_CALLCHAIN:
            if (strcmp(optarg, "auto") == 0)
                o->unwind = ATT_RWALK_AUTO;
            else if (strcmp(optarg, "dwarf") == 0)
                o->unwind = ATT_RWALK_DWARF;
            else if (strcmp(optarg, "fp") == 0)
                o->unwind = ATT_RWALK_FP;
            else if (strcmp(optarg, "kernel") != 0)
                return cmn_err_set(err, CMN_E_INPUT,
                                   "--callchain: '%s' is not auto, dwarf, fp or kernel", optarg);
            o->is_kernel_callchain = strcmp(optarg, "kernel") == 0;
            has_pid_only = true;
            break;
        case 'h':
            o->is_help = true;
            return CMN_OK;
        case ':':
            return cmn_err_set(err, CMN_E_INPUT, "record: %s needs a value", argv[optind - 1]);
        default:
            return rep_cmd_unknown_option(err, "record", argv);
        }
    }
    if (short_d && o->pid != 0)
        rc = parse_duration("-d (with -p: the duration; --depth sets the depth)", short_d,
                            &o->duration_s, err);
    else if (short_d)
        rc = parse_depth("-d", short_d, o, err);
    else
        rc = CMN_OK;
    return rc == CMN_OK ? check_record(argc, argv, o, has_pid_only, err) : rc;
}

/* `prof record -p`: the out-of-process producer (attach/record_pid.h). */
static int record_pid(const struct rep_record_opts *o, struct cmn_err *err)
{
    unsigned long hz = 0, depth = 0;
    if (o->freq != NULL)
        (void)cmn_parse_ulong(o->freq, 1, 1000000, &hz); /* checked by parse_record() */
    if (o->depth != NULL)
        (void)cmn_parse_ulong(o->depth, 1, UINT16_MAX, &depth);
    struct att_record_pid_opts po = {
        .pid = o->pid,
        .output = o->output,
        .hz = (unsigned)hz,
        .max_depth = (unsigned)depth,
        .duration_s = o->duration_s,
        .is_kernel_callchain = o->is_kernel_callchain,
        .unwind = o->unwind,
    };
    return att_record_pid_run(&po, stderr, err);
}

int rep_cmd_record(int argc, char **argv, int *exit_status, struct cmn_err *err)
{
    struct rep_record_opts o = {0};
    int rc = parse_record(argc, argv, &o, err);
    *exit_status = o.is_help ? REP_CMD_HELP : 0;
    if (rc != CMN_OK || o.is_help)
        return rc;
    if (o.pid != 0)
        return record_pid(&o, err);
    return rep_record_run(&o, exit_status, err);
}
