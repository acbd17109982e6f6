/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of PROF_* parsing and output path templates (libprof/config.c). */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "libprof/config.h"

static struct lp_config load(char **env, struct lp_config_msgs *m)
{
    struct lp_config c;
    memset(m, 0, sizeof(*m));
    lp_config_load(&c, env, m);
    return c;
}

Test(config, defaults_without_variables)
{
    char *env[] = { "HOME=/root", NULL };
    struct lp_config_msgs m;
    struct lp_config c = load(env, &m);
    cr_assert_eq(m.n, 0);
    cr_assert_str_eq(c.output, LP_DEFAULT_OUTPUT);
    cr_assert_eq(c.freq_hz, LP_DEFAULT_HZ);
    cr_assert_eq(c.max_depth, LP_DEFAULT_DEPTH);
    cr_assert_eq(c.buffer_kb, LP_DEFAULT_BUFFER_KB);
    cr_assert_eq(c.start, 1);
    cr_assert_eq(c.enabled, 1);
}

Test(config, reads_good_values)
{
    char *env[] = { "PROF_OUTPUT=/tmp/x.%p", "PROF_FREQ=997", "PROF_DEPTH=1024",
                    "PROF_BUFFER_KB=4096", "PROF_START=0", "PROF_LOG=/tmp/log", NULL };
    struct lp_config_msgs m;
    struct lp_config c = load(env, &m);
    cr_assert_eq(m.n, 0);
    cr_assert_str_eq(c.output, "/tmp/x.%p");
    cr_assert_eq(c.freq_hz, 997);
    cr_assert_eq(c.max_depth, 1024);
    cr_assert_eq(c.buffer_kb, 4096);
    cr_assert_eq(c.start, 0);
    cr_assert_str_eq(c.log, "/tmp/log");
}

Test(config, bad_number_falls_back_with_one_message)
{
    const char *bad[] = { "abc", "", "-5", "0", "12x", "100001", "99999999999999999999" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char var[64];
        snprintf(var, sizeof(var), "PROF_FREQ=%s", bad[i]);
        char *env[] = { var, NULL };
        struct lp_config_msgs m;
        struct lp_config c = load(env, &m);
        cr_assert_eq(m.n, 1, "value '%s'", bad[i]);
        cr_assert_eq(c.freq_hz, LP_DEFAULT_HZ);
        cr_assert(strstr(m.text[0], "PROF_FREQ") && strstr(m.text[0], "using 250"), "%s",
                  m.text[0]);
        cr_assert_eq(c.enabled, 1);
    }
}

Test(config, unknown_prof_variable_is_reported)
{
    char *env[] = { "PROF_FREQUENCY=1000", "PROF_LIBRARY=/x.so", "PROFILE=1", NULL };
    struct lp_config_msgs m;
    load(env, &m);
    cr_assert_eq(m.n, 1);
    cr_assert_str_eq(m.text[0], "unknown variable PROF_FREQUENCY ignored");
}

Test(config, empty_output_disables_profiling)
{
    char *env[] = { "PROF_OUTPUT=", NULL };
    struct lp_config_msgs m;
    struct lp_config c = load(env, &m);
    cr_assert_eq(c.enabled, 0);
    cr_assert_eq(m.n, 1);
}

Test(config, expands_pid_and_percent)
{
    char out[256];
    cr_assert_eq(lp_config_expand_path("/t/a.%p.prof", 42, "/cwd", out, sizeof(out)), 0);
    cr_assert_str_eq(out, "/t/a.42.prof");
    cr_assert_eq(lp_config_expand_path("100%%-%p", 7, "/cwd", out, sizeof(out)), 0);
    cr_assert_str_eq(out, "/cwd/100%-7");
    cr_assert_eq(lp_config_expand_path("x", 7, "/", out, sizeof(out)), 0);
    cr_assert_str_eq(out, "/x");
}

Test(config, rejects_bad_templates)
{
    char out[16];
    cr_assert_eq(lp_config_expand_path("a%q", 1, "/", out, sizeof(out)), -EINVAL);
    cr_assert_eq(lp_config_expand_path("a%", 1, "/", out, sizeof(out)), -EINVAL);
    cr_assert_eq(lp_config_expand_path("", 1, "/", out, sizeof(out)), -EINVAL);
    cr_assert_eq(lp_config_expand_path("/a/very/long/path/%p", 123456, "/", out, sizeof(out)),
                 -ENAMETOOLONG);
}

Test(config, snapshot_signal_default_off_and_bad)
{
    struct lp_config_msgs m;
    char *dflt[] = { NULL };
    struct lp_config c = load(dflt, &m);
    cr_assert_eq(c.snap_signo, SIGRTMAX - 3);

    char *off[] = { "PROF_SNAPSHOT_SIGNAL=off", NULL };
    c = load(off, &m);
    cr_assert_eq(m.n, 0);
    cr_assert_eq(c.snap_signo, 0);
    char *zero[] = { "PROF_SNAPSHOT_SIGNAL=0", NULL };
    c = load(zero, &m);
    cr_assert_eq(c.snap_signo, 0);

    char *named[] = { "PROF_SNAPSHOT_SIGNAL=SIGUSR2", NULL };
    c = load(named, &m);
    cr_assert_eq(m.n, 0);
    cr_assert_eq(c.snap_signo, SIGUSR2);

    char *bad[] = { "PROF_SNAPSHOT_SIGNAL=KILL", NULL };
    c = load(bad, &m);
    cr_assert_eq(m.n, 1);
    cr_assert(strstr(m.text[0], "PROF_SNAPSHOT_SIGNAL") && strstr(m.text[0], "RTMAX-3"), "%s",
              m.text[0]);
    cr_assert_eq(c.snap_signo, SIGRTMAX - 3);
}

Test(config, snapshot_signal_moves_off_the_sampling_signal)
{
    struct lp_config_msgs m;
    char *taken[] = { "PROF_SIGNAL=RTMAX-3", NULL };
    struct lp_config c = load(taken, &m);
    cr_assert_eq(m.n, 0);
    cr_assert_eq(c.signo, SIGRTMAX - 3);
    cr_assert_eq(c.snap_signo, SIGRTMAX - 4);

    char *same[] = { "PROF_SIGNAL=USR1", "PROF_SNAPSHOT_SIGNAL=USR1", NULL };
    c = load(same, &m);
    cr_assert_eq(m.n, 1);
    cr_assert(strstr(m.text[0], "snapshots off"), "%s", m.text[0]);
    cr_assert_eq(c.snap_signo, 0);
}

Test(config, duration_in_every_unit)
{
    static const struct {
        const char *value;
        uint64_t ns;
    } good[] = {
        { "PROF_DURATION=500ms", 500000000ull }, { "PROF_DURATION=10s", 10000000000ull },
        { "PROF_DURATION=2", 2000000000ull },    { "PROF_DURATION=5m", 300000000000ull },
        { "PROF_DURATION=1h", 3600000000000ull }, { "PROF_DURATION=0.5", 500000000ull },
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        char *env[] = { (char *)good[i].value, NULL };
        struct lp_config_msgs m;
        struct lp_config c = load(env, &m);
        cr_expect_eq(m.n, 0, "%s: %s", good[i].value, m.text[0]);
        cr_expect_eq(c.duration_ns, good[i].ns, "%s gave %llu ns", good[i].value,
                     (unsigned long long)c.duration_ns);
    }
}

Test(config, no_duration_by_default_and_after_a_bad_one)
{
    char *none[] = { "HOME=/root", NULL };
    struct lp_config_msgs m;
    struct lp_config c = load(none, &m);
    cr_expect_eq(c.duration_ns, 0);
    char *bad[] = { "PROF_DURATION=10 s", NULL };
    c = load(bad, &m);
    cr_expect_eq(c.duration_ns, 0);
    cr_assert_eq(m.n, 1);
    cr_expect_eq(m.is_note[0], 0, "a bad value of ours goes to stderr");
    cr_expect(strstr(m.text[0], "PROF_DURATION='10 s' is not a duration") != NULL, "%s",
              m.text[0]);
}
