/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Parsing the numbers, durations and signal names people type: PROF_* values
 * (libprof/config.c) and the prof command's options (reporter/cmd/, attach/snap_signal.c).
 * One spelling of each everywhere: a whole number is decimal digits only (no sign, no
 * blanks, no 0x), all of the string; a real number is what strtod() reads, finite, all of
 * the string; a duration is a decimal number (digits, then optionally '.' and digits)
 * followed by a unit, ms, s, m or h, or by nothing for seconds ("500ms", "10s", "1.5",
 * "5m"); a signal is a number or a name with or without "SIG" (PROF, VTALRM, ALRM, USR1,
 * USR2, RTMIN, RTMAX, RTMIN+N, RTMAX-N). Pure functions, header-only, never installed; not
 * async-signal-safe (strtod reads the locale).
 *
 * Signal handler's path: not allowed (strtod reads the locale).
 */
#ifndef PROF_COMMON_PARSE_H
#define PROF_COMMON_PARSE_H

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Not async-signal-safe. */
/* A whole decimal number in [min, max] into *out; false (and *out untouched) otherwise. */
static inline bool cmn_parse_ulong(const char *s, unsigned long min, unsigned long max,
                                   unsigned long *out)
{
    if (s == NULL || s[0] < '0' || s[0] > '9')
        return false;
    char *end;
    int saved = errno;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    bool ok = errno == 0 && *end == '\0' && v >= min && v <= max;
    errno = saved;
    if (ok)
        *out = v;
    return ok;
}

/* A finite real number in [min, max] into *out; false (and *out untouched) otherwise. */
static inline bool cmn_parse_double(const char *s, double min, double max, double *out)
{
    if (s == NULL)
        return false;
    char *end;
    int saved = errno;
    errno = 0;
    double v = strtod(s, &end);
    bool ok = errno == 0 && end != s && *end == '\0' && isfinite(v) && v >= min && v <= max;
    errno = saved;
    if (ok)
        *out = v;
    return ok;
}

#define CMN_NS_PER_S 1000000000ull
#define CMN_DURATION_MAX_NS (1000000ull * 3600ull * CMN_NS_PER_S) /* a million hours */

/* The nanoseconds in one unit of a duration: "ms", "s", "m", "h", or "" (seconds); 0 for
 * anything else. */
static inline uint64_t cmn_duration_unit_ns(const char *unit)
{
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {
        {"ms", 1000000ull}, {"s", CMN_NS_PER_S}, {"", CMN_NS_PER_S},
        {"m", 60ull * CMN_NS_PER_S}, {"h", 3600ull * CMN_NS_PER_S},
    };
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(unit, units[i].name) == 0)
            return units[i].ns;
    return 0;
}

/* A duration (see the file comment) above zero and at most max_ns into *ns, rounded down
 * to a nanosecond; false (and *ns untouched) otherwise. Integer arithmetic only: the same
 * string gives the same value in every locale. */
static inline bool cmn_parse_duration(const char *s, uint64_t max_ns, uint64_t *ns)
{
    uint64_t whole = 0, frac = 0, frac_scale = 1;
    const char *p = s;
    if (s == NULL || *p < '0' || *p > '9')
        return false;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (whole > CMN_DURATION_MAX_NS / 10)
            return false;
        whole = whole * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.') {
        if (p[1] < '0' || p[1] > '9')
            return false;
        for (p++; *p >= '0' && *p <= '9'; p++) {
            if (frac_scale < CMN_NS_PER_S) { /* digits past a nanosecond's are dropped */
                frac = frac * 10 + (uint64_t)(*p - '0');
                frac_scale *= 10;
            }
        }
    }
    uint64_t unit = cmn_duration_unit_ns(p);
    if (unit == 0 || whole > max_ns / unit)
        return false;
    unsigned __int128 v = (unsigned __int128)whole * unit +
                          (unsigned __int128)frac * unit / frac_scale;
    if (v == 0 || v > max_ns)
        return false;
    *ns = (uint64_t)v;
    return true;
}

/* Whether libprof refuses sig for itself: the signals that stop, kill or report a fault,
 * and those the program depends on for its children and pipes. */
static inline bool cmn_signal_is_refused(int sig)
{
    return sig == SIGKILL || sig == SIGSTOP || sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
           sig == SIGFPE || sig == SIGABRT || sig == SIGCHLD || sig == SIGPIPE;
}

/* The signal s names (see the file comment), or 0 when it names none. */
static inline int cmn_parse_signal(const char *s)
{
    static const struct {
        const char *name;
        int sig;
    } plain[] = {
        {"PROF", SIGPROF}, {"VTALRM", SIGVTALRM}, {"ALRM", SIGALRM},
        {"USR1", SIGUSR1}, {"USR2", SIGUSR2},
    };
    unsigned long n;
    if (cmn_parse_ulong(s, 1, (unsigned long)SIGRTMAX, &n))
        return (int)n;
    if (s == NULL)
        return 0;
    if (strncmp(s, "SIG", 3) == 0)
        s += 3;
    for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
        if (strcmp(s, plain[i].name) == 0)
            return plain[i].sig;
    int base = strncmp(s, "RTMIN", 5) == 0 ? SIGRTMIN : strncmp(s, "RTMAX", 5) == 0 ? SIGRTMAX : 0;
    if (base == 0)
        return 0;
    if (s[5] == '\0')
        return base;
    if ((s[5] != '+' && s[5] != '-') || !cmn_parse_ulong(s + 6, 0, 64, &n))
        return 0;
    int sig = s[5] == '+' ? base + (int)n : base - (int)n;
    return sig >= SIGRTMIN && sig <= SIGRTMAX ? sig : 0;
}

#endif
